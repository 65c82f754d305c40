"""Fast TREC run reading with polars (optional extra ``columnar``).

polars parses the file in native code on all cores; doc ids stay in a polars Series and only
judged documents and tie-group members become Python strings. Anything the fast path does not
take as is (fields separated by runs of blanks, extra or missing fields, non-numeric or
non-finite scores, empty ids, a doc twice in one query) makes it return ``None``, and the
line-by-line reader takes over, which reads the file or names the offending line.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from ..core.inputs import ColumnarRun


def available() -> bool:
    try:
        import polars  # noqa: F401
    except ImportError:
        return False
    return True


def _first_data_line(path: Path, compressed: bool) -> str:
    opener = gzip.open if compressed else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip() and not line.lstrip().startswith("#"):
                return line
    return ""


def read_trec_run_fast(path: str | Path) -> ColumnarRun | None:
    """A :class:`ColumnarRun` from a well-formed TREC run file, or ``None`` to use the slow path."""
    import polars as pl

    path = Path(path)
    with path.open("rb") as f:
        compressed = f.read(2) == b"\x1f\x8b"
    first = _first_data_line(path, compressed)
    delimiter = "\t" if "\t" in first else " "
    if len(first.rstrip("\r\n").split(delimiter)) != 6:
        return None
    try:
        # polars reads gzip by itself from the magic bytes.
        df = pl.read_csv(
            path,
            separator=delimiter,
            has_header=False,
            columns=[0, 2, 4],
            infer_schema=False,  # every column as text: '301' stays a str id
            quote_char=None,
            comment_prefix="#",
        )
        df.columns = ["qid", "docid", "score"]
        df = df.with_columns(pl.col("score").cast(pl.Float64, strict=True))
    except (pl.exceptions.PolarsError, UnicodeDecodeError, ValueError):
        return None
    if df.height == 0 or df.null_count().sum_horizontal().item() > 0:
        return None
    scores = df.get_column("score").to_numpy()
    if not np.isfinite(scores).all():
        return None
    qcol = df.get_column("qid")
    dcol = df.get_column("docid")
    if (qcol.str.len_bytes() == 0).any() or (dcol.str.len_bytes() == 0).any():
        return None

    runs = qcol.rle_id().to_numpy()
    n_queries = qcol.n_unique()
    if runs[-1] + 1 != n_queries:
        # A query's rows are split into blocks: group them (first appearance order, file order within).
        order = (
            df.with_row_index("row")
            .select(pl.col("row").min().over("qid").alias("first"), pl.col("row"))
            .sort("first", "row")
            .get_column("row")
            .to_numpy()
        )
        scores = scores[order]
        qcol = qcol.gather(order)
        dcol = dcol.gather(order)
        runs = qcol.rle_id().to_numpy()
    starts = np.flatnonzero(np.diff(runs, prepend=-1))
    qids = qcol.gather(starts).to_list()
    offsets = np.append(starts, runs.size).astype(np.int64)

    # A doc twice in one query: hash (query, doc) and look for equal neighbours after sorting.
    keys = dcol.hash(seed=0).to_numpy() ^ (runs.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    keys.sort()
    if keys.size > 1 and (keys[1:] == keys[:-1]).any():
        return None  # (or a hash collision: the slow path decides, exactly)

    identical = (qcol == dcol).to_numpy()

    def ids_at(rows: np.ndarray) -> list[str]:
        return dcol.gather(np.asarray(rows, dtype=np.int64)).to_list()

    def find(candidates: list[str]) -> np.ndarray:
        if not candidates:
            return np.full(dcol.len(), -1, np.int64)
        index = pl.Series(range(len(candidates)), dtype=pl.Int64)
        return dcol.replace_strict(candidates, index, default=-1, return_dtype=pl.Int64).to_numpy()

    return ColumnarRun(qids, offsets, scores, ids_at, find, identical, source=str(path))
