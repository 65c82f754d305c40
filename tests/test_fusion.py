"""``fusion.fuse`` equals ranx 0.3.21's ``fuse`` (the oracle): fused scores to 1e-9 and the same order
where scores differ, for every method and normalisation, on random tie-heavy runs and on real runs.

How the oracle is fed so that both rank the same documents in the same order: we rank a run's ties as
trec_eval does (score descending, then document id descending), whatever order the dict lists them in;
ranx ranks a run by score with numba's sort, stable on lists of up to 15 documents, so the random runs
stay that short and ranx gets each run listed in trec_eval's order (:func:`trec_ordered`, written here
from its definition). On the real runs, longer, ranx's order among tied scores is its sort's, so a
rank-based method is checked on runs whose scores are made strictly decreasing in trec_eval's order
first (the ranks are what the method reads). Two ranx choices that
are no order of the input are pinned: condorcet starts its sort from a Python set's order (it changes
with the hash seed), here patched to our candidate order; and ``borda`` normalisation lists a run's
documents in that set order, so rank-based methods after it are not compared.
"""

from __future__ import annotations

import itertools
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haystack_irmetrics.errors import EmptyInputError, FusionError, InvalidIdError, InvalidScoreError
from haystack_irmetrics.fusion import METHODS, NORMALIZATIONS, TRAINED, WEIGHTED, fuse, pack_runs

ranx = pytest.importorskip("ranx")

from ranx.fusion import (  # noqa: E402
    bayesfuse_train,
    mapfuse_train,
    posfuse_train,
    probfuse_train,
    segfuse_train,
    slidefuse_train,
)
from ranx.normalization import norm_switch  # noqa: E402

warnings.filterwarnings("ignore", category=Warning, module="numba")

SHARED = Path(os.environ.get("IRMETRICS_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
RANK_BASED = {"rrf", "isr", "log_isr", "logn_isr", "bordafuse", "w_bordafuse", "condorcet", "w_condorcet", "rbc"}
PARAMS = {
    "rrf": {"k": 60},
    "gmnz": {"gamma": 0.5},
    "logn_isr": {"sigma": 0.01},
    "rbc": {"phi": 0.8},
    "probfuse": {"n_segments": 3},
    "slidefuse": {"w": 2},
}


def trec_ordered(docs: dict) -> dict:
    """``docs`` listed in trec_eval's order: float32 score descending, then document id descending."""
    return dict(sorted(docs.items(), key=lambda kv: (float(np.float32(kv[1])), kv[0]), reverse=True))


def _candidate_order(runs: list[dict]) -> dict[str, list[str]]:
    """Per query, the candidates in our order: first appearance over the runs, each in trec_eval's order."""
    out = {}
    for q in runs[0]:
        seen: dict[str, None] = {}
        for run in runs:
            for d in trec_ordered(run.get(q, {})):
                seen.setdefault(d)
        out[q] = list(seen)
    return out


def ranx_fuse(runs: list[dict], method: str, norm: str | None, weights, qrels, monkeypatch) -> dict:
    """ranx's fused run for the same request (its trained methods trained on the normalised runs, as
    its ``optimize_fusion`` does)."""
    import sys

    from numba import types
    from numba.typed import List as TypedList

    condorcet_module = sys.modules["ranx.fusion.condorcet"]
    weighted_module = sys.modules["ranx.fusion.weighted_condorcet"]

    order = _candidate_order(runs)

    def candidates(_runs):
        out = TypedList()
        for q in _runs[0]:
            out.append(TypedList(order[q]) if order[q] else TypedList.empty_list(types.unicode_type))
        return out

    monkeypatch.setattr(condorcet_module, "get_candidates", candidates)
    monkeypatch.setattr(weighted_module, "get_candidates", candidates, raising=False)
    rruns = [ranx.Run({q: trec_ordered(run[q]) for q in runs[0]}) for run in runs]
    params = dict(PARAMS.get(method, {}))
    if method in WEIGHTED:
        params["weights"] = list(weights)
    if method in TRAINED:
        rq = ranx.Qrels({q: dict(v) for q, v in qrels.items()})
        if norm is None:
            normed = rruns
        elif norm == "borda":
            normed = norm_switch("borda")(rruns)
        else:
            normed = [norm_switch(norm)(r) for r in rruns]
        if method == "posfuse":
            params = {"probs": posfuse_train(rq, normed)}
        elif method == "probfuse":
            params = {"probs": probfuse_train(rq, normed, PARAMS["probfuse"]["n_segments"])}
        elif method == "segfuse":
            params = {"probs": segfuse_train(rq, normed)}
        elif method == "slidefuse":
            params = {"probs": slidefuse_train(rq, normed), "w": PARAMS["slidefuse"]["w"]}
        elif method == "mapfuse":
            params = {"map_scores": mapfuse_train(rq, normed)}
        elif method == "bayesfuse":
            params = {"log_odds": bayesfuse_train(rq, normed)}
    out = ranx.fuse(rruns, norm=norm, method=method, params=params)
    return {q: dict(docs) for q, docs in out.run.items()}


def ours(runs, method, norm, weights, qrels) -> dict:
    params = {k: v for k, v in PARAMS.get(method, {}).items()}
    return fuse(
        runs, method, norm=norm, weights=weights if method in WEIGHTED else None, qrels=qrels, params=params
    ).data


def assert_same(got: dict, expected: dict) -> float:
    """Same documents per query, scores within 1e-9, and our order is by score descending."""
    worst = 0.0
    for q, docs in expected.items():
        mine = got.get(q, {})
        assert set(mine) == set(docs), q
        if not docs:
            continue
        # Absolute 1e-9, relative beyond 1 (max norm of a negative maximum divides by ranx's 1e-9 floor).
        diff = max(abs(mine[d] - docs[d]) / max(1.0, abs(docs[d])) for d in docs)
        worst = max(worst, diff)
        assert diff <= 1e-9, (q, diff)
        values = list(mine.values())
        assert all(a >= b for a, b in itertools.pairwise(values)), q
    return worst


scores = st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, -1.0, 3.25, 7.0])
# Ids of one length: ranx 0.3.21 truncates ids to the shortest length of a run's ids in some paths ("d10"
# fused with "d0" comes out as "d1").
docs = st.sampled_from([f"d{i:02d}" for i in range(15)])


@st.composite
def fusion_case(draw):
    n_runs = draw(st.integers(2, 4))
    qids = [f"q{i}" for i in range(draw(st.integers(1, 4)))]
    runs = []
    for _ in range(n_runs):
        # Every query retrieves something in every run: ranx 0.3.21 loses documents of other queries
        # (zmuv, ...) when a run has an empty query; an absent query is tested on its own below.
        runs.append({q: draw(st.dictionaries(docs, scores, min_size=1, max_size=8)) for q in qids})
    qrels = {}
    for q in qids:
        judged = draw(st.dictionaries(docs, st.sampled_from([0, 1, 2]), min_size=1, max_size=6))
        qrels[q] = judged
    weights = draw(st.lists(st.sampled_from([0.1, 0.25, 0.5, 1.0, 2.0]), min_size=n_runs, max_size=n_runs))
    return runs, qrels, weights


def _pairs():
    for method in METHODS:
        for norm in (*NORMALIZATIONS, None):
            if norm == "borda" and (method in RANK_BASED or method in TRAINED):
                continue
            yield method, norm


CASES = list(_pairs())


@pytest.mark.parametrize(("method", "norm"), CASES)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=fusion_case())
def test_fused_scores_equal_ranx_on_random_tie_heavy_runs(method, norm, case, monkeypatch):
    runs, qrels, weights = case
    before = repr(runs)
    expected = ranx_fuse(runs, method, norm, weights, qrels, monkeypatch)
    got = ours(runs, method, norm, weights, qrels)
    assert repr(runs) == before  # inputs untouched
    assert_same(got, expected)


@pytest.mark.parametrize(("method", "name"), [("slidefuse", "w"), ("probfuse", "n_segments")])
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=fusion_case(), huge=st.sampled_from([10**20, 2**63, 10**300]))
def test_a_window_or_segment_count_past_the_longest_list_fuses_as_ranx_does_at_that_length(
    method, name, case, huge, monkeypatch
):
    """No segment or window reaches past a run's longest list: ``w=1e20`` (an OverflowError once, in numpy) and
    ``n_segments=1e20`` (8e20 bytes of segments, once) fuse as ranx does at the longest list's length."""
    runs, qrels, weights = case
    longest = max(len(docs) for run in runs for docs in run.values())
    monkeypatch.setitem(PARAMS, method, {name: longest})
    expected = ranx_fuse(runs, method, "min-max", weights, qrels, monkeypatch)
    got = fuse(runs, method, qrels=qrels, params={name: huge}).data
    assert_same(got, expected)


def _real_runs() -> tuple[list[dict], dict]:
    base = SHARED / "robust03"
    if not (base / "input.uic0301").is_file():
        pytest.skip(f"real runs not found under {SHARED} (set IRMETRICS_SHARED_DATA)")
    from haystack_irmetrics.io.trec import read_qrels, read_run

    run = read_run(base / "input.uic0301").data
    qrels = read_qrels(base / "robust03_cs_qrels.txt").data
    qids = sorted(set(run) & set(qrels))[:40]
    first = {q: run[q] for q in qids}
    # A second system over the same topics: the run's top 600, rescored by a seeded perturbation.
    rng = np.random.default_rng(7)
    second = {}
    for q in qids:
        top = sorted(first[q].items(), key=lambda kv: -kv[1])[:600]
        second[q] = {d: round(s + float(rng.normal(0, 0.5)), 2) for d, s in top}
    return [first, second], {q: qrels[q] for q in qids}


def _strict(run: dict) -> dict:
    """The same ranking (trec_eval's: score descending, ties by document id descending), with distinct scores."""
    out = {}
    for q, docs in run.items():
        ranked = list(trec_ordered(docs))
        out[q] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return out


@pytest.mark.parametrize("method", [m for m in METHODS if m not in ("condorcet", "w_condorcet")])
def test_fused_scores_equal_ranx_on_real_runs(method, monkeypatch):
    runs, qrels = _real_runs()
    if method in RANK_BASED or method in TRAINED:
        runs = [_strict(r) for r in runs]
    norms = ["min-max"] if method in TRAINED or method in RANK_BASED else ["min-max", "zmuv", "sum", "max", None]
    for norm in norms:
        expected = ranx_fuse(runs, method, norm, [0.3, 0.7], qrels, monkeypatch)
        got = ours(runs, method, norm, [0.3, 0.7], qrels)
        assert assert_same(got, expected) <= 1e-9


def test_condorcet_equals_ranx_on_real_runs_from_the_same_starting_order(monkeypatch):
    runs, qrels = _real_runs()
    runs = [{q: dict(list(r[q].items())[:60]) for q in list(r)[:10]} for r in (_strict(x) for x in runs)]
    for method in ("condorcet", "w_condorcet"):
        assert_same(
            ours(runs, method, None, [0.4, 0.6], qrels), ranx_fuse(runs, method, None, [0.4, 0.6], qrels, monkeypatch)
        )


def test_fusing_trec_files_equals_fusing_their_dicts(tmp_path):
    from haystack_irmetrics.io.trec import write_trec_run

    a = {"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d3": 1.0}}
    b = {"q1": {"d2": 5.0, "d4": 1.0}, "q2": {"d3": 0.5, "d5": 0.25}}
    write_trec_run(a, tmp_path / "a.trec")
    write_trec_run(b, tmp_path / "b.trec")
    from_files = fuse([tmp_path / "a.trec", str(tmp_path / "b.trec")], "wsum", weights=[0.5, 0.5]).data
    assert from_files == fuse([a, b], "wsum", weights=[0.5, 0.5]).data


def test_a_query_one_run_lacks_counts_as_retrieved_nothing_there():
    a = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
    b = {"q1": {"d1": 2.0, "d3": 1.0}}
    assert fuse([a, b], "rrf").data == fuse([a, {**b, "q2": {}}], "rrf").data


def test_ties_in_the_fused_ranking_follow_first_appearance_over_the_runs():
    a = {"q1": {"b": 1.0, "a": 0.5}}
    b = {"q1": {"c": 1.0, "a": 0.5}}
    # b and c tie (first in one run each); b appeared first, in the first run.
    assert list(fuse([a, b], "rrf").data["q1"]) == ["a", "b", "c"]
    assert list(fuse([b, a], "rrf").data["q1"]) == ["a", "c", "b"]


def test_depth_keeps_each_runs_top_documents():
    a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    b = {"q1": {"d4": 3.0, "d5": 2.0}}
    assert set(fuse([a, b], "rrf", depth=1).data["q1"]) == {"d1", "d4"}


@pytest.mark.parametrize(
    ("kwargs", "error", "says"),
    [
        ({"method": "nope"}, FusionError, "unknown fusion method"),
        ({"method": "rrf", "norm": "nope"}, FusionError, "unknown normalisation"),
        ({"method": "wsum", "weights": [1.0]}, FusionError, "1 weights for 2 runs"),
        ({"method": "rrf", "weights": [1.0, 1.0]}, FusionError, "takes no weights"),
        ({"method": "gmnz"}, FusionError, "needs the parameter gamma"),
        ({"method": "posfuse"}, FusionError, "pass qrels"),
        ({"method": "rrf", "depth": 0}, FusionError, "depth"),
        ({"method": "wsum", "weights": [1.0, float("nan")]}, FusionError, "finite"),
    ],
)
def test_bad_requests_raise_a_fusion_error_saying_what(kwargs, error, says):
    a = {"q1": {"d1": 1.0}}
    with pytest.raises(error, match=says):
        fuse([a, a], **kwargs)


def test_bad_runs_raise_typed_errors_naming_query_and_document():
    good = {"q1": {"d1": 1.0}}
    with pytest.raises(InvalidScoreError, match=r"'d2'.*'q1'"):
        fuse([good, {"q1": {"d2": float("inf")}}])
    with pytest.raises(InvalidScoreError, match=r"'d2'.*'q1'"):
        fuse([good, {"q1": {"d2": None}}])
    with pytest.raises(EmptyInputError):
        fuse([good, {"q1": {}}])
    with pytest.raises(EmptyInputError):
        fuse([good, {}])
    with pytest.raises(InvalidIdError, match="q1"):
        fuse([good, {"q1": {5: 1.0}}])
    with pytest.raises(FusionError, match="at least two"):
        fuse([good])


def test_a_packing_serves_many_fusions_with_the_same_result():
    a = {"q1": {"d1": 3.0, "d2": 2.0}}
    b = {"q1": {"d2": 1.0, "d3": 0.5}}
    packed = pack_runs([a, b])
    for method in ("rrf", "wsum", "mnz"):
        assert fuse(packed, method).data == fuse([a, b], method).data


def test_every_kind_of_run_input_fuses_the_same():
    from haystack_irmetrics.core.inputs import Run

    a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 1.0}}
    b = {"q1": {"d3": 0.9, "d1": 0.5}, "q2": {"d5": 0.7, "d4": 0.1}}
    expected = fuse([a, b], "rrf").data
    ranked = {q: sorted(docs, key=lambda d, docs=docs: -docs[d]) for q, docs in b.items()}
    assert fuse([Run.from_dict(a), ranked], "rrf").data == expected
    before = repr(a)
    fuse([a, b], "wsum", norm="zmuv")
    assert repr(a) == before


def test_depth_belongs_to_the_packing():
    packed = pack_runs([{"q1": {"d1": 1.0}}, {"q1": {"d2": 1.0}}])
    with pytest.raises(FusionError, match="pack_runs"):
        fuse(packed, "rrf", depth=1)


def test_max_and_min_over_scores_beyond_a_billion():
    # max: a, in both runs, max(-5e9, -4e9) = -4e9; b and c, each missed by one run, which counts -1e9 there (as
    # ranx): max(-3e9, -1e9) = max(-2e9, -1e9) = -1e9.  min mirrors it: a 4e9, b and c min(3e9 or 2e9, 1e9) = 1e9.
    runs = [{"q": {"a": -5e9, "b": -3e9}}, {"q": {"a": -4e9, "c": -2e9}}]
    assert fuse(runs, "max", norm=None).data == {"q": {"a": -4e9, "b": -1e9, "c": -1e9}}
    mirrored = [{"q": {d: -s for d, s in run["q"].items()}} for run in runs]
    assert fuse(mirrored, "min", norm=None).data == {"q": {"a": 4e9, "b": 1e9, "c": 1e9}}
