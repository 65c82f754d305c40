"""Score production feedback: votes -> qrels -> metrics, with significance and reports.

Importing this package loads numpy only; reading and aggregating logs needs ``pyarrow`` and ``polars``,
the tests need ``scipy``, plots ``matplotlib`` (each imported when used).
"""

from .aggregate import (
    DEDUP,
    STRATEGIES,
    Strategy,
    merge_partials,
    partial_aggregate,
    partial_schema,
    wilson_lower_bound,
)
from .columns import DEFAULT_VOTE_MAP, FeedbackColumns
from .errors import FeedbackError, FeedbackSchemaError, MalformedRowError, UnknownStrategyError
from .evaluation import LOGGED, FeedbackEvaluation, SegmentResult, evaluate_feedback
from .judgments import ALL, AggregatedFeedback, aggregate_feedback
from .log import FeedbackLog, ReadStats, read_feedback
from .normalize import canonical_schema, normalize_batches
from .replay import replay_pipeline
from .scoring import SystemScores, condense, judged_at_k, score_system

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
    "MalformedRowError",
    "ReadStats",
    "SegmentResult",
    "Strategy",
    "SystemScores",
    "UnknownStrategyError",
    "aggregate_feedback",
    "canonical_schema",
    "condense",
    "evaluate_feedback",
    "judged_at_k",
    "merge_partials",
    "normalize_batches",
    "partial_aggregate",
    "partial_schema",
    "read_feedback",
    "replay_pipeline",
    "score_system",
    "wilson_lower_bound",
]
