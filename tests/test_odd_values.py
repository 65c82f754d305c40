"""Odd Python values in dict inputs: a typed error, or exactly the answer plain dicts and floats give.

Mappings whose ``len()`` disagrees with their items, float subclasses whose ``__float__`` disagrees
with their own value, non-str ids past a query's first judgment, and the usual suspects (bools,
strings, None, Decimal, numpy scalars) — on the compiled and the pure-Python scan alike.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.errors import InvalidIdError, InvalidLabelError, InvalidScoreError, IRMetricsError

from .conftest import scan


class LyingLen(Mapping):
    """A mapping whose ``len()`` is not the number of its items."""

    def __init__(self, data: dict, length: int) -> None:
        self._data, self._length = data, length

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return self._length


class FloatSaysHalf(float):
    """Its own value is whatever it was built with; ``float()`` of it says 0.5."""

    def __float__(self) -> float:
        return 0.5


class FloatSaysNan(float):
    def __float__(self) -> float:
        return math.nan


QRELS = {"q1": {"d1": 1, "d2": 2, "d3": 0}, "q2": {"d4": 1}}
PLAIN_RUN = {"q1": {"d1": 0.9, "d2": 0.8, "d9": 0.1}, "q2": {"d4": 0.5, "d5": 0.4}}
K = [1, 2, 3]


@pytest.fixture(params=["native", "python"])
def path(request):
    with scan(request.param):
        yield request.param


@pytest.mark.parametrize("length", [0, 1, 2, 5, 100])
def test_a_mapping_whose_len_disagrees_with_its_items_scores_as_the_plain_dict(path, length):
    run = {"q1": LyingLen(dict(PLAIN_RUN["q1"]), length), "q2": PLAIN_RUN["q2"]}
    qrels = LyingLen({"q1": LyingLen(dict(QRELS["q1"]), length), "q2": QRELS["q2"]}, length or 1)
    got = evaluate(qrels, run, K, preset="trec")
    assert got.per_query == evaluate(QRELS, PLAIN_RUN, K, preset="trec").per_query
    assert run["q1"]._length == length and len(run["q1"]._data) == 3  # the caller's objects as they were


def test_a_float_subclass_holding_nan_is_refused_whatever_its_float_says(path):
    run = copy.deepcopy(PLAIN_RUN)
    run["q1"]["d2"] = FloatSaysHalf("nan")
    with pytest.raises(InvalidScoreError, match=r"score nan of document 'd2' in query 'q1' is not a finite number"):
        evaluate(QRELS, run, K)
    qrels = copy.deepcopy(QRELS)
    qrels["q1"]["d2"] = FloatSaysHalf("nan")
    with pytest.raises(InvalidLabelError, match=r"label nan of document 'd2' in query 'q1' is not a finite number"):
        evaluate(qrels, PLAIN_RUN, K)


def test_a_float_subclass_is_read_by_its_own_value_as_pytrec_eval_reads_it(path):
    run = copy.deepcopy(PLAIN_RUN)
    run["q1"]["d2"] = FloatSaysNan(0.8)
    run["q1"]["d9"] = Decimal("0.1")  # struct refuses a Decimal: the numpy read runs too
    qrels = copy.deepcopy(QRELS)
    qrels["q1"]["d2"] = FloatSaysNan(2.0)
    for preset in ("beir", "trec"):
        assert (
            evaluate(qrels, run, K, preset=preset).per_query == evaluate(QRELS, PLAIN_RUN, K, preset=preset).per_query
        )


def test_a_non_str_document_id_anywhere_in_the_qrels_is_named(path):
    qrels = {"q1": {"d1": 1, "d2": 1, 123: 1}, "q2": {"d4": 1}}
    with pytest.raises(InvalidIdError, match=r"document id 123 in query 'q1' of the qrels is int"):
        evaluate(qrels, {"q1": {"d1": 0.9, "123": 0.8}, "q2": {"d4": 0.1}}, [2])


# Values a caller may pass; ``_plain`` is how a plain dict of plain values holds each.
_ODD_VALUES = st.one_of(
    st.floats(-5, 5, allow_nan=False),
    st.integers(-3, 3),
    st.floats(-5, 5, allow_nan=False).map(FloatSaysNan),
    st.floats(-5, 5, allow_nan=False).map(FloatSaysHalf),
    st.sampled_from([FloatSaysHalf("nan"), FloatSaysHalf("inf"), FloatSaysNan("-inf")]),
    st.sampled_from([np.float32(0.25), np.float64(1.5), np.int64(2), Decimal("0.5"), Decimal("1")]),
    st.sampled_from(["0.5", None, [1], math.nan, math.inf]),
)
# Labels and qrels ids are checked whole. A run's score types and doc ids are checked on a sample
# (the first item of up to 1,000 queries: a full check costs more than scoring), so a bool score or
# an int doc id later in a run's query is read as its number, a documented trade: runs get neither.
_ODD_LABELS = _ODD_VALUES | st.just(True)
_IDS = st.sampled_from(["d1", "d2", "d3", "d4", "d5", "q1"])


def _plain(value: object) -> object:
    """A float subclass as the plain float of its own value; anything else as it is."""
    return float.__float__(value) if isinstance(value, float) and type(value) not in (float, np.float64) else value


@st.composite
def _odd_input(draw, labels: bool):
    """``(odd, plain)``: a {qid: {docid: value}} with odd values, ids and mappings, and the same data in
    plain dicts of plain values."""
    odd: dict = {}
    plain: dict = {}
    for q in draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1, max_size=3, unique=True)):
        inner = draw(st.dictionaries(_IDS, _ODD_LABELS if labels else _ODD_VALUES, min_size=1, max_size=5))
        if labels and draw(st.integers(0, 9)) == 0:  # a non-str document id, anywhere in the qrels
            inner[7] = 1.0
        plain[q] = {d: _plain(v) for d, v in inner.items()}
        odd[q] = LyingLen(inner, draw(st.integers(0, 8))) if draw(st.booleans()) else inner
    return odd, plain


def _outcome(qrels: dict, run: dict, preset: str) -> object:
    try:
        return repr(evaluate(qrels, run, K, preset=preset).per_query)  # repr: nan == nan
    except IRMetricsError as e:
        return type(e)


@settings(max_examples=300, deadline=None)
@given(qrels=_odd_input(labels=True), run=_odd_input(labels=False), preset=st.sampled_from(["beir", "trec"]))
def test_odd_values_give_a_typed_error_or_exactly_the_plain_answer(qrels, run, preset):
    (odd_qrels, plain_qrels), (odd_run, plain_run) = qrels, run
    for path in ("native", "python"):
        with scan(path):
            assert _outcome(odd_qrels, odd_run, preset) == _outcome(plain_qrels, plain_run, preset), path


def _component_outcome(gold: list, retrieved: list, threshold: float | None) -> object:
    from haystack_irmetrics.components import IRMetricsEvaluator

    try:
        out = IRMetricsEvaluator(k_values=K, relevance_threshold=threshold).run(gold, retrieved)
        return repr(out["per_query"])
    except IRMetricsError as e:
        return type(e)


@settings(max_examples=150, deadline=None)
@given(
    labels=st.lists(st.dictionaries(_IDS, _ODD_LABELS, min_size=1, max_size=4), min_size=1, max_size=3),
    order=st.randoms(use_true_random=False),
    threshold=st.sampled_from([None, 0.5]),
)
def test_the_component_gives_a_typed_error_or_the_plain_answer_for_odd_gold_scores(labels, order, threshold):
    from haystack import Document

    gold = [[Document(id=d, score=v) for d, v in judged.items()] for judged in labels]
    plain = [[Document(id=d, score=_plain(v)) for d, v in judged.items()] for judged in labels]
    retrieved = []
    for judged in labels:
        ids = [*judged, "d9"]
        order.shuffle(ids)
        retrieved.append([Document(id=d) for d in ids])
    for path in ("native", "python"):
        with scan(path):
            assert _component_outcome(gold, retrieved, threshold) == _component_outcome(plain, retrieved, threshold), (
                path
            )
