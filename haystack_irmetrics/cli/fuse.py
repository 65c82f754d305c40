"""``irmetrics fuse``: fuse TREC runs into one with ranx's methods; tune the fusion on judgments by
cross-validation (``--optimize``); write the Haystack ``DocumentJoiner`` that reproduces it (``--joiner-yaml``).

The flags become a :class:`~haystack_irmetrics.fusion.job.FusionSettings`, the work is
:func:`~haystack_irmetrics.fusion.job.run_fusion`; this module parses and prints. The choices and the help
read the registry (:mod:`haystack_irmetrics.fusion.registry`; importing it loads numpy and the core, nothing
heavier).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..fusion.registry import MAX_CONFIGURATIONS, METHODS, NO_NORMALIZATION, NORMALIZATIONS, RRF_K, TRAINED, parameter
from ..io.tables import json_text, markdown_cell, plural
from .args import floats, named_file, names, seed

_METHODS = list(METHODS)
_NORMS = (*NORMALIZATIONS, NO_NORMALIZATION)
# The parameters --param gives (one with a flag of its own, RRF's k, is not among them).
_PARAMS = ", ".join(f"{p.name} ({m.name}: {p.range})" for m in METHODS.values() for p in m.params if p.argument is None)
_REQUIRED = ", ".join(f"{m.name} --param {p.name}=..." for m in METHODS.values() for p in m.params if p.default is None)


def _number(text: str) -> int | float:
    """A number as typed (a whole one stays an int); its range is the method's to check."""
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    return int(number) if number.is_integer() and abs(number) < 2**53 else number  # 1e20 stays 1e+20 in messages


def _param(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        if not sep:
            raise ValueError
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=NUMBER, e.g. gamma=0.5, got {text!r}") from None
    rule = parameter(name.strip())
    return name.strip(), int(number) if number.is_integer() and rule is not None and rule.whole else number


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``fuse`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "fuse",
        help="fuse runs into one (ranx's methods); tune the fusion on qrels; write a Haystack DocumentJoiner",
        description="Fuse two or more TREC runs into one with ranx 0.3.21's fusion methods and normalisations "
        "(the same scores). With --optimize, tune the weights (or the method's parameter) on qrels by "
        "cross-validation over queries and compare the held-out fused run with each input.",
    )
    p.add_argument("runs", nargs="+", metavar="[NAME=]RUN", help="TREC run files (two or more); NAME= labels a run")
    p.add_argument(
        "--method",
        choices=_METHODS,
        default="rrf",
        metavar="METHOD",
        help=f"fusion method, ranx's names: {', '.join(_METHODS)} (default rrf); the trained ones "
        f"({', '.join(TRAINED)}) learn from --qrels FILE; {_REQUIRED} need their parameter",
    )
    p.add_argument(
        "--norm",
        choices=_NORMS,
        default="min-max",
        metavar="NORM",
        help=f"score normalisation before fusing: {', '.join(_NORMS)} (default min-max)",
    )
    p.add_argument("--weights", type=floats, default=None, help="one weight per run, e.g. 0.3,0.7 (weighted methods)")
    p.add_argument(
        "--rrf-k", type=_number, default=None, help=f"RRF's constant k, {RRF_K.range} (default {RRF_K.default})"
    )
    p.add_argument("--depth", type=int, default=None, help="fuse each run's top D documents per query")
    p.add_argument(
        "--param",
        type=_param,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"another parameter of the method: {_PARAMS}",
    )
    p.add_argument("--qrels", default=None, help="qrels (TREC or BEIR TSV): trained methods and --optimize")
    p.add_argument("--names", type=names, default=None, help="labels of the runs (default: file names)")
    p.add_argument("-o", "--output", default=None, help="write the fused run here (TREC format)")
    p.add_argument("--tag", default="fused", help="run tag of the written run (default fused)")
    tune = p.add_argument_group("tuning (--optimize)")
    tune.add_argument("--optimize", action="store_true", help="tune on --qrels by cross-validation over queries")
    tune.add_argument("--metric", default="NDCG@10", help="measure maximised (default NDCG@10)")
    tune.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    tune.add_argument(
        "--grid",
        type=floats,
        default=None,
        help="weighted methods: the weight step (ranx's 0.1); others: the values of the parameter, e.g. 20,60,100",
    )
    tune.add_argument("--seed", type=seed, default=0, help="seed of the folds and the randomization test")
    tune.add_argument("--preset", choices=["beir", "trec"], default="beir", help="conventions of the measure")
    tune.add_argument("--json", action="store_true", help="print the tuning as JSON")
    tune.add_argument(
        "--max-configurations",
        type=int,
        default=MAX_CONFIGURATIONS,
        metavar="N",
        help="the largest grid searched; a larger one is refused before any work, naming the coarser step that fits",
    )
    tune.add_argument("--no-progress", action="store_true", help="no progress bar of the configurations tried")
    p.add_argument(
        "--joiner-yaml",
        default=None,
        metavar="OUT.yaml",
        help="write the Haystack DocumentJoiner reproducing the (tuned) fusion, where a join mode can",
    )
    p.set_defaults(func=run, paths=paths)
    return p


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics fuse`` reads (the runs, the qrels) and writes (the fused run, the joiner YAML)."""
    from ..io.output import Paths

    return Paths(reads=(*map(named_file, args.runs), args.qrels), writes=(args.output, args.joiner_yaml))


def _table(tuning: Any) -> str:
    lines = [
        f"{tuning.method} (norm {tuning.norm or 'none'}), tuned on {tuning.metric} by {len(tuning.folds)}-fold "
        f"cross-validation over {plural(tuning.n_queries, 'query', 'queries')} "
        f"({plural(tuning.n_configurations, 'configuration')})",
        f"chosen on all queries: {json_text(tuning.params)}",
        "",
        f"| run | {tuning.metric} | fused − run | p (randomization, Holm) |",
        "|---|---:|---:|---:|",
        f"| fused (held-out) | {tuning.held_out:.4f} | | |",
    ]
    for name, score in tuning.inputs.items():
        c = tuning.comparisons.get(name)
        mark = " (best input)" if name == tuning.best_input else ""
        delta = f"{round(-c.delta, 4) + 0.0:+.4f}" if c else ""
        p = f"{c.p_randomization_holm:.4g}" if c else "untested"
        lines.append(f"| {markdown_cell(name)}{mark} | {score:.4f} | {delta} | {p} |")  # a run's name: untrusted
    return "\n".join(lines)


def _settings(args: argparse.Namespace) -> Any:
    from ..fusion.job import FusionSettings

    return FusionSettings(
        runs=tuple(args.runs),
        method=args.method,
        norm=args.norm,
        weights=None if args.weights is None else tuple(args.weights),
        rrf_k=args.rrf_k,
        params=tuple(args.param),
        depth=args.depth,
        qrels=args.qrels,
        names=None if args.names is None else tuple(args.names),
        output=args.output,
        tag=args.tag,
        optimize=args.optimize,
        metric=args.metric,
        folds=args.folds,
        grid=None if args.grid is None else tuple(args.grid),
        seed=args.seed,
        preset=args.preset,
        max_configurations=args.max_configurations,
        progress=False if args.no_progress else None,
        joiner_yaml=args.joiner_yaml,
    )


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics fuse``: the fusion (:func:`~haystack_irmetrics.fusion.job.run_fusion`, whose messages
    name this command's flags), then what it did printed."""
    from ..fusion.arguments import command_line_names
    from ..fusion.job import run_fusion

    with command_line_names():
        result = run_fusion(_settings(args))
    if result.tuning is not None:
        print(json_text(result.tuning.to_dict(), indent=2) if args.json else _table(result.tuning))
    if result.written is not None:
        print(f"wrote {args.output}: {plural(result.written, 'query', 'queries')}", file=sys.stderr)
    if result.joiner_refused is not None:
        raise result.joiner_refused
    if result.joiner is not None:
        print(f"wrote {args.joiner_yaml}: DocumentJoiner {result.joiner['join_mode']}", file=sys.stderr)
    return 0
