"""``irmetrics compare``: evaluate runs on the same qrels and print them side by side, each against the
baseline, with significance; or two suites dataset by dataset.

Imports only the standard library until it runs (then :mod:`haystack_irmetrics.compare`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core import DEFAULT_K_VALUES
from .args import add_significance_options, add_threshold_option, ints, names, policy, writes_nothing


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``compare`` to the ``irmetrics`` subcommands."""
    cmp = sub.add_parser(
        "compare",
        help="evaluate runs on the same qrels and print them side by side",
        description="Evaluate two or more TREC runs (or dataset folders written by 'irmetrics beir --output') "
        "against the same qrels and compare each with the baseline; or compare two suites written by "
        "'irmetrics beir --output' dataset by dataset.",
    )
    cmp.add_argument(
        "runs",
        nargs="+",
        metavar="[NAME=]RUN",
        help="TREC run files or dataset folders OUTPUT/NAME of irmetrics beir (two or more), or two suite "
        "folders OUTPUT; NAME= labels a run",
    )
    cmp.add_argument(
        "--qrels",
        help="qrels file: TREC or BEIR TSV (default: the qrels of the dataset the beir folders' summary.json "
        "name; never for two suite folders, each dataset has its own)",
    )
    cmp.add_argument("-k", type=ints, default=list(DEFAULT_K_VALUES), help="cutoffs")
    cmp.add_argument(
        "-m",
        "--measures",
        type=names,
        default=None,
        help="families or names, e.g. NDCG,MRR or nDCG@10 (default: BEIR's six; for two suites nDCG@10,Recall@100)",
    )
    cmp.add_argument(
        "--names", type=names, default=None, help="labels of the runs, e.g. bm25,dense (default: file or folder names)"
    )
    cmp.add_argument("--baseline", default=None, help="the run the others are compared with (default: the first)")
    cmp.add_argument("--preset", choices=["beir", "trec"], default="beir", help="beir 2.2.0 or trec_eval conventions")
    add_threshold_option(cmp)
    cmp.add_argument("--format", choices=["markdown", "json"], default="markdown", help="what to print")
    add_significance_options(
        cmp,
        "significance (each run against the baseline, per measure, over the queries either is scored on)",
        "bootstrap interval of run − baseline, paired t-test and randomization p-values, Holm-adjusted over runs "
        "x measures",
    )
    cmp.set_defaults(func=run, paths=writes_nothing)  # it prints, writes no file
    return cmp


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics compare``: print the comparison (markdown or JSON), its notes on stderr."""
    from ..compare import compare_many, compare_suites, is_suite
    from ..errors import InvalidArgumentError
    from ..io.run_names import split_runs

    if len(args.runs) < 2:
        raise InvalidArgumentError(f"compare needs two runs or more, got {len(args.runs)}: {args.runs}")
    if args.names is not None and len(args.names) != len(args.runs):
        count = "two" if len(args.runs) == 2 else len(args.runs)
        raise InvalidArgumentError(f"--names needs {count} labels, one per run, got {args.names}")
    runs, labels = split_runs(args.runs, args.names)
    options = {
        "measures": args.measures,
        "preset": policy(args),
        "significance": args.stats,
        "n_resamples": args.n_resamples,
        "seed": args.seed,
        "confidence": args.confidence,
    }
    suites = [is_suite(path) for path in runs]
    compared: Any
    if any(suites):
        if not all(suites) or len(suites) != 2:
            raise InvalidArgumentError(
                "give two suite folders (they hold leaderboard.json), or runs only (run files or a suite's dataset "
                f"folders OUTPUT/NAME); got {sum(suites)} suite folder(s) among {len(suites)}"
            )
        if args.qrels is not None:
            raise InvalidArgumentError(
                "two suite folders are compared on each dataset's own qrels (from its summary.json): drop --qrels, "
                "or compare dataset folders (OUTPUT/NAME) with --qrels"
            )
        if args.baseline is not None:
            raise InvalidArgumentError("--baseline is for runs: the first of two suite folders is the baseline")
        pair = tuple(labels) if labels else None
        compared = compare_suites(runs[0], runs[1], args.k, names=pair, **options)
    else:
        compared = compare_many(runs, args.qrels, args.k, names=labels, baseline=args.baseline, **options)
        if len(compared.results) == 1:  # two runs: the table and JSON of one pair
            compared = next(iter(compared.results.values()))
    print(compared.to_json() if args.format == "json" else compared.markdown())
    for note in compared.notes:
        print(f"irmetrics: note: {note}", file=sys.stderr)
    return 0


__all__ = ["add_subcommand", "run"]
