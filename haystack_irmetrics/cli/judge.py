"""``irmetrics judge RUN [RUN ...] --qrels QRELS --queries QUERIES --corpus CORPUS --depth K
(--llm MODEL --api-base-url URL | --judge JUDGE.yaml) -o DIR``: fill the holes of the runs' top K with a model's
labels (:mod:`haystack_irmetrics.judges`), the human labels kept.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .args import asking_options, named_file, seed, server_options

#: The files ``irmetrics judge`` writes in its output folder (agreement.json with --agreement; ppi.json and
#: model_qrels.tsv with --ppi).
OUTPUT_FILES = ("judgments.jsonl", "qrels.tsv", "summary.json", "agreement.json", "ppi.json", "model_qrels.tsv")


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``judge`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "judge",
        help="label the unjudged documents of runs' top K with a model (an LLM server or a judge YAML)",
        description="Judge exactly the unjudged (query, document) pairs of the runs' top K, pooled and "
        "deduplicated, with a chat model on an OpenAI-compatible server (--llm, --api-base-url) or the "
        "RelevanceJudge of a pipeline YAML (--judge). Writes DIR/judgments.jsonl, DIR/qrels.tsv (the human "
        "qrels plus the model's labels for the holes), DIR/summary.json and, with --agreement, "
        "DIR/agreement.json. Judgments are cached by the judge's fingerprint and the exact texts: a second run "
        "makes no request, a killed run resumes.",
    )
    p.add_argument("runs", nargs="*", metavar="[NAME=]RUN", help="TREC run files; NAME= labels a run")
    p.add_argument(
        "--qrels", help="the human qrels: TREC or BEIR TSV (gzip ok); none: no person judged yet, every pair is a hole"
    )
    p.add_argument(
        "--pairs",
        metavar="PAIRS.tsv",
        help="judge exactly these pairs (irmetrics pool's pairs file) instead of the runs' holes, with or without runs",
    )
    p.add_argument("--queries", required=True, help="BEIR queries.jsonl, or a BEIR folder")
    p.add_argument("--corpus", required=True, help="BEIR corpus.jsonl, or a BEIR folder")
    p.add_argument("--depth", type=int, default=10, help="judge each run's top K")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--llm", metavar="MODEL", help="the chat model's name on the server")
    which.add_argument("--judge", metavar="JUDGE.yaml", help="a pipeline YAML holding one RelevanceJudge")
    server_options(p)
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="the output folder")
    asking_options(p)
    p.add_argument("--max-grade", type=int, default=3, help="the top grade (--llm)")
    p.add_argument("--system-prompt", metavar="FILE", help="replace the default system prompt (--llm)")
    p.add_argument("--template", metavar="FILE", help="replace the user message; holds {query} and {document}")
    p.add_argument(
        "--max-chars", type=int, default=None, metavar="N", help="send at most N characters of a document (--llm)"
    )
    p.add_argument(
        "--no-response-format",
        action="store_true",
        help='do not send the answer form ({"grade": N}) as response_format (--llm; a server answering 400 to it '
        "is asked without it anyway)",
    )
    p.add_argument(
        "--reask", type=int, default=1, choices=(0, 1), help="ask an answer outside the form once more (0: never)"
    )
    p.add_argument(
        "--lenient",
        action="store_true",
        help="read grades out of free text too (opt-in: it can misread; recorded in the fingerprint)",
    )
    p.add_argument("--agreement", type=int, default=0, metavar="N", help="also judge N human-labelled pairs")
    p.add_argument("--fit", type=int, default=200, metavar="N", help="learn a scorer's cut points on N pairs")
    p.add_argument("--threshold", type=int, default=1, help="relevant = grade >= threshold (agreement's kappa)")
    p.add_argument("--measure", default=None, help="the systems' order for --agreement (default NDCG@K)")
    p.add_argument(
        "--seed",
        type=seed,
        default=0,
        help="seed of the agreement and fit samples, and of --strategy's ties between runs",
    )
    p.add_argument(
        "--ppi",
        action="store_true",
        help="also judge the pool pairs people judged and write DIR/ppi.json: prediction-powered intervals of "
        "each run's --measure and of each difference, the queries people judged in full as the labelled set",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="--ppi intervals at level 1 - alpha")
    p.add_argument(
        "--strategy",
        metavar="S",
        help="judge only --budget of the holes, in the order a pooling strategy asks for them (depth, rbp, mtf, "
        "maxmean, stratified: see irmetrics pool); mtf and maxmean choose each batch from the labels so far",
    )
    p.add_argument("--budget", type=int, metavar="N", help="the number of holes to judge with --strategy")
    p.add_argument("--no-cache", action="store_true", help="ask for every pair, keep nothing")
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bar (shown on a terminal: pairs judged, cached, ...)"
    )
    p.set_defaults(func=run, paths=paths)
    return p


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics judge`` reads (runs, qrels, queries, corpus, the judge YAML, the prompt files) and writes
    (:data:`OUTPUT_FILES` in ``-o``): the human qrels in DIR/qrels.tsv are refused, never replaced, and so is
    another command's output folder."""
    from ..io.output import OutputFolder, Paths

    reads = (*map(named_file, args.runs), args.qrels, args.pairs)
    reads += (_jsonl(args.queries, "queries"), _jsonl(args.corpus, "corpus"))
    out = Path(args.output)
    return Paths(
        reads=(*reads, args.judge, args.system_prompt, args.template),
        writes=tuple(out / name for name in OUTPUT_FILES),
        owned=(OutputFolder(out, "irmetrics judge", OUTPUT_FILES, ("judgments.jsonl", "summary.json")),),
    )


def _jsonl(path: str, name: str) -> Path:
    from ..io.beir_data import beir_file

    return beir_file(path, name)


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics judge``: build the job and the judge, run it (:func:`haystack_irmetrics.judges.job.run_judge`:
    the output folder locked first), print what it did."""
    from ..judges.job import JudgeJob, run_judge
    from ..judges.settings import JudgeSettings

    settings = JudgeSettings(
        depth=args.depth,
        concurrency=args.concurrency,
        retries=args.retries,
        backoff=args.backoff,
        agreement=args.agreement,
        seed=args.seed,
        threshold=args.threshold,
        measure=args.measure,
        fit=args.fit,
        ppi=args.ppi,
        alpha=args.alpha,
        progress=False if args.no_progress else None,
        strategy=args.strategy,
        budget=args.budget,
    )
    job = JudgeJob(
        args.runs, args.qrels, args.queries, args.corpus, args.output, settings, not args.no_cache, args.pairs
    )
    judge = _judge(args)
    _print_result(run_judge(job, judge), judge, args.output)
    return 0


def _judge(args: argparse.Namespace) -> Any:
    """The judge the options name: a chat model on a server (``--llm``) or a pipeline YAML's (``--judge``)."""
    if args.judge is not None:
        from ..components.judge import load_judge

        return load_judge(args.judge)
    from ..judges.job import chat_judge
    from ..judges.settings import ChatSettings

    chat = ChatSettings(
        args.llm,
        api_base_url=args.api_base_url,
        api_key_env=args.api_key_env,
        timeout=args.timeout,
        max_grade=args.max_grade,
        system_prompt=args.system_prompt,
        template=args.template,
        max_chars=args.max_chars,
        response_format=not args.no_response_format,
        reask=args.reask,
        lenient=args.lenient,
    )
    return chat_judge(chat)


def _print_result(result: Any, judge: Any, output: str) -> None:
    """What ``irmetrics judge`` prints of a :class:`~haystack_irmetrics.judges.judging.JudgeResult`."""
    from ..io.tables import plural

    s = result.summary
    if s.get("cut_points_learned_on"):
        cuts = ", ".join(f"{c:.4g}" for c in judge.cut_points)
        print(f"cut points {cuts} learned on {plural(s['cut_points_learned_on'], 'human-labelled pair')}")
    reasked = f", {s['reasked']} asked again" if s.get("reasked") else ""
    print(
        f"judged {plural(s['pairs'], 'pair')} ({plural(s['requests'], 'request')}, {s['cache_hits']} cached, "
        f"{s['unparseable']} unparseable{reasked}) -> {output}"
    )
    if (s.get("response_format") or {}).get("refused_by_server"):
        print("the server refused response_format: the answer form was asked for in the prompt alone")
    holes = s.get(f"Hole@{s['depth']}") or {}
    shown = [f"{name} {_share(h['before'])} -> {_share(h['after'])}" for name, h in holes.items()]
    if shown:
        print(f"Hole@{s['depth']} (BEIR's, before -> after): " + ", ".join(shown))
    if result.agreement and result.agreement["labels"]:
        labels, systems = result.agreement["labels"], result.agreement["systems"]
        kappa, weighted, alpha, tau = (
            _figure(x) for x in (labels["kappa"], labels["weighted_kappa"], labels["alpha"], systems["tau"])
        )
        print(
            f"agreement on {plural(labels['pairs'], 'pair')}: kappa {kappa}, weighted kappa {weighted}, alpha {alpha}; "
            f"systems' tau {tau}"
        )
    if result.ppi:
        for name, row in result.ppi.runs.items():
            print(
                f"{name}: {result.ppi.measure} {row['estimate']:.4f} [{row['low']:.4f}, {row['high']:.4f}] "
                f"(PPI, {row['n']} labelled + {row['N']} queries); filled qrels {row['filled']:.4f}"
            )


def _figure(value: float | None) -> str:
    """An agreement figure, ``n/a`` where it is undefined (``agreement.json`` says why)."""
    return "n/a" if value is None or value != value else f"{value:.3f}"


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


__all__ = ["add_subcommand", "paths", "run"]
