"""Hole bounds (core/bounds.py): the extremes over every judging of the holes, against brute force.

The oracle judges the holes the slow way: every subset of the query's unjudged documents in the
measure's top k gets the grade in a copy of the qrels, and :func:`evaluate` scores the real run against
it (the real ranking path, ties and identical-id rule). The bounds must equal the minimum and maximum
of those values for every query, which checks both the registry's claim (``monotone``: two labellings
suffice; ``scan``: the s first and s last holes suffice) and the stand-in rankings the bounds score.
"""

from __future__ import annotations

import copy
from itertools import chain, combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.core.bounds import bounded_families, hole_bounds
from haystack_irmetrics.core.families import FAMILIES
from haystack_irmetrics.errors import InvalidArgumentError, UnknownMeasureError
from tests.strategies import DEFAULT_SCORES, DOCS, INT_LABELS, QIDS

MEASURES = [
    "NDCG@3", "NDCG@5", "nDCG_exp@3", "MAP@3", "MAP@5", "P@3", "Recall@3", "R_cap@3", "MRR@3", "Success@3",
    "F@3", "ERR@3", "nERR@3", "RBP", "Rprec", "map", "ndcg",
]  # fmt: skip


def _subsets(items):
    return chain.from_iterable(combinations(items, r) for r in range(len(items) + 1))


def _in_top(qrels_q, run_q, qid, doc, m, preset):
    """Whether ``doc`` ranks in ``m``'s top k for this preset (probed through the core: P or Success at k)."""
    measure = FAMILIES[m.family]
    if m.cutoff is None:
        return True
    probe = f"P@{m.cutoff}" if measure.beir_path == "pytrec" else f"Success@{m.cutoff}"
    res = evaluate({qid: {doc: 10}}, {qid: run_q}, measures=[probe], preset=preset)
    return res.per_query[probe].get(qid, 0.0) > 0


def brute_force(qrels, run, measures, grade, preset, **policy):
    """``{measure: {qid: (min, max)}}`` over every judging of each query's holes, by full evaluations."""
    parsed = hole_bounds(qrels, run, measures=measures, grade=grade, preset=preset, **policy).measures
    ignore = preset == "beir"
    out = {m.name: {} for m in parsed}
    for qid, run_q in run.items():
        if not qrels.get(qid):
            continue
        judged = qrels[qid]
        unjudged = [d for d in run_q if d not in judged and not (ignore and d == qid)]
        holes = {m.name: {d for d in unjudged if _in_top(qrels[qid], run_q, qid, d, m, preset)} for m in parsed}
        values = {m.name: [] for m in parsed}
        for subset in _subsets(unjudged):
            filled = copy.deepcopy(judged)
            filled.update(dict.fromkeys(subset, grade))
            res = evaluate({qid: filled}, {qid: run_q}, measures=list(parsed), preset=preset, **policy)
            for m in parsed:
                if set(subset) <= holes[m.name] and qid in res.per_query[m.name]:
                    values[m.name].append(res.per_query[m.name][qid])
        for m in parsed:
            if values[m.name]:
                out[m.name][qid] = (min(values[m.name]), max(values[m.name]))
    return out


@st.composite
def small_inputs(draw):
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3, unique=True))
    qrels = {q: draw(st.dictionaries(st.sampled_from(DOCS), st.sampled_from(INT_LABELS), min_size=1, max_size=4))
             for q in qids}  # fmt: skip
    run = {q: draw(st.dictionaries(st.sampled_from(DOCS), DEFAULT_SCORES, min_size=1, max_size=7)) for q in qids}
    return qrels, run


POLICIES = [{}, {}, {"no_relevant": "skip"}, {"relevance_threshold": 2}, {"relevance_threshold": 0.5}]


@settings(max_examples=25, deadline=None)
@given(
    small_inputs(),
    st.sampled_from([1.0, 2.0, 0.5]),
    st.sampled_from(["beir", "trec"]),
    st.lists(st.sampled_from(MEASURES), min_size=1, max_size=4, unique=True),
    st.sampled_from(POLICIES),
)
def test_bounds_are_the_extremes_over_every_judging_of_the_holes(inputs, grade, preset, measures, policy):
    qrels, run = inputs
    if preset == "beir":
        measures = [m for m in measures if m not in ("map", "ndcg")]  # BEIR names take a cutoff
        if not measures:
            measures = ["NDCG@3"]
    got = hole_bounds(qrels, run, measures=measures, grade=grade, preset=preset, **policy)
    want = brute_force(qrels, run, measures, grade, preset, **policy)
    today = evaluate(qrels, run, measures=list(got.measures), preset=preset, **policy).per_query
    for name, rows in want.items():
        # The bounds cover the queries today's mean averages (under no_relevant="skip", a query without a
        # relevant judgment stays out even where judging its holes would bring it in).
        assert set(got.per_query[name]) == set(today[name])
        for qid, (lo, hi) in rows.items():
            if qid not in today[name]:
                continue
            assert got.per_query[name][qid] == pytest.approx((lo, hi), abs=1e-12), (name, qid)


@settings(max_examples=25, deadline=None)
@given(small_inputs(), st.sampled_from(["beir", "trec"]))
def test_the_value_lies_within_its_bounds_and_today_is_the_evaluation(inputs, preset):
    qrels, run = inputs
    names = ["NDCG@5", "MAP@5", "P@3", "R_cap@3", "MRR@3"]
    got = hole_bounds(qrels, run, measures=names, preset=preset)
    today = evaluate(qrels, run, measures=names, preset=preset)
    assert got.value == today.means
    for name in names:
        assert set(got.per_query[name]) == set(today.per_query[name])
        for qid, v in today.per_query[name].items():
            lo, hi = got.per_query[name][qid]
            assert lo <= v + 1e-12 and v <= hi + 1e-12
        assert got.low[name] <= got.value[name] + 1e-5 <= got.high[name] + 2e-5


def test_a_hole_judged_relevant_can_lower_ndcg_and_map():
    # The only relevant document at rank 1 and a hole at rank 3: nDCG and AP fall if the hole is relevant.
    qrels = {"q1": {"d1": 1, "d3": 0}}
    run = {"q1": {"d1": 0.9, "d3": 0.8, "d2": 0.7}}
    b = hole_bounds(qrels, run, measures=["NDCG@3", "MAP@3", "P@3", "Recall@3"])
    # nDCG@3 with d2 relevant: (1 + 1/log2(4)) / (1 + 1/log2(3)) = 1.5 / 1.63093 = 0.91972
    assert (b.value["NDCG@3"], b.low["NDCG@3"], b.high["NDCG@3"]) == (1.0, 0.91972, 1.0)
    assert b.holes_relevant["NDCG@3"] == 0.91972
    # AP@3 with d2 relevant: (1/1 + 2/3) / 2 = 0.83333
    assert (b.low["MAP@3"], b.high["MAP@3"]) == (0.83333, 1.0)
    # P@3 and Recall@3 only rise: 1/3 -> 2/3, and 1 -> 2/2.
    assert (b.low["P@3"], b.high["P@3"]) == (0.33333, 0.66667)
    assert (b.low["Recall@3"], b.high["Recall@3"]) == (1.0, 1.0)
    assert b.holes["NDCG@3"] == 1.0
    assert b.to_dict()["measures"]["MAP@3"] == {
        "value": 1.0, "low": 0.83333, "high": 1.0, "holes_relevant": 0.83333, "holes": 1.0,
    }  # fmt: skip


def test_a_query_the_run_does_not_answer_keeps_its_value_as_its_bounds():
    qrels = {"q1": {"d1": 1}, "q2": {"d5": 1}}
    run = {"q1": {"d9": 2.0, "d1": 1.0}}
    b = hole_bounds(qrels, run, measures=["MRR@2", "NDCG@2"])
    # BEIR's MRR divides by len(qrels): q2 counts 0 and has nothing to judge.
    assert b.per_query["MRR@2"]["q2"] == (0.0, 0.0)
    assert b.per_query["MRR@2"]["q1"] == (0.5, 1.0)
    assert (b.low["MRR@2"], b.high["MRR@2"]) == (0.25, 0.5)
    assert "q2" not in b.per_query["NDCG@2"]  # pytrec's path averages the answered queries


def test_bounds_leave_the_callers_inputs_unchanged():
    qrels = {"q1": {"d1": 1, "d3": 0}}
    run = {"q1": {"d1": 0.9, "d3": 0.8, "d2": 0.7, "q1": 5.0}}
    before = (copy.deepcopy(qrels), copy.deepcopy(run))
    hole_bounds(qrels, run, k_values=[3])
    assert (qrels, run) == before


def test_a_measure_without_bounds_is_refused_by_name():
    with pytest.raises(UnknownMeasureError, match=r"no hole bounds for \['bpref'\]"):
        hole_bounds({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, measures=["bpref"])
    assert "NDCG" in bounded_families() and "Judged" not in bounded_families()


@pytest.mark.parametrize("grade", [0, -1, float("nan"), True, "1"])
def test_a_grade_that_is_not_a_positive_number_is_refused(grade):
    with pytest.raises(InvalidArgumentError, match="grade must be a finite number > 0"):
        hole_bounds({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 0.5}}, measures=["P@2"], grade=grade)


def test_a_grade_above_errs_top_grade_is_a_clear_error():
    with pytest.raises(InvalidArgumentError, match=r"grade 5.0 cannot be scored by ERR@2"):
        hole_bounds({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 0.5}}, measures=["ERR@2"], grade=5)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    small_inputs(),
    st.sampled_from([1.0, 2.0, 0.5, 3.0]),
    st.sampled_from(["beir", "trec"]),
    st.lists(st.sampled_from(MEASURES), min_size=1, max_size=6, unique=True),
    st.sampled_from(POLICIES),
)
def test_bounds_are_the_extremes_over_every_judging_of_the_holes_many(inputs, grade, preset, measures, policy):
    inner = test_bounds_are_the_extremes_over_every_judging_of_the_holes.hypothesis.inner_test
    inner(inputs, grade, preset, measures, policy)
