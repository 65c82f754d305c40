"""Where our evaluators and Haystack 3.x's built-in Document*Evaluators agree, and where they differ (and why).

They agree when Haystack's simplifications do not bite: binary ground truth, a cutoff k that covers
every retrieved and every gold document, no repeated documents, ranking by list order, the same
comparison field. Each difference below is a deliberate choice of ours, named in the test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from haystack import Document
from haystack.components.evaluators import (
    DocumentMAPEvaluator,
    DocumentMRREvaluator,
    DocumentNDCGEvaluator,
    DocumentRecallEvaluator,
)

from haystack_irmetrics.components import MAPEvaluator, MRREvaluator, NDCGEvaluator, RecallEvaluator

BIG_K = 1000


def C(text: str, score: float | None = None) -> Document:
    return Document(content=text, score=score)


def ours(cls, gold, retrieved, **kwargs) -> dict:
    return cls(**{"k": BIG_K, "document_comparison_field": "content", **kwargs}).run(gold, retrieved)


def random_binary_batch(seed: int) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    pool = [f"passage {i}" for i in range(30)]
    gold, retrieved = [], []
    for _ in range(int(rng.integers(3, 12))):
        gold.append([C(t) for t in rng.choice(pool, size=int(rng.integers(1, 6)), replace=False)])
        retrieved.append([C(t) for t in rng.choice(pool, size=int(rng.integers(0, 15)), replace=False)])
    return gold, retrieved


PAIRS = [
    (NDCGEvaluator, DocumentNDCGEvaluator, {}),
    (MAPEvaluator, DocumentMAPEvaluator, {}),
    (MRREvaluator, DocumentMRREvaluator, {}),
    (RecallEvaluator, DocumentRecallEvaluator, {"mode": "multi_hit"}),
]


# -- where they agree ------------------------------------------------------------------------------


@pytest.mark.parametrize(("ours_cls", "theirs_cls", "theirs_kwargs"), PAIRS, ids=lambda v: getattr(v, "__name__", ""))
def test_agree_on_binary_gold_when_k_covers_every_document_and_nothing_repeats(ours_cls, theirs_cls, theirs_kwargs):
    for seed in range(40):
        gold, retrieved = random_binary_batch(seed)
        a = ours(ours_cls, gold, retrieved)
        b = theirs_cls(**theirs_kwargs).run(ground_truth_documents=gold, retrieved_documents=retrieved)
        assert a["individual_scores"] == pytest.approx(b["individual_scores"], abs=1e-15), seed
        assert a["score"] == pytest.approx(b["score"], abs=1e-15), seed


def test_graded_ndcg_agrees_because_both_use_the_gold_score_as_linear_gain():
    gold = [[C("a", 3.0), C("b", 1.0), C("c", 2.0)], [C("d", 0.5), C("e", 0.25)]]
    retrieved = [[C("b"), C("x"), C("a"), C("c")], [C("e"), C("d")]]
    theirs = DocumentNDCGEvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)
    assert ours(NDCGEvaluator, gold, retrieved)["individual_scores"] == pytest.approx(theirs["individual_scores"])


def test_matching_on_content_agrees_with_haystack_default_comparison_field():
    gold = [[Document(id="g1", content="Paris")]]
    retrieved = [[Document(id="r1", content="Berlin"), Document(id="r2", content="Paris")]]
    theirs = DocumentMRREvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)
    assert ours(MRREvaluator, gold, retrieved)["score"] == theirs["score"] == 0.5


# -- where they differ -----------------------------------------------------------------------------


def test_ndcg_differs_because_haystack_does_not_cut_the_ideal_list_at_k():
    gold = [[C("a"), C("b"), C("c"), C("d")]]
    retrieved = [[C("a"), C("b"), C("x")]]
    k = 2
    # Same top-2 for both (Haystack has no k: give it the list cut at k). Ideal@2 is 1 + 1/log2(3).
    theirs = DocumentNDCGEvaluator().run(ground_truth_documents=gold, retrieved_documents=[retrieved[0][:k]])
    assert ours(NDCGEvaluator, gold, retrieved, k=k)["score"] == 1.0
    ideal_all_four = sum(1 / math.log2(i + 2) for i in range(4))
    assert theirs["score"] == pytest.approx((1 + 1 / math.log2(3)) / ideal_all_four)


def test_cutoff_differs_because_haystack_has_no_k_and_scores_the_whole_list():
    gold = [[C("e")]]
    retrieved = [[C("a"), C("b"), C("c"), C("d"), C("e")]]
    assert DocumentMRREvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)["score"] == 0.2
    assert ours(MRREvaluator, gold, retrieved, k=3)["score"] == 0.0
    assert ours(MRREvaluator, gold, retrieved, k=5)["score"] == 0.2


@pytest.mark.parametrize(
    ("ours_cls", "theirs_cls"), [(MRREvaluator, DocumentMRREvaluator), (MAPEvaluator, DocumentMAPEvaluator)]
)
def test_mrr_and_map_differ_because_haystack_counts_gold_documents_with_score_zero_as_relevant(ours_cls, theirs_cls):
    gold = [[C("judged not relevant", 0.0), C("relevant", 1.0)]]
    retrieved = [[C("judged not relevant"), C("relevant")]]
    theirs = theirs_cls().run(ground_truth_documents=gold, retrieved_documents=retrieved)["score"]
    mine = ours(ours_cls, gold, retrieved)["score"]
    assert theirs == 1.0  # MRR: rank 1; MAP: (1/1 + 2/2) / 2
    assert mine == 0.5  # MRR: first relevant at rank 2; MAP: (1/2) / 1


def test_recall_differs_because_haystack_default_recall_is_a_hit_rate():
    gold = [[C("a"), C("b"), C("c"), C("d")]]
    retrieved = [[C("a"), C("x")]]
    assert DocumentRecallEvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)["score"] == 1.0
    assert ours(RecallEvaluator, gold, retrieved)["score"] == 0.25


def test_repeated_chunks_differ_because_we_count_a_document_once_at_its_first_rank_and_haystack_keeps_the_slot():
    gold = [[C("a"), C("b")]]
    retrieved = [[C("a"), C("a"), C("b")]]  # two chunks with the same text, then b
    theirs = DocumentNDCGEvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)["score"]
    assert theirs == pytest.approx((1 + 1 / 2) / (1 + 1 / math.log2(3)))  # b scored at rank 3
    assert ours(NDCGEvaluator, gold, retrieved)["score"] == 1.0  # ranking a, b
    # MRR only looks at the first match: both agree.
    assert DocumentMRREvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)["score"] == 1.0
    assert ours(MRREvaluator, gold, retrieved)["score"] == 1.0


def test_default_matching_differs_because_haystack_compares_content_and_we_compare_id():
    gold = [[Document(id="corpus-7", content="Paris is the capital of France.")]]
    retrieved = [[Document(id="chunk-7-0", content="Paris is the capital of France.")]]
    assert DocumentMRREvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)["score"] == 1.0
    assert MRREvaluator().run(gold, retrieved)["score"] == 0.0


def test_rank_by_score_differs_because_haystack_only_knows_list_order():
    gold = [[C("b")]]
    retrieved = [[C("a", 0.2), C("b", 0.9)]]  # e.g. two retrievers' lists joined without re-sorting
    assert DocumentMRREvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)["score"] == 0.5
    assert ours(MRREvaluator, gold, retrieved)["score"] == 0.5
    assert ours(MRREvaluator, gold, retrieved, rank_by="score")["score"] == 1.0


def test_query_without_ground_truth_differs_because_haystack_averages_it_as_zero_and_we_leave_it_out():
    gold = [[C("a")], []]
    retrieved = [[C("a")], [C("b")]]
    theirs = DocumentNDCGEvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)
    assert theirs["individual_scores"] == [1.0, 0] and theirs["score"] == 0.5
    mine = ours(NDCGEvaluator, gold, retrieved)
    assert mine["individual_scores"][0] == 1.0 and math.isnan(mine["individual_scores"][1])
    assert mine["score"] == 1.0


def test_mixed_scored_and_unscored_gold_is_an_error_in_both_but_ours_names_the_query_and_documents():
    gold = [[C("a", 1.0), C("b")]]
    with pytest.raises(ValueError, match="Either none or all"):
        DocumentNDCGEvaluator().run(ground_truth_documents=gold, retrieved_documents=[[C("a")]])
    with pytest.raises(ValueError, match=r"ground_truth_documents\[0\] \(query '0'\) mixes"):
        ours(NDCGEvaluator, gold, [[C("a")]])
    # Haystack checks the mix in NDCG only; its MRR runs on. We refuse it in every metric.
    DocumentMRREvaluator().run(ground_truth_documents=gold, retrieved_documents=[[C("a")]])
    with pytest.raises(ValueError, match=r"ground_truth_documents\[0\] \(query '0'\) mixes"):
        ours(MRREvaluator, gold, [[C("a")]])


def test_map_and_recall_differ_on_grade_half_because_beir_counts_relevance_of_at_least_one():
    gold = [[C("a", 0.5), C("b", 1.0)]]
    retrieved = [[C("a"), C("b")]]
    assert DocumentMAPEvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)["score"] == 1.0
    assert ours(MAPEvaluator, gold, retrieved)["score"] == 0.5  # only b (>= 1) counts, at rank 2
    assert ours(MAPEvaluator, gold, retrieved, relevance_threshold=0.5)["score"] == 1.0


def test_a_document_without_a_comparison_value_is_skipped_by_haystack_and_an_error_here():
    from haystack_irmetrics import InvalidIdError

    gold = [[C("a")]]
    retrieved = [[Document(content=None), C("a")]]
    assert DocumentMRREvaluator().run(ground_truth_documents=gold, retrieved_documents=retrieved)["score"] == 0.5
    with pytest.raises(InvalidIdError, match=r"retrieved_documents\[0\]\[0\] .* has no 'content'"):
        ours(MRREvaluator, gold, retrieved)


def test_empty_content_never_matches_in_haystack_and_is_a_key_like_any_other_here():
    gold = [[C("")]]
    retrieved = [[C("")]]
    theirs = DocumentRecallEvaluator(mode="multi_hit").run(ground_truth_documents=gold, retrieved_documents=retrieved)
    assert theirs["score"] == 0.0
    assert ours(RecallEvaluator, gold, retrieved)["score"] == 1.0


def test_an_int_meta_key_matches_its_str_here():
    gold = [[Document(content="x", meta={"corpus_id": 1})]]
    retrieved = [[Document(content="y", meta={"corpus_id": "1"})]]
    assert ours(MRREvaluator, gold, retrieved, document_comparison_field="meta.corpus_id")["score"] == 1.0
