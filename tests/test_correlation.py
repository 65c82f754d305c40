"""Rank correlations: the lecture's worked examples, and scipy.stats' numbers exactly."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from haystack_irmetrics import evaluate
from haystack_irmetrics.errors import EmptyInputError, InvalidIdError, InvalidPolicyError, InvalidScoreError
from haystack_irmetrics.stats.correlation import (
    Correlation,
    per_query_correlation,
    rank_correlation,
    system_correlation,
)

# Seed 002: positions of ten documents in rankings R1 and R2; squared differences sum to 24.
DOCS = ["d123", "d84", "d56", "d6", "d8", "d9", "d511", "d129", "d187", "d25"]
S2 = [2, 3, 1, 5, 4, 7, 8, 10, 6, 9]
R1 = DOCS
R2 = [d for _, d in sorted(zip(S2, DOCS))]


def test_lecture_spearman_of_sum_of_squared_differences_24_over_10_documents_is_0_8545():
    assert sum((i + 1 - s) ** 2 for i, s in enumerate(S2)) == 24
    rho = rank_correlation(R1, R2, "spearman")
    assert rho.statistic == pytest.approx(1 - 6 * 24 / (10 * 99), abs=1e-15)
    assert round(rho.statistic, 4) == 0.8545 and rho.n == 10


def test_lecture_kendall_over_the_top_5_with_6_discordant_of_20_ordered_pairs_is_0_4():
    top1 = R1[:5]
    top2 = [d for _, d in sorted(zip(S2[:5], DOCS[:5]))]
    tau = rank_correlation(top1, top2, "kendall")
    assert tau.statistic == pytest.approx(1 - 2 * 6 / (5 * 4), abs=1e-15)
    assert round(tau.statistic, 4) == 0.4


def test_rankings_and_score_maps_are_interchangeable():
    scores = {d: -float(s) for d, s in zip(DOCS, S2)}  # higher = better = earlier in R2
    assert rank_correlation(R1, scores, "spearman") == rank_correlation(R1, R2, "spearman")
    assert float(rank_correlation(R1, R1)) == pytest.approx(1.0, abs=1e-15)  # scipy: 0.9999999999999999
    assert rank_correlation(R1, list(reversed(R1))).statistic == pytest.approx(-1.0, abs=1e-15)


_items = st.lists(st.sampled_from([f"i{j}" for j in range(12)]), min_size=2, max_size=12, unique=True)
_values = st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, -1.0, 3.25])  # ties on purpose


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")  # nan on a constant input, as scipy
@given(_items, st.data(), st.sampled_from(["kendall", "spearman"]))
def test_equal_to_scipy_exactly_with_ties(items, data, method):
    a = {i: data.draw(_values) for i in items}
    b = {i: data.draw(_values) for i in reversed(items)}  # different insertion order
    got = rank_correlation(a, b, method)
    x, y = [a[i] for i in items], [b[i] for i in items]
    ref = stats.kendalltau(x, y) if method == "kendall" else stats.spearmanr(x, y)
    for ours, theirs in ((got.statistic, float(ref.statistic)), (got.pvalue, float(ref.pvalue))):
        assert ours == theirs or (math.isnan(ours) and math.isnan(theirs))


def test_per_query_and_system_correlations():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 2}}
    bm25 = {"q1": {"a": 0.9, "x": 0.5}, "q2": {"x": 0.9, "b": 0.5}, "q3": {"y": 0.9, "z": 0.8, "c": 0.1}}
    dense = {"q1": {"a": 0.9}, "q2": {"b": 0.9, "x": 0.5}, "q3": {"y": 0.9, "c": 0.8}}
    ra, rb = evaluate(qrels, bm25, [3]), evaluate(qrels, dense, [3])
    c = per_query_correlation(ra, rb, "nDCG@3", "kendall")
    x = [ra.per_query["NDCG@3"][q] for q in qrels]
    y = [rb.per_query["NDCG@3"][q] for q in qrels]
    assert c.statistic == float(stats.kendalltau(x, y).statistic) and c.n == 3
    assert per_query_correlation(ra.per_query["MRR@3"], rb.per_query["MRR@3"], method="spearman").n == 3
    systems_map = {"bm25": ra.raw_means["MAP@3"], "dense": rb.raw_means["MAP@3"], "random": 0.05}
    systems_ndcg = {"bm25": ra.raw_means["NDCG@3"], "dense": rb.raw_means["NDCG@3"], "random": 0.04}
    assert system_correlation(systems_map, systems_ndcg).statistic == 1.0
    with pytest.raises(InvalidPolicyError, match="measure="):
        per_query_correlation(ra, rb)


@pytest.mark.parametrize(
    "a,b,error,match",
    [
        (["x", "y"], ["x", "z"], InvalidIdError, "same items"),
        (["x", "x", "y"], ["x", "y"], InvalidIdError, "twice"),
        (["x"], ["x"], EmptyInputError, "at least two"),
        ({"x": 1.0, "y": float("nan")}, ["x", "y"], InvalidScoreError, "not a finite number"),
        ({"x": 1.0, "y": "high"}, ["x", "y"], InvalidScoreError, "not a finite number"),
        ("xy", ["x", "y"], InvalidIdError, "string"),
    ],
)
def test_bad_inputs_raise_typed_errors(a, b, error, match):
    with pytest.raises(error, match=match):
        rank_correlation(a, b)


def test_unknown_method_and_the_result_type():
    with pytest.raises(InvalidPolicyError, match="kendall"):
        rank_correlation(["a", "b"], ["a", "b"], "pearson")  # type: ignore[arg-type]
    assert isinstance(rank_correlation(["a", "b", "c"], ["b", "a", "c"]), Correlation)


def test_importing_the_package_loads_neither_scipy_nor_matplotlib():
    code = "import sys, haystack_irmetrics, haystack_irmetrics.core, haystack_irmetrics.plots, haystack_irmetrics.cli\n"
    code += "haystack_irmetrics.cli.build_parser()\n"
    code += "print(sorted(m for m in ('scipy', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_per_query_values_in_query_order_are_paired_by_position_like_scipy():
    a, b = [0.2, 0.9, 0.5, 0.7, 0.1], np.array([0.9, 0.1, 0.7, 0.2, 0.5])
    got = per_query_correlation(a, b)
    ref = stats.kendalltau(a, b)
    assert (got.statistic, got.pvalue, got.n) == (float(ref.statistic), float(ref.pvalue), 5)
    tied = per_query_correlation([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], method="spearman")  # ties are values, not ids
    assert tied.statistic == float(stats.spearmanr([0.0, 1.0, 0.0], [1.0, 0.0, 0.0]).statistic)
    with pytest.raises(InvalidIdError, match="as many"):
        per_query_correlation([0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(InvalidIdError, match="the same way"):
        per_query_correlation({"q1": 0.1, "q2": 0.2}, [0.1, 0.2])
    with pytest.raises(InvalidScoreError, match="per-query values are"):
        per_query_correlation(None, [0.1, 0.2])


def test_per_query_correlation_of_two_results_runs_over_the_queries_both_scored():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d4": 1}}
    ra = evaluate(qrels, {"q1": {"d1": 2, "x": 1}, "q2": {"x": 2, "d2": 1}, "q3": {"d3": 1}, "q4": {"d4": 1}}, [10])
    rb = evaluate(qrels, {"q1": {"d1": 2}, "q2": {"d2": 1}, "q3": {"x": 1, "d3": 0.5}}, [10])
    got = per_query_correlation(ra, rb, "NDCG@10")
    shared = ["q1", "q2", "q3"]
    ref = stats.kendalltau([ra.per_query["NDCG@10"][q] for q in shared], [rb.per_query["NDCG@10"][q] for q in shared])
    assert got.n == 3 and got.statistic == float(ref.statistic)
    with pytest.raises(EmptyInputError, match="at least two queries that both systems have"):
        per_query_correlation({"q1": 0.1, "q2": 0.3}, {"q2": 0.2, "q3": 0.4})


@pytest.mark.parametrize("bad", [None, 3, [["a"], ["b"]]])
def test_rankings_that_are_not_item_sequences_are_typed_errors(bad):
    with pytest.raises(InvalidIdError, match=r"ranking is a sequence|hashable"):
        rank_correlation(bad, ["a", "b"])


def test_a_series_pairs_by_its_query_labels_and_unordered_or_scalar_values_are_refused():
    pd = pytest.importorskip("pandas")
    a = pd.Series({"q1": 0.1, "q2": 0.5, "q3": 0.9, "q4": 0.3})
    b = pd.Series({"q4": 0.35, "q3": 0.95, "q2": 0.4, "q1": 0.2})
    assert per_query_correlation(a, b).statistic == per_query_correlation(a.to_dict(), b.to_dict()).statistic == 1.0
    for bad in ({0.1, 0.5, 0.9}, np.array(0.5), np.ones((2, 2))):
        with pytest.raises(InvalidScoreError, match="1-D array"):
            per_query_correlation(bad, [0.1, 0.2, 0.3])


def test_a_series_with_a_repeated_query_id_is_refused():
    pd = pytest.importorskip("pandas")
    a = pd.Series([0.1, 0.5, 0.9, 0.3], index=["q1", "q2", "q2", "q4"])
    with pytest.raises(InvalidIdError, match="unique"):
        per_query_correlation(a, a)
