"""Stage 1 of the feedback path: which column holds what, how votes are spelled, and the validation
of raw log columns into the canonical columns.

A feedback log has one row per (query, shown document, position, vote): a document shown to a user
at a position of a result list, with the user's vote or grade on it, if any. The column names are
configurable with :class:`FeedbackColumns`; ``None`` switches an optional column off.

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
``click``       float64     a click log's click: 1.0 or 0.0 (optional; :mod:`haystack_irmetrics.clicks`)
``team``        str         the interleaving team that placed the document (optional)
``propensity``  float64     the logging policy's probability of what it showed, in (0, 1] (optional)
==============  ==========  ===================================================================

:func:`normalize_frame` turns raw log columns into these in one vectorised pass per batch (polars).
Every row comes out: a usable row with ``error`` null, a malformed one with ``error`` (the reason),
``error_column`` (the source column) and ``error_value`` (the cell as text). Nothing is dropped here;
the caller splits (:func:`split_errors`) and applies its error policy.

Rules, per canonical field (see above):

* ``query``, ``doc``: strings (surrounding blanks removed) or integers (read as their decimal text);
  null or blank is malformed. A float or nested id column is a :class:`FeedbackSchemaError`.
* ``position``: an integer ``>= position_base`` (``1`` by default; ``0`` for 0-based logs), as int,
  integral float or numeric text; stored 1-based. Missing, fractional or too small is malformed.
* ``vote``: a number, a boolean, numeric text or a word of the vote map (``up``/``down``, ...,
  case-insensitive). Null or blank means *shown without feedback*: the row is an impression, not an
  error. NaN, infinities and unknown words are malformed.
* ``timestamp``: a datetime/date column, a number, numeric text or ISO 8601 text; becomes a float
  (epoch microseconds for dates). Only the order matters (it orders a user's votes).
* ``click``: 0 or 1, a boolean, or one of ``yes``/``no``, ``true``/``false`` (case-insensitive);
  missing, another number or another word is malformed.
* ``propensity``: a number in (0, 1]; missing or outside is malformed.
* ``user``, ``session``, ``segment``, ``query_text``, ``team``: any scalar, read as text; blank is null.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from decimal import Decimal
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._extras import require_feedback
from ..errors import FeedbackSchemaError

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa
else:
    from ._deps import pa, pl

CANONICAL = (
    "query",
    "doc",
    "position",
    "vote",
    "user",
    "session",
    "timestamp",
    "segment",
    "query_text",
    "click",
    "team",
    "propensity",
)
REQUIRED = ("query", "doc")

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
class FeedbackColumns:
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
    click: str | None = None
    team: str | None = None
    propensity: str | None = None

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for f in fields(self):
            name = getattr(self, f.name)
            if name is None:
                if f.name in REQUIRED:
                    raise FeedbackSchemaError(f"the {f.name!r} column is required; give its name")
                continue
            if not isinstance(name, str) or not name:
                raise FeedbackSchemaError(f"column name for {f.name!r} must be a non-empty str, got {name!r}")
            if name in seen and f.name != "query_text":
                raise FeedbackSchemaError(f"column {name!r} is given for both {seen[name]!r} and {f.name!r}")
            seen.setdefault(name, f.name)

    def source_names(self) -> dict[str, str]:
        """``{source column: canonical name}`` of the configured columns (a source column read once)."""
        out: dict[str, str] = {}
        for canonical, source in asdict(self).items():
            if source is not None and source not in out:
                out[source] = canonical
        return out

    def configured(self) -> dict[str, str]:
        """``{canonical name: source column}`` of the configured columns."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def coerce(cls, value: FeedbackColumns | Mapping[str, str | None] | None) -> FeedbackColumns:
        if value is None:
            return cls()
        if isinstance(value, FeedbackColumns):
            return value
        if isinstance(value, Mapping):
            unknown = set(value) - set(CANONICAL)
            if unknown:
                raise FeedbackSchemaError(f"unknown column roles {sorted(unknown)}; known: {list(CANONICAL)}")
            return cls(**value)
        raise FeedbackSchemaError(f"columns must be a FeedbackColumns or a dict, got {type(value).__name__}")


TEXT_FIELDS = ("user", "session", "segment", "query_text", "team")
#: Words a click column may hold besides 0/1 and booleans (case-insensitive).
CLICK_WORDS: Mapping[str, float] = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}
#: Columns the readers attach to raw rows: the data row (1-based) and the physical line of text files.
ROW_IN = "__row__"
LINE_IN = "__line__"
#: Marks a cell that held a JSON object or list (rows given as dicts); such a cell is malformed.
NESTED = "\x00nested:"
#: The deepest position a log may record (as a cutoff: ranks beyond it are no ranking).
MAX_POSITION = 2**31 - 1


def canonical_schema() -> pa.Schema:
    """The pyarrow schema of normalized batches (what :func:`normalize_batches` yields)."""

    return pa.schema(
        [
            ("row", pa.int64()),
            ("line", pa.int64()),
            ("query", pa.string()),
            ("doc", pa.string()),
            ("position", pa.int64()),
            ("vote", pa.float64()),
            ("user", pa.string()),
            ("session", pa.string()),
            ("timestamp", pa.float64()),
            ("segment", pa.string()),
            ("query_text", pa.string()),
            ("click", pa.float64()),
            ("team", pa.string()),
            ("propensity", pa.float64()),
            ("error", pa.string()),
            ("error_column", pa.string()),
            ("error_value", pa.string()),
        ]
    )


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
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise FeedbackSchemaError(f"vote_map[{word!r}] must be a finite number, got {value!r}")
        table[word.strip().lower()] = float(value)
    return table


def _kind(dtype: pl.DataType) -> str:
    if dtype == pl.Null:
        return "null"
    if dtype == pl.Boolean:
        return "bool"
    if dtype.is_integer():
        return "int"
    if dtype.is_float() or dtype.is_decimal():
        return "float"
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum | pl.Categorical):
        return "str"
    if isinstance(dtype, pl.Datetime) or dtype == pl.Date:
        return "datetime"
    return "other"


def _blank_to_null(e: pl.Expr) -> pl.Expr:
    return pl.when(e.str.len_bytes() == 0).then(None).otherwise(e)


def _text(src: str, kind: str, field: str) -> pl.Expr:
    if kind == "str":
        return _blank_to_null(pl.col(src).cast(pl.String).str.strip_chars())
    if kind == "int" or (kind in ("float", "bool", "datetime") and field in TEXT_FIELDS):
        return pl.col(src).cast(pl.String)
    if kind == "null":
        return pl.col(src).cast(pl.String)
    raise FeedbackSchemaError(f"column {src!r} ({field}) has type {kind}; ids and labels must be text or integers")


def _raw(src: str, kind: str) -> pl.Expr:
    if kind == "other":
        return pl.lit(None, pl.String)
    return pl.col(src).cast(pl.String)


def _number(src: str, kind: str, field: str, words: dict[str, float] | None = None) -> tuple[pl.Expr, pl.Expr]:
    """(value as Float64 or null, 'cannot parse' mask) for a numeric field."""

    if kind in ("int", "float", "bool"):
        return pl.col(src).cast(pl.Float64), pl.lit(False)
    if kind == "null":
        return pl.col(src).cast(pl.Float64), pl.lit(False)
    if kind == "str":
        text = _blank_to_null(pl.col(src).cast(pl.String).str.strip_chars())
        value = text.cast(pl.Float64, strict=False)
        if words:
            word = text.str.to_lowercase().replace_strict(words, default=None, return_dtype=pl.Float64)
            value = pl.coalesce(word, value)
        return value, text.is_not_null() & value.is_null()
    raise FeedbackSchemaError(f"column {src!r} ({field}) has type {kind}; expected numbers or text")


def _timestamp(src: str, kind: str) -> tuple[pl.Expr, pl.Expr]:
    if kind == "datetime":
        return pl.col(src).cast(pl.Datetime("us")).dt.epoch("us").cast(pl.Float64), pl.lit(False)
    if kind == "str":
        text = _blank_to_null(pl.col(src).cast(pl.String).str.strip_chars())
        number = text.cast(pl.Float64, strict=False)
        when = text.str.to_datetime(strict=False, time_unit="us").dt.epoch("us").cast(pl.Float64)
        # With a zone ('Z', '+02:00'): as UTC; the inferred format above takes zone-less text.
        zoned = text.str.to_datetime("%+", strict=False, time_unit="us").dt.epoch("us").cast(pl.Float64)
        value = pl.coalesce(number, when, zoned)
        return value, text.is_not_null() & value.is_null()
    return _number(src, kind, "timestamp")


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

    present = set(df.columns)
    wanted = columns.configured()
    missing = sorted({src for src in wanted.values() if src not in present})
    if missing:
        available = [c for c in df.columns if c not in (ROW_IN, LINE_IN)]
        raise FeedbackSchemaError(f"{source}: column(s) {missing} not found; the log has {available}")
    words = vote_words(vote_map)
    kinds = {src: _kind(df.schema[src]) for src in wanted.values()}

    values: dict[str, pl.Expr] = {}
    checks: list[tuple[str, pl.Expr, str, pl.Expr]] = []  # (column, bad mask, reason, value text)
    for src in dict.fromkeys(wanted.values()):
        if kinds[src] == "str":
            nested = pl.col(src).cast(pl.String).str.starts_with(NESTED)
            checks.append(
                (
                    src,
                    nested.fill_null(False),
                    "value is a JSON object or list, not a scalar",
                    pl.col(src).cast(pl.String).str.strip_prefix(NESTED),
                )
            )

    for field in ("query", "doc"):
        src = wanted[field]
        values[field] = _text(src, kinds[src], field)
        checks.append(
            (
                src,
                values[field].is_null(),
                f"{'query' if field == 'query' else 'document'} id is missing or empty",
                _raw(src, kinds[src]),
            )
        )

    if "position" in wanted:
        src = wanted["position"]
        number, unparsable = _number(src, kinds[src], "position")
        integral = number.is_finite() & (number == number.floor())
        raw = _raw(src, kinds[src])
        checks.append((src, number.is_null() & ~unparsable, "position is missing", raw))
        checks.append((src, unparsable | (number.is_not_null() & ~integral), "position is not an integer", raw))
        checks.append(
            (src, integral & (number < position_base), f"position is below position_base={position_base}", raw)
        )
        usable = integral & (number >= position_base) & (number <= MAX_POSITION)
        checks.append((src, integral & (number > MAX_POSITION), f"position is beyond {MAX_POSITION:,}", raw))
        values["position"] = pl.when(usable).then(number - (position_base - 1)).cast(pl.Int64)
    else:
        values["position"] = pl.lit(None, pl.Int64)

    if "vote" in wanted:
        src = wanted["vote"]
        number, unparsable = _number(src, kinds[src], "vote", words)
        raw = _raw(src, kinds[src])
        checks.append((src, unparsable, "vote is neither a number nor a word of the vote map", raw))
        checks.append((src, number.is_not_null() & ~number.is_finite(), "vote is not a finite number", raw))
        values["vote"] = pl.when(number.is_finite()).then(number)
    else:
        values["vote"] = pl.lit(None, pl.Float64)

    if "timestamp" in wanted:
        src = wanted["timestamp"]
        number, unparsable = _timestamp(src, kinds[src])
        raw = _raw(src, kinds[src])
        checks.append((src, unparsable, "timestamp is neither a number nor an ISO 8601 date-time", raw))
        checks.append((src, number.is_not_null() & ~number.is_finite(), "timestamp is not a finite number", raw))
        values["timestamp"] = pl.when(number.is_finite()).then(number)
    else:
        values["timestamp"] = pl.lit(None, pl.Float64)

    if "click" in wanted:
        src = wanted["click"]
        number, unparsable = _number(src, kinds[src], "click", dict(CLICK_WORDS))
        raw = _raw(src, kinds[src])
        checks.append((src, number.is_null() & ~unparsable, "click is missing", raw))
        checks.append((src, unparsable, "click is neither 0/1 nor yes/no or true/false", raw))
        binary = (number == 0.0) | (number == 1.0)
        checks.append((src, number.is_not_null() & ~binary.fill_null(False), "click is not 0 or 1", raw))
        values["click"] = pl.when(binary).then(number)
    else:
        values["click"] = pl.lit(None, pl.Float64)

    if "propensity" in wanted:
        src = wanted["propensity"]
        number, unparsable = _number(src, kinds[src], "propensity")
        raw = _raw(src, kinds[src])
        inside = number.is_finite() & (number > 0.0) & (number <= 1.0)
        checks.append((src, number.is_null() & ~unparsable, "propensity is missing", raw))
        checks.append((src, unparsable | (number.is_not_null() & ~inside), "propensity is not a number in (0, 1]", raw))
        values["propensity"] = pl.when(inside).then(number)
    else:
        values["propensity"] = pl.lit(None, pl.Float64)

    for field in TEXT_FIELDS:
        src = wanted.get(field)
        values[field] = pl.lit(None, pl.String) if src is None else _text(src, kinds[src], field)

    error = pl.coalesce([pl.when(bad).then(pl.lit(reason)) for _, bad, reason, _ in checks])
    error_column = pl.coalesce([pl.when(bad).then(pl.lit(src)) for src, bad, _, _ in checks])
    error_value = pl.coalesce([pl.when(bad).then(raw) for _, bad, _, raw in checks])
    line = pl.col(LINE_IN).cast(pl.Int64) if LINE_IN in present else pl.lit(None, pl.Int64)
    try:
        return df.select(
            pl.col(ROW_IN).cast(pl.Int64).alias("row"),
            line.alias("line"),
            *(values[f].alias(f) for f in ("query", "doc", "position", "vote", "user", "session", "timestamp")),
            values["segment"].alias("segment"),
            values["query_text"].alias("query_text"),
            values["click"].alias("click"),
            values["team"].alias("team"),
            values["propensity"].alias("propensity"),
            error.alias("error"),
            error_column.alias("error_column"),
            error_value.alias("error_value"),
        )
    except pl.exceptions.PolarsError as e:  # e.g. timestamps mixing incompatible formats
        raise FeedbackSchemaError(f"{source}: cannot read the columns {list(wanted.values())}: {e}") from None


def split_errors(df: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(usable rows, malformed rows) of a normalized frame; the malformed ones keep their reasons."""

    bad = pl.col("error").is_not_null()
    if df.height == 0 or df.select(bad.any()).item() is not True:
        return df, df.clear()
    return df.filter(~bad), df.filter(bad)


def arrow_table(batch: Any, what: str) -> pa.Table:
    """A pyarrow RecordBatch or Table as a Table; anything else is a :class:`FeedbackSchemaError`."""

    if isinstance(batch, pa.RecordBatch):
        return pa.Table.from_batches([batch])
    if not isinstance(batch, pa.Table):
        raise FeedbackSchemaError(f"{what} takes pyarrow RecordBatches or Tables, got {type(batch).__name__}")
    return batch


def arrow_frame(batch: Any, what: str) -> pl.DataFrame:
    """:func:`arrow_table` as a polars frame."""

    return cast("pl.DataFrame", pl.from_arrow(arrow_table(batch, what)))


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


def as_frame(data: Any) -> pl.DataFrame:
    """A polars frame from a pyarrow Table/RecordBatch, a polars or pandas frame, a dict of columns or row dicts."""

    if isinstance(data, pl.DataFrame):
        return data
    if isinstance(data, list):
        if data and not all(isinstance(r, Mapping) for r in data):
            bad = next(i for i, r in enumerate(data) if not isinstance(r, Mapping))
            raise FeedbackSchemaError(f"row {bad + 1} of the feedback rows is {type(data[bad]).__name__}, not a dict")
        keys: dict[str, None] = {}
        for r in data:
            keys.update(dict.fromkeys(r))
        # Column-wise with strict=False: a column mixing numbers and words stays readable (as text).
        return (
            pl.DataFrame({k: _column([r.get(k) for r in data]) for k in keys}, strict=False) if data else pl.DataFrame()
        )
    out = pl.from_arrow(data) if not isinstance(data, Mapping) and hasattr(data, "schema") else None
    if out is None:
        out = pl.DataFrame(data, strict=False)
    if not isinstance(out, pl.DataFrame):  # pragma: no cover - a bare Array/Series
        raise FeedbackSchemaError(f"cannot read a feedback table from {type(data).__name__}")
    return out


def _column(values: list[Any]) -> Any:
    """A list of cells as one typed column: numbers stay numbers (numpy's, ``Decimal`` too) and
    date-times stay date-times, unless text or bools mix in; anything else is read as text."""

    types = {type(v) for v in values if v is not None}
    if types and not types & {bool, np.bool_} and all(issubclass(t, Real | Decimal) for t in types):
        # Python numbers; an int beyond int64 as text (its vote or position is then named, never nulled)
        values = [None if v is None else _plain_number(v) for v in values]
        types = {type(v) for v in values if v is not None}
    if types and (types <= {int, float} or types <= {bool} or types <= {str}):
        return pl.Series(values, strict=False)
    if types and (types <= {datetime.datetime} or types <= {datetime.date}) and len({_zone(v) for v in values}) == 1:
        return pl.Series(values)
    return pl.Series([None if v is None else _cell_text(v) for v in values], dtype=pl.String)


def _plain_number(v: Any) -> int | float | str:
    if isinstance(v, Integral):
        v = int(v)
        return v if -(2**63) <= v < 2**63 else _cell_text(v)
    return float(v)


def _zone(v: Any) -> Any:
    return getattr(v, "tzinfo", None) is not None


def _cell_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, Mapping | list | tuple | set):
        return f"{NESTED}{type(v).__name__}"
    try:
        return v.isoformat() if isinstance(v, datetime.date) else str(v)
    except ValueError:  # an int beyond Python's digit limit for str()
        return f"<int of {v.bit_length():,} bits>" if isinstance(v, int) else f"<{type(v).__name__}>"


__all__ = [
    "CANONICAL",
    "CLICK_WORDS",
    "DEFAULT_VOTE_MAP",
    "LINE_IN",
    "REQUIRED",
    "ROW_IN",
    "FeedbackColumns",
    "as_frame",
    "canonical_schema",
    "normalize_batches",
    "normalize_frame",
    "split_errors",
    "vote_words",
]
