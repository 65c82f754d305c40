"""``irmetrics evaluate QRELS RUN [-k 1,3,5,10,100,1000] [--preset beir|trec] [--per-query]
[--format json|tsv|markdown] [--digits N]``: score a TREC run file against TREC or BEIR qrels.

Imports only the standard library until it runs; :func:`evaluate_files` is the one call into the library.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core import DEFAULT_K_VALUES
from ..io.tables import TABLE_DIGITS, format_result
from .args import digits, ints, names, policy


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``evaluate`` to the ``irmetrics`` subcommands."""
    ev = sub.add_parser(
        "evaluate",
        help="score a TREC run file against qrels (TREC or BEIR TSV)",
        description="Score a TREC run file against qrels. JSON prints values exactly as the preset computes "
        "them (beir: BEIR's means rounded to 5 decimals; trec: unrounded), markdown and tsv print "
        f"{TABLE_DIGITS['beir']} decimals (beir) or {TABLE_DIGITS['trec']} (trec); --digits N rounds every "
        "printed value to N decimals in every format.",
    )
    ev.add_argument("qrels", help="qrels file: TREC 'qid iter docid rel' or BEIR TSV with header (gzip ok)")
    ev.add_argument("run", help="TREC run file 'qid Q0 docid rank score tag' (rank ignored; gzip ok)")
    ev.add_argument("-k", type=ints, default=list(DEFAULT_K_VALUES), help="cutoffs, e.g. 1,3,5,10")
    ev.add_argument(
        "-m",
        "--measures",
        type=names,
        default=None,
        help="families or names, e.g. NDCG,MRR or nDCG@10,nDCG_exp@10,P@5,Rprec,bpref,iP@0.3,Judged@10 "
        "(default: BEIR's six: NDCG,MAP,Recall,P,MRR,R_cap)",
    )
    ev.add_argument("--preset", choices=["beir", "trec"], default="beir", help="beir 2.2.0 or trec_eval conventions")
    ev.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="relevance threshold for binary metrics (default: the preset's, 1)",
    )
    ev.add_argument("--ties", choices=["trec", "stable"], default=None, help="tie order (default: the preset's)")
    ev.add_argument(
        "--missing-queries",
        choices=["skip", "zero"],
        default=None,
        help="judged queries the run does not answer (default: the preset's)",
    )
    ev.add_argument(
        "--no-relevant",
        choices=["zero", "skip"],
        default=None,
        help="queries without a relevant document (default: the preset's, zero)",
    )
    ev.add_argument(
        "--ignore-identical-ids",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="drop documents whose id is the query id (default: the preset's: on for beir, off for trec)",
    )
    ev.add_argument("--per-query", action="store_true", help="also print per-query values (in every format)")
    ev.add_argument("--format", choices=["json", "tsv", "markdown"], default="json", help="output format")
    ev.add_argument(
        "--digits",
        type=digits,
        default=None,
        metavar="N",
        help="round every printed value to N decimals (default: JSON exact; tables "
        f"{TABLE_DIGITS['beir']} for beir, {TABLE_DIGITS['trec']} for trec)",
    )
    ev.add_argument(
        "--judged",
        metavar="DIR",
        default=None,
        help="the output folder of irmetrics judge ... --ppi: also print each measure with the filled qrels and "
        "its prediction-powered estimate and interval (QRELS: the human qrels)",
    )
    ev.set_defaults(func=run)
    return ev


def evaluate_files(args: argparse.Namespace) -> Any:
    """The :class:`~haystack_irmetrics.core.evaluate.EvaluationResult` of ``args.run`` against ``args.qrels``
    under the options of the command line."""
    from ..core.measures import resolve_measures
    from ..errors import ParseError
    from ..io import evaluate_run_file, read_qrels, read_subtopic_qrels

    try:
        # A diversity measure reads QRELS' second column as the subtopic, as ndeval does (the others then
        # read each document's highest label over its subtopics).
        wanted = resolve_measures(args.measures, args.k)
        diverse = any(m.spec.needs_subtopics for m in wanted)
        qrels = read_subtopic_qrels(args.qrels) if diverse else read_qrels(args.qrels)
    except ParseError as e:
        hint = swapped_hint(args.qrels, args.run)
        if hint:
            raise ParseError(f"{e}; {hint}") from e
        raise
    # Streamed in pieces of whole queries when the file allows it: bounded memory, same result.
    return evaluate_run_file(qrels, args.run, args.k, measures=args.measures, preset=policy(args))


def _first_fields(path: str) -> int | None:
    """How many whitespace-separated fields the first data line of a text file has (None: unreadable)."""
    try:
        with open(path, "rb") as f:
            for _ in range(1000):  # bounded: /dev/zero or a file of one endless line is no reason to hang
                raw = f.readline(65536)
                if not raw:
                    return None
                fields = raw.split()
                if fields and not fields[0].startswith(b"#"):
                    return len(fields)
    except OSError:
        return None
    return None


def swapped_hint(qrels: str, run: str) -> str | None:
    """ "the files may be swapped" when the qrels file has a run's 6 fields and the run file qrels' 4."""
    if _first_fields(qrels) == 6 and _first_fields(run) in (3, 4):
        return (
            f"{qrels} looks like a run (6 fields: qid Q0 docid rank score tag) and {run} like qrels (TREC qrels: 4 fields, BEIR: 3): "
            "are they swapped? irmetrics evaluate takes QRELS first, then RUN"
        )
    return None


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics evaluate``: print the result in ``args.format``."""
    result = evaluate_files(args)
    text = format_result(result, args.format, args.per_query, args.digits)
    if args.judged is not None:
        text = _with_judged(text, result, args)
    print(text)
    return 0


def _with_judged(text: str, result: Any, args: argparse.Namespace) -> str:
    """The printed result with the PPI table of ``--judged`` (JSON: one object with both)."""
    import json

    from ..io import read_qrels, read_run
    from ..judges.ppi import judged_ppi

    measures = list(result.means)
    rows = judged_ppi(read_run(args.run).data, read_qrels(args.qrels).data, args.judged, measures, policy(args))
    if args.format == "json":
        return json.dumps({"evaluation": json.loads(text), "judged": rows}, indent=2)
    n = args.digits if args.digits is not None else 4
    lines = [
        "",
        f"| measure | human qrels | filled qrels | PPI estimate | PPI {1 - next(iter(rows.values()))['alpha']:.0%} interval |",
        "|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {row['human']:.{n}f} | {row['filled']:.{n}f} | {row['estimate']:.{n}f} | "
            f"[{row['low']:.{n}f}, {row['high']:.{n}f}] |"
        )
    return text + "\n" + "\n".join(lines)


__all__ = ["add_subcommand", "evaluate_files", "run", "swapped_hint"]
