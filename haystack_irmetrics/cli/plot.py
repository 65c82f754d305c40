"""``irmetrics plot {pr,gain,metric-vs-k,distribution} QRELS [NAME=]RUN ... -o OUTPUT``: draw runs with
:mod:`haystack_irmetrics.plots.runs` (matplotlib, the ``plots`` extra, imported when a figure is drawn).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core import STANDARD_LEVELS
from ..plots.figure import DEFAULT_DPI
from ..plots.runs import DEFAULT_KS
from .args import add_threshold_option, floats, ints, named_file, policy, size

#: The kinds of plot and what each draws.
KINDS = {
    "pr": "interpolated precision-recall curves",
    "gain": "mean CG/DCG (with ideal) and NDCG against the rank",
    "metric-vs-k": "a measure against its cutoff k",
    "distribution": "per-query values of one measure",
}


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``plot`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "plot",
        help="draw P-R, gain, metric-vs-k or per-query plots of TREC runs (PNG/SVG)",
        description="Plot one or more TREC runs against the same qrels: "
        + "; ".join(f"'{k}': {v}" for k, v in KINDS.items())
        + ". Needs matplotlib (pip install 'haystack-irmetrics[plots]').",
    )
    p.add_argument("kind", choices=list(KINDS))
    p.add_argument("qrels", help="qrels file: TREC or BEIR TSV (gzip ok)")
    p.add_argument(
        "runs",
        nargs="+",
        metavar="[NAME=]RUN",
        help="TREC run files; NAME= labels a run (default: its file name less .trec, .gz, ...)",
    )
    p.add_argument("-o", "--output", required=True, help="image path: .png, .svg or .pdf")
    p.add_argument(
        "-m", "--measure", default=None, help="metric-vs-k: e.g. NDCG, nDCG_exp, P; distribution: e.g. NDCG@10"
    )
    p.add_argument("-k", type=ints, default=list(DEFAULT_KS), help="metric-vs-k cutoffs, e.g. 1,3,5,10,100")
    p.add_argument("--levels", type=floats, default=list(STANDARD_LEVELS), help="pr recall levels")
    p.add_argument("--depth", type=int, default=10, help="gain: ranks 1..depth")
    p.add_argument("--gain", choices=["linear", "exp"], default=None, help="gain: NDCG gain form")
    p.add_argument("--discount", choices=["log2", "jk"], default=None, help="gain: NDCG discount")
    p.add_argument("--preset", choices=["beir", "trec"], default="beir")
    add_threshold_option(p)
    p.add_argument("--ties", choices=["trec", "stable"], default=None)
    p.add_argument("--size", type=size, default=None, help="figure size in inches, WIDTHxHEIGHT")
    p.add_argument("--dpi", type=int, default=DEFAULT_DPI)
    p.set_defaults(func=run, paths=paths)
    return p


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics plot`` reads (the qrels, the runs) and writes (the image)."""
    from ..io.output import Paths

    return Paths(reads=(args.qrels, *map(named_file, args.runs)), writes=(args.output,))


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics plot``: draw the kind asked for and print the path written."""
    from ..io import read_qrels
    from ..io.run_names import read_named_runs
    from ..plots import plot_gain_curves, plot_pr_curves, plot_runs_metric_vs_k, plot_runs_score_distribution

    qrels = read_qrels(args.qrels)
    runs = read_named_runs(args.runs)
    rules: dict[str, Any] = {"preset": policy(args)}
    figure: dict[str, Any] = {"dpi": args.dpi, **({"figsize": args.size} if args.size else {})}
    if args.kind == "pr":
        out = plot_pr_curves(qrels, runs, args.output, levels=args.levels, **figure, **rules)
    elif args.kind == "gain":
        gain = None if args.gain in (None, "linear") else args.gain
        discount = None if args.discount in (None, "log2") else args.discount
        out = plot_gain_curves(
            qrels, runs, args.output, depth=args.depth, gain=gain, discount=discount, **figure, **rules
        )
    elif args.kind == "metric-vs-k":
        out = plot_runs_metric_vs_k(
            qrels, runs, args.output, measure=args.measure or "NDCG", ks=args.k, **figure, **rules
        )
    else:
        out = plot_runs_score_distribution(
            qrels, runs, args.output, measure=args.measure or "NDCG@10", **figure, **rules
        )
    print(out)
    return 0


__all__ = ["KINDS", "add_subcommand", "paths", "run"]
