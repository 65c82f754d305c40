"""``irmetrics compare``: evaluate two runs on the same qrels and print them side by side, with significance.

Imports only the standard library until it runs (then :mod:`haystack_irmetrics.beir.compare`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core import DEFAULT_K_VALUES
from .args import add_significance_options, ints, names


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``compare`` to the ``irmetrics`` subcommands."""
    cmp = sub.add_parser(
        "compare",
        help="evaluate two runs on the same qrels and print them side by side",
        description="Evaluate two TREC runs (or dataset folders written by 'irmetrics beir --output') against the "
        "same qrels; or compare two suites written by 'irmetrics beir --output' dataset by dataset.",
    )
    cmp.add_argument(
        "run_a",
        help="first run: TREC run file, a dataset folder OUTPUT/NAME, or a suite folder OUTPUT of irmetrics beir",
    )
    cmp.add_argument("run_b", help="second run: the same kind as run_a")
    cmp.add_argument(
        "--qrels",
        help="qrels file: TREC or BEIR TSV (e.g. DATASET/qrels/test.tsv); required for runs, not for two suite "
        "folders (each dataset's qrels come from its summary.json)",
    )
    cmp.add_argument("-k", type=ints, default=list(DEFAULT_K_VALUES), help="cutoffs")
    cmp.add_argument(
        "-m",
        "--measures",
        type=names,
        default=None,
        help="families or names, e.g. NDCG,MRR or nDCG@10 (default: BEIR's six; for two suites nDCG@10,Recall@100)",
    )
    cmp.add_argument("--names", type=names, default=None, help="labels for the two runs, e.g. bm25,dense")
    cmp.add_argument("--preset", choices=["beir", "trec"], default="beir", help="beir 2.2.0 or trec_eval conventions")
    cmp.add_argument("--format", choices=["markdown", "json"], default="markdown", help="what to print")
    add_significance_options(
        cmp,
        "significance (B against A, per measure, over the queries either run is scored on)",
        "bootstrap interval of B − A, paired t-test and randomization p-values, Holm-adjusted",
    )
    cmp.set_defaults(func=run)
    return cmp


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics compare``: print the comparison (markdown or JSON), its notes on stderr."""
    from ..beir.compare import compare_runs, compare_suites, is_suite
    from ..errors import InvalidArgumentError

    if args.names is not None and len(args.names) != 2:
        raise InvalidArgumentError(f"--names needs two labels, got {args.names}")
    options = {
        "measures": args.measures,
        "names": tuple(args.names) if args.names else None,
        "preset": args.preset,
        "significance": args.stats,
        "n_resamples": args.n_resamples,
        "seed": args.seed,
        "confidence": args.confidence,
    }
    suites = [is_suite(path) for path in (args.run_a, args.run_b)]
    compared: Any
    if any(suites):
        if not all(suites):
            raise InvalidArgumentError(
                "one of the two is a suite folder (it holds leaderboard.json) and the other is not: compare two "
                "suites, or two runs (a run file or a suite's dataset folder OUTPUT/NAME)"
            )
        if args.qrels is not None:
            raise InvalidArgumentError(
                "two suite folders are compared on each dataset's own qrels (from its summary.json): drop --qrels, "
                "or compare two dataset folders (OUTPUT/NAME) with --qrels"
            )
        compared = compare_suites(args.run_a, args.run_b, args.k, **options)
    else:
        if args.qrels is None:
            raise InvalidArgumentError("--qrels is required to compare two runs (it is optional for two suite folders)")
        compared = compare_runs(args.run_a, args.run_b, args.qrels, args.k, **options)
    print(compared.to_json() if args.format == "json" else compared.markdown())
    for note in compared.notes:
        print(f"irmetrics: note: {note}", file=sys.stderr)
    return 0


__all__ = ["add_subcommand", "run"]
