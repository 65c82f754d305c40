"""Stage 2 of the feedback path: a log (file or table) read in bounded batches of validated rows.

:class:`FeedbackLog` is the package's one log reader (:class:`haystack_irmetrics.io.logs.Log`: JSONL, CSV/TSV,
Parquet or a table, an explicit error policy) given the vote roles (:class:`~.schema.FeedbackColumns`) and the
words a vote may be (``vote_map``). ``on_error="raise"`` (default) stops at the first malformed row with a
:class:`~haystack_irmetrics.errors.MalformedRowError` naming its row (and line) and column.
``on_error="skip"`` leaves malformed rows out of every later step but counts and lists them
(:attr:`FeedbackLog.skipped`): a report always shows how many rows were skipped and why. The formats and
their rules are :mod:`haystack_irmetrics.io.logs`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..io.logs import DEFAULT_BATCH_ROWS, FORMATS, ON_ERROR, Log, ReadStats, detect_format, iter_raw
from .schema import FeedbackColumns, vote_words


class FeedbackLog(Log):
    """A feedback log (file path or in-memory table), read lazily in batches of ``batch_rows``.

    :param source: a ``.jsonl``/``.ndjson``/``.json``, ``.csv``/``.tsv`` or ``.parquet`` path (compressed
        text by extension or magic bytes), or a table: list of row dicts, dict of columns, polars or
        pandas frame, pyarrow Table.
    :param columns: :class:`FeedbackColumns` or a dict ``{role: column name}`` (roles: ``query``, ``doc``,
        ``position``, ``vote``, ``user``, ``session``, ``timestamp``, ``segment``, ``query_text``).
    :param fmt: ``"jsonl"``, ``"csv"``, ``"tsv"`` or ``"parquet"``; default from the file name.
    :param on_error: ``"raise"`` (default) or ``"skip"`` (count and list malformed rows, see module docs).
    :param vote_map: words accepted as votes, ``{word: value}``; default ``up``/``down``, ``like``/``dislike``, ...
    :param position_base: the first position in the log (``1``; ``0`` for 0-based positions).
    :param batch_rows: rows per batch (memory bound of the columnar path).

    Usage::

        >>> log = FeedbackLog([
        ...     {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": "up"},
        ...     {"query_id": "q1", "doc_id": "d2", "position": 2, "vote": "sideways"},
        ... ], on_error="skip")
        >>> log.to_frame().select("query", "doc", "position", "vote").rows()
        [('q1', 'd1', 1, 1.0)]
        >>> log.skipped.select("row", "column", "value", "reason").rows()
        [(2, 'vote', 'sideways', 'vote is neither a number nor a word of the vote map')]
    """

    columns: FeedbackColumns

    def __init__(
        self,
        source: Any,
        *,
        columns: FeedbackColumns | Mapping[str, str | None] | None = None,
        fmt: str | None = None,
        on_error: str = "raise",
        vote_map: Mapping[str, float] | None = None,
        position_base: int = 1,
        batch_rows: int = DEFAULT_BATCH_ROWS,
    ) -> None:
        super().__init__(
            source,
            columns=FeedbackColumns.coerce(columns),
            fmt=fmt,
            on_error=on_error,
            words={"vote": vote_words(vote_map)},  # the words a vote may be, checked here
            position_base=position_base,
            batch_rows=batch_rows,
        )
        self.vote_map = vote_map

    @property
    def has_segment(self) -> bool:
        return self.columns.segment is not None


def read_feedback(source: Any, **options: Any) -> FeedbackLog:
    """Open a feedback log (see :class:`FeedbackLog` for the options); nothing is read until used."""
    return FeedbackLog(source, **options)


__all__ = [
    "DEFAULT_BATCH_ROWS",
    "FORMATS",
    "ON_ERROR",
    "FeedbackLog",
    "ReadStats",
    "detect_format",
    "iter_raw",
    "read_feedback",
]
