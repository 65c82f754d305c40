"""Cross-checks of the measures beyond BEIR's six against pytrec_eval-terrier, beir 2.2.0 and trec_eval's outputs.

pytrec_eval-terrier 0.5.11 embeds trec_eval 9.0.8. Two quirks of the oracle shape these tests:

* its Python wrapper mangles trec_eval's gain parameters (``"ndcg.1=3,2=9"`` becomes ``"ndcg.1"``), so
  custom-gain NDCG calls the C extension ``pytrec_eval_ext`` directly;
* a query whose judgments are all negative leaves trec_eval's per-query cache inconsistent (its
  relevance-level count is not reset), after which pytrec_eval can crash or loop; such queries score 0
  everywhere (GMAP: the floor) by definition here and are left out of the oracle's qrels;
* a query with an empty ranking can crash pytrec_eval when several of these measures are asked together
  (and ``iprec_at_recall`` is NaN there, 0 / 0 in trec_eval); we report 0 (GMAP: the floor) and leave
  such queries out of the oracle's run.

trec_eval's own expected outputs (``../shared/data/trec_eval_test/out.test*``) come from trec_eval 10,
which turns a recall level into a count of relevant documents with ``lround(level * R)`` instead of 9's
``(long)(level * R + 0.9)``; iP and iP_avg match them with the kernel's ``cut_rule="round"``.
"""

from __future__ import annotations

import copy
import functools
import math
import sys

import numpy as np
import pytest
import pytrec_eval
import pytrec_eval_ext
from beir.retrieval.custom_metrics import hole, top_k_accuracy
from hypothesis import assume, given
from hypothesis import strategies as st

from haystack_irmetrics import evaluate
from haystack_irmetrics.core import kernels
from haystack_irmetrics.core.measures import STANDARD_LEVELS, parse_measure
from haystack_irmetrics.io import read_qrels, read_run
from tests import strategies as S
from tests.oracles import trec_order, without_identical_ids
from tests.test_differential import _seeded_case
from tests.test_real_data import parse_trec_eval_output

TOL = 1e-12
ODD_LEVELS = (0.05, 0.25, 0.34, 0.75)
GAINS = {0: 0, 1: 1, 2: 3, 3: 7}  # also the exponential form 2^rel - 1 on grades 0..3
TREC_MEASURES = ["Rprec", "bpref", "GMAP", "iP", "iP_avg", "F", "F(beta=2)", "F(beta=0.5)"]


def _scored(qrels, results):
    return [q for q in results if qrels.get(q)]


def _ours(qrels, results, ks, level=1, preset="trec"):
    ms = [*TREC_MEASURES, *(f"iP@{x}" for x in ODD_LEVELS), "Success", "nDCG(gains={0:0,1:1,2:3,3:7})@1000"]
    ms += ["nDCG_exp@1000", "nDCG(gains={1:3,2:9,4:4.5})@1000"]
    return evaluate(qrels, results, ks, measures=ms, preset=preset, relevance_threshold=level)


def _pytrec(qrels, results, ks, level=1):
    """Per query, every trec_eval measure the new families are checked against."""
    judged = {q: d for q, d in qrels.items() if d and max(d.values()) >= 0}
    results = {q: d for q, d in results.items() if d}
    if not judged or not results:
        return {}
    levels = ",".join(str(x) for x in (*STANDARD_LEVELS, *ODD_LEVELS))
    measures = {
        "Rprec",
        "bpref",
        "gm_map",
        "11pt_avg",
        f"iprec_at_recall.{levels}",
        f"success.{','.join(map(str, ks))}",
    }
    out = pytrec_eval.RelevanceEvaluator(judged, measures, relevance_level=level).evaluate(results)
    for x, suffix in ((1.0, ""), (4.0, "_b2"), (0.25, "_b05")):  # trec_eval's set_F parameter is beta^2
        ev = pytrec_eval.RelevanceEvaluator(judged, {f"set_F.{x}"}, relevance_level=level)
        for q, v in ev.evaluate(results).items():
            out[q]["set_F" + suffix] = v["set_F"]
    for gains, key in (("0=0,1=1,2=3,3=7", "ndcg_g"), ("1=3,2=9,4=4.5", "ndcg_g2")):
        ev = pytrec_eval_ext.RelevanceEvaluator(judged, {f"ndcg.{gains}"}, level, False)
        for q, v in ev.evaluate(results).items():
            out[q][key] = v["ndcg"]
    return out


def _check_trec(res, oracle, ks, exp_form: bool = True) -> int:
    """Compare per query; ``exp_form``: the labels are grades 0..3, where 2^rel - 1 is the map {1:1, 2:3, 3:7}."""
    pairs = {"Rprec": "Rprec", "bpref": "bpref", "iP_avg": "11pt_avg", "F": "set_F", "F(beta=2)": "set_F_b2"}
    pairs |= {"F(beta=0.5)": "set_F_b05", "nDCG(gains={0:0,1:1,2:3,3:7})@1000": "ndcg_g"}
    if exp_form:
        pairs["nDCG_exp@1000"] = "ndcg_g"
    pairs |= {"nDCG(gains={1:3,2:9,4:4.5})@1000": "ndcg_g2"}
    pairs |= {f"iP@{x!r}": f"iprec_at_recall_{x:.2f}" for x in (*STANDARD_LEVELS, *ODD_LEVELS)}
    pairs |= {f"Success@{k}": f"success_{k}" for k in ks}
    checked = 0
    for q, values in oracle.items():
        for ours, theirs in pairs.items():
            if theirs not in values or math.isnan(values[theirs]):
                continue
            assert abs(res.per_query[ours][q] - values[theirs]) <= TOL, (
                ours,
                q,
                res.per_query[ours][q],
                values[theirs],
            )
            checked += 1
        # gm_map per query is log(max(AP, 0.00001)); we keep max(AP, 0.00001).
        assert math.log(res.per_query["GMAP"][q]) == values["gm_map"]
        checked += 1
    return checked


def _truncated(results, k):
    """Each query's top k in trec_eval's order, with strictly decreasing scores (order kept)."""
    return {q: {d: float(k - i) for i, d in enumerate(trec_order(docs)[:k])} for q, docs in results.items()}


@given(S.qrels(), S.runs(), S.k_values, st.sampled_from([1, 2]), st.sampled_from([1.0, 2.0, 0.5]))
def test_per_query_values_equal_pytrec_eval_and_means_equal_beir(qrels, results, ks, level, beta):
    """One generated case, every oracle (generation dominates the cost, so the checks share it)."""
    assume(_scored(qrels, results))
    # trec preset: Rprec, bpref, gm_map, iprec_at_recall, 11pt_avg, success, set_F, ndcg with gains.
    _check_trec(_ours(qrels, results, ks, level), _pytrec(qrels, results, ks, level), ks)
    # BEIR preset: the same trec_eval path on the run without identical ids (success is BEIR's there).
    oracle = _pytrec(qrels, without_identical_ids(results), ks)
    oracle = {q: {k: v for k, v in vs.items() if not k.startswith("success")} for q, vs in oracle.items()}
    _check_trec(_ours(qrels, results, ks, preset="beir"), oracle, [])
    # F@k is set_F on the run cut at k (trec_eval's parameter is beta^2).
    names = {k: str(parse_measure(f"F(beta={beta})@{k}")) for k in ks}
    ones = {q: dict.fromkeys(d, 1) for q, d in qrels.items() if d}
    res = evaluate(qrels, results, ks, measures=[*names.values(), "Judged"], preset="trec")
    answered = {q: d for q, d in results.items() if d}  # see the module docstring
    judged = {q: d for q, d in qrels.items() if d and max(d.values()) >= 0}
    if judged:
        ev = pytrec_eval.RelevanceEvaluator(judged, {f"set_F.{beta * beta}"})
        for k in ks:
            for q, v in ev.evaluate(_truncated(answered, k)).items():
                assert res.per_query[names[k]][q] == v["set_F"]
    # Judged@k is P@k with every judged document relevant (no negative label left: no trec_eval crash).
    p_at = pytrec_eval.RelevanceEvaluator(ones, {f"P.{','.join(map(str, ks))}"}).evaluate(answered)
    for k in ks:
        assert {q: res.per_query[f"Judged@{k}"][q] for q in p_at} == {q: v[f"P_{k}"] for q, v in p_at.items()}
    # Hole: beir custom_metrics.hole on the run evaluate() trimmed, mean for mean.
    expected = hole(copy.deepcopy(qrels), without_identical_ids(results), ks)
    assert evaluate(qrels, results, ks, measures=["Hole"]).means == expected


@given(S.beir_safe(), S.k_values)
def test_success_means_equal_beir_top_k_accuracy_exactly(case, ks):
    qrels, results = case
    expected = top_k_accuracy(copy.deepcopy(qrels), without_identical_ids(results), ks)
    means = evaluate(qrels, results, ks, measures=["Success"]).means
    assert {name.replace("Success", "Accuracy"): v for name, v in means.items()} == expected


@pytest.mark.parametrize(
    "n_judged,n_values",
    [(3, 5), (40, 3), (40, 1000), (300, 10)],
    ids=["few-judged", "many-judged-sorted-path", "many-judged-few-ties", "heavy-ties"],
)
def test_larger_seeded_runs_equal_pytrec_eval_on_every_counting_path(n_judged, n_values):
    qrels, results = _seeded_case(n_judged * 31 + n_values, 12, 300, n_judged, n_values)
    ks = [1, 10, 100, 1000]
    # 12 queries x (Rprec, bpref, GMAP, iP_avg, 15 iP, 3 F, 3 NDCG gain forms, 4 Success) per query.
    assert _check_trec(_ours(qrels, results, ks), _pytrec(qrels, results, ks), ks) == 12 * 29


def _trec_eval_test(data_dir):
    d = data_dir / "trec_eval_test"
    if not d.is_dir():
        pytest.skip("trec_eval_test data absent")
    return d


@pytest.mark.parametrize("qrels_name,level", [("qrels.test", 1), ("qrels.rel_level", 2)])
def test_trec_eval_test_files_equal_pytrec_eval_bit_for_bit(data_dir, qrels_name, level):
    d = _trec_eval_test(data_dir)
    qrels, run = read_qrels(d / qrels_name), read_run(d / "results.test")
    q, r = dict(qrels.data), dict(run.data)
    ks = [1, 5, 10, 20, 1000]
    checked = _check_trec(_ours(qrels, run, ks, level), _pytrec(q, r, ks, level), ks, exp_form=level == 1)
    assert checked == 3 * (24 + len(ks) + (level == 1))


TREC_EVAL_NAMES = {
    "Rprec": "Rprec",
    "bpref": "bpref",
    "gm_map": "GMAP",
    "success_1": "Success@1",
    "success_5": "Success@5",
    "success_10": "Success@10",
    "set_F": "F",
    "ndcg": "NDCG@100000",
    "11pt_avg": "iP_avg",
    **{f"iprec_at_recall_{x:.2f}": f"iP@{x!r}" for x in STANDARD_LEVELS},
}


@pytest.mark.parametrize(
    "output,qrels_name,run_name,policy",
    [
        ("out.test.aq", "qrels.test", "results.test", {}),
        ("out.test.aql", "qrels.rel_level", "results.test", {"relevance_threshold": 2}),
        ("out.test.aqc", "qrels.test", "results.trunc", {"missing_queries": "zero"}),
    ],
)
def test_trec_eval_expected_outputs(data_dir, monkeypatch, output, qrels_name, run_name, policy):
    """Every value of these measures in trec_eval's own -q outputs, to its 4 printed decimals.

    iP and iP_avg use trec_eval 10's rounding of level * R there (see the module docstring).
    """
    d = _trec_eval_test(data_dir)
    evaluate_module = sys.modules["haystack_irmetrics.core.scoring"]
    monkeypatch.setattr(evaluate_module, "iprec_kernel", functools.partial(kernels.iprec_kernel, cut_rule="round"))
    qrels, run = read_qrels(d / qrels_name), read_run(d / run_name)
    res = evaluate(qrels, run, None, measures=list(TREC_EVAL_NAMES.values()), preset="trec", **policy)
    expected = parse_trec_eval_output(d / output)
    checked = 0
    for trec_name, ours in TREC_EVAL_NAMES.items():
        for qid, value in expected[trec_name].items():
            if qid == "all":
                assert res.raw_means[ours] == pytest.approx(value, abs=5e-5), ours
            else:  # gm_map is printed for "all" only
                assert res.per_query[ours][qid] == pytest.approx(value, abs=5e-5), (ours, qid)
            checked += 1
    assert checked == 19 * 4 + 1


def test_trec_eval_cut_rule_is_what_separates_pytrec_eval_from_trec_eval_10(data_dir):
    d = _trec_eval_test(data_dir)
    res = evaluate(read_qrels(d / "qrels.test"), read_run(d / "results.test"), None, measures=["iP@0.6"], preset="trec")
    # Query 302: R = 77, 0.6 * 77 = 46.2 -> trec_eval 9 looks at the 47th relevant, trec_eval 10 the 46th.
    assert round(res.per_query["iP@0.6"]["302"], 4) == 0.1420
    assert parse_trec_eval_output(d / "out.test.aq")["iprec_at_recall_0.60"]["302"] == 0.1528


def test_trec_eval_custom_gains_and_parameterised_cutoffs(data_dir, monkeypatch):
    """out.test.meas_params: ndcg.1=3,2=9,4=4.5, success.2,5,20 and iprec_at_recall.10,.20,.25,.50,.75."""
    d = _trec_eval_test(data_dir)
    evaluate_module = sys.modules["haystack_irmetrics.core.scoring"]
    monkeypatch.setattr(evaluate_module, "iprec_kernel", functools.partial(kernels.iprec_kernel, cut_rule="round"))
    names = {"ndcg_1=3,2=9,4=4.5": "nDCG(gains={1:3,2:9,4:4.5})@100000"}
    names |= {f"success_{k}": f"Success@{k}" for k in (2, 5, 20)}
    names |= {f"iprec_at_recall_{x:.2f}": f"iP@{x}" for x in (0.1, 0.2, 0.25, 0.5, 0.75)}
    res = evaluate(read_qrels(d / "qrels.test"), read_run(d / "results.test"), None, measures=list(names.values()),
                   preset="trec")  # fmt: skip
    expected = parse_trec_eval_output(d / "out.test.meas_params")
    for trec_name, ours in names.items():
        for qid, value in expected[trec_name].items():
            got = res.raw_means[ours] if qid == "all" else res.per_query[ours][qid]
            assert got == pytest.approx(value, abs=5e-5), (ours, qid)


def test_robust03_new_measures_equal_pytrec_eval_per_query(data_dir):
    d = data_dir / "robust03"
    if not d.is_dir():
        pytest.skip("robust03 data absent")
    qrels, run = read_qrels(d / "robust03_cs_qrels.txt"), read_run(d / "input.uic0301")
    ks = [1, 10, 100]
    checked = _check_trec(_ours(qrels, run, ks), _pytrec(dict(qrels.data), dict(run.data), ks), ks, exp_form=False)
    assert checked == 100 * (24 + len(ks))


def test_max_abs_difference_summary_is_zero_on_seeded_inputs():
    """The number the README quotes: max |ours - pytrec_eval| per query over seeded random inputs."""
    worst = 0.0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        qrels, results = {}, {}
        for qi in range(10):
            docs = [f"d{x}" for x in rng.choice(200, size=int(rng.integers(1, 60)), replace=False)]
            results[f"q{qi}"] = dict(zip(docs, (rng.integers(0, 8, size=len(docs)) / 7.0).tolist()))
            judged = rng.choice(200, size=int(rng.integers(1, 40)), replace=False)
            qrels[f"q{qi}"] = {f"d{j}": int(rng.integers(0, 4)) for j in judged}
        ks = [1, 5, 10]
        res, oracle = _ours(qrels, results, ks), _pytrec(qrels, results, ks)
        for q, values in oracle.items():
            worst = max(worst, abs(res.per_query["bpref"][q] - values["bpref"]))
            worst = max(worst, abs(res.per_query["iP_avg"][q] - values["11pt_avg"]))
            worst = max(worst, abs(math.log(res.per_query["GMAP"][q]) - values["gm_map"]))
        _check_trec(res, oracle, ks)
    assert worst == 0.0


def test_where_we_deliberately_differ_trec_eval_sorts_gains_closer_than_1_as_equal():
    """trec_eval's qsort comparator returns int(g1 - g2): gains 1.5 and 1.2 tie, the ideal comes out 1.2, 1.5."""
    qrels, results = {"q": {"a": 1, "b": 2}}, {"q": {"a": 2.0, "b": 1.0}}
    theirs = pytrec_eval_ext.RelevanceEvaluator(qrels, {"ndcg.1=1.5,2=1.2"}, 1, False).evaluate(results)
    assert theirs["q"]["ndcg"] == pytest.approx((1.5 + 1.2 / math.log2(3)) / (1.2 + 1.5 / math.log2(3)))  # > 1
    ours = evaluate(qrels, results, None, measures=["nDCG(gains={1:1.5,2:1.2})@10"], preset="trec")
    assert ours.raw_means["nDCG(gains={1:1.5,2:1.2})@10"] == 1.0
