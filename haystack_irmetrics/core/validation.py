"""Validation of inputs, in one place: what a score, a label and an id may be, and the messages
that name the offender.

Scores and labels must be real numbers; ``None``, NaN, infinities and strings (numeric ones too)
raise wherever they are. Labels and columns are type-checked in full; a run's scores are converted by
:mod:`struct` (:mod:`.packing`), which refuses anything but numbers (the run is then type-checked in
full and the offender named), and the exact type of a score that converts (a bool, say) is checked
on the first value of up to 1,000 queries spread over the input, which keeps the check off the hot
path. Ids must be strings: checked on the same sample, and on every query id.

A float subclass is read by its own value (``float.__float__``), as pytrec_eval's C reader and
BEIR's sort read it, never through an overridden ``__float__``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from itertools import chain
from numbers import Real

import numpy as np

from ..checks import shown
from ..errors import EmptyInputError, InvalidIdError

QrelsDict = Mapping[str, Mapping[str, float]]
RunDict = Mapping[str, Mapping[str, float]]

# C-level callable for map(): no Python frame per query.
_values = operator.methodcaller("values")


NUMBER_TYPES = frozenset({float, int, np.float64, np.float32, np.int64, np.int32})


def is_number_type(kind: type) -> bool:
    """A real number type (a ``Decimal`` too) that is not a bool; numpy's ``timedelta64`` (an
    integer subclass) and complex numbers are not scores or labels, though ``float()`` converts them."""
    if kind in NUMBER_TYPES:  # fast path; the ABC check below is slow
        return True
    return issubclass(kind, Real | Decimal) and not issubclass(kind, bool | np.bool_ | np.timedelta64)


def is_number(value: object) -> bool:
    return is_number_type(type(value))


def is_finite_number(value: object) -> bool:
    """A real number (:func:`is_number`) that is finite as a float; an int beyond any float is not."""
    try:
        return is_number(value) and math.isfinite(value)
    except OverflowError:
        return False


def finite_floats(values: list) -> bool:
    """Whether ``values`` are all floats (exactly) and finite, the common case of a retriever's scores, in
    C-level passes: one over the types, one sum (a sum of floats is finite only if every one is, or it
    overflowed: the caller then checks each with :func:`is_finite_number`)."""
    return set(map(type, values)) <= {float} and math.isfinite(sum(values))


def plain_ranking(ids: list, scores: list) -> bool:
    """Whether a ranking is the common case, exact str ids and finite float scores (:func:`finite_floats`)."""
    return set(map(type, ids)) <= {str} and finite_floats(scores)


def non_number_types(values: Iterable) -> set[type]:
    """The types among ``values`` that are no number type (one C-level pass over the types)."""
    return {k for k in set(map(type, values)) if not is_number_type(k)}


def check_value_types(
    data: RunDict | QrelsDict, queries: Iterable[str], flat: list, what: str, error: type[Exception]
) -> None:
    """Every value of ``flat`` (the values of ``data[q]`` for ``q`` in ``queries``, in order) is a
    number (one C-level pass over their types); else ``error`` names the first other one, its
    document and query."""
    bad = non_number_types(flat)
    if not bad:
        return
    for q in queries:
        for d, v in data[q].items():
            if type(v) in bad:
                raise error(f"{what} {shown(v)} of document {d!r} in query {q!r} is {type(v).__name__}, not a number")


def is_mapping(value: object) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def check_id(kind: str, value: object, where: str = "") -> None:
    if not isinstance(value, str):
        raise InvalidIdError(
            f"{kind} id {value!r}{where} is {type(value).__name__}; ids must be str (convert them with str())"
        )


def check_doc_ids(qrels: QrelsDict, qids: list[str], inner: list) -> None:
    """Every judged document id is a str (qrels are small: checked whole, one C-level pass over the
    types; a run's are sampled, see :func:`check_first_items`)."""
    if set(map(type, chain.from_iterable(inner))) <= {str}:
        return
    for q, docs in zip(qids, inner):
        for d in docs:
            check_id("document", d, f" in query {q!r} of the qrels")


def float_subclasses(values: Iterable) -> bool:
    """Whether ``values`` hold a float subclass other than numpy's (whose ``__float__`` may lie)."""
    return any(k not in NUMBER_TYPES and issubclass(k, float) for k in set(map(type, values)))


def own_value(value: object) -> object:
    """A float (subclass) as the plain float of its own value, its ``__float__`` not called; anything
    else as it is."""
    return float.__float__(value) if isinstance(value, float) else value


def stored(value: object) -> float:
    """A value's double as pytrec_eval and BEIR's sort read it: a float's own value (a float subclass's
    ``__float__`` is not called), anything else through ``float()``."""
    return float(own_value(value))


def first_bad(data: RunDict | QrelsDict, queries: Iterable[str], what: str, error: type[Exception]) -> Exception:
    """Locate the first non-finite or non-numeric value, for an error message (slow path)."""
    for q in queries:
        for d, v in data[q].items():
            try:
                ok = is_number(v) or isinstance(v, str)
                f = stored(v) if ok else float("nan")
            except (TypeError, ValueError, OverflowError):
                f = float("nan")
            if not (f == f and abs(f) != float("inf")):
                return error(f"{what} {shown(v)} of document {d!r} in query {q!r} is not a finite number")
    return error(f"a {what} is not a finite number")


SAMPLE = 1000


def check_first_items(
    data: RunDict | QrelsDict, queries: Sequence[str], what: str, error: type[Exception], inner: list | None = None
) -> None:
    """Type-check the first (doc id, value) of up to ``SAMPLE`` queries spread evenly over the input.

    C-level passes; Python only to name the offender. Sampled because a check of every query
    costs more than scoring them does; the values themselves are all converted (a non-number
    fails there), and a wrong id type is systematic, so the sample catches it.
    """
    if inner is None:
        inner = list(map(data.__getitem__, queries))
    if len(queries) > SAMPLE:
        step = len(queries) // SAMPLE
        queries, inner = queries[::step], inner[::step]
    nonempty = list(filter(None, inner))
    key_types = set(map(type, map(next, map(iter, nonempty))))
    value_types = set(map(type, map(next, map(iter, map(_values, nonempty)))))
    if key_types <= {str} and value_types <= NUMBER_TYPES:
        return
    for q in queries:
        inner = data[q]
        if inner:
            d, v = next(iter(inner.items()))
            check_id("document", d, f" in query {q!r}")
            if not is_number(v):
                raise error(f"{what} {shown(v)} of document {d!r} in query {q!r} is {type(v).__name__}, not a number")


def check_query_ids(qids: list, where: str) -> None:
    if not set(map(type, qids)) <= {str}:
        for q in qids:
            check_id("query", q, where)


def as_dicts(data: Mapping, inner_ok: bool) -> dict:
    """``data`` itself when it is a ``dict`` and ``inner_ok`` (its values are all ``dict``); else a copy
    in which it and each value that is a mapping are plain dicts (caller's objects untouched).

    A mapping is read through its items, as ``dict(m.items())`` reads it: its ``len()`` is not trusted,
    since the flat arrays are sized by it (one that disagreed would shift values into the next query).
    """
    if type(data) is dict and inner_ok:
        return data
    return {q: v if type(v) is dict or not is_mapping(v) else dict(v.items()) for q, v in data.items()}


def query_ids_of(data: object, name: str, shape: str, empty: str) -> list[str]:
    """The query ids of a top-level input ``{qid: ...}``, validated (shared by every dict input)."""
    if not isinstance(data, Mapping):
        raise EmptyInputError(f"{name} must be a dict {shape}, got {type(data).__name__}")
    if len(data) == 0:
        raise EmptyInputError(f"{name} is empty: {empty}")
    qids = list(data)
    check_query_ids(qids, f" in {name}")
    return qids
