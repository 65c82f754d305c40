"""Score normalisations before fusion, per run and query, as ranx 0.3.21 computes them
(``ranx.normalization``), on packed rows.

Each takes one run's :class:`~.packed.RunRows` (and the packing it belongs to) and returns rows of the same
shape with the normalised scores; :mod:`.registry` names them. Every normalisation but two keeps the run's
rank order; ``min-max-inverted`` reverses it (ranx sorts the inverted run again: ties keep the earlier
order) and ``borda`` gives every candidate of the query a score, the documents the run did not retrieve
after those it did (in candidate order).
"""

from __future__ import annotations

import numpy as np

from .packed import PackedRuns, RunRows

_FLOOR = 1e-9  # ranx's floor on every denominator


def _per_query(values: np.ndarray, offsets: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    """``ufunc`` reduced over each query's rows (0 for a query without rows)."""
    lengths = np.diff(offsets)
    out = np.zeros(lengths.size, dtype=np.float64)
    full = lengths > 0
    if values.size:
        out[full] = ufunc.reduceat(values, offsets[:-1][full])
    return out


def _spread(per_query: np.ndarray, rows: RunRows) -> np.ndarray:
    return np.repeat(per_query, rows.lengths)


def _with(rows: RunRows, value: np.ndarray) -> RunRows:
    return RunRows(rows.offsets, rows.candidate, value, rows.rank)


def _min_max(rows: RunRows, invert: bool) -> RunRows:
    lo = _spread(_per_query(rows.score, rows.offsets, np.minimum), rows)
    hi = _spread(_per_query(rows.score, rows.offsets, np.maximum), rows)
    denominator = np.maximum(hi - lo, _FLOOR)
    if not invert:
        return _with(rows, (rows.score - lo) / denominator)
    value = (hi - rows.score) / denominator
    # ranx sorts the inverted run again (stable on these short lists): value descending, ties as they were.
    query = np.repeat(np.arange(rows.lengths.size), rows.lengths)
    order = np.lexsort((rows.rank, -value, query))
    return RunRows(rows.offsets, rows.candidate[order], value[order], rows.rank)


def min_max(rows: RunRows, packed: PackedRuns) -> RunRows:
    return _min_max(rows, invert=False)


def min_max_inverted(rows: RunRows, packed: PackedRuns) -> RunRows:
    return _min_max(rows, invert=True)


def max_norm(rows: RunRows, packed: PackedRuns) -> RunRows:
    hi = _spread(_per_query(rows.score, rows.offsets, np.maximum), rows)
    return _with(rows, rows.score / np.maximum(hi, _FLOOR))


def sum_norm(rows: RunRows, packed: PackedRuns) -> RunRows:
    lo = _spread(_per_query(rows.score, rows.offsets, np.minimum), rows)
    total = _spread(_per_query(rows.score, rows.offsets, np.add), rows)
    n = _spread(rows.lengths.astype(np.float64), rows)
    return _with(rows, (rows.score - lo) / np.maximum(total - lo * n, _FLOOR))


def zmuv(rows: RunRows, packed: PackedRuns) -> RunRows:
    n = np.maximum(rows.lengths, 1).astype(np.float64)
    mean = _spread(_per_query(rows.score, rows.offsets, np.add) / n, rows)
    deviation = rows.score - mean
    std = np.sqrt(_per_query(deviation * deviation, rows.offsets, np.add) / n)
    return _with(rows, deviation / _spread(np.maximum(std, _FLOOR), rows))


def rank_norm(rows: RunRows, packed: PackedRuns) -> RunRows:
    n = _spread(rows.lengths.astype(np.float64), rows)
    return _with(rows, 1.0 - rows.rank / n)


def borda(rows: RunRows, packed: PackedRuns) -> RunRows:
    """ranx's ``borda`` norm: ``1 - rank / n_candidates`` for a retrieved document, ``0.5 - (n_retrieved - 1)
    / (2 n_candidates)`` for every other candidate of the query."""
    n_candidates = np.diff(packed.offsets).astype(np.float64)
    present = np.zeros(packed.n_candidates, dtype=bool)
    present[rows.candidate] = True
    missing = np.flatnonzero(~present)
    cand_query = packed.candidate_query
    row_query = np.repeat(np.arange(n_candidates.size), rows.lengths)
    kept = 1.0 - rows.rank / n_candidates[row_query]
    fill = 0.5 - (rows.lengths - 1) / (2 * np.maximum(n_candidates, 1.0))
    query = np.concatenate([row_query, cand_query[missing]])
    candidate = np.concatenate([rows.candidate, missing])
    value = np.concatenate([kept, fill[cand_query[missing]]])
    order = np.argsort(query, kind="stable")
    offsets = packed.offsets.copy()
    rank = np.arange(order.size, dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))
    return RunRows(offsets, candidate[order], value[order], rank)
