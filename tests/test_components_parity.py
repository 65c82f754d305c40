"""Parity on seeded random BM25 pipelines: component == core == pytrec_eval per query (and == BEIR's means).

Each seed builds a random corpus (every odd seed indexes it as 1-3 chunks per document, matched on
``meta.corpus_id``), runs a Haystack ``InMemoryBM25Retriever`` pipeline for random queries (a small
vocabulary, so BM25 scores tie often) and draws random graded judgments (0-3, some queries binary,
some with no ground truth). The components' per-query values must equal
:func:`haystack_irmetrics.evaluate` on the equivalent dicts exactly, and pytrec_eval-terrier's
per-query values within 1e-12 (NDCG, MAP, Recall, P directly; MRR as ``recip_rank`` on the run cut
at k; R_cap from pytrec's hits and ``num_rel``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_irmetrics import evaluate
from haystack_irmetrics.components import (
    IRMetricsEvaluator,
    MAPEvaluator,
    MRREvaluator,
    NDCGEvaluator,
    PrecisionEvaluator,
    RCapEvaluator,
    RecallEvaluator,
)
from tests.oracles import beir_means, pytrec_per_query, pytrec_rr_at

# Both paths: the compiled scan (ranked lists read and indexed in C) and pure Python.
pytestmark = pytest.mark.usefixtures("scan_path")

SEEDS = range(24)
KS = [1, 3, 5, 10, 20]
TOL = 1e-12
VOCAB = ["cat", "dog", "bird", "fish", "lion", "wolf", "bear", "deer", "frog", "swan", "crow", "mole"]
SINGLE = {
    "NDCG": NDCGEvaluator,
    "MAP": MAPEvaluator,
    "P": PrecisionEvaluator,
    "Recall": RecallEvaluator,
    "R_cap": RCapEvaluator,
    "MRR": MRREvaluator,
}


@dataclass
class Case:
    query_ids: list[str]
    gold: list[list[Document]]
    retrieved: list[list[Document]]
    field: str  # document_comparison_field

    def key(self, doc: Document) -> str:
        return doc.meta["corpus_id"] if self.field == "meta.corpus_id" else doc.id


def random_pipeline_outputs(seed: int) -> Case:
    rng = np.random.default_rng(seed)
    chunked = seed % 2 == 1
    n_docs = int(rng.integers(15, 50))
    docs = []
    for i in range(n_docs):
        for j in range(int(rng.integers(1, 4)) if chunked else 1):
            words = rng.choice(VOCAB, size=int(rng.integers(2, 9)))
            doc_id = f"c{i}#{j}" if chunked else f"c{i}"
            docs.append(Document(id=doc_id, content=" ".join(words), meta={"corpus_id": f"c{i}"}))
    store = InMemoryDocumentStore(shared=False)
    store.write_documents(docs)
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(store, top_k=int(rng.integers(3, 30))))

    n_queries = int(rng.integers(4, 14))
    query_ids = [f"q{i}" for i in range(n_queries)]
    gold, retrieved = [], []
    for _ in query_ids:
        text = " ".join(rng.choice(VOCAB, size=int(rng.integers(1, 4))))
        found = pipe.run({"retriever": {"query": text}})["retriever"]["documents"]
        retrieved.append(found)
        # Judge some retrieved documents and some others; 1 query in 6 has no ground truth.
        pool = {d.meta["corpus_id"] for d in found[:8]} | {f"c{i}" for i in rng.integers(0, n_docs, size=3)}
        pool = sorted(pool)
        n_gold = 0 if rng.random() < 1 / 6 else int(rng.integers(1, len(pool) + 1))
        picked = rng.choice(pool, size=n_gold, replace=False) if n_gold else []
        binary = rng.random() < 0.3
        gold.append(
            [Document(id=c, score=None if binary else int(rng.integers(0, 4)), meta={"corpus_id": c}) for c in picked]
        )
    return Case(query_ids, gold, retrieved, "meta.corpus_id" if chunked else "id")


@pytest.fixture(scope="module")
def cases() -> dict[int, Case]:
    return {seed: random_pipeline_outputs(seed) for seed in SEEDS}


def oracle_dicts(case: Case, rank_by: str) -> tuple[dict, dict]:
    """The judgments and run as BEIR dicts, built straight from the documents (chunks: first / best)."""
    qrels = {
        q: {case.key(d): (1 if d.score is None else d.score) for d in gold}
        for q, gold in zip(case.query_ids, case.gold, strict=True)
    }
    results = {}
    for q, found in zip(case.query_ids, case.retrieved, strict=True):
        run: dict[str, float] = {}
        for d in found:
            k = case.key(d)
            run[k] = max(run.get(k, -math.inf), d.score) if rank_by == "score" else run.get(k, 0.0)
        if rank_by == "order":
            run = {k: float(len(run) - i) for i, k in enumerate(run)}
        results[q] = run
    return qrels, results


def stable_run(results: dict) -> dict:
    """Ranks as Python's stable sort by float64 score (BEIR's MRR / R_cap), as distinct scores."""
    out = {}
    for q, run in results.items():
        ranked = sorted(run, key=run.__getitem__, reverse=True)
        out[q] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return out


def pytrec_expected(qrels: dict, results: dict, preset: str) -> dict[str, dict[str, float]]:
    """Per-query values of all six families from pytrec_eval on the judged queries."""
    judged = {q: j for q, j in qrels.items() if j}
    expected = pytrec_per_query(judged, results, KS)
    # MRR and R_cap: BEIR ranks them with stable ties, trec_eval by doc id; pytrec sees that order.
    custom_run = stable_run(results) if preset == "beir" else results
    custom = pytrec_per_query(judged, custom_run, KS)
    for k in KS:
        expected[f"MRR@{k}"] = pytrec_rr_at(judged, custom_run, k)
        expected[f"R_cap@{k}"] = {
            q: (round(custom[f"P@{k}"][q] * k) / min(n_rel, k) if n_rel else 0.0)
            for q, n_rel in custom["num_rel"].items()
        }
    return expected


@pytest.mark.parametrize("preset", ["beir", "trec"])
@pytest.mark.parametrize("rank_by", ["order", "score"])
def test_components_equal_core_and_pytrec_eval_per_query_on_random_bm25_pipeline_outputs(cases, rank_by, preset):
    compared = 0
    worst = 0.0
    for seed, case in cases.items():
        options = {"document_comparison_field": case.field, "rank_by": rank_by, "preset": preset}
        out = IRMetricsEvaluator(k_values=KS, **options).run(case.gold, case.retrieved, query_ids=case.query_ids)
        qrels, results = oracle_dicts(case, rank_by)
        core = evaluate(qrels, results, KS, preset=preset, ties="stable" if rank_by == "order" else None)
        assert out["per_query"] == core.per_query, seed
        assert out["means"] == core.means, seed

        expected = pytrec_expected(qrels, results, preset)
        for name, values in expected.items():
            if name == "num_rel":
                continue
            ours = out["per_query"][name]
            extra = set(ours) - set(values)
            # Only BEIR's MRR / R_cap also average the queries without ground truth, as 0.
            assert all(not qrels[q] and ours[q] == 0.0 for q in extra), (seed, name, extra)
            assert (preset == "beir" and name[:3] in ("MRR", "R_c")) or not extra, (seed, name)
            assert set(values) <= set(ours), (seed, name)
            for q, v in values.items():
                worst = max(worst, abs(ours[q] - v))
                compared += 1
        assert worst <= TOL, (seed, worst)

        # The single-metric components give the same per-query values as the multi-metric one.
        for family, cls in SINGLE.items():
            single = cls(k=10, **options).run(case.gold, case.retrieved, query_ids=case.query_ids)
            assert single["per_query"] == out["per_query"][f"{family}@10"], (seed, family)
            assert single["individual_scores"] == pytest.approx(out["individual_scores"][f"{family}@10"], nan_ok=True)
    assert compared > 4_000


def beir_safe(case: Case) -> Case:
    """The queries BEIR can evaluate without crashing: those with a relevant ground-truth document."""
    keep = [i for i, gold in enumerate(case.gold) if any(d.score is None or d.score > 0 for d in gold)]
    return Case(
        [case.query_ids[i] for i in keep], [case.gold[i] for i in keep], [case.retrieved[i] for i in keep], case.field
    )


@pytest.mark.parametrize("rank_by", ["order", "score"])
def test_beir_preset_means_equal_beir_evaluate_retrieval_on_the_same_ranking(cases, rank_by):
    checked = 0
    for seed, full in cases.items():
        case = beir_safe(full)
        if not case.query_ids:
            continue
        qrels, results = oracle_dicts(case, rank_by)
        expected = beir_means(qrels, results, KS)
        assert expected is not None, seed
        out = IRMetricsEvaluator(k_values=KS, document_comparison_field=case.field, rank_by=rank_by).run(
            case.gold, case.retrieved, query_ids=case.query_ids
        )
        assert out["means"] == expected, seed
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("rank_by", ["order", "score"])
def test_float_labels_with_threshold_equal_core_where_pytrec_eval_refuses_them(cases, rank_by):
    for seed, case in cases.items():
        graded = [[Document(id=d.id, score=(d.score or 3) / 3, meta=d.meta) for d in gold] for gold in case.gold]
        graded_case = Case(case.query_ids, graded, case.retrieved, case.field)
        options = {"document_comparison_field": case.field, "rank_by": rank_by, "relevance_threshold": 0.5}
        out = IRMetricsEvaluator(k_values=KS, **options).run(graded, case.retrieved, query_ids=case.query_ids)
        qrels, results = oracle_dicts(graded_case, rank_by)
        core = evaluate(qrels, results, KS, relevance_threshold=0.5, ties="stable" if rank_by == "order" else None)
        assert out["per_query"] == core.per_query, seed
