"""Graded user feedback scored with a 0.5 threshold: the rankings users saw against a BM25 replay.

The example of the "Metrics for Information Retrieval" post (a Haystack search with user votes):
three queries, four documents shown in the order 1, 2, 3, 4, and relevance scores of 1.0 / 0.5 /
0.3 / 0.1 from the votes. NDCG uses the scores as gains; P, Recall, MRR (and MAP, R_cap) count a
score >= 0.5 as relevant. The same log then scores a BM25 pipeline replayed over the logged queries,
and the Haystack pipeline in pipelines/feedback_evaluation.yaml scores it inside a pipeline.

Run: python examples/feedback_threshold.py
"""

from __future__ import annotations

from pathlib import Path

from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_irmetrics.components import load_pipeline
from haystack_irmetrics.feedback import aggregate_feedback, evaluate_feedback, replay_pipeline

CORPUS = {
    "doc1": "How to train a cat",
    "doc2": "How to train a dog",
    "doc3": "How to train a parrot",
    "doc4": "How to train a hamster",
}
# query -> the relevance score users gave doc1..doc4, shown in that order.
SCORES = {
    "train cat": [1.0, 0.5, 0.3, 0.1],
    "train dog": [0.7, 1.0, 0.2, 0.1],
    "train parrot": [0.4, 0.2, 1.0, 0.1],
}
ROWS = [
    {"query_id": f"q{n}", "query": text, "doc_id": f"doc{i + 1}", "position": i + 1, "vote": score}
    for n, (text, scores) in enumerate(SCORES.items(), 1)
    for i, score in enumerate(scores)
]
PIPELINE = Path(__file__).resolve().parent.parent / "pipelines" / "feedback_evaluation.yaml"


def main() -> None:
    feedback = aggregate_feedback(ROWS, "mean", columns={"query_text": "query"})
    print("judgments:", feedback.qrels().data["q2"])

    store = InMemoryDocumentStore()
    store.write_documents([Document(id=i, content=t) for i, t in CORPUS.items()])
    bm25 = Pipeline()
    bm25.add_component("retriever", InMemoryBM25Retriever(store, top_k=4))
    replayed = replay_pipeline(bm25, feedback)
    print("bm25 ranks:", {q: list(docs) for q, docs in replayed.items()})

    ev = evaluate_feedback(
        feedback, {"bm25": replayed}, k_values=[2], threshold=0.5, measures=["NDCG", "P", "Recall", "MRR"]
    )
    for system in ev.systems:
        scores = ev.overall.systems[system].values["full"]
        print(f"{system}:")
        for metric, values in scores.items():
            print(f"  {metric:9} {values.mean():.4f}  per query {[round(v, 4) for v in values.tolist()]}")
    for c in ev.overall.comparisons["bm25"]["full"]:
        print(f"  bm25 - logged {c.metric[2]:9} {c.delta:+.4f}  p (exact randomization) {c.p_randomization:.3f}")

    out = load_pipeline(PIPELINE).run({"feedback": {"feedback": ROWS}})
    print("pipeline:", {m: out["metrics"]["means"][m] for m in ("NDCG@1", "NDCG@3", "P@1", "MRR@3")})


if __name__ == "__main__":
    main()
