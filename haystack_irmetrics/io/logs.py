"""Logs (files or tables) read in bounded batches of validated rows, their column roles a parameter.

:class:`Log` reads a log as a re-readable stream of validated batches, with an explicit error policy.
What the columns mean is the caller's: a :class:`~.log_columns.LogColumns` value names the source column of
each role and says how its values are read (``feedback.FeedbackColumns`` for votes, ``clicks.ClickColumns``
for clicks). ``on_error="raise"`` (default) stops at the first malformed row with a
:class:`~haystack_irmetrics.errors.MalformedRowError` naming its row (and line) and column.
``on_error="skip"`` leaves malformed rows out of every later step but counts and lists them
(:attr:`Log.skipped`): a report always shows how many rows were skipped and why.

Each reader yields raw frames of at most ``batch_rows`` rows carrying ``row`` (1-based data row,
header excluded) and, for text files, ``line`` (the physical line), plus the rows the reader itself
could not parse (a CSV row with the wrong number of fields, a JSONL line that is not a JSON object)
as error rows in the canonical layout. Nothing is held beyond one batch.

* **Parquet**: only the configured columns are read, batch by batch (``pyarrow.parquet``).
* **CSV/TSV** (``.tsv`` means tab-separated; ``.gz`` and other compressions by extension): a header
  row, every configured column read as text and parsed by :func:`~.log_columns.normalize_frame`. A blank
  line is a row of empty fields (so it is reported, not skipped), and line numbers stay exact. Fields
  spanning lines are not supported.
* **JSONL** (``.jsonl``, ``.ndjson``, ``.json``; gzip detected): one JSON object per line, blank lines
  ignored. Blocks parse in C (``pyarrow.json``); a block that fails is re-read line by line so the
  bad line is named.

polars and pyarrow are required when a :class:`Log` is made, naming the extra of the package whose roles it
reads (:attr:`~.log_columns.LogColumns.extra`).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._extras import LazyModule, require
from ..checks import choice, whole
from ..errors import FeedbackSchemaError, MalformedRowError, ParseError, UnknownStrategyError, shorten
from .limits import CappedRaw, capped, line_at, line_too_long
from .log_columns import LINE_IN, ROW_IN, LogColumns, as_frame, canonical_schema, normalize_frame, split_errors
from .text import first_line, not_utf8_error, open_text, overlong, reading, undecodable_line

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq
else:
    # A Log requires polars and pyarrow first, naming the extra of the package whose roles it reads.
    pl = LazyModule("polars", purpose="reading logs", extra="columnar")
    pa = LazyModule("pyarrow", purpose="reading logs", extra="columnar")
    pq = LazyModule("pyarrow.parquet", purpose="reading logs", extra="columnar")
    pacsv = LazyModule("pyarrow.csv", purpose="reading logs", extra="columnar")
    pajson = LazyModule("pyarrow.json", purpose="reading logs", extra="columnar")

FORMATS = ("jsonl", "csv", "tsv", "parquet")
DEFAULT_BATCH_ROWS = 1 << 18
_SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_COMPRESSED = (".gz", ".bz2", ".zst", ".lz4")

Batch = tuple["pl.DataFrame", "pl.DataFrame | None"]


def detect_format(path: str | os.PathLike[str], *, option: str = "fmt") -> str:
    """``"jsonl"``, ``"csv"``, ``"tsv"`` or ``"parquet"`` from the file name (a compression suffix is skipped).

    :param option: what the caller's user sets the format with, named by the error: the keyword ``fmt``
        (Python) or an option such as ``--format`` (the command line).
    :raises FeedbackSchemaError: the name does not tell the format.
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    while suffixes and suffixes[-1] in _COMPRESSED:
        suffixes.pop()
    fmt = _SUFFIXES.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        if option.startswith("-"):
            how = f"pass {option} {'|'.join(FORMATS)}"
        else:
            how = f"pass {option}= one of {', '.join(repr(f) for f in FORMATS)}"
        known = ", ".join(_SUFFIXES)
        raise FeedbackSchemaError(f"{path}: cannot tell the format from the name (known endings: {known}); {how}")
    return fmt


def iter_raw(
    source: Any,
    columns: LogColumns,
    *,
    fmt: str | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> Iterator[Batch]:
    """Yield ``(raw frame, reader error rows or None)`` per batch of ``source`` (a path or a table); the error
    rows are in the canonical layout of ``columns``' roles (:func:`~.log_columns.canonical_schema`)."""
    if not isinstance(source, str | os.PathLike):
        yield from _iter_table(source, list(columns.source_names()), batch_rows, columns.rows_name)
        return
    path = Path(source)
    if not path.exists():
        raise ParseError("file not found", path=str(path))
    if path.is_dir():
        raise ParseError("is a directory, not a file", path=str(path))
    fmt = fmt or detect_format(path)
    needed = list(columns.source_names())
    if fmt == "parquet":
        yield from _iter_parquet(path, needed, batch_rows)
    elif fmt in ("csv", "tsv"):
        yield from _iter_csv(path, needed, batch_rows, "\t" if fmt == "tsv" else ",", canonical_schema(columns))
    elif fmt == "jsonl":
        yield from _iter_jsonl(path, needed, batch_rows, canonical_schema(columns))
    else:
        raise FeedbackSchemaError(f"unknown format {fmt!r}; use one of {FORMATS}")


def _with_rows(df: pl.DataFrame, first_row: int, lines: np.ndarray | None = None) -> pl.DataFrame:
    extra = [pl.int_range(first_row, first_row + df.height, dtype=pl.Int64).alias(ROW_IN)]
    if lines is not None:
        extra.append(pl.Series(LINE_IN, lines, dtype=pl.Int64))
    return df.with_columns(extra)


def _iter_table(data: Any, needed: list[str], batch_rows: int, name: str) -> Iterator[Batch]:
    df = as_frame(data, name)
    missing = [c for c in needed if c not in df.columns]
    if missing and df.height:
        raise FeedbackSchemaError(f"{name}: column(s) {missing} not found; the rows have {df.columns}")
    df = df.select([c for c in needed if c in df.columns])
    for start in range(0, df.height, batch_rows):
        yield _with_rows(df.slice(start, batch_rows), start + 1), None


def _iter_parquet(path: Path, needed: list[str], batch_rows: int) -> Iterator[Batch]:
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise ParseError(f"not a readable Parquet file ({shorten(str(e))})", path=str(path)) from None
    names = _unique_columns(path, pf.schema_arrow.names, "schema")
    missing = [c for c in needed if c not in names]
    if missing:
        raise FeedbackSchemaError(f"{path}: column(s) {missing} not found; the log has {names}")
    first = 1
    batches = pf.iter_batches(batch_size=batch_rows, columns=needed)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, OSError) as e:  # a corrupt page: pyarrow raises as it decodes it
            raise ParseError(
                f"not a readable Parquet file from row {first} on ({shorten(str(e))})", path=str(path)
            ) from None
        df = pl.from_arrow(batch)
        assert isinstance(df, pl.DataFrame)
        yield _with_rows(df, first), None
        first += batch.num_rows


def _csv_header(path: Path, delimiter: str) -> list[str]:
    first = first_line(path)
    if not first.strip():
        raise ParseError("no header row (empty first line)", path=str(path), line=1)
    try:
        names = next(csv.reader([first.rstrip("\r\n")], delimiter=delimiter))
    except csv.Error as e:  # e.g. a quote that is not closed on the header line
        raise ParseError(f"the header row is not readable as CSV ({e})", path=str(path), line=1) from None
    return _unique_columns(path, names, "header")


def _unique_columns(path: Path, names: list[str], where: str) -> list[str]:
    """``names``, if no column name is repeated (which column a repeated name means is anyone's guess)."""
    seen: set[str] = set()
    repeated = sorted({n for n in names if n in seen or seen.add(n)})
    if repeated:
        raise FeedbackSchemaError(f"{path}: the {where} names column(s) {repeated} more than once; rename them")
    return names


def _iter_csv(path: Path, needed: list[str], batch_rows: int, delimiter: str, schema: pa.Schema) -> Iterator[Batch]:
    header = _csv_header(path, delimiter)
    missing = [c for c in needed if c not in header]
    if missing:
        raise FeedbackSchemaError(f"{path}: column(s) {missing} not found; the header has {header}")
    bad_lines: list[int] = []  # physical lines the parser rejected, in file order
    bad_rows: list[tuple[int, str]] = []

    def on_invalid(row: Any) -> str:
        text = shorten(row.text)
        bad_lines.append(int(row.number))
        bad_rows.append(
            (int(row.number), f"expected {row.expected_columns} fields, found {row.actual_columns}: {text!r}")
        )
        return "skip"

    with path.open("rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    # Compression by the magic bytes too: a gzip file need not be named .gz. The stream ends at a line
    # over the limit, or at a line end inside a quoted field (see _stopped).
    # Bytes that are not UTF-8 stop it too: pyarrow cannot hand such a row to on_invalid.
    stream = capped(pa.input_stream(str(path), compression="gzip" if gzipped else "detect"), quote=b'"', utf8=True)
    try:
        reader = pacsv.open_csv(
            stream,
            read_options=pacsv.ReadOptions(use_threads=False, block_size=max(1 << 16, min(batch_rows * 64, 1 << 26))),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter, invalid_row_handler=on_invalid, ignore_empty_lines=False
            ),
            convert_options=pacsv.ConvertOptions(
                include_columns=needed, column_types={c: pa.string() for c in needed}, strings_can_be_null=False
            ),
        )
    except pa.ArrowInvalid as e:
        raise _stopped(path, stream.raw, gzipped) or _csv_error(path, e) from None
    valid_before = 0  # valid rows yielded so far
    reported = 0
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            batch = None
        except (pa.ArrowInvalid, OSError, EOFError) as e:  # OSError: a corrupt compressed stream
            raise _stopped(path, stream.raw, gzipped) or _csv_error(path, e) from None
        # Once the stream stopped, the rows pyarrow still returns end in the cut line: none is used.
        if (stop := _stopped(path, stream.raw, gzipped)) is not None:
            raise stop
        if batch is None:
            break
        n = batch.num_rows
        # Line of the v-th valid row: the v-th data line not rejected by the parser (see module docs).
        rejected = np.asarray(bad_lines, dtype=np.int64) - 1  # data-line indices, header excluded
        v = np.arange(valid_before + 1, valid_before + n + 1, dtype=np.int64)
        data_line = v + np.searchsorted(rejected - np.arange(rejected.size), v, side="right")
        df = pl.from_arrow(batch)
        assert isinstance(df, pl.DataFrame)
        df = df.with_columns(pl.Series(ROW_IN, data_line), pl.Series(LINE_IN, data_line + 1))
        valid_before += n
        errors = None
        if len(bad_rows) > reported:
            errors = _error_rows(
                schema,
                [r - 1 for r, _ in bad_rows[reported:]],
                [r for r, _ in bad_rows[reported:]],
                [m for _, m in bad_rows[reported:]],
                None,
            )
            reported = len(bad_rows)
        yield df.select([*needed, ROW_IN, LINE_IN]), errors
    if len(bad_rows) > reported:
        rest = bad_rows[reported:]
        yield (
            _empty_raw(needed),
            _error_rows(schema, [r - 1 for r, _ in rest], [r for r, _ in rest], [m for _, m in rest], None),
        )


def _empty_raw(needed: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {**{c: pl.Series([], dtype=pl.String) for c in needed}, ROW_IN: [], LINE_IN: []},
        schema_overrides={ROW_IN: pl.Int64, LINE_IN: pl.Int64},
    )


def _stopped(path: Path, raw: CappedRaw, gzipped: bool) -> ParseError | None:
    """The error for a CSV stream that ended early: a line over the limit, or a field spanning lines."""
    if raw.overlong:
        # The text cut at the limit: the long line is the last one pyarrow saw.
        return line_too_long(path, _line_at(path, raw.position - 1, gzipped), raw.limit)
    if raw.not_utf8 is not None:
        offset, reason = raw.not_utf8
        return not_utf8_error(reason, path, _line_at(path, offset, gzipped))
    if raw.quoted_line_end is not None:
        return ParseError(
            "a quoted field spans lines (or a quote is not closed); fields spanning lines are not "
            "supported: line numbers would no longer match the file's",
            path=str(path),
            line=_line_at(path, raw.quoted_line_end, gzipped),
        )
    return None


def _line_at(path: Path, offset: int, gzipped: bool) -> int:
    with pa.input_stream(str(path), compression="gzip" if gzipped else "detect") as f:
        return line_at(f, offset)


def _csv_error(path: Path, e: Exception) -> ParseError:
    if "UTF8" in str(e) or "UTF-8" in str(e):
        return ParseError("not UTF-8 text", path=str(path), line=undecodable_line(path))
    return ParseError(f"not readable as CSV ({e})", path=str(path))


def _iter_jsonl(path: Path, needed: list[str], batch_rows: int, schema: pa.Schema) -> Iterator[Batch]:
    seen: set[str] = set()
    row = 0
    lineno = 0
    long_line = None
    with reading(path, lambda: lineno), open_text(path) as f:
        while long_line is None:
            lines = list(islice(f, batch_rows))
            if overlong(f):  # the bytes end inside a line over the limit: the last line read
                lines += list(f)  # what the text reader still holds (at most a buffer or two)
                long_line = lineno + len(lines)
                del lines[-1:]
            if not lines:
                break
            keep = [i for i, ln in enumerate(lines) if ln.strip()]
            line_numbers = np.asarray(keep, dtype=np.int64) + lineno + 1
            lineno += len(lines)
            rows = np.arange(row + 1, row + len(keep) + 1, dtype=np.int64)
            row += len(keep)
            if not keep:
                continue
            text = "".join(lines[i] if lines[i].endswith("\n") else lines[i] + "\n" for i in keep)
            df, errors = _jsonl_block(text, [lines[i] for i in keep], needed)
            seen.update(c for c in needed if c in df.columns and df[c].null_count() < df.height)
            df = df.with_columns(pl.lit(None, pl.String).alias(c) for c in needed if c not in df.columns)
            good = df["_i"].to_numpy()
            df = df.with_columns(pl.Series(ROW_IN, rows[good]), pl.Series(LINE_IN, line_numbers[good])).drop("_i")
            if errors is not None:
                idx = [i for i, _ in errors]
                errors = _error_rows(
                    schema, rows[idx].tolist(), line_numbers[idx].tolist(), [m for _, m in errors], None
                )
            yield df.select([*needed, ROW_IN, LINE_IN]), errors
        if long_line is not None:  # after the rows before it
            raise line_too_long(path, long_line, f.buffer.raw.limit)
    unseen = [c for c in needed if c not in seen]
    if row and unseen:
        raise FeedbackSchemaError(f"{path}: column(s) {unseen} appear in no row of the log (check the column names)")


def _jsonl_block(text: str, lines: list[str], needed: list[str]) -> tuple[pl.DataFrame, list[tuple[int, str]] | None]:
    """Parse one block: C parser when it can, else line by line (names each bad line)."""

    try:
        if not _c_parser_safe(text, lines):
            raise pa.ArrowInvalid("left to json.loads")
        table = pajson.read_json(io.BytesIO(text.encode("utf-8")))
        if table.num_rows == len(lines):
            table = table.select([c for c in needed if c in table.column_names])
            df = pl.from_arrow(table)
            assert isinstance(df, pl.DataFrame)
            if all(_scalar(df.schema[c]) for c in df.columns):
                return df.with_row_index("_i"), None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    records: list[dict[str, Any]] = []
    index: list[int] = []
    errors: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        try:
            obj = json.loads(line.rstrip("\r\n"))
        except json.JSONDecodeError as e:
            errors.append((i, f"invalid JSON: {e.msg} (column {e.colno})"))
            continue
        except RecursionError:  # json's decoder recurses once per nesting level
            errors.append((i, "invalid JSON: nested too deeply"))
            continue
        if not isinstance(obj, dict):
            errors.append((i, f"expected a JSON object, found {type(obj).__name__}"))
            continue
        records.append({c: obj.get(c) for c in needed})
        index.append(i)
    df = as_frame(records) if records else pl.DataFrame({c: pl.Series([], dtype=pl.String) for c in needed})
    df = df.with_columns(pl.Series("_i", index, dtype=pl.UInt32))
    return df, errors or None


# pyarrow's JSON parser recurses once per nesting level and overflows the C stack (a segfault near
# 20,000 levels). A line with more openers than this cannot be nested deeper, so only such lines (at
# least this long) send their block to json.loads, which raises instead. Log rows are flat.
_C_PARSER_MAX_OPENERS = 512


def _c_parser_safe(text: str, lines: list[str]) -> bool:
    """Whether pyarrow's JSON parser may read the block ``text`` (``lines`` joined, each ending in \n).

    Every line must open an object at its first character: pyarrow 26 segfaults on a block whose
    first line is ``null`` (found by tests/test_fuzz.py), and a log row is an object anyway.
    No line may nest deeper than the parser's stack allows (see ``_C_PARSER_MAX_OPENERS``).
    """
    if text.count("\n{") + text.startswith("{") != len(lines):  # C-level counts
        return False
    limit = _C_PARSER_MAX_OPENERS
    if max(map(len, lines), default=0) <= limit:  # the usual case: no line long enough to nest deeply
        return True
    return not any(len(ln) > limit and ln.count("[") + ln.count("{") > limit for ln in lines)


def _scalar(dtype: Any) -> bool:
    return not dtype.is_nested() and dtype.__class__.__name__ != "Struct"


def _error_rows(
    schema: pa.Schema, rows: list[int], lines: list[int] | None, reasons: list[str], column: str | None
) -> pl.DataFrame:
    """Reader-level malformed rows in the canonical layout ``schema`` (only row, line and the error columns set)."""

    n = len(rows)
    layout = pl.from_arrow(schema.empty_table()).schema
    data = {name: pl.Series(name, [None] * n, dtype=dtype) for name, dtype in layout.items()}
    data["row"] = pl.Series("row", rows, dtype=pl.Int64)
    data["line"] = pl.Series("line", lines if lines is not None else [None] * n, dtype=pl.Int64)
    data["error"] = pl.Series("error", reasons, dtype=pl.String)
    data["error_column"] = pl.Series("error_column", [column] * n, dtype=pl.String)
    return pl.DataFrame(data)


# -- the log: batches validated, errors handled by policy ----------------------------------------

ON_ERROR = ("raise", "skip")


@dataclass(frozen=True)
class ReadStats:
    """What the last full pass over a log saw: data rows, usable rows, rows skipped as malformed."""

    rows: int
    usable: int
    skipped: int


class Log:
    """A log (file path or in-memory table) whose roles are ``columns``, read lazily in batches of ``batch_rows``.

    :param source: a ``.jsonl``/``.ndjson``/``.json``, ``.csv``/``.tsv`` or ``.parquet`` path (compressed
        text by extension or magic bytes), or a table: list of row dicts, dict of columns, polars or
        pandas frame, pyarrow Table.
    :param columns: the roles and their source columns (a :class:`~.log_columns.LogColumns`).
    :param fmt: ``"jsonl"``, ``"csv"``, ``"tsv"`` or ``"parquet"``; default from the file name.
    :param on_error: ``"raise"`` (default) or ``"skip"`` (count and list malformed rows, see module docs).
    :param words: per ``"number"`` role, the words its values may be (``{role: {word: value}}``, lower case;
        a vote log's vote map).
    :param position_base: the first position in the log (``1``; ``0`` for 0-based positions).
    :param batch_rows: rows per batch (memory bound of the columnar path).
    :raises MissingDependencyError: polars or pyarrow is not installed (naming ``columns``' extra).
    """

    def __init__(
        self,
        source: Any,
        *,
        columns: LogColumns,
        fmt: str | None = None,
        on_error: str = "raise",
        words: Mapping[str, Mapping[str, float]] | None = None,
        position_base: int = 1,
        batch_rows: int = DEFAULT_BATCH_ROWS,
    ) -> None:
        require("polars", "pyarrow", purpose=columns.purpose, extra=columns.extra)
        choice(on_error, "on_error", ON_ERROR, error=UnknownStrategyError)
        whole(position_base, "position_base", error=UnknownStrategyError)  # 1 or 0
        whole(batch_rows, "batch_rows", least=1, error=UnknownStrategyError)
        self.source = source
        self.name = os.fspath(source) if isinstance(source, str | os.PathLike) else columns.rows_name
        self.columns = columns
        self.fmt = fmt
        self.on_error = on_error
        self.words = dict(words or {})
        self.position_base = position_base
        self.batch_rows = batch_rows
        self._skipped: pl.DataFrame | None = None
        self._stats: ReadStats | None = None
        if not isinstance(source, str | os.PathLike):
            # Read an in-memory table once, so a generator or a mutable list is not read twice.
            self.source = as_frame(source, columns.rows_name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, on_error={self.on_error!r})"

    def batches(self) -> Iterator[pl.DataFrame]:
        """Validated batches in the canonical columns (:mod:`.log_columns`), malformed rows handled per policy.

        After a complete pass, :attr:`skipped` and :attr:`stats` describe it.
        """

        skipped: list[pl.DataFrame] = []
        rows = usable = 0
        for raw, reader_errors in iter_raw(self.source, self.columns, fmt=self.fmt, batch_rows=self.batch_rows):
            norm = normalize_frame(
                raw, self.columns, words=self.words, position_base=self.position_base, source=self.name
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

        parts = list(self.batches())
        return pl.concat(parts) if parts else empty_rows(self.columns)

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


def empty_rows(columns: LogColumns | type[LogColumns]) -> pl.DataFrame:
    """No rows, in the canonical columns of ``columns``' roles (without the error columns)."""
    frame = pl.from_arrow(canonical_schema(columns).empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.drop("error", "error_column", "error_value")


def _empty_skipped() -> pl.DataFrame:
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


__all__ = [
    "DEFAULT_BATCH_ROWS",
    "FORMATS",
    "ON_ERROR",
    "Log",
    "ReadStats",
    "detect_format",
    "empty_rows",
    "iter_raw",
]
