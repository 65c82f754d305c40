"""Metric kernels: one per family kind, cutoffs and variants as parameters.

Inputs are ranked relevance arrays: for each query, the 0-based ranks and labels of its judged
retrieved documents sorted by rank, in CSR form (``offsets`` over queries). Sums run in rank
order with the same double operations as trec_eval (``gain / log2(i + 2)``,
``hits / (i + 1)``), so per-query values match pytrec_eval bit for bit, not just to a tolerance.

=========================  =================================================================
kernel                     families
=========================  =================================================================
:func:`gain_kernel`        NDCG (linear / exponential / custom gains; log2 or J-K discount)
:func:`binary_kernel`      MAP, P, Recall, R_cap, MRR, Success, Rprec, F, GMAP; trec_eval's counts
:func:`bpref_kernel`       bpref
:func:`iprec_kernel`       iP at recall levels, iP_avg (trec_eval 11pt_avg)
:func:`coverage_kernel`    Judged, Hole
=========================  =================================================================

A cutoff of ``None`` means the whole ranking. The binary kernel takes the family's value function
(``Family.value`` in :mod:`.measures`: :func:`average_precision`, :func:`precision`, ...), which reads the
arrays the families share from a :class:`BinaryRanking`; a new binary family is one more such function.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np

# trec_eval's gm_map floor: log(max(AP, MIN_GEO_MEAN)).
MIN_GEO_MEAN = 0.00001

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
    reductions sum pairwise. Work is O(n) over at most max-segment-length vectorised steps, or
    one ``np.cumsum`` (a sequential accumulate) per segment when segments are fewer than steps.
    """
    out = values.astype(np.float64, copy=True)
    lengths = offsets[1:] - offsets[:-1]
    if out.size == 0:
        return out
    nonempty = np.flatnonzero(lengths > 1)
    if nonempty.size < int(lengths.max()):  # few long segments: one cumsum each (also sequential)
        for a, b in zip(offsets[:-1][nonempty].tolist(), offsets[1:][nonempty].tolist(), strict=True):
            np.cumsum(out[a:b], out=out[a:b])
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
    if cum.size == 0:
        return np.zeros(count.size, np.float64)
    last = cum.take(offsets[:-1] + count - 1, mode="clip")  # count 0 reads a neighbour, replaced below
    return np.where(count > 0, last, 0.0)


def counts_below(ranks: np.ndarray, owner: np.ndarray, n_queries: int, cutoffs: Sequence[int | None]) -> np.ndarray:
    """Per cutoff (rows) and query (columns), how many of the query's ``ranks`` lie below the cutoff.

    One ``bincount`` for all cutoffs: each rank falls in the bucket of the first cutoff above it.
    A cutoff ``None`` counts every rank.
    """
    limits = np.array([np.iinfo(np.int64).max if k is None else k for k in cutoffs], np.int64)
    uniq, row = np.unique(limits, return_inverse=True)
    bucket = np.searchsorted(uniq, ranks, side="right")  # number of cutoffs at or below the rank
    width = uniq.size + 1
    hist = np.bincount(bucket * n_queries + owner, minlength=n_queries * width).reshape(width, n_queries)
    below = hist[:-1]  # made running sums in place, row j: ranks below uniq[j]
    for j in range(1, below.shape[0]):  # row by row: a few times faster than cumsum along axis 0
        np.add(below[j - 1], below[j], out=below[j])
    return below if np.array_equal(row, np.arange(row.size)) else below[row]


def jk_discount(ranks: np.ndarray) -> np.ndarray:
    """Järvelin-Kekäläinen's discount: 1 at ranks 1 and 2, ``log2(rank)`` below (0-based ``ranks``)."""
    # log2(max(r, 1) + 1) == discount(max(r - 1, 0)): the same C log2 table.
    return discount(np.maximum(ranks - 1, 0))


def segmented_suffix_max(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Right-to-left running maxima restarting at each segment (exact: max never rounds)."""
    out = values.astype(np.float64, copy=True)
    lengths = offsets[1:] - offsets[:-1]
    if out.size == 0:
        return out
    order = np.argsort(-lengths, kind="stable")
    sorted_len = lengths[order]
    ends = offsets[1:][order]
    for depth in range(1, int(sorted_len[0])):
        active = int(np.searchsorted(-sorted_len, -depth, side="left"))
        pos = ends[:active] - 1 - depth
        out[pos] = np.maximum(out[pos], out[pos + 1])
    return out


def gain_kernel(
    owner: np.ndarray,
    ranks: np.ndarray,
    gains: np.ndarray,
    offsets: np.ndarray,
    ideal_gains: np.ndarray,
    ideal_offsets: np.ndarray,
    cutoffs: Sequence[int | None],
    *,
    jk: bool = False,
) -> np.ndarray:
    """NDCG@k for each cutoff (rows) and query (columns).

    ``gains`` are the gains of the ranked judged documents (<= 0 contributes nothing);
    ``ideal_gains`` are each query's positive gains sorted descending. ``jk``: Järvelin-Kekäläinen's
    discount instead of ``log2(rank + 1)``.
    """
    n = offsets.size - 1
    disc = jk_discount if jk else discount
    pos = gains > 0
    contrib = np.where(pos, gains, 0.0) / disc(ranks)
    dcg_cum = segmented_cumsum(contrib, offsets)
    ideal_ranks = np.arange(ideal_gains.size) - np.repeat(ideal_offsets[:-1], np.diff(ideal_offsets))
    idcg_cum = segmented_cumsum(ideal_gains / disc(ideal_ranks), ideal_offsets)
    n_ideal = np.diff(ideal_offsets)
    out = np.zeros((len(cutoffs), n), np.float64)
    counts = counts_below(ranks, owner, n, cutoffs)
    for row, k in enumerate(cutoffs):
        dcg = _at_cutoff(dcg_cum, offsets, counts[row])
        idcg = _at_cutoff(idcg_cum, ideal_offsets, n_ideal if k is None else np.minimum(n_ideal, k))
        np.divide(dcg, idcg, out=out[row], where=idcg > 0)
    return out


class BinaryRanking:
    """What the binary families' values read: each query's relevant retrieved documents, and the arrays
    several of them share, each built on first use.

    ``owner``/``ranks``/``offsets`` describe the *relevant* retrieved documents only, sorted by rank
    within each query; ``n_relevant`` is R, every relevant judged document of the query;
    ``n_retrieved`` the length of each query's ranking (when the family reads it); ``beta`` F's weight
    of recall. ``counts`` is :func:`counts_below` of these ranks and ``cutoffs`` (given by a caller
    that shares it between families, else computed when a value first reads it).
    """

    def __init__(
        self,
        owner: np.ndarray,
        ranks: np.ndarray,
        offsets: np.ndarray,
        n_relevant: np.ndarray,
        cutoffs: Sequence[int | None],
        *,
        n_retrieved: np.ndarray | None = None,
        beta: float | None = None,
        counts: np.ndarray | None = None,
    ) -> None:
        self.owner, self.ranks, self.offsets, self.cutoffs = owner, ranks, offsets, cutoffs
        self.n = offsets.size - 1
        self.n_relevant = n_relevant
        self.R = n_relevant.astype(np.float64)
        self.has_rel = n_relevant > 0
        self.n_retrieved = n_retrieved
        self.beta = beta
        self._counts = counts

    @cached_property
    def counts(self) -> np.ndarray:
        """Per cutoff (rows) and query, the relevant documents ranked above the cutoff."""
        if self._counts is not None:
            return self._counts
        return counts_below(self.ranks, self.owner, self.n, self.cutoffs)

    @cached_property
    def precision_sum(self) -> np.ndarray:
        """Running sums, per query in rank order, of the precision at each relevant document: AP's numerator."""
        hits = np.arange(self.ranks.size) - self.offsets[:-1][self.owner] + 1
        return segmented_cumsum(hits.astype(np.float64) / (self.ranks + 1).astype(np.float64), self.offsets)

    @cached_property
    def first(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, nonempty, first_rank)``: each query's 0-based rank of its first relevant document
        (int64 max when none), whether it has one, and that rank 1-based as a float."""
        first = np.full(self.n, np.iinfo(np.int64).max, np.int64)
        nonempty = np.diff(self.offsets) > 0
        first[nonempty] = self.ranks[self.offsets[:-1][nonempty]]
        return first, nonempty, first.astype(np.float64) + 1.0  # 1-based, exact below 2**53


#: A binary family's value: ``value(ranking, row, k, out)`` fills ``out``, one value per query at the
#: cutoff ``k`` (``None``: the whole ranking), ``row`` being k's row of ``ranking.counts``.
BinaryValue = Callable[[BinaryRanking, int, int | None, np.ndarray], None]


def average_precision(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """MAP: ``sum_{i<k, rel} hits_i/(i+1) / R``."""
    np.divide(_at_cutoff(b.precision_sum, b.offsets, b.counts[row]), b.R, out=out, where=b.has_rel)


def geometric_average_precision(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """GMAP per query: trec_eval gm_map takes log(max(AP, MIN_GEO_MEAN)); the value kept here is the max."""
    ap = np.zeros(b.n, np.float64)
    ap[b.has_rel] = _at_cutoff(b.precision_sum, b.offsets, b.counts[row])[b.has_rel] / b.R[b.has_rel]
    out[:] = np.maximum(ap, MIN_GEO_MEAN)


def precision(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """P: ``hits@k / k``."""
    out[:] = b.counts[row].astype(np.float64) / float(k)  # type: ignore[arg-type]  # P always has a cutoff


def recall(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """Recall: ``hits@k / R``."""
    np.divide(b.counts[row], b.R, out=out, where=b.has_rel)


def capped_recall(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """R_cap: ``hits@k / min(R, k)``."""
    np.divide(b.counts[row], np.minimum(b.R, float(k)), out=out, where=b.has_rel)  # type: ignore[arg-type]


def success(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """Success: 1 if a relevant document is in the top k."""
    out[:] = (b.counts[row] > 0).astype(np.float64)


def f_measure(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """F: trec_eval set_F on the run cut at k, ``(x + 1) * P * R / (x * P + R)``, x = beta^2; 0 if no hit."""
    if b.n_retrieved is None:  # pragma: no cover - the caller always passes it (Family.needs_retrieved)
        raise ValueError("F needs n_retrieved")
    count = b.counts[row]
    hit = count > 0
    ret = b.n_retrieved if k is None else np.minimum(b.n_retrieved, k)
    P = count[hit].astype(np.float64) / ret[hit].astype(np.float64)
    Rc = count[hit].astype(np.float64) / b.R[hit]
    x = 1.0 if b.beta is None else b.beta * b.beta
    # trec_eval set_F: (x + 1) * P * R / (x * P + R), same operation order.
    out[hit] = (x + 1.0) * P * Rc / (x * P + Rc)


def reciprocal_rank(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """MRR: ``1 / rank`` of the first relevant document, if it is in the top k."""
    first, nonempty, first_rank = b.first
    np.divide(1.0, first_rank, out=out, where=nonempty if k is None else first < k)


def r_precision(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """Rprec (ignores k): trec_eval's relevant among the top min(retrieved, R), / R."""
    count = np.bincount(b.owner[b.ranks < b.n_relevant[b.owner]], minlength=b.n)
    out[b.has_rel] = count[b.has_rel].astype(np.float64) / b.R[b.has_rel]


def num_q(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """trec_eval num_q: 1 per evaluated query."""
    out[:] = 1.0


def num_ret(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """trec_eval num_ret: the documents retrieved."""
    out[:] = b.n_retrieved


def num_rel(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """trec_eval num_rel: R, the relevant judged documents."""
    out[:] = b.n_relevant


def num_rel_ret(b: BinaryRanking, row: int, k: int | None, out: np.ndarray) -> None:
    """trec_eval num_rel_ret: the relevant documents retrieved."""
    out[:] = np.bincount(b.owner, minlength=b.n)


def binary_kernel(value: BinaryValue, ranking: BinaryRanking) -> np.ndarray:
    """A binary family's ``value`` (its ``Family.value``: :func:`average_precision`, :func:`precision`,
    ...) at each of ``ranking.cutoffs`` (rows) for each query (columns).

    A cutoff ``None`` is the whole ranking (Rprec ignores its cutoff: it cuts at R).
    """
    out = np.zeros((len(ranking.cutoffs), ranking.n), np.float64)
    for row, k in enumerate(ranking.cutoffs):
        value(ranking, row, k, out[row])
    return out


def bpref_kernel(
    owner: np.ndarray,
    ranks: np.ndarray,
    offsets: np.ndarray,
    relevant: np.ndarray,
    nonrelevant: np.ndarray,
    n_relevant: np.ndarray,
    n_nonrelevant: np.ndarray,
) -> np.ndarray:
    """trec_eval's bpref per query.

    ``owner``/``ranks``/``offsets`` are every judged retrieved document sorted by rank;
    ``relevant``/``nonrelevant`` flag them (a negative label is neither: trec_eval's "unjudged in
    pool"). ``n_relevant`` is R and ``n_nonrelevant`` N, over all judged documents of the query.
    Each relevant retrieved document adds ``1 - min(nonrel above, R) / min(N, R)`` (1 when no
    nonrelevant one is above it), summed in rank order, and the sum is divided by R.
    """
    n = offsets.size - 1
    nonrel = nonrelevant.astype(np.int64)
    cum = np.cumsum(nonrel)
    seg_start = np.concatenate(([0], cum))[offsets[:-1]]
    above = cum - nonrel - seg_start[owner]  # nonrelevant judged docs ranked above, same query
    r_owner = owner[relevant]
    nb = above[relevant]
    R = n_relevant[r_owner]
    term = np.ones(nb.size, np.float64)
    some = nb > 0
    term[some] = 1.0 - np.minimum(nb[some], R[some]).astype(np.float64) / np.minimum(
        n_nonrelevant[r_owner][some], R[some]
    ).astype(np.float64)
    r_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(r_owner, minlength=n), out=r_offsets[1:])
    total = _at_cutoff(segmented_cumsum(term, r_offsets), r_offsets, np.diff(r_offsets))
    out = np.zeros(n, np.float64)
    has_rel = n_relevant > 0
    out[has_rel] = total[has_rel] / n_relevant[has_rel].astype(np.float64)
    return out


def iprec_kernel(
    owner: np.ndarray,
    ranks: np.ndarray,
    offsets: np.ndarray,
    n_relevant: np.ndarray,
    levels: Sequence[float],
    *,
    cut_rule: str = "trec9",
) -> np.ndarray:
    """Interpolated precision at each recall level (rows) for each query (columns), as trec_eval 9.

    ``owner``/``ranks``/``offsets`` describe the relevant retrieved documents sorted by rank. The
    m-th of them has precision ``m / rank_m``; the value at a level is the largest precision at or
    below the c-th relevant document, and 0 when fewer than c relevant documents were retrieved.
    ``c = int(level * R + 0.9)`` with ``cut_rule="trec9"`` (trec_eval 9.0.8, hence pytrec_eval);
    ``cut_rule="round"`` is trec_eval 10's ``lround(level * R)``, which the expected outputs of
    trec_eval's own test suite use.
    """
    n = offsets.size - 1
    m = (np.arange(ranks.size) - offsets[:-1][owner] + 1).astype(np.float64)
    suffix = segmented_suffix_max(m / (ranks + 1).astype(np.float64), offsets)
    n_rel_ret = np.diff(offsets)
    R = n_relevant.astype(np.float64)
    out = np.zeros((len(levels), n), np.float64)
    for row, level in enumerate(levels):
        if cut_rule == "trec9":
            c = (level * R + 0.9).astype(np.int64)  # C's (long) cast truncates
        else:  # lround: half away from zero
            x = level * R
            c = np.floor(x)
            c = (c + (x - c >= 0.5)).astype(np.int64)
        ok = (c <= n_rel_ret) & (n_rel_ret > 0)
        first = offsets[:-1][ok] + np.maximum(c[ok], 1) - 1
        out[row, ok] = suffix[first]
    return out


def coverage_kernel(
    owner: np.ndarray,
    ranks: np.ndarray,
    n_queries: int,
    cutoffs: Sequence[int],
    n_retrieved: np.ndarray | None = None,
) -> np.ndarray:
    """Share of the top k that is marked (Judged@k), or unmarked when ``n_retrieved`` is given (Hole@k).

    ``owner``/``ranks``: the marked retrieved documents (judged for the query, or judged for any
    query). Both divide by k, as ir_measures' Judged@k is defined (P@k of the judged documents) and
    as BEIR's ``hole`` computes.
    """
    out = np.zeros((len(cutoffs), n_queries), np.float64)
    counts = counts_below(ranks, owner, n_queries, cutoffs)
    for row, k in enumerate(cutoffs):
        count = counts[row]
        if n_retrieved is not None:
            count = np.minimum(n_retrieved, k) - count
        out[row] = count.astype(np.float64) / float(k)
    return out
