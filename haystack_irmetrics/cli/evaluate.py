"""``irmetrics evaluate QRELS RUN [-k 1,3,5,10,100,1000] [--preset beir|trec] [--per-query]
[--format json|tsv|markdown] [--digits N]``: score a TREC run file against TREC or BEIR qrels.

Imports only the standard library until it runs; :func:`evaluate_files` is the one call into the library.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core import DEFAULT_K_VALUES
from ..io.tables import TABLE_DIGITS, format_result, json_text
from .args import add_threshold_option, digits, ints, names, policy, writes_nothing


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
    add_threshold_option(ev)
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
    ev.add_argument(
        "--holes",
        action="store_true",
        help="also print Judged@k (the share of the top k the query judged) and Hole@k (BEIR's: the share no "
        "query judged) for every k",
    )
    ev.add_argument(
        "--bounds",
        type=float,
        default=None,
        metavar="GRADE",
        help="also print, for each measure that has them (nDCG, MAP, P, Recall, R_cap, MRR, ...), the interval its "
        "value lies in once each unjudged document of a query's top k is judged 0 or GRADE",
    )
    ev.set_defaults(func=run, paths=writes_nothing)  # it prints, writes no file
    return ev


def evaluate_files(args: argparse.Namespace) -> Any:
    """The :class:`~haystack_irmetrics.core.evaluation.EvaluationResult` of ``args.run`` against ``args.qrels``
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
    return evaluate_run_file(qrels, args.run, args.k, measures=_measures(args), preset=policy(args))


def _measures(args: argparse.Namespace) -> list[str] | None:
    """The measures asked for, with the Judged and Hole families under ``--holes``."""
    if not getattr(args, "holes", False):
        return args.measures
    from ..core import BEIR_FAMILIES

    return [*(args.measures or BEIR_FAMILIES), "Judged", "Hole"]


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
    extras: dict[str, Any] = {}
    tables: list[str] = []
    if args.judged is not None:
        extras["judged"], table = _judged(result, args)
        tables.append(table)
    if args.bounds is not None:
        extras["bounds"], table = _bounds(result, args)
        tables.append(table)
    if extras and args.format == "json":
        import json

        text = json_text({"evaluation": json.loads(text), **extras}, indent=2)
    elif tables:
        text = "\n".join([text, *tables])
    print(text)
    return 0


def _bounds(result: Any, args: argparse.Namespace) -> tuple[dict, str]:
    """``--bounds GRADE``: each bounded measure's interval once the holes are judged, and its table."""
    from ..core.bounds import hole_bounds
    from ..errors import InvalidArgumentError
    from ..io import read_qrels, read_run

    wanted = [m for m in result.measures if m.spec.hole_bounds is not None]
    if not wanted:
        raise InvalidArgumentError(
            f"--bounds: none of the measures {[m.name for m in result.measures][:5]} has hole bounds "
            "(nDCG, MAP, P, Recall, R_cap, MRR, Success, Rprec, F, ERR, nERR and RBP have)"
        )
    b = hole_bounds(
        read_qrels(args.qrels).data, read_run(args.run).data, measures=wanted, grade=args.bounds, preset=policy(args)
    )
    n = args.digits if args.digits is not None else 4
    lines = [
        "",
        f"| measure | value | low | high | holes judged {b.grade:g} | holes per query |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in b.to_dict()["measures"].items():
        lines.append(
            f"| {name} | {row['value']:.{n}f} | {row['low']:.{n}f} | {row['high']:.{n}f} | "
            f"{row['holes_relevant']:.{n}f} | {row['holes']:.2f} |"
        )
    return b.to_dict(), "\n".join(lines)


def _judged(result: Any, args: argparse.Namespace) -> tuple[dict, str]:
    """``--judged DIR``: the PPI rows of each measure and their table."""
    from ..io import read_qrels, read_run
    from ..judges.folder import JudgedFolder
    from ..judges.ppi import judged_ppi
    from ..report.judged import JUDGED_NOTE

    folder = JudgedFolder.read(args.judged)  # every file of the folder opened once
    folder.recorded_qrels(args.qrels)  # warns when the folder was judged against other qrels
    rows = judged_ppi(read_run(args.run).data, read_qrels(args.qrels).data, folder, list(result.means), policy(args))
    n = args.digits if args.digits is not None else 4
    level = 1 - next(iter(rows.values()))["alpha"]
    lines = [
        "",
        f"| measure | human qrels | filled qrels | PPI estimate | PPI {level:.0%} interval | queries (human, filled, PPI) |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {row['human']:.{n}f} | {row['filled']:.{n}f} | {row['estimate']:.{n}f} | "
            f"[{row['low']:.{n}f}, {row['high']:.{n}f}] | {row['human_queries']}, {row['filled_queries']}, "
            f"{row['n']} + {row['N']} |"
        )
    lines += ["", JUDGED_NOTE]
    return rows, "\n".join(lines)


__all__ = ["add_subcommand", "evaluate_files", "run", "swapped_hint"]
