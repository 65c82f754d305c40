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
from .judgments import ALL, AggregatedFeedback, aggregate_feedback
from .log import FeedbackLog, ReadStats, read_feedback
from .normalize import canonical_schema, normalize_batches

__all__ = [
    "ALL",
    "DEDUP",
    "DEFAULT_VOTE_MAP",
    "STRATEGIES",
    "AggregatedFeedback",
    "FeedbackColumns",
    "FeedbackError",
    "FeedbackLog",
    "FeedbackSchemaError",
    "MalformedRowError",
    "ReadStats",
    "Strategy",
    "UnknownStrategyError",
    "aggregate_feedback",
    "canonical_schema",
    "merge_partials",
    "normalize_batches",
    "partial_aggregate",
    "partial_schema",
    "read_feedback",
    "wilson_lower_bound",
]
