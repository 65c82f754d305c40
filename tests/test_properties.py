"""Properties every registered measure must have, run over the whole registry."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.core.measures import FAMILIES, Measure, parse_measure
from tests import strategies as S
from tests.oracles import pytrec_per_query

FAMILY_NAMES = sorted(FAMILIES)
PRESETS = ["beir", "trec"]


def _scored(qrels, results):
    return [q for q in results if qrels.get(q)]


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_measure_names_round_trip(family):
    for k in (1, 10, 1000):
        m = Measure(family, k)
        assert parse_measure(str(m)) == m
        assert str(parse_measure(m.name.lower())) == m.name


@pytest.mark.parametrize(
    "alias,name",
    [
        ("nDCG@10", "NDCG@10"),
        ("ndcg_cut_10", "NDCG@10"),
        ("map_cut.5", "MAP@5"),
        ("RR@10", "MRR@10"),
        ("recall_100", "Recall@100"),
        ("P_5", "P@5"),
        ("precision@3", "P@3"),
        ("r_cap@100", "R_cap@100"),
        ("AP@10", "MAP@10"),
    ],
)
def test_aliases_of_trec_eval_ir_measures_and_ranx_parse_to_beir_names(alias, name):
    assert parse_measure(alias).name == name


@given(S.qrels(), S.runs(), S.k_values, st.sampled_from(PRESETS))
def test_every_value_is_between_0_and_1(qrels, results, ks, preset):
    assume(_scored(qrels, results))
    res = evaluate(qrels, results, ks, preset=preset)
    for values in res.per_query.values():
        assert all(0.0 <= v <= 1.0 for v in values.values())
    assert all(0.0 <= v <= 1.0 for v in res.means.values())


@given(S.qrels(st.sampled_from([0, 1, 2, 3])), S.k_values, st.sampled_from(PRESETS))
def test_ideal_ranking_scores_one_where_the_measure_can_reach_one(qrels, ks, preset):
    # Ideal run: every judged document, sorted by label, distinct scores.
    results = {
        q: {d: float(lab) + 1.0 / (i + 2) for i, (d, lab) in enumerate(sorted(docs.items(), key=lambda x: -x[1]))}
        for q, docs in qrels.items()
        if docs
    }
    assume(results)
    res = evaluate(qrels, results, ks, preset=preset, ignore_identical_ids=False)
    for q, _docs in results.items():
        R = sum(1 for v in qrels[q].values() if v >= 1)
        for k in ks:
            pq = {f: res.per_query[f"{f}@{k}"].get(q) for f in FAMILY_NAMES}
            if R == 0:
                assert all(v == 0.0 for v in pq.values())
                continue
            assert pq["NDCG"] == pytest.approx(1.0)
            assert pq["MRR"] == 1.0 and pq["R_cap"] == 1.0
            assert pq["P"] == pytest.approx(min(R, k) / k)
            assert pq["Recall"] == pytest.approx(min(R, k) / R)
            assert pq["MAP"] == pytest.approx(min(R, k) / R)


@given(S.qrels(), S.runs(), S.k_values, st.sampled_from(PRESETS), st.randoms(use_true_random=False))
def test_query_order_does_not_change_per_query_values(qrels, results, ks, preset, rnd):
    assume(_scored(qrels, results))
    items = list(results.items())
    rnd.shuffle(items)
    a = evaluate(qrels, results, ks, preset=preset)
    b = evaluate(qrels, dict(items), ks, preset=preset)
    assert a.per_query == b.per_query
    for name, v in a.raw_means.items():
        assert b.raw_means[name] == pytest.approx(v, abs=1e-12)


@given(S.qrels(), S.runs(), S.k_values, st.sampled_from(PRESETS))
def test_order_preserving_relabelling_of_ids_changes_nothing(qrels, results, ks, preset):
    assume(_scored(qrels, results))
    # Prefixing keeps byte order, so trec ties resolve the same; query-id equality is kept too.
    qr = {"x" + q: {"x" + d: v for d, v in docs.items()} for q, docs in qrels.items()}
    rr = {"x" + q: {"x" + d: v for d, v in docs.items()} for q, docs in results.items()}
    a = evaluate(qrels, results, ks, preset=preset)
    b = evaluate(qr, rr, ks, preset=preset)
    assert a.raw_means == b.raw_means
    assert {m: {"x" + q: v for q, v in pq.items()} for m, pq in a.per_query.items()} == b.per_query


@given(
    S.qrels(st.sampled_from([0, 1])),
    S.runs(st.sampled_from([0.0, 1.0, 2.0, 3.0])),
    S.k_values,
    st.sampled_from(PRESETS),
    st.data(),
)
def test_raising_a_relevant_documents_score_never_lowers_any_measure(qrels, results, ks, preset, data):
    scored = _scored(qrels, results)
    assume(scored)
    q = data.draw(st.sampled_from(scored))
    relevant = [d for d in results[q] if qrels[q].get(d, 0) >= 1 and d != q]
    assume(relevant)
    d = data.draw(st.sampled_from(relevant))
    better = {**results, q: {**results[q], d: 10.0}}
    a = evaluate(qrels, results, ks, preset=preset)
    b = evaluate(qrels, better, ks, preset=preset)
    for name, values in a.per_query.items():
        assert b.per_query[name][q] >= values[q] - 1e-15, name


@given(S.float_qrels(), S.runs(), S.k_values, st.sampled_from([0.5, 1.0, 1.5]))
def test_float_labels_equal_pytrec_eval_on_labels_scaled_to_integers(qrels, results, ks, threshold):
    """pytrec_eval cannot take 0.3 or 0.5; scaled by 10 they are integers with the same NDCG and
    the same relevant set at relevance_level = 10 * threshold."""
    assume(_scored(qrels, results))
    res = evaluate(qrels, results, ks, preset="trec", relevance_threshold=threshold)
    # Negative labels clipped to -1: pytrec_eval crashes on a query whose labels are all below -1.
    scaled = {q: {d: max(round(v * 10), -1) for d, v in docs.items()} for q, docs in qrels.items()}
    oracle = pytrec_per_query(scaled, results, ks, relevance_level=round(threshold * 10))
    for family in ("NDCG", "MAP", "Recall", "P"):
        for k in ks:
            for q, v in oracle[f"{family}@{k}"].items():
                assert math.isclose(res.per_query[f"{family}@{k}"][q], v, abs_tol=1e-12)
