"""Click models on a real ranking and real judgments: the TREC 2003 Robust run uic0301 (100 topics) and the
graded Robust03 qrels as the true relevance (shared data folder; skipped where it is absent).

Each impression shows one topic's top 10 of the run with adjacent pairs swapped at random (so a document
is seen at several ranks, as in a log of several rankers); clicks are drawn from a model whose
attractiveness (and satisfaction) follow the graded label, unjudged as 0."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from haystack_irmetrics import evaluate
from haystack_irmetrics.clicks import compare_models, fit_model
from haystack_irmetrics.clicks.simulate import model_with, sessions_from_rankings, simulate, true_values
from haystack_irmetrics.io import read_qrels
from haystack_irmetrics.io.trec import read_trec_run

ATTRACT = {0: 0.05, 1: 0.45, 2: 0.85}
SATISFY = {0: 0.1, 1: 0.4, 2: 0.8}


@pytest.fixture(scope="module")
def robust(data_dir):
    base = data_dir / "robust03"
    qrels = read_qrels(base / "robust03_cs_qrels.txt").data
    run = read_trec_run(base / "input.uic0301", fast=False).data
    ranked = {q: sorted(docs, key=lambda d: (-docs[d], d)) for q, docs in run.items() if q in qrels}
    return qrels, ranked


def label(qrels, q, d) -> int:
    return max(0, int(qrels[q].get(d, 0)))


def impressions(ranked, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    topics = sorted(ranked)
    shown = []
    for t in rng.integers(len(topics), size=n).tolist():
        docs = list(ranked[topics[t]][:10])
        for i in range(0, 9, 2):  # each adjacent pair swapped with probability 1/2
            if rng.random() < 0.5:
                docs[i], docs[i + 1] = docs[i + 1], docs[i]
        if rng.random() < 0.5:
            docs = docs[1:] + docs[:1]  # the top document also seen at rank 10
        shown.append((topics[t], docs))
    return sessions_from_rankings(shown)


def simulated(robust, name: str, n: int, **extra):
    qrels, ranked = robust
    s = impressions(ranked, n)
    model = model_with(name, s, attractiveness=lambda q, d: ATTRACT[label(qrels, q, d)], **extra)
    return simulate(model, s, seed=1)


def test_dbn_recovers_gamma_and_the_attractiveness_of_real_judged_documents(robust):
    qrels, _ = robust
    log = simulated(robust, "dbn", 20_000, continuation=0.85, satisfaction=lambda q, d: SATISFY[label(qrels, q, d)])
    fit = fit_model("dbn", log)
    s, m = fit.train, fit.model
    assert abs(m.gamma - 0.85) < 0.02
    imp = np.bincount(s.pairs[s.shown], minlength=s.n_pairs)
    err = np.abs(m.alpha - true_values(s, lambda q, d: ATTRACT[label(qrels, q, d)]))
    assert (err * imp).sum() / imp.sum() < 0.08


def test_pbm_examination_is_recovered_and_ubm_or_pbm_explains_a_pbm_log_best(robust):
    exam = 1 / np.arange(1, 11) ** 0.7
    log = simulated(robust, "pbm", 20_000, examination=exam)
    fit = fit_model("pbm", log)
    assert np.abs(fit.model.gamma / fit.model.gamma[0] - exam).max() < 0.05
    scores = compare_models(["ctr", "pbm", "dbn", "cascade"], log, seed=0)
    assert min(scores, key=lambda k: scores[k].perplexity) == "pbm"


def test_qrels_from_clicks_on_the_real_run_rank_systems_as_the_robust03_qrels_do(robust):
    qrels, ranked = robust
    log = simulated(robust, "dbn", 20_000, continuation=0.85, satisfaction=lambda q, d: SATISFY[label(qrels, q, d)])
    derived = fit_model("dbn", log).qrels(min_impressions=5)
    # five systems over the same judged top 10: the run, and four orders from good to bad
    rng = np.random.default_rng(3)
    systems = {"run": {q: docs[:10] for q, docs in ranked.items()}}
    systems["ideal"] = {q: sorted(docs[:10], key=lambda d: -label(qrels, q, d)) for q, docs in ranked.items()}
    systems["reversed"] = {q: docs[:10][::-1] for q, docs in ranked.items()}
    systems["worst"] = {q: sorted(docs[:10], key=lambda d: label(qrels, q, d)) for q, docs in ranked.items()}
    systems["shuffled"] = {q: list(rng.permutation(docs[:10])) for q, docs in ranked.items()}

    def scored(judgments):
        out = []
        for run in systems.values():
            as_scores = {q: {d: float(10 - r) for r, d in enumerate(docs)} for q, docs in run.items()}
            top10 = {q: {d: v for d, v in judgments.get(q, {}).items() if d in as_scores[q]} for q in as_scores}
            out.append(evaluate({q: j for q, j in top10.items() if j}, as_scores, [10]).means["NDCG@10"])
        return out

    truth = scored(qrels)
    tau = kendalltau(truth, scored(derived)).statistic
    assert tau == pytest.approx(1.0), (truth, scored(derived))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pbm", "ubm", "dcm", "dbn", "sdbn", "cascade"])
def test_at_200k_sessions_every_model_recovers_attractiveness_on_average(robust, name):
    qrels, _ = robust
    extra = {
        "pbm": {"examination": 1 / np.arange(1, 11) ** 0.7},
        "ubm": {"examination": np.tril(np.full((10, 10), 0.6)) + np.diag(np.full(10, 0.3))},
        "dcm": {"continuation": np.linspace(0.9, 0.5, 10)},
        "dbn": {"continuation": 0.85, "satisfaction": lambda q, d: SATISFY[label(qrels, q, d)]},
        "sdbn": {"satisfaction": lambda q, d: SATISFY[label(qrels, q, d)]},
        "cascade": {},
    }[name]
    log = simulated(robust, name, 200_000, **extra)
    fit = fit_model(name, log)
    s = fit.train
    imp = np.bincount(s.pairs[s.shown], minlength=s.n_pairs)
    alpha = fit.model.alpha
    if name in ("pbm", "ubm"):  # identified up to a scale: put rank 1's examination at its true value
        true_first = np.asarray(extra["examination"]).flat[0]
        alpha = alpha * fit.model.gamma.flat[0] / true_first
    err = np.abs(alpha - true_values(s, lambda q, d: ATTRACT[label(qrels, q, d)]))
    tolerance = {"pbm": 0.02, "ubm": 0.03, "dbn": 0.03}.get(name, 0.06)
    assert (err * imp).sum() / imp.sum() < tolerance
