"""Inputs given as three columns (query ids, doc ids, values): validated row by row and grouped
into ``{qid: {docid: value}}``, errors naming the row (or the file line the row came from)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import DuplicateDocumentError, LengthMismatchError
from .validation import check_id, non_number_types, shown


def columns_to_dict(
    query_ids: Sequence[str] | np.ndarray,
    doc_ids: Sequence[str] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    source: str,
    line_numbers: Sequence[int] | None,
    what: str,
    error: type[Exception],
) -> dict[str, dict[str, float]]:
    qs, ds = as_list(query_ids), as_list(doc_ids)
    if not isinstance(values, np.ndarray) and hasattr(values, "to_numpy"):  # a pyarrow array or polars Series
        values = np.asarray(as_list(values), dtype=object) if getattr(values, "null_count", 0) else to_numpy(values)
    if len(qs) != len(ds) or len(qs) != len(values):
        raise LengthMismatchError(
            f"{source}: columns have different lengths (queries {len(qs)}, documents {len(ds)}, {what}s {len(values)})"
        )
    for kind, ids in (("query", qs), ("document", ds)):
        if not set(map(type, ids)) <= {str}:
            for i, value in enumerate(ids):
                check_id(kind, value, f" ({source} row {row_number(i, line_numbers)})")
    check_column_types(values, source, line_numbers, what, error)
    try:
        vs = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond any float
        for i, v in enumerate(values):
            try:
                float(v)
            except (TypeError, ValueError, OverflowError):
                raise error(
                    f"{source} row {row_number(i, line_numbers)}: {what} {shown(v)} is not a finite number"
                ) from None
        raise
    bad = np.flatnonzero(~np.isfinite(vs))
    if bad.size:
        i = int(bad[0])
        raise error(f"{source} row {row_number(i, line_numbers)}: {what} {values[i]!r} is not a finite number")
    out: dict[str, dict[str, float]] = {}
    # Integer labels stay int (pytrec_eval, and readers of the dict, expect them).
    vlist = values.tolist() if isinstance(values, np.ndarray) and values.dtype.kind in "iu" else vs.tolist()
    n = len(qs)
    if n == 0:
        return out
    # Rows of one query are usually contiguous: find the blocks with one vectorised comparison
    # and build each with a C-level dict(zip()).
    q_arr = np.asarray(qs, dtype=object)
    starts = np.flatnonzero(np.concatenate(([True], q_arr[1:] != q_arr[:-1]))).tolist()
    for start, end in zip(starts, [*starts[1:], n]):
        q = qs[start]
        block = dict(zip(ds[start:end], vlist[start:end]))
        target = out.get(q)
        if target is None:
            if len(block) != end - start:
                _raise_duplicate(ds, start, end, q, source, line_numbers)
            out[q] = block
        else:
            for j, d in enumerate(ds[start:end], start):
                if d in target:
                    _raise_duplicate(ds, 0, j + 1, q, source, line_numbers, qs)
                target[d] = vlist[j]
    return out


def as_list(column: Any) -> list:
    """A column as a list of Python values: a numpy array, a pyarrow array, a polars Series or a sequence."""
    if isinstance(column, np.ndarray):
        return column.tolist()
    for method in ("to_pylist", "to_list"):  # pyarrow, polars
        if hasattr(column, method):
            return list(getattr(column, method)())
    return list(column)


def to_numpy(column: Any) -> np.ndarray:
    try:
        return np.asarray(column.to_numpy(zero_copy_only=False))  # pyarrow
    except TypeError:
        return np.asarray(column.to_numpy())  # polars


def check_column_types(
    values: Sequence[float] | np.ndarray,
    source: str,
    line_numbers: Sequence[int] | None,
    what: str,
    error: type[Exception],
) -> None:
    """Every value of a column is a real number (the rule of :func:`is_number`), checked by type.

    A numpy column of floats or ints passes on its dtype; one of bools, complex numbers, dates,
    time spans or text does not, though ``float()`` or numpy would convert it.
    """
    if isinstance(values, np.ndarray) and values.dtype.kind != "O":
        if values.dtype.kind in "fiu" or len(values) == 0:
            return
        raise error(
            f"{source} row {row_number(0, line_numbers)}: {what} {shown(values[0])} is {values.dtype}, "
            "not a number (a column of floats or ints is)"
        )
    bad = non_number_types(values)
    for i, v in enumerate(values if bad else ()):
        if type(v) in bad:
            raise error(
                f"{source} row {row_number(i, line_numbers)}: {what} {shown(v)} is {type(v).__name__}, not a number"
            )


def row_number(i: int, line_numbers: Sequence[int] | None) -> int:
    return int(line_numbers[i]) if line_numbers is not None else i + 1


def _raise_duplicate(
    ds: list[str],
    start: int,
    end: int,
    q: str,
    source: str,
    line_numbers: Sequence[int] | None,
    qs: list[str] | None = None,
) -> None:
    first: dict[str, int] = {}
    for j in range(start, end):
        if qs is not None and qs[j] != q:
            continue
        d = ds[j]
        if d in first:
            raise DuplicateDocumentError(
                f"{source}: document {d!r} appears twice for query {q!r} "
                f"(rows {row_number(first[d], line_numbers)} and {row_number(j, line_numbers)})"
            )
        first[d] = j
    raise DuplicateDocumentError(f"{source}: a document appears twice for query {q!r}")
