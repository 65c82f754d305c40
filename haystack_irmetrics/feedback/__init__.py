"""Score production feedback: votes -> qrels -> metrics, with significance and reports.

The stages, in the order a log goes through them (each module imports only the ones above it):

1. :mod:`.schema` -- which column holds what (:class:`FeedbackColumns`), how votes are spelled, and
   raw columns validated into the canonical columns (:func:`normalize_batches`).
2. :mod:`.reading` -- a log file (JSONL, CSV/TSV, Parquet) or table read in bounded batches with an
   error policy (:class:`FeedbackLog`, :func:`detect_format`).
3. :mod:`.judgments` -- what a judgment is: the strategies that turn votes into labels
   (:class:`Strategy`) and a log's judgments and shown rankings (:class:`AggregatedFeedback`).
4. :mod:`.aggregate` -- votes -> judgments in one streamed, mergeable columnar pass
   (:func:`aggregate_feedback`; :func:`partial_aggregate` and :func:`merge_partials` for Spark).
5. :mod:`.scoring` -- every system against the judgments: full and condensed lists, Judged@k, and per
   segment the bootstrap intervals and paired tests against a baseline.
6. :mod:`.report` -- the result (:class:`FeedbackEvaluation`) and its markdown, JSON, CSV and plots.
7. :mod:`.evaluate` -- the whole run, log to rendered comparison (:func:`evaluate_feedback`).

:mod:`.replay` makes a new system's run by replaying the logged queries through a Haystack pipeline
(:func:`replay_pipeline`), for stage 5; :mod:`.judged` reads a click log (or any log with positions) as a
feedback log voting by click-derived qrels (:class:`JudgedLog`); :mod:`.windows` scores the logged rankings per
time window against the whole log's judgments (``--window``). :mod:`.settings` holds how a log is scored, as
frozen values (``FeedbackSettings``, ``WindowSettings``; standard library only), and :mod:`.job` is ``irmetrics
feedback`` as one call: an open log and the settings in (``FeedbackJob``), :func:`~.job.run_feedback`
aggregating, replaying, scoring, scoring the windows and writing the report files, a frozen ``FeedbackRun`` out.
The errors are in :mod:`haystack_irmetrics.errors`.

Importing this package loads numpy only; reading and aggregating logs needs ``pyarrow`` and ``polars``
(imported on first use, :mod:`._deps`), the tests need ``scipy``, plots ``matplotlib``.
"""

from ..errors import FeedbackError, FeedbackSchemaError, MalformedRowError, UnknownStrategyError
from .aggregate import aggregate_feedback, merge_partials, partial_aggregate, partial_schema
from .evaluate import NoRelevantJudgmentWarning, evaluate_feedback
from .judged import JudgedLog
from .judgments import ALL, DEDUP, STRATEGIES, AggregatedFeedback, Strategy, wilson_lower_bound
from .reading import FeedbackLog, ReadStats, detect_format, read_feedback
from .replay import replay_pipeline
from .report import FeedbackEvaluation, jsonable
from .schema import DEFAULT_VOTE_MAP, FeedbackColumns, canonical_schema, normalize_batches
from .scoring import LOGGED, SegmentResult, SystemScores, condense, score_system

__all__ = [
    "ALL",
    "DEDUP",
    "DEFAULT_VOTE_MAP",
    "LOGGED",
    "STRATEGIES",
    "AggregatedFeedback",
    "FeedbackColumns",
    "FeedbackError",
    "FeedbackEvaluation",
    "FeedbackLog",
    "FeedbackSchemaError",
    "JudgedLog",
    "MalformedRowError",
    "NoRelevantJudgmentWarning",
    "ReadStats",
    "SegmentResult",
    "Strategy",
    "SystemScores",
    "UnknownStrategyError",
    "aggregate_feedback",
    "canonical_schema",
    "condense",
    "detect_format",
    "evaluate_feedback",
    "jsonable",
    "merge_partials",
    "normalize_batches",
    "partial_aggregate",
    "partial_schema",
    "read_feedback",
    "replay_pipeline",
    "score_system",
    "wilson_lower_bound",
]
