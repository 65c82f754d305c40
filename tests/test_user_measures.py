"""The user-model measures against their reference implementations, per query.

* ``ERR@k``, ``nERR@k``: gdeval.pl as ir_measures ships it, run by perl: through ir_measures' gdeval
  provider (5 printed decimals), and the same script printing 17 significant digits (its arithmetic
  untouched; ``$MAX_JUDGMENT`` set to ``max_rel``), so values compare to 1e-12. nERR is gdeval's err@k of
  the run over its err@k of the ideal run (every judged grade, highest first).
* ``RBP``, ``RBP(rel=r)``, ``RBP_residual``: cwl_eval's ``RBPCWLMetric`` (with ``residuals``: the upper
  minus the lower bound), and ir_measures' RBP through its cwl_eval provider.
* ``infAP``: pytrec_eval's ``infAP`` (trec_eval 9), with labels ``-1`` and ``-2``.
* ``Compat``: ir_measures' ``compatibility`` (its compat provider).

The oracles other than gdeval order tied scores their own way (cwl_eval and ir_measures by score only,
Compat by doc id ascending); they are given each ranking in trec_eval's order (float32 scores, ties by
doc id descending) as strictly decreasing scores, so the measures are compared on the same ranking.
gdeval sorts by score, then doc id descending, as trec_eval does: it gets scores rounded to float32.
"""

from __future__ import annotations

import math
import pkgutil
import shutil
import subprocess

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.errors import InvalidLabelError, UnknownMeasureError
from haystack_irmetrics.io import read_qrels, read_run
from tests.oracles import trec_order

TOL = 1e-12
# gdeval reads numeric topic ids and whitespace-free doc ids; ties and '9' vs '10' byte order kept.
QIDS = ["1", "2", "9", "10", "301"]
DOCS = ["d1", "d2", "d3", "d10", "d9", "D1", "10", "9", "é", "x-1"]
SCORES = st.sampled_from([0.0, -0.0, 1.0, 0.5, 0.25, 2.0, -1.0, 7.0]) | st.floats(-5, 5, width=32)
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# gdeval.pl is a perl script (as ir_measures runs it).
needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed: gdeval.pl cannot run")


def _runs(scores=SCORES):
    return st.dictionaries(
        st.sampled_from(QIDS), st.dictionaries(st.sampled_from(DOCS), scores, max_size=10), max_size=4
    )


def _qrels(labels):
    return st.dictionaries(
        st.sampled_from(QIDS), st.dictionaries(st.sampled_from(DOCS), labels, max_size=8), max_size=4
    )


def _scored(qrels, run):
    return [q for q in run if qrels.get(q) and run[q]]


def _in_trec_order(run):
    """Each ranking as trec_eval orders it, given strictly decreasing scores (positive: Compat's ideal
    puts a retrieved document before an unretrieved one of the same label only above score 0)."""
    return {q: {d: float(len(docs) - i) for i, d in enumerate(trec_order(docs))} for q, docs in run.items()}


# --- gdeval ---------------------------------------------------------------------------------------------


def _gdeval(tmp_path, qrels, run, k, max_rel=4, precise=True) -> dict[str, float]:
    """``{qid: err@k}`` printed by ir_measures' gdeval.pl (17 digits when ``precise``)."""
    script = pkgutil.get_data("ir_measures", "bin/gdeval.pl").decode()
    script = script.replace("$MAX_JUDGMENT = 4;", f"$MAX_JUDGMENT = {max_rel};")
    if precise:
        script = script.replace('"$runid,$topicCurrent,%.5f,%.5f\\n"', '"$runid,$topicCurrent,%.17g,%.17g\\n"')
    (tmp_path / "gdeval.pl").write_text(script)
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {v}\n" for q, docs in qrels.items() for d, v in docs.items()))
    lines = [f"{q} Q0 {d} 0 {float(np.float32(s))!r} run\n" for q, docs in run.items() for d, s in docs.items()]
    (tmp_path / "run").write_text("".join(lines))
    out = subprocess.check_output(
        ["perl", str(tmp_path / "gdeval.pl"), str(tmp_path / "qrels"), str(tmp_path / "run"), str(k)]
    )
    rows = [line.split(",") for line in out.decode().splitlines()[1:] if line]
    return {qid: float(err) for _, qid, _, err in rows}


def _ideal_run(qrels):
    return {q: {d: float(100 - i) for i, (d, _) in enumerate(sorted(((d, v) for d, v in docs.items() if v > 0),
                                                                     key=lambda x: -x[1]))}
            for q, docs in qrels.items() if any(v > 0 for v in docs.values())}  # fmt: skip


def _check_err(tmp_path, qrels, run, ks, max_rel=4) -> int:
    name = "" if max_rel == 4 else f"(max_rel={max_rel})"
    res = evaluate(qrels, run, ks, measures=[f"ERR{name}", f"nERR{name}"], preset="trec")
    checked = 0
    for k in ks:
        theirs = _gdeval(tmp_path, qrels, run, k, max_rel)
        ideal = _gdeval(tmp_path, qrels, _ideal_run(qrels), k, max_rel)
        for q, value in theirs.items():
            assert abs(res.per_query[f"ERR{name}@{k}"][q] - value) <= TOL, (q, k)
            assert abs(res.per_query[f"nERR{name}@{k}"][q] - value / ideal[q]) <= TOL, (q, k)
            checked += 2
    return checked


@needs_perl
@SLOW
@given(
    _qrels(st.sampled_from([-1, 0, 0, 1, 2, 3, 4])),
    _runs(),
    st.lists(st.integers(1, 12), min_size=1, max_size=2, unique=True),
)
def test_err_and_nerr_equal_gdeval_per_query(tmp_path_factory, qrels, run, ks):
    assume(_scored(qrels, run))
    _check_err(tmp_path_factory.mktemp("gd"), qrels, run, ks)


@needs_perl
@SLOW
@given(_qrels(st.sampled_from([0, 1, 3, 5, 6])), _runs())
def test_err_with_a_larger_top_grade_equals_gdeval_with_that_max_judgment(tmp_path_factory, qrels, run):
    assume(_scored(qrels, run))
    _check_err(tmp_path_factory.mktemp("gd"), qrels, run, [5, 20], max_rel=6)


@needs_perl
def test_err_equals_ir_measures_gdeval_provider_to_its_five_printed_decimals():
    import ir_measures

    qrels, run = _seeded(3, labels=4)
    measures = [ir_measures.parse_measure(f"ERR@{k}") for k in (1, 5, 20)]
    ours = evaluate(qrels, run, [1, 5, 20], measures=["ERR"], preset="trec")
    run32 = {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}
    seen = 0
    for metric in ir_measures.gdeval.iter_calc(measures, qrels, run32):
        assert abs(ours.per_query[str(metric.measure)][metric.query_id] - metric.value) <= 5e-6 + 1e-12
        seen += 1
    assert seen == 3 * 12


def test_a_grade_above_max_rel_is_an_error_naming_the_judgment_and_the_fix():
    with pytest.raises(InvalidLabelError, match=r"label 5 of document 'b' in query 'q'.*ERR\(max_rel=5\)@20"):
        evaluate({"q": {"a": 1, "b": 5}}, {"q": {"a": 1.0}}, [10], measures=["ERR"])
    res = evaluate(
        {"q": {"a": 1, "b": 5}}, {"q": {"b": 1.0, "a": 0.5}}, [1], measures=["ERR(max_rel=5)", "nERR(max_rel=5)"]
    )
    assert res.raw_means == {"ERR(max_rel=5)@1": 31 / 32, "nERR(max_rel=5)@1": 1.0}


# --- RBP and its residual: cwl_eval ------------------------------------------------------------------------


def _cwl_rbp(labels_in_order, p, rel=None):
    """cwl_eval's RBP and residual of one ranking (``None``: an unjudged document)."""
    from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
    from cwl.ruler.ranking import Ranking

    gains = [math.nan if v is None else (float(v >= rel) if rel is not None else max(float(v), 0.0))
             for v in labels_in_order]  # fmt: skip
    metric = RBPCWLMetric(p)
    metric.residuals = True
    metric.measure(Ranking("q", np.asarray(gains, np.float64), np.full(len(gains), np.nan)))
    return metric.expected_utility, metric.residual_expected_utility


@given(_qrels(st.sampled_from([-2, -1, 0, 0, 1, 2, 3])), _runs(), st.sampled_from([0.5, 0.8, 0.95]),
       st.sampled_from([None, 1, 2]), st.integers(1, 12))  # fmt: skip
def test_rbp_and_residual_equal_cwl_eval_per_query(qrels, run, p, rel, k):
    assume(_scored(qrels, run))
    params = ",".join(x for x in (f"p={p}", None if rel is None else f"rel={rel}") if x)
    names = [f"RBP({params})", f"RBP_residual({params})", f"RBP({params})@{k}", f"RBP_residual({params})@{k}"]
    res = evaluate(qrels, run, None, measures=names, preset="trec")
    names = [str(m) for m in res.measures]
    for q in _scored(qrels, run):
        ranking = [qrels[q].get(d) for d in trec_order(run[q])]
        for cut, (rbp_name, res_name) in ((None, names[:2]), (k, names[2:])):
            value, residual = _cwl_rbp(ranking[:cut], p, rel)
            assert abs(res.per_query[rbp_name][q] - value) <= TOL
            assert abs(res.per_query[res_name][q] - residual) <= TOL


@given(_qrels(st.sampled_from([-1, 0, 1, 2])), _runs(), st.sampled_from([0.5, 0.8]), st.sampled_from([1, 2]))
def test_binary_rbp_equals_ir_measures_rbp_through_its_cwl_provider(qrels, run, p, rel):
    import ir_measures

    assume(_scored(qrels, run))
    measure = ir_measures.parse_measure(f"RBP(rel={rel},p={p})")
    ours = evaluate(qrels, run, None, measures=[f"RBP(rel={rel},p={p})"], preset="trec")
    key = str(ours.measures[0])
    for metric in ir_measures.cwl_eval.iter_calc([measure], qrels, _in_trec_order(run)):
        if metric.query_id in ours.per_query[key]:
            assert abs(ours.per_query[key][metric.query_id] - metric.value) <= TOL


# --- infAP: pytrec_eval ------------------------------------------------------------------------------------


def _check_infap(qrels, run, level=1) -> float:
    judged = {q: d for q, d in qrels.items() if d and max(d.values()) >= 0}
    answered = {q: d for q, d in run.items() if d}
    if not judged or not answered:
        return 0.0
    theirs = pytrec_eval.RelevanceEvaluator(judged, {"infAP"}, relevance_level=level).evaluate(answered)
    ours = evaluate(qrels, run, None, measures=["infAP"], preset="trec", relevance_threshold=level)
    worst = 0.0
    for q, values in theirs.items():
        worst = max(worst, abs(ours.per_query["infAP"][q] - values["infAP"]))
    assert worst <= TOL
    return worst


@given(_qrels(st.sampled_from([-2, -2, -1, 0, 0, 1, 2, 3])), _runs(), st.sampled_from([1, 2]))
def test_infap_equals_pytrec_eval_per_query_with_sampled_judgments(qrels, run, level):
    assume(_scored(qrels, run))
    _check_infap(qrels, run, level)


# --- Compat: ir_measures -------------------------------------------------------------------------------------


@given(_qrels(st.sampled_from([-1, 0, 1, 1, 2, 3])), _runs(), st.sampled_from([0.5, 0.8, 0.95]))
def test_compat_equals_ir_measures_compatibility_per_query(qrels, run, p):
    from ir_measures.providers.compat_provider import compatibility

    assume(_scored(qrels, run))
    name = "Compat" if p == 0.95 else f"Compat(p={p})"
    ours = evaluate(qrels, run, None, measures=[name], preset="trec")
    ordered = _in_trec_order(run)
    for q in _scored(qrels, run):
        assert abs(ours.per_query[name][q] - compatibility(qrels[q], ordered[q], p, True)) <= TOL


# --- seeded and real runs -------------------------------------------------------------------------------------


def _seeded(seed, labels=3, n_queries=12, n_docs=300):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for qi in range(n_queries):
        docs = [f"d{x}" for x in rng.choice(n_docs, size=int(rng.integers(1, 120)), replace=False)]
        run[str(qi + 1)] = dict(zip(docs, (rng.integers(0, 9, size=len(docs)) / 8.0).tolist()))
        judged = rng.choice(n_docs, size=int(rng.integers(1, 80)), replace=False)
        qrels[str(qi + 1)] = {f"d{j}": int(rng.integers(-2, labels + 1)) for j in judged}
    return qrels, run


@needs_perl
def test_seeded_tie_heavy_runs_equal_every_oracle(tmp_path):
    checked = 0
    for seed in range(8):
        qrels, run = _seeded(seed)
        checked += _check_err(tmp_path, qrels, run, [5, 20, 1000])
        _check_infap(qrels, run)
        res = evaluate(qrels, run, None, measures=["RBP(p=0.9)", "RBP_residual(p=0.9)", "Compat"], preset="trec")
        ordered = _in_trec_order(run)
        from ir_measures.providers.compat_provider import compatibility

        for q in _scored(qrels, run):
            value, residual = _cwl_rbp([qrels[q].get(d) for d in trec_order(run[q])], 0.9)
            assert abs(res.per_query["RBP(p=0.9)"][q] - value) <= TOL
            assert abs(res.per_query["RBP_residual(p=0.9)"][q] - residual) <= TOL
            assert abs(res.per_query["Compat"][q] - compatibility(qrels[q], ordered[q], 0.95, True)) <= TOL
            checked += 3
    assert checked > 8 * 12 * 3


@needs_perl
def test_robust03_run_equals_gdeval_cwl_eval_pytrec_eval_and_ir_measures(data_dir, tmp_path):
    d = data_dir / "robust03"
    if not d.is_dir():
        pytest.skip("robust03 data absent")
    qrels, run = read_qrels(d / "robust03_cs_qrels.txt"), read_run(d / "input.uic0301")
    q, r = {k: dict(v) for k, v in qrels.data.items()}, {k: dict(v) for k, v in run.data.items()}
    assert _check_err(tmp_path, q, r, [10, 20]) == 100 * 2 * 2
    _check_infap(q, r)
    res = evaluate(qrels, run, None, measures=["RBP(rel=1)", "RBP_residual(rel=1)", "Compat"], preset="trec")
    from ir_measures.providers.compat_provider import compatibility

    ordered = _in_trec_order(r)
    for qid in r:
        value, residual = _cwl_rbp([q[qid].get(x) for x in trec_order(r[qid])], 0.8, rel=1)
        assert abs(res.per_query["RBP(rel=1)"][qid] - value) <= TOL
        assert abs(res.per_query["RBP_residual(rel=1)"][qid] - residual) <= TOL
        assert abs(res.per_query["Compat"][qid] - compatibility(q[qid], ordered[qid], 0.95, True)) <= TOL


# --- names, parameters and the CLI --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written,name",
    [
        ("RBP(rel=1,p=0.8)", "RBP(rel=1)"),
        ("RBP(p=0.8)", "RBP"),
        ("rbp(p=0.9, rel=2)@10", "RBP(p=0.9,rel=2)@10"),
        ("RBP_residual(rel=1)", "RBP_residual(rel=1)"),
        ("ERR@20", "ERR@20"),
        ("err(max_grade=4)@20", "ERR@20"),
        ("ERR(max_rel=3)@5", "ERR(max_rel=3)@5"),
        ("nERR@20", "nERR@20"),
        ("inf_ap", "infAP"),
        ("Compat(p=0.95)", "Compat"),
        ("compat(p=0.8)", "Compat(p=0.8)"),
    ],
)
def test_names_as_ir_measures_spells_them_parse_to_one_canonical_name(written, name):
    from haystack_irmetrics.core.measures import parse_measure

    assert str(parse_measure(written)) == name
    assert parse_measure(name) == parse_measure(written)


@pytest.mark.parametrize(
    "bad",
    [
        "RBP(p=1)",
        "RBP(p=0)",
        "RBP(p=nan)",
        "RBP(rel=x)",
        "RBP(p=0.5,p=0.6)",
        "RBP(beta=2)",
        "ERR(max_rel=0)@5",
        "ERR(max_rel=inf)@5",
        "ERR(max_rel=2000)@5",
        "Compat(rel=1)",
        "infAP@10",
        "nERR",
    ],
)
def test_bad_parameters_are_typed_errors(bad):
    from haystack_irmetrics.core.measures import parse_measure
    from haystack_irmetrics.errors import InvalidCutoffError

    with pytest.raises((UnknownMeasureError, InvalidCutoffError)):
        parse_measure(bad)


def test_cli_measures_with_commas_inside_parentheses(tmp_path, capsys):
    from haystack_irmetrics.cli.app import main

    (tmp_path / "qrels").write_text("1 0 a 2\n1 0 b 0\n1 0 c 1\n")
    (tmp_path / "run").write_text("1 Q0 b 1 3.0 r\n1 Q0 x 2 2.0 r\n1 Q0 a 3 1.0 r\n")
    code = main(["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "RBP(rel=1,p=0.8),ERR@20,infAP",
                 "--preset", "trec", "--format", "json"])  # fmt: skip
    assert code in (0, None)
    import json

    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"RBP(rel=1)", "ERR@20", "infAP"}
    assert out["RBP(rel=1)"] == pytest.approx(0.2 * 0.8**2)
    assert out["ERR@20"] == pytest.approx(3 / 16 / 3)


def test_the_report_lists_the_user_measures_and_the_lowest_residual_is_best():
    from haystack_irmetrics.report.data import build_report

    qrels = {"1": {"a": 2, "b": 0, "c": 1}, "2": {"x": 1}}
    runs = {"judged": {"1": {"a": 3.0, "c": 2.0}, "2": {"x": 1.0}}, "unjudged": {"1": {"u": 3.0}, "2": {"v": 1.0}}}
    names = ["ERR@20", "RBP(rel=1)", "RBP_residual(rel=1)", "infAP", "Compat"]
    data = build_report(runs, qrels, measures=names, preset="trec", significance=False)
    assert set(names) <= set(data.means["judged"])
    assert (
        data.best("RBP_residual(rel=1)")
        == data.means["judged"]["RBP_residual(rel=1)"]
        == pytest.approx((0.8**2 + 0.8) / 2)
    )
    assert data.best("RBP(rel=1)") == data.means["judged"]["RBP(rel=1)"]


@needs_perl
def test_the_benchmark_runs_beside_every_reference_tool_with_equal_values(tmp_path):
    import sys

    from tests.conftest import ROOT

    out = tmp_path / "user_measures.md"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "user_measures.py"), "--quick", "--repeat", "1", "--out", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [
        line.split("|")[1:-1] for line in out.read_text().splitlines() if line.startswith("| ") and "---" not in line
    ]
    rows = rows[1:]  # the header
    assert {r[2].strip() for r in rows} >= {
        "gdeval.pl (perl, files)",
        "cwl_eval RBPCWLMetric",
        "pytrec_eval",
        "pyndeval",
    }
    assert all(float(r[-1]) <= TOL for r in rows), rows  # max |diff| per query, every workload


def test_an_unanswered_query_averaged_in_leaves_the_whole_rbp_residual_open():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    res = evaluate(qrels, {"q1": {"a": 1.0}}, None, measures=["RBP", "RBP_residual"], missing_queries="zero")
    assert res.per_query["RBP_residual"] == {"q1": 0.8, "q2": 1.0}
    assert res.per_query["RBP"] == {"q1": pytest.approx(0.2), "q2": 0.0}
    assert res.raw_means["RBP_residual"] == 0.9


def test_the_evaluator_component_scores_the_user_measures_as_evaluate_does():
    from haystack import Document

    from haystack_irmetrics.components import IRMetricsEvaluator

    gold = [[Document(id="d1", score=1.0), Document(id="d3", score=2.0)], [Document(id="d2", score=1.0)]]
    retrieved = [[Document(id="d1"), Document(id="d2"), Document(id="d3")], [Document(id="d4"), Document(id="d2")]]
    names = ["ERR", "nERR", "RBP(rel=1)", "RBP_residual(rel=1)", "infAP", "Compat"]
    out = IRMetricsEvaluator(metrics=names, k_values=[3], preset="trec").run(gold, retrieved)
    ranked = {"0": ["d1", "d2", "d3"], "1": ["d4", "d2"]}
    expected = evaluate({"0": {"d1": 1, "d3": 2}, "1": {"d2": 1}}, ranked, [3], measures=names, preset="trec")
    assert out["means"] == expected.means
    assert out["means"]["ERR@3"] == pytest.approx((1 / 16 + (15 / 16) * (3 / 16) / 3) / 2 + (1 / 16 / 2) / 2)
