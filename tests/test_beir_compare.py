"""`irmetrics compare`: two runs on the same qrels, side by side."""

from __future__ import annotations

import json

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
    assert main(["compare", str(a), str(b / "run.trec"), "--qrels", QRELS, "-k", "3,10"]) == 0
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
    assert "average over answered queries only" in err


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
