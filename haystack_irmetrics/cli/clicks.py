"""``irmetrics clicks fit|compare|estimate|measure|windows``: click logs from the command line.

    irmetrics clicks fit LOG --model MODEL [--test LOG2 | --test-fraction F --seed S] -o DIR [--min-impressions N]
    irmetrics clicks compare LOG --models ctr,pbm,dbn,... [--test LOG2 | --test-fraction F --seed S] [--json]
    irmetrics clicks estimate LOG --run RUN [-k K]      irmetrics clicks measure LOG --run RUN [-k K]
    irmetrics clicks windows LOG [--window 1d] [--measure clicks|ctr@1|mrr|abandonment] [--plot PATH]

``fit`` writes ``DIR/qrels.tsv`` (BEIR's qrels layout, as ``irmetrics judge``; float labels in [0, 1]) and
``DIR/model.json``; ``compare`` prints held-out log-likelihood and perplexity per model; ``estimate`` and
``measure`` a ranking's clicks or DCG from the log; ``windows`` a click measure per time window. Each verb
parses its options into the settings of one job of :mod:`haystack_irmetrics.clicks.jobs`, calls it and prints
its result. The models' names and what the help says of them are the click-model registry's
(:mod:`haystack_irmetrics.clicks.registry`, numpy only); the work is imported when a verb runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .args import (
    bootstrap_options,
    bootstrap_settings,
    click_log_options,
    click_log_settings,
    names,
    seed,
    show_defaults,
    writes_nothing,
)


def _held_out_options(p: argparse.ArgumentParser, default_fraction: float | None) -> None:
    h = p.add_argument_group("held-out sessions")
    g = h.add_mutually_exclusive_group()
    g.add_argument("--test", default=None, metavar="LOG2", help="a second click log to test on")
    g.add_argument(
        "--test-fraction",
        type=float,
        default=default_fraction,
        metavar="F",
        help="the share of LOG's sessions held out for the test",
    )
    h.add_argument("--seed", type=seed, default=0, help="seed of the held-out draw")
    from ..clicks.models import MAX_ITER, TOL

    h.add_argument(
        "--max-iter", type=int, default=MAX_ITER, help="EM steps at most; stopping there, short of --tol, is warned"
    )
    h.add_argument("--tol", type=float, default=TOL, help="EM stops when a step moves no parameter more")
    h.add_argument(
        "--plain-em",
        dest="accelerate",
        action="store_false",
        help="plain EM, one step at a time (default: SQUAREM-accelerated EM, which reaches the same maximum)",
    )


def _model_help() -> str:
    """``--model``'s help, from the registry: the other names of a model, and the models that give no qrels."""
    from ..clicks.registry import ENTRIES

    same = "; ".join(f"{e.name} is {'/'.join(e.aliases)}: {e.summary}" for e in ENTRIES if e.aliases)
    none = " and ".join(e.name for e in ENTRIES if not e.per_document)
    return f"{same} ({none} have no per-document parameter: no qrels)"


def _labels_help() -> str:
    """What ``fit``'s qrels label is, from the registry: the most models' label, then the others' by model."""
    from ..clicks.registry import ENTRIES

    kinds: dict[str, list[str]] = {}
    for e in ENTRIES:
        if e.per_document:
            kinds.setdefault(e.label, []).append(e.name)
    first, *rest = sorted(kinds.items(), key=lambda kind: -len(kind[1]))
    return ", ".join([f"the {first[0]}", *(f"or for {'/'.join(n)} {label}" for label, n in rest)])


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``clicks`` (with ``fit``, ``compare``, ``estimate``, ``measure`` and ``windows``) to the ``irmetrics``
    subcommands."""
    from ..clicks.counterfactual import propensity_sources
    from ..clicks.registry import MODELS

    p = sub.add_parser(
        "clicks",
        help="click logs: fit a click model (qrels from clicks) or compare several; estimate or measure a "
        "ranking from clicks offline; a click measure per time window (fit, compare, estimate, measure, windows)",
        description="Click logs (JSONL, CSV/TSV or Parquet; one row per session, position, document and click): "
        "click models as Chuklin, Markov & de Rijke (2015) define them (fit, compare), counterfactual estimates "
        "of a ranking (estimate, measure) and a click measure per time window (windows).",
    )
    verbs = p.add_subparsers(dest="clicks_command", required=True)
    fit = verbs.add_parser(
        "fit",
        help="fit a click model; write DIR/qrels.tsv and DIR/model.json",
        description="Fit a click model on LOG and write its click-derived qrels (a float label in [0, 1] per "
        f"query and document: {_labels_help()}) and "
        "DIR/model.json (parameters, training log-likelihood, held-out log-likelihood and perplexity).",
    )
    fit.add_argument("log", help="click log: .jsonl/.ndjson/.json, .csv/.tsv (optionally .gz) or .parquet")
    fit.add_argument("--model", required=True, choices=MODELS, help=_model_help())
    fit.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for qrels.tsv and model.json")
    fit.add_argument("--min-impressions", type=int, default=1, help="judge pairs shown at least this often")
    _held_out_options(fit, None)
    click_log_options(fit)
    fit.set_defaults(func=run_fit, paths=fit_paths)

    cmp = verbs.add_parser(
        "compare",
        help="held-out log-likelihood and perplexity of several click models",
        description="Fit each model on the same training sessions and score it on the same held-out ones "
        "(--test LOG2, or --test-fraction of LOG's sessions, 0.2 by default).",
    )
    cmp.add_argument("log", help="click log: .jsonl/.ndjson/.json, .csv/.tsv (optionally .gz) or .parquet")
    cmp.add_argument("--models", type=names, required=True, help="comma-separated: " + ",".join(MODELS))
    cmp.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    _held_out_options(cmp, 0.2)
    click_log_options(cmp)
    cmp.set_defaults(func=run_compare, paths=writes_nothing)  # it prints, writes no file
    est = verbs.add_parser(
        "estimate",
        help="IPS, SNIPS and DR estimates of a new ranking's expected clicks from a randomised ranker's log",
        description="Estimate the expected clicks per impression of a new ranking (a TREC run: its top k per "
        "query) from a log whose propensity column holds the logging policy's probability of each shown "
        "document at its position: IPS, SNIPS (self-normalised per rank) and doubly robust (a PBM fitted on "
        "the log), each with a percentile bootstrap interval over impressions.",
    )
    est.add_argument("log", help="click log with a propensity column: .jsonl/.ndjson/.json, .csv/.tsv or .parquet")
    est.add_argument("--run", required=True, help="the new ranking: a TREC run file (its top k per query)")
    est.add_argument("-k", type=int, default=10, help="ranks estimated")
    est.add_argument("--clip", type=float, default=None, help="largest inverse-propensity weight (none: unclipped)")
    bootstrap_options(est)
    click_log_options(est, propensity=True)
    est.set_defaults(func=run_estimate, paths=writes_nothing)
    ms = verbs.add_parser(
        "measure",
        help="a run's DCG (or clicks) at k from logged clicks, position bias removed by examination propensities",
        description="Estimate a run's utility from logged clicks (Joachims et al. 2017): per impression, each "
        "click counts 1/log2(1 + its rank in the run) within the run's top k (dcg) or 1 (clicks), divided by "
        "the probability that its logged position was examined (a PBM fitted on the log, relative to rank 1; "
        "or the log's propensity column). Prints IPS, clipped IPS and self-normalised IPS with bootstrap "
        "intervals over impressions.",
    )
    ms.add_argument("log", help="click log: .jsonl/.ndjson/.json, .csv/.tsv (optionally .gz) or .parquet")
    ms.add_argument("--run", required=True, help="the run: a TREC run file (its top k per query)")
    ms.add_argument("-k", type=int, default=10, help="the run's ranks counted")
    ms.add_argument("--measure", choices=["dcg", "clicks"], default="dcg", help="what a click at rank r counts")
    sources = propensity_sources()
    ms.add_argument(
        "--propensities", choices=sources, default=sources[0], help="examination: a fitted PBM or the log's column"
    )
    ms.add_argument("--clip", type=float, default=None, help="largest weight of the clipped estimate (default 10)")
    bootstrap_options(ms)
    click_log_options(ms, propensity=True)
    ms.set_defaults(func=run_measure, paths=writes_nothing)
    win = verbs.add_parser(
        "windows",
        help="a click measure per time window with its interval; windows that dropped significantly flagged",
        description="Split the impressions into time windows (by their earliest row's timestamp; windows "
        "aligned to the epoch, days at midnight UTC), print a measure per window (mean per impression with a "
        "bootstrap interval) and compare each window with the previous one (or --baseline) by Welch's t-test, "
        "Holm-adjusted across windows: a window worse than its reference at adjusted p < --alpha is flagged.",
    )
    win.add_argument("log", help="click log with a timestamp column: .jsonl/.ndjson/.json, .csv/.tsv or .parquet")
    win.add_argument("--window", default="1d", help="window width: a whole number and m, h, d or w (1d, 7d, 12h)")
    win.add_argument(
        "--measure", choices=["clicks", "ctr@1", "mrr", "abandonment"], default="clicks", help="per impression"
    )
    win.add_argument("--baseline", default=None, help="compare every window with the one starting then (a date)")
    win.add_argument("--timestamp-col", default="timestamp", help="column of the times (ISO 8601 or numbers)")
    win.add_argument("--unit", choices=["us", "ms", "s"], default="us", help="unit of numeric timestamps")
    win.add_argument("--alpha", type=float, default=0.05, help="flag at Holm-adjusted p below this")
    win.add_argument("--plot", default=None, metavar="PATH", help="write the trend plot (.png, .svg or .pdf)")
    bootstrap_options(win)
    click_log_options(win)
    win.set_defaults(func=run_windows, paths=windows_paths)
    show_defaults(p)  # the verbs' options
    return p


def fit_paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics clicks fit`` reads (the log, the test log) and writes (``FIT_FILES`` in ``-o``, a folder of
    its own)."""
    from ..clicks.jobs import FIT_FILES
    from ..io.output import OutputFolder, Paths

    out = Path(args.output)
    return Paths(
        reads=(args.log, args.test),
        writes=tuple(out / name for name in FIT_FILES),
        owned=(OutputFolder(out, "irmetrics clicks fit", FIT_FILES, ("qrels.tsv", "model.json")),),
    )


def windows_paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics clicks windows`` reads (the log) and writes (the ``--plot``)."""
    from ..io.output import Paths

    return Paths(reads=(args.log,), writes=(args.plot,))


def _held_out(args: argparse.Namespace) -> Any:
    from ..clicks.jobs import HeldOutSettings

    test = click_log_settings(args, args.test) if args.test else None
    return HeldOutSettings(test=test, test_fraction=args.test_fraction, seed=args.seed)


def _em(args: argparse.Namespace) -> Any:
    from ..clicks.models import EMSettings

    return EMSettings(max_iter=args.max_iter, tol=args.tol, accelerate=args.accelerate)


def run_fit(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks fit``."""
    from ..clicks.jobs import FitSettings, fit_log

    em = _em(args)  # checked before the log is read
    got = fit_log(
        FitSettings(
            click_log_settings(args, args.log), args.model, args.output, args.min_impressions, _held_out(args), em
        )
    )
    fit = got.fit
    line = f"{fit.model.name}: {fit.train.n_sessions} training sessions, log-likelihood {fit.train_log_likelihood:.4f}"
    if fit.test is not None:
        line += f"; {fit.test.sessions} test sessions, log-likelihood {fit.test.log_likelihood:.4f}, "
        line += f"perplexity {fit.test.perplexity:.4f}"
    print(line)
    print(f"wrote {got.qrels_path} ({got.judgments} judgments) and {got.model_path}")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks compare``."""
    from ..clicks.jobs import ClickCompareSettings, compare_log
    from ..io.tables import json_text

    got = compare_log(
        ClickCompareSettings(click_log_settings(args, args.log), tuple(args.models), _held_out(args), _em(args))
    )
    if args.json:
        print(json_text(got.to_dict(), indent=2))
    else:
        print(f"held out: {got.test_sessions} sessions\n")
        print(got.markdown())
    return 0


def run_estimate(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks estimate``."""
    from ..clicks.jobs import EstimateSettings, estimate_log

    log = click_log_settings(args, args.log, propensity=True)
    got = estimate_log(EstimateSettings(log, args.run, args.k, args.clip, bootstrap_settings(args)))
    return print_estimates(args, got)


def run_measure(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks measure``."""
    from ..clicks.jobs import MeasureSettings, measure_log, reads_propensities

    log = click_log_settings(args, args.log, propensity=reads_propensities(args.propensities))
    options = {"measure": args.measure, "propensities": args.propensities, "clip": args.clip}
    got = measure_log(MeasureSettings(log, args.run, args.k, bootstrap=bootstrap_settings(args), **options))
    return print_estimates(args, got)


def print_estimates(args: argparse.Namespace, got: Any) -> int:
    """An :class:`~haystack_irmetrics.clicks.jobs.EstimateResult` as JSON (``--json``) or a markdown table."""
    from ..io.tables import json_text, markdown_row, number_cell

    if args.json:
        print(json_text(got.to_dict(), indent=2))
        return 0
    print(f"{got.title}, {got.impressions} impressions\n")
    print(markdown_row(["estimator", "value", "ci_low", "ci_high"]))
    print("|---|---|---|---|")
    for name, e in got.estimates.items():
        print(markdown_row([name, number_cell(e.value), number_cell(e.ci_low), number_cell(e.ci_high)]))
    return 0


def run_windows(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks windows``."""
    from ..clicks.jobs import WindowsSettings, windows_log
    from ..io.tables import json_text, markdown_row, number_cell
    from ..stats.compare import format_p

    options = {"width": args.window, "measure": args.measure, "baseline": args.baseline, "unit": args.unit}
    settings = WindowsSettings(
        click_log_settings(args, args.log),
        alpha=args.alpha,
        bootstrap=bootstrap_settings(args),
        plot=args.plot,
        **options,
    )
    got = windows_log(settings)
    if args.json:
        print(json_text(got.to_dict(), indent=2))
        return 0
    print(f"{got.measure} per impression, {got.width} windows\n")
    print(markdown_row(["window", "impressions", "mean", "ci_low", "ci_high", "delta", "p (Holm)", "flagged"]))
    print("|---|---|---|---|---|---|---|---|")
    for r in got.windows:
        delta = "" if r.delta is None else f"{r.delta:+.4f}"
        p = "" if r.p_holm is None else format_p(r.p_holm)
        cells = [r.start, str(r.size), number_cell(r.mean), number_cell(r.ci_low), number_cell(r.ci_high), delta, p]
        print(markdown_row([*cells, "drop" if r.flagged else ""]))
    return 0


__all__ = [
    "add_subcommand",
    "fit_paths",
    "print_estimates",
    "run_compare",
    "run_estimate",
    "run_fit",
    "run_measure",
    "run_windows",
    "windows_paths",
]
