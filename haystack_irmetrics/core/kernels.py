"""Metric kernels: one per family kind, cutoffs as parameters.

Inputs are ranked relevance arrays: for each query, the 0-based ranks and labels of its judged
retrieved documents sorted by rank, in CSR form (``offsets`` over queries). Sums run in rank
order with the same double operations as trec_eval (``gain / log2(i + 2)``,
``hits / (i + 1)``), so per-query values match pytrec_eval bit for bit, not just to a tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

_LOG2: list[float] = []


def discount(ranks: np.ndarray) -> np.ndarray:
    """``log2(rank + 2)`` with C's log2 (numpy's SIMD log2 differs from it in the last ulp)."""
    top = int(ranks.max()) + 1 if ranks.size else 0
    if top > len(_LOG2):
        _LOG2.extend(math.log2(i + 2) for i in range(len(_LOG2), top))
    table = np.asarray(_LOG2[:top], dtype=np.float64)
    return table[ranks]


def segmented_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Left-to-right running sums restarting at each segment (bit-exact sequential addition).

    ``np.cumsum`` over the whole array and subtracting would round differently; numpy's
    reductions sum pairwise. Work is O(n) over at most max-segment-length vectorised steps.
    """
    out = values.astype(np.float64, copy=True)
    lengths = offsets[1:] - offsets[:-1]
    if out.size == 0:
        return out
    order = np.argsort(-lengths, kind="stable")
    sorted_len = lengths[order]
    starts = offsets[:-1][order]
    for depth in range(1, int(sorted_len[0]) if sorted_len.size else 0):
        active = int(np.searchsorted(-sorted_len, -depth, side="left"))
        pos = starts[:active] + depth
        out[pos] += out[pos - 1]
    return out


def _at_cutoff(cum: np.ndarray, offsets: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``cum`` at the ``count``-th element of each segment (0.0 where count is 0)."""
    out = np.zeros(count.size, np.float64)
    has = count > 0
    out[has] = cum[offsets[:-1][has] + count[has] - 1]
    return out


def _counts_below(ranks: np.ndarray, owner: np.ndarray, n_queries: int, k: int) -> np.ndarray:
    return np.bincount(owner[ranks < k], minlength=n_queries).astype(np.int64)


def gain_kernel(
    owner: np.ndarray,
    ranks: np.ndarray,
    gains: np.ndarray,
    offsets: np.ndarray,
    ideal_gains: np.ndarray,
    ideal_offsets: np.ndarray,
    cutoffs: Sequence[int],
) -> np.ndarray:
    """NDCG@k for each cutoff (rows) and query (columns).

    ``gains`` are the labels of the ranked judged documents (<= 0 contributes nothing);
    ``ideal_gains`` are each query's positive labels sorted descending.
    """
    n = offsets.size - 1
    pos = gains > 0
    contrib = np.where(pos, gains, 0.0) / discount(ranks)
    dcg_cum = segmented_cumsum(contrib, offsets)
    ideal_ranks = np.arange(ideal_gains.size) - np.repeat(ideal_offsets[:-1], np.diff(ideal_offsets))
    idcg_cum = segmented_cumsum(ideal_gains / discount(ideal_ranks), ideal_offsets)
    n_ideal = np.diff(ideal_offsets)
    out = np.zeros((len(cutoffs), n), np.float64)
    for row, k in enumerate(cutoffs):
        dcg = _at_cutoff(dcg_cum, offsets, _counts_below(ranks, owner, n, k))
        idcg = _at_cutoff(idcg_cum, ideal_offsets, np.minimum(n_ideal, k))
        ok = idcg > 0
        out[row, ok] = dcg[ok] / idcg[ok]
    return out


def binary_kernel(
    family: str,
    owner: np.ndarray,
    ranks: np.ndarray,
    offsets: np.ndarray,
    n_relevant: np.ndarray,
    cutoffs: Sequence[int],
) -> np.ndarray:
    """MAP, P, Recall, R_cap or MRR at each cutoff (rows) for each query (columns).

    ``owner``/``ranks``/``offsets`` describe the *relevant* retrieved documents only, sorted by
    rank within each query; ``n_relevant`` is R, every relevant judged document of the query.
    """
    n = offsets.size - 1
    out = np.zeros((len(cutoffs), n), np.float64)
    R = n_relevant.astype(np.float64)
    has_rel = n_relevant > 0
    if family == "MAP":
        hits = np.arange(ranks.size) - offsets[:-1][owner] + 1
        cum = segmented_cumsum(hits.astype(np.float64) / (ranks + 1).astype(np.float64), offsets)
    elif family == "MRR":
        first = np.full(n, np.iinfo(np.int64).max, np.int64)
        nonempty = np.diff(offsets) > 0
        first[nonempty] = ranks[offsets[:-1][nonempty]]
    for row, k in enumerate(cutoffs):
        if family == "MRR":
            hit = first < k
            out[row, hit] = 1.0 / (first[hit] + 1).astype(np.float64)
            continue
        count = _counts_below(ranks, owner, n, k)
        if family == "MAP":
            out[row, has_rel] = _at_cutoff(cum, offsets, count)[has_rel] / R[has_rel]
        elif family == "P":
            out[row] = count.astype(np.float64) / float(k)
        elif family == "Recall":
            out[row, has_rel] = count[has_rel].astype(np.float64) / R[has_rel]
        elif family == "R_cap":
            out[row, has_rel] = count[has_rel].astype(np.float64) / np.minimum(R[has_rel], float(k))
        else:  # pragma: no cover - families are validated by Measure
            raise ValueError(family)
    return out
