"""Flat arrays from dicts: every value of many ``{doc: value}`` dicts read in one C-level pass.

Only the judged documents of a run need their ids looked up; every other retrieved document
contributes just its score, read straight into float32 (the precision trec_eval ranks by; judged
documents and tie-group members keep float64): packed query by query with :mod:`struct`, or with
:func:`numpy.fromiter` where that refuses a value (and the values are then validated in full).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import chain, islice, starmap

import numpy as np

from .validation import (
    QrelsDict,
    RunDict,
    _values,
    check_first_items,
    check_value_types,
    first_bad,
    float_subclasses,
    own_value,
)

_END = object()

# Values packed per group of queries: enough to amortise the per-group step, few enough to stay in cache.
PACK_GROUP = 1 << 16


@lru_cache(maxsize=1024)
def _f32_struct(width: int) -> struct.Struct:
    return struct.Struct(f"{width}f")


def _pack_f32(values: Sequence[float]) -> bytes:
    return _f32_struct(len(values)).pack(*values)


def read_f32(inner: list, lengths: np.ndarray, n: int, group: int = PACK_GROUP) -> np.ndarray | None:
    """Every value of the dicts ``inner``, in order, as float32; None if one is not a plain number.

    Each query's values are packed at once by :mod:`struct`'s native ``f``: the C ``(float)`` cast of
    the value's double (beyond float32's range: +-inf), about a third faster than
    :func:`numpy.fromiter`'s per-value conversion. The double is what pytrec_eval reads and BEIR's
    sort compares: a float's own value (a float subclass's ``__float__`` is not called), an int or a
    numpy scalar through its double. ``struct`` takes numbers only (a numeric string too is refused),
    so None sends the caller to the full type check and numpy's conversion. A query longer than ``group`` is
    packed in slices of ``group`` values, so the extra memory stays within a group's values.
    """
    out = np.empty(n, np.float32)
    ends = np.cumsum(lengths)
    i = pos = 0
    try:
        while i < len(inner):
            j = max(int(np.searchsorted(ends, pos + group, side="right")), i + 1)
            width = int(lengths[i])
            queries = map(_values, inner[i:j])
            if width > group:  # one huge query: packed in slices (no tuple of all its values)
                values = iter(next(queries))
                stop = pos + width
                while pos < stop:
                    m = min(group, stop - pos)
                    out[pos : pos + m] = np.frombuffer(_f32_struct(m).pack(*islice(values, m)), np.float32)
                    pos += m
                if next(values, _END) is not _END:  # the mapping yields more than its len()
                    return None
                i = j
                continue
            if (lengths[i:j] == width).all():  # one Struct for the whole group: no Python frame per query
                packed = b"".join(starmap(_f32_struct(width).pack, queries))
            else:
                packed = b"".join(map(_pack_f32, queries))
            stop = pos + len(packed) // 4
            if stop > n:
                return None
            out[pos:stop] = np.frombuffer(packed, np.float32)
            pos, i = stop, j
    except (struct.error, TypeError, ValueError, OverflowError):
        return None
    return out if pos == n else None


def flat_values(
    data: RunDict | QrelsDict,
    queries: list[str],
    inner: list,
    n: int,
    what: str,
    error: type[Exception],
    dtype: type = np.float64,
    values: np.ndarray | None = None,
) -> np.ndarray:
    """All values of the dicts ``inner`` (``data[q]`` for ``q`` in ``queries``), in order, as ``dtype``.

    ``values``: the same, read already (by :func:`read_f32`); else numpy reads them here.
    Validated: a non-number or non-finite value raises ``error`` naming its query and document.
    As float32, a finite value beyond float32's range reads as +-inf (trec_eval stores it so).
    """
    if values is None:
        # Read by numpy, which would take a numeric string or a bool: check every type first. One
        # walk over the dicts (the list keeps the values in order for both passes).
        flat = list(chain.from_iterable(map(_values, inner)))
        check_value_types(data, queries, flat, what, error)
        if float_subclasses(flat):
            # numpy reads a float subclass through its __float__, struct and the compiled scan through
            # its own value (as pytrec_eval does): a subclass's own value, on every path.
            flat = [own_value(v) for v in flat]
        try:
            with np.errstate(over="ignore"):
                values = np.fromiter(flat, dtype, count=n)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond any float
            raise first_bad(data, queries, what, error) from None
    # One vectorised sum: finite unless some value is NaN/inf (or the sum overflows: check exactly).
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.isfinite(np.add.reduce(values)) or np.isfinite(values).all()
    # +-inf in float32 may be a finite float64: reread (a NaN cannot be).
    if not finite and dtype is not np.float64 and not np.isnan(values).any():
        try:
            finite = np.isfinite(numpy_f64(chain.from_iterable(map(_values, inner)), n)).all()
        except (TypeError, ValueError, OverflowError):
            finite = False
    if not finite:
        raise first_bad(data, queries, what, error)
    check_first_items(data, queries, what, error, inner)
    return values


# C-level callables for map(): no Python frame per query.


def numpy_f64(values: Iterable, n: int) -> np.ndarray:
    """float64 of ``values`` as :func:`flat_values` converts them when struct could not (a float
    subclass by its own value, not its ``__float__``)."""
    return np.fromiter((own_value(v) for v in values), np.float64, count=n)


def packed_f64(values: Iterable, n: int) -> np.ndarray:
    """float64 of ``values`` as :func:`read_f32` converts (struct: a float's own value)."""
    listed = list(values)
    try:
        return np.frombuffer(struct.pack(f"{n}d", *listed), np.float64)
    except struct.error:  # not the values the scores were read from (a Mapping that changed)
        return np.fromiter(listed, np.float64, count=n)


def csr(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def gather_rows(offsets: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Row indices of the segments ``keep`` (ascending), concatenated."""
    starts = offsets[:-1][keep]
    sizes = offsets[1:][keep] - starts
    return np.arange(int(sizes.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(sizes) - sizes), sizes)
