"""Compare two retrievers query by query with EvaluationRunResult.comparative_detailed_report.

BM25 against an embedding retriever. The embeddings come from a toy character-trigram hashing
function so the example needs no model download; put a real embedder in its place.

Run: python examples/compare_retrievers.py
"""

from __future__ import annotations

import hashlib
import math

from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever, InMemoryEmbeddingRetriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.evaluation import EvaluationRunResult

from haystack_irmetrics.components import MRREvaluator, NDCGEvaluator, RecallEvaluator

CORPUS = {
    "d1": "Cats are small carnivorous mammals often kept as house pets.",
    "d2": "Dogs were the first species to be domesticated by humans.",
    "d3": "A kitten is a juvenile cat; kittens sleep most of the day.",
    "d4": "Puppies need training, socialisation and regular vet visits.",
    "d5": "Parrots can imitate human speech and live for decades.",
    "d6": "Goldfish are freshwater fish kept in ponds and aquariums.",
}
QUERIES = {
    "q1": ("kittens", ["d3", "d1"]),
    "q2": ("how to train a puppy", ["d4"]),
    "q3": ("talking birds", ["d5"]),
    "q4": ("domesticated dogs", ["d2", "d4"]),
}


def embed(text: str, dim: int = 64) -> list[float]:
    """Toy embedding: hashed character trigrams, L2-normalised (a stand-in for a real model)."""
    vec = [0.0] * dim
    padded = f"  {text.lower()}  "
    for i in range(len(padded) - 2):
        vec[int(hashlib.md5(padded[i : i + 3].encode()).hexdigest(), 16) % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec]


def evaluators() -> Pipeline:
    pipe = Pipeline()
    pipe.add_component("NDCG@3", NDCGEvaluator(k=3))
    pipe.add_component("Recall@3", RecallEvaluator(k=3))
    pipe.add_component("MRR@3", MRREvaluator(k=3))
    return pipe


def main() -> None:
    store = InMemoryDocumentStore(embedding_similarity_function="cosine")
    store.write_documents([Document(id=i, content=t, embedding=embed(t)) for i, t in CORPUS.items()])
    retrievers = {
        "bm25": lambda q: InMemoryBM25Retriever(store, top_k=3).run(query=q)["documents"],
        "embedding": lambda q: InMemoryEmbeddingRetriever(store, top_k=3).run(query_embedding=embed(q))["documents"],
    }
    questions = [QUERIES[q][0] for q in QUERIES]
    gold = [[Document(id=d) for d in QUERIES[q][1]] for q in QUERIES]

    runs = {}
    for name, retrieve in retrievers.items():
        retrieved = [retrieve(question) for question in questions]
        print(name, [[d.id for d in docs] for docs in retrieved])
        scores = evaluators().run({"ground_truth_documents": gold, "retrieved_documents": retrieved})
        runs[name] = EvaluationRunResult(name, inputs={"question": questions}, results=scores)
        aggregated = runs[name].aggregated_report()
        print(name, dict(zip(aggregated["metrics"], [round(v, 4) for v in aggregated["score"]], strict=True)))

    report = runs["bm25"].comparative_detailed_report(runs["embedding"])
    for column, values in report.items():
        cells = [v if isinstance(v, str) else round(v, 4) for v in values]
        print(f"{column:20} {cells}")


if __name__ == "__main__":
    main()
