"""Prepare a run against the qrels: the scored queries flattened, and every judged document that was
retrieved found with its score (what :mod:`.ranking` ranks).

One function per run kind, each one visible Python path: dicts (:class:`~.inputs.Run`; the compiled
scan, where it is used, does this step in one pass per query and the Python path is the fallback),
ranked lists (:class:`~.inputs.RankedRun`: positions, no scores) and columns
(:class:`~.inputs.ColumnarRun`: arrays from the file readers).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain, compress, islice, repeat

import numpy as np

from ..errors import InvalidScoreError
from . import native
from .inputs import ArrayRun, ColumnarRun, Qrels, RankedRun, Run
from .packing import csr, flat_values, gather_rows, numpy_f64, packed_f64, read_f32
from .validation import _values

_contains = operator.contains


@dataclass(frozen=True)
class Prepared:
    """The run restricted to the queries that can be scored, flattened for ranking.

    ``qids[i]`` owns ``scores[offsets[i]:offsets[i+1]]`` (results order, identical ids removed when
    asked). ``scores`` are float32, the precision trec_eval ranks by (read so directly: half the
    memory to compare); None for ranked lists, whose ``pair_ranks`` are known without counting.
    ``pair_*`` list every judged document that was retrieved, grouped by query, with its float64 score. ``ids_at(positions)`` returns the doc ids at flat positions and
    ``exact_at(positions, ids)`` their float64 scores (tie-group members need both). ``judged_labels`` holds every judgment of the scored
    queries (retrieved or not), query ``i`` owning ``judged_labels[judged_offsets[i]:judged_offsets[i+1]]``.
    ``pair_ranks``, when known already, maps each tie order (``"trec"``, ``"stable"``) to every pair's
    0-based rank: for ranked lists their position (no ties exist), for dicts the compiled scan's ranks.
    """

    qids: list[str]
    offsets: np.ndarray
    scores: np.ndarray | None
    ids_at: Callable[[np.ndarray], list[str]]
    exact_at: Callable[[np.ndarray, list[str]], np.ndarray]
    pair_query: np.ndarray
    pair_score: np.ndarray
    pair_label: np.ndarray
    pair_doc: list[str]
    judged_offsets: np.ndarray
    judged_labels: np.ndarray
    pair_ranks: Mapping[str, np.ndarray] | None = None
    # The run's own score objects at (positions, ids), for dict runs: a Python int beyond 2**53 ties
    # its neighbours as a double, but BEIR's sort compares the ints themselves.
    raw_at: Callable[[np.ndarray, list[str]], list] | None = None


def prepare(run: Run | ArrayRun, qrels: Qrels, ignore_identical_ids: bool) -> Prepared:
    """Flatten the judged queries of ``run`` and look up the scores of their judged documents.

    Every per-query step is a C-level pass (``map`` over the dicts): each pass costs a few cache
    misses per query, so the passes are as few as possible — one over the judgments, one for the
    lengths, one over every score, one for each query's first judged document (others are few),
    and one for the query's own id when identical ids are dropped.
    """
    if isinstance(run, RankedRun):
        return _prepare_ranked(run, qrels, ignore_identical_ids)
    if isinstance(run, ColumnarRun):
        return _prepare_columnar(run, qrels, ignore_identical_ids)
    if run.plain and (prep := _prepare_dicts_compiled(run, qrels, ignore_identical_ids)) is not None:
        return prep
    results = run.data
    judged_all = list(map(qrels.data.get, run.qids))
    if all(judged_all):  # every results query has judgments: no filtering
        qids, judged, inner = run.qids, judged_all, list(results.values())
    else:
        keep = list(map(bool, judged_all))
        qids = list(compress(run.qids, keep))
        judged = list(compress(judged_all, keep))
        inner = list(compress(results.values(), keep))
    n = len(qids)
    lengths = np.fromiter(map(len, inner), np.int64, count=n)
    raw_offsets = csr(lengths)
    # The one pass over every retrieved score, read as float32 (the ranking precision).
    n_scores = int(raw_offsets[-1])
    packed = read_f32(inner, lengths, n_scores)
    scores = flat_values(results, qids, inner, n_scores, "score", InvalidScoreError, np.float32, packed)
    # Judged and tie-member scores are converted as the scores were (a float's own value when packed).
    as_f64 = packed_f64 if packed is not None else numpy_f64

    # Judged documents: one dict lookup each (NaN = not retrieved; scores are finite by now).
    judged_offsets, judged_labels = _scored_labels(qrels, qids, judged)
    n_judged = np.diff(judged_offsets)
    flat_docs = list(chain.from_iterable(judged))
    own_pos: dict[int, int] = {}
    found = _lookup(inner, judged, flat_docs, judged_offsets, run.plain, as_f64)
    if ignore_identical_ids:
        own = np.flatnonzero(np.fromiter(map(_contains, inner, qids), bool, count=n)).tolist()
        if own:
            # BEIR drops a document whose id is the query's own: find where it sits (C-level scan).
            own_pos = {i: operator.indexOf(inner[i], qids[i]) for i in own}
            scores = np.delete(scores, [int(raw_offsets[i]) + p for i, p in own_pos.items()])
            lengths[own] -= 1
    offsets = csr(lengths) if own_pos else raw_offsets
    hit = ~np.isnan(found)
    if own_pos:  # a query's own id is no judged hit either
        for i in own_pos:
            a = int(judged_offsets[i])
            for j, d in enumerate(judged[i], a):
                if d == qids[i]:
                    hit[j] = False
    idx = np.flatnonzero(hit)
    owner = np.repeat(np.arange(n), n_judged)
    pair_doc = list(map(flat_docs.__getitem__, idx.tolist()))
    members = _DictMembers(inner, raw_offsets, offsets, own_pos, run.plain, as_f64)
    return _dict_prepared(qids, offsets, scores, members, owner, found, idx, pair_doc, (judged_offsets, judged_labels))


def _prepare_dicts_compiled(run: Run, qrels: Qrels, ignore_identical_ids: bool) -> Prepared | None:
    """:func:`prepare` for plain dicts by the compiled scan: each query's judgments found, its scores
    read, its judged documents looked up and ranked in both orders while the query is in cache.
    None: an input the scan does not take (see ``_rank.c``); the Python path then reads it and names
    what is wrong."""
    values = list(run.data.values())
    out = native.prepare_dicts(values, run.qids, qrels.data, ignore_identical_ids)
    if out is None:
        return None
    *arrays, pair_doc = out
    scored, lengths, own, counts = (np.frombuffer(b, np.int64) for b in arrays[:4])
    scores = np.frombuffer(arrays[4], np.float32)
    labels, found = (np.frombuffer(b, np.float64) for b in arrays[5:7])
    trec, stable = (np.frombuffer(b, np.int64) for b in arrays[7:])
    if scored.size == len(run.qids):
        qids, inner = run.qids, values
    else:
        at = scored.tolist()
        qids, inner = list(map(run.qids.__getitem__, at)), list(map(values.__getitem__, at))
    dropped = np.flatnonzero(own >= 0)
    own_pos = dict(zip(dropped.tolist(), own[dropped].tolist()))
    offsets = csr(lengths)
    raw_offsets = csr(lengths + (own >= 0)) if own_pos else offsets
    judged_offsets = csr(counts)
    if qids == qrels.qids:
        # The labels Qrels read when it was built, as the Python path takes them for the same queries.
        if not np.array_equal(judged_offsets, qrels.offsets):
            return None  # its dicts changed size since (a caller broke the read-only contract)
        labels = qrels.labels
    idx = np.flatnonzero(trec >= 0)
    owner = np.repeat(np.arange(len(qids)), counts)
    members = _DictMembers(inner, raw_offsets, offsets, own_pos, True, packed_f64)
    ranks = {"trec": trec[idx], "stable": stable[idx]}
    return _dict_prepared(qids, offsets, scores, members, owner, found, idx, pair_doc, (judged_offsets, labels), ranks)


def _dict_prepared(
    qids: list[str],
    offsets: np.ndarray,
    scores: np.ndarray,
    members: _DictMembers,
    owner: np.ndarray,
    found: np.ndarray,
    idx: np.ndarray,
    pair_doc: list[str],
    judged: tuple[np.ndarray, np.ndarray],
    pair_ranks: Mapping[str, np.ndarray] | None = None,
) -> Prepared:
    """A dict run's :class:`Prepared`: the judgments ``idx`` (flat, qrels order) are the retrieved ones;
    ``judged`` is ``(judged_offsets, judged_labels)``."""
    judged_offsets, labels = judged
    return Prepared(
        qids,
        offsets,
        scores,
        members,
        members.scores,
        owner[idx],
        found[idx],
        labels[idx],
        pair_doc,
        judged_offsets,
        labels,
        pair_ranks=pair_ranks,
        raw_at=members.raw,
    )


_NAN = float("nan")
_get = operator.attrgetter("get")


def _lookup(
    inner: list,
    judged: list,
    flat_docs: list[str],
    judged_offsets: np.ndarray,
    plain: bool,
    as_f64: Callable[[Iterable, int], np.ndarray] = numpy_f64,
) -> np.ndarray:
    """The run's score of every judged document (flat, qrels order), NaN where it was not retrieved.

    Every scored query has a judged document: the first of each is looked up in one pass over the
    queries (no object per query); the others, usually few, through repeated references.
    """
    n = len(inner)
    total = int(judged_offsets[-1])
    starts = judged_offsets[:-1]
    first_docs = list(map(flat_docs.__getitem__, starts.tolist()))
    found = np.empty(total, np.float64)
    if plain:
        found[starts] = as_f64(map(dict.get, inner, first_docs, repeat(_NAN)), n)
    else:
        found[starts] = as_f64(map(_call_get, map(_get, inner), first_docs), n)
    if total == n:
        return found
    more = np.diff(judged_offsets) - 1
    rest = np.ones(total, bool)
    rest[starts] = False
    many = np.flatnonzero(more).tolist()
    docs = chain.from_iterable(map(islice, map(judged.__getitem__, many), repeat(1), repeat(None)))
    counts = more[many].tolist()
    if plain:
        dicts = chain.from_iterable(map(repeat, map(inner.__getitem__, many), counts))
        values = map(dict.get, dicts, docs, repeat(_NAN))
    else:
        values = map(_call_get, chain.from_iterable(map(repeat, map(_get, map(inner.__getitem__, many)), counts)), docs)
    found[rest] = as_f64(values, total - n)
    return found


def _call_get(get: Callable[[str, float], float], key: str) -> float:
    return get(key, _NAN)


def _scored_labels(qrels: Qrels, qids: list[str], judged: list | None = None) -> tuple[np.ndarray, np.ndarray]:
    """CSR offsets and labels of every judgment of the scored queries ``qids``, in qrels order."""
    if qids == qrels.qids:  # the same queries in the same order: the flattened qrels as they are
        return qrels.offsets, qrels.labels
    if judged is None:
        judged = list(map(qrels.data.__getitem__, qids))
    offsets = csr(np.fromiter(map(len, judged), np.int64, count=len(qids)))
    labels = np.fromiter(chain.from_iterable(map(_values, judged)), np.float64, count=int(offsets[-1]))
    return offsets, labels


class _DictMembers:
    """``ids_at`` (calling it) and ``exact_at`` (:meth:`scores`) for dict runs: doc ids at flat
    positions, for the few documents that need one, and their float64 scores looked up by id.

    Tie-group members need their ids, and a dict gives its i-th key only by iteration: each is
    reached by walking its query's keys from the nearer end (C-level ``islice``), unless listing
    every key of the queries involved costs less. (One walk per query to its farthest member
    costs more: dict order is not rank order, so a query's members lie far apart.)
    """

    def __init__(
        self,
        inner: list,
        raw_offsets: np.ndarray,
        offsets: np.ndarray,
        own_pos: dict[int, int],
        plain: bool,
        as_f64: Callable[[Iterable, int], np.ndarray] = numpy_f64,
    ) -> None:
        self.inner = inner
        self.plain = plain
        self.as_f64 = as_f64
        self.raw_offsets = raw_offsets
        self.offsets = offsets
        self.own_pos = own_pos

    def scores(self, positions: np.ndarray, ids: list[str]) -> np.ndarray:
        """float64 scores of the documents ``ids`` at flat ``positions`` (one lookup each)."""
        return self.as_f64(self._values(positions, ids), len(ids))

    def raw(self, positions: np.ndarray, ids: list[str]) -> list:
        """The score objects themselves (an int stays an int) of ``ids`` at flat ``positions``."""
        return list(self._values(positions, ids))

    def _values(self, positions: np.ndarray, ids: list[str]) -> Iterator:
        dicts = map(self.inner.__getitem__, (np.searchsorted(self.offsets, positions, side="right") - 1).tolist())
        return map(dict.__getitem__ if self.plain else operator.getitem, dicts, ids)

    def __call__(self, positions: np.ndarray) -> list[str]:
        if positions.size == 0:
            return []
        qidx = np.searchsorted(self.offsets, positions, side="right") - 1
        local = positions - self.offsets[qidx]
        if self.own_pos:  # positions count without the dropped identical id: step over it
            drop = np.full(len(self.inner), np.iinfo(np.int64).max, np.int64)
            drop[list(self.own_pos)] = list(self.own_pos.values())
            local = local + (local >= drop[qidx])
        sizes = self.raw_offsets[qidx + 1] - self.raw_offsets[qidx]
        back = sizes - 1 - local
        if not self.plain:  # reversed() needs a dict (other Mappings have no reverse order)
            back = np.full(local.size, np.iinfo(np.int64).max, np.int64)
        queries, which = np.unique(qidx, return_inverse=True)
        listed = self.raw_offsets[queries + 1] - self.raw_offsets[queries]
        if int(listed.sum()) < int(np.minimum(local, back).sum()):
            keys = list(chain.from_iterable(map(self.inner.__getitem__, queries.tolist())))
            at = (np.cumsum(listed) - listed)[which] + local
            return list(map(keys.__getitem__, at.tolist()))
        out = np.empty(positions.size, dtype=object)
        dicts = self.inner
        fwd = np.flatnonzero(local <= back)
        if fwd.size:
            its = map(iter, map(dicts.__getitem__, qidx[fwd].tolist()))
            out[fwd] = list(map(next, map(islice, its, local[fwd].tolist(), repeat(None))))
        bwd = np.flatnonzero(local > back)
        if bwd.size:
            its = map(reversed, map(dicts.__getitem__, qidx[bwd].tolist()))
            out[bwd] = list(map(next, map(islice, its, back[bwd].tolist(), repeat(None))))
        return out.tolist()


def _kept_rows(
    run: ColumnarRun, keep_q: np.ndarray, ignore_identical_ids: bool
) -> tuple[np.ndarray | None, np.ndarray]:
    """Run rows of the queries ``keep_q`` (None: every row), without a query's own id when
    identical ids are dropped, and each kept query's number of rows."""
    rows = None if keep_q.all() else gather_rows(run.offsets, keep_q)
    lengths = (run.offsets[1:] - run.offsets[:-1])[keep_q]
    if ignore_identical_ids:
        identical = run.identical_rows()
        same = identical if rows is None else identical[rows]
        if same.any():
            owner = np.repeat(np.arange(lengths.size), lengths)
            lengths = lengths - np.bincount(owner[same], minlength=lengths.size)
            rows = np.flatnonzero(~same) if rows is None else rows[~same]
    return rows, lengths


def _prepare_ranked(run: RankedRun, qrels: Qrels, ignore_identical_ids: bool) -> Prepared:
    """:func:`prepare` for ranked lists: judged documents are found by :meth:`RankedRun.locate`.

    The synthetic scores are whole numbers up to ``2**24``, exact in float32, so no score is read,
    no two documents of a query tie, and a judged document's rank is its position: nothing here
    costs a pass over the unjudged ids. ``scores`` stays None (nothing is counted: the ranks are known).
    """
    # Found while the lists were read (from_judged_items, whose qrels are in the run's query order),
    # else one lookup each.
    local = run.judged_positions(qrels.data) if qrels.qids is run.qids else None
    if local is not None:
        keep_q = qrels.offsets[1:] > qrels.offsets[:-1]
        judged_all = None
    else:
        judged_all = list(map(qrels.data.get, run.qids))
        keep_q = np.fromiter(map(bool, judged_all), bool, count=len(judged_all))
    where_q = np.flatnonzero(keep_q)
    qids = run.qids if where_q.size == len(run.qids) else list(compress(run.qids, keep_q))
    judged = list(map(qrels.data.__getitem__, qids)) if judged_all is None else list(compress(judged_all, keep_q))
    counts = np.diff(run.offsets)[where_q]
    # BEIR drops a query's own id: its position (-1: none) shifts the documents after it up by one.
    own = run.own_positions()[where_q] if ignore_identical_ids else np.full(where_q.size, -1, np.int64)
    lengths = counts - (own >= 0)

    judged_offsets, judged_labels = _scored_labels(qrels, qids, judged)
    n_judged = np.diff(judged_offsets)
    flat_docs = list(chain.from_iterable(judged))
    owner = np.repeat(np.arange(len(qids)), n_judged)
    if local is None:  # queries without judgments add nothing to either flat order
        local = run.locate(where_q[owner], flat_docs)
    idx = np.flatnonzero((local >= 0) & (local != own[owner]))
    pair_query = owner[idx]
    position = local[idx]
    dropped_before = (own[pair_query] >= 0) & (own[pair_query] < position)
    offsets = csr(lengths)

    def run_rows(where: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Kept flat positions -> (scored query, position in the run's list)."""
        q = np.searchsorted(offsets, where, side="right") - 1
        k = where - offsets[q]
        return q, k + ((own[q] >= 0) & (own[q] <= k))

    def ids_at(where: np.ndarray) -> list[str]:
        q, p = run_rows(where)
        return run.ids_at(run.offsets[where_q[q]] + p)

    def exact_at(where: np.ndarray, ids: list[str]) -> np.ndarray:
        q, p = run_rows(where)
        return (counts[q] - p).astype(np.float64)

    return Prepared(
        qids,
        offsets,
        None,
        ids_at,
        exact_at,
        pair_query,
        (counts[pair_query] - position).astype(np.float64),  # n - position: the synthetic score
        judged_labels[idx],
        list(map(flat_docs.__getitem__, idx.tolist())),
        judged_offsets,
        judged_labels,
        # The rank is the position among the query's kept rows, in either order.
        pair_ranks=dict.fromkeys(("trec", "stable"), position - dropped_before),
    )


def _prepare_columnar(run: ColumnarRun, qrels: Qrels, ignore_identical_ids: bool) -> Prepared:
    judgments = qrels.data
    keep_q = np.fromiter((bool(judgments.get(q)) for q in run.qids), bool, count=len(run.qids))
    qids = [q for q, k in zip(run.qids, keep_q.tolist()) if k]
    rows, lengths = _kept_rows(run, keep_q, ignore_identical_ids)
    offsets = csr(lengths)
    scores = run.scores if rows is None else run.scores[rows]
    # Readers check too, but columns may come from anywhere (a finite sum means all are finite).
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.isfinite(np.add.reduce(scores)) or np.isfinite(scores).all()
    if not finite:
        bad = int(np.flatnonzero(~np.isfinite(scores))[0])
        qi = int(np.searchsorted(offsets, bad, side="right") - 1)
        row = np.asarray([bad if rows is None else rows[bad]])
        raise InvalidScoreError(
            f"score {scores[bad]!r} of document {run.ids_at(row)[0]!r} in query {qids[qi]!r} is not a finite number"
        )

    # Judged documents: one vectorised membership test of every row against the judged ids.
    candidates = list({d for q in qids for d in judgments[q]})
    hits, which = run.find(candidates)
    if rows is not None:  # run rows -> positions among the kept rows
        at = np.full(run.scores.size, -1, np.int64)
        at[rows] = np.arange(rows.size)
        hits = at[hits]
        which = which[hits >= 0]
        hits = hits[hits >= 0]
    hit_q = np.searchsorted(offsets, hits, side="right") - 1
    pq: list[int] = []
    pp: list[int] = []
    pl: list[float] = []
    pd: list[str] = []
    for pos, qi, ci in zip(hits.tolist(), hit_q.tolist(), which.tolist()):
        d = candidates[ci]
        label = judgments[qids[qi]].get(d)
        if label is not None:
            pq.append(qi)
            pp.append(pos)
            pl.append(label)
            pd.append(d)

    def ids_at(positions: np.ndarray) -> list[str]:
        return run.ids_at(positions if rows is None else rows[positions])

    def exact_at(positions: np.ndarray, ids: list[str]) -> np.ndarray:
        return scores[positions]

    with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as trec_eval stores it
        scores32 = scores.astype(np.float32)
    return Prepared(
        qids,
        offsets,
        scores32,
        ids_at,
        exact_at,
        np.asarray(pq, dtype=np.int64),
        scores[np.asarray(pp, dtype=np.int64)],
        np.asarray(pl, dtype=np.float64) if pl else np.zeros(0),
        pd,
        *_scored_labels(qrels, qids),
    )
