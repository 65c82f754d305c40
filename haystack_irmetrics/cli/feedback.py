"""``irmetrics feedback``: score a feedback log (and runs or pipelines against it) from the command line.

    irmetrics feedback LOG [--run [NAME=]RUN ...] [--pipeline [NAME=]YAML ...] [--corpus JSONL]
                       [--strategy mean|majority|wilson] [--min-votes N] [--dedup none|last|first]
                       [--threshold 0.5] [--segment COL] [--report DIR] [...]

Prints the markdown report (or JSON with ``--json``); ``--report DIR`` also writes report.md,
report.json, scores.csv, comparisons.csv, per_query.csv, skipped_rows.csv, qrels.txt, plots/*.png and report.html
(the page of ``irmetrics report``: the logged rankings and the new systems, query by query).
Registered by :func:`add_subcommand`, which only imports the standard library: the work
(:mod:`haystack_irmetrics.feedback`) is imported when it runs.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from ..io.tables import json_text
from .args import ints, named_file, names, seed


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``feedback`` to the ``irmetrics`` subcommands."""
    p = sub.add_parser(
        "feedback",
        help="score user feedback logs: votes -> qrels -> metrics, with significance and reports",
        description="Aggregate a feedback log (JSONL, CSV/TSV or Parquet; one row per query, shown document, "
        "position and vote) into judgments, score the rankings users saw and any runs or pipelines against "
        "them (full lists, condensed lists, Judged@k), and compare each with a baseline (paired randomization "
        "and t-tests, Holm-adjusted; bootstrap intervals).",
    )
    p.add_argument("log", help="feedback log: .jsonl/.ndjson/.json, .csv/.tsv (optionally .gz) or .parquet")
    p.add_argument(
        "--run", action="append", default=[], metavar="[NAME=]RUN", help="a TREC run file to score (repeatable)"
    )
    p.add_argument(
        "--pipeline",
        action="append",
        default=[],
        metavar="[NAME=]YAML",
        help="a Haystack pipeline YAML to replay over the judged queries (repeatable)",
    )
    p.add_argument(
        "--corpus",
        default=None,
        help="JSONL corpus ({'_id','title','text'}) written into the pipelines' in-memory stores first",
    )
    p.add_argument("--query-input", default=None, help="pipeline input for the query text, 'component.socket'")
    p.add_argument("--pipeline-output", default=None, help="pipeline output with the documents, 'component.socket'")
    p.add_argument(
        "--top-k", type=int, default=None, help="top_k passed to the pipelines' retrievers (default: their own)"
    )

    g = p.add_argument_group("judgments")
    g.add_argument(
        "--strategy",
        choices=["mean", "majority", "wilson"],
        default="mean",
        help="mean vote, majority of up votes, or Wilson lower bound of the up-vote share",
    )
    g.add_argument("--min-votes", type=int, default=1, help="pairs with fewer votes stay unjudged")
    g.add_argument(
        "--dedup",
        choices=["none", "last", "first"],
        default="none",
        help="per-user de-duplication: every vote, or each user's last or first",
    )
    g.add_argument("--dedup-by", choices=["user", "session"], default="user", help="whose votes --dedup merges")
    g.add_argument("--up-threshold", type=float, default=0.5, help="a vote >= this is an up vote (majority, wilson)")
    g.add_argument("--confidence-wilson", type=float, default=0.95, help="confidence of the Wilson bound")
    g.add_argument("--write-qrels", default=None, metavar="PATH", help="write the judgments as TREC qrels")
    g.add_argument(
        "--qrels",
        default=None,
        metavar="QRELS",
        help="judgments from a qrels file instead of votes, e.g. the qrels.tsv of 'irmetrics clicks fit' on "
        "this click log: each shown row of a judged pair votes its label (the log's vote column is not read)",
    )
    g.add_argument("--min-impressions", type=int, default=1, help="with --qrels: pairs shown fewer times stay unjudged")

    c = p.add_argument_group("log columns")
    c.add_argument(
        "--format",
        dest="fmt",
        choices=["jsonl", "csv", "tsv", "parquet"],
        default=None,
        help="log format (default: from the file name)",
    )
    c.add_argument("--query-col", default="query_id", help="column of the query ids")
    c.add_argument("--doc-col", default="doc_id", help="column of the document ids")
    c.add_argument("--position-col", default="position", help="column of the positions shown; '' if the log has none")
    c.add_argument("--vote-col", default="vote", help="column of the votes")
    c.add_argument("--user-col", default=None, help="column of the user ids (for --dedup)")
    c.add_argument("--session-col", default=None, help="column of the session ids (for --dedup-by session)")
    c.add_argument("--timestamp-col", default=None, help="column ordering a user's votes (for --dedup)")
    c.add_argument("--query-text-col", default=None, help="query text to replay through --pipeline")
    c.add_argument("--segment", default=None, metavar="COL", help="segment column for a per-segment breakdown")
    c.add_argument("--position-base", type=int, default=1, help="first position in the log (1, or 0)")
    c.add_argument(
        "--on-error",
        choices=["raise", "skip"],
        default="raise",
        help="malformed rows: stop at the first (raise) or skip, count and list them",
    )

    s = p.add_argument_group("scoring")
    s.add_argument("--threshold", type=float, default=0.5, help="label >= this is relevant for P/Recall/MAP/MRR/R_cap")
    s.add_argument("-k", type=ints, default=[1, 3, 5, 10], help="cutoffs")
    s.add_argument("-m", "--measures", type=names, default=None, help="families or names (default: BEIR's six)")
    s.add_argument("--preset", choices=["beir", "trec"], default="beir", help="beir 2.2.0 or trec_eval conventions")
    s.add_argument(
        "--condensed", action=argparse.BooleanOptionalAction, default=True, help="also score condensed lists"
    )
    s.add_argument("--logged", action=argparse.BooleanOptionalAction, default=True, help="score the rankings users saw")
    s.add_argument("--baseline", default=None, help="system to compare with (default: logged, else the first run)")
    s.add_argument("--test", choices=["randomization", "t"], default="randomization", help="test behind the markers")
    s.add_argument(
        "--n-resamples", type=int, default=10_000, help="randomization sign patterns and bootstrap resamples"
    )
    s.add_argument("--seed", type=seed, default=0, help="seed of the resamples")
    s.add_argument("--confidence", type=float, default=0.95, help="bootstrap interval level")

    w = p.add_argument_group("time windows (the logged rankings per window; needs --timestamp-col)")
    w.add_argument("--window", default=None, help="window width: a whole number and m, h, d or w (1d, 7d)")
    w.add_argument("--window-baseline", default=None, help="compare every window with the one starting then")
    w.add_argument("--unit", choices=["us", "ms", "s"], default="us", help="unit of numeric timestamps")
    w.add_argument("--alpha", type=float, default=0.05, help="flag a window at Holm-adjusted p below this")

    o = p.add_argument_group("output")
    o.add_argument(
        "--report",
        default=None,
        metavar="DIR",
        help="write the report files into DIR, with report.html: the page of 'irmetrics report' for the logged "
        "rankings and the new systems",
    )
    o.add_argument(
        "--plots",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="PNG plots in the report (default: if matplotlib is installed)",
    )
    o.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    p.set_defaults(func=run, paths=paths)
    return p


#: The files ``irmetrics feedback --report DIR`` writes in ``DIR`` (some only when there is something to write),
#: and the folder of its plots.
REPORT_FILES = (
    "report.md",
    "report.json",
    "scores.csv",
    "comparisons.csv",
    "skipped_rows.csv",
    "windows.csv",
    "per_query.csv",
    "qrels.txt",
    "qrels.txt.skipped",
    "report.html",
)
REPORT_PLOTS = "plots"


def paths(args: argparse.Namespace) -> Any:
    """What ``irmetrics feedback`` reads (the log, runs, pipelines, corpus, qrels) and writes (``--write-qrels``,
    the ``--report`` folder's files and its plots folder)."""
    from ..io.output import Paths

    report = Path(args.report) if args.report else None
    return Paths(
        reads=(args.log, *map(named_file, args.run), *map(named_file, args.pipeline), args.corpus, args.qrels),
        writes=(args.write_qrels, *(report / name for name in REPORT_FILES if report is not None)),
        folders=(report / REPORT_PLOTS if report is not None else None,),
        owned=(_own_folder(report),) if report is not None else (),
    )


def _own_folder(report: Path) -> Any:
    """The ``--report`` folder, ``irmetrics feedback``'s own: another command's output folder is refused."""
    from ..io.output import OutputFolder

    return OutputFolder(report, "irmetrics feedback", (*REPORT_FILES, REPORT_PLOTS), ("report.md", "report.json"))


def run(args: argparse.Namespace) -> int:
    """Run ``irmetrics feedback``: the job (:func:`haystack_irmetrics.feedback.job.run_feedback`: aggregate,
    replay, score, compare, windows, the report files) and the report page; print markdown or JSON."""
    from ..errors import NoRelevantJudgmentWarning
    from ..feedback.job import FeedbackJob, ReplaySettings, run_feedback

    job = FeedbackJob(
        _log(args),
        runs=args.run,
        pipelines=args.pipeline,
        replay=ReplaySettings(args.corpus, args.query_input, args.pipeline_output, args.top_k),
        settings=_settings(args),
        windows=_window_settings(args) if args.window else None,
        write_qrels=args.write_qrels,
        report=args.report,
        plots=args.plots,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("always", NoRelevantJudgmentWarning)  # every run says it (one line: cli.app.main)
        result = run_feedback(job)
    ev = result.evaluation
    if args.report:
        from ..report import feedback_report

        feedback_report(ev, result.runs, Path(args.report) / "report.html")
        print(f"report: {len(result.written) + 1} files in {args.report}", file=sys.stderr)
    if args.json:
        print(json_text(ev.to_dict(), indent=2))
    else:
        print(ev.to_markdown(), end="")
    return 0


def _log(args: argparse.Namespace) -> Any:
    """The log the options name, read by its columns (with ``--qrels``, voting by a qrels file's labels)."""
    from ..feedback import FeedbackLog, detect_format

    columns = {
        "query": args.query_col,
        "doc": args.doc_col,
        "position": args.position_col or None,
        "vote": None if args.qrels else args.vote_col,
        "user": args.user_col,
        "session": args.session_col,
        "timestamp": args.timestamp_col,
        "segment": args.segment,
        "query_text": args.query_text_col,
    }
    fmt = args.fmt
    if fmt is None and Path(args.log).is_file():  # a missing path is reported by the reader, as for --format
        fmt = detect_format(args.log, option="--format")  # the error names this command's option, not fmt=
    log = FeedbackLog(args.log, columns=columns, fmt=fmt, on_error=args.on_error, position_base=args.position_base)
    if args.qrels:
        from ..feedback import JudgedLog

        log = JudgedLog(log, args.qrels, min_impressions=args.min_impressions)
    return log


def _settings(args: argparse.Namespace) -> Any:
    """How the options score: :class:`~haystack_irmetrics.feedback.settings.FeedbackSettings`."""
    from ..feedback import Strategy
    from ..feedback.settings import FeedbackSettings

    strategy = Strategy.parse(
        args.strategy,
        min_votes=args.min_votes,
        dedup=args.dedup,
        dedup_by=args.dedup_by,
        up_threshold=args.up_threshold,
        confidence=args.confidence_wilson,
    )
    return FeedbackSettings(
        strategy=strategy,
        threshold=args.threshold,
        k_values=args.k,
        measures=args.measures,
        condensed=args.condensed,
        include_logged=args.logged,
        baseline=args.baseline,
        preset=args.preset,
        n_resamples=args.n_resamples,
        seed=args.seed,
        confidence=args.confidence,
        test=args.test,
    )


def _window_settings(args: argparse.Namespace) -> Any:
    """The logged rankings' measures per ``--window``: :class:`~haystack_irmetrics.feedback.settings.WindowSettings`."""
    from ..feedback.settings import WindowSettings

    return WindowSettings(
        width=args.window,
        k_values=args.k,
        measures=args.measures,
        threshold=args.threshold,
        preset=args.preset,
        unit=args.unit,
        baseline=args.window_baseline,
        alpha=args.alpha,
        confidence=args.confidence,
        n_resamples=args.n_resamples,
        seed=args.seed,
    )


__all__ = ["REPORT_FILES", "REPORT_PLOTS", "add_subcommand", "paths", "run"]
