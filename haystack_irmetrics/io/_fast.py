"""Fast TREC run reading with polars (optional extra ``columnar``).

polars parses the file in native code on all cores; doc ids stay in a polars Series and only
judged documents and tie-group members become Python strings (membership and duplicate tests
run on 64-bit hashes of the ids, and every hash hit is confirmed on the strings). Anything the
fast path does not take as is (fields separated by runs of blanks, extra or missing fields,
non-numeric or non-finite scores, empty ids, a doc twice in one query, whitespace other than the
separator inside a line) makes it give up, and the line-by-line reader takes over, which reads the
file or names the offending line.

Two entry points: :func:`read_trec_run_fast` reads a whole file; :func:`iter_trec_run_chunks`
streams it as pieces of whole queries (memory bounded by the piece size), for
:func:`~haystack_irmetrics.core.evaluation.evaluate_chunks`.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from ..core.inputs import ColumnarRun
from ..errors import NotStreamable
from .limits import LineLimit, capped, max_line_bytes

# Rows per streamed piece: ~100 MB of polars strings and numpy arrays at typical id lengths.
CHUNK_ROWS = 1 << 19
_NAMES = ("qid", "q0", "docid", "rank", "score", "tag")
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def available() -> bool:
    try:
        import polars  # noqa: F401
    except ImportError:
        return False
    return True


def _first_data_line(path: Path, compressed: bool) -> str:
    """The first data line ("" if none, or if a line before it is over the line limit)."""
    inner = gzip.open(path, "rb") if compressed else path.open("rb")  # noqa: SIM115 (closed by the wrapper)
    with io.TextIOWrapper(capped(inner), encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip() and not line.lstrip().startswith("#"):
                return "" if f.buffer.raw.overlong else line
    return ""


def _layout(path: Path) -> tuple[bool, str] | None:
    """``(gzip-compressed, field separator)``, or None when the first line is not 6 fields."""
    try:
        with path.open("rb") as f:
            compressed = f.read(2) == b"\x1f\x8b"
        first = _first_data_line(path, compressed)
    except (OSError, EOFError, zlib.error):  # unreadable or corrupt: the line reader names the problem
        return None
    delimiter = "\t" if "\t" in first else " "
    if len(first.rstrip("\r\n").split(delimiter)) != 6:
        return None
    return compressed, delimiter


# The line reader splits fields at any ASCII whitespace and ends a line at a lone \r (universal
# newlines); polars splits at its one separator, ends lines at \n and drops a \r at the end of
# any field. Where another such byte stands inside a line the two read different fields, so such
# a file goes to the line reader. The bytes that may not appear, per separator (besides a lone \r):
_STRAY = {" ": (b"\t", b"\x0b", b"\x0c"), "\t": (b" ", b"\x0b", b"\x0c")}
_SCAN_BYTES = 1 << 19


def _stray_in(buf: bytes | bytearray, start: int, end: int, delimiter: str, after_cr: bool) -> tuple[bool, bool]:
    """``(stray, ends_in_cr)`` for ``buf[start:end]``: whether it holds a byte polars would read into a
    field (``after_cr``: the previous piece ended in \\r), and whether it ends in \\r.

    ``memchr`` scans (``find``/``count``) of a piece that stays in cache.
    """
    if after_cr and buf[start] != 0x0A:
        return True, False
    if any(buf.find(c, start, end) != -1 for c in _STRAY[delimiter]):
        return True, False
    if buf.find(b"\r", start, end) == -1:  # memchr; count() is 30x slower: only for files with a \r
        return False, False
    cr = buf.count(b"\r", start, end)
    ends_in_cr = buf[end - 1] == 0x0D
    return cr - ends_in_cr != buf.count(b"\r\n", start, end), ends_in_cr


def _stray_bytes(path: Path, delimiter: str) -> bool:
    """Whether an uncompressed file holds a byte polars would read into a field (see ``_STRAY``), or a
    line over the line limit (the line reader then names it): ~50 ms for 270 MB read in cache-sized
    pieces (mapping the file costs twice that in page faults)."""
    after_cr = False
    limit = LineLimit(max_line_bytes())
    buf = bytearray(min(_SCAN_BYTES, limit.limit))  # pieces no longer than the limit: LineLimit is exact
    with path.open("rb", buffering=0) as f:
        while n := f.readinto(buf):
            stray, after_cr = _stray_in(buf, 0, n, delimiter, after_cr)
            if stray or limit.cut(buf, 0, n) is not None:
                return True
    return False  # a \r ending the file ends its last line for both readers


def _stray_in_data(data: bytes, delimiter: str) -> bool:
    """:func:`_stray_bytes` for a file's bytes in memory (their line lengths were checked as they were read)."""
    after_cr = False
    for start in range(0, len(data), _SCAN_BYTES):
        stray, after_cr = _stray_in(data, start, min(start + _SCAN_BYTES, len(data)), delimiter, after_cr)
        if stray:
            return True
    return False


def _gunzipped(path: Path) -> bytes | None:
    """The decompressed file, read in bounded pieces; None at a line over the limit (a gzip bomb of
    NULs stops there instead of filling memory; the line reader then names the line)."""
    with capped(gzip.open(path, "rb")) as f:
        data = f.read()
        return None if f.raw.overlong else data


def _schema() -> dict[str, Any]:
    import polars as pl

    # Ids as text ('301' stays a str id); the score parsed natively. The rank is never used, but a
    # non-integer one is rare enough to leave to the line reader, and integers parse faster.
    types = {"score": pl.Float64, "rank": pl.Int64}
    return {name: types.get(name, pl.String) for name in _NAMES}


def read_trec_run_fast(path: str | Path) -> ColumnarRun | None:
    """A :class:`ColumnarRun` from a well-formed TREC run file, or ``None`` to use the slow path."""
    import polars as pl

    path = Path(path)
    layout = _layout(path)
    if layout is None:
        return None
    compressed, delimiter = layout
    try:
        if compressed:  # decompressed here (polars would do it in memory too) to scan the bytes
            data = _gunzipped(path)
            if data is None or _stray_in_data(data, delimiter):
                return None
            source: Path | bytes = data
        else:
            source = path
            if _stray_bytes(path, delimiter):
                return None
    except (EOFError, zlib.error, gzip.BadGzipFile):  # the line reader names the problem
        return None
    try:
        # No comment_prefix (a third faster): a comment line reads as a "#" query id, checked below.
        df = pl.read_csv(source, separator=delimiter, has_header=False, schema=_schema(), quote_char=None)
    except (pl.exceptions.PolarsError, UnicodeDecodeError, ValueError):
        return None
    del source
    if _has_null(df):  # a missing field, or an empty one (runs of blanks), in any column
        return None
    df = df.select("qid", "docid", "score")
    if df.height == 0 or not _finite(df.get_column("score").to_numpy()):
        return None
    qids, lengths = _query_runs(df.get_column("qid"))
    if any(q[:1] == "#" for q in qids):
        return None  # a comment line: the line reader skips it
    if len(set(qids)) != len(qids):
        # A query's rows are split into blocks: group them (first appearance order, file order within).
        order = (
            df.with_row_index("row")
            .select(pl.col("row").min().over("qid").alias("first"), pl.col("row"))
            .sort("first", "row")
            .get_column("row")
            .to_numpy()
        )
        df = df.select(pl.all().gather(order))
        qids, lengths = _query_runs(df.get_column("qid"))
    return _columnar(df.get_column("docid"), df.get_column("score").to_numpy(), qids, lengths, str(path))


def iter_trec_run_chunks(path: str | Path, rows: int = CHUNK_ROWS) -> Iterator[ColumnarRun]:
    """Stream a TREC run file as :class:`ColumnarRun` pieces of whole queries, in file order.

    Raises :class:`NotStreamable` (possibly after some pieces) when the file is compressed, not
    well formed, or has a query in two separate blocks; read it whole then.
    """
    import polars as pl

    path = Path(path)
    layout = _layout(path)
    if layout is None or layout[0]:
        raise NotStreamable(str(path))
    if _stray_bytes(path, layout[1]):
        raise NotStreamable(str(path))
    # No comment_prefix: polars parses a third faster without it. A comment line then reads as a
    # row whose query id starts with "#" (or fails to parse), and either makes the stream give up.
    lazy = pl.scan_csv(path, separator=layout[1], has_header=False, schema=_schema(), quote_char=None)
    seen: set[str] = set()
    carry: tuple[str, int, Any, np.ndarray] | None = None  # the last query of a batch: may go on
    try:
        # Every field is read: with fewer, polars would not see a line's extra or missing fields.
        for batch in lazy.collect_batches(chunk_size=rows):
            if batch.height == 0:
                continue
            if _has_null(batch):
                raise NotStreamable(str(path))  # a missing field, or an empty one (runs of blanks)
            docs = batch.get_column("docid")
            scores = batch.get_column("score").to_numpy()
            if not _finite(scores):
                raise NotStreamable(str(path))
            qids, lengths = _query_runs(batch.get_column("qid"))
            if any(q[:1] == "#" for q in qids):
                raise NotStreamable(str(path))  # a comment line
            if carry is not None:
                qid, n, kept_docs, kept_scores = carry
                docs = pl.concat([kept_docs, docs])
                scores = np.concatenate([kept_scores, scores])
                if qids[0] == qid:
                    lengths[0] += n
                else:
                    qids.insert(0, qid)
                    lengths = np.concatenate([[n], lengths])
            cut = scores.size - int(lengths[-1])
            carry = (qids[-1], int(lengths[-1]), docs.slice(cut), scores[cut:])
            if cut:
                yield _piece(docs.slice(0, cut), scores[:cut], qids[:-1], lengths[:-1], seen, str(path))
        if carry is not None:
            qid, n, kept_docs, kept_scores = carry
            yield _piece(kept_docs, kept_scores, [qid], np.array([n], np.int64), seen, str(path))
    except (pl.exceptions.PolarsError, UnicodeDecodeError) as exc:
        raise NotStreamable(str(path)) from exc


def _piece(
    docs: Any, scores: np.ndarray, qids: list[str], lengths: np.ndarray, seen: set[str], source: str
) -> ColumnarRun:
    if len(set(qids)) != len(qids) or not seen.isdisjoint(qids):
        raise NotStreamable(source)  # a query in two blocks
    seen.update(qids)
    run = _columnar(docs, scores, qids, lengths, source)
    if run is None:
        raise NotStreamable(source)
    return run


def _has_null(df: Any) -> bool:
    return df.null_count().sum_horizontal().item() > 0


def _finite(scores: np.ndarray) -> bool:
    # One vectorised sum: finite unless a value is NaN/inf (or the sum overflows: check exactly).
    with np.errstate(over="ignore", invalid="ignore"):  # inf - inf or an overflowing sum: no warning
        return bool(np.isfinite(np.add.reduce(scores)) or np.isfinite(scores).all())


def _query_runs(qcol: Any) -> tuple[list[str], np.ndarray]:
    """Query ids of the runs of equal consecutive qids, and the runs' lengths."""
    runs = qcol.rle()
    return runs.struct.field("value").to_list(), runs.struct.field("len").to_numpy().astype(np.int64)


def _columnar(dcol: Any, scores: np.ndarray, qids: list[str], lengths: np.ndarray, source: str) -> ColumnarRun | None:
    """The ColumnarRun of rows grouped by query (``qids`` distinct, ``lengths`` rows each)."""
    import polars as pl

    offsets = np.zeros(len(qids) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # 32 bits of a 64-bit hash are enough to filter; every hit is confirmed on the strings.
    low = dcol.hash(seed=0).to_numpy().astype(np.uint32)
    empty = np.flatnonzero(low == np.uint32(pl.Series([""], dtype=pl.String).hash(seed=0).to_numpy()[0]))
    if "" in qids or any(d == "" for d in dcol.gather(empty).to_list()):
        return None  # an empty field: runs of blanks between fields
    if _has_duplicate(dcol, low, offsets):
        return None

    # Doc id == query id (BEIR drops those): equal hashes, confirmed on the strings.
    qhash = np.repeat(pl.Series(qids, dtype=pl.String).hash(seed=0).to_numpy().astype(np.uint32), lengths)
    maybe = np.flatnonzero(low == qhash)
    identical = np.zeros(scores.size, bool)
    if maybe.size:
        owner = np.searchsorted(offsets, maybe, side="right") - 1
        same = [d == qids[q] for d, q in zip(dcol.gather(maybe).to_list(), owner.tolist())]
        identical[maybe[np.asarray(same, bool)]] = True

    def ids_at(rows: np.ndarray) -> list[str]:
        return dcol.gather(np.asarray(rows, dtype=np.int64)).to_list()

    def find(candidates: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return _find(dcol, low, candidates)

    return ColumnarRun(qids, offsets, scores, ids_at, find, identical, source=source)


def _has_duplicate(dcol: Any, low: np.ndarray, offsets: np.ndarray) -> bool:
    """Whether a doc id appears twice in one query (equal hashes found by sorting, then confirmed)."""
    lengths = np.diff(offsets)
    if lengths.size and (lengths == lengths[0]).all() and lengths[0] > 1:
        # Equal-length queries: sort each row (short sorts, no query key needed).
        keys = np.sort(low.reshape(lengths.size, int(lengths[0])), axis=1)
        suspects = np.flatnonzero((keys[:, 1:] == keys[:, :-1]).any(axis=1))
    else:
        owner = np.repeat(np.arange(lengths.size, dtype=np.uint64), lengths)
        keys = (low.astype(np.uint64) << np.uint64(32)) ^ (owner * _GOLDEN)
        order = np.argsort(keys, kind="stable")
        tied = np.flatnonzero(keys[order][1:] == keys[order][:-1])
        if tied.size == 0:
            return False
        suspects = np.unique(np.searchsorted(offsets, order[tied], side="right") - 1)
    for q in suspects.tolist():
        docs = dcol.slice(int(offsets[q]), int(lengths[q])).to_list()
        if len(set(docs)) != len(docs):
            return True
    return False  # only hash collisions


def _find(dcol: Any, low: np.ndarray, candidates: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose doc id is a candidate, and which candidate (a hash filter, then the strings)."""
    import polars as pl

    empty = np.zeros(0, np.int64)
    if not candidates or low.size == 0:
        return empty, empty
    chash = pl.Series(candidates, dtype=pl.String).hash(seed=0).to_numpy().astype(np.uint32)
    # A bitmap of ~64 slots per candidate rules out almost every row with one gather.
    bits = 1 << max(12, min(chash.size.bit_length() + 6, 32))
    mask = np.uint32(bits - 1)
    table = np.zeros(bits, bool)
    table[chash & mask] = True
    maybe = np.flatnonzero(table[low & mask])
    ordered = np.sort(chash)
    at = np.minimum(np.searchsorted(ordered, low[maybe]), ordered.size - 1)
    rows = maybe[ordered[at] == low[maybe]]
    index = dict(zip(candidates, range(len(candidates))))
    which = np.fromiter(map(index.get, dcol.gather(rows).to_list(), repeat(-1)), np.int64, count=rows.size)
    ok = which >= 0
    return rows[ok], which[ok]
