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
    assert lines[0] == "| measure | bm25 | run | run − bm25 |"  # a file less its extension (docs/cli.md)
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
    assert "1 judged query is answered by a only, e.g. ['q2']" in err
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
    if flag[0] == "--seed":  # every --seed is an argparse type (cli.args.seed): argparse's exit 2
        with pytest.raises(SystemExit) as exit_:
            main(["compare", str(a), str(a), "--qrels", QRELS, *flag])
        assert exit_.value.code == 2
    else:
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


ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _irmetrics(command: str, capsys) -> str:
    """Run one ``irmetrics ...`` command line as a user types it; its stdout (exit 0 asserted)."""
    import shlex

    args = shlex.split(command)
    assert args[0] == "irmetrics", command
    capsys.readouterr()
    assert main(args[1:]) == 0, (command, capsys.readouterr().err)
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def setup_outputs(tmp_path_factory):
    """What the README's and docs/statistics.md's setup commands write, run as written in a fresh folder."""
    import os
    import shlex

    root = tmp_path_factory.mktemp("sample_outputs")
    setup = "irmetrics beir -o bm25 && irmetrics beir --top-k 3 -o bm25_top3"
    assert setup in (ROOT / "README.md").read_text() and setup in (ROOT / "docs" / "statistics.md").read_text()
    here = os.getcwd()
    os.chdir(root)
    try:
        for command in [*setup.split(" && "), "irmetrics beir --top-k 5 -o bm25_top5"]:
            assert main(shlex.split(command)[1:]) == 0, command
    finally:
        os.chdir(here)
    return root


@pytest.fixture
def sample_outputs(setup_outputs, monkeypatch):
    monkeypatch.chdir(setup_outputs)
    return setup_outputs


def test_the_readme_compare_command_runs_as_written_and_prints_the_table_shown(sample_outputs, capsys):
    readme = (ROOT / "README.md").read_text()
    (command,) = [line for line in readme.splitlines() if line.startswith("irmetrics compare bm25/sample")]
    table = [line for line in _irmetrics(command, capsys).splitlines() if line.startswith("|")]
    lines = readme.splitlines()
    start = lines.index(table[0])
    assert len(table) == 8 and lines[start : start + len(table)] == table


def test_every_compare_example_of_the_statistics_page_prints_exactly_what_it_shows(sample_outputs, capsys):
    import re

    page = (ROOT / "docs" / "statistics.md").read_text()
    assert "irmetrics beir --top-k 5 -o bm25_top5" in page
    # each example: a bash block ending in the command, then "prints" and a text block of its output
    examples = re.findall(
        r"```bash\n(?:[^`\n]*\n)*?(irmetrics compare [^\n]*)\n```\n\nprints\n\n```text\n(.*?)\n```", page, flags=re.S
    )
    assert len(examples) == 2
    for command, shown in examples:
        assert _irmetrics(command, capsys) == shown + "\n", command


def test_the_cli_page_shows_the_compare_help_as_printed(monkeypatch):
    import argparse

    from haystack_irmetrics.cli import build_parser

    monkeypatch.setenv("COLUMNS", "100")  # the width the page was written at
    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    text = sub.choices["compare"].format_help()
    page = (ROOT / "docs" / "cli.md").read_text()
    section = page[page.index("## irmetrics compare") : page.index("## irmetrics report")]
    assert f"```text\n{text}```" in section


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


# -- the qrels of beir folders, N runs, a baseline ------------------------------------------------------------------


def _moved_run(folder, to, dataset=None, *, fingerprint=True):
    """A copy of a beir run folder at ``to`` whose summary names ``dataset`` (default: its own) and records
    the SHA-256 of its qrels as a run on it would; ``fingerprint=False``: no dataset fingerprint at all (as
    an older or hand-written summary)."""
    import hashlib
    import shutil

    shutil.copytree(folder, to)
    summary = json.loads((to / "summary.json").read_text())
    if dataset is not None:
        summary["dataset_path"] = str(dataset)
        qrels = summary["configuration"]["dataset"]["files"]["qrels/test.tsv"]
        qrels["sha256"] = hashlib.sha256((dataset / "qrels" / "test.tsv").read_bytes()).hexdigest()
    if not fingerprint:
        del summary["configuration"]
    (to / "summary.json").write_text(json.dumps(summary))
    return to


def _dataset_copy(to, keep=None):
    """A copy of the sample dataset; ``keep``: only the first ``keep`` judged queries in its test qrels."""
    import shutil

    shutil.copytree(sample_path(), to)
    if keep is not None:
        lines = (to / "qrels" / "test.tsv").read_text().splitlines()
        queries = list(dict.fromkeys(line.split("\t")[0] for line in lines[1:]))[:keep]
        (to / "qrels" / "test.tsv").write_text(
            "\n".join([lines[0]] + [ln for ln in lines[1:] if ln.split("\t")[0] in queries]) + "\n"
        )
    return to


def test_two_beir_folders_are_scored_on_the_qrels_their_summary_names(two_runs, capsys):
    a, b = two_runs
    found = compare_runs(a, b, k_values=[3, 10], n_resamples=200)
    given = compare_runs(a, b, QRELS, [3, 10], n_resamples=200)
    assert found.rows() == given.rows() and found.stats == given.stats
    assert main(["compare", str(a), str(b), "-k", "3,10", "--no-stats"]) == 0
    found_out = capsys.readouterr().out
    assert main(["compare", str(a), str(b), "-k", "3,10", "--no-stats", "--qrels", QRELS]) == 0
    assert capsys.readouterr().out == found_out


def test_run_folders_of_different_datasets_are_refused_unless_qrels_is_given(two_runs, tmp_path, capsys):
    from haystack_irmetrics.errors import DatasetError

    a, b = two_runs
    half = _dataset_copy(tmp_path / "half", keep=20)
    other = _moved_run(b, tmp_path / "other", half)
    with pytest.raises(DatasetError, match=r"not made from the same dataset \(qrels/test.tsv differs\)"):
        compare_runs(a, other, k_values=[10])
    assert main(["compare", str(a), str(other), "-k", "10"]) == 2
    assert "--qrels" in capsys.readouterr().err
    # An explicit qrels file wins: both runs are scored on it.
    result = compare_runs(a, other, str(half / "qrels" / "test.tsv"), [10], significance=False)
    assert result.a.n_queries["NDCG@10"] == 20


def test_copies_of_one_dataset_in_other_folders_are_the_same_dataset(two_runs, tmp_path):
    a, b = two_runs
    moved = _moved_run(b, tmp_path / "moved", _dataset_copy(tmp_path / "copy"))
    assert (
        compare_runs(a, moved, k_values=[10], significance=False).rows()
        == compare_runs(a, b, QRELS, [10], significance=False).rows()
    )


def test_a_qrels_file_changed_since_the_runs_is_refused(two_runs, tmp_path):
    from haystack_irmetrics.errors import DatasetError

    a, b = two_runs
    data = _dataset_copy(tmp_path / "data")
    runs = [_moved_run(folder, tmp_path / folder.name, data) for folder in (a, b)]
    _dataset_copy(tmp_path / "smaller", keep=10)
    (data / "qrels" / "test.tsv").write_bytes((tmp_path / "smaller" / "qrels" / "test.tsv").read_bytes())
    with pytest.raises(DatasetError, match=r"changed since the run"):
        compare_runs(*runs, k_values=[10])


def test_summaries_without_a_fingerprint_are_compared_by_their_qrels_content(two_runs, tmp_path):
    from haystack_irmetrics.errors import DatasetError

    a, b = two_runs
    same = [
        _moved_run(f, tmp_path / f"{f.name}-old", _dataset_copy(tmp_path / f"{f.name}-data"), fingerprint=False)
        for f in (a, b)
    ]
    assert (
        compare_runs(*same, k_values=[10], significance=False).rows()
        == compare_runs(a, b, QRELS, [10], significance=False).rows()
    )
    other = _moved_run(b, tmp_path / "half-old", _dataset_copy(tmp_path / "half", keep=20), fingerprint=False)
    with pytest.raises(DatasetError, match=r"qrels/test.tsv differs"):
        compare_runs(same[0], other, k_values=[10])


def test_a_run_file_and_no_qrels_is_refused_with_what_to_give(two_runs, capsys):
    _, b = two_runs
    assert main(["compare", str(b / "run.trec"), str(b / "run.trec")]) == 2
    assert "no qrels: give --qrels" in capsys.readouterr().err


def test_dataset_folders_of_the_same_name_are_labelled_by_their_parents(two_runs, tmp_path):
    a, b = two_runs
    first = _moved_run(a, tmp_path / "bm25" / "sample")
    second = _moved_run(b, tmp_path / "top3" / "sample")
    assert compare_runs(first, second, k_values=[10], significance=False).names == ("bm25/sample", "top3/sample")
    assert compare_runs(first, first, k_values=[10], significance=False).names == ("A:sample", "B:sample")


def test_three_runs_each_against_the_baseline_with_holm_over_runs_and_measures(two_runs, tmp_path, capsys):
    from haystack_irmetrics.beir import compare_many
    from haystack_irmetrics.stats import holm

    a, b = two_runs
    top5 = tmp_path / "top5.trec"  # the full run cut to its 5 best documents per query
    lines = (a / "run.trec").read_text().splitlines()
    top5.write_text("\n".join(ln for ln in lines if int(ln.split()[3]) <= 5) + "\n")
    result = compare_many([a, b, top5], k_values=[3, 10], measures=["NDCG", "Recall"], n_resamples=500)
    assert result.names == ("bm25", "bm25_top3", "top5") and result.baseline == "bm25"
    assert list(result.results) == ["bm25_top3", "top5"]
    alone = {
        run: compare_runs(a, run, QRELS, [3, 10], measures=["NDCG", "Recall"], n_resamples=500) for run in (b, top5)
    }
    for name, run in zip(result.results, (b, top5)):
        assert result.results[name].rows() == alone[run].rows()
        assert [c.p_t for c in result.results[name].stats] == [c.p_t for c in alone[run].stats]
    tested = [c for r in result.results.values() for c in r.stats]
    assert len(tested) == 8 and all(r.tests == 8 for r in result.results.values())
    assert [c.p_t_holm for c in tested] == holm([c.p_t for c in tested]).tolist()
    assert [c.p_randomization_holm for c in tested] == holm([c.p_randomization for c in tested]).tolist()
    # Holm over 8 tests is never less strict than over each run's 4.
    assert any(c.p_t_holm > s.p_t_holm for c, s in zip(tested, [*alone[b].stats, *alone[top5].stats]))
    table = result.markdown()
    assert "bm25_top3 against bm25:" in table and "top5 against bm25:" in table
    assert "Holm-adjusted over the 8 tests (each of the 2 runs against bm25, per measure)" in table
    assert main(["compare", str(a), str(b), str(top5), "-k", "10", "--baseline", "bm25_top3", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["baseline"] == "bm25_top3" and list(out["comparisons"]) == ["bm25", "top5"]
    assert out["comparisons"]["bm25"]["runs"] == ["bm25_top3", "bm25"] and out["tests"] == 12
    assert out["comparisons"]["bm25"]["metrics"]["NDCG@10"]["delta"] == 0.22299


def test_compare_refuses_one_run_an_unknown_baseline_and_a_label_per_run_missing(two_runs, capsys):
    a, b = two_runs
    assert main(["compare", str(a)]) == 2
    assert "compare needs two runs or more" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), "--baseline", "dense"]) == 2
    assert "the baseline 'dense' is not one of the runs ['bm25', 'bm25_top3']" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), str(a), "--names", "x,y"]) == 2
    assert "--names needs 3 labels, one per run" in capsys.readouterr().err


def test_suites_whose_copies_of_a_dataset_differ_are_refused_not_scored_on_one_qrels(two_runs, tmp_path, capsys):
    from haystack_irmetrics.beir import compare_suites
    from haystack_irmetrics.errors import DatasetError, InvalidArgumentError

    a, b = two_runs
    suites = {}
    for name, run, data in (("one", a, None), ("two", b, _dataset_copy(tmp_path / "data" / "sample", keep=20))):
        suites[name] = tmp_path / name
        _moved_run(run, suites[name] / "sample", data)
        (suites[name] / "leaderboard.json").write_text(json.dumps({"datasets": {"sample": {}}, "groups": {}}))
    with pytest.raises(
        DatasetError, match=r"ran different copies of 1 dataset\(s\).*sample \(qrels/test.tsv differs\)"
    ):
        compare_suites(suites["one"], suites["two"], [10])
    assert main(["compare", str(suites["one"]), str(suites["two"])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sample (qrels/test.tsv differs)" in err
    # The same dataset in both suites compares.
    _moved_run(a, tmp_path / "three" / "sample")
    (tmp_path / "three" / "leaderboard.json").write_text((suites["one"] / "leaderboard.json").read_text())
    assert main(["compare", str(suites["one"]), str(tmp_path / "three"), "--no-stats"]) == 0
    with pytest.raises(InvalidArgumentError, match="is a suite folder"):
        compare_runs(suites["one"], tmp_path / "three")


def test_suites_with_a_group_of_sub_datasets_compare_as_irmetrics_beir_wrote_them(tmp_path, capsys):
    """A folder of sub-datasets (CQADupStack's forums) is one leaderboard row: the suites' leaderboard.json
    list its members as {sub-dataset: metrics}, and `irmetrics compare A B` reads them so."""
    import shutil

    for forum in ("android", "english"):
        shutil.copytree(sample_path(), tmp_path / "data" / "forums" / forum)
    group = str(tmp_path / "data" / "forums")
    for out, top_k in (("a", "1000"), ("b", "3")):
        assert main(["beir", group, "-o", str(tmp_path / out), "--top-k", top_k, "-k", "10", "--no-progress"]) == 0
    assert list(json.loads((tmp_path / "a" / "leaderboard.json").read_text())["groups"]["forums"]) == [
        "android",
        "english",
    ]
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--no-stats", "-m", "NDCG@10"]) == 0
    table = capsys.readouterr().out
    assert "| forums/android | NDCG@10 | 0.76977 | 0.54678 |" in table
    assert "| forums/english | NDCG@10 | 0.76977 | 0.54678 |" in table
    assert "| **average** | NDCG@10 | 0.76977 | 0.54678 |" in table


def test_the_comparison_lives_in_its_own_package_and_beir_exports_its_names():
    import haystack_irmetrics.beir as beir
    import haystack_irmetrics.compare as compare

    assert beir.compare_runs is compare.compare_runs and beir.compare_many is compare.compare_many
    assert beir.CompareResult is compare.CompareResult and beir.compare_suites is compare.compare_suites
