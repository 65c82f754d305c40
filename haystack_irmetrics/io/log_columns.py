"""Which column of a log holds what: roles, the columns a log names for them, and raw columns validated into
the canonical columns in one vectorised pass per batch (polars).

A log is one row per event (a shown document with a vote, a click, ...). Its *roles* are declared by the
package that reads it, as a frozen dataclass of :class:`LogColumns` with one field per role (the source
column's name; ``None`` switches an optional role off) and a :class:`Role` per field saying how its values
are read: ``feedback.FeedbackColumns`` (votes) and ``clicks.ClickColumns`` (clicks). The readers
(:mod:`.logs`) take such a value as a parameter and know no role by name.

Every batch comes out as ``row`` (1-based data row of the source, header excluded), ``line`` (the physical
line of a CSV / JSONL source, null otherwise), one column per role in the dataclass's field order, and
``error``, ``error_column``, ``error_value``. Nothing is dropped here: a malformed row carries its reason, the
source column and the cell as text; the caller splits (:func:`split_errors`) and applies its error policy.

The rules, by a role's ``rule``:

* ``"id"`` (required): strings (surrounding blanks removed) or integers (read as their decimal text); null
  or blank is malformed. A float or nested column is a :class:`FeedbackSchemaError`.
* ``"position"``: an integer ``>= position_base`` (``1`` by default; ``0`` for 0-based logs), as int,
  integral float or numeric text; stored 1-based. Missing, fractional or too small is malformed.
* ``"number"``: a number, a boolean, numeric text or a word of the words the reader is given for the role
  (case-insensitive). Null or blank is no value (not an error); NaN, infinities and unknown words are
  malformed.
* ``"timestamp"``: a datetime/date column, a number, numeric text or ISO 8601 text; becomes a float (epoch
  microseconds for dates).
* ``"binary"``: 0 or 1, a boolean, or one of ``yes``/``no``, ``true``/``false`` (case-insensitive);
  missing, another number or another word is malformed.
* ``"probability"``: a number in (0, 1]; missing or outside is malformed.
* ``"text"``: any scalar, read as text; blank is null.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from decimal import Decimal
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

import numpy as np

from .._extras import LazyModule
from ..errors import FeedbackSchemaError

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa
else:
    # The packages that read logs require polars and pyarrow first, naming their own extra.
    pl = LazyModule("polars", purpose="reading logs", extra="columnar")
    pa = LazyModule("pyarrow", purpose="reading logs", extra="columnar")

Rule = Literal["id", "position", "number", "timestamp", "binary", "probability", "text"]

#: Words a ``"binary"`` column may hold besides 0/1 and booleans (case-insensitive).
BINARY_WORDS: Mapping[str, float] = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}
#: Columns the readers attach to raw rows: the data row (1-based) and the physical line of text files.
ROW_IN = "__row__"
LINE_IN = "__line__"
#: Marks a cell that held a JSON object or list (rows given as dicts); such a cell is malformed.
NESTED = "\x00nested:"
#: The deepest position a log may record (as a cutoff: ranks beyond it are no ranking).
MAX_POSITION = 2**31 - 1
#: The columns every normalized batch ends with.
ERROR_COLUMNS = ("error", "error_column", "error_value")


@dataclass(frozen=True)
class Role:
    """How one role's values are read: its :data:`Rule`; ``label``: how messages name an ``"id"`` role's
    values (``"query"``, ``"document"``); ``shares_column``: the role may name a column another role reads
    (a query's text in its id column)."""

    rule: Rule
    label: str = ""
    shares_column: bool = False

    @property
    def arrow_type(self) -> Any:
        if self.rule in ("id", "text"):
            return pa.string()
        return pa.int64() if self.rule == "position" else pa.float64()


@dataclass(frozen=True)
class LogColumns:
    """Base of a log's columns: a subclass is a frozen dataclass with one field per role (the source column,
    ``None``: absent) and sets :attr:`ROLES` (the :class:`Role` of each field), :attr:`purpose` and
    :attr:`extra` (what reads such logs and the pip extra it needs, named when polars or pyarrow is missing)
    and :attr:`rows_name` (how messages name an in-memory table of such rows)."""

    ROLES: ClassVar[Mapping[str, Role]] = {}
    purpose: ClassVar[str] = "reading logs"
    extra: ClassVar[str] = "columnar"
    rows_name: ClassVar[str] = "log rows"

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for f in fields(self):
            name = getattr(self, f.name)
            role = self.ROLES[f.name]
            if name is None:
                if role.rule == "id":
                    raise FeedbackSchemaError(f"the {f.name!r} column is required; give its name")
                continue
            if not isinstance(name, str) or not name:
                raise FeedbackSchemaError(f"column name for {f.name!r} must be a non-empty str, got {name!r}")
            if name in seen and not role.shares_column:
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
    def roles(cls) -> tuple[str, ...]:
        """The canonical names, in the order batches hold them."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def checked(cls, value: Mapping[str, str | None] | None) -> dict[str, str | None]:
        """``value`` (``{role: column}`` over the defaults; None: the defaults) as keywords of this class, every
        role checked; a subclass's ``coerce`` makes the value from them (``cls(**cls.checked(value))``).

        :raises FeedbackSchemaError: a role the class does not have, or ``value`` not a dict.
        """
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise FeedbackSchemaError(f"columns must be a {cls.__name__} or a dict, got {type(value).__name__}")
        unknown = set(value) - set(cls.roles())
        if unknown:
            raise FeedbackSchemaError(f"unknown column roles {sorted(unknown)}; known: {list(cls.roles())}")
        return dict(value)


def canonical_schema(columns: type[LogColumns] | LogColumns) -> pa.Schema:
    """The pyarrow schema of normalized batches of such logs: ``row``, ``line``, the roles, the error columns."""
    roles = columns.ROLES
    return pa.schema(
        [
            ("row", pa.int64()),
            ("line", pa.int64()),
            *((name, roles[name].arrow_type) for name in columns.roles()),
            *((name, pa.string()) for name in ERROR_COLUMNS),
        ]
    )


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


def _text(src: str, kind: str, field: str, lenient: bool) -> pl.Expr:
    """Text of an id (``lenient`` False: numbers other than ints are refused) or of a ``"text"`` role."""
    if kind == "str":
        return _blank_to_null(pl.col(src).cast(pl.String).str.strip_chars())
    if kind == "int" or (kind in ("float", "bool", "datetime") and lenient):
        return pl.col(src).cast(pl.String)
    if kind == "null":
        return pl.col(src).cast(pl.String)
    raise FeedbackSchemaError(f"column {src!r} ({field}) has type {kind}; ids and labels must be text or integers")


def _raw(src: str, kind: str) -> pl.Expr:
    if kind == "other":
        return pl.lit(None, pl.String)
    return pl.col(src).cast(pl.String)


def _number(src: str, kind: str, field: str, words: Mapping[str, float] | None = None) -> tuple[pl.Expr, pl.Expr]:
    """(value as Float64 or null, 'cannot parse' mask) for a numeric field."""

    if kind in ("int", "float", "bool"):
        return pl.col(src).cast(pl.Float64), pl.lit(False)
    if kind == "null":
        return pl.col(src).cast(pl.Float64), pl.lit(False)
    if kind == "str":
        text = _blank_to_null(pl.col(src).cast(pl.String).str.strip_chars())
        value = text.cast(pl.Float64, strict=False)
        if words:
            word = text.str.to_lowercase().replace_strict(dict(words), default=None, return_dtype=pl.Float64)
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


Check = tuple[str, "pl.Expr", str, "pl.Expr"]  # (source column, bad mask, reason, the cell as text)


def _read_role(
    name: str, role: Role, src: str, kind: str, words: Mapping[str, float] | None, position_base: int
) -> tuple[pl.Expr, list[Check]]:
    """The value of one role's column and the checks of its cells (see the module docs for each rule)."""
    raw = _raw(src, kind)
    if role.rule in ("id", "text"):
        value = _text(src, kind, name, lenient=role.rule == "text")
        return value, [(src, value.is_null(), f"{role.label} id is missing or empty", raw)] if role.rule == "id" else []
    if role.rule == "position":
        number, unparsable = _number(src, kind, name)
        integral = number.is_finite() & (number == number.floor())
        usable = integral & (number >= position_base) & (number <= MAX_POSITION)
        checks = [
            (src, number.is_null() & ~unparsable, f"{name} is missing", raw),
            (src, unparsable | (number.is_not_null() & ~integral), f"{name} is not an integer", raw),
            (src, integral & (number < position_base), f"{name} is below position_base={position_base}", raw),
            (src, integral & (number > MAX_POSITION), f"{name} is beyond {MAX_POSITION:,}", raw),
        ]
        return pl.when(usable).then(number - (position_base - 1)).cast(pl.Int64), checks
    if role.rule in ("number", "timestamp"):
        if role.rule == "number":
            number, unparsable = _number(src, kind, name, words)
            reason = f"{name} is neither a number nor a word of the {name} map"
        else:
            number, unparsable = _timestamp(src, kind)
            reason = f"{name} is neither a number nor an ISO 8601 date-time"
        checks = [
            (src, unparsable, reason, raw),
            (src, number.is_not_null() & ~number.is_finite(), f"{name} is not a finite number", raw),
        ]
        return pl.when(number.is_finite()).then(number), checks
    if role.rule == "binary":
        number, unparsable = _number(src, kind, name, BINARY_WORDS)
        binary = (number == 0.0) | (number == 1.0)
        checks = [
            (src, number.is_null() & ~unparsable, f"{name} is missing", raw),
            (src, unparsable, f"{name} is neither 0/1 nor yes/no or true/false", raw),
            (src, number.is_not_null() & ~binary.fill_null(False), f"{name} is not 0 or 1", raw),
        ]
        return pl.when(binary).then(number), checks
    number, unparsable = _number(src, kind, name)  # "probability"
    inside = number.is_finite() & (number > 0.0) & (number <= 1.0)
    checks = [
        (src, number.is_null() & ~unparsable, f"{name} is missing", raw),
        (src, unparsable | (number.is_not_null() & ~inside), f"{name} is not a number in (0, 1]", raw),
    ]
    return pl.when(inside).then(number), checks


def normalize_frame(
    df: pl.DataFrame,
    columns: LogColumns,
    *,
    words: Mapping[str, Mapping[str, float]] | None = None,
    position_base: int = 1,
    source: str = "log",
) -> pl.DataFrame:
    """Validate and rename one frame of raw rows; ``df`` carries ``__row__`` (and may carry ``__line__``).

    :param words: per ``"number"`` role, the words it accepts (``{role: {word: value}}``, lower case).
    Returns the canonical columns plus ``error``, ``error_column``, ``error_value`` (see module docs).
    """

    present = set(df.columns)
    wanted = columns.configured()
    missing = sorted({src for src in wanted.values() if src not in present})
    if missing:
        available = [c for c in df.columns if c not in (ROW_IN, LINE_IN)]
        raise FeedbackSchemaError(f"{source}: column(s) {missing} not found; the log has {available}")
    kinds = {src: _kind(df.schema[src]) for src in wanted.values()}

    values: dict[str, pl.Expr] = {}
    checks: list[Check] = []
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
    for name in columns.roles():
        role, src = columns.ROLES[name], wanted.get(name)
        if src is None:
            dtype = {"id": pl.String, "text": pl.String, "position": pl.Int64}.get(role.rule, pl.Float64)
            values[name] = pl.lit(None, dtype)
            continue
        values[name], more = _read_role(name, role, src, kinds[src], (words or {}).get(name), position_base)
        checks += more

    error = pl.coalesce([pl.when(bad).then(pl.lit(reason)) for _, bad, reason, _ in checks])
    error_column = pl.coalesce([pl.when(bad).then(pl.lit(src)) for src, bad, _, _ in checks])
    error_value = pl.coalesce([pl.when(bad).then(raw) for _, bad, _, raw in checks])
    line = pl.col(LINE_IN).cast(pl.Int64) if LINE_IN in present else pl.lit(None, pl.Int64)
    try:
        return df.select(
            pl.col(ROW_IN).cast(pl.Int64).alias("row"),
            line.alias("line"),
            *(values[name].alias(name) for name in columns.roles()),
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


def as_frame(data: Any, what: str = "log rows") -> pl.DataFrame:
    """A polars frame from a pyarrow Table/RecordBatch, a polars or pandas frame, a dict of columns or row dicts.

    :param what: how messages name the rows (``"feedback rows"``).
    """

    if isinstance(data, pl.DataFrame):
        return data
    if isinstance(data, list):
        if data and not all(isinstance(r, Mapping) for r in data):
            bad = next(i for i, r in enumerate(data) if not isinstance(r, Mapping))
            raise FeedbackSchemaError(f"row {bad + 1} of the {what} is {type(data[bad]).__name__}, not a dict")
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
        raise FeedbackSchemaError(f"cannot read a table of {what} from {type(data).__name__}")
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
    "BINARY_WORDS",
    "ERROR_COLUMNS",
    "LINE_IN",
    "MAX_POSITION",
    "NESTED",
    "ROW_IN",
    "LogColumns",
    "Role",
    "Rule",
    "arrow_frame",
    "arrow_table",
    "as_frame",
    "canonical_schema",
    "normalize_frame",
    "split_errors",
]
