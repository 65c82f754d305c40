"""``irmetrics fuse``: fuse TREC runs into one with ranx's methods; tune the fusion on judgments by
cross-validation (``--optimize``); write the Haystack ``DocumentJoiner`` that reproduces it (``--joiner-yaml``).

Imports only the standard library until it runs (then :mod:`haystack_irmetrics.fusion`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..fusion.methods import METHODS, PARAMETER_RANGES, PARAMETERS, TRAINED
from ..fusion.norms import NORMALIZATIONS
from ..fusion.optimize import MAX_CONFIGURATIONS
from ..io.tables import json_text, markdown_cell
from .args import floats, named_file, names, seed

# Names only: importing them loads numpy and the core, nothing heavier (the parser stays fast).
_METHODS = list(METHODS)
_NORMS = (*NORMALIZATIONS, "none")
# The parameters as the command line gives them (RRF's k has its own flag).
_PARAMS = [(key, method) for method, wanted in PARAMETERS.items() for key in wanted if method != "rrf"]
_REQUIRED = ", ".join(
    f"{m} --param {k}=..." for m, wanted in PARAMETERS.items() for k, v in wanted.items() if v is None
)


def _number(text: str) -> int | float:
    """A number as typed (a whole one stays an int); its range is the method's to check."""
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    return int(number) if number.is_integer() else number


def _param(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        if not sep:
            raise ValueError
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=NUMBER, e.g. gamma=0.5, got {text!r}") from None
    return name.strip(), int(number) if number.is_integer() and name.strip() in ("n_segments", "w") else number


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
    p.add_argument("--rrf-k", type=_number, default=None, help="RRF's constant k, a number > 0 (default 60)")
    p.add_argument("--depth", type=int, default=None, help="fuse each run's top D documents per query")
    p.add_argument(
        "--param",
        type=_param,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another parameter of the method: "
        + ", ".join(f"{key} ({method}: {PARAMETER_RANGES[key][0]})" for key, method in _PARAMS),
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
        f"cross-validation over {tuning.n_queries} queries ({tuning.n_configurations} configurations)",
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


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics fuse``: write the fused run, print the tuning, write the joiner; fusion's messages name
    this command's flags."""
    from ..fusion.arguments import command_line_names

    with command_line_names():
        return _fuse(args)


def _fuse(args: argparse.Namespace) -> int:
    from ..errors import FusionError
    from ..fusion import fuse, joiner_parameters, joiner_yaml, optimize_fusion, pack_runs
    from ..fusion.api import check_method, check_trained
    from ..fusion.optimize import grid_from_values, search_grid
    from ..io.output import write_text
    from ..io.run_names import split_runs
    from ..io.trec import read_qrels, write_trec_run

    if len(args.runs) < 2:
        raise FusionError(f"fuse needs two runs or more, got {len(args.runs)}: {args.runs}")
    if not (args.output or args.optimize or args.joiner_yaml):
        raise FusionError("nothing to do: give -o FUSED.trec, --optimize or --joiner-yaml OUT.yaml")
    if args.optimize and not args.qrels:
        raise FusionError("--optimize tunes on judgments: give --qrels")
    norm = None if args.norm == "none" else args.norm
    params = dict(args.param)
    if args.rrf_k is not None:
        if args.method != "rrf":
            raise FusionError(f"--rrf-k is RRF's constant; {args.method} does not take it")
        params["k"] = args.rrf_k
    # Every argument checked before any file is read.
    if args.optimize:
        search = grid_from_values(args.method, args.grid) if args.grid else {}
        grid = search_grid(
            args.method, len(args.runs), params=params, max_configurations=args.max_configurations, **search
        )
    else:
        check_method(args.method, len(args.runs), args.weights, params)
        check_trained(args.method, args.qrels)
    qrels = read_qrels(args.qrels) if args.qrels else None
    packed = pack_runs(*split_runs(args.runs, args.names), depth=args.depth)
    weights = args.weights
    if args.optimize:
        tuning = optimize_fusion(
            packed,
            qrels,
            method=args.method,
            norm=norm,
            metric=args.metric,
            folds=args.folds,
            grid=grid,
            seed=args.seed,
            preset=args.preset,
            params=params,
            max_configurations=args.max_configurations,
            progress=False if args.no_progress else None,
        )
        chosen = dict(tuning.params)
        weights = chosen.pop("weights", weights)
        params = chosen
        print(json_text(tuning.to_dict(), indent=2) if args.json else _table(tuning))
    if args.output:
        fused = fuse(packed, args.method, norm=norm, weights=weights, qrels=qrels, params=params)
        write_trec_run(fused, Path(args.output), tag=args.tag)
        print(f"wrote {args.output}: {len(fused.qids)} queries", file=sys.stderr)
    if args.joiner_yaml:
        found = joiner_parameters(args.method, norm=norm, weights=weights, params=params, n_runs=len(packed.runs))
        write_text(Path(args.joiner_yaml), joiner_yaml(found))
        print(f"wrote {args.joiner_yaml}: DocumentJoiner {found['join_mode']}", file=sys.stderr)
    return 0
