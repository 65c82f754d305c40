"""Stage 1 of the feedback path: which column holds what, how votes are spelled, and the validation
of raw log columns into the canonical columns.

A feedback log has one row per (query, shown document, position, vote): a document shown to a user
at a position of a result list, with the user's vote or grade on it, if any. The column names are
configurable with :class:`FeedbackColumns` (the vote roles; a click log's roles are
:class:`haystack_irmetrics.clicks.ClickColumns`); ``None`` switches an optional column off. The reading
itself is :mod:`haystack_irmetrics.io.log_columns`' and :mod:`haystack_irmetrics.io.logs`', which take the
roles as a parameter.

Canonical names (what every later step sees):

==============  ==========  ===================================================================
name            type        meaning
==============  ==========  ===================================================================
``row``         int64       1-based data row of the source (header excluded)
``line``        int64       physical line of a CSV / JSONL source (null otherwise)
``query``       str         query id (required, non-empty)
``doc``         str         document id (required, non-empty)
``position``    int64       1-based position the document was shown at (``position_base`` shifts it)
``vote``        float64     the vote or grade; null = shown without feedback (an impression)
``user``        str         user id (optional; per-user de-duplication)
``session``     str         session id (optional; ``dedup_by="session"``)
``timestamp``   float64     epoch microseconds or any numeric order (optional; orders a user's votes)
``segment``     str         a breakdown key such as locale or device (optional)
``query_text``  str         the text to replay through a pipeline (optional; default the query id)
==============  ==========  ===================================================================

:func:`normalize_frame` turns raw log columns into these in one vectorised pass per batch (polars).
Every row comes out: a usable row with ``error`` null, a malformed one with ``error`` (the reason),
``error_column`` (the source column) and ``error_value`` (the cell as text). Nothing is dropped here;
the caller splits (:func:`split_errors`) and applies its error policy.

Rules, per canonical field (see above; :mod:`haystack_irmetrics.io.log_columns` says each rule):

* ``query``, ``doc``: strings (surrounding blanks removed) or integers (read as their decimal text);
  null or blank is malformed. A float or nested id column is a :class:`FeedbackSchemaError`.
* ``position``: an integer ``>= position_base`` (``1`` by default; ``0`` for 0-based logs), as int,
  integral float or numeric text; stored 1-based. Missing, fractional or too small is malformed.
* ``vote``: a number, a boolean, numeric text or a word of the vote map (``up``/``down``, ...,
  case-insensitive). Null or blank means *shown without feedback*: the row is an impression, not an
  error. NaN, infinities and unknown words are malformed.
* ``timestamp``: a datetime/date column, a number, numeric text or ISO 8601 text; becomes a float
  (epoch microseconds for dates). Only the order matters (it orders a user's votes).
* ``user``, ``session``, ``segment``, ``query_text``: any scalar, read as text; blank is null.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from .._extras import require_feedback
from ..checks import number
from ..errors import FeedbackSchemaError
from ..io import log_columns

# Re-exported: the io readers' own, under the names this module always had.
from ..io.log_columns import LINE_IN, ROW_IN, LogColumns, Role, arrow_frame, arrow_table, as_frame, split_errors

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa
else:
    from ._deps import pa, pl


#: Spelled-out votes understood by default (case-insensitive, surrounding blanks ignored). Numbers,
#: numeric strings and booleans (``true``/``false``) need no entry. A ``vote_map`` replaces these words.
DEFAULT_VOTE_MAP: Mapping[str, float] = {
    "up": 1.0,
    "down": 0.0,
    "thumbs_up": 1.0,
    "thumbs_down": 0.0,
    "thumbsup": 1.0,
    "thumbsdown": 0.0,
    "like": 1.0,
    "dislike": 0.0,
    "relevant": 1.0,
    "not_relevant": 0.0,
    "irrelevant": 0.0,
    "yes": 1.0,
    "no": 0.0,
    "true": 1.0,
    "false": 0.0,
}


@dataclass(frozen=True)
class FeedbackColumns(LogColumns):
    """Source column names of each canonical field (``None``: the log has no such column).

    Usage::

        >>> FeedbackColumns(query="qid", vote="grade", segment="locale").source_names()
        {'qid': 'query', 'doc_id': 'doc', 'position': 'position', 'grade': 'vote', 'locale': 'segment'}
    """

    query: str = "query_id"
    doc: str = "doc_id"
    position: str | None = "position"
    vote: str | None = "vote"
    user: str | None = None
    session: str | None = None
    timestamp: str | None = None
    segment: str | None = None
    query_text: str | None = None

    ROLES: ClassVar[Mapping[str, Role]] = {
        "query": Role("id", label="query"),
        "doc": Role("id", label="document"),
        "position": Role("position"),
        "vote": Role("number"),
        "user": Role("text"),
        "session": Role("text"),
        "timestamp": Role("timestamp"),
        "segment": Role("text"),
        "query_text": Role("text", shares_column=True),  # the query's text may be its id column
    }
    purpose: ClassVar[str] = "feedback logs"
    extra: ClassVar[str] = "feedback"
    rows_name: ClassVar[str] = "feedback rows"

    @classmethod
    def coerce(cls, value: FeedbackColumns | Mapping[str, str | None] | None) -> FeedbackColumns:
        """``value`` as the columns: itself, ``{role: column}`` over the defaults, or the defaults (None)."""
        return value if isinstance(value, cls) else cls(**cls.checked(value))


#: The canonical fields of a feedback log, in the order its batches hold them; ``query`` and ``doc`` are required.
CANONICAL = FeedbackColumns.roles()
REQUIRED = ("query", "doc")


def canonical_schema() -> pa.Schema:
    """The pyarrow schema of normalized batches (what :func:`normalize_batches` yields)."""

    return log_columns.canonical_schema(FeedbackColumns)


def vote_words(vote_map: Mapping[str, float] | None) -> dict[str, float]:
    """``{lower-case word: vote}`` of ``vote_map`` (default :data:`DEFAULT_VOTE_MAP`), plus ``true``/``false``.

    :raises FeedbackSchemaError: ``vote_map`` is not a dict of words to finite numbers.
    """
    if vote_map is not None and not isinstance(vote_map, Mapping):
        raise FeedbackSchemaError(f"vote_map must be a dict {{word: number}}, got {type(vote_map).__name__}")
    table = {"true": 1.0, "false": 0.0, **(DEFAULT_VOTE_MAP if vote_map is None else {})}
    for word, value in (vote_map or {}).items():
        if not isinstance(word, str):
            raise FeedbackSchemaError(f"vote_map keys are words (str), got {word!r}")
        number(value, f"vote_map[{word!r}]", error=FeedbackSchemaError)
        table[word.strip().lower()] = float(value)
    return table


def normalize_frame(
    df: pl.DataFrame,
    columns: FeedbackColumns,
    *,
    vote_map: Mapping[str, float] | None = None,
    position_base: int = 1,
    source: str = "feedback log",
) -> pl.DataFrame:
    """Validate and rename one frame of raw rows; ``df`` carries ``__row__`` (and may carry ``__line__``).

    Returns the canonical columns plus ``error``, ``error_column``, ``error_value`` (see module docs).
    """
    words = {"vote": vote_words(vote_map)}
    return log_columns.normalize_frame(df, columns, words=words, position_base=position_base, source=source)


def normalize_batches(
    batches: Iterable[pa.RecordBatch],
    columns: FeedbackColumns | Mapping[str, str | None] | None = None,
    *,
    vote_map: Mapping[str, float] | None = None,
    position_base: int = 1,
    first_row: int = 1,
) -> Iterator[pa.RecordBatch]:
    """Raw Arrow batches -> canonical batches (schema :func:`canonical_schema`), malformed rows flagged.

    The signature of a Spark ``mapInArrow`` function once the options are bound with
    :func:`functools.partial`; rows are numbered from ``first_row`` per call (a Spark partition
    numbers its own rows), unless the batches carry a ``row`` column (that is not a configured log
    column): then those are the row numbers, global if the caller made them so.
    """
    require_feedback("normalize_batches")

    cols = FeedbackColumns.coerce(columns)
    schema = canonical_schema()
    next_row = first_row
    for batch in batches:
        df = arrow_frame(batch, "normalize_batches")
        if "row" in df.columns and "row" not in cols.source_names():
            df = df.rename({"row": ROW_IN})  # global row numbers given by the caller
        else:
            df = df.with_columns(pl.int_range(next_row, next_row + df.height, dtype=pl.Int64).alias(ROW_IN))
        next_row += df.height
        out = normalize_frame(df, cols, vote_map=vote_map, position_base=position_base)
        yield from out.to_arrow().cast(schema).to_batches()


__all__ = [
    "CANONICAL",
    "DEFAULT_VOTE_MAP",
    "LINE_IN",
    "REQUIRED",
    "ROW_IN",
    "FeedbackColumns",
    "arrow_frame",
    "arrow_table",
    "as_frame",
    "canonical_schema",
    "normalize_batches",
    "normalize_frame",
    "split_errors",
    "vote_words",
]
