"""`irmetrics compare`: two runs on the same qrels, side by side."""

from __future__ import annotations

import json
import math
import sys

import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.beir import compare_runs, load_beir, run_beir, sample_path
from haystack_irmetrics.cli import main

QRELS = str(sample_path() / "qrels" / "test.tsv")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    run_beir(progress=False, output_dir=root / "bm25")
    run_beir(progress=False, top_k=3, output_dir=root / "bm25_top3")
    return root / "bm25", root / "bm25_top3"


def test_cli_prints_both_runs_and_their_difference_per_measure(two_runs, capsys):
    a, b = two_runs
    assert main(["compare", str(a), str(b / "run.trec"), "--qrels", QRELS, "-k", "3,10", "--no-stats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| measure | bm25 | run.trec | run.trec − bm25 |"
    rows = {line.split(" | ")[0].strip("| "): line for line in lines[2:]}
    assert list(rows) == [
        "NDCG@3",
        "NDCG@10",
        "MAP@3",
        "MAP@10",
        "Recall@3",
        "Recall@10",
        "P@3",
        "P@10",
        "MRR@3",
        "MRR@10",
        "R_cap@3",
        "R_cap@10",
    ]
    assert rows["NDCG@3"].endswith("| +0.00000 |")  # the top 3 are the same documents
    full = json.loads((a / "metrics.json").read_text())
    assert f"| {full['Recall@10']:.5f} |" in rows["Recall@10"]
    assert rows["Recall@10"].split(" | ")[-1].startswith("-")


def test_compare_values_equal_each_runs_own_evaluation(two_runs):
    from haystack_irmetrics.io import read_run

    a, b = two_runs
    result = compare_runs(a, b, QRELS, [1, 10], names=("full", "top3"))
    qrels = load_beir(sample_path()).qrels
    assert {m: va for m, va, _, _ in result.rows()} == evaluate(qrels, read_run(a / "run.trec"), [1, 10]).means
    assert {m: vb for m, _, vb, _ in result.rows()} == evaluate(qrels, read_run(b / "run.trec"), [1, 10]).means
    assert result.notes == ()


def test_json_format_has_both_values_and_delta(two_runs, capsys):
    a, b = two_runs
    assert (
        main(
            [
                "compare",
                str(a),
                str(b),
                "--qrels",
                QRELS,
                "-k",
                "10",
                "-m",
                "NDCG,MRR",
                "--names",
                "full,top3",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["runs"] == ["full", "top3"] and list(out["metrics"]) == ["NDCG@10", "MRR@10"]
    cell = out["metrics"]["NDCG@10"]
    assert cell["delta"] == round(cell["top3"] - cell["full"], 5)


def test_same_run_twice_has_zero_delta_and_distinct_labels(two_runs):
    a, _ = two_runs
    result = compare_runs(a, a, QRELS, [10])
    assert result.names == ("A:bm25", "B:bm25")
    assert all(d == 0 for *_, d in result.rows())


def test_queries_answered_by_one_run_only_are_noted(tmp_path, capsys):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "a").write_text("q1 Q0 d1 1 2.0 a\nq2 Q0 d2 1 1.0 a\n")
    (tmp_path / "b").write_text("q1 Q0 d1 1 2.0 b\n")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--qrels", str(qrels), "-k", "1"]) == 0
    err = capsys.readouterr().err
    assert "1 judged queries are answered by a only, e.g. ['q2']" in err
    # BEIR's MRR averages over every judged query, so only the pytrec_eval families are named.
    assert "the means of NDCG@1, MAP@1, Recall@1, P@1 cover different queries" in err
    args = ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--qrels", str(qrels), "-k", "1", "-m", "MRR,P"]
    assert main([*args, "--preset", "trec"]) == 0
    assert "the means of MRR@1, P@1 cover different queries" in capsys.readouterr().err


def test_significance_pairs_each_measures_scored_queries_and_equals_the_stats_functions():
    from scipy import stats

    from haystack_irmetrics.stats import compare_paired, holm

    qrels = {f"q{i}": {f"d{i}": 1} for i in range(1, 7)}  # q6: answered by neither run
    a = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"x": 2.0, "d2": 1.0}, "q3": {"x": 1.0}, "q4": {"d4": 1.0}, "q5": {"x": 1}}
    b = {"q1": {"x": 2.0, "d1": 1.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}, "q4": {"y": 2.0, "d4": 1.0}}
    result = compare_runs(a, b, qrels, [1, 2], measures=["MRR", "NDCG"], n_resamples=500, seed=3)
    names = list(result.a.means)
    assert [c.metric for c in result.stats] == names
    # NDCG averages answered queries (BEIR): q1-q5, q5 counting 0 for b; MRR every judged query: q1-q6.
    assert {c.metric: c.n for c in result.stats} == {"NDCG@1": 5, "NDCG@2": 5, "MRR@1": 6, "MRR@2": 6}
    ea = evaluate(qrels, a, [1, 2], measures=["MRR", "NDCG"])
    eb = evaluate(qrels, b, [1, 2], measures=["MRR", "NDCG"])
    expected = {}
    for group, qids in ((["NDCG@1", "NDCG@2"], range(1, 6)), (["MRR@1", "MRR@2"], range(1, 7))):
        va = {m: [ea.per_query[m].get(f"q{i}", 0.0) for i in qids] for m in group}
        vb = {m: [eb.per_query[m].get(f"q{i}", 0.0) for i in qids] for m in group}
        expected.update({c.metric: c for c in compare_paired(vb, va, n_resamples=500, seed=3)})
        ndcg_a, ndcg_b = va.get("NDCG@2"), vb.get("NDCG@2")
        if ndcg_a is not None:
            assert expected["NDCG@2"].p_t == stats.ttest_rel(ndcg_b, ndcg_a).pvalue
    for c in result.stats:
        e = expected[c.metric]
        assert (c.delta, c.ci_low, c.ci_high, c.p_t, c.p_randomization) == (
            e.delta,
            e.ci_low,
            e.ci_high,
            e.p_t,
            e.p_randomization,
        )
    assert [c.p_t_holm for c in result.stats] == holm([expected[m].p_t for m in names]).tolist()
    # MRR covers the same queries for both runs: its paired difference is the difference of the means.
    mrr = result.stats[names.index("MRR@2")]
    assert mrr.delta == pytest.approx(result.b.raw_means["MRR@2"] - result.a.raw_means["MRR@2"], abs=1e-15)
    out = result.to_dict()
    cell = out["metrics"]["NDCG@2"]["paired"]
    assert (cell["queries"], cell["scale"], cell["delta"]) == (5, "linear", result.stats[names.index("NDCG@2")].delta)
    table = result.markdown().splitlines()
    assert table[0].endswith("| paired Δ [95% CI] | queries | p (t) | p (rand.) |")
    assert "Paired per measure over the queries either run is scored on for it" in table[-1]


def test_a_geometric_mean_is_compared_on_log_values():
    qrels = {f"q{i}": {f"d{i}": 1, "z": 1} for i in range(4)}
    a = {f"q{i}": {f"d{i}": 1.0, "x": 2.0, "z": 0.5} for i in range(4)}
    b = {f"q{i}": {"x": 1.0, f"d{i}": 0.5 + i, "y": 3.0} for i in range(4)}
    result = compare_runs(a, b, qrels, [10], measures=["GMAP", "MAP@10"], n_resamples=100)
    assert result.log_scale == {"GMAP"}
    gmap = next(c for c in result.stats if c.metric == "GMAP")
    assert gmap.delta == pytest.approx(math.log(result.b.raw_means["GMAP"] / result.a.raw_means["GMAP"]), abs=1e-12)
    assert result.to_dict()["metrics"]["GMAP"]["paired"]["scale"] == "log"
    assert "| log " in result.markdown() and "GMAP: mean log difference" in result.markdown()


def test_identical_runs_are_not_significant_and_one_paired_query_runs_no_test(two_runs, tmp_path):
    a, _ = two_runs
    result = compare_runs(a, a, QRELS, [10], n_resamples=200)
    assert all(c.delta == 0 and c.p_t == 1 and c.p_randomization == 1 and c.marker() == "" for c in result.stats)
    one = compare_runs({"q1": {"d1": 1.0}}, {"q1": {"d2": 1.0}}, {"q1": {"d1": 1}}, [1])
    assert one.stats == () and one.notes[-1].startswith("no significance tests for NDCG@1, MAP@1,")
    assert one.notes[-1].endswith(": fewer than two queries pair for them")
    assert "p (t)" not in one.markdown()


@pytest.mark.parametrize("flag", [["--n-resamples", "0"], ["--seed", "-1"], ["--confidence", "1.5"]])
def test_bad_significance_settings_exit_2_before_evaluating(two_runs, capsys, flag):
    a, _ = two_runs
    assert main(["compare", str(a), str(a), "--qrels", QRELS, *flag]) == 2
    assert flag[0].strip("-").replace("-", "_") in capsys.readouterr().err


def test_names_needs_two_labels_and_missing_run_exits_2(two_runs, tmp_path, capsys):
    a, _ = two_runs
    assert main(["compare", str(a), str(a), "--qrels", QRELS, "--names", "one"]) == 2
    assert "--names needs two labels" in capsys.readouterr().err
    assert main(["compare", str(a), str(tmp_path / "missing.trec"), "--qrels", QRELS]) == 2
    assert "file not found" in capsys.readouterr().err


def test_dict_runs_are_accepted():
    qrels = {"q1": {"d1": 1}}
    result = compare_runs({"q1": {"d1": 1.0}}, {"q1": {"d2": 1.0, "d1": 0.5}}, qrels, [1])
    assert result.names == ("A", "B")
    assert dict((m, (va, vb)) for m, va, vb, _ in result.rows())["P@1"] == (1.0, 0.0)


def test_without_scipy_compare_still_compares_and_says_why_there_are_no_tests(two_runs, monkeypatch, capsys):
    from haystack_irmetrics.errors import MissingDependencyError

    a, _ = two_runs
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy raises ImportError
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    result = compare_runs(a, a, QRELS, [10])
    assert result.stats == () and "scipy is not installed" in result.notes[-1]
    assert result.rows()[0][1] == result.rows()[0][2]
    with pytest.raises(MissingDependencyError, match=r"haystack-irmetrics\[stats\]"):
        compare_runs(a, a, QRELS, [10], significance=True)
    assert compare_runs(a, a, QRELS, [10], significance=False).notes == ()
    assert main(["compare", str(a), str(a), "--qrels", QRELS, "-k", "10"]) == 0
    assert "scipy is not installed" in capsys.readouterr().err
    assert main(["compare", str(a), str(a), "--qrels", QRELS, "-k", "10", "--stats"]) == 2


def test_the_interval_level_is_printed_as_given(two_runs):
    a, _ = two_runs
    assert "[99.9% CI]" in compare_runs(a, a, QRELS, [10], confidence=0.999, n_resamples=100).markdown()


def test_gmap_pairs_an_unanswered_query_at_its_floor_and_settings_fail_before_evaluating():
    from haystack_irmetrics.stats import StatsInputError

    qrels = {f"q{i}": {f"d{i}": 1} for i in range(4)}
    a = {f"q{i}": {f"d{i}": 1.0} for i in range(4)}
    b = {f"q{i}": {"x": 1.0, f"d{i}": 0.5} for i in range(3)}  # q3 unanswered by b
    result = compare_runs(a, b, qrels, [10], measures=["GMAP"], n_resamples=100)
    (gmap,) = result.stats
    assert gmap.n == 4 and gmap.delta == pytest.approx((3 * math.log(0.5) + math.log(1e-5)) / 4)
    assert "GMAP's floor 1e-5" in result.markdown()
    with pytest.raises(StatsInputError, match="fewer resamples or columns"):
        compare_runs(a, b, qrels, [1, 3, 5, 10, 100, 1000], n_resamples=8_000_000)


def test_the_readme_shows_what_compare_prints_on_the_sample(two_runs, capsys):
    from pathlib import Path

    a, b = two_runs
    assert main(["compare", str(a), str(b), "--qrels", QRELS, "-k", "3,10", "-m", "NDCG,Recall,MRR"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert len(table) == 8 and all(line in readme.splitlines() for line in table)


def test_the_bootstrap_size_limit_applies_to_each_group_of_measures_that_pair_the_same_queries(monkeypatch):
    from haystack_irmetrics.stats import StatsInputError, significance

    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d4": 1}}  # q4: answered by neither
    a = {"q1": {"d1": 1.0}, "q2": {"x": 1.0}, "q3": {"d3": 1.0}}
    b = {"q1": {"x": 1.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}}
    # beir: NDCG, MAP, Recall, P pair q1-q3; MRR, R_cap pair q1-q4. 6 measures x 10 resamples = 60 means,
    # the larger group 40.
    monkeypatch.setattr(significance, "MAX_MEANS", 45)
    result = compare_runs(a, b, qrels, [1], n_resamples=10)
    assert sorted(c.n for c in result.stats) == [3, 3, 3, 3, 4, 4]
    monkeypatch.setattr(significance, "MAX_MEANS", 39)
    with pytest.raises(StatsInputError, match="fewer resamples or columns"):
        compare_runs(a, b, qrels, [1], n_resamples=10)


def test_a_mean_that_is_not_the_average_of_its_per_query_values_is_noted():
    # BEIR's Hole sums the unjudged query x but divides by the two judged queries.
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    a = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 1.0}, "x": {"u9": 1.0, "d1": 0.5}}
    b = {"q1": {"u2": 2.0, "d1": 1.0}, "q2": {"d2": 1.0}, "x": {"u9": 1.0, "d1": 0.5}}
    result = compare_runs(a, b, qrels, [2], measures=["Hole"], n_resamples=100)
    (hole,) = result.stats
    assert result.a.per_query["Hole@2"].keys() == result.b.per_query["Hole@2"].keys()
    assert hole.delta != pytest.approx(result.b.raw_means["Hole@2"] - result.a.raw_means["Hole@2"])
    assert result.notes == (
        "the means of Hole@2 are not the average of their per-query values (BEIR's Hole divides by the judged "
        "queries only), so their paired difference is not the difference of the means",
    )
    assert compare_runs(a, b, qrels, [2], measures=["Hole"], preset="trec", n_resamples=100).notes == ()
