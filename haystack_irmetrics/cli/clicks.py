"""``irmetrics clicks fit|compare|estimate|measure|windows``: click logs from the command line.

    irmetrics clicks fit LOG --model {ctr,gctr,rctr,dctr,pbm,cascade,dcm,ubm,dbn,sdbn}
                         [--test LOG2 | --test-fraction F --seed S] -o DIR [--min-impressions N]
    irmetrics clicks compare LOG --models ctr,pbm,dbn,... [--test LOG2 | --test-fraction F --seed S] [--json]
    irmetrics clicks estimate LOG --run RUN [-k K]      irmetrics clicks measure LOG --run RUN [-k K]
    irmetrics clicks windows LOG [--window 1d] [--measure clicks|ctr@1|mrr|abandonment] [--plot PATH]

``fit`` writes ``DIR/qrels.tsv`` (TREC qrels, float labels in [0, 1]) and ``DIR/model.json``; ``compare``
prints held-out log-likelihood and perplexity per model; ``estimate`` and ``measure`` a ranking's clicks or
DCG from the log; ``windows`` a click measure per time window. Registered by :func:`add_subcommand`, which only imports the standard library: the work
(:mod:`haystack_irmetrics.clicks`) is imported when it runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .args import names, seed, show_defaults, writes_nothing

MODEL_NAMES = ("ctr", "gctr", "rctr", "dctr", "pbm", "cascade", "dcm", "ubm", "dbn", "sdbn")


def log_options(p: argparse.ArgumentParser, *, team: bool = False, propensity: bool = False) -> None:
    c = p.add_argument_group("log columns")
    c.add_argument(
        "--format", dest="fmt", choices=["jsonl", "csv", "tsv", "parquet"], default=None, help="default: file name"
    )
    c.add_argument("--query-col", default="query_id", help="column of the query ids")
    c.add_argument("--doc-col", default="doc_id", help="column of the document ids")
    c.add_argument("--session-col", default="session", help="column of the session (impression) ids")
    c.add_argument("--position-col", default="position", help="column of the positions shown")
    c.add_argument("--click-col", default="click", help="column of the clicks (0/1, true/false, yes/no)")
    if team:
        c.add_argument("--team-col", default="team", help="column of the interleaving team (a or b)")
        c.add_argument("--segment", default=None, metavar="COL", help="column to break the outcome down by")
    if propensity:
        c.add_argument("--propensity-col", default="propensity", help="column of the logging propensities")
    c.add_argument("--position-base", type=int, default=1, help="first position in the log (1, or 0)")
    c.add_argument("--max-rank", type=int, default=None, help="keep each session's first N positions")
    c.add_argument(
        "--on-error",
        choices=["raise", "skip"],
        default="raise",
        help="malformed rows and sessions: stop at the first (raise) or skip, count and list them",
    )


def output_options(p: argparse.ArgumentParser) -> None:
    """``--json`` and the bootstrap's ``--confidence``, ``--n-resamples`` and ``--seed`` (estimates, measures,
    windows and ``irmetrics interleave``)."""
    p.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    p.add_argument("--confidence", type=float, default=0.95, help="bootstrap interval level")
    p.add_argument("--n-resamples", type=int, default=10_000, help="bootstrap resamples")
    p.add_argument("--seed", type=seed, default=0, help="seed of the resamples")


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
    # the defaults are clicks.models.MAX_ITER and TOL, written here: the parser is built without the models
    h.add_argument(
        "--max-iter", type=int, default=5000, help="EM steps at most; stopping there, short of --tol, is warned"
    )
    h.add_argument("--tol", type=float, default=1e-6, help="EM stops when a step moves no parameter more")
    h.add_argument(
        "--plain-em",
        dest="accelerate",
        action="store_false",
        help="plain EM, one step at a time (default: SQUAREM-accelerated EM, which reaches the same maximum)",
    )


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``clicks`` (with ``fit`` and ``compare``) to the ``irmetrics`` subcommands."""
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
        "query and document: the attractiveness, or for dbn/sdbn attractiveness x satisfaction) and "
        "DIR/model.json (parameters, training log-likelihood, held-out log-likelihood and perplexity).",
    )
    fit.add_argument("log", help="click log: .jsonl/.ndjson/.json, .csv/.tsv (optionally .gz) or .parquet")
    fit.add_argument(
        "--model",
        required=True,
        choices=MODEL_NAMES,
        help="ctr is dctr: a click rate per document (gctr and rctr have no per-document parameter: no qrels)",
    )
    fit.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for qrels.tsv and model.json")
    fit.add_argument("--min-impressions", type=int, default=1, help="judge pairs shown at least this often")
    _held_out_options(fit, None)
    log_options(fit)
    fit.set_defaults(func=run_fit, paths=fit_paths)

    cmp = verbs.add_parser(
        "compare",
        help="held-out log-likelihood and perplexity of several click models",
        description="Fit each model on the same training sessions and score it on the same held-out ones "
        "(--test LOG2, or --test-fraction of LOG's sessions, 0.2 by default).",
    )
    cmp.add_argument("log", help="click log: .jsonl/.ndjson/.json, .csv/.tsv (optionally .gz) or .parquet")
    cmp.add_argument("--models", type=names, required=True, help="comma-separated: " + ",".join(MODEL_NAMES))
    cmp.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    _held_out_options(cmp, 0.2)
    log_options(cmp)
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
    output_options(est)
    log_options(est, propensity=True)
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
    ms.add_argument(
        "--propensities", choices=["pbm", "log"], default="pbm", help="examination: a fitted PBM or the log's column"
    )
    ms.add_argument("--clip", type=float, default=None, help="largest weight of the clipped estimate (default 10)")
    output_options(ms)
    log_options(ms, propensity=True)
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
    output_options(win)
    log_options(win)
    win.set_defaults(func=run_windows, paths=windows_paths)
    show_defaults(p)  # the verbs' options
    return p


#: The files ``irmetrics clicks fit`` writes in its output folder (the skipped rows and sessions only when some are).
FIT_FILES = ("qrels.tsv", "model.json", "skipped_rows.csv", "skipped_sessions.csv")


def fit_paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics clicks fit`` reads (the log, the test log) and writes (:data:`FIT_FILES` in ``-o``)."""
    from ..io.output import Paths

    return Paths(reads=(args.log, args.test), writes=tuple(Path(args.output) / name for name in FIT_FILES))


def windows_paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics clicks windows`` reads (the log) and writes (the ``--plot``)."""
    from ..io.output import Paths

    return Paths(reads=(args.log,), writes=(args.plot,))


def read_log(
    args: argparse.Namespace, path: str, *, team: bool = False, propensity: bool = False, segment: bool = False
) -> Any:
    from ..clicks import ClickLog
    from ..feedback import detect_format

    columns: dict[str, str | None] = {
        "query": args.query_col,
        "doc": args.doc_col,
        "session": args.session_col,
        "position": args.position_col,
        "click": args.click_col,
    }
    if team:
        columns["team"] = args.team_col
    if team or segment:
        columns["segment"] = args.segment
    if propensity:
        columns["propensity"] = args.propensity_col
    if getattr(args, "timestamp_col", None):
        columns["timestamp"] = args.timestamp_col
    fmt = args.fmt
    if fmt is None and Path(path).is_file():
        fmt = detect_format(path, option="--format")
    log = ClickLog(
        path,
        columns=columns,
        fmt=fmt,
        on_error=args.on_error,
        position_base=args.position_base,
        max_rank=args.max_rank,
    )
    sessions = log.sessions()
    rows, bad = log.skipped.height, log.skipped_sessions
    if rows or bad.height:
        listed = "; ".join(f"{s!r}: {reason}" for s, _, reason in bad.head(5).rows())
        more = f" (first: {listed})" if listed else ""
        print(
            f"irmetrics: warning: {path}: skipped {rows} malformed rows and {bad.height} sessions{more}",
            file=sys.stderr,
        )
    return log, sessions


def _split(args: argparse.Namespace) -> dict[str, Any]:
    test = read_log(args, args.test)[1] if args.test else None
    return {"test": test, "test_fraction": None if test is not None else args.test_fraction, "seed": args.seed}


def run_fit(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks fit``."""
    from ..clicks import fit_model, make_model
    from ..clicks.models import no_qrels_message
    from ..errors import ClickModelError
    from ..io.tables import write_csv

    model = make_model(args.model, max_iter=args.max_iter, tol=args.tol, accelerate=args.accelerate)
    if not model.per_document:  # before the log is read: it would write qrels judging every document alike
        raise ClickModelError(no_qrels_message(model.name))
    log, sessions = read_log(args, args.log)
    fit = fit_model(model, sessions, **_split(args))
    qrels_path, model_path = fit.write(args.output, min_impressions=args.min_impressions)
    out = Path(args.output)
    # the package's one CSV writer: the log's text may hold formulas (=HYPERLINK(...)) a spreadsheet would run
    if log.skipped.height:
        write_csv(out / "skipped_rows.csv", log.skipped.columns, log.skipped.iter_rows())
    if log.skipped_sessions.height:
        bad = log.skipped_sessions
        rows = (
            [" ".join(map(str, v)) if name == "rows" else v for name, v in zip(bad.columns, row, strict=True)]
            for row in bad.iter_rows()
        )
        write_csv(out / "skipped_sessions.csv", bad.columns, rows)
    judged = sum(len(d) for d in fit.judgments(args.min_impressions).values())
    line = f"{fit.model.name}: {fit.train.n_sessions} training sessions, log-likelihood {fit.train_log_likelihood:.4f}"
    if fit.test is not None:
        line += f"; {fit.test.sessions} test sessions, log-likelihood {fit.test.log_likelihood:.4f}, "
        line += f"perplexity {fit.test.perplexity:.4f}"
    print(line)
    print(f"wrote {qrels_path} ({judged} judgments) and {model_path}")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks compare``."""
    from ..clicks import compare_models, comparison_json, comparison_table
    from ..io.tables import json_text

    _, sessions = read_log(args, args.log)
    options = {"max_iter": args.max_iter, "tol": args.tol, "accelerate": args.accelerate}
    scores = compare_models(args.models, sessions, **options, **_split(args))
    if args.json:
        print(json_text(comparison_json(scores), indent=2))
    else:
        n = next(iter(scores.values())).sessions
        print(f"held out: {n} sessions\n")
        print(comparison_table(scores))
    return 0


def run_measure(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks measure``."""
    from ..clicks.counterfactual import ips_measure
    from ..io.trec import read_trec_run, trec_order

    _, sessions = read_log(args, args.log, propensity=args.propensities == "log")
    run = read_trec_run(args.run, fast=False).data
    ranking = {q: trec_order(docs)[: args.k] for q, docs in run.items()}
    options = {"confidence": args.confidence, "n_resamples": args.n_resamples, "seed": args.seed}
    got = ips_measure(
        sessions, ranking, k=args.k, measure=args.measure, propensities=args.propensities, clip=args.clip, **options
    )
    return _print_estimates(args, got, sessions.n_sessions, f"{args.measure}@{args.k} of {args.run} from clicks")


def _print_estimates(args: argparse.Namespace, got: dict[str, Any], impressions: int, title: str) -> int:
    from ..io.tables import json_text, markdown_row, number_cell

    if args.json:
        print(json_text({**{k: v.to_dict() for k, v in got.items()}, "impressions": impressions}, indent=2))
        return 0
    print(f"{title}, {impressions} impressions\n")
    print(markdown_row(["estimator", "value", "ci_low", "ci_high"]))
    print("|---|---|---|---|")
    for name, e in got.items():
        print(markdown_row([name, number_cell(e.value), number_cell(e.ci_low), number_cell(e.ci_high)]))
    return 0


def run_windows(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks windows``."""
    from ..clicks.windows import windows
    from ..io.tables import json_text, markdown_row, number_cell
    from ..plots.windows import plot_windows

    _, sessions = read_log(args, args.log)
    rows = windows(
        sessions,
        width=args.window,
        measure=args.measure,
        baseline=args.baseline,
        unit=args.unit,
        alpha=args.alpha,
        confidence=args.confidence,
        n_resamples=args.n_resamples,
        seed=args.seed,
    )
    if args.plot:
        plot_windows(rows, args.plot, measure=args.measure)
    if args.json:
        print(json_text({"measure": args.measure, "windows": [r.to_dict() for r in rows]}, indent=2))
        return 0
    from ..stats.compare import format_p

    print(f"{args.measure} per impression, {args.window} windows\n")
    print(markdown_row(["window", "impressions", "mean", "ci_low", "ci_high", "delta", "p (Holm)", "flagged"]))
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        delta = "" if r.delta is None else f"{r.delta:+.4f}"
        p = "" if r.p_holm is None else format_p(r.p_holm)
        cells = [r.start, str(r.size), number_cell(r.mean), number_cell(r.ci_low), number_cell(r.ci_high), delta, p]
        print(markdown_row([*cells, "drop" if r.flagged else ""]))
    return 0


def run_estimate(args: argparse.Namespace) -> int:
    """Run ``irmetrics clicks estimate``."""
    from ..clicks.counterfactual import estimate_clicks
    from ..io.trec import read_trec_run, trec_order

    _, sessions = read_log(args, args.log, propensity=True)
    run = read_trec_run(args.run, fast=False).data
    ranking = {q: trec_order(docs)[: args.k] for q, docs in run.items()}
    options = {"confidence": args.confidence, "n_resamples": args.n_resamples, "seed": args.seed}
    got = estimate_clicks(sessions, ranking, k=args.k, clip=args.clip, **options)
    title = f"expected clicks per impression of {args.run} (top {args.k})"
    return _print_estimates(args, got, sessions.n_sessions, title)


__all__ = [
    "FIT_FILES",
    "MODEL_NAMES",
    "add_subcommand",
    "fit_paths",
    "log_options",
    "output_options",
    "read_log",
    "run_compare",
    "run_estimate",
    "run_fit",
    "run_measure",
    "windows_paths",
]
