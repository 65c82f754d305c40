"""Pooling on real data (``IRMETRICS_SHARED_DATA``; skipped without it).

* SciFact (BEIR) with five real lexical retrieval systems built here with bm25s (BM25 on title and abstract,
  BM25L, title only, the abstract's first 30 words, no stemming): the papers' qualitative result, Move-to-Front
  and MaxMean find more relevant documents than depth pooling at equal budgets.
* Robust03 (run uic0301 and its graded qrels): xinfAP with one stratum is trec_eval's infAP (pytrec_eval) on
  the same sample; over many seeded samples statAP's Horvitz-Thompson parts are unbiased (their mean within
  3 standard errors of the complete judgments' value; with pairs in one stratum weighed as independent draws
  instead, the sum of precisions misses by 13 standard errors). AP is their ratio, which is not unbiased:
  docs/pooling.md gives its measured bias.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from haystack_irmetrics.pooling import Stratified, estimate, pool_runs, simulate
from haystack_irmetrics.pooling.estimators import query_parts

SYSTEMS = {  # name: (field, bm25s method, parameters, stemmed)
    "bm25": ("both", "lucene", {"k1": 0.9, "b": 0.4}, True),
    "bm25l": ("both", "bm25l", {}, True),
    "title": ("title", "lucene", {}, True),
    "lead": ("lead", "lucene", {}, True),
    "nostem": ("both", "lucene", {}, False),
}


@pytest.fixture(scope="module")
def scifact(data_dir):
    bm25s = pytest.importorskip("bm25s")
    stemmer_module = pytest.importorskip("Stemmer")
    from haystack_irmetrics.io.beir_data import read_beir_corpus, read_beir_queries
    from haystack_irmetrics.io.trec import read_qrels

    folder = data_dir / "scifact"
    if not (folder / "corpus.jsonl").is_file():
        pytest.skip(f"SciFact not found under {data_dir}")
    corpus = read_beir_corpus(folder / "corpus.jsonl")
    queries = read_beir_queries(folder / "queries.jsonl")
    qrels = read_qrels(folder / "qrels" / "test.tsv").data
    ids = list(corpus)
    qids = [q for q in queries if q in qrels]
    stemmer = stemmer_module.Stemmer("english")

    def text(d, field):
        title, body = corpus[d].get("title") or "", corpus[d].get("text") or ""
        return {"both": f"{title} {body}", "title": title, "lead": " ".join(body.split()[:30])}[field]

    runs = []
    for field, method, params, stemmed in SYSTEMS.values():
        engine = bm25s.BM25(method=method, **params)
        tokens = bm25s.tokenize(
            [text(d, field) for d in ids], stopwords="en", stemmer=stemmer if stemmed else None, show_progress=False
        )
        engine.index(tokens, show_progress=False)
        asked = bm25s.tokenize(
            [queries[q] for q in qids], stopwords="en", stemmer=stemmer if stemmed else None, show_progress=False
        )
        found, scores = engine.retrieve(asked, k=100, show_progress=False)
        runs.append({q: {ids[int(j)]: float(s) for j, s in zip(found[i], scores[i])} for i, q in enumerate(qids)})
    return runs, qrels


def test_mtf_and_maxmean_find_more_relevant_documents_than_depth_pooling(scifact):
    runs, qrels = scifact
    budgets = [150, 300, 600]  # half a judgment, one and two per query (300 queries)
    out = simulate(runs, qrels, budgets)
    found = {s: [out["strategies"][s][str(b)]["relevant_found"] for b in budgets] for s in out["strategies"]}
    for b, i in zip(budgets, range(len(budgets))):
        assert found["mtf"][i] > found["depth"][i], (b, found)
        assert found["maxmean"][i] > found["depth"][i], (b, found)
    assert all(out["strategies"][s][str(b)]["judged"] == b for s in out["strategies"] for b in budgets)
    assert out["relevant_total"] == sum(v >= 1 for docs in qrels.values() for v in docs.values())


@pytest.fixture(scope="module")
def robust(data_dir):
    from haystack_irmetrics.io.trec import read_qrels, read_run

    folder = data_dir / "robust03"
    if not (folder / "input.uic0301").is_file():
        pytest.skip(f"Robust03 not found under {data_dir}")
    run = read_run(folder / "input.uic0301").data
    qrels = read_qrels(folder / "robust03_cs_qrels.txt").data
    qids = sorted(set(run) & set(qrels))[:20]
    run = {q: run[q] for q in qids}
    pooled = pool_runs([run], depth=100)
    # the complete judgments of the pool (the run's top 100): unjudged documents are not relevant
    full = {q: {d: float(qrels[q].get(d, 0)) for d in pooled.rankings[0][i]} for i, q in enumerate(pooled.qids)}
    return run, pooled, full


def test_xinfap_with_one_stratum_is_trec_evals_infap(robust):
    import pytrec_eval

    run, pooled, full = robust
    design = Stratified(pooled, budget=600, edges=(100,), seed=3).design
    sample = {q: {d: full[q][d] for d in s.sampled} for q, strata in design.strata.items() for s in strata}
    # trec_eval's qrels: the sampled labels, and -1 for the pool's unsampled documents
    trec = {
        q: {**{d: -1 for s in strata for d in s.docs}, **{d: int(v) for d, v in sample[q].items()}}
        for q, strata in design.strata.items()
    }
    ref = pytrec_eval.RelevanceEvaluator(trec, {"infAP"}).evaluate(run)
    ours = estimate([run], design, sample, estimator="xinfAP")["run1"].per_query
    assert ours == pytest.approx({q: v["infAP"] for q, v in ref.items()}, abs=1e-12)


def test_statap_parts_are_unbiased_over_many_samples(robust):
    run, pooled, full = robust
    whole = pool_runs([run])
    # the complete judgments' values: R and the sum of precisions at the relevant documents' ranks
    true_n = true_r = 0.0
    for i, q in enumerate(whole.qids):
        hits = 0
        for k, d in enumerate(whole.rankings[0][i], 1):
            if full[q].get(d, 0) >= 1:
                hits += 1
                true_n += hits / k
        true_r += sum(v >= 1 for v in full[q].values())
    n_hat, r_hat = [], []
    for seed in range(400):
        design = Stratified(pooled, budget=200, seed=seed).design  # a tenth of the pool, strata 1-10, 11-30, 31-100
        parts = [query_parts(design, q, whole.rankings[0][i], full[q], "statAP") for i, q in enumerate(whole.qids)]
        n_hat.append(sum(p[0] for p in parts))
        r_hat.append(sum(p[1] for p in parts))
    for values, truth in ((n_hat, true_n), (r_hat, true_r)):
        se = np.std(values, ddof=1) / math.sqrt(len(values))
        assert abs(np.mean(values) - truth) <= 3 * se, (np.mean(values), truth, se)
