"""Evaluate a BM25 retriever on a handful of documents with BEIR's metrics at k.

Run: python examples/evaluate_retriever.py
"""

from __future__ import annotations

from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_irmetrics.components import IRMetricsEvaluator, NDCGEvaluator, to_evaluation_run_result

CORPUS = {
    "d1": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
    "d2": "Paris is the capital and largest city of France.",
    "d3": "Berlin is the capital of Germany and its largest city.",
    "d4": "The Brandenburg Gate is an 18th-century monument in Berlin.",
    "d5": "Rome is the capital city of Italy.",
    "d6": "The Colosseum is an ancient amphitheatre in the centre of Rome.",
    "d7": "Madrid is the capital of Spain; the Prado museum is in Madrid.",
    "d8": "The Louvre in Paris is the world's most-visited art museum.",
}

# query id -> (question, ids of the relevant documents)
QUERIES = {
    "q1": ("Which city is the French capital?", ["d2"]),
    "q2": ("Which monuments are in Berlin?", ["d4"]),
    "q3": ("art museum in Paris", ["d8", "d1"]),
    "q4": ("ancient amphitheatre in Italy", ["d6"]),
}


def main() -> None:
    store = InMemoryDocumentStore()
    store.write_documents([Document(id=doc_id, content=text) for doc_id, text in CORPUS.items()])
    retriever = InMemoryBM25Retriever(store, top_k=3)

    query_ids = list(QUERIES)
    retrieved = [retriever.run(query=QUERIES[q][0])["documents"] for q in query_ids]
    gold = [[Document(id=doc_id) for doc_id in QUERIES[q][1]] for q in query_ids]

    for q, docs in zip(query_ids, retrieved, strict=True):
        print(q, [d.id for d in docs])

    # One metric, Haystack's evaluator contract (score + individual_scores).
    ndcg = NDCGEvaluator(k=3).run(ground_truth_documents=gold, retrieved_documents=retrieved)
    print("NDCG@3", round(ndcg["score"], 4), [round(v, 4) for v in ndcg["individual_scores"]])

    # BEIR's table in one pass, keyed like EvaluateRetrieval.evaluate's output.
    out = IRMetricsEvaluator(k_values=[1, 3]).run(gold, retrieved, query_ids=query_ids)
    for name, value in out["means"].items():
        print(f"{name:10} {value}")

    report = to_evaluation_run_result(out, "bm25").detailed_report()
    print("MRR@3 per query", dict(zip(report["query_id"], report["MRR@3"], strict=True)))


if __name__ == "__main__":
    main()
