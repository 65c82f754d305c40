"""The ``irmetrics`` command line.

``irmetrics evaluate QRELS RUN [-k 1,3,5,10,100,1000] [--preset beir|trec] [--per-query]
[--format json|tsv|markdown]`` scores a TREC run file against TREC or BEIR qrels.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import IRMetricsError


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _names(text: str) -> list[str]:
    # Commas inside parameters separate gains, not measures: "nDCG(gains={0:0,1:1})@10,P@5".
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text + ","):
        depth += ch in "({"
        depth -= ch in ")}"
        if ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    return [x for x in out if x]


def format_result(result, fmt: str, per_query: bool = False) -> str:
    """Render an :class:`~haystack_irmetrics.core.evaluate.EvaluationResult` as json, tsv or markdown."""
    if fmt == "json":
        return result.to_json(per_query=per_query)
    rows = list(result.means.items())
    if fmt == "tsv":
        lines = [f"{name}\tall\t{value}" for name, value in rows]
        if per_query:
            for name, values in result.per_query.items():
                lines.extend(f"{name}\t{q}\t{v!r}" for q, v in values.items())
        return "\n".join(lines)
    if fmt == "markdown":
        return markdown_table(result)
    raise ValueError(fmt)


def markdown_table(result) -> str:
    """Families (and variants) as rows, cutoffs or recall levels as columns; a measure without one under "all"."""
    families: dict[str, dict[str | None, float]] = {}
    for m in result.measures:
        families.setdefault(m.stem, {})[m.at] = result.means[m.name]
    cutoffs = sorted({k for row in families.values() for k in row}, key=lambda k: -1.0 if k is None else float(k))
    head = "| measure | " + " | ".join("all" if k is None else f"@{k}" for k in cutoffs) + " |"
    sep = "|---|" + "---:|" * len(cutoffs)
    body = [
        f"| {fam} | " + " | ".join(f"{row[k]:.5f}" if k in row else "" for k in cutoffs) + " |"
        for fam, row in families.items()
    ]
    return "\n".join([head, sep, *body])


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .io import evaluate_run_file, read_qrels

    qrels = read_qrels(args.qrels)
    # Streamed in pieces of whole queries when the file allows it: bounded memory, same result.
    result = evaluate_run_file(
        qrels,
        args.run,
        args.k,
        measures=args.measures,
        preset=args.preset,
        relevance_threshold=args.threshold,
        ties=args.ties,
        missing_queries=args.missing_queries,
        ignore_identical_ids=args.ignore_identical_ids,
        no_relevant=args.no_relevant,
    )
    print(format_result(result, args.format, args.per_query))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="irmetrics", description="Exact retrieval evaluation (BEIR / trec_eval).")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("evaluate", help="score a TREC run file against qrels (TREC or BEIR TSV)")
    ev.add_argument("qrels", help="qrels file: TREC 'qid iter docid rel' or BEIR TSV with header (gzip ok)")
    ev.add_argument("run", help="TREC run file 'qid Q0 docid rank score tag' (rank ignored; gzip ok)")
    ev.add_argument("-k", type=_ints, default=[1, 3, 5, 10, 100, 1000], help="cutoffs, e.g. 1,3,5,10,100,1000")
    ev.add_argument(
        "-m",
        "--measures",
        type=_names,
        default=None,
        help="families or names, e.g. NDCG,MRR or nDCG@10,nDCG_exp@10,P@5,Rprec,bpref,iP@0.3,Judged@10 "
        "(default: BEIR's six)",
    )
    ev.add_argument("--preset", choices=["beir", "trec"], default="beir")
    ev.add_argument("--threshold", type=float, default=None, help="relevance threshold for binary metrics")
    ev.add_argument("--ties", choices=["trec", "stable"], default=None)
    ev.add_argument("--missing-queries", choices=["skip", "zero"], default=None)
    ev.add_argument("--no-relevant", choices=["zero", "skip"], default=None)
    ev.add_argument("--ignore-identical-ids", action=argparse.BooleanOptionalAction, default=None)
    ev.add_argument("--per-query", action="store_true", help="also print unrounded per-query values")
    ev.add_argument("--format", choices=["json", "tsv", "markdown"], default="json")
    ev.set_defaults(func=_cmd_evaluate)
    from .beir.cli import add_subcommands as add_beir_subcommands  # beir, compare: handlers in haystack_irmetrics.beir

    add_beir_subcommands(sub)
    from .feedback.cli import add_subcommand as add_feedback  # feedback: handler in haystack_irmetrics.feedback

    add_feedback(sub)
    from .plotting import add_subcommand as add_plot  # plot: handler in haystack_irmetrics.plotting

    add_plot(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except IRMetricsError as e:
        print(f"irmetrics: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except OSError as e:  # a path that cannot be read or written (missing, a directory, no permission)
        print(f"irmetrics: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
