"""IPS, SNIPS and DR estimates of a new ranking's expected clicks from the log of a randomised ranker:
each lands on the exact expected clicks the simulation's PBM gives that ranking."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from haystack_irmetrics.clicks import ClickLog
from haystack_irmetrics.clicks.counterfactual import estimate_clicks
from haystack_irmetrics.clicks.simulate import model_with, sessions_from_rankings, simulate
from haystack_irmetrics.errors import ClickModelError

EXAM = np.array([1.0, 0.7, 0.5, 0.35, 0.25])


def uniform_log(n: int, seed: int = 0):
    """Each impression: one of 30 queries, its 5 candidates in a uniformly random order (propensity 1/5)."""
    rng = np.random.default_rng(seed)
    attract = {(f"q{q}", f"d{q}-{i}"): float(a) for q in range(30) for i, a in enumerate(rng.uniform(0.05, 0.9, 5))}
    shown = []
    for q in rng.integers(30, size=n).tolist():
        shown.append((f"q{q}", [f"d{q}-{i}" for i in rng.permutation(5)]))
    s = sessions_from_rankings(shown)
    truth = model_with("pbm", s, attractiveness=lambda q, d: attract[q, d], examination=EXAM)
    logged = simulate(truth, s, seed=seed + 1)
    return replace(logged, propensity=np.full(logged.pairs.shape, 0.2)), attract


def expected_clicks(ranking, attract, queries):
    """The exact expected clicks per impression of ``ranking`` under the PBM, queries drawn as logged."""
    per_query = {q: sum(attract[q, d] * EXAM[r] for r, d in enumerate(docs)) for q, docs in ranking.items()}
    return float(np.mean([per_query[q] for q in queries]))


def test_ips_snips_and_dr_estimate_the_exact_expected_clicks_of_a_new_ranking():
    log, attract = uniform_log(20_000)
    best = {
        f"q{q}": sorted((d for qq, d in attract if qq == f"q{q}"), key=lambda d: -attract[f"q{q}", d])
        for q in range(30)
    }
    queries = log.query_names[log.query].astype(str).tolist()
    truth = expected_clicks(best, attract, queries)
    got = estimate_clicks(log, best, k=5, n_resamples=1000)
    assert list(got) == ["ips", "snips", "dr"]
    for name, e in got.items():
        assert abs(e.value - truth) < 0.03 * truth, (name, e, truth)
        assert e.ci_low < truth < e.ci_high, (name, e, truth)
    assert got["dr"].ci_high - got["dr"].ci_low < got["ips"].ci_high - got["ips"].ci_low  # the model helps


def test_a_worse_ranking_is_estimated_worse_and_clipping_only_lowers_ips():
    log, attract = uniform_log(5_000)
    worst = {
        f"q{q}": sorted((d for qq, d in attract if qq == f"q{q}"), key=lambda d: attract[f"q{q}", d]) for q in range(30)
    }
    best = {q: docs[::-1] for q, docs in worst.items()}
    assert (
        estimate_clicks(log, worst, k=5, n_resamples=200)["ips"].value
        < estimate_clicks(log, best, k=5, n_resamples=200)["ips"].value
    )
    plain = estimate_clicks(log, best, k=5, n_resamples=200)["ips"].value
    assert estimate_clicks(log, best, k=5, clip=3.0, n_resamples=200)["ips"].value < plain


def test_a_query_the_new_ranking_lacks_counts_zero_clicks():
    log, _ = uniform_log(2_000)
    got = estimate_clicks(log, {}, k=5, n_resamples=200)
    assert got["ips"].value == 0.0 and got["snips"].value == 0.0 and got["dr"].value == 0.0


def test_a_log_without_propensities_or_a_bad_k_is_a_typed_error():
    rows = [{"session": "s", "query_id": "q", "doc_id": "d", "position": 1, "click": 1}]
    with pytest.raises(ClickModelError, match="no propensity column"):
        estimate_clicks(ClickLog(rows).sessions(), {"q": ["d"]})
    log, _ = uniform_log(50)
    with pytest.raises(ClickModelError, match="k must be"):
        estimate_clicks(log, {}, k=0)
    with pytest.raises(ClickModelError, match="clip must be"):
        estimate_clicks(log, {}, clip=-1)


def test_ips_dcg_of_a_run_estimates_its_exact_expected_value_with_examination_propensities():
    from haystack_irmetrics.clicks.counterfactual import ips_measure

    log, attract = uniform_log(20_000, seed=4)
    log = replace(log, propensity=np.broadcast_to(EXAM, log.pairs.shape).copy())  # examination by position
    best = {
        f"q{q}": sorted((d for qq, d in attract if qq == f"q{q}"), key=lambda d: -attract[f"q{q}", d])
        for q in range(30)
    }
    queries = log.query_names[log.query].astype(str).tolist()
    per_query = {q: sum(attract[q, d] / np.log2(2 + r) for r, d in enumerate(docs)) for q, docs in best.items()}
    truth = float(np.mean([per_query[q] for q in queries]))
    for propensities in ("log", "pbm"):
        got = ips_measure(log, best, k=5, propensities=propensities, n_resamples=1000)
        assert abs(got["ips"].value - truth) < 0.03 * truth, (propensities, got["ips"], truth)
        assert got["ips"].ci_low < truth < got["ips"].ci_high
        assert got["clipped"].value <= got["ips"].value + 1e-12
        assert 0 < got["snips"].value <= 1
    worst = {q: docs[::-1] for q, docs in best.items()}
    assert (
        ips_measure(log, worst, k=3, n_resamples=200)["ips"].value
        < ips_measure(log, best, k=3, n_resamples=200)["ips"].value
    )
    with pytest.raises(ClickModelError, match="measure must be"):
        ips_measure(log, best, measure="ndcg")
