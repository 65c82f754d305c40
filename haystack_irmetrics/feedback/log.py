"""A feedback log as a re-readable stream of validated batches, with an explicit error policy.

``on_error="raise"`` (default) stops at the first malformed row with a
:class:`~haystack_irmetrics.feedback.errors.MalformedRowError` naming its row (and line) and column.
``on_error="skip"`` leaves malformed rows out of every later step but counts and lists them
(:attr:`FeedbackLog.skipped`): a report always shows how many rows were skipped and why.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._extras import require_feedback
from ..errors import shorten
from .columns import FeedbackColumns
from .errors import MalformedRowError, UnknownStrategyError
from .normalize import normalize_frame, split_errors
from .reader import DEFAULT_BATCH_ROWS, iter_raw

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

ON_ERROR = ("raise", "skip")


@dataclass(frozen=True)
class ReadStats:
    """What the last full pass over a log saw: data rows, usable rows, rows skipped as malformed."""

    rows: int
    usable: int
    skipped: int


class FeedbackLog:
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
        require_feedback("feedback logs")
        if on_error not in ON_ERROR:
            raise UnknownStrategyError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
        if isinstance(position_base, bool) or not isinstance(position_base, int):
            raise UnknownStrategyError(f"position_base must be an int (1 or 0), got {position_base!r}")
        if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 1:
            raise UnknownStrategyError(f"batch_rows must be a positive int, got {batch_rows!r}")
        self.source = source
        self.name = os.fspath(source) if isinstance(source, str | os.PathLike) else "feedback rows"
        self.columns = FeedbackColumns.coerce(columns)
        self.fmt = fmt
        self.on_error = on_error
        self.vote_map = vote_map
        self.position_base = position_base
        self.batch_rows = batch_rows
        self._skipped: pl.DataFrame | None = None
        self._stats: ReadStats | None = None
        if not isinstance(source, str | os.PathLike):
            # Read an in-memory table once, so a generator or a mutable list is not read twice.
            from .normalize import as_frame

            self.source = as_frame(source)

    def __repr__(self) -> str:
        return f"FeedbackLog({self.name!r}, on_error={self.on_error!r})"

    @property
    def has_segment(self) -> bool:
        return self.columns.segment is not None

    def batches(self) -> Iterator[pl.DataFrame]:
        """Validated batches in the canonical columns (:mod:`.columns`), malformed rows handled per policy.

        After a complete pass, :attr:`skipped` and :attr:`stats` describe it.
        """
        import polars as pl

        skipped: list[pl.DataFrame] = []
        rows = usable = 0
        for raw, reader_errors in iter_raw(self.source, self.columns, fmt=self.fmt, batch_rows=self.batch_rows):
            norm = normalize_frame(
                raw, self.columns, vote_map=self.vote_map, position_base=self.position_base, source=self.name
            )
            good, bad = split_errors(norm)
            if reader_errors is not None and reader_errors.height:
                bad = pl.concat([bad, reader_errors], how="vertical_relaxed").sort("row")
            rows += norm.height + (0 if reader_errors is None else reader_errors.height)
            if bad.height:
                if self.on_error == "raise":
                    raise _row_error(bad.row(0, named=True), self.name)
                skipped.append(bad.select("row", "line", "error_column", "error_value", "error"))
            usable += good.height
            yield good.drop("error", "error_column", "error_value")
        self._skipped = (
            pl.concat(skipped).rename({"error_column": "column", "error_value": "value", "error": "reason"})
            if skipped
            else _empty_skipped()
        )
        self._stats = ReadStats(rows=rows, usable=usable, skipped=self._skipped.height)

    def to_frame(self) -> pl.DataFrame:
        """Every usable row, validated, as one polars frame (small logs; big ones go through :meth:`batches`)."""
        import polars as pl

        parts = list(self.batches())
        return pl.concat(parts) if parts else _empty_rows()

    @property
    def skipped(self) -> pl.DataFrame:
        """Malformed rows of the last complete pass: ``row``, ``line``, ``column``, ``value``, ``reason``."""
        if self._skipped is None:
            for _ in self.batches():
                pass
        assert self._skipped is not None
        return self._skipped

    @property
    def stats(self) -> ReadStats:
        if self._stats is None:
            self.skipped  # noqa: B018 - one pass fills both
        assert self._stats is not None
        return self._stats


def _empty_rows() -> pl.DataFrame:
    import polars as pl

    from .normalize import canonical_schema

    frame = pl.from_arrow(canonical_schema().empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.drop("error", "error_column", "error_value")


def _empty_skipped() -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(
        schema={"row": pl.Int64, "line": pl.Int64, "column": pl.String, "value": pl.String, "reason": pl.String}
    )


def _row_error(row: dict[str, Any], source: str) -> MalformedRowError:
    column = row.get("error_column")
    value = row.get("error_value")
    what = f"column {column!r}: " if column else ""
    shown = f" (value {shorten(repr(value))})" if value is not None else ""
    return MalformedRowError(
        f"{what}{row['error']}{shown} (on_error='skip', or --on-error skip, counts and lists such rows instead)",
        source=source,
        row=row["row"],
        line=row.get("line"),
        column=column,
    )


def read_feedback(source: Any, **options: Any) -> FeedbackLog:
    """Open a feedback log (see :class:`FeedbackLog` for the options); nothing is read until used."""
    return FeedbackLog(source, **options)


__all__ = ["ON_ERROR", "FeedbackLog", "ReadStats", "read_feedback"]
