"""Ranks of the judged documents, without sorting the runs.

A judged document's 0-based rank is the number of documents of its query that rank before it.
Only judged documents need a rank, so instead of sorting every query we count, per judged
document, the retrieved scores that beat it. Two orders exist (see :mod:`.presets`):

* ``"trec"`` (trec_eval 9 / pytrec_eval): scores as float32, descending; ties by doc id
  descending in byte order.
* ``"stable"`` (BEIR's MRR and R_cap): scores as float64, descending; ties keep results order.

Both start from the float32 comparison. float32 rounding is monotonic, so a document that beats
another in float32 also beats it in float64, and only members of a float32 tie group can be
reordered by float64 scores. Tie groups that hold a judged document are resolved afterwards from
their members' ids, float64 scores and positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .inputs import Prepared

# Bound on the elements compared at once in the counting pass (memory ~ 20 bytes each).
_CHUNK = 1 << 22


def _as_f32(x: np.ndarray) -> np.ndarray:
    # +0.0 folds -0.0 into 0.0: equal as floats, and trec_eval compares them as equal.
    return x.astype(np.float32) + np.float32(0.0)


def _ordered_u32(x32: np.ndarray) -> np.ndarray:
    """uint32 keys whose ascending order is the float32 values' descending order."""
    bits = x32.view(np.uint32)
    asc = np.where(bits >> 31, ~bits, bits | np.uint32(0x80000000))
    return ~asc


@dataclass(frozen=True)
class Counted:
    """float32 counts shared by both tie policies.

    ``greater[p]``: documents of pair p's query whose float32 score beats it. ``tie_pair`` /
    ``tie_pos``: the members (flat positions) of every float32 tie group of more than one
    document that holds a judged document, with the owning pair.
    """

    greater: np.ndarray
    tie_pair: np.ndarray
    tie_pos: np.ndarray
    tie_ids: list[str] = field(default_factory=list)


def judged_ranks(prep: Prepared, ties: str, counted: Counted | None = None) -> np.ndarray:
    """0-based rank of every judged retrieved document (``prep.pair_*``) under ``ties``."""
    if prep.pair_query.size == 0:
        return np.zeros(0, np.int64)
    if counted is None:
        counted = count_f32(prep)
    if counted.tie_pair.size == 0:
        return counted.greater
    return counted.greater + _resolve_ties(prep, ties, counted)


def count_f32(prep: Prepared) -> Counted:
    """Per pair, the float32 greater-count and tie-group members (see :class:`Counted`).

    The first judged document of every query is handled in one pass over all scores (each score
    compared with its own query's threshold); further judged documents of the same query are
    compared with their query's segment element-wise; queries with many judged documents are
    sorted once instead (cost n log n rather than n per judged document).
    """
    pq = prep.pair_query
    n_pairs = pq.size
    offsets = prep.offsets
    s32 = _as_f32(prep.scores)
    t32 = _as_f32(prep.pair_score)
    lengths = offsets[1:] - offsets[:-1]
    per_query = np.bincount(pq, minlength=lengths.size)
    heavy_q = per_query > 2 * np.log2(lengths + 2) + 4
    heavy = heavy_q[pq]
    first = np.ones(n_pairs, bool)
    first[1:] = pq[1:] != pq[:-1]  # pairs are grouped by query
    greater = np.zeros(n_pairs, np.int64)
    tie_pairs: list[np.ndarray] = []
    tie_positions: list[np.ndarray] = []

    def add_ties(pairs: np.ndarray, positions: np.ndarray) -> None:
        if pairs.size:
            tie_pairs.append(pairs)
            tie_positions.append(positions)

    lead = np.flatnonzero(first & ~heavy)
    if lead.size:
        g, tp, tpos = _count_one_per_query(s32, offsets, pq[lead], t32[lead])
        greater[lead] = g
        add_ties(lead[tp], tpos)

    rest = np.flatnonzero(~first & ~heavy)
    if rest.size:
        bounds = np.cumsum(lengths[pq[rest]])
        start = 0
        while start < rest.size:
            # Chunks of pairs whose segments hold at most _CHUNK elements (one pair at least).
            base = bounds[start - 1] if start else 0
            stop = max(int(np.searchsorted(bounds, base + _CHUNK, side="right")), start + 1)
            idx = rest[start:stop]
            g, tp, tpos = _count_expanded(s32, offsets, pq[idx], t32[idx])
            greater[idx] = g
            add_ties(idx[tp], tpos)
            start = stop

    hq = np.flatnonzero(heavy_q)
    if hq.size:
        g_idx = np.flatnonzero(heavy)
        g, e = _count_sorted(s32, offsets, hq, pq[g_idx], t32[g_idx])
        greater[g_idx] = g
        for p in g_idx[e > 1]:
            a, b = offsets[pq[p]], offsets[pq[p] + 1]
            members = a + np.flatnonzero(s32[a:b] == t32[p])
            add_ties(np.full(members.size, p, np.int64), members)

    if tie_pairs:
        positions = np.concatenate(tie_positions)
        return Counted(greater, np.concatenate(tie_pairs), positions, prep.ids_at(positions))
    empty = np.zeros(0, np.int64)
    return Counted(greater, empty, empty)


def _count_one_per_query(
    s32: np.ndarray, offsets: np.ndarray, qs: np.ndarray, t32: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts for one pair per query (``qs`` distinct): one vectorised pass over every score."""
    n_q = offsets.size - 1
    lengths = offsets[1:] - offsets[:-1]
    thr_q = np.full(n_q, np.nan, np.float32)  # NaN compares false: queries without a pair count 0
    thr_q[qs] = t32
    thresholds = np.repeat(thr_q, lengths)
    nonempty = lengths > 0
    gq = np.zeros(n_q, np.int64)
    gq[nonempty] = np.add.reduceat(s32 > thresholds, offsets[:-1][nonempty], dtype=np.int32)
    eq_pos = np.flatnonzero(s32 == thresholds)  # sparse: the judged docs and their ties
    eq_q = np.searchsorted(offsets, eq_pos, side="right") - 1
    eq_count = np.bincount(eq_q, minlength=n_q)
    tied = eq_count[eq_q] > 1
    local = np.full(n_q, -1, np.int64)
    local[qs] = np.arange(qs.size)
    return gq[qs], local[eq_q[tied]], eq_pos[tied]


def _count_expanded(
    s32: np.ndarray, offsets: np.ndarray, pq: np.ndarray, t32: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compare each pair's threshold with every element of its query's segment."""
    starts = offsets[pq]
    sizes = offsets[pq + 1] - starts
    total = int(sizes.sum())
    owner = np.repeat(np.arange(pq.size), sizes)
    shift = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes)
    pos = np.arange(total, dtype=np.int64) + shift
    values = s32[pos]
    thresholds = t32[owner]
    gt = values > thresholds
    eq = values == thresholds
    ends = np.cumsum(sizes)
    greater = _segment_counts(gt, ends)
    equal = _segment_counts(eq, ends)
    tied = eq & (equal[owner] > 1)
    return greater, owner[tied], pos[tied]


def _segment_counts(mask: np.ndarray, ends: np.ndarray) -> np.ndarray:
    c = np.cumsum(mask, dtype=np.int64)
    at_end = c[ends - 1]
    return np.diff(at_end, prepend=0)


def _count_sorted(
    s32: np.ndarray, offsets: np.ndarray, queries: np.ndarray, pq: np.ndarray, t32: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Greater/equal counts for pairs of ``queries`` by sorting those queries' keys once."""
    local = np.full(offsets.size - 1, -1, np.int64)
    local[queries] = np.arange(queries.size)
    lengths = offsets[queries + 1] - offsets[queries]
    owner = np.repeat(np.arange(queries.size, dtype=np.uint64), lengths)
    pos = np.concatenate([np.arange(offsets[q], offsets[q + 1]) for q in queries])
    keys = (owner << np.uint64(32)) | _ordered_u32(s32[pos]).astype(np.uint64)
    keys.sort()
    pkeys = (local[pq].astype(np.uint64) << np.uint64(32)) | _ordered_u32(t32).astype(np.uint64)
    lo = np.searchsorted(keys, pkeys, side="left")
    hi = np.searchsorted(keys, pkeys, side="right")
    seg_start = (np.cumsum(lengths) - lengths)[local[pq]]
    return lo - seg_start, hi - lo


def _resolve_ties(prep: Prepared, ties: str, counted: Counted) -> np.ndarray:
    """Extra rank from float32 tie-group members that precede each judged document."""
    tie_pair, tie_pos, member_ids = counted.tie_pair, counted.tie_pos, counted.tie_ids
    n_pairs = prep.pair_query.size
    pair_ids = np.asarray(prep.pair_doc, dtype=object)[tie_pair]
    if ties == "trec":
        before = _str_greater(member_ids, pair_ids)
    elif ties == "stable":
        s_member = prep.scores[tie_pos]
        s_pair = prep.pair_score[tie_pair]
        is_self = np.fromiter(map(str.__eq__, member_ids, pair_ids), bool, count=len(member_ids))
        self_pos = np.zeros(n_pairs, np.int64)
        self_pos[tie_pair[is_self]] = tie_pos[is_self]
        before = (s_member > s_pair) | ((s_member == s_pair) & (tie_pos < self_pos[tie_pair]))
    else:  # pragma: no cover - presets validate ties
        raise ValueError(ties)
    return np.bincount(tie_pair, weights=before, minlength=n_pairs).astype(np.int64)


def _str_greater(a: list[str], b: np.ndarray) -> np.ndarray:
    # Python compares str by code point, which is the byte order of their UTF-8 (trec_eval's strcmp).
    return np.fromiter(map(str.__gt__, a, b), bool, count=len(a))
