"""The ``irmetrics`` ir_measures provider against ir_measures' own reference providers, through ir_measures' API.

Every measure the provider supports is compared, per query (``iter_calc``: the same queries, the same values)
and aggregated (``calc_aggregate``), with the provider ir_measures' ``DefaultPipeline`` gives it to: pytrec_eval
(trec_eval 9), msmarco (``RR@k``), judged (``Judged@k``), gdeval (``ERR@k``, ``nDCG(dcg='exp-log2')@k``, to its
five printed decimals) and cwl_eval (``RBP(rel=r)``), within 1e-12, on hypothesis' tie-heavy runs and on the
shared real data, with ``rel=`` and ``judged_only=`` variants, and with qrels and runs in every form ir_measures
takes. Two inputs pytrec_eval itself cannot score are left out of its side (as tests/test_measures_crosscheck.py
does): a query whose judgments are all negative (trec_eval's cache is left inconsistent) and an empty ranking
(several measures together can crash it); tests/test_ir_measures_asks.py gives ours there.
"""

from __future__ import annotations

import shutil

import ir_measures
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from ir_measures import (
    AP,
    ERR,
    RBP,
    RR,
    Bpref,
    IPrec,
    Judged,
    NumQ,
    NumRel,
    NumRet,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    SetR,
    Success,
    infAP,
    nDCG,
)

from haystack_irmetrics.errors import DuplicateDocumentError, InvalidArgumentError, UnknownMeasureError
from haystack_irmetrics.ir_measures import PROVIDER, IRMetricsProvider, prefer
from tests import strategies as S

TOL = 1e-12
SOME = settings(max_examples=60, deadline=None)
FEW = settings(max_examples=15, deadline=None)


def pytrec_measures(rel: int, judged: bool) -> list:
    """Every pytrec_eval measure of ir_measures the provider takes, at ``rel`` and ``judged_only``."""
    out = [P(rel=rel, judged_only=judged) @ k for k in (1, 3, 10)]
    out += [AP(rel=rel, judged_only=judged), AP(rel=rel, judged_only=judged) @ 5, RR(rel=rel, judged_only=judged)]
    out += [R(rel=rel, judged_only=judged) @ k for k in (2, 10)] + [Rprec(rel=rel, judged_only=judged)]
    out += [
        nDCG(judged_only=judged),
        nDCG(judged_only=judged) @ 3,
        nDCG(gains={0: 1, 1: 3, 2: 2}, judged_only=judged) @ 5,
    ]
    out += [Success(rel=rel, judged_only=judged) @ 2, IPrec(rel=rel, judged_only=judged) @ 0.33]
    out += [SetP(rel=rel, judged_only=judged), SetP(rel=rel, relative=True, judged_only=judged)]
    out += [SetF(rel=rel, judged_only=judged), SetF(rel=rel, beta=0.25, judged_only=judged)]
    if not judged:  # pytrec_eval's provider runs these without -J whatever judged_only says
        out += [SetR(rel=rel), SetAP(rel=rel), Bpref(rel=rel), infAP(rel=rel), NumRet, NumRet(rel=rel), NumQ, NumRel]
    return out


def per_query(metrics) -> dict:
    out = {}
    for m in metrics:
        key = (str(m.measure), m.query_id)
        assert key not in out, key
        out[key] = m.value
    return out


def assert_same(measures, qrels, run, reference, tol=TOL, provider=PROVIDER) -> int:
    """Ours equals the reference per query (the same keys) and aggregated; returns how many values compared."""
    assert all(provider.supports(m) for m in measures), [m for m in measures if not provider.supports(m)]
    theirs, ours = (
        per_query(reference.iter_calc(measures, qrels, run)),
        per_query(provider.iter_calc(measures, qrels, run)),
    )
    assert ours.keys() == theirs.keys()
    # trec_eval's iprec_at_recall of a ranking judged_only leaves empty is 0 / 0: ours is 0 there
    undefined = {k for k, v in theirs.items() if v != v}
    assert all(ours[k] == 0.0 for k in undefined)
    bad = {k: (ours[k], v) for k, v in theirs.items() if not abs(ours[k] - v) <= tol and k not in undefined}
    assert not bad
    agg_theirs, agg_ours = reference.calc_aggregate(measures, qrels, run), provider.calc_aggregate(measures, qrels, run)
    assert agg_ours.keys() == agg_theirs.keys()
    for m, v in agg_theirs.items():
        if any(k[0] == str(m) for k in undefined):
            continue
        assert agg_ours[m] == pytest.approx(v, abs=tol, nan_ok=True), m
        assert (type(agg_ours[m]) is int) == (type(v) is int), m  # SumAgg's int 0 stays an int, as ir_measures gives it
    return len(theirs)


def pytrec_safe(qrels, run):
    """What pytrec_eval scores without crashing: no all-negative judgments, no empty ranking."""
    qrels = {q: docs for q, docs in qrels.items() if not docs or any(v >= 0 for v in docs.values())}
    return qrels, {q: docs for q, docs in run.items() if docs}


@SOME
@given(S.qrels(), S.runs(), st.sampled_from([1, 2]), st.booleans())
def test_pytrec_eval_measures_equal_ir_measures_pytrec_eval_provider_per_query_and_aggregated(qrels, run, rel, judged):
    qrels, run = pytrec_safe(qrels, run)
    assume(qrels and run)
    assert_same(pytrec_measures(rel, judged), qrels, run, ir_measures.pytrec_eval)


def real(data_dir):
    """Robust03's 100 queries x 1,000 documents (graded qrels), read by ir_measures from the TREC files."""
    folder = data_dir / "robust03"
    qrels = list(ir_measures.read_trec_qrels(str(folder / "robust03_cs_qrels.txt")))
    run = list(ir_measures.read_trec_run(str(folder / "input.uic0301")))
    return qrels, run


def test_real_data_equals_every_reference_provider(data_dir):
    qrels, run = real(data_dir)
    n = assert_same(pytrec_measures(1, False) + pytrec_measures(2, True)[:6], qrels, run, ir_measures.pytrec_eval)
    n += assert_same([RR @ 10, RR(rel=2) @ 100], qrels, run, ir_measures.msmarco)
    n += assert_same([Judged @ 10, Judged @ 100, Judged], qrels, run, ir_measures.judged)
    assert n == 100 * 37  # every measure of every query
    some = {r.query_id for r in run[:20_000]}  # cwl_eval reads rows in Python: its 20 first queries
    few = [r for r in run if r.query_id in some], [r for r in qrels if r.query_id in some]
    assert assert_same([RBP(rel=1), RBP(rel=2, p=0.5)], few[1], few[0], ir_measures.cwl_eval) == 2 * len(some)


@SOME
@given(S.qrels(), S.runs(), st.sampled_from([1, 2]), st.integers(1, 12))
def test_rr_at_k_equals_the_msmarco_provider_whose_ties_go_by_doc_id_ascending(qrels, run, rel, k):
    assume(qrels and run)
    assert_same([RR(rel=rel) @ k, RR @ 20], qrels, run, ir_measures.msmarco)


@SOME
@given(S.qrels(), S.runs(), st.integers(1, 12))
def test_judged_at_k_equals_the_judged_provider_dividing_by_the_shorter_of_k_and_the_ranking(qrels, run, k):
    run = {q: docs for q, docs in run.items() if docs}  # judged divides by zero on an empty ranking
    assume(qrels and run)
    assert_same([Judged @ k, Judged], qrels, run, ir_measures.judged)


NUMERIC = st.dictionaries(st.sampled_from(["1", "2", "9", "10"]), st.dictionaries(st.sampled_from(S.DOCS[:6]), st.sampled_from([0.0, 1.0, 0.5, 2.0, -1.0, 1.0 + 1e-9]) | st.floats(-5, 5), max_size=10), max_size=4)  # fmt: skip
NUMERIC_QRELS = st.dictionaries(st.sampled_from(["1", "2", "9", "10"]), st.dictionaries(st.sampled_from(S.DOCS[:6]), st.sampled_from([-1, 0, 1, 2, 3, 4]), max_size=6), max_size=4)  # fmt: skip


@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed: gdeval.pl cannot run")
@FEW
@given(NUMERIC_QRELS, NUMERIC, st.integers(1, 8))
def test_err_and_exp_ndcg_equal_the_gdeval_provider_to_its_five_printed_decimals(qrels, run, k):
    run = {q: docs for q, docs in run.items() if docs}
    assume(qrels and run)
    assert_same([ERR @ k, nDCG(dcg="exp-log2") @ k], qrels, run, ir_measures.gdeval, tol=5e-6 + 1e-12)


@SOME
@given(NUMERIC_QRELS, NUMERIC, st.sampled_from([1, 2]), st.sampled_from([0.5, 0.8, 0.95]))
def test_binary_rbp_equals_the_cwl_eval_provider_ranking_ties_in_input_order(qrels, run, rel, p):
    assume(qrels and run)
    assert_same([RBP(rel=rel, p=p)], qrels, run, ir_measures.cwl_eval)


# --- every form ir_measures takes ---------------------------------------------------------------------------


def forms(qrels: dict, run: dict) -> dict:
    """The same qrels and run as dicts, DataFrames, namedtuple lists, namedtuple iterators and TREC files read back."""
    q_rows = list(ir_measures.util.QrelsConverter(qrels).as_namedtuple_iter())
    r_rows = list(ir_measures.util.RunConverter(run).as_namedtuple_iter())
    q_text = "".join(f"{r.query_id} 0 {r.doc_id} {r.relevance}\n" for r in q_rows)
    r_text = "".join(f"{r.query_id} Q0 {r.doc_id} {i} {r.score!r} x\n" for i, r in enumerate(r_rows))
    return {
        "dict": (lambda: qrels, lambda: run),
        "frame": (lambda: pd.DataFrame(q_rows), lambda: pd.DataFrame(r_rows)),
        "namedtuples": (lambda: list(q_rows), lambda: list(r_rows)),
        "iterator": (lambda: iter(q_rows), lambda: (r for r in r_rows)),
        "trec": (lambda: ir_measures.read_trec_qrels(q_text), lambda: ir_measures.read_trec_run(r_text)),
    }


FORM_MEASURES = [nDCG @ 10, AP(rel=2), P @ 5, RR @ 3, Judged @ 5, SetF(beta=4.0), NumRet]


def test_every_form_gives_the_reference_values(data_dir):
    qrels, run = real(data_dir)
    some = {r.query_id for r in run[:10_000]}  # 10 queries: the references read each form row by row
    qrels, run = [r for r in qrels if r.query_id in some], [r for r in run if r.query_id in some]
    as_dicts = (
        ir_measures.util.QrelsConverter(qrels).as_dict_of_dict(),
        ir_measures.util.RunConverter(run).as_dict_of_dict(),
    )
    expected = ir_measures.calc_aggregate(FORM_MEASURES, *as_dicts)
    for name, (q, r) in forms(*as_dicts).items():
        got = PROVIDER.calc_aggregate(FORM_MEASURES, q(), r())
        assert got == pytest.approx(expected, abs=TOL), name
        ref = per_query(ir_measures.iter_calc(FORM_MEASURES, q(), r()))
        assert per_query(PROVIDER.iter_calc(FORM_MEASURES, q(), r())) == pytest.approx(ref, abs=TOL), name


@SOME
@given(S.qrels(), S.runs())
def test_every_form_of_tie_heavy_inputs_gives_what_the_dicts_give(qrels, run):
    run = {q: {d: s for d, s in docs.items() if " " not in d} for q, docs in run.items()}  # TREC lines split on spaces
    qrels = {q: {d: v for d, v in docs.items() if " " not in d} for q, docs in qrels.items()}
    assume(any(qrels.values()) and any(run.values()))  # an empty DataFrame has no columns to read
    measures = [nDCG @ 3, AP, P(rel=2) @ 2, RR @ 2, Judged @ 3, SetR]
    ours = per_query(PROVIDER.iter_calc(measures, qrels, run))
    # the other forms carry no query without rows: the dicts' empty ones are left out of them
    kept = {k: v for k, v in ours.items() if qrels.get(k[1])}
    for name, (q, r) in forms(qrels, run).items():
        got = per_query(PROVIDER.iter_calc(measures, q(), r()))
        assert got == (ours if name == "dict" else kept), name


def test_a_pair_given_twice_is_an_error_naming_both_rows_where_ir_measures_keeps_the_last():
    rows = [
        ir_measures.ScoredDoc("q", "a", 1.0),
        ir_measures.ScoredDoc("q", "b", 0.5),
        ir_measures.ScoredDoc("q", "a", 0.2),
    ]
    with pytest.raises(DuplicateDocumentError, match=r"document 'a' appears twice for query 'q' \(rows 1 and 3\)"):
        PROVIDER.calc_aggregate([P @ 1], {"q": {"a": 1}}, rows)
    with pytest.raises(DuplicateDocumentError, match=r"rows 1 and 3"):
        PROVIDER.calc_aggregate([P @ 1], {"q": {"a": 1}}, pd.DataFrame(rows))
    qrels = [ir_measures.Qrel("q", "a", 1), ir_measures.Qrel("q", "a", 0)]
    with pytest.raises(DuplicateDocumentError, match="qrels: document 'a' appears twice"):
        PROVIDER.calc_aggregate([P @ 1], qrels, {"q": {"a": 1.0}})
    with pytest.raises(InvalidArgumentError, match=r"run must be a dict.*ir_measures.read_trec_run\(path\)"):
        PROVIDER.calc_aggregate([P @ 1], {"q": {"a": 1}}, "run.txt")
    with pytest.raises(InvalidArgumentError, match=r"no column \['score'\]"):
        PROVIDER.calc_aggregate([P @ 1], {"q": {"a": 1}}, pd.DataFrame({"query_id": ["q"], "doc_id": ["a"]}))


# --- declining, the pipeline, the registry and the entry point ---------------------------------------------

DECLINED = [
    (ir_measures.Compat, "compat"),
    (ir_measures.alpha_nDCG @ 10, "pyndeval"),
    (RR(judged_only=True) @ 5, None),
    (SetF(beta=0.5), "pytrec_eval"),
    (nDCG(gains={0: 0, 1: -1}) @ 5, "pytrec_eval"),
    (RBP(rel=1, p=0.99), "cwl_eval"),
    (NumRel(rel=2), None),
    (ir_measures.Accuracy @ 5, "accuracy"),
]


@pytest.fixture
def preferred():
    prefer()
    yield PROVIDER
    prefer(first=False)


@pytest.mark.parametrize(("measure", "reference"), DECLINED, ids=[str(m) for m, _ in DECLINED])
def test_a_measure_ours_would_not_give_as_its_reference_is_declined_and_falls_through(preferred, measure, reference):
    qrels = {"1": {"a": 1, "b": 2, "c": 0}, "2": {"x": 1}}
    run = {"1": {"a": 0.5, "b": 0.5, "c": 0.7}, "2": {"x": 1.0, "y": 0.5}}
    assert not PROVIDER.supports(measure)
    with pytest.raises(UnknownMeasureError, match="does not compute"):
        PROVIDER.evaluator([measure], qrels)
    if reference is None:
        with pytest.raises(ValueError, match="Unsupported measures"):
            ir_measures.calc_aggregate([measure], qrels, run)
        return
    got = ir_measures.calc_aggregate([measure, P @ 1], qrels, run)  # ours takes P@1, the reference the rest
    assert got[measure] == ir_measures.providers.registry[reference].calc_aggregate([measure], qrels, run)[measure]


def test_prefer_puts_ours_first_in_the_default_pipeline_and_undoes_it(preferred):
    providers = ir_measures.DefaultPipeline.providers
    assert providers[0] is PROVIDER and providers.count(PROVIDER) == 1
    assert prefer(first=False) is PROVIDER and providers[-1] is PROVIDER and providers.count(PROVIDER) == 1
    prefer()
    evaluator = ir_measures.evaluator([nDCG @ 2, ir_measures.Compat], {"1": {"a": 1, "b": 2}})
    kinds = {type(e).__name__ for e in evaluator.evaluators}
    assert kinds == {"IRMetricsEvaluator", "CompatEvaluator"}  # ours first, the rest falls through


def test_importing_registers_the_provider_by_name_and_as_ir_measures_attribute():
    assert ir_measures.providers.registry["irmetrics"] is PROVIDER
    assert ir_measures.irmetrics is PROVIDER
    assert PROVIDER in ir_measures.DefaultPipeline.providers
    # appended last, it answers what no other provider does
    assert ir_measures.calc_aggregate([ir_measures.parse_measure("NCG@2")], {"1": {"a": 2}}, {"1": {"a": 1.0}}) == {
        ir_measures.parse_measure("NCG@2"): 1.0
    }


def test_the_entry_point_declared_in_pyproject_loads_the_registered_provider():
    import importlib.metadata
    from pathlib import Path

    import tomllib

    declared = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared["ir_measures.provider"] == {"irmetrics": "haystack_irmetrics.ir_measures:PROVIDER"}
    found = [e for e in importlib.metadata.entry_points(group="ir_measures.provider") if e.name == "irmetrics"]
    if not found:
        pytest.skip("the installed metadata predates the entry point: pip install -e . again")
    assert found[0].load() is PROVIDER


def test_a_provider_with_another_policy_is_its_own_and_bad_policies_are_refused():
    stable = IRMetricsProvider(ties="stable", ignore_identical_ids=True)
    assert ir_measures.providers.registry["irmetrics"] is PROVIDER and stable is not PROVIDER
    assert repr(stable) == "IRMetricsProvider(ties='stable', ignore_identical_ids=True)"
    with pytest.raises(ValueError, match="ties must be one of"):
        IRMetricsProvider(ties="random")
    with pytest.raises(ValueError, match="ignore_identical_ids must be True or False"):
        IRMetricsProvider(ignore_identical_ids="yes")


def test_the_benchmark_quick_run_times_ours_beside_pytrec_eval_and_checks_the_means(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parents[1]
    out = tmp_path / "table.md"
    args = [
        "--workloads",
        "msmarco",
        "--queries",
        "20",
        "--repeat",
        "1",
        "--quick",
        "--tools",
        "ours",
        "--out",
        str(out),
    ]
    env = {**os.environ, "IRMETRICS_BENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(root / "benchmarks" / "ir_measures_provider.py"), *args], env=env,
                          capture_output=True, text=True, cwd=root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = out.read_text().splitlines()[2:]
    assert [r.split(" | ")[2] for r in rows] == ["dict", "namedtuples", "DataFrame"]
    for row in rows:  # ours' means equal pytrec_eval's, for every form of the run
        assert float(row.split(" | ")[8]) <= 1e-12, row
