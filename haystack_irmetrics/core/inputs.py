"""The input containers: judgments and runs, validated once, read-only.

Two shapes come in: BEIR-style dicts (``{qid: {docid: value}}``, :class:`Qrels` and :class:`Run`) and
arrays (:class:`ColumnarRun`, what the file readers build; :class:`RankedRun`, ranked lists of ids or
of objects such as Haystack Documents, with no scores). Dicts are read, never copied or modified.
:func:`as_run` takes any accepted run; :mod:`.prepare` flattens it against the qrels for ranking.
Validation rules live in :mod:`.validation`; the optional compiled scan behind :mod:`.native`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from itertools import chain, islice, repeat
from typing import Any

import numpy as np

from ..errors import EmptyInputError, InvalidIdError, InvalidLabelError, InvalidScoreError, IRMetricsError
from . import native
from .columns import columns_to_dict
from .packing import csr, flat_values
from .validation import (
    QrelsDict,
    RunDict,
    _values,
    as_dicts,
    check_doc_ids,
    check_id,
    float_subclasses,
    is_mapping,
    own_value,
    query_ids_of,
)

__all__ = ["ArrayRun", "ColumnarRun", "Qrels", "QrelsDict", "RankedRun", "Run", "RunDict", "as_run"]


class Qrels:
    """Relevance judgments ``{qid: {docid: label}}``; labels may be int or float, negative = not relevant.

    Build with :meth:`from_dict` or :meth:`from_columns`; the object keeps a read-only reference.
    """

    __slots__ = ("data", "labels", "offsets", "qids")

    def __init__(self, data: QrelsDict, qids: list[str], offsets: np.ndarray, labels: np.ndarray) -> None:
        self.data = data
        self.qids = qids
        self.offsets = offsets
        self.labels = labels

    @classmethod
    def from_dict(cls, qrels: QrelsDict) -> Qrels:
        if isinstance(qrels, Qrels):
            return qrels
        qids = query_ids_of(qrels, "qrels", "{qid: {docid: label}}", "no query has relevance judgments")
        inner = list(qrels.values())
        plain = set(map(type, inner)) <= {dict}
        if not plain:
            for q in qids:
                if not is_mapping(qrels[q]):
                    raise InvalidLabelError(
                        f"qrels[{q!r}] must be a dict {{docid: label}}, got {type(qrels[q]).__name__}"
                    )
        if not plain or type(qrels) is not dict:
            qrels = as_dicts(qrels, plain)
            qids, inner = list(qrels), list(qrels.values())
        check_doc_ids(qrels, qids, inner)
        offsets = csr(np.fromiter(map(len, inner), np.int64, count=len(qids)))
        labels = np.empty(int(offsets[-1]), np.float64)
        if not native.read_labels(inner, labels):  # the compiled read takes plain input only
            labels = flat_values(qrels, qids, inner, int(offsets[-1]), "label", InvalidLabelError)
            if float_subclasses(chain.from_iterable(map(_values, inner))):
                # Kept as their own values: later reads of the judgments (numpy's, through
                # __float__) must see what the labels hold.
                qrels = {q: {d: own_value(v) for d, v in docs.items()} for q, docs in zip(qids, inner)}
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
        data = columns_to_dict(query_ids, doc_ids, labels, source, line_numbers, "label", InvalidLabelError)
        return cls.from_dict(data)

    def judged(self, qid: str) -> bool:
        """True when the query has at least one judgment (an empty dict does not count)."""
        inner = self.data.get(qid)
        return bool(inner)


class Run:
    """Retrieval results ``{qid: {docid: score}}``; higher score = better.

    ``qids`` lists the queries in results order; ``plain`` tells that every inner mapping is a
    ``dict`` (C-level lookups apply).
    """

    __slots__ = ("data", "plain", "qids")

    def __init__(self, data: RunDict, qids: list[str] | None = None, plain: bool | None = None) -> None:
        self.data = data
        self.qids = list(data) if qids is None else qids
        self.plain = set(map(type, data.values())) <= {dict} if plain is None else plain

    @classmethod
    def from_dict(cls, results: RunDict) -> Run:
        if isinstance(results, Run):
            return results
        qids = query_ids_of(results, "results", "{qid: {docid: score}}", "no query was retrieved for")
        plain = set(map(type, results.values())) <= {dict}
        if not plain:
            for q, inner in results.items():
                if not is_mapping(inner):
                    raise InvalidScoreError(
                        f"results[{q!r}] must be a dict {{docid: score}}, got {type(inner).__name__} "
                        "(ranked lists of doc ids are accepted too, when every query has one)"
                    )
        if not plain or type(results) is not dict:
            results = as_dicts(results, plain)
            qids, plain = list(results), True
        return cls(results, qids, plain)

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
        data = columns_to_dict(query_ids, doc_ids, scores, source, line_numbers, "score", InvalidScoreError)
        return cls.from_dict(data)


class ArrayRun:
    """A run held as arrays grouped by query: ``qids[i]`` owns rows ``offsets[i]:offsets[i+1]`` of
    :attr:`scores`, and doc ids are reached through :meth:`ids_at` and :meth:`find` (only judged
    documents and tie-group members ever become Python strings). :class:`ColumnarRun` and
    :class:`RankedRun` are the two kinds; each keeps its ids its own way.
    """

    __slots__ = ("_data", "identical", "offsets", "qids", "source")

    qids: list[str]
    offsets: np.ndarray
    identical: np.ndarray | None
    source: str

    @property
    def scores(self) -> np.ndarray:
        """One score per row (float or int), higher = better."""
        raise NotImplementedError

    def ids_at(self, rows: np.ndarray) -> list[str]:
        """The doc ids of those rows."""
        raise NotImplementedError

    def find(self, candidates: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, which)``: the rows (ascending) whose doc id is one of ``candidates``, and which one."""
        raise NotImplementedError

    def identical_rows(self) -> np.ndarray:
        """Bool per row: the doc id is the query's own id (``identical``, found through :meth:`find` if not given)."""
        if self.identical is None:
            rows, which = self.find(list(self.qids))
            own = rows[which == np.searchsorted(self.offsets, rows, side="right") - 1]
            self.identical = np.zeros(int(self.offsets[-1]), bool)
            self.identical[own] = True
        return self.identical

    @property
    def data(self) -> dict[str, dict[str, float]]:
        """The run as ``{qid: {docid: score}}`` (built on first use; costly for big runs)."""
        if self._data is None:
            ids = self.ids_at(np.arange(int(self.offsets[-1])))
            values = self.scores.tolist()
            bounds = self.offsets.tolist()
            self._data = {q: dict(zip(ids[a:b], values[a:b])) for q, a, b in zip(self.qids, bounds[:-1], bounds[1:])}
        return self._data


class ColumnarRun(ArrayRun):
    """A run held as arrays grouped by query, with no Python object per retrieved document.

    What the file readers build (``haystack_irmetrics.io``): ``qids[i]`` owns rows
    ``offsets[i]:offsets[i+1]`` of ``scores``, in file order within the query. Doc ids stay in the
    reader's own storage and are reached through two callables, so that only judged documents
    and tie-group members ever become Python strings:

    * ``ids_at(rows)``: the doc ids of those rows;
    * ``find(candidates)``: ``(rows, which)``, the rows (ascending) whose doc id is one of
      ``candidates`` and the index of that candidate;
    * ``identical``: optional bool per row, doc id == query id (BEIR drops those rows); found
      through ``find`` when first needed if not given.
    """

    __slots__ = ("_find", "_ids_at", "_scores")

    def __init__(
        self,
        qids: list[str],
        offsets: np.ndarray,
        scores: np.ndarray,
        ids_at: Callable[[np.ndarray], list[str]],
        find: Callable[[list[str]], tuple[np.ndarray, np.ndarray]],
        identical: np.ndarray | None = None,
        source: str = "run",
    ) -> None:
        # The readers build valid parts; a caller's own parts are checked here, once (cheap: no per-row work).
        if not isinstance(scores, np.ndarray) or scores.ndim != 1 or scores.dtype.kind not in "fiu":
            kind = scores.dtype if isinstance(scores, np.ndarray) else type(scores).__name__
            raise InvalidScoreError(f"{source}: scores must be a 1-D numpy array of floats or ints, got {kind}")
        offsets = np.asarray(offsets)
        if (
            offsets.ndim != 1
            or offsets.dtype.kind not in "iu"
            or offsets.size != len(qids) + 1
            or offsets.size == 0
            or offsets[0] != 0
            or offsets[-1] != scores.size
            or (np.diff(offsets) < 0).any()
        ):
            raise EmptyInputError(
                f"{source}: offsets must be {len(qids) + 1} non-decreasing ints from 0 to the {scores.size} scores"
            )
        self.qids = qids
        self.offsets = offsets
        self._scores = scores
        self._ids_at = ids_at
        self._find = find
        self.identical = identical
        self.source = source
        self._data: dict[str, dict[str, float]] | None = None

    @property
    def scores(self) -> np.ndarray:
        return self._scores

    def ids_at(self, rows: np.ndarray) -> list[str]:
        return self._ids_at(rows)

    def find(self, candidates: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return self._find(candidates)


_F32_EXACT = 1 << 24  # every integer up to 2**24 is a float32: synthetic scores never tie


class RankedRun(ArrayRun):
    """A run given as ranked lists of doc ids, best first: no scores, so no ties.

    What a pipeline returns (``Document`` lists in rank order) and what many systems log. Query
    ``qids[i]`` ranks ``ids[offsets[i]:offsets[i+1]]``. A doc id repeated in one list counts once,
    at its first position: the later copies are dropped and the documents after them move up (a
    chunked document counts once). The scores are synthetic and strictly decreasing (``n - position``
    for a list of ``n`` distinct ids), so every tie policy, both BEIR paths and trec_eval's
    order rank exactly the list order: ``evaluate(qrels, RankedRun.from_lists(lists))`` equals
    ``evaluate(qrels, {q: {d: n - i ...}})``.

    Build it with :meth:`from_lists` (or :meth:`from_items` / :meth:`from_judged_items` from objects
    such as Haystack Documents). Judged documents are found by :meth:`locate`, one hash lookup each,
    so scoring needs no pass over the unjudged ids. Where the compiled scan is
    built, the lists are read and indexed in one C pass (each query's ids hashed once into a
    table); otherwise ``positions[i]``, a dict of each distinct id of query ``i`` to its 0-based
    position, is the index. Both find what a dict finds (exact str ids, equal by code points).

    Usage::

        >>> from haystack_irmetrics import evaluate
        >>> from haystack_irmetrics.core.inputs import RankedRun
        >>> run = RankedRun.from_lists({"q1": ["d4", "d1", "d4", "d2"]})
        >>> run.qids, run.offsets.tolist(), run.ids
        (['q1'], [0, 3], ['d4', 'd1', 'd2'])
        >>> evaluate({"q1": {"d1": 1, "d2": 1}}, run, k_values=[2]).means["P@2"]
        0.5
    """

    __slots__ = ("_ids", "_items", "_located", "_own", "_positions", "_scores", "_table")

    def __init__(self, qids: list[str], ids: list[str], lengths: Sequence[int], source: str = "run") -> None:
        """From validated parts: unique str ``qids``, str ``ids`` concatenated, ``lengths[i]`` of them for query ``i``."""
        sizes = np.asarray(lengths if isinstance(lengths, np.ndarray) else list(lengths), np.int64).reshape(-1)
        if sizes.size != len(qids) or int(sizes.sum()) != len(ids) or (sizes < 0).any():
            raise EmptyInputError(
                f"{source}: {len(qids)} queries, {sizes.size} lengths summing to {int(sizes.sum())}, {len(ids)} ids"
            )
        if type(ids) is not list:
            ids = list(ids)
        indexed = native.index_lists(ids, sizes.tobytes(), None, None)
        if indexed is not None:
            self._setup_indexed(qids, indexed, source)
            return
        sizes_list = sizes.tolist()
        offsets = csr(sizes)
        bounds = offsets.tolist()
        positions = _position_dicts(ids, sizes_list)
        if sum(map(len, positions)) != len(ids):
            # A repeated id keeps its first position (dict.fromkeys keeps first insertion).
            lists = list(map(ids.__getitem__, map(slice, bounds[:-1], bounds[1:])))
            for i, (ranked, size) in enumerate(zip(lists, sizes_list)):
                if len(positions[i]) != size:
                    lists[i] = list(dict.fromkeys(ranked))
                    positions[i] = dict(zip(lists[i], range(len(lists[i]))))
            ids = list(chain.from_iterable(lists))
            offsets = csr(np.fromiter(map(len, lists), np.int64, count=len(lists)))
        self._setup(qids, ids, offsets, source)
        self._positions = positions

    def _setup_indexed(self, qids: list[str], indexed: tuple, source: str) -> None:
        ids, counts, table, table_offsets = indexed
        self._setup(qids, ids, csr(np.frombuffer(counts, np.int64)), source)
        self._table = (table, table_offsets)

    def _setup(self, qids: list[str], ids: list[str], offsets: np.ndarray, source: str) -> None:
        counts = offsets[1:] - offsets[:-1]
        if counts.size and int(counts.max()) > _F32_EXACT:
            raise IRMetricsError(
                f"{source}: a ranked list holds {int(counts.max()):,} documents; at most {_F32_EXACT:,} per query"
            )
        # Parts valid by construction: no ColumnarRun check. The scores (n - position within each list)
        # are built when first read, and the query's own ids (identical) are found when BEIR's rule asks.
        self.qids = qids
        self.offsets = offsets
        self.identical = None
        self.source = source
        self._data = None
        self._ids = ids
        self._items: tuple[list, str, type] | None = None  # what from_judged_items read the keys from
        self._located: tuple[dict, list, np.ndarray, np.ndarray] | None = None
        self._scores: np.ndarray | None = None
        self._own: np.ndarray | None = None
        self._positions: list[dict[str, int]] | None = None
        self._table: tuple[bytearray, bytearray] | None = None

    @classmethod
    def from_lists(cls, rankings: Mapping[str, Sequence[str]], *, source: str = "run") -> RankedRun:
        """``{qid: [doc id, ...]}``, best first. Ids must be str; an empty list is a query that retrieved nothing."""
        if isinstance(rankings, RankedRun):
            return rankings
        qids = query_ids_of(rankings, source, "{qid: [docid, ...]}", "no query was retrieved for")
        lists = list(rankings.values())
        for q, ranked in zip(qids, lists):
            if isinstance(ranked, str | bytes | Mapping) or not isinstance(ranked, Sequence):
                raise InvalidIdError(
                    f"{source}[{q!r}] must be a list of doc ids in rank order, got {type(ranked).__name__}"
                )
        run = cls.from_items(qids, lists, source=source)
        if run is not None:
            return run
        ids = list(chain.from_iterable(lists))
        if not set(map(type, ids)) <= {str}:
            for q, ranked in zip(qids, lists):
                for j, d in enumerate(ranked):
                    check_id("document", d, f" at {source}[{q!r}][{j}]")
        return cls(qids, ids, list(map(len, lists)), source)

    @classmethod
    def from_items(
        cls,
        qids: list[str],
        lists: list[Sequence[Any]],
        attr: str | None = None,
        item_type: type | None = None,
        *,
        source: str = "run",
    ) -> RankedRun | None:
        """Query ``qids[i]`` ranks the keys of ``lists[i]`` (each a list or tuple), read and indexed in one
        compiled pass: the key of an item is the item itself, or ``getattr(item, attr)`` with every item
        of exactly ``item_type`` when given. None where the scan is not built or takes an item it does
        not handle (a key that is not exactly a str, an item of another type, a failed ``getattr``): the
        caller's own path then reads the lists and names what is wrong. ``qids`` must be validated."""
        if len(lists) != len(qids):
            return None
        indexed = native.index_lists(lists if type(lists) is list else list(lists), None, attr, item_type)
        if indexed is None:
            return None
        run = cls.__new__(cls)
        run._setup_indexed(qids, indexed, source)
        return run

    @classmethod
    def from_judged_items(
        cls,
        qids: list[str],
        judged: list[Sequence[Any]],
        lists: list[Sequence[Any]],
        attr: str,
        item_type: type,
        label_attr: str,
        *,
        source: str = "run",
    ) -> tuple[Qrels, RankedRun] | None:
        """Judgments and rankings of the same queries in one compiled pass: ``(qrels, run)``.

        ``judged[i]`` and ``lists[i]`` (lists or tuples of items of exactly ``item_type``) belong to
        ``qids[i]`` (validated, unique). Keys are ``getattr(item, attr)``, exact str. ``qrels.data[qids[i]]``
        is ``{key: getattr(item, label_attr)}`` over ``judged[i]`` in order, each label 1 where none of
        the query's judged items has one (None); the run ranks ``lists[i]`` as :meth:`from_items` does.
        The run keeps no key: each judgment's position was found while its query's keys were read,
        and :meth:`judged_positions` answers for these dicts; the keys are read again from the items
        only if asked for (:attr:`ids`, :meth:`locate` of other keys). So neither the judgments nor the
        items may change until the run is scored. None where the scan is not built or takes an item
        it does not handle (as :meth:`from_items`; also labels mixing None and numbers, a label that
        is not an int or float finite as a double, a key twice in one judged list, a query id twice,
        or an attribute whose code raises an Exception): the caller's own path then reads the items
        and names what is wrong.
        """
        if not (len(qids) == len(judged) == len(lists)):
            return None
        lists = list(lists)  # the run reads its own list of the lists, should it read the keys again
        out = native.index_judged(list(judged), lists, attr, item_type, label_attr, list(qids))
        if out is None:
            return None
        judgments, dicts, counts, positions, own, sizes, labels = out
        run = cls.__new__(cls)
        run._setup(qids, None, csr(np.frombuffer(counts, np.int64)), source)
        run._items = (lists, attr, item_type)
        run._own = np.frombuffer(own, np.int64)
        sizes = np.frombuffer(sizes, np.int64)
        run._located = (judgments, dicts, np.frombuffer(positions, np.int64), sizes)
        # The labels as Qrels.from_dict reads them (a float's value, an int's double), read in the pass.
        return Qrels(judgments, run.qids, csr(sizes), np.frombuffer(labels, np.float64)), run

    @property
    def ids(self) -> list[str]:
        """The distinct doc ids of every query, concatenated (read again from the items, when first
        asked for, for a run built by :meth:`from_judged_items`)."""
        if self._ids is None:
            self._read_items()
        return self._ids  # type: ignore[return-value]

    def _read_items(self) -> None:
        """Read the keys of a run built by :meth:`from_judged_items` again, with their table."""
        lists, attr, item_type = self._items  # type: ignore[misc]
        indexed = native.index_lists(lists, None, attr, item_type)
        if indexed is not None:
            ids, counts, table, table_offsets = indexed
            table_ = (table, table_offsets)
        else:
            ids, counts, table_ = [], b"", None  # items changed since they were read: not what the run ranks
            if set(map(type, chain.from_iterable(lists))) <= {item_type}:
                read = operator.attrgetter(attr)
                ranked = [list(dict.fromkeys(map(read, items))) for items in lists]
                ids = list(chain.from_iterable(ranked))
                if set(map(type, ids)) <= {str}:
                    counts = np.fromiter(map(len, ranked), np.int64, count=len(ranked)).tobytes()
        changed = IRMetricsError(
            f"{self.source}: the ranked items changed after they were read; keep them unchanged until scored"
        )
        if counts != np.diff(self.offsets).tobytes():
            raise changed
        self._ids, self._table = ids, table_
        # The same counts may still be other keys: where the pass found the judgments and own ids, the
        # keys read now must find them too.
        judgments, _, positions, sizes = self._located  # type: ignore[misc]
        own = self.locate(np.arange(len(self.qids)), list(self.qids))
        same = np.array_equal(own, self._own)
        if same and self.judged_positions(judgments) is not None:
            rows = np.repeat(np.arange(len(self.qids)), sizes)
            same = np.array_equal(self.locate(rows, list(chain.from_iterable(judgments.values()))), positions)
        if not same:
            self._ids = self._table = self._positions = None
            raise changed

    def judged_positions(self, judgments: Mapping[str, Mapping[str, Any]]) -> np.ndarray | None:
        """For a run built by :meth:`from_judged_items` and ``judgments`` the ``qrels.data`` it came with
        (that very dict, ``{qid: {key: label}}`` in the run's query order): each judgment's position in
        its query's ranking (-1: not ranked), flat in query and judged order. None for any other
        ``judgments`` (:meth:`locate` finds them)."""
        if self._located is None or judgments is not self._located[0]:
            return None
        _, dicts, positions, sizes = self._located
        if len(judgments) != sizes.size or not all(map(operator.is_, judgments.values(), dicts)):
            return None  # a query's dict replaced: looked up instead
        if not np.array_equal(np.fromiter(map(len, dicts), np.int64, count=sizes.size), sizes):
            return None  # a dict edited since (the run is read-only by contract)
        return positions

    @property
    def positions(self) -> list[dict[str, int]]:
        """``positions[i]``: each distinct id of query ``i`` to its 0-based position (built on first use)."""
        if self._positions is None:
            self._positions = _position_dicts(self.ids, np.diff(self.offsets).tolist())
        return self._positions

    def locate(self, rows: np.ndarray, ids: list[str]) -> np.ndarray:
        """0-based position of ``ids[k]`` in query ``rows[k]``'s list (int64; -1: not there)."""
        rows = np.ascontiguousarray(rows, np.int64)
        if self._ids is None:
            self._read_items()
        if self._table is not None:
            found = native.find_ranked(self.ids, self.offsets.tobytes(), *self._table, rows.tobytes(), ids)
            if found is not None:
                return np.frombuffer(found, np.int64)
        dicts = map(self.positions.__getitem__, rows.tolist())
        return np.fromiter(map(dict.get, dicts, ids, repeat(-1)), np.int64, count=len(ids))

    def own_positions(self) -> np.ndarray:
        """Per query, the position of its own id in its list (int64; -1: not there)."""
        if self._own is None:
            self._own = self.locate(np.arange(len(self.qids)), list(self.qids))
        return self._own

    def identical_rows(self) -> np.ndarray:
        """Bool per row: the doc id is the query's own id (found by :meth:`locate` when first asked)."""
        if self.identical is None:
            own = self.own_positions()
            hit = np.flatnonzero(own >= 0)
            self.identical = np.zeros(int(self.offsets[-1]), bool)
            self.identical[self.offsets[hit] + own[hit]] = True
        return self.identical

    @property
    def scores(self) -> np.ndarray:
        """The synthetic scores, ``n - position`` within each list (float64, built on first use)."""
        if self._scores is None:
            counts = np.diff(self.offsets)
            self._scores = np.repeat(self.offsets[1:].astype(np.float64), counts) - np.arange(
                int(self.offsets[-1]), dtype=np.float64
            )
        return self._scores

    # Methods reading the run's own ids (a bound method stored on its own object would be a reference
    # cycle, which kept every run, and its ids, alive until a cycle collection).
    def ids_at(self, rows: np.ndarray) -> list[str]:
        return list(map(self.ids.__getitem__, rows.tolist()))

    def find(self, candidates: list[str]) -> tuple[np.ndarray, np.ndarray]:
        index = dict(zip(candidates, range(len(candidates))))
        which = np.fromiter(map(index.get, self.ids, repeat(-1)), np.int64, count=len(self.ids))
        rows = np.flatnonzero(which >= 0)
        return rows, which[rows]


def _position_dicts(ids: list[str], sizes: list[int]) -> list[dict[str, int]]:
    """Per query, ``{id: position}`` over its ``sizes[i]`` ids (a repeated id: its last position).
    Consecutive islices of one iterator: each query's ids without a list slice per query."""
    flat = iter(ids)
    return list(map(dict, map(zip, map(islice, repeat(flat), sizes), map(range, sizes))))


def as_run(results: RunDict | Mapping[str, Sequence[str]] | Run | ArrayRun) -> Run | ArrayRun:
    """The run behind any accepted results: a :class:`Run` or an :class:`ArrayRun` as it is,
    ``{qid: [docid, ...]}`` (every value a list or tuple, or a subclass) as a :class:`RankedRun`, else a
    validated :class:`Run` of ``{qid: {docid: score}}``."""
    if isinstance(results, Run | ArrayRun):
        return results
    if isinstance(results, Mapping) and results:
        kinds = set(map(type, results.values()))
        if kinds <= {list, tuple} or (
            not kinds <= {dict} and all(isinstance(v, list | tuple) for v in results.values())
        ):
            return RankedRun.from_lists(results, source="results")
    return Run.from_dict(results)
