"""One evaluation, entered once (core/evaluation.py): an :class:`Evaluation` read under several policies equals
pytrec_eval on each ranking; ``irmetrics beir``, the report and the components prepare a run once (and once
more for BEIR's Hole, against the documents judged for any query) where they prepared it up to six times;
the names: the module ``core.evaluation`` beside the function ``core.evaluate``, the user-model kernel kind
``"user"``."""

from __future__ import annotations

import copy
import importlib
import sys
import types
import typing
from collections import Counter

import pytest
from hypothesis import given

import haystack_irmetrics
from haystack_irmetrics import Evaluation
from haystack_irmetrics.core import prepare as prepare_module
from tests import strategies as S
from tests.oracles import pytrec_per_query, without_identical_ids

TOL = 1e-12
FAMILIES = ("NDCG", "MAP", "Recall", "P")


def _stable(results: dict) -> dict:
    """Each query's documents scored n, n - 1, ... in the stable order (score descending, ties as listed): a
    run pytrec_eval ranks exactly so."""
    out = {}
    for q, docs in results.items():
        order = sorted(docs, key=lambda d: -docs[d])  # sorted() is stable
        out[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return out


@pytest.mark.usefixtures("scan_path")
@given(S.qrels(), S.runs(), S.k_values)
def test_one_evaluation_read_under_three_policies_equals_pytrec_eval_on_each_ranking(qrels, results, ks):
    if not any(qrels.get(q) for q in results):
        return
    before = copy.deepcopy(results)
    ev = Evaluation(qrels, results, "beir")
    beir = pytrec_per_query(qrels, without_identical_ids(results), ks)
    readings = [
        (ev, beir),
        # the pipeline's order (irmetrics beir's diagnostics): the same prepared run, ranked stably
        (ev.with_preset(ties="stable"), pytrec_per_query(qrels, _stable(without_identical_ids(results)), ks)),
        # identical ids kept: the run prepared again
        (ev.with_preset("trec"), pytrec_per_query(qrels, results, ks)),
        (ev, beir),  # the first reading again, after the others shared its rankings
    ]
    for reading, oracle in readings:
        res = reading.result(FAMILIES, ks)
        for family in FAMILIES:
            for k in ks:
                name = f"{family}@{k}"
                assert res.per_query[name].keys() == oracle[name].keys(), name
                for q, v in oracle[name].items():
                    assert abs(res.per_query[name][q] - v) <= TOL, (name, q, res.per_query[name][q], v)
    assert results == before, "an Evaluation modified the caller's results"


def test_judged_and_hole_read_from_the_evaluation_are_pytrec_evals_and_beirs():
    from beir.retrieval.evaluation import EvaluateRetrieval

    qrels = {"0": {"d1": 1, "d3": 0}, "1": {"d2": 2}}
    results = {
        "0": {"d1": 4.0, "d3": 3.0, "d2": 2.0, "d9": 1.0},
        "1": {"d7": 3.0, "d2": 2.0, "d1": 1.0},
        "2": {"d1": 1.0},
    }
    ev = Evaluation(qrels, results)
    means = ev.result(["Judged@3", "Hole@3"]).means
    assert means["Hole@3"] == EvaluateRetrieval.evaluate_custom(qrels, copy.deepcopy(results), [3], "hole")["Hole@3"]
    every_judged = {q: dict.fromkeys(docs, 1) for q, docs in qrels.items()}
    judged = pytrec_per_query(every_judged, results, [3])["P@3"]
    assert means["Judged@3"] == round(sum(judged.values()) / len(judged), 5)


@pytest.fixture
def prepared(monkeypatch):
    """Every call of ``core.prepare.prepare`` while the test runs, as ``(run, qrels)``."""
    calls: list[tuple[object, object]] = []
    original = prepare_module.prepare

    def counted(run, qrels, ignore_identical_ids):
        calls.append((run, qrels))
        return original(run, qrels, ignore_identical_ids)

    for module in list(sys.modules.values()):
        if (
            getattr(module, "__name__", "").startswith("haystack_irmetrics")
            and getattr(module, "prepare", None) is original
        ):
            monkeypatch.setattr(module, "prepare", counted)
    return calls


def _against(calls, judgments) -> Counter:
    """How often each run was prepared against these judgments (``{qid: {doc: label}}``)."""
    want = {q: dict(d) for q, d in judgments.items()}
    return Counter(id(run) for run, qrels in calls if {q: dict(d) for q, d in qrels.data.items()} == want)


def test_one_beir_dataset_prepares_its_run_at_most_twice(prepared):
    pytest.importorskip("haystack")
    from haystack_irmetrics.beir import load_beir, run_beir, sample_path

    run = run_beir(sample_path(), "bm25", progress=False)
    assert run.summary()["hole_bounds"]  # the bounds were computed too, with Judged@k and Hole@k
    # Once against the qrels (BEIR's numbers, the pipeline's tie order, Judged@k and the bounds), once against
    # the documents judged for any query (Hole@k); before: 6 (evaluate 3 times, evaluate_chunks 4).
    assert len(prepared) <= 2, len(prepared)
    assert list(_against(prepared, load_beir(sample_path()).qrels).values()) == [1]


def test_a_report_of_two_runs_prepares_each_run_once_against_the_qrels(prepared, tmp_path):
    pytest.importorskip("haystack")
    from haystack_irmetrics.io import read_qrels
    from haystack_irmetrics.report import build_report
    from tests.report_fixtures import QRELS, sample_runs

    runs = list(sample_runs(tmp_path).values())[:2]
    data = build_report(runs, QRELS, k_values=[5], measures=["NDCG", "P"], bounds=2, significance=False)
    assert data.coverage and data.bounds  # Judged@k/Hole@k and the bounds of both runs
    counts = _against(prepared, read_qrels(QRELS).data)
    assert sorted(counts.values()) == [1, 1], counts  # before: 4 each (measures, coverage, bounds twice)
    assert len(prepared) <= 4, len(prepared)  # and at most once more each, for Hole@k


def test_the_evaluator_component_prepares_a_batch_once_for_its_means_holes_and_bounds(prepared):
    pytest.importorskip("haystack")
    from haystack import Document

    from haystack_irmetrics.components import IRMetricsEvaluator

    gold = [[Document(id="d1", score=1), Document(id="d3", score=0)], [Document(id="d2", score=2)]]
    retrieved = [[Document(id="d1"), Document(id="d3"), Document(id="d2")], [Document(id="d7"), Document(id="d2")]]
    out = IRMetricsEvaluator(metrics=["NDCG", "P"], k_values=[3], holes=True, bounds_grade=1).run(gold, retrieved)
    assert out["holes"] and out["bounds"]
    assert sorted(_against(prepared, {"0": {"d1": 1, "d3": 0}, "1": {"d2": 2}}).values()) == [1]  # before: 3
    assert len(prepared) <= 2


def test_the_module_core_evaluation_and_the_function_core_evaluate():
    import haystack_irmetrics.core as core

    module = importlib.import_module("haystack_irmetrics.core.evaluation")
    assert isinstance(module, types.ModuleType)
    assert core.evaluate is module.evaluate is haystack_irmetrics.evaluate
    assert isinstance(core.evaluate, types.FunctionType)  # the name no longer stands for a module too
    assert core.Evaluation is module.Evaluation is haystack_irmetrics.Evaluation
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("haystack_irmetrics.core.evaluate")


def test_the_user_model_measures_are_of_kind_user_and_judged_at_k_of_kind_coverage():
    from haystack_irmetrics.core.families import FAMILIES as REGISTRY
    from haystack_irmetrics.core.families import KernelKind
    from haystack_irmetrics.core.scoring import KINDS

    assert set(typing.get_args(KernelKind)) == set(KINDS)
    assert "judged" not in KINDS
    user = {name for name, f in REGISTRY.items() if f.kernel == "user"}
    assert user == {"ERR", "nERR", "RBP", "RBP_residual", "infAP", "Compat"}
    assert all(REGISTRY[name].user is not None for name in user)
    assert all(f.user is None for name, f in REGISTRY.items() if name not in user)
    assert REGISTRY["Judged"].kernel == REGISTRY["Hole"].kernel == "coverage"
