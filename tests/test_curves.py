"""Curves: the lecture's CG/DCG/NDCG tables, and every curve point equal to the measure it plots."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.core.curves import gain_curves, gain_vectors, interpolated_pr, measure_at_k
from haystack_irmetrics.core.measures import STANDARD_LEVELS
from haystack_irmetrics.errors import InvalidCutoffError
from tests import strategies as S

# Baeza-Yates & Ribeiro-Neto's two queries (seed 002): judgments and 15-document gain vectors.
# G_2 is printed with 14 entries in the text; its CG_2 (15 entries) fixes the missing 0.
LECTURE_QRELS = {
    "q1": {"d3": 3, "d5": 3, "d9": 3, "d25": 2, "d39": 2, "d44": 2, "d56": 1, "d71": 1, "d89": 1, "d123": 1},
    "q2": {"d3": 3, "d56": 2, "d129": 1},
}
G1 = [1, 0, 1, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 3]
G2 = [0, 0, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3]
RANKED_DOCS = {
    "q1": {1: "d56", 3: "d71", 6: "d3", 10: "d25", 15: "d5"},
    "q2": {3: "d56", 8: "d129", 15: "d3"},
}
LECTURE_RESULTS = {
    q: {docs.get(r, f"{q}-u{r}"): float(16 - r) for r in range(1, 16)} for q, docs in RANKED_DOCS.items()
}


def lecture_curves():
    return gain_curves(LECTURE_QRELS, LECTURE_RESULTS, depth=15, discount="jk", preset="trec")


def test_lecture_cg_vectors_and_their_average():
    c = lecture_curves()
    assert c.cg[0].tolist() == [1, 1, 2, 2, 2, 5, 5, 5, 5, 7, 7, 7, 7, 7, 10]
    assert c.cg[1].tolist() == [0, 0, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 6]
    assert c.mean_cg.tolist() == [0.5, 0.5, 2.0, 2.0, 2.0, 3.5, 3.5, 4.0, 4.0, 5.0, 5.0, 5.0, 5.0, 5.0, 8.0]
    assert c.mean_icg.tolist()[:10] == [3.0, 5.5, 7.5, 8.5, 9.5, 10.5, 11.0, 11.5, 12.0, 12.5]


def test_lecture_jk_dcg_vectors_ideal_and_normalised_averages():
    c = lecture_curves()
    assert np.round(c.dcg[0], 1).tolist() == [1.0, 1.0, 1.6, 1.6, 1.6, 2.8, 2.8, 2.8, 2.8, 3.4, 3.4, 3.4, 3.4, 3.4, 4.2]
    assert np.round(c.dcg[1], 1).tolist() == [0.0, 0.0, 1.3, 1.3, 1.3, 1.3, 1.3, 1.6, 1.6, 1.6, 1.6, 1.6, 1.6, 1.6, 2.4]
    assert np.round(c.mean_idcg, 1).tolist()[:10] == [3.0, 5.5, 6.8, 7.3, 7.7, 8.1, 8.3, 8.4, 8.6, 8.7]
    # NCG = mean CG / mean ideal CG, exactly the text's row.
    ncg = [0.17, 0.09, 0.27, 0.24, 0.21, 0.33, 0.32, 0.35, 0.33, 0.40, 0.40, 0.40, 0.40, 0.40, 0.64]
    assert np.round(c.ncg_of_means, 2).tolist() == ncg
    # NDCG = mean DCG / mean ideal DCG. The text prints 16 values (0.26 twice at rank 9/10); the first 9 agree.
    assert np.round(c.ndcg_of_means, 2).tolist()[:9] == [0.17, 0.09, 0.21, 0.20, 0.19, 0.25, 0.25, 0.26, 0.26]
    # The text averages rounded DCG values (1.6 and 1.3 -> 1.5 at rank 3); unrounded it is 1.45.
    assert c.mean_dcg[2] == pytest.approx((1 + 1 / math.log2(3) + 2 / math.log2(3)) / 2)


def test_ucd_per_query_ndcg_table_and_ndcg10():
    c = lecture_curves()
    table = [0.33, 0.17, 0.20, 0.18, 0.16, 0.27, 0.26, 0.25, 0.24, 0.29, 0.29, 0.29, 0.29, 0.29, 0.36]
    # The slides divide the rounded DCG by the rounded IDCG (1.6 / 7.9 = 0.20, unrounded 0.2067;
    # 4.2 / 11.8 = 0.36, unrounded 0.3517).
    assert c.ndcg[0] == pytest.approx(table, abs=0.0085)
    assert round(float(c.ndcg[0][9]), 4) == 0.2868  # "NDCG@10 ... here it is 0.29"
    assert np.round(c.idcg[0], 1).tolist()[:10] == [3.0, 6.0, 7.9, 8.9, 9.8, 10.5, 10.9, 11.2, 11.5, 11.8]


def test_cs276_jk_dcg10_and_sklearn_dcg_examples():
    assert round(float(gain_vectors([3, 2, 3, 0, 0, 1, 2, 2, 3, 0], discount="jk").dcg[9]), 4) == 9.6051
    # sklearn dcg_score([[10, 0, 0, 1, 5]], [[.1, .2, .3, 4, 70]]): ranked labels 5, 1, 0, 0, 10 (linear form).
    v = gain_vectors([5, 1, 0, 0, 10])
    assert round(float(v.dcg[4]), 4) == 9.4995 and round(float(v.dcg[1]), 4) == 5.6309


def test_gain_vectors_in_the_three_forms_on_the_wikipedia_example():
    labels, ideal = [3, 2, 3, 0, 1, 2], [3, 2, 3, 0, 1, 2, 3, 2]
    assert round(float(gain_vectors(labels, ideal=ideal).ndcg[5]), 4) == 0.7850
    assert round(float(gain_vectors(labels, ideal=ideal, gain="exp").ndcg[5]), 4) == 0.7511
    jk = gain_vectors(labels, ideal=ideal, discount="jk")
    assert jk.dcg[1] == 5.0 and jk.idcg[1] == 6.0  # ranks 1 and 2 undiscounted


def _policies():
    return st.sampled_from(
        [
            {"preset": "trec"},
            {"preset": "beir"},
            {"preset": "trec", "missing_queries": "zero"},
            {"preset": "beir", "no_relevant": "skip", "missing_queries": "zero"},
            {"preset": "trec", "ties": "stable", "no_relevant": "skip"},
        ]
    )


@given(
    S.qrels(), S.runs(), _policies(), st.sampled_from([None, "exp", {1: 2, 2: 5, 3: 5}]), st.sampled_from([None, "jk"])
)
def test_gain_curve_points_are_the_ndcg_measures_bit_for_bit(qrels, results, policy, gain, discount):
    assume([q for q in results if qrels.get(q)])
    depth = 12
    c = gain_curves(qrels, results, depth, gain=gain, discount=discount, **policy)
    stem = str(parse_stem(gain, discount))
    res = evaluate(qrels, results, list(range(1, depth + 1)), measures=[stem], **policy)
    for k in range(1, depth + 1):
        name = f"{stem}@{k}"
        assert c.mean_ndcg[k - 1] == res.raw_means[name] or (
            np.isnan(c.mean_ndcg[k - 1]) and np.isnan(res.raw_means[name])
        )
        assert dict(zip(c.qids, c.ndcg[:, k - 1].tolist())) == res.per_query[name]
    assert c.n_queries == res.n_queries[f"{stem}@1"]


def parse_stem(gain, discount):
    from haystack_irmetrics.core.measures import Measure

    return Measure("NDCG", 1, gain=gain, discount=discount).stem


@given(S.qrels(), S.runs(), st.sampled_from(["trec", "beir"]))
def test_pr_curve_points_are_the_ip_measures(qrels, results, preset):
    assume([q for q in results if qrels.get(q)])
    pr = interpolated_pr(qrels, results, preset=preset)
    res = evaluate(qrels, results, None, measures=["iP", "iP_avg"], preset=preset)
    for j, level in enumerate(STANDARD_LEVELS):
        assert pr.mean[j] == res.raw_means[f"iP@{level!r}"]
        assert dict(zip(pr.qids, pr.precision[:, j].tolist())) == res.per_query[f"iP@{level!r}"]
    assert pr.average() == pytest.approx(res.raw_means["iP_avg"], abs=1e-12)
    assert 0.0 <= pr.area() <= 1.0


def test_pr_curve_area_and_custom_levels():
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    results = {"q": {"a": 0.9, "x": 0.8, "b": 0.7, "y": 0.6, "c": 0.5}}
    pr = interpolated_pr(qrels, results, [0.0, 0.5, 1.0], preset="trec")
    assert pr.mean.tolist() == [1.0, 2 / 3, 0.6]
    assert pr.area() == pytest.approx(0.5 * (1.0 + 2 / 3) / 2 + 0.5 * (2 / 3 + 0.6) / 2)
    with pytest.raises(InvalidCutoffError, match="ascending"):
        interpolated_pr(qrels, results, [0.5, 0.2])
    with pytest.raises(InvalidCutoffError, match=r"\[0, 1\]"):
        interpolated_pr(qrels, results, [0.5, 1.2])


def test_measure_at_k_matches_evaluate_for_any_family_with_a_cutoff():
    qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}}
    results = {"q1": {"x": 0.9, "a": 0.8, "b": 0.1}, "q2": {"c": 0.5, "y": 0.4}}
    for stem in ("NDCG", "nDCG_exp", "P", "F(beta=2)", "Success", "Judged"):
        curve = measure_at_k(qrels, results, stem, [1, 2, 3], preset="trec")
        res = evaluate(qrels, results, None, measures=[f"{stem}@{k}" for k in (1, 2, 3)], preset="trec")
        assert curve.mean.tolist() == list(res.raw_means.values())
    assert measure_at_k(qrels, results, "P", [1, 2]).stem == "P"
    with pytest.raises(InvalidCutoffError, match="takes no cutoff"):
        measure_at_k(qrels, results, "Rprec")
    with pytest.raises(InvalidCutoffError, match="does not take a cutoff"):
        measure_at_k(qrels, results, "iP@0.3")
