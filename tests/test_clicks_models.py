"""Click models: the vectorised EM equals a per-session EM (tests/click_oracle.py), and every model recovers
the parameters a log was simulated with over rankings of the shipped sample (qrels as the true relevance)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

import haystack_irmetrics
from haystack_irmetrics import evaluate
from haystack_irmetrics.clicks import ClickLog, compare_models, fit_model, make_model, score
from haystack_irmetrics.clicks.simulate import model_with, sessions_from_rankings, simulate, true_values
from haystack_irmetrics.errors import ClickModelError
from tests.click_oracle import dbn_em, pbm_em

SAMPLE_QRELS = Path(haystack_irmetrics.__file__).parent / "datasets" / "sample" / "qrels" / "test.tsv"


def random_log(seed: int, n_sessions: int = 200):
    """Sessions of 1-5 results over few queries and documents (each shown at many ranks), clicks at random."""
    rng = np.random.default_rng(seed)
    rows, sessions = [], []
    for s in range(n_sessions):
        q = f"q{rng.integers(3)}"
        n = int(rng.integers(1, 6))
        docs = [str(d) for d in rng.choice([f"d{i}" for i in range(7)], size=n, replace=False)]
        clicks = [int(x) for x in rng.random(n) < rng.choice([0.1, 0.35, 0.7])]
        sessions.append((q, docs, clicks))
        rows += [
            {"session": f"s{s}", "query_id": q, "doc_id": d, "position": r + 1, "click": c}
            for r, (d, c) in enumerate(zip(docs, clicks, strict=True))
        ]
    return ClickLog(rows).sessions(), sessions


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pbm_em_equals_a_per_session_em_to_1e_12(seed):
    s, plain = random_log(seed)
    model = make_model("pbm", max_iter=25, tol=0, accelerate=False).fit(s)
    alpha, gamma = pbm_em(plain, 25)
    queries, docs = s.pair_names()
    assert max(abs(model.alpha[i] - alpha[q, d]) for i, (q, d) in enumerate(zip(queries, docs))) < 1e-12
    assert max(abs(model.gamma[r] - g) for r, g in gamma.items()) < 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dbn_em_equals_an_em_that_enumerates_each_sessions_hidden_states_to_1e_12(seed):
    s, plain = random_log(seed)
    model = make_model("dbn", max_iter=25, tol=0, accelerate=False).fit(s)
    alpha, sigma, gamma = dbn_em(plain, 25)
    queries, docs = s.pair_names()
    assert max(abs(model.alpha[i] - alpha[q, d]) for i, (q, d) in enumerate(zip(queries, docs))) < 1e-12
    assert max(abs(model.sigma[i] - sigma[q, d]) for i, (q, d) in enumerate(zip(queries, docs))) < 1e-12
    assert abs(model.gamma - gamma) < 1e-12


def test_closed_forms_of_cascade_dcm_sdbn_and_ctr_on_a_log_counted_by_hand():
    rows = []
    for i, (clicks) in enumerate([(1, 0, 1), (0, 1, 0), (0, 0, 0), (1, 0, 0)]):
        rows += [
            {"session": f"s{i}", "query_id": "q", "doc_id": d, "position": r + 1, "click": c}
            for r, (d, c) in enumerate(zip(["a", "b", "c"], clicks, strict=True))
        ]
    s = ClickLog(rows).sessions()
    by_doc = dict(zip(s.pair_names()[1], range(3), strict=True))

    def alpha(name):
        m = make_model(name).fit(s)
        return {d: float(m.alpha[i]) for d, i in by_doc.items()}

    assert alpha("ctr") == {"a": 0.5, "b": 0.25, "c": 0.25}
    # Cascade: ranks up to the first click (all three without one)
    assert alpha("cascade") == {"a": 2 / 4, "b": 1 / 2, "c": 0 / 1}
    # DCM and SDBN: ranks up to the last click (all without one)
    assert alpha("dcm") == {"a": 2 / 4, "b": 1 / 3, "c": 1 / 2}
    dcm = make_model("dcm").fit(s)
    assert dcm.lam.tolist() == [1 - 1 / 2, 1 - 1 / 1, 1 - 1 / 1]  # 1 - (last clicks at r) / (clicks at r)
    sdbn = make_model("sdbn").fit(s)
    assert [float(sdbn.sigma[by_doc[d]]) for d in "abc"] == [1 / 2, 1.0, 1.0]


def test_perplexity_of_a_global_ctr_is_the_binary_entropy_of_its_rate():
    s, _ = random_log(3, 400)
    m = make_model("gctr").fit(s)
    held = score(m, s)
    p = m.rho
    clicks = s.clicks[s.shown]
    bits = -(clicks * np.log2(p) + (~clicks) * np.log2(1 - p)).mean()
    assert held.perplexity_at["1"] > 1
    per_rank = [2 ** -(np.where(s.clicks[:, r], np.log2(p), np.log2(1 - p))[s.shown[:, r]].mean()) for r in range(5)]
    assert held.perplexity == pytest.approx(np.mean(per_rank), abs=1e-12)
    assert held.log_likelihood == pytest.approx(-bits * np.log(2) * s.shown.sum() / s.n_sessions, rel=1e-12)


# -- simulation over the shipped sample ------------------------------------------------------------


def sample_qrels() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in SAMPLE_QRELS.read_text().splitlines()[1:]:
        q, d, label = line.split("\t")
        out.setdefault(q, {})[d] = int(label)
    return out


QRELS = sample_qrels()
NOISE = (0.3, 0.8, 1.5, 3.0)


def sample_runs() -> list[dict[str, list[str]]]:
    """Four rankers of the sample's judged documents, better to worse: label + seeded noise of growing size."""
    rng = np.random.default_rng(7)
    runs = []
    for noise in NOISE:
        run = {}
        for q in sorted(QRELS):
            scores = {d: QRELS[q][d] + noise * rng.standard_normal() for d in sorted(QRELS[q])}
            run[q] = sorted(scores, key=lambda d: -scores[d])[:10]
        runs.append(run)
    return runs


RUNS = sample_runs()
ATTRACT = {0: 0.1, 1: 0.5, 2: 0.85}
SATISFY = {0: 0.1, 1: 0.4, 2: 0.8}


def attractiveness(q, d):
    return ATTRACT[QRELS[q][d]]


def satisfaction(q, d):
    return SATISFY[QRELS[q][d]]


def shown_sessions(n: int, seed: int = 1):
    """``n`` impressions: a query and one of the four rankers drawn at random for each."""
    rng = np.random.default_rng(seed)
    queries = sorted(QRELS)
    picks = zip(rng.integers(len(queries), size=n).tolist(), rng.integers(len(RUNS), size=n).tolist(), strict=True)
    return sessions_from_rankings([(queries[q], RUNS[k][queries[q]]) for q, k in picks])


def truth(name: str, n_ranks: int) -> dict:
    ranks = np.arange(1, n_ranks + 1)
    ubm = np.array([[1 / np.sqrt(r) if p == 0 else 1 / (1 + 0.3 * (r - p)) for p in range(n_ranks)] for r in ranks])
    return {
        "pbm": {"examination": 1 / np.sqrt(ranks)},
        "ubm": {"examination": np.tril(ubm)},
        "dcm": {"continuation": np.linspace(0.8, 0.4, n_ranks)},
        "dbn": {"continuation": 0.9, "satisfaction": satisfaction},
        "sdbn": {"satisfaction": satisfaction},
        "cascade": {},
    }[name]


def simulated(name: str, n: int, seed: int = 3):
    shown = shown_sessions(n)
    return simulate(model_with(name, shown, attractiveness=attractiveness, **truth(name, shown.n_ranks)), shown, seed)


# (model, sessions, tolerance on the impression-weighted mean |attractiveness error|, on the rank parameters)
RECOVERY = [
    ("pbm", 20_000, 0.04, 0.03),
    ("ubm", 20_000, 0.07, None),
    ("dbn", 20_000, 0.07, 0.02),
    # the cascade family learns attractiveness only above the first (last) click: lower ranks, fewer looks
    ("cascade", 20_000, 0.1, None),
    ("sdbn", 20_000, 0.1, None),
]


@pytest.mark.parametrize("name,n,tol_alpha,tol_rank", RECOVERY, ids=[r[0] for r in RECOVERY])
def test_each_model_recovers_the_parameters_it_was_simulated_with(name, n, tol_alpha, tol_rank):
    log = simulated(name, n)
    fit = fit_model(name, log)
    m, s = fit.model, fit.train
    imp = np.bincount(s.pairs[s.shown], minlength=s.n_pairs)
    err = np.abs(m.alpha - true_values(s, attractiveness))
    assert (err * imp).sum() / imp.sum() < tol_alpha
    if name == "pbm":  # identified up to a scale: examination relative to rank 1
        true = truth("pbm", s.n_ranks)["examination"]
        assert np.abs(m.gamma / m.gamma[0] - true / true[0]).max() < tol_rank
    if name == "dbn":
        assert abs(m.gamma - 0.9) < tol_rank
    if name in ("dbn", "sdbn"):
        clicked = np.bincount(s.pairs[s.clicks], minlength=s.n_pairs)
        sig_err = np.abs(m.sigma - true_values(s, satisfaction))[clicked >= 100]
        assert sig_err.mean() < 0.06


@pytest.mark.parametrize("name", ["ubm", "dbn"])
def test_the_model_that_generated_a_log_has_the_best_held_out_perplexity(name):
    log = simulated(name, 20_000)
    scores = compare_models(["gctr", "rctr", "ctr", "pbm", "cascade", "dcm", "ubm", "dbn", "sdbn"], log, seed=0)
    best = min(scores, key=lambda k: scores[k].perplexity)
    assert best == name, {k: round(v.perplexity, 5) for k, v in scores.items()}


@pytest.mark.parametrize("name", ["pbm", "cascade", "sdbn"])  # inside UBM, DCM and DBN
def test_a_nested_generator_is_within_half_a_percent_of_the_best_perplexity(name):
    log = simulated(name, 20_000)
    scores = compare_models(["gctr", "rctr", "ctr", "pbm", "cascade", "dcm", "ubm", "dbn", "sdbn"], log, seed=0)
    best = min(v.perplexity for v in scores.values())
    assert scores[name].perplexity <= best * 1.005
    assert scores[name].perplexity < scores["gctr"].perplexity


@pytest.mark.parametrize("name", ["pbm", "dbn"])
def test_click_derived_qrels_rank_the_runs_as_the_true_qrels_do(name):
    fit = fit_model(name, simulated(name, 20_000))
    derived = fit.qrels(min_impressions=10)
    runs = {
        f"r{i}": {q: {d: float(10 - r) for r, d in enumerate(docs)} for q, docs in run.items()}
        for i, run in enumerate(RUNS)
    }
    true_scores = [evaluate(QRELS, run, [10]).means["NDCG@10"] for run in runs.values()]
    click_scores = [evaluate(derived, run, [10]).means["NDCG@10"] for run in runs.values()]
    tau = kendalltau(true_scores, click_scores).statistic
    assert tau == pytest.approx(1.0), (true_scores, click_scores)


def test_held_out_sessions_of_another_log_are_scored_over_the_fitted_pairs_and_new_pairs_take_the_default():
    train, _ = random_log(0)
    rows = [
        {"session": "t1", "query_id": "q0", "doc_id": "d1", "position": 1, "click": 1},
        {"session": "t1", "query_id": "q0", "doc_id": "never-seen", "position": 2, "click": 0},
    ]
    test = ClickLog(rows).sessions()
    fit = fit_model("pbm", train, test=test)
    aligned = test.aligned_to(train)
    cond, _ = fit.model.probabilities(aligned)
    assert cond[0, 1] == pytest.approx(0.5 * fit.model.gamma[1])
    assert fit.test is not None and fit.test.sessions == 1


def test_unknown_model_bad_fraction_and_both_test_options_are_typed_errors():
    s, _ = random_log(0)
    with pytest.raises(ClickModelError, match="unknown click model"):
        make_model("pyclick")
    with pytest.raises(ClickModelError, match="test fraction"):
        fit_model("pbm", s, test_fraction=1.5)
    with pytest.raises(ClickModelError, match="not both"):
        fit_model("pbm", s, test=s, test_fraction=0.2)
    with pytest.raises(ClickModelError, match="max_iter"):
        make_model("dbn", max_iter=0)


@st.composite
def click_logs(draw):
    """Sessions of 1-4 results over 2 queries and 5 documents (many repeats, all-click and no-click sessions)."""
    sessions = []
    for _ in range(draw(st.integers(1, 25))):
        q = draw(st.sampled_from(["q1", "q2"]))
        docs = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1, max_size=4, unique=True))
        clicks = draw(st.lists(st.booleans(), min_size=len(docs), max_size=len(docs)))
        sessions.append((q, docs, [int(c) for c in clicks]))
    return sessions


@settings(max_examples=40, deadline=None)
@given(click_logs())
def test_pbm_and_dbn_equal_the_per_session_em_on_any_small_log(plain):
    rows = [
        {"session": f"s{i}", "query_id": q, "doc_id": d, "position": r + 1, "click": c}
        for i, (q, docs, clicks) in enumerate(plain)
        for r, (d, c) in enumerate(zip(docs, clicks, strict=True))
    ]
    s = ClickLog(rows).sessions()
    queries, docs = s.pair_names()
    pbm = make_model("pbm", max_iter=8, tol=0, accelerate=False).fit(s)
    alpha, gamma = pbm_em(plain, 8)
    assert max(abs(pbm.alpha[i] - alpha[q, d]) for i, (q, d) in enumerate(zip(queries, docs))) < 1e-12
    assert max(abs(pbm.gamma[r] - g) for r, g in gamma.items()) < 1e-12
    dbn = make_model("dbn", max_iter=8, tol=0, accelerate=False).fit(s)
    alpha, sigma, gamma = dbn_em(plain, 8)
    assert max(abs(dbn.alpha[i] - alpha[q, d]) for i, (q, d) in enumerate(zip(queries, docs))) < 1e-12
    assert max(abs(dbn.sigma[i] - sigma[q, d]) for i, (q, d) in enumerate(zip(queries, docs))) < 1e-12
    assert abs(dbn.gamma - gamma) < 1e-12
