"""Reference computations for differential tests: pytrec_eval-terrier and beir 2.2.0 themselves.

Nothing here reimplements a metric; it only calls the oracles and reshapes their output.
"""

from __future__ import annotations

import copy

import numpy as np
import pytrec_eval
from beir.retrieval.evaluation import EvaluateRetrieval

PYTREC_NAMES = {"NDCG": "ndcg_cut_{k}", "MAP": "map_cut_{k}", "Recall": "recall_{k}", "P": "P_{k}"}


def without_identical_ids(results: dict) -> dict:
    return {q: {d: s for d, s in docs.items() if d != q} for q, docs in results.items()}


def pytrec_per_query(qrels: dict, results: dict, k_values: list[int], relevance_level: int = 1) -> dict:
    """``{family@k: {qid: value}}`` for NDCG/MAP/Recall/P from pytrec_eval, plus num_rel."""
    ks = ",".join(map(str, k_values))
    measures = {f"map_cut.{ks}", f"ndcg_cut.{ks}", f"recall.{ks}", f"P.{ks}", "num_rel"}
    ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=relevance_level)
    scores = ev.evaluate(results)
    out: dict[str, dict[str, float]] = {}
    for family, pattern in PYTREC_NAMES.items():
        for k in k_values:
            out[f"{family}@{k}"] = {q: v[pattern.format(k=k)] for q, v in scores.items()}
    out["num_rel"] = {q: v["num_rel"] for q, v in scores.items()}
    return out


def trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's order: float32 score descending, ties by doc id descending."""
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as trec_eval's (float) cast
        return sorted(docs, key=lambda d: (np.float32(docs[d]), d), reverse=True)


def pytrec_rr_at(qrels: dict, results: dict, k: int, relevance_level: int = 1) -> dict[str, float]:
    """trec recip_rank cut at k: pytrec_eval's recip_rank on each run truncated to its top k."""
    truncated = {}
    for q, docs in results.items():
        top = trec_order(docs)[:k]
        # Keep the relative order by giving strictly decreasing scores.
        truncated[q] = {d: float(k - i) for i, d in enumerate(top)}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=relevance_level)
    return {q: v["recip_rank"] for q, v in ev.evaluate(truncated).items()}


def beir_means(qrels: dict, results: dict, k_values: list[int]) -> dict[str, float] | None:
    """BEIR's six means, or None where BEIR itself crashes on this input."""
    try:
        ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(
            copy.deepcopy(qrels), copy.deepcopy(results), k_values
        )
        # BEIR's MRR/R_cap run on the results evaluate() trimmed in place.
        trimmed = without_identical_ids(results)
        mrr = EvaluateRetrieval.evaluate_custom(qrels, trimmed, k_values, "mrr")
        r_cap = EvaluateRetrieval.evaluate_custom(qrels, trimmed, k_values, "r_cap")
    except (ZeroDivisionError, KeyError):
        return None
    return {**ndcg, **_map, **recall, **precision, **mrr, **r_cap}
