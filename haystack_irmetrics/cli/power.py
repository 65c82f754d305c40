"""``irmetrics power RUN_A RUN_B [RUN ...] --qrels QRELS -m MEASURE [--delta D] [--alpha 0.05] [--power 0.8]
[--json]``: how many queries a comparison needs, by Sakai's topic set size design
(:mod:`haystack_irmetrics.stats.power`), from the runs' per-query values.

Imports only the standard library until it runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from .args import add_threshold_option, names, policy, writes_nothing


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``power`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "power",
        help="how many queries a comparison needs (Sakai's topic set size design) and the smallest difference the "
        "queries there are detect",
        description="Sakai's topic set size design from the runs' per-query values of one measure: for two runs, "
        "the paired t-test's number of queries to detect a difference D with the given power, the smallest "
        "difference it detects with the queries there are now, and the variance of the per-query differences; for "
        "more runs, the one-way ANOVA's (D: the range between the best and the worst run; the within-system "
        "variance). Needs scipy (pip install 'haystack-irmetrics[stats]').",
    )
    p.add_argument(
        "runs",
        nargs="+",
        metavar="[NAME=]RUN",
        help="TREC run files or 'irmetrics beir --output' dataset folders (two or more); NAME= labels a run",
    )
    p.add_argument("--qrels", required=True, help="qrels file: TREC or BEIR TSV (gzip ok)")
    p.add_argument("-m", "--measure", type=names, required=True, help="the measure compared, e.g. NDCG@10")
    p.add_argument(
        "--delta",
        type=float,
        default=None,
        help="the difference to detect (more than two runs: the range between the best and the worst) "
        "(default: the observed one)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="the test's significance level")
    p.add_argument("--power", type=float, default=0.8, help="the probability of detecting --delta")
    p.add_argument("--preset", choices=["beir", "trec"], default="beir", help="beir 2.2.0 or trec_eval conventions")
    add_threshold_option(p)
    p.add_argument(
        "--depth",
        type=int,
        default=10,
        help="the pool depth a new query is judged to: judgments_needed is queries_needed times the runs' mean "
        "pool size per query at it",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run, paths=writes_nothing)  # it prints, writes no file
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics power``: evaluate each run on the measure, pair the queries as ``irmetrics compare`` does,
    print the design."""
    from ..compare.runs import paired_rows
    from ..core.measures import FAMILIES, parse_measure
    from ..errors import InvalidArgumentError
    from ..io.tables import json_text
    from ..stats.power import topic_set_size

    if len(args.measure) != 1:
        raise InvalidArgumentError(f"-m takes one measure, e.g. NDCG@10, got {args.measure}")
    if len(args.runs) < 2:
        raise InvalidArgumentError(f"power compares two runs or more, got {len(args.runs)}: {args.runs}")
    key, values, cost = _per_query(args)
    design = topic_set_size(paired_rows(values, key), args.delta, alpha=args.alpha, power=args.power)
    judgments = _judgments(design, cost, args.depth)
    if args.json:
        print(json_text({**design.to_dict(), **judgments}, indent=2))
        return 0
    listed = " and ".join(values) if len(values) == 2 else f"{len(values)} runs"
    if FAMILIES[parse_measure(key).family].aggregate == "geometric":
        listed += " (on the log scale, as its geometric mean and compare's tests read it)"
    settings = f"alpha {design.alpha:g}, power {design.power:g}"
    which = "difference" if design.design == "paired-t" else "range between the best and the worst run"
    given = "" if args.delta is not None else " (the observed one)"
    print(
        f"{'paired t-test' if design.design == 'paired-t' else 'one-way ANOVA'} design: {key} of {listed} over "
        f"{design.queries_now} queries ({settings})"
    )
    print(
        f"{'variance of the per-query differences' if design.design == 'paired-t' else 'within-system variance'}: "
        f"{design.variance:.6g}"
    )
    print(f"queries needed to detect a {which} of {design.delta:.4g}{given}: {design.queries_needed}")
    print(
        f"smallest {which} detectable with the {design.queries_now} queries there are: {design.min_detectable_delta:.4f}"
    )
    print(
        f"judgments needed at depth {args.depth}: {judgments['judgments_needed']} ({design.queries_needed} queries x "
        f"a mean pool of {judgments['mean_pool_size']:.4g} documents); judgments there are: "
        f"{judgments['judgments_now']}"
    )
    return 0


def _judgments(design: Any, cost: tuple[Any, Any], depth: int) -> dict[str, Any]:
    """What the design costs in judgments: ``judgments_needed`` (the queries needed times the runs' mean pool
    size per query at ``depth``), and ``judgments_now``: the qrels' judgments of the queries the runs answer."""
    import math

    from ..checks import whole
    from ..pooling.runs import pool_runs

    pooled, judged_now = cost
    mean = pool_runs(list(pooled.values()), list(pooled), whole(depth, "--depth", least=1)).mean_pool_size()
    return {
        "depth": depth,
        "mean_pool_size": mean,
        "judgments_needed": math.ceil(design.queries_needed * mean),
        "judgments_now": judged_now,
    }


def _per_query(args: argparse.Namespace) -> tuple[str, dict[str, Any], tuple[dict[str, Any], int]]:
    """The measure's key, each run's per-query values of it, and what judging costs: the runs (to pool) and the
    qrels' judgments of the queries they answer."""
    from pathlib import Path

    from ..core import evaluate
    from ..io import read_qrels, read_run
    from ..io.run_names import label_runs

    (measure,) = args.measure
    qrels = read_qrels(args.qrels)
    preset = policy(args)
    values: dict[str, Any] = {}
    runs: dict[str, Any] = {}
    for name, path in label_runs(args.runs).items():
        folder = Path(path)
        runs[name] = run = read_run(folder / "run.trec" if folder.is_dir() else folder)  # a beir output folder
        result = evaluate(qrels, run, None, measures=[measure], preset=preset)
        (key,) = result.raw_means
        values[name] = dict(result.per_query[key].items())
    answered = {q for run in runs.values() for q in run.data}
    judged_now = sum(len(docs) for q, docs in qrels.data.items() if q in answered)
    return key, values, (runs, judged_now)


__all__ = ["add_subcommand", "run"]
