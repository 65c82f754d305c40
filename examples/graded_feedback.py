"""Graded user feedback (relevance 1.0 / 0.5 / 0.3) with a relevance threshold of 0.5.

Users voted on search results, so relevance is a float. pytrec_eval (and so BEIR) refuses float
judgments; haystack_irmetrics takes them: NDCG uses the float as its gain, and the binary metrics
count a document relevant when its relevance is >= relevance_threshold.

Run: python examples/graded_feedback.py
"""

from __future__ import annotations

from haystack import Document

from haystack_irmetrics.components import IRMetricsEvaluator

CORPUS = {
    "doc1": "How to train a cat",
    "doc2": "How to train a dog",
    "doc3": "How to train a parrot",
    "doc4": "How to train a hamster",
}
# query -> {document: the users' relevance vote}
FEEDBACK = {
    "train cat": {"doc1": 1.0, "doc2": 0.5, "doc3": 0.3},
    "train dog": {"doc2": 1.0, "doc1": 0.5, "doc4": 0.3},
    "train parrot": {"doc3": 1.0, "doc1": 0.5, "doc2": 0.3},
}
# What the search system returned, best first.
RETURNED = {
    "train cat": ["doc1", "doc2", "doc3", "doc4"],
    "train dog": ["doc4", "doc1", "doc2", "doc3"],
    "train parrot": ["doc2", "doc3", "doc1", "doc4"],
}


def main() -> None:
    queries = list(FEEDBACK)
    # The vote is the ground-truth Document's score (relevance_field="score", the default).
    gold = [[Document(id=d, score=vote) for d, vote in FEEDBACK[q].items()] for q in queries]
    retrieved = [[Document(id=d, content=CORPUS[d]) for d in RETURNED[q]] for q in queries]

    with_threshold = IRMetricsEvaluator(k_values=[2], relevance_threshold=0.5)
    out = with_threshold.run(gold, retrieved, query_ids=queries)
    print("relevance_threshold=0.5 (votes 1.0 and 0.5 are relevant):")
    for name, value in out["means"].items():
        print(f"  {name:9} {value:<8} per query {[round(v, 4) for v in out['individual_scores'][name]]}")

    # BEIR's own rules on the same votes: P/MAP/Recall need relevance >= 1, MRR/R_cap take > 0.
    beir_rules = IRMetricsEvaluator(k_values=[2]).run(gold, retrieved, query_ids=queries)
    print("BEIR's rules (no threshold):")
    print(" ", beir_rules["means"])


if __name__ == "__main__":
    main()
