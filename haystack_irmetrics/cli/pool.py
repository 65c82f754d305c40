"""``irmetrics pool``: which pairs to judge for a budget, and how the strategies compare.

    irmetrics pool RUN... --budget N --strategy S [--qrels EXISTING] [--depth K] [--seed S] [--param NAME=VALUE]
                   -o pairs.tsv
    irmetrics pool simulate RUN... --qrels FULL --budgets 500,1000,2000 [--strategies depth,mtf,maxmean,rbp]
                   [--measure M] [--seed S] [--repeats R] [--json]
    irmetrics pool estimate RUN... --sample pairs.tsv --qrels JUDGED [--existing EXISTING] [--depth K]
                   [--param edges=...] [--estimator statAP|xinfAP] [--json]

The strategies and their parameters come from :data:`haystack_irmetrics.pooling.registry.STRATEGIES`.
Registered by :func:`add_subcommand`, which imports the standard library and the registry's names only; the
work is imported when it runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..io.tables import json_text, markdown_cell, plural
from ..pooling.registry import STRATEGIES
from .args import Parser, ints, names, seed

# The registry's names and parameters (importing it loads numpy and the core, nothing heavier).
_PARAMS = "; ".join(
    f"{p.name} ({spec.name}: {p.doc}, {p.range}, default {','.join(map(str, p.default)) if isinstance(p.default, tuple) else p.default})"
    for spec in STRATEGIES.values()
    for p in spec.params
)


def _param(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, e.g. p=0.9 or edges=10,30,100, got {text!r}")
    return name.strip(), value.strip()


class _PoolParser(Parser):
    """``irmetrics pool``'s parser: ``simulate`` and ``estimate`` as a first word go to their own parsers, any
    other first word is a run file of ``irmetrics pool`` itself."""

    actions: dict[str, argparse.ArgumentParser]

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        args = list(sys.argv[1:] if args is None else args)
        if args and args[0] in getattr(self, "actions", {}):
            return self.actions[args[0]].parse_known_args(args[1:], namespace)
        return super().parse_known_args(args, namespace)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files")
    p.add_argument("--depth", type=int, default=None, help="each run's top K documents per query form the pool")


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``pool`` (with ``simulate`` and ``estimate``) to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "pool",
        help="which pairs to judge for a budget (depth, mtf, maxmean, rbp, stratified); simulate; estimate",
        description="List the (query, document) pairs to judge for a budget, in the order to judge them, by a "
        "pooling strategy of the literature; pairs --qrels already judges are never listed. For the adaptive "
        "strategies (mtf, maxmean) the file is the first batch: what they ask before any new label. "
        "'irmetrics pool simulate --help': replay strategies against complete qrels. "
        "'irmetrics pool estimate --help': statAP/xinfAP from a stratified sample.",
    )
    p.__class__ = _PoolParser
    _common(p)
    p.add_argument("--budget", type=int, default=None, help="number of pairs to list (not with --sample-queries)")
    p.add_argument("--strategy", choices=list(STRATEGIES), default=None, help="pooling strategy (default depth)")
    p.add_argument(
        "--sample-queries",
        type=int,
        default=None,
        metavar="N",
        help="list the whole pool (every run's top --depth) of N queries drawn uniformly (--seed): a design for "
        "estimation (judge --ppi), each pair's probability its query's inclusion probability; no --budget",
    )
    p.add_argument("--qrels", default=None, metavar="EXISTING", help="judgments there are already (never listed)")
    p.add_argument(
        "--seed",
        type=seed,
        default=0,
        help="seed of the draw that breaks ties between runs (the same pairs for any order the runs are listed "
        "in) and of a sample (default 0)",
    )
    p.add_argument(
        "--param",
        type=_param,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"a parameter of the strategy: {_PARAMS}",
    )
    p.add_argument("-o", "--output", required=True, help="write the pairs here (query_id, doc_id, probability)")
    p.set_defaults(func=run, paths=paths)

    sim = Parser(
        prog="irmetrics pool simulate",
        description="Replay pooling strategies against complete qrels (a pair is judged when the strategy asks "
        "for it): per budget, the pairs judged, the relevant ones found, and Kendall's tau and tau_AP between "
        "the systems' order by the measure under those judgments (unjudged = not relevant) and under all.",
    )
    _common(sim)
    sim.add_argument("--qrels", required=True, metavar="FULL", help="the complete judgments")
    sim.add_argument("--budgets", type=ints, required=True, help="numbers of judgments, e.g. 500,1000,2000")
    sim.add_argument(
        "--strategies",
        type=names,
        default=None,
        help="the strategies to replay (default: every one that orders the pool: depth,mtf,maxmean,rbp)",
    )
    sim.add_argument("--measure", default="NDCG@10", help="the measure that orders the systems (default NDCG@10)")
    sim.add_argument(
        "--seed", type=seed, default=0, help="seed of the ties between runs and of a stratified sample (default 0)"
    )
    sim.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="R",
        help="replay each strategy under the seeds --seed to --seed + R - 1: each figure's mean and [min, max] "
        "(default 1)",
    )
    sim.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    sim.add_argument("--no-progress", dest="progress", action="store_false", default=None, help="no progress bar")
    sim.set_defaults(func=run_simulate, paths=simulate_paths)

    est = Parser(
        prog="irmetrics pool estimate",
        description="Each run's AP estimated from a stratified sample's judgments (statAP or xinfAP). Give the "
        "runs, --depth, --param edges=... and --existing the sample was drawn with: its strata are rebuilt from "
        "them and checked against the sample's probabilities.",
    )
    _common(est)
    est.add_argument("--sample", required=True, help="the pairs file of 'irmetrics pool --strategy stratified'")
    est.add_argument("--qrels", required=True, metavar="JUDGED", help="the sample's judgments")
    est.add_argument("--existing", default=None, help="the judgments there were before the sample (its --qrels)")
    est.add_argument(
        "--param", type=_param, action="append", default=[], metavar="NAME=VALUE", help="edges=... as sampled"
    )
    est.add_argument("--estimator", choices=["statAP", "xinfAP"], default="statAP", help="default statAP")
    est.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    est.set_defaults(func=run_estimate, paths=estimate_paths)
    p.actions = {"simulate": sim, "estimate": est}
    p.words = tuple(p.actions)
    return p


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics pool`` reads (the runs, the qrels) and writes (the pairs)."""
    from ..io.output import Paths

    return Paths(reads=(*args.runs, args.qrels), writes=(args.output,))


def simulate_paths(args: argparse.Namespace) -> Any:
    from ..io.output import Paths

    return Paths(reads=(*args.runs, args.qrels))


def estimate_paths(args: argparse.Namespace) -> Any:
    from ..io.output import Paths

    return Paths(reads=(*args.runs, args.sample, args.qrels, args.existing))


def _params(strategy: str, given: list[tuple[str, str]]) -> dict[str, Any]:
    from ..pooling.registry import strategy_spec

    spec = strategy_spec(strategy)
    known = {p.name: p for p in spec.params}
    out = {}
    for name, text in given:
        if name not in known:
            from ..errors import PoolingError

            takes = ", ".join(known) or "no parameter"
            raise PoolingError(f"strategy {strategy} has no parameter {name!r} (it takes {takes})")
        out[name] = known[name].parse(text)
    return out


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics pool``: write the pairs to judge."""
    from ..io.trec import read_qrels
    from ..pooling import pool, write_pairs

    existing = read_qrels(args.qrels).data if args.qrels else None
    if args.sample_queries is not None:
        return _sample_queries(args, existing)
    if args.budget is None:
        from ..errors import InvalidArgumentError

        raise InvalidArgumentError("irmetrics pool needs --budget (the pairs to list), or --sample-queries N")
    args.strategy = args.strategy or "depth"
    pairs = pool(
        args.runs,
        args.budget,
        args.strategy,
        judged=existing,
        depth=args.depth,
        seed=args.seed,
        **_params(args.strategy, args.param),
    )
    n = write_pairs(pairs, args.output)
    queries = len({p.query for p in pairs})
    print(
        f"wrote {args.output}: {plural(n, 'pair')} of {plural(queries, 'query', 'queries')} ({args.strategy})",
        file=sys.stderr,
    )
    return 0


def _sample_queries(args: argparse.Namespace, existing: Any) -> int:
    """``--sample-queries N``: the whole pool of N queries drawn uniformly, written as a pairs file."""
    from ..errors import InvalidArgumentError
    from ..pooling import sample_queries, write_pairs

    if args.budget is not None or args.strategy is not None or args.param:
        raise InvalidArgumentError("--sample-queries lists whole pools: it takes no --budget, --strategy or --param")
    pairs = sample_queries(args.runs, args.sample_queries, depth=args.depth, seed=args.seed, judged=existing)
    n = write_pairs(pairs, args.output)
    queries = len({p.query for p in pairs})
    print(
        f"wrote {args.output}: {plural(n, 'pair')} of {plural(queries, 'query', 'queries')} "
        f"(the whole top {args.depth or 'of every run'} of {args.sample_queries} drawn, seed {args.seed})",
        file=sys.stderr,
    )
    return 0


def _figure(row: dict[str, Any], key: str, digits: int) -> str:
    """A figure of a row, and its ``[min, max]`` over the seeds when there is one (``n/a``: undefined)."""
    value, span = row[key], row.get(f"{key}_range")
    if value is None:
        return "n/a"
    if span is None:
        return f"{value:.{digits}f}"
    low, high = (f"{v:.{digits}f}" if digits else str(v) for v in span)
    return f"{value:.{max(digits, 1)}f} [{low}, {high}]"


def _markdown(out: dict[str, Any]) -> str:
    seeds = out.get("seeds")
    lines = [f"relevant documents in the complete judgments: {out['relevant_total']}"]
    if seeds:
        lines.append(f"each figure: the mean [min, max] over {len(seeds)} seeds, {seeds[0]} to {seeds[-1]}")
    lines.append("")
    lines += ["| strategy | budget | judged | relevant found | tau | tau_AP |", "|---|---:|---:|---:|---:|---:|"]
    for name, rows in out["strategies"].items():
        for budget, row in rows.items():
            cells = [_figure(row, "relevant_found", 0), _figure(row, "tau", 4), _figure(row, "tau_ap", 4)]
            lines.append(f"| {name} | {budget} | {row['judged']} | {' | '.join(cells)} |")
    return "\n".join(lines)


def _seeds(first: int, repeats: Any) -> int | range:
    """``--seed`` alone (one replay, one seed's figures) or, with ``--repeats`` above 1, its seeds."""
    from ..checks import whole
    from ..stats.significance import seed_value

    if whole(repeats, "--repeats", least=1) == 1:
        return first
    return range(first, seed_value(first + repeats - 1, "--seed + --repeats - 1") + 1)


def run_simulate(args: argparse.Namespace) -> int:
    """Run ``irmetrics pool simulate``: print each strategy's judged, found, tau and tau_AP per budget."""
    from ..io.trec import read_qrels
    from ..pooling import DEFAULT_STRATEGIES, simulate

    out = simulate(
        args.runs,
        read_qrels(args.qrels).data,
        args.budgets,
        DEFAULT_STRATEGIES if args.strategies is None else args.strategies,
        measure=args.measure,
        depth=args.depth,
        seed=_seeds(args.seed, args.repeats),
        progress=args.progress,
    )
    print(json_text(out, indent=2) if args.json else _markdown(out))
    return 0


def run_estimate(args: argparse.Namespace) -> int:
    """Run ``irmetrics pool estimate``: print each run's estimated MAP."""
    from ..io.trec import read_qrels
    from ..pooling import design_from_sample, estimate, pool_runs, read_pairs

    params = _params("stratified", args.param)
    params.pop("decay", None)  # how the sample was allocated; its probabilities are in the file
    existing = read_qrels(args.existing).data if args.existing else None
    pooled = pool_runs(args.runs, depth=args.depth)
    design = design_from_sample(pooled, read_pairs(args.sample), judged=existing, **params)
    judged = {q: dict(docs) for q, docs in read_qrels(args.qrels).data.items()}
    for q, docs in (existing or {}).items():
        for d, label in docs.items():
            judged.setdefault(q, {}).setdefault(d, label)
    result = estimate(args.runs, design, judged, estimator=args.estimator)
    if args.json:
        payload = {name: {"mean": e.mean, "per_query": e.per_query} for name, e in result.items()}
        print(json_text({"estimator": args.estimator, "runs": payload}, indent=2))
    else:
        lines = [f"| run | {args.estimator} (mean over {len(design.strata)} queries) |", "|---|---:|"]
        lines += [f"| {markdown_cell(name)} | {e.mean:.4f} |" for name, e in result.items()]  # a run's name
        print("\n".join(lines))
    return 0
