"""``irmetrics assess``: people judge (query, document) pairs on a page served on 127.0.0.1
(:mod:`haystack_irmetrics.assess`), and what they judged comes out as qrels and agreement figures.

    irmetrics assess PAIRS --queries Q --corpus C -o DIR [--assessor NAME] [--max-grade 3] [--scale FILE]
                     [--strategy S --runs RUN... --budget N [--seed S]] [--prelabels FILE [--show-prelabels]] [--port P]
                     [--order topic|file] [--guidelines FILE] [--batch N]
    irmetrics assess export DIR [--assessor NAME]
    irmetrics assess agreement DIR [--prelabels FILE] [--threshold T] [--json]
    irmetrics assess import DIR --assessor NAME --qrels FILE [--pairs PAIRS] [--max-grade N]

Registered by :func:`add_subcommand`, which imports only the standard library.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from .args import seed

#: The words that make ``irmetrics assess WORD DIR`` a folder command rather than a pairs file to judge.
ACTIONS = ("export", "agreement", "import")
#: The files a judging folder holds.
FOLDER_FILES = ("assess.sqlite", "qrels.tsv", "judgments.jsonl")


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``assess`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "assess",
        help="judge pairs on a page served on 127.0.0.1 (keys 0-3, s, u); export the qrels; people's agreement",
        usage="irmetrics assess PAIRS --queries Q --corpus C -o DIR [options]\n"
        "       irmetrics assess export DIR [--assessor NAME]\n"
        "       irmetrics assess agreement DIR [--prelabels FILE] [--threshold T] [--json]\n"
        "       irmetrics assess import DIR --assessor NAME --qrels FILE [--pairs PAIRS] [--max-grade N]",
        description="Serve a page on 127.0.0.1 where a person judges the pairs of PAIRS (a tsv with the header "
        "query_id, doc_id, probability: what irmetrics pool writes) one at a time, query by query (--order file: "
        "the file's order): the query with its description and narrative where the queries have them, the "
        "document with the query's words marked, the grade scale (the model judge's, from its prompt); keys 0..max "
        "grade label the pair and show the next, s skips, u undoes, x marks it unsure, n writes a note, h shows "
        "the history (b or a click opens a pair judged before, a grade key relabels it), a accepts the model's "
        "suggestion, g shows the guidelines, ? every key; the top bar says the time judged, the pace and the time "
        "left. Every key is committed to DIR/assess.sqlite before the page "
        "moves on: a killed server loses nothing and the same command resumes. Stopping it (Ctrl-C) writes "
        "DIR/qrels.tsv and DIR/judgments.jsonl, as 'irmetrics assess export DIR' does. Several assessors judge "
        "into one DIR in turn; 'irmetrics assess agreement DIR' gives their kappa, weighted kappa and "
        "Krippendorff's alpha, and each one's with a model's labels (--prelabels); 'irmetrics assess import DIR' "
        "records labels judged elsewhere (a qrels file) as an assessor's.",
    )
    p.add_argument(
        "target", metavar="PAIRS | export | agreement | import", help="the pairs to judge, or what to do with a folder"
    )
    p.add_argument("folder", nargs="?", metavar="DIR", help="the judging folder (export, agreement, import)")
    serve = p.add_argument_group("judging (irmetrics assess PAIRS)")
    serve.add_argument("--queries", help="BEIR queries.jsonl, or a BEIR folder")
    serve.add_argument("--corpus", help="BEIR corpus.jsonl, or a BEIR folder")
    serve.add_argument("-o", "--output", metavar="DIR", help="the judging folder (made when absent; resumed)")
    serve.add_argument(
        "--max-grade",
        type=int,
        default=None,
        metavar="N",
        help="the top grade: keys 0..N (default 3; import: the folder's)",
    )
    serve.add_argument(
        "--scale",
        metavar="FILE",
        help="the grades' definitions: a prompt with a line 'N = definition' per grade, such as irmetrics judge "
        "--system-prompt takes (default: the judge's default prompt, 0..3)",
    )
    serve.add_argument(
        "--strategy", metavar="S", help="ask this adaptive pooling strategy for pairs past PAIRS (mtf, maxmean, ...)"
    )
    serve.add_argument("--runs", nargs="+", metavar="RUN", help="the TREC runs the strategy pools")
    serve.add_argument(
        "--depth", type=int, default=None, metavar="K", help="the strategy pools each run's top K (default: all)"
    )
    serve.add_argument(
        "--budget", type=int, default=None, metavar="N", help="labels to give in all (default: one per pair)"
    )
    serve.add_argument(
        "--seed",
        type=seed,
        default=0,
        metavar="S",
        help="the seed of the strategy's ties between runs: irmetrics pool --seed's, for the pairs it wrote (default 0)",
    )
    serve.add_argument(
        "--show-prelabels",
        action="store_true",
        help="show the model's label of each pair as a suggestion (key a accepts it, m shows its answer)",
    )
    serve.add_argument(
        "--order",
        default="topic",
        metavar="ORDER",
        help="topic: the pairs query by query, each query's in the file's order; file: the file's order "
        "(default: topic)",
    )
    serve.add_argument(
        "--batch",
        type=int,
        default=1,
        metavar="N",
        help="the strategy is asked N pairs at a time, each batch judged query by query (default 1: each pair "
        "once the labels before it are told)",
    )
    serve.add_argument(
        "--guidelines", metavar="FILE", help="the judging guidelines (Markdown, UTF-8), shown as text on the page"
    )
    serve.add_argument("--port", type=int, default=8765, metavar="P", help="the port on 127.0.0.1 (0: a free one)")
    both = p.add_argument_group("judging, export, import")
    both.add_argument(
        "--assessor",
        metavar="NAME",
        help="who judges (default: the login name); export: only this person's labels; import: whose they are",
    )
    both2 = p.add_argument_group("judging, agreement")
    both2.add_argument(
        "--prelabels",
        metavar="FILE",
        help="a model's labels: irmetrics judge's judgments.jsonl (judging: kept in DIR, hidden from the person "
        "unless --show-prelabels)",
    )
    agree = p.add_argument_group("agreement")
    agree.add_argument(
        "--threshold", type=int, default=1, metavar="T", help="relevant = grade >= threshold (Cohen's kappa)"
    )
    agree.add_argument("--json", action="store_true", help="print JSON instead of a markdown table")
    brought = p.add_argument_group("import")
    brought.add_argument("--qrels", metavar="FILE", help="the labels to record: TREC or BEIR qrels")
    brought.add_argument("--pairs", metavar="PAIRS", help="pairs to judge to add to the folder first")
    p.words = ACTIONS  # "irmetrics assess exprot DIR": did you mean export? (cli.args.Parser)
    p.set_defaults(func=run, paths=paths)
    return p


def _jsonl(path: str, name: str) -> Path:
    from ..io.beir_data import beir_file

    return beir_file(path, name)


def _own_folder(folder: str) -> Any:
    """``folder`` as a judging folder, ``irmetrics assess``'s own: another command's output folder is refused
    (:func:`haystack_irmetrics.io.output.check_folder_owner`), one holding its store is its own."""
    from ..io.output import OutputFolder

    return OutputFolder(folder, "irmetrics assess", FOLDER_FILES, ("assess.sqlite",))


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics assess`` reads and writes, checked before it runs: the judging folder is its own."""
    from ..io.output import Paths

    if args.target in ACTIONS:
        folder = args.folder
        if folder is None:
            return Paths()
        if args.target == "import":
            return Paths(
                reads=(args.qrels, args.pairs),
                writes=(os.path.join(folder, "assess.sqlite"),),
                owned=(_own_folder(folder),),
            )
        if args.target == "agreement":
            return Paths(reads=(args.prelabels,))
        writes = (os.path.join(folder, "qrels.tsv"), os.path.join(folder, "judgments.jsonl"))
        return Paths(reads=(args.prelabels,), writes=writes, owned=(_own_folder(folder),))
    reads = [args.target, args.scale, args.prelabels, args.guidelines, *(args.runs or [])]
    reads += [str(_jsonl(x, n)) for x, n in ((args.queries, "queries"), (args.corpus, "corpus")) if x is not None]
    if not args.output:
        return Paths(reads=tuple(reads))
    writes = tuple(os.path.join(args.output, name) for name in FOLDER_FILES)
    return Paths(reads=tuple(reads), writes=writes, owned=(_own_folder(args.output),))


def _refuse(args: argparse.Namespace, allowed: set[str]) -> None:
    """An option given that the form of the command does not take: one line naming it."""
    from ..errors import InvalidArgumentError

    options = {
        "queries": "--queries",
        "corpus": "--corpus",
        "output": "--output",
        "scale": "--scale",
        "strategy": "--strategy",
        "runs": "--runs",
        "depth": "--depth",
        "budget": "--budget",
        "show_prelabels": "--show-prelabels",
        "assessor": "--assessor",
        "prelabels": "--prelabels",
        "json": "--json",
        "qrels": "--qrels",
        "pairs": "--pairs",
        "max_grade": "--max-grade",
        "order": "--order",
        "guidelines": "--guidelines",
        "batch": "--batch",
        "seed": "--seed",
    }
    defaults = {"show_prelabels": False, "json": False, "order": "topic", "batch": 1, "seed": 0}
    for key, option in options.items():
        if key not in allowed and getattr(args, key) not in (None, defaults.get(key)):
            raise InvalidArgumentError(f"irmetrics assess {args.target} takes no {option}")


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics assess``: serve the judging page, export a folder, or print the agreement."""
    from ..assess.session import check_assessor
    from ..errors import InvalidArgumentError

    if args.assessor is not None:
        check_assessor(args.assessor)
    if args.target == "export":
        _refuse(args, {"assessor"})
        return _export(args)
    if args.target == "agreement":
        _refuse(args, {"prelabels", "json"})
        return _agreement(args)
    if args.target == "import":
        _refuse(args, {"assessor", "qrels", "pairs", "max_grade"})
        return _import(args)
    _refuse(args, {"queries", "corpus", "output", "scale", "strategy", "runs", "depth", "budget", "show_prelabels",
                   "assessor", "prelabels", "max_grade", "order", "guidelines", "batch", "seed"})  # fmt: skip
    if args.folder is not None:
        raise InvalidArgumentError(
            f"unexpected {args.folder!r} after the pairs file: irmetrics assess PAIRS ... -o DIR, or "
            f"irmetrics assess {' | '.join(ACTIONS)} DIR"
        )
    missing = [o for o, v in (("--queries", args.queries), ("--corpus", args.corpus), ("-o", args.output)) if not v]
    if missing:
        raise InvalidArgumentError(f"irmetrics assess PAIRS needs {', '.join(missing)}")
    return _serve(args)


def _folder(args: argparse.Namespace) -> str:
    from ..errors import InvalidArgumentError

    if args.folder is None:
        raise InvalidArgumentError(
            f"irmetrics assess {args.target} needs the judging folder: irmetrics assess {args.target} DIR"
        )
    return args.folder


def _export(args: argparse.Namespace) -> int:
    from ..assess.export import export

    done = export(_folder(args), args.assessor)
    who = ", ".join(done.assessors) or "nobody yet"
    print(f"exported {done.labels} labels of {done.pairs} pairs ({who}) -> {done.qrels}, {done.judgments}")
    return 0


def _agreement(args: argparse.Namespace) -> int:
    from ..assess.export import agreement, agreement_table
    from ..io.tables import json_text

    result = agreement(_folder(args), args.prelabels, args.threshold)
    print(json_text(result, indent=2) if args.json else agreement_table(result))
    return 0


def _import(args: argparse.Namespace) -> int:
    from ..assess.export import import_labels
    from ..errors import InvalidArgumentError
    from ..pooling.pairs import read_pairs

    missing = [o for o, v in (("--assessor", args.assessor), ("--qrels", args.qrels)) if not v]
    if missing:
        raise InvalidArgumentError(f"irmetrics assess import needs {', '.join(missing)}")
    pairs = read_pairs(args.pairs) if args.pairs else None
    done = import_labels(_folder(args), args.assessor, args.qrels, pairs, args.max_grade)
    print(
        f"imported {done.labels} labels as {args.assessor}'s ({done.left_out} judgments of {args.qrels} are not pairs of {args.folder}: left out)"
    )
    return 0


def _serve(args: argparse.Namespace) -> int:
    from ..assess.job import AssessSettings, AssessStart, run_assess

    settings = AssessSettings(
        args.target,
        args.queries,
        args.corpus,
        args.output,
        assessor=args.assessor,
        max_grade=3 if args.max_grade is None else args.max_grade,
        scale=args.scale,
        strategy=args.strategy,
        runs=tuple(args.runs or ()),
        depth=args.depth,
        budget=args.budget,
        prelabels=args.prelabels,
        show_prelabels=args.show_prelabels,
        port=args.port,
        order=args.order,
        guidelines=args.guidelines,
        batch=args.batch,
        seed=args.seed,
    )
    opened: list[AssessStart] = []

    def started(start: AssessStart) -> None:
        opened.append(start)
        resumed = f", resuming: {start.judged} judged" if start.judged or start.skipped else ""
        print(f"{start.pairs} pairs to judge ({start.added} new){resumed}; assessor {start.assessor}", flush=True)

    def announce(url: str) -> None:
        print(f"judging page: {url} (Ctrl-C to stop; every key is saved in {opened[0].store})", flush=True)

    result = run_assess(settings, started=started, announce=announce)
    print(f"stopped: {result.assessor} judged {result.judged} pairs ({result.relevant} relevant)", flush=True)
    done = result.exported
    if done is None:
        print("nothing labelled yet: nothing exported", flush=True)
    else:
        print(f"exported {done.labels} labels of {done.pairs} pairs -> {done.qrels}, {done.judgments}", flush=True)
    return 0
