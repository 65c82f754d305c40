"""Inputs: validated qrels and runs, and the flat arrays the ranking step works on.

Two shapes come in: BEIR-style dicts (``{qid: {docid: value}}``) and columns (query ids, doc ids,
values). Both end as the same structures. Dicts are read, never copied or modified. Only the
judged documents of a run need their ids looked up; every other retrieved document contributes
just its score, read in one C-level pass straight into float32 (the precision trec_eval ranks by;
judged documents and tie-group members keep float64): packed query by query with :mod:`struct`,
or with :func:`numpy.fromiter` where that refuses a value.

Where the optional compiled scan (``_rank.c``, built at install when a C compiler is there) is
available, plain dict runs with str ids and float (or int) scores go through it instead: it reads
each query's scores, looks up its judged documents and ranks them in both orders while the query
is in cache; ranked lists (:class:`RankedRun`, and the Haystack Documents the components turn
into them) are read and indexed by list in one C pass, so their judged documents are found by one
table lookup each. It computes what the Python path computes (the tests run both against the
oracles); any other input, and every error, stays with the Python path. ``IRMETRICS_PURE_PYTHON=1``
switches it off; a free-threaded build never imports it (see :func:`_native_wanted`).

Validation lives here, in one place. Scores and labels must be real numbers; ``None``, NaN,
infinities and strings (numeric ones too) raise wherever they are. Labels and columns are
type-checked in full; scores are converted by :mod:`struct`, which refuses anything but numbers
(the run is then type-checked in full and the offender named), and the exact type of a score that
converts — a bool, say — is checked on the first value of up to 1,000 queries spread over the
input, which keeps the check off the hot path. Ids must be strings: checked on the same sample, and
on every query id.
"""

from __future__ import annotations

import math
import operator
import os
import struct
import sysconfig
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from itertools import chain, compress, islice, repeat, starmap
from numbers import Real
from typing import Any

import numpy as np

from ..errors import (
    DuplicateDocumentError,
    EmptyInputError,
    InvalidIdError,
    InvalidLabelError,
    InvalidScoreError,
    IRMetricsError,
)

QrelsDict = Mapping[str, Mapping[str, float]]
RunDict = Mapping[str, Mapping[str, float]]


_NUMBER_TYPES = frozenset({float, int, np.float64, np.float32, np.int64, np.int32})


def _is_number_type(kind: type) -> bool:
    """A real number type (a ``Decimal`` too) that is not a bool; numpy's ``timedelta64`` (an
    integer subclass) and complex numbers are not scores or labels, though ``float()`` converts them."""
    if kind in _NUMBER_TYPES:  # fast path; the ABC check below is slow
        return True
    return issubclass(kind, Real | Decimal) and not issubclass(kind, bool | np.bool_ | np.timedelta64)


def _is_number(value: object) -> bool:
    return _is_number_type(type(value))


def _is_finite_number(value: object) -> bool:
    """A real number (:func:`_is_number`) that is finite as a float; an int beyond any float is not."""
    try:
        return _is_number(value) and math.isfinite(value)
    except OverflowError:
        return False


def _non_number_types(values: Iterable) -> set[type]:
    """The types among ``values`` that are no number type (one C-level pass over the types)."""
    return {k for k in set(map(type, values)) if not _is_number_type(k)}


def _check_value_types(
    data: RunDict | QrelsDict, queries: Iterable[str], flat: list, what: str, error: type[Exception]
) -> None:
    """Every value of ``flat`` (the values of ``data[q]`` for ``q`` in ``queries``, in order) is a
    number (one C-level pass over their types); else ``error`` names the first other one, its
    document and query."""
    bad = _non_number_types(flat)
    if not bad:
        return
    for q in queries:
        for d, v in data[q].items():
            if type(v) in bad:
                raise error(f"{what} {_shown(v)} of document {d!r} in query {q!r} is {type(v).__name__}, not a number")


def _is_mapping(value: object) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _check_id(kind: str, value: object, where: str = "") -> None:
    if not isinstance(value, str):
        raise InvalidIdError(
            f"{kind} id {value!r}{where} is {type(value).__name__}; ids must be str (convert them with str())"
        )


def _shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for a message, shortened; an int too long to print is described instead."""
    try:
        text = repr(value)
    except ValueError:  # an int beyond Python's digit limit for str()
        return f"<int of {value.bit_length():,} bits>" if isinstance(value, int) else f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_doc_ids(qrels: QrelsDict, qids: list[str], inner: list) -> None:
    """Every judged document id is a str (qrels are small: checked whole, one C-level pass over the
    types; a run's are sampled, see :func:`_check_first_items`)."""
    if set(map(type, chain.from_iterable(inner))) <= {str}:
        return
    for q, docs in zip(qids, inner):
        for d in docs:
            _check_id("document", d, f" in query {q!r} of the qrels")


def _float_subclasses(values: Iterable) -> bool:
    """Whether ``values`` hold a float subclass other than numpy's (whose ``__float__`` may lie)."""
    return any(k not in _NUMBER_TYPES and issubclass(k, float) for k in set(map(type, values)))


def _own_value(value: object) -> object:
    """A float (subclass) as the plain float of its own value, its ``__float__`` not called; anything
    else as it is."""
    return float.__float__(value) if isinstance(value, float) else value


def _stored(value: object) -> float:
    """A value's double as pytrec_eval and BEIR's sort read it: a float's own value (a float subclass's
    ``__float__`` is not called), anything else through ``float()``."""
    return float(_own_value(value))


def _first_bad(data: RunDict | QrelsDict, queries: Iterable[str], what: str, error: type[Exception]) -> Exception:
    """Locate the first non-finite or non-numeric value, for an error message (slow path)."""
    for q in queries:
        for d, v in data[q].items():
            try:
                ok = _is_number(v) or isinstance(v, str)
                f = _stored(v) if ok else float("nan")
            except (TypeError, ValueError, OverflowError):
                f = float("nan")
            if not (f == f and abs(f) != float("inf")):
                return error(f"{what} {_shown(v)} of document {d!r} in query {q!r} is not a finite number")
    return error(f"a {what} is not a finite number")


_SAMPLE = 1000


def _check_first_items(
    data: RunDict | QrelsDict, queries: Sequence[str], what: str, error: type[Exception], inner: list | None = None
) -> None:
    """Type-check the first (doc id, value) of up to ``_SAMPLE`` queries spread evenly over the input.

    C-level passes; Python only to name the offender. Sampled because a check of every query
    costs more than scoring them does; the values themselves are all converted (a non-number
    fails there), and a wrong id type is systematic, so the sample catches it.
    """
    if inner is None:
        inner = list(map(data.__getitem__, queries))
    if len(queries) > _SAMPLE:
        step = len(queries) // _SAMPLE
        queries, inner = queries[::step], inner[::step]
    nonempty = list(filter(None, inner))
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
                raise error(f"{what} {_shown(v)} of document {d!r} in query {q!r} is {type(v).__name__}, not a number")


def _check_query_ids(qids: list, where: str) -> None:
    if not set(map(type, qids)) <= {str}:
        for q in qids:
            _check_id("query", q, where)


def _as_dicts(data: Mapping, inner_ok: bool) -> dict:
    """``data`` itself when it is a ``dict`` and ``inner_ok`` (its values are all ``dict``); else a copy
    in which it and each value that is a mapping are plain dicts (caller's objects untouched).

    A mapping is read through its items, as ``dict(m.items())`` reads it: its ``len()`` is not trusted,
    since the flat arrays are sized by it (one that disagreed would shift values into the next query).
    """
    if type(data) is dict and inner_ok:
        return data
    return {q: v if type(v) is dict or not _is_mapping(v) else dict(v.items()) for q, v in data.items()}


def _query_ids_of(data: object, name: str, shape: str, empty: str) -> list[str]:
    """The query ids of a top-level input ``{qid: ...}``, validated (shared by every dict input)."""
    if not isinstance(data, Mapping):
        raise EmptyInputError(f"{name} must be a dict {shape}, got {type(data).__name__}")
    if len(data) == 0:
        raise EmptyInputError(f"{name} is empty: {empty}")
    qids = list(data)
    _check_query_ids(qids, f" in {name}")
    return qids


def _flat_values(
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

    ``values``: the same, read already (by :func:`_read_f32`); else numpy reads them here.
    Validated: a non-number or non-finite value raises ``error`` naming its query and document.
    As float32, a finite value beyond float32's range reads as +-inf (trec_eval stores it so).
    """
    if values is None:
        # Read by numpy, which would take a numeric string or a bool: check every type first. One
        # walk over the dicts (the list keeps the values in order for both passes).
        flat = list(chain.from_iterable(map(_values, inner)))
        _check_value_types(data, queries, flat, what, error)
        if _float_subclasses(flat):
            # numpy reads a float subclass through its __float__, struct and the compiled scan through
            # its own value (as pytrec_eval does): a subclass's own value, on every path.
            flat = [_own_value(v) for v in flat]
        try:
            with np.errstate(over="ignore"):
                values = np.fromiter(flat, dtype, count=n)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond any float
            raise _first_bad(data, queries, what, error) from None
    # One vectorised sum: finite unless some value is NaN/inf (or the sum overflows: check exactly).
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.isfinite(np.add.reduce(values)) or np.isfinite(values).all()
    # +-inf in float32 may be a finite float64: reread (a NaN cannot be).
    if not finite and dtype is not np.float64 and not np.isnan(values).any():
        try:
            finite = np.isfinite(_numpy_f64(chain.from_iterable(map(_values, inner)), n)).all()
        except (TypeError, ValueError, OverflowError):
            finite = False
    if not finite:
        raise _first_bad(data, queries, what, error)
    _check_first_items(data, queries, what, error, inner)
    return values


# C-level callables for map(): no Python frame per query.
_values = operator.methodcaller("values")

_END = object()

# Values packed per group of queries: enough to amortise the per-group step, few enough to stay in cache.
_PACK_GROUP = 1 << 16


@lru_cache(maxsize=1024)
def _f32_struct(width: int) -> struct.Struct:
    return struct.Struct(f"{width}f")


def _pack_f32(values: Sequence[float]) -> bytes:
    return _f32_struct(len(values)).pack(*values)


def _read_f32(inner: list, lengths: np.ndarray, n: int, group: int = _PACK_GROUP) -> np.ndarray | None:
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


_contains = operator.contains


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
        qids = _query_ids_of(qrels, "qrels", "{qid: {docid: label}}", "no query has relevance judgments")
        inner = list(qrels.values())
        plain = set(map(type, inner)) <= {dict}
        if not plain:
            for q in qids:
                if not _is_mapping(qrels[q]):
                    raise InvalidLabelError(
                        f"qrels[{q!r}] must be a dict {{docid: label}}, got {type(qrels[q]).__name__}"
                    )
        if not plain or type(qrels) is not dict:
            qrels = _as_dicts(qrels, plain)
            qids, inner = list(qrels), list(qrels.values())
        _check_doc_ids(qrels, qids, inner)
        offsets = _csr(np.fromiter(map(len, inner), np.int64, count=len(qids)))
        labels = np.empty(int(offsets[-1]), np.float64)
        native = _native()
        if native is None or not native.flat_values(inner, labels):  # the compiled read takes plain input only
            labels = _flat_values(qrels, qids, inner, int(offsets[-1]), "label", InvalidLabelError)
            if _float_subclasses(chain.from_iterable(map(_values, inner))):
                # Kept as their own values: later reads of the judgments (numpy's, through
                # __float__) must see what the labels hold.
                qrels = {q: {d: _own_value(v) for d, v in docs.items()} for q, docs in zip(qids, inner)}
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
        qids = _query_ids_of(results, "results", "{qid: {docid: score}}", "no query was retrieved for")
        plain = set(map(type, results.values())) <= {dict}
        if not plain:
            for q, inner in results.items():
                if not _is_mapping(inner):
                    raise InvalidScoreError(
                        f"results[{q!r}] must be a dict {{docid: score}}, got {type(inner).__name__} "
                        "(ranked lists of doc ids are accepted too, when every query has one)"
                    )
        if not plain or type(results) is not dict:
            results = _as_dicts(results, plain)
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
    qs, ds = _as_list(query_ids), _as_list(doc_ids)
    if not isinstance(values, np.ndarray) and hasattr(values, "to_numpy"):  # a pyarrow array or polars Series
        values = np.asarray(_as_list(values), dtype=object) if getattr(values, "null_count", 0) else _numpy(values)
    if len(qs) != len(ds) or len(qs) != len(values):
        raise EmptyInputError(
            f"{source}: columns have different lengths (queries {len(qs)}, documents {len(ds)}, {what}s {len(values)})"
        )
    for kind, ids in (("query", qs), ("document", ds)):
        if not set(map(type, ids)) <= {str}:
            for i, value in enumerate(ids):
                _check_id(kind, value, f" ({source} row {_row(i, line_numbers)})")
    _check_column_types(values, source, line_numbers, what, error)
    try:
        vs = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond any float
        for i, v in enumerate(values):
            try:
                float(v)
            except (TypeError, ValueError, OverflowError):
                raise error(
                    f"{source} row {_row(i, line_numbers)}: {what} {_shown(v)} is not a finite number"
                ) from None
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


def _as_list(column: Any) -> list:
    """A column as a list of Python values: a numpy array, a pyarrow array, a polars Series or a sequence."""
    if isinstance(column, np.ndarray):
        return column.tolist()
    for method in ("to_pylist", "to_list"):  # pyarrow, polars
        if hasattr(column, method):
            return list(getattr(column, method)())
    return list(column)


def _numpy(column: Any) -> np.ndarray:
    try:
        return np.asarray(column.to_numpy(zero_copy_only=False))  # pyarrow
    except TypeError:
        return np.asarray(column.to_numpy())  # polars


def _check_column_types(
    values: Sequence[float] | np.ndarray,
    source: str,
    line_numbers: Sequence[int] | None,
    what: str,
    error: type[Exception],
) -> None:
    """Every value of a column is a real number (the rule of :func:`_is_number`), checked by type.

    A numpy column of floats or ints passes on its dtype; one of bools, complex numbers, dates,
    time spans or text does not, though ``float()`` or numpy would convert it.
    """
    if isinstance(values, np.ndarray) and values.dtype.kind != "O":
        if values.dtype.kind in "fiu" or len(values) == 0:
            return
        raise error(
            f"{source} row {_row(0, line_numbers)}: {what} {_shown(values[0])} is {values.dtype}, "
            "not a number (a column of floats or ints is)"
        )
    bad = _non_number_types(values)
    for i, v in enumerate(values if bad else ()):
        if type(v) in bad:
            raise error(f"{source} row {_row(i, line_numbers)}: {what} {_shown(v)} is {type(v).__name__}, not a number")


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
    * ``find(candidates)``: ``(rows, which)``, the rows (ascending) whose doc id is one of
      ``candidates`` and the index of that candidate;
    * ``identical``: optional bool per row, doc id == query id (BEIR drops those rows); found
      through ``find`` when first needed if not given.
    """

    __slots__ = ("_data", "find", "identical", "ids_at", "offsets", "qids", "scores", "source")

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
        self.scores = scores
        self.ids_at = ids_at
        self.find = find
        self.identical = identical
        self.source = source
        self._data: dict[str, dict[str, float]] | None = None

    def identical_rows(self) -> np.ndarray:
        """Bool per row: the doc id is the query's own id (``identical``, found through ``find`` if not given)."""
        if self.identical is None:
            rows, which = self.find(list(self.qids))
            own = rows[which == np.searchsorted(self.offsets, rows, side="right") - 1]
            self.identical = np.zeros(self.scores.size, bool)
            self.identical[own] = True
        return self.identical

    @property
    def data(self) -> dict[str, dict[str, float]]:
        """The run as ``{qid: {docid: score}}`` (built on first use; costly for big runs)."""
        if self._data is None:
            ids = self.ids_at(np.arange(self.scores.size))
            values = self.scores.tolist()
            bounds = self.offsets.tolist()
            self._data = {q: dict(zip(ids[a:b], values[a:b])) for q, a, b in zip(self.qids, bounds[:-1], bounds[1:])}
        return self._data


_F32_EXACT = 1 << 24  # every integer up to 2**24 is a float32: synthetic scores never tie


class RankedRun(ColumnarRun):
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
        native = _native()
        if native is not None and type(ids) is not list:
            ids = list(ids)
        indexed = None if native is None else native.index_lists(ids, sizes.tobytes(), None, None)
        if indexed is not None:
            self._setup_indexed(qids, indexed, source)
            return
        sizes_list = sizes.tolist()
        offsets = _csr(sizes)
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
            offsets = _csr(np.fromiter(map(len, lists), np.int64, count=len(lists)))
        self._setup(qids, ids, offsets, source)
        self._positions = positions

    def _setup_indexed(self, qids: list[str], indexed: tuple, source: str) -> None:
        ids, counts, table, table_offsets = indexed
        self._setup(qids, ids, _csr(np.frombuffer(counts, np.int64)), source)
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
        qids = _query_ids_of(rankings, source, "{qid: [docid, ...]}", "no query was retrieved for")
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
                    _check_id("document", d, f" at {source}[{q!r}][{j}]")
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
        native = _native()
        if native is None or len(lists) != len(qids):
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
        native = _native()
        if native is None or not (len(qids) == len(judged) == len(lists)):
            return None
        lists = list(lists)  # the run reads its own list of the lists, should it read the keys again
        out = native.index_judged(list(judged), lists, attr, item_type, label_attr, list(qids))
        if out is None:
            return None
        judgments, dicts, counts, positions, own, sizes, labels = out
        run = cls.__new__(cls)
        run._setup(qids, None, _csr(np.frombuffer(counts, np.int64)), source)
        run._items = (lists, attr, item_type)
        run._own = np.frombuffer(own, np.int64)
        sizes = np.frombuffer(sizes, np.int64)
        run._located = (judgments, dicts, np.frombuffer(positions, np.int64), sizes)
        # The labels as Qrels.from_dict reads them (a float's value, an int's double), read in the pass.
        return Qrels(judgments, run.qids, _csr(sizes), np.frombuffer(labels, np.float64)), run

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
        native = _native()
        indexed = None if native is None else native.index_lists(lists, None, attr, item_type)
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
        if self._table is not None and (native := _native()) is not None:
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

    @property  # type: ignore[override]
    def scores(self) -> np.ndarray:
        """The synthetic scores, ``n - position`` within each list (float64, built on first use)."""
        if self._scores is None:
            counts = np.diff(self.offsets)
            self._scores = np.repeat(self.offsets[1:].astype(np.float64), counts) - np.arange(
                int(self.offsets[-1]), dtype=np.float64
            )
        return self._scores

    # Methods, not ColumnarRun's callables held per instance: a bound method stored on its own object
    # is a reference cycle, which kept every run (and its ids) alive until a cycle collection.
    def ids_at(self, rows: np.ndarray) -> list[str]:  # type: ignore[override]
        return list(map(self.ids.__getitem__, rows.tolist()))

    def find(self, candidates: list[str]) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[override]
        index = dict(zip(candidates, range(len(candidates))))
        which = np.fromiter(map(index.get, self.ids, repeat(-1)), np.int64, count=len(self.ids))
        rows = np.flatnonzero(which >= 0)
        return rows, which[rows]


def _position_dicts(ids: list[str], sizes: list[int]) -> list[dict[str, int]]:
    """Per query, ``{id: position}`` over its ``sizes[i]`` ids (a repeated id: its last position).
    Consecutive islices of one iterator: each query's ids without a list slice per query."""
    flat = iter(ids)
    return list(map(dict, map(zip, map(islice, repeat(flat), sizes), map(range, sizes))))


def as_run(results: RunDict | Mapping[str, Sequence[str]] | Run | ColumnarRun) -> Run | ColumnarRun:
    """The run behind any accepted results: a :class:`Run`/:class:`ColumnarRun` as it is,
    ``{qid: [docid, ...]}`` (every value a list or tuple, or a subclass) as a :class:`RankedRun`, else a
    validated :class:`Run` of ``{qid: {docid: score}}``."""
    if isinstance(results, Run | ColumnarRun):
        return results
    if isinstance(results, Mapping) and results:
        kinds = set(map(type, results.values()))
        if kinds <= {list, tuple} or (
            not kinds <= {dict} and all(isinstance(v, list | tuple) for v in results.values())
        ):
            return RankedRun.from_lists(results, source="results")
    return Run.from_dict(results)


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
    if run.plain and (native := _native()) is not None:
        prep = _prepare_native(native, run, qrels, ignore_identical_ids)
        if prep is not None:
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
    raw_offsets = _csr(lengths)
    # The one pass over every retrieved score, read as float32 (the ranking precision).
    n_scores = int(raw_offsets[-1])
    packed = _read_f32(inner, lengths, n_scores)
    scores = _flat_values(results, qids, inner, n_scores, "score", InvalidScoreError, np.float32, packed)
    # Judged and tie-member scores are converted as the scores were (a float's own value when packed).
    as_f64 = _packed_f64 if packed is not None else _numpy_f64

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
    offsets = _csr(lengths) if own_pos else raw_offsets
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
    return Prepared(
        qids,
        offsets,
        scores,
        members,
        members.scores,
        owner[idx],
        found[idx],
        judged_labels[idx],
        pair_doc,
        judged_offsets,
        judged_labels,
        raw_at=members.raw,
    )


def _native() -> Any:
    """The compiled scan (``core/_rank.c``), or None where it is not used: decided once, on first use
    (tests reset ``_NATIVE`` to ``_UNSET`` to decide again)."""
    global _NATIVE
    if _NATIVE is _UNSET:
        _NATIVE = _load_native() if _native_wanted() else None
    return _NATIVE


def _native_wanted() -> bool:
    """Whether to import the compiled scan at all: not when ``IRMETRICS_PURE_PYTHON`` is set (other
    than "" or "0"), nor on a free-threaded build (3.13t), where the scan, which reads lists and dicts
    without per-object locks, would turn the GIL back on for the whole process on import. The pure
    Python path computes the same values."""
    return os.environ.get("IRMETRICS_PURE_PYTHON", "") in ("", "0") and not _free_threaded()


def _free_threaded() -> bool:
    """A free-threaded CPython build (``Py_GIL_DISABLED``), whether or not the GIL was turned on at run time."""
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def _load_native() -> Any:
    """The built extension, or None where it was not built (no C compiler at install)."""
    try:
        from . import _rank
    except ImportError:
        return None
    return _rank


_UNSET = object()
_NATIVE: Any = _UNSET


def _prepare_native(native: Any, run: Run, qrels: Qrels, ignore_identical_ids: bool) -> Prepared | None:
    """:func:`prepare` for plain dicts by the compiled scan: each query's judgments found, its scores
    read, its judged documents looked up and ranked in both orders while the query is in cache.
    None: an input the scan does not take (see ``_rank.c``); the Python path then reads it and names
    what is wrong."""
    if type(qrels.data) is not dict:
        return None
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
    offsets = _csr(lengths)
    raw_offsets = _csr(lengths + (own >= 0)) if own_pos else offsets
    judged_offsets = _csr(counts)
    if qids == qrels.qids:
        # The labels Qrels read when it was built, as the Python path takes them for the same queries.
        if not np.array_equal(judged_offsets, qrels.offsets):
            return None  # its dicts changed size since (a caller broke the read-only contract)
        labels = qrels.labels
    idx = np.flatnonzero(trec >= 0)
    owner = np.repeat(np.arange(len(qids)), counts)
    members = _DictMembers(inner, raw_offsets, offsets, own_pos, True, _packed_f64)
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
        pair_ranks={"trec": trec[idx], "stable": stable[idx]},
        raw_at=members.raw,
    )


_NAN = float("nan")
_get = operator.attrgetter("get")


def _numpy_f64(values: Iterable, n: int) -> np.ndarray:
    """float64 of ``values`` as :func:`_flat_values` converts them when struct could not (a float
    subclass by its own value, not its ``__float__``)."""
    return np.fromiter((_own_value(v) for v in values), np.float64, count=n)


def _packed_f64(values: Iterable, n: int) -> np.ndarray:
    """float64 of ``values`` as :func:`_read_f32` converts (struct: a float's own value)."""
    listed = list(values)
    try:
        return np.frombuffer(struct.pack(f"{n}d", *listed), np.float64)
    except struct.error:  # not the values the scores were read from (a Mapping that changed)
        return np.fromiter(listed, np.float64, count=n)


def _lookup(
    inner: list,
    judged: list,
    flat_docs: list[str],
    judged_offsets: np.ndarray,
    plain: bool,
    as_f64: Callable[[Iterable, int], np.ndarray] = _numpy_f64,
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
    offsets = _csr(np.fromiter(map(len, judged), np.int64, count=len(qids)))
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
        as_f64: Callable[[Iterable, int], np.ndarray] = _numpy_f64,
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
    rows = None if keep_q.all() else _gather_rows(run.offsets, keep_q)
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
    offsets = _csr(lengths)

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
    offsets = _csr(lengths)
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
