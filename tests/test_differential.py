"""Per-query values vs pytrec_eval-terrier and means vs beir 2.2.0, on random tie-heavy inputs."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from tests import strategies as S
from tests.oracles import beir_means, pytrec_per_query, pytrec_rr_at, without_identical_ids

# Every test here runs on both dict scans: the compiled one and the pure-Python one.
pytestmark = pytest.mark.usefixtures("scan_path")

TOL = 1e-12


def _scored(qrels, results):
    return [q for q in results if qrels.get(q)]


@given(S.qrels(), S.runs(), S.k_values)
def test_beir_preset_per_query_equals_pytrec_eval(qrels, results, ks):
    assume(_scored(qrels, results))
    before = copy.deepcopy(results)
    res = evaluate(qrels, results, ks, preset="beir")
    assert results == before, "evaluate() modified the caller's results"
    oracle = pytrec_per_query(qrels, without_identical_ids(results), ks)
    for family in ("NDCG", "MAP", "Recall", "P"):
        for k in ks:
            name = f"{family}@{k}"
            assert res.per_query[name].keys() == oracle[name].keys()
            for q, v in oracle[name].items():
                assert abs(res.per_query[name][q] - v) <= TOL, (name, q, res.per_query[name][q], v)


@given(S.beir_safe(), S.k_values)
def test_beir_preset_means_equal_beir_evaluate_exactly(case, ks):
    qrels, results = case
    expected = beir_means(qrels, results, ks)
    # beir_safe() avoids BEIR's own crashes, except a query whose only positive doc is its own id.
    assume(expected is not None)
    res = evaluate(qrels, results, ks, preset="beir")
    assert res.means == expected


@given(S.qrels(), S.runs(), S.k_values, st.sampled_from([1, 2]))
def test_trec_preset_all_six_per_query_equal_pytrec_eval(qrels, results, ks, level):
    assume(_scored(qrels, results))
    res = evaluate(qrels, results, ks, preset="trec", relevance_threshold=level)
    oracle = pytrec_per_query(qrels, results, ks, relevance_level=level)
    for family in ("NDCG", "MAP", "Recall", "P"):
        for k in ks:
            name = f"{family}@{k}"
            assert res.per_query[name] == oracle[name], name  # bit for bit
    for k in ks:
        rr = pytrec_rr_at(qrels, results, k, relevance_level=level)
        assert res.per_query[f"MRR@{k}"] == rr
        for q, v in res.per_query[f"R_cap@{k}"].items():
            n_rel = oracle["num_rel"][q]
            hits = round(oracle[f"P@{k}"][q] * k)
            assert v == (hits / min(n_rel, k) if n_rel else 0.0)


@given(S.qrels(), S.runs(), S.k_values)
def test_trec_preset_raw_means_are_sequential_means_of_pytrec_values(qrels, results, ks):
    assume(_scored(qrels, results))
    res = evaluate(qrels, results, ks, preset="trec")
    oracle = pytrec_per_query(qrels, results, ks)
    for k in ks:
        values = list(oracle[f"NDCG@{k}"].values())
        total = 0.0
        for v in values:
            total += v
        assert res.raw_means[f"NDCG@{k}"] == total / len(values)


def _seeded_case(seed: int, n_queries: int, depth: int, n_judged: int, n_values: int, ragged: bool = False):
    """Random run with heavy float32 ties (few distinct scores) and many judged documents."""
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels, results = {}, {}
    for qi in range(n_queries):
        q = f"q{qi}"
        size = int(rng.integers(n_judged, depth + 1)) if ragged else depth
        docs = [f"d{x}" for x in rng.choice(depth * 3, size=size, replace=False)]
        values = (rng.integers(0, n_values, size=size) + (n_values == 1)) / 7.0
        values[rng.random(size) < 0.1] += 1e-9  # float32 near-ties
        results[q] = dict(zip(docs, values.tolist()))
        pool = docs + [f"u{x}" for x in range(size)]
        judged = rng.choice(len(pool), size=n_judged, replace=False)
        qrels[q] = {pool[j]: int(rng.integers(-1, 4)) for j in judged}
    return qrels, results


@pytest.mark.parametrize(
    "n_judged,n_values",
    [(1, 5), (3, 5), (40, 3), (40, 1000), (300, 10), (3, 1), (40, 1), (300, 1)],
    ids=[
        "one-judged",
        "few-judged",
        "many-judged-sorted-path",
        "many-judged-few-ties",
        "heavy-ties",
        # A query's scores all equal (up to float32 near-ties): its judged documents share one tie group.
        "few-judged-all-tied",
        "many-judged-all-tied",
        "heavy-all-tied",
    ],
)
@pytest.mark.parametrize(
    "chunk,ragged",
    [(512, False), (None, False), (512, True), (None, True)],
    ids=["small-chunks", "2d-blocks", "small-chunks-ragged", "ragged"],
)
def test_larger_seeded_runs_equal_pytrec_eval_and_beir_on_every_counting_path(
    n_judged, n_values, chunk, ragged, monkeypatch
):
    from haystack_irmetrics.core import ranking

    if chunk is not None:
        monkeypatch.setattr(ranking, "_CHUNK", chunk)  # exercise chunking of the element-wise path
    seed = n_judged * 31 + n_values + 7 * ragged
    qrels, results = _seeded_case(seed, 12 if ragged else 70, 300, n_judged, n_values, ragged)
    ks = [1, 3, 10, 100, 1000]
    res = evaluate(qrels, results, ks, preset="trec")
    oracle = pytrec_per_query(qrels, results, ks)
    for family in ("NDCG", "MAP", "Recall", "P"):
        for k in ks:
            assert res.per_query[f"{family}@{k}"] == oracle[f"{family}@{k}"]
    for k in (1, 10, 1000):
        assert res.per_query[f"MRR@{k}"] == pytrec_rr_at(qrels, results, k)
    expected = beir_means(qrels, results, ks)
    if expected is not None:
        assert evaluate(qrels, results, ks).means == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 9),
            st.one_of(
                st.integers(0, 4).map(lambda d: 2**53 + d), st.integers(0, 4).map(lambda d: float(2**53 + 2 * d))
            ),
        ),
        min_size=2,
        max_size=12,
    ),
    st.lists(st.integers(0, 9), min_size=1, max_size=6),
)
def test_ints_beyond_2_53_rank_for_mrr_and_r_cap_as_beirs_sort_compares_them(docs, judged):
    # Doubles there are whole numbers 2 apart, so neighbouring ints tie as doubles; BEIR's Python
    # sort still orders the ints exactly (and an int against a float exactly).
    results = {"q": {f"d{d}": s for d, s in docs}}
    qrels = {"q": {f"d{j}": 1 for j in judged}}
    expected = beir_means(qrels, results, [1, 2, 3, 5])
    if expected is None:
        return
    got = evaluate(qrels, results, [1, 2, 3, 5], measures=["MRR", "R_cap"]).means
    assert got == {k: v for k, v in expected.items() if k.startswith(("MRR", "R_cap"))}
