"""The measures beyond BEIR's six: textbook worked examples, definitions on small cases, names, errors."""

from __future__ import annotations

import json
import math

import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import main
from haystack_irmetrics.core.measures import MIN_GEO_MEAN, Measure, parse_measure, resolve_measures
from haystack_irmetrics.errors import DuplicateCutoffError, InvalidCutoffError, UnknownMeasureError


def ranked(labels: list[float], extra: dict[str, float] | None = None, q: str = "q"):
    """One query whose documents d0, d1, ... are returned in that order with these labels (None = unjudged)."""
    docs = [f"d{i}" for i in range(len(labels))]
    judged = {d: lab for d, lab in zip(docs, labels, strict=True) if lab is not None}
    results = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)}}
    return {q: judged | (extra or {})}, results


def one(qrels, results, name, **kw):
    res = evaluate(qrels, results, None, measures=[name], **kw)
    return res.per_query[parse_measure(name).name]["q"]


# Textbook worked examples (IIR, CS276 and UCD slides, Wikipedia, a blog post), each naming its DCG form.


def test_lecture_r_precision_six_relevant_four_in_the_top_six_is_0_6667():
    # Relevant at ranks 1, 2, 4, 6 and 13; the sixth relevant document is never retrieved.
    labels = [1 if r in (1, 2, 4, 6, 13) else 0 for r in range(1, 15)]
    qrels, results = ranked(labels, {"missing": 1})
    assert one(qrels, results, "Rprec") == 4 / 6
    assert round(one(qrels, results, "Rprec"), 4) == 0.6667


def test_cs276_jk_ndcg4_of_ranking_2_1_2_0_against_2_2_1_0_is_0_9203():
    # Järvelin-Kekäläinen form: rel_1 + sum_{i>=2} rel_i / log2 i.
    qrels, results = ranked([2, 1, 2, 0])
    value = one(qrels, results, "nDCG_jk@4")
    assert value == pytest.approx((2 + 1 + 2 / math.log2(3)) / (2 + 2 + 1 / math.log2(3)))
    assert round(value, 4) == 0.9203


def test_lecture_g_vector_ndcg10_in_all_three_forms():
    gains = [1, 0, 1, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 3]
    extra = {"x1": 3, "x2": 2, "x3": 2, "x4": 1, "x5": 1}  # ideal (3,3,3,2,2,2,1,1,1,1)
    qrels, results = ranked(gains, extra)
    assert round(one(qrels, results, "nDCG_jk@10"), 4) == 0.2868  # slides: 0.29
    assert round(one(qrels, results, "NDCG@10"), 4) == 0.3153  # linear (trec/BEIR)
    ideal = [3, 3, 3, 2, 2, 2, 1, 1, 1, 1]
    exp_dcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains[:10]))
    exp_idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    assert one(qrels, results, "nDCG_exp@10") == pytest.approx(exp_dcg / exp_idcg, abs=1e-15)
    assert round(exp_dcg / exp_idcg, 4) == 0.2470


def test_wikipedia_example_in_exponential_form():
    qrels, results = ranked([3, 2, 3, 0, 1, 2], {"x1": 3, "x2": 2})
    dcg = 7 + 3 / math.log2(3) + 7 / 2 + 0 + 1 / math.log2(6) + 3 / math.log2(7)
    idcg = 7 + 7 / math.log2(3) + 7 / 2 + 3 / math.log2(5) + 3 / math.log2(6) + 3 / math.log2(7)
    assert one(qrels, results, "nDCG_exp@6") == pytest.approx(dcg / idcg, abs=1e-15)
    assert round(dcg / idcg, 4) == 0.7511
    # The custom gain map {1: 1, 2: 3, 3: 7} is the exponential form on integer grades.
    assert one(qrels, results, "nDCG(gains={1:1,2:3,3:7})@6") == pytest.approx(dcg / idcg, abs=1e-15)


def test_gmap_punishes_a_near_zero_query_that_map_averages_away():
    # The lecture's point with APs 1, 1/2, 1/4 and 0 (0 is floored at trec_eval's 0.00001).
    qrels = {"a": {"a0": 1}, "b": {"b1": 1}, "c": {"c3": 1}, "z": {"z9": 1}}
    results = {q: {f"{q}{i}": 10.0 - i for i in range(4)} for q in qrels}
    res = evaluate(qrels, results, None, measures=["GMAP", "MAP@1000"], preset="trec")
    assert res.per_query["GMAP"] == {"a": 1.0, "b": 0.5, "c": 0.25, "z": MIN_GEO_MEAN}
    expected = math.exp((math.log(1.0) + math.log(0.5) + math.log(0.25) + math.log(MIN_GEO_MEAN)) / 4)
    assert res.raw_means["GMAP"] == pytest.approx(expected, rel=1e-15)
    assert round(res.raw_means["GMAP"], 4) == 0.0334
    assert res.raw_means["MAP@1000"] == pytest.approx(1.75 / 4)


def test_gmap_counts_an_unanswered_query_at_the_floor_under_missing_queries_zero():
    qrels = {"a": {"a0": 1}, "b": {"b0": 1}}
    res = evaluate(qrels, {"a": {"a0": 1.0}}, None, measures=["GMAP"], preset="trec", missing_queries="zero")
    assert res.per_query["GMAP"] == {"a": 1.0, "b": MIN_GEO_MEAN}
    assert res.raw_means["GMAP"] == pytest.approx(math.sqrt(MIN_GEO_MEAN))


# Definitions on small cases.


def test_f_measure_uses_the_retrieved_set_cut_at_k():
    qrels, results = ranked([1, 0, 1, None, 0], {"x": 1})  # R = 3; 5 retrieved
    P, R = 2 / 5, 2 / 3
    assert one(qrels, results, "F") == pytest.approx(2 * P * R / (P + R))
    P3, R3 = 2 / 3, 2 / 3
    assert one(qrels, results, "F@3") == pytest.approx(2 * P3 * R3 / (P3 + R3))
    # At k = 10 only 5 are retrieved: precision is over the retrieved set (set_F), not over k.
    assert one(qrels, results, "F@10") == one(qrels, results, "F")
    b = 2.0
    assert one(qrels, results, "F(beta=2)@3") == pytest.approx((1 + b * b) * P3 * R3 / (b * b * P3 + R3))
    assert one(qrels, results, "F@1") == 2 * 1.0 * (1 / 3) / (1.0 + 1 / 3)
    assert one(*ranked([0, 0, 1]), "F@2") == 0.0


def test_success_is_a_hit_rate_and_beir_accuracy_in_the_beir_preset():
    qrels, results = ranked([0, None, 1])
    assert [one(qrels, results, f"Success@{k}") for k in (1, 2, 3)] == [0.0, 0.0, 1.0]
    # BEIR's top_k_acc: relevant is > 0, and an unanswered qrels query counts 0.
    qrels = {"q": {"d0": 0.5}, "unanswered": {"x": 1}}
    res = evaluate(qrels, {"q": {"d0": 1.0}}, [1], measures=["Success"])
    assert res.means["Success@1"] == 0.5 and res.n_queries["Success@1"] == 2
    assert evaluate(qrels, {"q": {"d0": 1.0}}, [1], measures=["Success"], preset="trec").means["Success@1"] == 0.0


def test_judged_counts_any_label_and_divides_by_k():
    qrels, results = ranked([-1, None, 0, 2])
    assert [one(qrels, results, f"Judged@{k}") for k in (1, 2, 4, 10)] == [1.0, 0.5, 0.75, 0.3]


def test_hole_is_a_document_judged_for_no_query_at_all():
    qrels = {"q": {"d0": 1}, "other": {"d1": 0}}
    results = {"q": {"d0": 3.0, "d1": 2.0, "d2": 1.0}}
    res = evaluate(qrels, results, [1, 2, 3, 5], measures=["Hole", "Judged"], preset="trec")
    # d1 is judged only for "other": not a hole (BEIR's annotated corpus), but not judged for q.
    assert [res.per_query[f"Hole@{k}"]["q"] for k in (1, 2, 3, 5)] == [0.0, 0.0, 1 / 3, 1 / 5]
    assert res.per_query["Judged@3"]["q"] == 1 / 3


def test_beir_hole_sums_unjudged_results_queries_but_divides_by_len_qrels():
    qrels = {"q": {"d0": 1}}
    results = {"q": {"d0": 2.0, "x": 1.0}, "unjudged": {"y": 1.0}}
    res = evaluate(qrels, results, [1, 2], measures=["Hole"])
    assert res.per_query["Hole@1"] == {"q": 0.0, "unjudged": 1.0}
    assert res.n_queries["Hole@1"] == 1
    assert res.means == {"Hole@1": 1.0, "Hole@2": 1.0}  # BEIR's own numbers
    # Summed over two queries, divided by one: BEIR's Hole can pass 1.
    assert evaluate(qrels, {**results, "u2": {"z": 1.0}}, [1], measures=["Hole"]).means["Hole@1"] == 2.0
    trec = evaluate(qrels, results, [1, 2], measures=["Hole"], preset="trec")
    assert trec.means == {"Hole@1": 0.0, "Hole@2": 0.5}


def test_bpref_caps_nonrelevant_counts_at_r_and_skips_negative_labels():
    # R = 2 relevant, N = 3 judged nonrelevant; -1 is "unjudged in pool" and ignored.
    qrels, results = ranked([0, -1, 1, 0, 0, 1], {"n3": 0})
    # first relevant: 1 nonrelevant above -> 1 - 1/min(3, 2); second: 3 above -> 1 - min(3, 2)/2
    assert one(qrels, results, "bpref") == ((1 - 1 / 2) + (1 - 2 / 2)) / 2
    assert one(*ranked([1, 0, 1]), "bpref") == (1 + (1 - 1 / 1)) / 2


def test_interpolated_precision_cut_rule_of_trec_eval_9():
    # Relevant at ranks 1, 4, 6 of R = 3: precisions 1, 1/2, 1/2. Level 0.4: c = int(0.4 * 3 + 0.9) = 2.
    qrels, results = ranked([1, 0, 0, 1, 0, 1])
    assert one(qrels, results, "iP@0.4") == 0.5
    assert one(qrels, results, "iP@0.1") == 1.0 and one(qrels, results, "iP@0.0") == 1.0
    res = evaluate(qrels, results, None, measures=["iP", "iP_avg"], preset="trec")
    points = [res.per_query[f"iP@{x}"]["q"] for x in ("0.0", "0.1", "0.2", "0.3", "0.4", "0.5")]
    assert points == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5]
    assert res.per_query["iP_avg"]["q"] == pytest.approx((4 * 1.0 + 7 * 0.5) / 11)
    assert one(*ranked([0, 1], {"x": 1}), "iP@1.0") == 0.0  # 100% recall never reached


# Names and the places that accept them.


def test_the_issue_names_parse_and_print_round_trip():
    names = ["nDCG@10", "nDCG_exp@10", "P@5", "R_cap@100", "MRR@10", "Rprec", "iP@0.3", "Judged@10"]
    canonical = ["NDCG@10", "nDCG_exp@10", "P@5", "R_cap@100", "MRR@10", "Rprec", "iP@0.3", "Judged@10"]
    assert [str(parse_measure(n)) for n in names] == canonical
    assert Measure("NDCG", 10, gain="exp") == parse_measure("nDCG_exp@10")
    assert Measure("iP", level=0.3) == parse_measure("iP@0.3") == Measure("iP", 0.3)
    assert Measure("Rprec") == parse_measure("Rprec")
    assert str(Measure("NDCG", 10, gain={2: 3, 1: 1, 0: 0})) == "nDCG(gains={0:0,1:1,2:3})@10"
    assert str(Measure("NDCG", 5, gain="exp", discount="jk")) == "nDCG_exp_jk@5"


def test_bare_names_cross_with_k_values_or_cover_the_whole_ranking():
    ms = [str(m) for m in resolve_measures(["nDCG_exp", "Rprec", "F", "GMAP", "iP"], [5, 10])]
    assert ms[:4] == ["nDCG_exp@5", "nDCG_exp@10", "Rprec", "F"]
    assert ms[4:6] == ["GMAP", "iP@0.0"] and ms[-1] == "iP@1.0" and len(ms) == 16
    assert [str(m) for m in resolve_measures(None, [10])] == [
        "NDCG@10",
        "MAP@10",
        "Recall@10",
        "P@10",
        "MRR@10",
        "R_cap@10",
    ]


@pytest.mark.parametrize(
    "name,error,match",
    [
        ("Rprec@10", InvalidCutoffError, "takes no cutoff"),
        ("bpref@5", InvalidCutoffError, "takes no cutoff"),
        ("iP@1.5", InvalidCutoffError, r"in \[0, 1\]"),
        ("iP@-0.1", InvalidCutoffError, r"in \[0, 1\]"),
        ("NDCG@2.5", InvalidCutoffError, "whole number >= 1"),
        ("P@0", InvalidCutoffError, "whole number >= 1"),
        ("nDCG(gains={1:-1})@10", UnknownMeasureError, ">= 0"),
        ("nDCG(gains={1:2,1:3})@10", UnknownMeasureError, "twice"),
        ("nDCG(gains={a:1})@10", UnknownMeasureError, "not a number"),
        ("nDCG(gain=cubic)@10", UnknownMeasureError, "gain must be"),
        ("nDCG(discount=ln)@10", UnknownMeasureError, "discount must be"),
        ("F(beta=0)@10", UnknownMeasureError, r"beta must be a number in \(1e-150, 1e150\)"),
        ("P(beta=2)@10", UnknownMeasureError, "takes no parameter"),
        ("NDCG(colour=red)@10", UnknownMeasureError, "unknown parameter"),
        ("NDCG(gain)@10", UnknownMeasureError, "key=value"),
        ("Hit@10@", UnknownMeasureError, "cannot parse"),
        ("BLEU@4", UnknownMeasureError, "unknown measure"),
    ],
)
def test_bad_names_raise_typed_errors(name, error, match):
    with pytest.raises(error, match=match):
        parse_measure(name)
    with pytest.raises(error, match=match):
        evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, None, measures=[name])


def test_parse_measure_needs_the_cutoff_that_resolve_measures_can_supply():
    with pytest.raises(UnknownMeasureError, match="needs a cutoff"):
        parse_measure("P")
    with pytest.raises(UnknownMeasureError, match="recall level"):
        parse_measure("iP")
    with pytest.raises(InvalidCutoffError, match="needs a cutoff"):
        Measure("Success")
    with pytest.raises(DuplicateCutoffError, match="twice"):
        resolve_measures(["Rprec", "R_prec"], None)


def test_evaluate_accepts_new_names_and_keys_results_canonically():
    qrels, results = ranked([1, 0, 2, None], {"x": 1})
    names = ["nDCG@3", "nDCG_exp@3", "P@2", "R_cap@100", "MRR@10", "Rprec", "iP@0.3", "Judged@10", "bpref"]
    res = evaluate(qrels, results, None, measures=names, preset="trec")
    assert list(res.means) == ["NDCG@3", "nDCG_exp@3", "P@2", "R_cap@100", "MRR@10", "Rprec", "iP@0.3", "Judged@10",
                               "bpref"]  # fmt: skip
    assert res.means["Rprec"] == 2 / 3 and res.means["Judged@10"] == 0.3


def test_cli_m_takes_new_names_including_gain_maps(tmp_path, capsys):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d4 3 0.4 t\nq2 Q0 d5 1 0.8 t\nq2 Q0 d3 2 0.7 t\n")
    args = ["evaluate", str(qrels), str(run), "--preset", "trec", "-m"]
    assert main([*args, "nDCG(gains={1:1,2:3})@3,nDCG_exp@3,Rprec,iP@0.5,Success@1,GMAP"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["nDCG(gains={1:1,2:3})@3", "nDCG_exp@3", "Rprec", "iP@0.5", "Success@1", "GMAP"]
    assert out["nDCG(gains={1:1,2:3})@3"] == out["nDCG_exp@3"]
    assert out["Rprec"] == 0.5 and out["Success@1"] == 0.5
    assert main([*args, "NDCG,Rprec,iP@0.5", "-k", "1,3", "--format", "markdown"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0] == "| measure | all | @0.5 | @1 | @3 |"
    assert md[3] == "| Rprec | 0.5000 |  |  |  |"  # trec tables: 4 decimals, as trec_eval prints
    assert main([*args, "Rprec@3"]) == 2
    assert "takes no cutoff" in capsys.readouterr().err


def test_the_multi_metric_component_takes_the_new_names():
    from haystack import Document

    from haystack_irmetrics.components import IRMetricsEvaluator

    gold = [[Document(id="d1", score=1.0), Document(id="d3", score=2.0)], [Document(id="d2", score=1.0)]]
    retrieved = [[Document(id="d1"), Document(id="d2"), Document(id="d3")], [Document(id="d4"), Document(id="d2")]]
    out = IRMetricsEvaluator(metrics=["nDCG_exp@3", "Rprec", "iP@0.5", "Success@1", "F@2"], preset="trec").run(
        gold, retrieved
    )
    assert list(out["means"]) == ["nDCG_exp@3", "Rprec", "iP@0.5", "Success@1", "F@2"]
    assert out["individual_scores"]["Rprec"] == [0.5, 0.0]
    assert out["individual_scores"]["Success@1"] == [1.0, 0.0]


def test_readme_measures_section_examples_print_what_they_show():
    import doctest
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "README.md"  # the measures section lives there
    result = doctest.testfile(str(path), module_relative=False)
    assert result.failed == 0 and result.attempted >= 7


def test_columnar_runs_from_the_fast_reader_score_every_new_measure_as_dict_runs(data_dir, tmp_path):
    from haystack_irmetrics.core.inputs import ColumnarRun
    from haystack_irmetrics.io import _fast, read_qrels, read_run
    from tests.test_properties import judgments, registry

    if not _fast.available():
        pytest.skip("polars (extra 'columnar') is not installed")
    d = data_dir / "robust03"
    qrels = read_qrels(d / "robust03_cs_qrels.txt")
    lines = (d / "input.uic0301").read_text().splitlines()[:20000]  # 20 topics
    path = tmp_path / "run"
    path.write_text("\n".join(lines) + "\nunjudged\tQ0\tFBIS3-1\t1\t1.0\tx\n")  # a query nobody judged
    run = read_run(path)
    assert isinstance(run, ColumnarRun)
    ms = registry([1, 10, 100])
    every = judgments(dict(qrels.data))  # the families reading subtopics read one per query
    for preset in ("beir", "trec"):
        a = evaluate(every, run, None, measures=ms, preset=preset)
        b = evaluate(every, dict(run.data), None, measures=ms, preset=preset)
        assert a.per_query == b.per_query and a.raw_means == b.raw_means
    beir = evaluate(qrels, run, [1], measures=["Hole"])
    assert beir.per_query["Hole@1"]["unjudged"] == 1.0  # BEIR sums it (FBIS3-1 is judged for no topic)
