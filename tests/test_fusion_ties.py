"""Ties inside an input run take the rank trec_eval (and this package's evaluation) gives them: score
descending, then document id descending, whatever order the dict or the file lists them in.

Two oracles: ranx 0.3.21's ``fuse`` for the fused scores, given each run listed in trec_eval's order (its
sort keeps a tie's order on lists this short; see test_fusion.py), and pytrec_eval for the rank a tied
document has in the run (its reciprocal rank when it alone is relevant). The runs list their documents in
a random order, so a fusion that kept the listed order would differ from both.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from haystack_irmetrics.cli.app import main
from haystack_irmetrics.fusion import fuse
from haystack_irmetrics.io.trec import read_run

from .test_fusion import RANK_BASED, assert_same, ours, ranx_fuse

pytrec_eval = pytest.importorskip("pytrec_eval")
warnings.filterwarnings("ignore", category=Warning, module="numba")

# Ids of one length (ranx 0.3.21 cuts ids to the shortest one in some paths), whose code-point order is
# neither their listing order nor the intuitive one ("dZ" < "d_" < "da" < "dé" < "d~").
IDS = st.sampled_from(["dA", "d9", "d_", "da", "dZ", "d0", "d~", "dé"])


def _shuffled(docs: dict) -> st.SearchStrategy[dict]:
    return st.permutations(list(docs)).map(lambda order: {d: docs[d] for d in order})


@st.composite
def tie_heavy_runs(draw):
    n_runs = draw(st.integers(2, 3))
    qids = [f"q{i}" for i in range(draw(st.integers(1, 3)))]
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in qids:
            docs = draw(st.dictionaries(IDS, st.sampled_from([0.0, 1.0, 1.0, 2.0]), min_size=1, max_size=8))
            run[q] = draw(_shuffled(docs))
        runs.append(run)
    weights = draw(st.lists(st.sampled_from([0.25, 0.5, 1.0]), min_size=n_runs, max_size=n_runs))
    return runs, weights


@pytest.mark.parametrize("norm", [None, "min-max"])
@pytest.mark.parametrize("method", sorted(RANK_BASED))
@seed(39)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=tie_heavy_runs())
def test_rank_based_methods_equal_ranx_given_the_runs_in_trec_evals_order(method, norm, case, monkeypatch):
    runs, weights = case
    before = repr(runs)
    expected = ranx_fuse(runs, method, norm, weights, None, monkeypatch)  # ranx reads trec_eval's order
    assert_same(ours(runs, method, norm, weights, None), expected)
    assert repr(runs) == before


# Scores that tie as float32 though not as float64 (trec_eval compares float32), and -0.0 with 0.0.
TIED_SCORES = st.sampled_from([0.5, 0.5 + 1e-12, 1.0, 2.0, -0.0, 0.0])


@seed(39)
@settings(max_examples=60, deadline=None)
@given(run=st.dictionaries(IDS, TIED_SCORES, min_size=1, max_size=12).flatmap(_shuffled))
def test_a_tied_document_has_the_rank_trec_eval_gives_it(run):
    # RRF of a run with itself scores 2 / (61 + rank): the fused order is the order fuse read the run in.
    fused = fuse([{"q": run}, {"q": run}], "rrf", norm=None).data["q"]
    rank = {d: i + 1 for i, d in enumerate(fused)}
    qrels = {f"q|{d}": {d: 1} for d in run}
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate({q: dict(run) for q in qrels})
    assert {d: 1 / rank[d] for d in run} == pytest.approx({d: evaluated[f"q|{d}"]["recip_rank"] for d in run})


def test_the_command_line_ranks_a_run_files_ties_as_trec_eval_does(tmp_path, monkeypatch):
    # Tied documents listed by id ascending: trec_eval ranks them the other way round.
    a = {"q1": {"d1": 2.0, "d2": 1.0, "d3": 1.0, "d4": 1.0}, "q2": {"d5": 0.5, "d6": 0.5, "d7": 0.25}}
    b = {"q1": {"d2": 3.0, "d4": 3.0, "d5": 1.0}, "q2": {"d5": 1.0, "d7": 1.0}}
    for name, run in (("a", a), ("b", b)):
        lines = [f"{q} Q0 {d} {i} {s} {name}\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items(), 1)]
        (tmp_path / f"{name}.trec").write_text("".join(lines))
    out = tmp_path / "fused.trec"
    for method in ("rrf", "isr", "log_isr", "rbc"):
        extra = ["--param", "phi=0.8"] if method == "rbc" else []
        args = ["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--method", method, *extra]
        assert main([*args, "-o", str(out)]) == 0
        assert_same(read_run(out).data, ranx_fuse([a, b], method, "min-max", None, None, monkeypatch))
