"""Errors of the feedback path; all are :class:`~haystack_irmetrics.errors.IRMetricsError` (so ``ValueError``)."""

from __future__ import annotations

from ..errors import IRMetricsError


class FeedbackError(IRMetricsError):
    """Base class of the errors raised while reading, aggregating or scoring feedback logs."""


class MalformedRowError(FeedbackError):
    """A row of a feedback log cannot be used; the message names the source, row (and line) and column.

    ``row`` is the 1-based data row (header excluded), ``line`` the physical line of a CSV or JSONL
    file (``None`` for Parquet and in-memory tables).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        row: int | None = None,
        line: int | None = None,
        column: str | None = None,
    ) -> None:
        where = f"{source}: " if source else ""
        if row is not None:
            where += f"row {row}" + (f" (line {line})" if line is not None else "") + ": "
        super().__init__(where + message)
        self.source = source
        self.row = row
        self.line = line
        self.column = column


class FeedbackSchemaError(FeedbackError):
    """A configured column is missing from the log, or has a type that cannot hold its values."""


class UnknownStrategyError(FeedbackError):
    """An aggregation strategy, de-duplication mode or error policy is not one of the documented names."""


__all__ = ["FeedbackError", "FeedbackSchemaError", "MalformedRowError", "UnknownStrategyError"]
