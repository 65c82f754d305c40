"""Inputs: validated qrels and runs, and the flat arrays the ranking step works on.

Two shapes come in: BEIR-style dicts (``{qid: {docid: value}}``) and columns (query ids, doc ids,
values). Both end as the same structures. Dicts are read, never copied or modified. Only the
judged documents of a run need their ids looked up; every other retrieved document contributes
just its score, which is read in one C-level pass with :func:`numpy.fromiter`.

Validation lives here, in one place. Scores and labels must be real numbers; ``None``, NaN and
infinities raise, non-numeric strings raise, and a numeric string is read as :func:`float` would
(numpy's conversion; only the first value of each query is type-checked, so the check stays
off the hot path). Ids must be strings: the first id of every query is checked.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, islice, repeat
from numbers import Real

import numpy as np

from ..errors import (
    DuplicateDocumentError,
    EmptyInputError,
    InvalidIdError,
    InvalidLabelError,
    InvalidScoreError,
)

QrelsDict = Mapping[str, Mapping[str, float]]
RunDict = Mapping[str, Mapping[str, float]]


_NUMBER_TYPES = frozenset({float, int, np.float64, np.float32, np.int64, np.int32})


def _is_number(value: object) -> bool:
    if type(value) in _NUMBER_TYPES:  # fast path; the ABC check below is slow
        return True
    return isinstance(value, Real | np.number) and not isinstance(value, bool | np.bool_)


def _is_mapping(value: object) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _check_id(kind: str, value: object, where: str = "") -> None:
    if not isinstance(value, str):
        raise InvalidIdError(
            f"{kind} id {value!r}{where} is {type(value).__name__}; ids must be str (convert them with str())"
        )


def _first_bad(data: RunDict | QrelsDict, queries: Iterable[str], what: str, error: type[Exception]) -> Exception:
    """Locate the first non-finite or non-numeric value, for an error message (slow path)."""
    for q in queries:
        for d, v in data[q].items():
            try:
                ok = _is_number(v) or isinstance(v, str)
                f = float(v) if ok else float("nan")
            except (TypeError, ValueError):
                f = float("nan")
            if not (f == f and abs(f) != float("inf")):
                return error(f"{what} {v!r} of document {d!r} in query {q!r} is not a finite number")
    return error(f"a {what} is not a finite number")


_SAMPLE = 4096


def _check_first_items(
    data: RunDict | QrelsDict, queries: Sequence[str], what: str, error: type[Exception], sample: bool = False
) -> None:
    """Type-check the first (doc id, value) of every query (of an even sample of them for runs).

    C-level passes; Python only to name the offender. Runs are sampled because a check of every
    query costs more than scoring them does; wrong id types still surface, since judged lookups
    then find nothing, which the sample catches.
    """
    if sample and len(queries) > _SAMPLE:
        queries = queries[:: len(queries) // _SAMPLE]
    nonempty = list(filter(None, map(data.__getitem__, queries)))
    key_types = set(map(type, map(next, map(iter, nonempty))))
    value_types = set(map(type, map(next, map(iter, map(_values, nonempty)))))
    if key_types <= {str} and value_types <= _NUMBER_TYPES:
        return
    for q in queries:
        inner = data[q]
        if inner:
            d, v = next(iter(inner.items()))
            _check_id("document", d, f" in query {q!r}")
            if not _is_number(v):
                raise error(f"{what} {v!r} of document {d!r} in query {q!r} is {type(v).__name__}, not a number")


def _check_query_ids(qids: list, where: str) -> None:
    if not set(map(type, qids)) <= {str}:
        for q in qids:
            _check_id("query", q, where)


def _flat_values(data: RunDict | QrelsDict, queries: Sequence[str], what: str, error: type[Exception]) -> np.ndarray:
    """All values of ``data[q]`` for ``q`` in ``queries``, in order, as float64 (validated)."""
    inner = list(map(data.__getitem__, queries))
    n = sum(map(len, inner))
    try:
        values = np.fromiter(chain.from_iterable(map(_values, inner)), np.float64, count=n)
    except (TypeError, ValueError):
        raise _first_bad(data, queries, what, error) from None
    if not np.isfinite(values).all():
        raise _first_bad(data, queries, what, error)
    _check_first_items(data, queries, what, error)
    return values


# C-level callables for map(): no Python frame per query.
_values = operator.methodcaller("values")
_contains = operator.contains


class Qrels:
    """Relevance judgments ``{qid: {docid: label}}``; labels may be int or float, negative = not relevant.

    Build with :meth:`from_dict` or :meth:`from_columns`; the object keeps a read-only reference.
    """

    __slots__ = ("_index", "data", "labels", "offsets", "qids")

    def __init__(self, data: QrelsDict, qids: list[str], offsets: np.ndarray, labels: np.ndarray) -> None:
        self.data = data
        self.qids = qids
        self.offsets = offsets
        self.labels = labels
        self._index: dict[str, int] | None = None

    @classmethod
    def from_dict(cls, qrels: QrelsDict) -> Qrels:
        if isinstance(qrels, Qrels):
            return qrels
        if not isinstance(qrels, Mapping):
            raise EmptyInputError(f"qrels must be a dict {{qid: {{docid: label}}}}, got {type(qrels).__name__}")
        if len(qrels) == 0:
            raise EmptyInputError("qrels is empty: no query has relevance judgments")
        qids = list(qrels)
        _check_query_ids(qids, " in qrels")
        if not set(map(type, qrels.values())) <= {dict}:
            for q in qids:
                if not _is_mapping(qrels[q]):
                    raise InvalidLabelError(
                        f"qrels[{q!r}] must be a dict {{docid: label}}, got {type(qrels[q]).__name__}"
                    )
        lengths = np.fromiter(map(len, qrels.values()), np.int64, count=len(qids))
        offsets = np.zeros(len(qids) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        labels = _flat_values(qrels, qids, "label", InvalidLabelError)
        return cls(qrels, qids, offsets, labels)

    @classmethod
    def from_columns(
        cls,
        query_ids: Sequence[str] | np.ndarray,
        doc_ids: Sequence[str] | np.ndarray,
        labels: Sequence[float] | np.ndarray,
        *,
        source: str = "qrels",
        line_numbers: Sequence[int] | None = None,
    ) -> Qrels:
        """Judgments from three equal-length columns; a repeated (query, doc) pair raises."""
        data = _columns_to_dict(query_ids, doc_ids, labels, source, line_numbers, "label", InvalidLabelError)
        return cls.from_dict(data)

    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = dict(zip(self.qids, range(len(self.qids))))
        return self._index

    def judged(self, qid: str) -> bool:
        """True when the query has at least one judgment (an empty dict does not count)."""
        inner = self.data.get(qid)
        return bool(inner)


class Run:
    """Retrieval results ``{qid: {docid: score}}``; higher score = better."""

    __slots__ = ("data",)

    def __init__(self, data: RunDict) -> None:
        self.data = data

    @classmethod
    def from_dict(cls, results: RunDict) -> Run:
        if isinstance(results, Run):
            return results
        if not isinstance(results, Mapping):
            raise EmptyInputError(f"results must be a dict {{qid: {{docid: score}}}}, got {type(results).__name__}")
        if len(results) == 0:
            raise EmptyInputError("results is empty: no query was retrieved for")
        _check_query_ids(list(results), " in results")
        if not set(map(type, results.values())) <= {dict}:
            for q, inner in results.items():
                if not _is_mapping(inner):
                    raise InvalidScoreError(
                        f"results[{q!r}] must be a dict {{docid: score}}, got {type(inner).__name__}"
                    )
        return cls(results)

    @classmethod
    def from_columns(
        cls,
        query_ids: Sequence[str] | np.ndarray,
        doc_ids: Sequence[str] | np.ndarray,
        scores: Sequence[float] | np.ndarray,
        *,
        source: str = "run",
        line_numbers: Sequence[int] | None = None,
    ) -> Run:
        """A run from three equal-length columns; row order within a query is its insertion order.

        A repeated (query, doc) pair raises :class:`DuplicateDocumentError` naming both rows.
        """
        data = _columns_to_dict(query_ids, doc_ids, scores, source, line_numbers, "score", InvalidScoreError)
        return cls.from_dict(data)


def _columns_to_dict(
    query_ids: Sequence[str] | np.ndarray,
    doc_ids: Sequence[str] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    source: str,
    line_numbers: Sequence[int] | None,
    what: str,
    error: type[Exception],
) -> dict[str, dict[str, float]]:
    qs = query_ids.tolist() if isinstance(query_ids, np.ndarray) else list(query_ids)
    ds = doc_ids.tolist() if isinstance(doc_ids, np.ndarray) else list(doc_ids)
    if len(qs) != len(ds) or len(qs) != len(values):
        raise EmptyInputError(
            f"{source}: columns have different lengths (queries {len(qs)}, documents {len(ds)}, {what}s {len(values)})"
        )
    try:
        vs = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        for i, v in enumerate(values):
            try:
                float(v)
            except (TypeError, ValueError):
                raise error(f"{source} row {_row(i, line_numbers)}: {what} {v!r} is not a number") from None
        raise
    bad = np.flatnonzero(~np.isfinite(vs))
    if bad.size:
        i = int(bad[0])
        raise error(f"{source} row {_row(i, line_numbers)}: {what} {values[i]!r} is not a finite number")
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
        _check_id("query", q, f" ({source} row {_row(start, line_numbers)})")
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


def _row(i: int, line_numbers: Sequence[int] | None) -> int:
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
                f"(rows {_row(first[d], line_numbers)} and {_row(j, line_numbers)})"
            )
        first[d] = j
    raise DuplicateDocumentError(f"{source}: a document appears twice for query {q!r}")


class ColumnarRun:
    """A run held as arrays grouped by query, with no Python object per retrieved document.

    What the file readers build (``haystack_irmetrics.io``): ``qids[i]`` owns rows
    ``offsets[i]:offsets[i+1]`` of ``scores``, in file order within the query. Doc ids stay in the
    reader's own storage and are reached through two callables, so that only judged documents
    and tie-group members ever become Python strings:

    * ``ids_at(rows)``: the doc ids of those rows;
    * ``find(candidates)``: for every row, the index of its doc id in ``candidates`` or -1;
    * ``identical``: optional bool per row, doc id == query id.
    """

    __slots__ = ("_data", "find", "identical", "ids_at", "offsets", "qids", "scores", "source")

    def __init__(
        self,
        qids: list[str],
        offsets: np.ndarray,
        scores: np.ndarray,
        ids_at: Callable[[np.ndarray], list[str]],
        find: Callable[[list[str]], np.ndarray],
        identical: np.ndarray | None = None,
        source: str = "run",
    ) -> None:
        self.qids = qids
        self.offsets = offsets
        self.scores = scores
        self.ids_at = ids_at
        self.find = find
        self.identical = identical
        self.source = source
        self._data: dict[str, dict[str, float]] | None = None

    @property
    def data(self) -> dict[str, dict[str, float]]:
        """The run as ``{qid: {docid: score}}`` (built on first use; costly for big runs)."""
        if self._data is None:
            ids = self.ids_at(np.arange(self.scores.size))
            values = self.scores.tolist()
            bounds = self.offsets.tolist()
            self._data = {q: dict(zip(ids[a:b], values[a:b])) for q, a, b in zip(self.qids, bounds[:-1], bounds[1:])}
        return self._data


@dataclass(frozen=True)
class Prepared:
    """The run restricted to the queries that can be scored, flattened for ranking.

    ``qids[i]`` owns ``scores[offsets[i]:offsets[i+1]]`` (results order, identical ids removed when
    asked). ``pair_*`` list every judged document that was retrieved, grouped by query.
    ``ids_at(positions)`` returns the doc ids at flat positions.
    """

    qids: list[str]
    offsets: np.ndarray
    scores: np.ndarray
    ids_at: Callable[[np.ndarray], list[str]]
    pair_query: np.ndarray
    pair_score: np.ndarray
    pair_label: np.ndarray
    pair_doc: list[str]


def _csr(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _gather_rows(offsets: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Row indices of the segments ``keep`` (ascending), concatenated."""
    starts = offsets[:-1][keep]
    sizes = offsets[1:][keep] - starts
    return np.arange(int(sizes.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(sizes) - sizes), sizes)


def prepare(run: Run | ColumnarRun, qrels: Qrels, ignore_identical_ids: bool) -> Prepared:
    """Flatten the judged queries of ``run`` and look up the scores of their judged documents."""
    if isinstance(run, ColumnarRun):
        return _prepare_columnar(run, qrels, ignore_identical_ids)
    results = run.data
    judgments = qrels.data
    qids = list(filter(judgments.get, results))
    inner = list(map(results.__getitem__, qids))
    excluded: dict[int, str] = {}
    if ignore_identical_ids:
        own = np.fromiter(map(_contains, inner, qids), bool, count=len(qids))
        excluded = {i: qids[i] for i in np.flatnonzero(own).tolist()}
    lengths = np.fromiter(map(len, inner), np.int64, count=len(qids))
    for i in excluded:
        lengths[i] -= 1
    offsets = _csr(lengths)

    if excluded:

        def values(i: int, r: Mapping[str, float]) -> Iterable[float]:
            if i in excluded:
                q = qids[i]
                return (s for d, s in r.items() if d != q)
            return r.values()

        stream = chain.from_iterable(map(values, range(len(qids)), inner))
    else:
        stream = chain.from_iterable(map(_values, inner))
    # The one pass over every retrieved score.
    try:
        scores = np.fromiter(stream, np.float64, count=int(offsets[-1]))
    except (TypeError, ValueError):
        raise _first_bad(results, qids, "score", InvalidScoreError) from None
    if not np.isfinite(scores).all():
        raise _first_bad(results, qids, "score", InvalidScoreError)
    _check_first_items(results, qids, "score", InvalidScoreError, sample=True)

    # Judged documents: one dict lookup each, aligned with the flattened qrels of these queries.
    judged = list(map(judgments.__getitem__, qids))
    n_judged = np.fromiter(map(len, judged), np.int64, count=len(qids))
    flat_docs = list(chain.from_iterable(judged))
    if set(map(type, inner)) <= {dict}:
        # dict.get over (each run dict repeated once per judged doc, judged doc): no Python frame.
        found = list(map(dict.get, chain.from_iterable(map(repeat, inner, n_judged.tolist())), flat_docs))
    else:
        found = [r.get(d) for r, j in zip(inner, judged) for d in j]
    owner = np.repeat(np.arange(len(qids)), n_judged)
    hit_scores = np.array(found, dtype=np.float64) if found else np.zeros(0)  # None -> nan
    hit = ~np.isnan(hit_scores)
    if excluded:
        for i, q in excluded.items():  # a query's own id is no judged hit either
            a = np.flatnonzero(owner == i)
            for j, d in zip(a.tolist(), judged[i]):
                if d == q:
                    hit[j] = False
    labels = np.fromiter(chain.from_iterable(map(_values, judged)), np.float64, count=hit.size)
    idx = np.flatnonzero(hit)
    pair_doc = [flat_docs[j] for j in idx.tolist()]

    flat_ids: list[list[str]] = []

    def ids_at(positions: np.ndarray) -> list[str]:
        # Only tie-group members come here. Few: walk each query's dict to the member (C level,
        # from whichever end is nearer). Many: list every id once.
        if not flat_ids and positions.size * 50 > scores.size:
            flat = list(chain.from_iterable(inner))
            if excluded:
                raw = _csr(np.fromiter(map(len, inner), np.int64, count=len(qids)))
                drop = sorted(int(raw[i]) + list(inner[i]).index(q) for i, q in excluded.items())
                for j in reversed(drop):
                    del flat[j]
            flat_ids.append(flat)
        if flat_ids:
            flat = flat_ids[0]
            return [flat[p] for p in positions.tolist()]
        qidx = np.searchsorted(offsets, positions, side="right") - 1
        local = positions - offsets[qidx]
        out: list[str] = []
        for qi, i in zip(qidx.tolist(), local.tolist()):
            r = inner[qi]
            drop = excluded.get(qi)
            if drop is not None:
                ids = [d for d in r if d != drop]
                out.append(ids[i])
                continue
            n = len(r)
            if i < n // 2:
                out.append(next(islice(iter(r), i, None)))
            else:
                out.append(next(islice(reversed(r), n - 1 - i, None)))
        return out

    return Prepared(qids, offsets, scores, ids_at, owner[idx], hit_scores[idx], labels[idx], pair_doc)


def _prepare_columnar(run: ColumnarRun, qrels: Qrels, ignore_identical_ids: bool) -> Prepared:
    judgments = qrels.data
    keep_q = np.fromiter((bool(judgments.get(q)) for q in run.qids), bool, count=len(run.qids))
    qids = [q for q, k in zip(run.qids, keep_q.tolist()) if k]
    rows = None if keep_q.all() else _gather_rows(run.offsets, keep_q)
    lengths = (run.offsets[1:] - run.offsets[:-1])[keep_q]
    if ignore_identical_ids and run.identical is not None:
        same = run.identical if rows is None else run.identical[rows]
        if same.any():
            owner = np.repeat(np.arange(lengths.size), lengths)
            lengths = lengths - np.bincount(owner[same], minlength=lengths.size)
            rows = np.flatnonzero(~same) if rows is None else rows[~same]
    offsets = _csr(lengths)
    scores = run.scores if rows is None else run.scores[rows]
    if not np.isfinite(scores).all():  # readers check too; columns may come from anywhere
        bad = int(np.flatnonzero(~np.isfinite(scores))[0])
        qi = int(np.searchsorted(offsets, bad, side="right") - 1)
        row = np.asarray([bad if rows is None else rows[bad]])
        raise InvalidScoreError(
            f"score {scores[bad]!r} of document {run.ids_at(row)[0]!r} in query {qids[qi]!r} is not a finite number"
        )

    # Judged documents: one vectorised membership test of every row against the judged ids.
    candidates = list({d for q in qids for d in judgments[q]})
    where = run.find(candidates)
    if rows is not None:
        where = where[rows]
    hits = np.flatnonzero(where >= 0)
    hit_q = np.searchsorted(offsets, hits, side="right") - 1
    pq: list[int] = []
    pp: list[int] = []
    pl: list[float] = []
    pd: list[str] = []
    for pos, qi, ci in zip(hits.tolist(), hit_q.tolist(), where[hits].tolist()):
        d = candidates[ci]
        label = judgments[qids[qi]].get(d)
        if label is not None:
            pq.append(qi)
            pp.append(pos)
            pl.append(label)
            pd.append(d)

    def ids_at(positions: np.ndarray) -> list[str]:
        return run.ids_at(positions if rows is None else rows[positions])

    return Prepared(
        qids,
        offsets,
        scores,
        ids_at,
        np.asarray(pq, dtype=np.int64),
        scores[np.asarray(pp, dtype=np.int64)],
        np.asarray(pl, dtype=np.float64) if pl else np.zeros(0),
        pd,
    )
