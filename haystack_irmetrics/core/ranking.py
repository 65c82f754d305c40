"""Ranks of the judged documents, without sorting the runs.

A judged document's 0-based rank is the number of documents of its query that rank before it.
Only judged documents need a rank, so instead of sorting every query we count, per judged
document, the retrieved scores that beat it. Two orders exist (see :mod:`.presets`):

* ``"trec"`` (trec_eval 9 / pytrec_eval): scores as float32, descending; ties by doc id
  descending in byte order.
* ``"stable"`` (BEIR's MRR and R_cap): scores as float64, descending; ties keep results order.
  BEIR sorts the score objects themselves, so where a tie as doubles is no tie as values (Python
  ints beyond 2**53) the values decide, as in BEIR.

Both start from the float32 comparison. float32 rounding is monotonic, so a document that beats
another in float32 also beats it in float64, and only members of a float32 tie group can be
reordered by float64 scores. Tie groups that hold a judged document are resolved afterwards from
their members' ids, float64 scores and positions.

A whole ranking in trec_eval's order, where a caller needs one (a run written, a pool, a top k), is
:func:`trec_sorted` and :func:`trec_order`; :func:`out_of_trec_order` and :func:`in_trec_order` say whether
one is in that order already.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from .packing import gather_rows
from .prepare import Prepared
from .validation import check_id

# Bound on the elements compared at once in the counting pass (memory ~ 20 bytes each).
_CHUNK = 1 << 22
# From here on a double is a whole number and neighbouring ints share it.
_F64_EXACT = float(2**53)


def _as_f32(x: np.ndarray) -> np.ndarray:
    # +0.0 folds -0.0 into 0.0: equal as floats, and trec_eval compares them as equal.
    with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as in trec_eval
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
    document that holds a judged document, with the pair that listed them; ``tie_ids``: their ids.
    A group is listed once, by its first judged document: ``sharing`` are the other judged
    documents of listed groups (all of a query's, if its scores are all equal), ``sharing_lister``
    the pair that listed each one's group.
    """

    greater: np.ndarray
    tie_pair: np.ndarray
    tie_pos: np.ndarray
    tie_ids: list[str] = field(default_factory=list)
    tie_pair_ids: list[str] = field(default_factory=list)  # the judged document's id, per member
    sharing: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    sharing_lister: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def judged_ranks(prep: Prepared, ties: str, counted: Counted | None = None) -> np.ndarray:
    """0-based rank of every judged retrieved document (``prep.pair_*``) under ``ties``."""
    if prep.pair_query.size == 0:
        return np.zeros(0, np.int64)
    if prep.pair_ranks is not None:  # ranked lists, or ranked by the compiled scan already
        return prep.pair_ranks[ties]
    if counted is None:
        counted = count_f32(prep)
    if counted.tie_pair.size == 0:
        return counted.greater
    return counted.greater + _resolve_ties(prep, ties, counted)


def count_f32(prep: Prepared) -> Counted:
    """Per pair, the float32 greater-count and tie-group members (see :class:`Counted`).

    The first judged document of every query is handled in one pass over all scores (each score
    compared with its own query's thresholds); further judged documents of the same query are
    compared with their query's segment element-wise; queries with many judged documents are
    sorted once instead (cost n log n rather than n per judged document). ``prep.scores`` are
    float32 already; the judged scores are rounded the same way, so every comparison is trec_eval's.
    """
    scores = prep.scores
    if scores is None:
        raise ValueError("count_f32 needs the scores; ranked lists give their pair_ranks instead")
    pq = prep.pair_query
    n_pairs = pq.size
    offsets = prep.offsets
    with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as for the scores
        t32 = prep.pair_score.astype(np.float32)
    lengths = offsets[1:] - offsets[:-1]
    per_query = np.bincount(pq, minlength=lengths.size)
    heavy_q = per_query > 2 * np.log2(lengths + 2) + 4
    heavy = heavy_q[pq]
    first = np.ones(n_pairs, bool)
    first[1:] = pq[1:] != pq[:-1]  # pairs are grouped by query
    greater = np.zeros(n_pairs, np.int64)
    # A tie group is a query's documents at one float32 score. Judged documents sharing one would
    # each list all of its members (n per judged document where a query's scores are all equal):
    # only its first judged document keeps its listing.
    key = (pq.astype(np.uint64) << np.uint64(32)) | _ordered_u32(_as_f32(t32)).astype(np.uint64)
    ties = _Ties(key, n_pairs)

    lead = np.flatnonzero(first & ~heavy)
    if lead.size:
        g, tp, tpos = _count_one_per_query(scores, offsets, pq[lead], t32[lead])
        greater[lead] = g
        ties.add(lead[tp], tpos, one_per_query=True)

    rest = np.flatnonzero(~first & ~heavy)
    if rest.size:
        _count_rest(scores, offsets, pq, t32, rest, greater, ties)

    hq = np.flatnonzero(heavy_q)
    if hq.size:
        g_idx = np.flatnonzero(heavy)
        g, tp, tpos = _count_sorted(scores, offsets, hq, pq[g_idx], t32[g_idx])
        greater[g_idx] = g
        ties.add(g_idx[tp], tpos)
    return ties.counted(prep, greater, per_query)


def _count_rest(
    scores: np.ndarray,
    offsets: np.ndarray,
    pq: np.ndarray,
    t32: np.ndarray,
    rest: np.ndarray,
    greater: np.ndarray,
    ties: _Ties,
) -> None:
    """:func:`count_f32`'s second pass: the pairs ``rest`` (a query's further judged documents, its list not
    sorted) compared with their query's segment element-wise, in chunks of at most ``_CHUNK`` elements."""
    lengths = offsets[1:] - offsets[:-1]
    width = int(lengths[0]) if lengths.size else 0
    uniform = width > 0 and bool((lengths == width).all())
    ends = np.cumsum(lengths[pq[rest]])
    start = 0
    while start < rest.size:
        # Chunks of pairs whose segments hold at most _CHUNK elements (one pair at least).
        base = ends[start - 1] if start else 0
        stop = max(int(np.searchsorted(ends, base + _CHUNK, side="right")), start + 1)
        idx = rest[start:stop]
        if uniform:  # every query has the same length: gather their rows as a 2-D block
            g, tp, tpos = _count_rows(scores, width, pq[idx], t32[idx])
        else:
            g, tp, tpos = _count_expanded(scores, offsets, pq[idx], t32[idx])
        greater[idx] = g
        ties.add(idx[tp], tpos)
        start = stop


class _Ties:
    """The tie groups :func:`count_f32`'s passes list (``pairs``: the judged pair, ``positions``: a member), each
    group once: keyed by (query, float32 score) in ``key``."""

    def __init__(self, key: np.ndarray, n_pairs: int) -> None:
        self.key, self.n_pairs = key, n_pairs
        self.pairs: list[np.ndarray] = []
        self.positions: list[np.ndarray] = []

    def add(self, pairs: np.ndarray, positions: np.ndarray, one_per_query: bool = False) -> None:
        if pairs.size == 0:
            return
        if not one_per_query:
            distinct = pairs[np.flatnonzero(np.diff(pairs, prepend=-1))]  # entries come grouped by pair
            first = np.unique(self.key[distinct], return_index=True)[1]
            if first.size < distinct.size:
                keep = np.zeros(self.n_pairs, bool)
                keep[distinct[first]] = True
                keep = keep[pairs]
                pairs, positions = pairs[keep], positions[keep]
        self.pairs.append(pairs)
        self.positions.append(positions)

    def counted(self, prep: Prepared, greater: np.ndarray, per_query: np.ndarray) -> Counted:
        """The :class:`Counted` of ``greater`` and the groups listed, each listed once over every pass, with
        the judged documents of a query that share a group another listed."""
        if not self.pairs:
            empty = np.zeros(0, np.int64)
            return Counted(greater, empty, empty)
        key, pq = self.key, prep.pair_query
        positions = np.concatenate(self.positions)
        pairs = np.concatenate(self.pairs)
        # Only a query with several judged documents can have a group two of them share.
        several = np.flatnonzero((per_query > 1)[pq])
        listers = pairs[np.flatnonzero(np.diff(pairs, prepend=-1))]
        listers = listers[(per_query > 1)[pq[listers]]]
        if len(self.pairs) > 1:  # a group listed in two passes (or chunks) keeps its first listing
            first = np.unique(key[listers], return_index=True)[1]
            if first.size < listers.size:
                keep = np.ones(self.n_pairs, bool)
                keep[listers] = False
                keep[listers[first]] = True
                keep = keep[pairs]
                pairs, positions = pairs[keep], positions[keep]
                listers = listers[np.sort(first)]
        sharing, sharing_lister = _sharing(key, listers, several)
        pair_ids = list(map(prep.pair_doc.__getitem__, pairs.tolist()))
        member_ids = prep.ids_at(positions)
        if not (set(map(type, member_ids)) | set(map(type, pair_ids))) <= {str}:
            # Ids are type-checked on a sample of queries; a tie is where another one must compare.
            for ids in (member_ids, pair_ids):
                for i, d in enumerate(ids):
                    check_id("document", d, f" in query {prep.qids[prep.pair_query[pairs[i]]]!r}")
        return Counted(greater, pairs, positions, member_ids, pair_ids, sharing, sharing_lister)


def _sharing(key: np.ndarray, listers: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``candidates`` (other than ``listers``) whose tie group a lister listed, and that lister."""
    if listers.size == 0:
        return listers, listers
    order = np.argsort(key[listers])
    sorted_keys = key[listers][order]
    at = np.minimum(np.searchsorted(sorted_keys, key[candidates]), sorted_keys.size - 1)
    found = sorted_keys[at] == key[candidates]
    found &= ~np.isin(candidates, listers)
    return candidates[found], listers[order[at[found]]]


def _count_one_per_query(
    scores: np.ndarray, offsets: np.ndarray, qs: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts for one pair per query (``qs`` distinct): two vectorised comparisons of every score.

    ``score > t`` marks the documents that beat the query's judged one, ``score == t`` its float32
    tie group (-0.0 equals 0.0, inf equals inf), kept where it holds two or more.
    Queries in runs of equal length are compared as 2-D blocks (no per-element thresholds).
    """
    n_q = offsets.size - 1
    lengths = offsets[1:] - offsets[:-1]
    t_q = np.full(n_q, np.nan, np.float32)  # NaN: queries without a pair count nothing
    t_q[qs] = t
    gt_q = np.zeros(n_q, np.int64)
    tie_q: list[np.ndarray] = []
    tie_pos: list[np.ndarray] = []
    for a, b in _blocks(lengths, offsets):
        base = int(offsets[a])
        width = int(lengths[a])
        if b - a > 1 and width and bool((lengths[a:b] == width).all()):
            block = scores[base : int(offsets[b])].reshape(b - a, width)
            gt_q[a:b], r, c = _block_counts(block, t_q[a:b])
            tie_q.append(a + r)
            tie_pos.append(base + r * width + c)
            continue
        seg = scores[base : int(offsets[b])]
        sizes = lengths[a:b]
        nonempty = np.flatnonzero(sizes)
        if nonempty.size == 0:
            continue
        starts = offsets[a:b][nonempty] - base
        thresholds = np.repeat(t_q[a:b], sizes)
        gt = seg > thresholds
        eq = seg == thresholds
        gt_q[a + nonempty] = np.add.reduceat(gt, starts, dtype=np.int64)
        eq_count = np.zeros(b - a, np.int64)
        eq_count[nonempty] = np.add.reduceat(eq, starts, dtype=np.int64)
        pos = np.flatnonzero(eq)  # sparse: the judged documents and their ties
        owner = np.searchsorted(offsets[a : b + 1] - base, pos, side="right") - 1
        tied = eq_count[owner] > 1
        tie_q.append(a + owner[tied])
        tie_pos.append(base + pos[tied])
    local = np.full(n_q, -1, np.int64)
    local[qs] = np.arange(qs.size)
    if not tie_q:
        return gt_q[qs], np.zeros(0, np.int64), np.zeros(0, np.int64)
    return gt_q[qs], local[np.concatenate(tie_q)], np.concatenate(tie_pos)


def _row_counts(mask: np.ndarray) -> np.ndarray:
    """True values per row of a 2-D bool array (summed as bytes: the fastest reduction numpy has)."""
    dtype = np.uint16 if mask.shape[1] < 1 << 16 else np.int64
    return mask.view(np.uint8).sum(axis=1, dtype=dtype).astype(np.int64)


def _blocks(lengths: np.ndarray, offsets: np.ndarray) -> list[tuple[int, int]]:
    """Query ranges ``[a, b)`` to compare at once: runs of equal length when those are long, else
    ranges of about ``_CHUNK`` elements (bounded memory either way)."""
    n = lengths.size
    if n == 0:
        return []
    change = np.flatnonzero(lengths[1:] != lengths[:-1]) + 1
    if change.size * 64 <= n:  # mostly long runs of one length (e.g. every query retrieved top 1000)
        cuts = [0, *change.tolist(), n]
        out = []
        for a, b in pairwise(cuts):
            step = max(_CHUNK // max(int(lengths[a]), 1), 1)
            out.extend((i, min(i + step, b)) for i in range(a, b, step))
        return out
    ends = offsets[1:] - offsets[0]
    out = []
    a = 0
    while a < n:
        base = int(ends[a - 1]) if a else 0
        b = max(int(np.searchsorted(ends, base + _CHUNK, side="right")), a + 1)
        out.append((a, b))
        a = b
    return out


def _count_rows(
    scores: np.ndarray, width: int, pq: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_count_expanded` for queries of equal length ``width``: their rows compared as one block."""
    greater, r, c = _block_counts(scores.reshape(-1, width)[pq], t)
    return greater, r, pq[r] * width + c


def _block_counts(block: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of a 2-D block: how many values exceed the row's ``t``; and the (row, column) of every
    value equal to it, in rows where two or more are."""
    gt = block > t[:, None]
    eq = block == t[:, None]  # -0.0 == 0.0 and inf == inf, as float32 ties should
    rows = np.flatnonzero(_row_counts(eq) > 1)
    r, c = np.divmod(np.flatnonzero(eq[rows]), block.shape[1])  # 1-D nonzero: much faster than 2-D
    return _row_counts(gt), rows[r], c


def _count_expanded(
    scores: np.ndarray, offsets: np.ndarray, pq: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compare each pair's float32 score with every element of its query's segment."""
    starts = offsets[pq]
    sizes = offsets[pq + 1] - starts
    total = int(sizes.sum())
    owner = np.repeat(np.arange(pq.size), sizes)
    shift = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes)
    pos = np.arange(total, dtype=np.int64) + shift
    values = scores[pos]
    gt = values > t[owner]
    eq = values == t[owner]
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
    scores: np.ndarray, offsets: np.ndarray, queries: np.ndarray, pq: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_count_expanded` for pairs of ``queries`` (ascending) by sorting those queries' keys once.

    A pair's tie group is a run of equal keys, so its members come out of the sort too.
    """
    local = np.full(offsets.size - 1, -1, np.int64)
    local[queries] = np.arange(queries.size)
    lengths = offsets[queries + 1] - offsets[queries]
    owner = np.repeat(np.arange(queries.size, dtype=np.uint64), lengths)
    pos = gather_rows(offsets, queries)
    keys = (owner << np.uint64(32)) | _ordered_u32(_as_f32(scores[pos])).astype(np.uint64)
    order = np.argsort(keys)
    keys = keys[order]
    pkeys = (local[pq].astype(np.uint64) << np.uint64(32)) | _ordered_u32(_as_f32(t)).astype(np.uint64)
    lo = np.searchsorted(keys, pkeys, side="left")
    hi = np.searchsorted(keys, pkeys, side="right")
    seg_start = (np.cumsum(lengths) - lengths)[local[pq]]
    tied = np.flatnonzero(hi - lo > 1)
    tied = tied[np.unique(lo[tied], return_index=True)[1]]  # a group is listed once, by its first pair
    sizes = (hi - lo)[tied]
    at = np.repeat(lo[tied] - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))
    return lo - seg_start, np.repeat(tied, sizes), pos[order[at]]


def _resolve_ties(prep: Prepared, ties: str, counted: Counted) -> np.ndarray:
    """Extra rank from float32 tie-group members that precede each judged document."""
    tie_pair, tie_pos, member_ids, pair_ids = counted.tie_pair, counted.tie_pos, counted.tie_ids, counted.tie_pair_ids
    n_pairs = prep.pair_query.size  # the ids are str: count_f32 checked them
    if ties == "trec":
        before = _str_greater(member_ids, pair_ids)
    elif ties == "stable":
        s_member = prep.exact_at(tie_pos, member_ids)
        s_pair = prep.pair_score[tie_pair]
        is_self = np.fromiter(map(str.__eq__, member_ids, pair_ids), bool, count=len(member_ids))
        self_pos = np.zeros(n_pairs, np.int64)
        self_pos[tie_pair[is_self]] = tie_pos[is_self]
        same = s_member == s_pair
        before = (s_member > s_pair) | (same & (tie_pos < self_pos[tie_pair]))
        if prep.raw_at is not None and (inexact := np.flatnonzero(same & (np.abs(s_pair) >= _F64_EXACT))).size:
            # Doubles this large are whole numbers that an int may not be: compare the run's own values.
            at = tie_pos[inexact]
            member = prep.raw_at(at, list(map(member_ids.__getitem__, inexact.tolist())))
            judged = prep.raw_at(at, list(map(pair_ids.__getitem__, inexact.tolist())))
            earlier = at < self_pos[tie_pair[inexact]]
            before[inexact] = [m > p or (m == p and e) for m, p, e in zip(member, judged, earlier.tolist())]
    else:  # pragma: no cover - presets validate ties
        raise ValueError(ties)
    extra = np.bincount(tie_pair, weights=before, minlength=n_pairs).astype(np.int64)
    if counted.sharing.size:
        _rank_in_shared_groups(prep, ties, counted, extra)
    return extra


def _rank_in_shared_groups(prep: Prepared, ties: str, counted: Counted, extra: np.ndarray) -> None:
    """``extra`` of every judged document of a group several share: its rank in the group, ordered once
    (by id descending for ``"trec"``; by float64 score descending, then results order, for ``"stable"``)."""
    listers = np.unique(counted.sharing_lister)
    shared = np.zeros(extra.size, bool)
    shared[listers] = True
    at = np.flatnonzero(shared[counted.tie_pair])  # the members of those groups
    owner = counted.tie_pair[at]
    ids = list(map(counted.tie_ids.__getitem__, at.tolist()))
    if ties == "stable":
        pos = counted.tie_pos[at]
        s = prep.exact_at(pos, ids)
        order = np.lexsort((pos, -s, owner))
        if prep.raw_at is not None and bool((np.abs(s) >= _F64_EXACT).any()):  # see _resolve_ties
            raw = prep.raw_at(pos, ids)
            order = np.asarray(sorted(order.tolist(), key=lambda i: (owner[i], -raw[i], pos[i])), np.int64)
    else:
        order = np.argsort(owner, kind="stable")
    owner = owner[order]
    ids = list(map(ids.__getitem__, order.tolist()))
    bounds = np.flatnonzero(np.diff(owner, prepend=-1, append=-2)).tolist()
    judged = np.concatenate([listers, counted.sharing])
    by_group = np.concatenate([listers, counted.sharing_lister])
    judged = judged[np.argsort(by_group, kind="stable")]
    judged_bounds = np.flatnonzero(np.diff(np.sort(by_group), prepend=-1, append=-2)).tolist()
    for (a, b), (c, d) in zip(pairwise(bounds), pairwise(judged_bounds)):
        group = ids[a:b]
        if ties == "trec":
            group.sort(reverse=True)  # str order is code-point order: trec_eval's byte order
        rank = dict(zip(group, range(len(group))))
        pairs = judged[c:d]
        extra[pairs] = list(map(rank.__getitem__, map(prep.pair_doc.__getitem__, pairs.tolist())))


def _str_greater(a: list[str], b: list[str]) -> np.ndarray:
    # Python compares str by code point, which is the byte order of their UTF-8 (trec_eval's strcmp).
    return np.fromiter(map(str.__gt__, a, b), bool, count=len(a))


# -- trec_eval's order of a whole ranking ----------------------------------------------------------------
# The one place the package orders a ranking as trec_eval does (float32 score descending, ties by doc id
# descending): the run writer, the pools, the judge's top k, fusion's rank order and the report's lists all
# call these. The ranks above count instead of sorting; they follow the same two rules.


def _trec_keys(scores: Iterable[float] | np.ndarray, count: int = -1) -> np.ndarray:
    """Scores as trec_eval compares them: float32 (beyond its range +-inf, as trec_eval's cast stores them)."""
    with np.errstate(over="ignore"):
        if isinstance(scores, np.ndarray):
            return scores.astype(np.float32, copy=False)
        return np.fromiter(scores, dtype=np.float32, count=count)


def trec_sorted(ids: Sequence[str], scores: Iterable[float] | np.ndarray) -> list[str]:
    """``ids`` in trec_eval's order of their ``scores`` (one per id, finite): float32 score descending, ties by
    id descending (str order is code-point order, the byte order of trec_eval's ``strcmp`` on UTF-8).

        >>> trec_sorted(["d9", "d10", "d2"], [1.0, 1.0, 2.0])
        ['d2', 'd9', 'd10']
    """
    keys = _trec_keys(scores, len(ids))
    if len(ids) < 2:
        return list(ids)
    if (keys[:-1] >= keys[1:]).all():
        # Scores in order already (a retriever's output, usually): only runs of tied scores are sorted, by id.
        out = list(ids)
        tied = np.flatnonzero(keys[:-1] == keys[1:])
        if tied.size:
            starts = tied[np.r_[True, tied[1:] != tied[:-1] + 1]].tolist()
            ends = (tied[np.r_[tied[1:] != tied[:-1] + 1, True]] + 2).tolist()
            for a, b in zip(starts, ends):
                out[a:b] = sorted(out[a:b], reverse=True)
        return out
    # float32 values as Python floats (exact), compared in tuples: one numpy call, not one per document.
    return [d for _, d in sorted(zip(keys.tolist(), ids), reverse=True)]


def trec_order(docs: Mapping[str, float]) -> list[str]:
    """The documents of ``{doc: score}`` (finite scores) in trec_eval's order (:func:`trec_sorted`).

    >>> trec_order({"d1": 0.5, "d3": 0.9, "d2": 0.5})
    ['d3', 'd2', 'd1']
    """
    return trec_sorted(list(docs), docs.values())


def out_of_trec_order(ids: Sequence[str], scores: np.ndarray, offsets: np.ndarray | None = None) -> np.ndarray:
    """Positions ``i`` of the rows that break trec_eval's order after row ``i - 1`` of the same query: a float32
    score above the one before, or one tied with it whose id does not descend. Empty when every query is in
    trec_eval's order already (:func:`trec_sorted` would keep it).

    :param scores: the rows' scores (finite), queries one after another.
    :param offsets: where each query's rows start, and the end (``[0, ..., len(ids)]``); None: one query.
    """
    keys = _trec_keys(scores)
    if keys.size < 2:
        return np.zeros(0, np.int64)
    before, after = keys[:-1], keys[1:]
    # -0.0 ties 0.0 and inf ties inf, as in trec_eval; a NaN (never given: scores are checked finite) breaks it
    rises, tied = ~(after <= before), after == before
    if offsets is not None:
        cuts = np.asarray(offsets[1:-1], np.int64)
        cuts = cuts[(cuts > 0) & (cuts < keys.size)] - 1  # the pairs across two queries are not compared
        rises[cuts] = tied[cuts] = False
    at = np.flatnonzero(tied)
    descending = map(str.__gt__, map(ids.__getitem__, at.tolist()), map(ids.__getitem__, (at + 1).tolist()))
    unordered = at[~np.fromiter(descending, dtype=bool, count=at.size)]
    return np.union1d(np.flatnonzero(rises), unordered) + 1


def in_trec_order(ranked: Mapping[str, float]) -> bool:
    """Whether ``{doc: score}`` (finite scores, in a pipeline's order) is in trec_eval's order already:
    ``list(ranked) == trec_order(ranked)``, without sorting (:func:`out_of_trec_order`)."""
    if len(ranked) < 2:
        return True
    return out_of_trec_order(list(ranked), _trec_keys(ranked.values(), len(ranked))).size == 0
