"""FeedbackToGoldDocuments in Haystack pipelines, the YAML pipeline, and pipeline replay of logged queries."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.core.errors import DeserializationError
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_irmetrics import evaluate
from haystack_irmetrics.components import IRMetricsEvaluator, NDCGEvaluator, load_pipeline
from haystack_irmetrics.components.feedback import FeedbackToGoldDocuments
from haystack_irmetrics.feedback import MalformedRowError, aggregate_feedback, evaluate_feedback, replay_pipeline
from tests.test_feedback_scoring import SEED_ROWS

PIPELINE = Path(__file__).resolve().parent.parent / "pipelines" / "feedback_evaluation.yaml"
CORPUS = {
    "doc1": "How to train a cat",
    "doc2": "How to train a dog",
    "doc3": "How to train a parrot",
    "doc4": "How to train a hamster",
}


def test_component_emits_graded_gold_documents_and_the_logged_rankings():
    out = FeedbackToGoldDocuments().run(feedback=SEED_ROWS)
    assert out["query_ids"] == ["q1", "q2", "q3"]
    assert [(d.id, d.score) for d in out["ground_truth_documents"][1]] == [
        ("doc1", 0.7),
        ("doc2", 1.0),
        ("doc3", 0.2),
        ("doc4", 0.1),
    ]
    assert [d.id for d in out["logged_documents"][2]] == ["doc1", "doc2", "doc3", "doc4"]
    assert out["ground_truth_documents"][0][0].meta == {"votes": 1, "up_votes": 1, "voters": 0}
    assert out["skipped_rows"] == 0


def test_evaluators_score_the_component_output_exactly_as_evaluate_feedback():
    out = FeedbackToGoldDocuments().run(feedback=SEED_ROWS)
    metrics = IRMetricsEvaluator(
        metrics=["NDCG", "MAP", "P", "Recall", "MRR", "R_cap"], k_values=[1, 2, 3], relevance_threshold=0.5
    )
    got = metrics.run(out["ground_truth_documents"], out["logged_documents"], out["query_ids"])
    ev = evaluate_feedback(SEED_ROWS, k_values=[1, 2, 3], n_resamples=10)
    assert got["raw_means"] == pytest.approx(ev.means()["logged"], abs=1e-15)


def test_a_query_without_judgments_gets_an_empty_gold_list_and_is_left_out_by_the_evaluators():
    rows = [*SEED_ROWS, {"query_id": "q9", "doc_id": "doc1", "position": 1, "vote": None}]
    out = FeedbackToGoldDocuments().run(feedback=rows, query_ids=["q1", "q9"])
    assert out["ground_truth_documents"][1] == [] and [d.id for d in out["logged_documents"][1]] == ["doc1"]
    scores = NDCGEvaluator(k=2).run(out["ground_truth_documents"], out["logged_documents"], out["query_ids"])
    assert scores["individual_scores"][0] == 1.0 and math.isnan(scores["individual_scores"][1])


def test_component_names_the_malformed_row_or_counts_it_when_skipping():
    rows = [*SEED_ROWS, {"query_id": "q1", "doc_id": "doc9", "position": 5, "vote": "sideways"}]
    with pytest.raises(MalformedRowError, match="row 13: column 'vote'"):
        FeedbackToGoldDocuments().run(feedback=rows)
    assert FeedbackToGoldDocuments(on_error="skip").run(feedback=rows)["skipped_rows"] == 1


def test_component_can_put_the_log_doc_id_in_a_meta_key_for_chunk_matching():
    out = FeedbackToGoldDocuments(id_field="meta.corpus_id").run(feedback=SEED_ROWS)
    gold = out["ground_truth_documents"][0][0]
    assert gold.meta["corpus_id"] == "doc1" and gold.id != "doc1"
    retrieved = [[Document(content="chunk", meta={"corpus_id": "doc1"})]]
    score = NDCGEvaluator(k=1, document_comparison_field="meta.corpus_id").run(
        out["ground_truth_documents"][:1], retrieved
    )
    assert score["score"] == 1.0


def test_component_round_trips_through_to_dict_and_from_dict():
    c = FeedbackToGoldDocuments(
        strategy="wilson", min_votes=2, dedup="last", columns={"user": "uid"}, vote_map={"+": 1}
    )
    again = FeedbackToGoldDocuments.from_dict(c.to_dict())
    assert again.to_dict() == c.to_dict()
    assert c.to_dict()["type"] == "haystack_irmetrics.components.feedback.FeedbackToGoldDocuments"


def test_feedback_pipeline_yaml_loads_through_load_pipeline_and_runs_the_seed_case():
    pipe = load_pipeline(PIPELINE)
    out = pipe.run({"feedback": {"feedback": SEED_ROWS}})
    agg = aggregate_feedback(SEED_ROWS)
    core = evaluate(agg.qrels(), agg.logged_run(), [1, 3, 5, 10], relevance_threshold=0.5, ties="stable")
    assert out["metrics"]["means"] == core.means
    assert out["metrics"]["means"]["P@1"] == 0.66667 and out["metrics"]["means"]["MRR@3"] == 0.77778
    assert load_pipeline(pipe.dumps()).to_dict() == pipe.to_dict()


def test_feedback_pipeline_yaml_is_refused_by_plain_pipeline_load():
    with open(PIPELINE) as fh, pytest.raises(DeserializationError, match="haystack_irmetrics"):
        Pipeline.load(fh)


def bm25_pipeline() -> Pipeline:
    store = InMemoryDocumentStore()
    store.write_documents([Document(id=i, content=t) for i, t in CORPUS.items()])
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(store, top_k=4))
    return pipe


def test_replaying_the_logged_queries_through_bm25_ranks_each_named_animal_first():
    agg = aggregate_feedback(SEED_ROWS, columns={"query_text": "query"})
    run = replay_pipeline(bm25_pipeline(), agg)
    assert [next(iter(run[q])) for q in ("q1", "q2", "q3")] == ["doc1", "doc2", "doc3"]
    ev = evaluate_feedback(agg, {"bm25": run}, k_values=[2], n_resamples=100)
    assert ev.means()["bm25"]["NDCG@2"] == 1.0  # the best-voted document first, the next best second
    assert ev.overall.comparisons["bm25"]["full"][0].p_randomization == 0.5  # 3 queries: 8 sign patterns


def test_replay_names_the_query_input_when_the_pipeline_has_none():
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(InMemoryDocumentStore()))
    agg = aggregate_feedback(SEED_ROWS)
    with pytest.raises(ValueError, match="not an open input"):
        replay_pipeline(pipe, agg, query_input="retriever.question")
