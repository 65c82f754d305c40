"""Hand-computed goldens: worked examples of the IR literature (linear DCG form, BEIR's six)."""

from __future__ import annotations

import math

import pytest

from haystack_irmetrics import evaluate


def ranked(labels: list[float], extra: dict[str, float] | None = None):
    """One query whose documents d0, d1, ... are returned in that order with these labels."""
    docs = [f"d{i}" for i in range(len(labels))]
    qrels = {"q": {d: lab for d, lab in zip(docs, labels, strict=False)} | (extra or {})}
    results = {"q": {d: float(len(docs) - i) for i, d in enumerate(docs)}}
    return qrels, results


def test_wikipedia_linear_ndcg6_with_two_more_judged_docs_is_0_7850():
    # rels 3,2,3,0,1,2; two unretrieved judged docs (3 and 2) make the ideal 3,3,3,2,2,2.
    qrels, results = ranked([3, 2, 3, 0, 1, 2], {"x1": 3, "x2": 2})
    res = evaluate(qrels, results, [6], measures=["NDCG"], preset="trec")
    dcg = 3 + 2 / math.log2(3) + 3 / 2 + 0 + 1 / math.log2(6) + 2 / math.log2(7)
    assert dcg == pytest.approx(6.8611, abs=1e-4)
    assert res.per_query["NDCG@6"]["q"] == pytest.approx(0.7850, abs=1e-4)


def test_cs276_average_precision_relevant_at_1_3_5_of_3_is_0_7556():
    qrels, results = ranked([1, 0, 1, 0, 1])
    res = evaluate(qrels, results, [5], measures=["MAP"])
    assert res.per_query["MAP@5"]["q"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert round(res.per_query["MAP@5"]["q"], 4) == 0.7556


def test_blog_model_a_linear_ndcg5_is_0_9659_not_the_blogs_0_9664():
    qrels, results = ranked([5, 2, 4, 0, 1])
    res = evaluate(qrels, results, [5], measures=["NDCG"])
    assert round(res.per_query["NDCG@5"]["q"], 4) == 0.9659


def test_blog_query_a_linear_ndcg3_is_0_9693():
    qrels, results = ranked([5, 2, 4])
    res = evaluate(qrels, results, [3], measures=["NDCG"])
    assert round(res.per_query["NDCG@3"]["q"], 4) == 0.9693


def test_lecture_mrr_over_first_hits_at_ranks_3_2_1_is_0_6111():
    qrels = {"a": {"a3": 1}, "b": {"b2": 1}, "c": {"c1": 1}}
    results = {
        "a": {"a1": 3.0, "a2": 2.0, "a3": 1.0},
        "b": {"b1": 3.0, "b2": 2.0, "b3": 1.0},
        "c": {"c1": 3.0, "c2": 2.0, "c3": 1.0},
    }
    res = evaluate(qrels, results, [10], measures=["MRR"])
    assert res.means["MRR@10"] == round((1 / 3 + 1 / 2 + 1) / 3, 5) == 0.61111


def test_lecture_ndcg10_of_the_g_vector_in_linear_form_is_0_3153():
    gains = [1, 0, 1, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 3]
    # ideal (3,3,3,2,2,2,1,1,1,1,0...): judged docs not retrieved complete the ideal list.
    extra = {"x1": 3, "x2": 2, "x3": 2, "x4": 1, "x5": 1}
    qrels, results = ranked(gains, extra)
    res = evaluate(qrels, results, [10], measures=["NDCG"])
    assert round(res.per_query["NDCG@10"]["q"], 4) == 0.3153


# The running example of a blog post on the six BEIR metrics: documents 1-4 returned in that order for each of three
# queries, relevance scores in [0, 1], threshold 0.5. The text's own numbers are wrong in places
# (see seeds/README.md); these are computed from the definitions.
SEED_004_QRELS = {
    "q1": {"doc1": 1.0, "doc2": 0.5, "doc3": 0.3, "doc4": 0.1},
    "q2": {"doc1": 0.7, "doc2": 1.0, "doc3": 0.2, "doc4": 0.1},
    "q3": {"doc1": 0.4, "doc2": 0.2, "doc3": 1.0, "doc4": 0.1},
}
SEED_004_RESULTS = {q: {"doc1": 0.9, "doc2": 0.8, "doc3": 0.7, "doc4": 0.6} for q in SEED_004_QRELS}


def test_seed_004_ndcg2_uses_the_graded_scores_as_gains():
    res = evaluate(SEED_004_QRELS, SEED_004_RESULTS, [2], relevance_threshold=0.5)
    l3 = math.log2(3)
    per = res.per_query["NDCG@2"]
    assert per["q1"] == pytest.approx(1.0)
    assert per["q2"] == pytest.approx((0.7 + 1.0 / l3) / (1.0 + 0.7 / l3))  # 0.9232, not the text's 0.89
    assert per["q3"] == pytest.approx((0.4 + 0.2 / l3) / (1.0 + 0.4 / l3))  # 0.4202, not the text's 0.77
    assert res.means["NDCG@2"] == round((1.0 + per["q2"] + per["q3"]) / 3, 5)


def test_seed_004_binary_metrics_at_threshold_0_5():
    res = evaluate(SEED_004_QRELS, SEED_004_RESULTS, [2], relevance_threshold=0.5)
    pq = res.per_query
    # Relevant (>= 0.5): q1 {doc1, doc2}, q2 {doc1, doc2}, q3 {doc3} - outside the top 2.
    assert pq["P@2"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    assert pq["Recall@2"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    # MAP@k is average precision cut at k over all relevant docs, not the text's mean of P@k.
    assert pq["MAP@2"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    # q3's first relevant doc is at rank 3, outside k = 2 (the text counts it).
    assert pq["MRR@2"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    assert pq["R_cap@2"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    assert res.means["P@2"] == res.means["MRR@2"] == 0.66667


def test_seed_004_at_k3_q3_finds_its_answer():
    res = evaluate(SEED_004_QRELS, SEED_004_RESULTS, [3], relevance_threshold=0.5)
    assert res.per_query["MRR@3"]["q3"] == pytest.approx(1 / 3)
    assert res.per_query["MAP@3"]["q3"] == pytest.approx(1 / 3)
    assert res.per_query["R_cap@3"]["q3"] == 1.0
    assert res.per_query["P@3"]["q1"] == pytest.approx(2 / 3)
