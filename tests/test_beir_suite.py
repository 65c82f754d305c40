"""`irmetrics beir A B ... -o DIR`: one folder per dataset, the leaderboard (hand-computed average,
published references, CQADupStack-style groups), skipping finished datasets, refusing a changed
configuration, and `irmetrics compare DIR_A DIR_B`."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil

import pytest

from haystack_irmetrics.beir import sample_path
from haystack_irmetrics.beir.leaderboard import build_leaderboard, load_references
from haystack_irmetrics.beir.suite import run_beir_suite
from haystack_irmetrics.cli import main

K = "1,10,100"


def subset_copy(folder, keep: int):
    """A copy of the sample whose test qrels keep the first ``keep`` queries (different numbers)."""
    shutil.copytree(sample_path(), folder)
    lines = (folder / "qrels" / "test.tsv").read_text().splitlines()
    queries = list(dict.fromkeys(line.split("\t")[0] for line in lines[1:]))[:keep]
    (folder / "qrels" / "test.tsv").write_text(
        "\n".join([lines[0]] + [ln for ln in lines[1:] if ln.split("\t")[0] in queries]) + "\n"
    )
    return folder


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    other = subset_copy(root / "data" / "half", 20)
    out = root / "out"
    assert main(["beir", "sample", str(other), "-o", str(out), "-k", K, "--no-progress"]) == 0
    return {"out": out, "datasets": ["sample", str(other)], "root": root}


def test_each_dataset_has_its_folder_and_the_leaderboard_averages_them_as_computed_by_hand(suite):
    out = suite["out"]
    board = json.loads((out / "leaderboard.json").read_text())
    assert list(board["datasets"]) == ["sample", "half"]
    for name in ("sample", "half"):
        for file in ("metrics.json", "per_query.json", "run.trec", "summary.json", "metrics.md"):
            assert (out / name / file).is_file()
        assert board["datasets"][name] == json.loads((out / name / "metrics.json").read_text())
    raw = [json.loads((out / name / "summary.json").read_text())["raw_metrics"] for name in ("sample", "half")]
    assert board["average"] == {m: round((raw[0][m] + raw[1][m]) / 2, 5) for m in raw[0]}
    assert board["average"]["NDCG@10"] != board["datasets"]["sample"]["NDCG@10"]
    assert board["configuration"]["pipeline"] == "bm25" and board["configuration"]["k_values"] == [1, 10, 100]
    table = (out / "leaderboard.md").read_text()
    assert f"| sample | {board['datasets']['sample']['NDCG@10']:.5f} |" in table
    assert f"| **average** | {board['average']['NDCG@10']:.5f} |" in table


def test_a_rerun_skips_finished_datasets_and_touches_nothing(suite, monkeypatch, capsys):
    out = suite["out"]
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.rglob("*") if p.is_file()}

    def no_run(*args, **kwargs):
        raise AssertionError("a finished dataset was run again")

    monkeypatch.setattr("haystack_irmetrics.beir.suite.run_dataset", no_run)
    assert main(["beir", *suite["datasets"], "-o", str(out), "-k", K, "--no-progress"]) == 0
    assert "irmetrics: sample: finished earlier (" in capsys.readouterr().err
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.rglob("*") if p.is_file()}
    assert {p: v[0] for p, v in after.items()} == {p: v[0] for p, v in before.items()}
    assert {p: v for p, v in after.items() if "leaderboard" not in p.name} == {
        p: v for p, v in before.items() if "leaderboard" not in p.name
    }


def test_a_skipped_dataset_says_when_it_ran_and_prints_its_stored_table_not_fresh_timings(suite, monkeypatch, capsys):
    out = suite["out"]
    summary = json.loads((out / "sample" / "summary.json").read_text())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", summary["finished_at"])
    when = f"{summary['finished_at'][:10]} {summary['finished_at'][11:16]} UTC"
    monkeypatch.setattr("haystack_irmetrics.beir.suite.run_dataset", pytest.fail)
    assert main(["beir", *suite["datasets"], "-o", str(out), "-k", K, "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert f"irmetrics: sample: finished earlier ({when}), skipped; --overwrite to run again\n" in captured.err
    sample = captured.out.split("\n\nhalf (test)")[0]
    assert (out / "sample" / "metrics.md").read_text().strip() in sample  # its stored table
    last = sample.rstrip("\n").splitlines()[-1]
    assert last.startswith(f"skipped: finished earlier ({when}): indexing ") and last.endswith(
        "--overwrite to run again"
    )
    assert not re.search(r"^indexing ", captured.out, re.M)  # no timing line reads as if it just ran


def test_a_summary_written_before_finish_times_were_recorded_says_when_from_the_file(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["beir", "-o", str(out), "-k", "10", "--no-progress"]) == 0
    path = out / "sample" / "summary.json"
    summary = json.loads(path.read_text())
    del summary["finished_at"]
    path.write_text(json.dumps(summary))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    capsys.readouterr()
    assert main(["beir", "-o", str(out), "-k", "10", "--no-progress"]) == 0
    assert "sample: finished earlier (2023-11-14 22:13 UTC), skipped" in capsys.readouterr().err


def test_overwrite_runs_a_finished_dataset_of_the_same_configuration_again(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["beir", "-o", str(out), "-k", "10", "--no-progress"]
    assert main(args) == 0
    before = json.loads((out / "sample" / "summary.json").read_text())
    (out / "sample" / "metrics.md").write_text("stale\n")
    capsys.readouterr()
    assert main([*args, "--overwrite"]) == 0
    assert "finished earlier" not in capsys.readouterr().err
    after = json.loads((out / "sample" / "summary.json").read_text())
    assert after["metrics"] == before["metrics"] and (out / "sample" / "metrics.md").read_text() != "stale\n"


@pytest.mark.parametrize(
    "damage,says",
    [
        (lambda s: "{", "its summary.json is damaged (Expecting"),
        (lambda s: json.dumps([s]), "its summary.json is damaged (a JSON list, not an object)"),
        (lambda s: json.dumps({k: v for k, v in s.items() if k != "metrics"}), "'metrics' is missing"),
        (lambda s: json.dumps({**s, "timings_s": {"total": "fast"}}), "'timings_s' holds a value that is not a number"),
        (lambda s: json.dumps({**s, "n_queries": None}), "'n_queries' is missing or not of type int"),
        (lambda s: json.dumps({**s, "warnings": "one"}), "'warnings' is not of type list"),
        (lambda s: json.dumps({**s, "models": [1]}), "'models' holds something that is not a string"),
        (lambda s: json.dumps({**s, "queries_from_checkpoint": "x"}), "'queries_from_checkpoint' is not of type int"),
    ],
)
def test_a_damaged_summary_of_a_finished_dataset_is_refused_and_overwrite_runs_it_again(tmp_path, capsys, damage, says):
    out = tmp_path / "out"
    args = ["beir", "-o", str(out), "-k", "10", "--no-progress"]
    assert main(args) == 0
    path = out / "sample" / "summary.json"
    path.write_text(damage(json.loads(path.read_text())))
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert says in err and "--overwrite" in err and len(err.splitlines()) == 1
    assert main([*args, "--overwrite"]) == 0
    assert json.loads(path.read_text())["metrics"]["NDCG@10"] == 0.76977


def test_overwrite_refuses_a_dataset_folder_that_is_a_symbolic_link_and_deletes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    assert main(["beir", "-o", str(tmp_path / "first"), "-k", "10", "--no-progress"]) == 0
    shutil.copytree(tmp_path / "first" / "sample", elsewhere)
    out.mkdir()
    (out / "sample").symlink_to(elsewhere, target_is_directory=True)
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    capsys.readouterr()
    assert main(["beir", "-o", str(out), "-k", "10", "--no-progress", "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'sample'} is a symbolic link" in err and "never deletes through a link" in err
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before


def test_a_changed_configuration_is_refused_before_anything_runs(suite, monkeypatch, capsys):
    out = suite["out"]
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    monkeypatch.setattr("haystack_irmetrics.beir.suite.run_dataset", pytest.fail)
    assert main(["beir", *suite["datasets"], "-o", str(out), "-k", "10", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "another configuration for 2 dataset(s)" in err and "k_values was [1, 10, 100], now [10]" in err
    assert "--overwrite" in err and "Traceback" not in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_changed_dataset_file_is_refused_and_overwrite_starts_that_dataset_over(tmp_path, capsys):
    data = subset_copy(tmp_path / "data" / "small", 10)
    out = tmp_path / "out"
    args = ["beir", str(data), "-o", str(out), "-k", "10", "--top-k", "50", "--no-progress"]
    assert main(args) == 0
    assert json.loads((out / "leaderboard.json").read_text())["datasets"]["small"]  # one dataset: a leaderboard too
    qrels = data / "qrels" / "test.tsv"
    qrels.write_text("\n".join(qrels.read_text().splitlines()[:-1]) + "\n")  # one judgment fewer
    capsys.readouterr()
    assert main(args) == 2
    assert "small: dataset file qrels/test.tsv changed" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    summary = json.loads((out / "small" / "summary.json").read_text())
    assert summary["configuration"]["dataset"]["files"]["qrels/test.tsv"]["size"] == qrels.stat().st_size


def test_sub_datasets_are_one_row_averaged_like_cqadupstack(tmp_path):
    group = tmp_path / "forums"
    subset_copy(group / "alpha", 10)
    subset_copy(group / "beta", 25)
    result = run_beir_suite([str(group), "sample"], k_values=[10, 100], top_k=100, output_dir=tmp_path / "out")
    out = tmp_path / "out"
    assert (out / "forums" / "alpha" / "metrics.json").is_file() and (out / "forums" / "beta" / "run.trec").is_file()
    board = json.loads((out / "leaderboard.json").read_text())
    assert list(board["datasets"]) == ["forums", "sample"]
    assert list(board["groups"]["forums"]) == ["alpha", "beta"]
    raw = [result.summaries[f"forums/{n}"]["raw_metrics"] for n in ("alpha", "beta")]
    group_raw = {m: (raw[0][m] + raw[1][m]) / 2 for m in raw[0]}
    assert board["datasets"]["forums"] == {m: round(v, 5) for m, v in group_raw.items()}
    sample_raw = result.summaries["sample"]["raw_metrics"]
    assert board["average"] == {m: round((group_raw[m] + sample_raw[m]) / 2, 5) for m in group_raw}
    # The holes and their bounds: a group's are the means of its members'.
    holes = [result.summaries[f"forums/{n}"]["holes"]["Hole@10"] for n in ("alpha", "beta")]
    assert board["holes"]["forums"]["Hole@10"] == round((holes[0] + holes[1]) / 2, 5)
    lows = [result.summaries[f"forums/{n}"]["hole_bounds"]["NDCG@10"]["low"] for n in ("alpha", "beta")]
    assert board["hole_bounds"]["forums"]["NDCG@10"][0] == round((lows[0] + lows[1]) / 2, 5)
    assert board["hole_bounds"]["sample"]["Recall@100"] == [
        result.summaries["sample"]["hole_bounds"]["Recall@100"][key] for key in ("low", "high")
    ]
    table = (out / "leaderboard.md").read_text()
    assert "| Hole@10 | Hole@100 | NDCG@10 if holes judged |" in table


def _summary(ndcg: float, recall: float, pipeline: str = "bm25", models=()):
    metrics = {"NDCG@10": ndcg, "Recall@100": recall}
    return {"metrics": metrics, "raw_metrics": metrics, "pipeline": pipeline, "models": list(models)}


def test_references_beside_each_row_cqadupstack_as_the_mean_of_its_forums():
    sources = load_references()["sources"]
    flat = sources["anserini-bm25-flat"]["values"]
    forums = sorted(k.split("-", 1)[1] for k in flat if k.startswith("cqadupstack-"))
    assert len(forums) == 12
    summaries = {"scifact": _summary(0.66013, 0.88856)}
    summaries |= {f"cqadupstack/{f}": _summary(0.3, 0.6) for f in forums}
    board = build_leaderboard(summaries, {"cqadupstack": [f"cqadupstack/{f}" for f in forums]})
    assert list(board.datasets) == ["scifact", "cqadupstack"]
    refs = board.references
    assert refs["anserini-bm25-flat"]["scifact"] == {"NDCG@10": 0.6789, "Recall@100": 0.9253}
    expected = round(math.fsum(flat[f"cqadupstack-{f}"]["NDCG@10"] for f in forums) / 12, 4)
    assert refs["anserini-bm25-flat"]["cqadupstack"]["NDCG@10"] == expected
    assert refs["beir-paper-bm25"]["cqadupstack"] == {"NDCG@10": 0.299}  # the paper's own average
    table = board.markdown()
    assert "| scifact | 0.66013 | 0.665 | -0.0049 | 0.6789 | -0.0188 |" in table
    assert "castorini/anserini@81e3414573a39ad7433d271c5cadc360bc821945" in table and "arXiv:2104.08663" in table
    # A dense model with published figures gets them; the default MiniLM and hybrid get none.
    dense = build_leaderboard({"scifact": _summary(0.7, 0.9, "dense", ["/models/BAAI/bge-base-en-v1.5"])})
    assert list(dense.references) == ["pyserini-bge-base-en-v1.5"]
    assert build_leaderboard({"scifact": _summary(0.6, 0.9, "dense", ["/x/all-MiniLM-L6-v2"])}).references == {}
    assert "No published reference" in build_leaderboard({"scifact": _summary(0.6, 0.9, "hybrid")}).markdown()
    # Haystack's own BM25 is BM25 too: the same published columns as bm25s
    haystack = build_leaderboard({"scifact": _summary(0.66013, 0.88856, "haystack-bm25")}).markdown()
    assert "No published reference" not in haystack and "0.665" in haystack


def test_shipped_references_equal_the_published_tables(data_dir):
    yaml = pytest.importorskip("yaml")
    ref = data_dir / "reference"
    if not ref.is_dir():
        pytest.skip(f"{ref} is absent")
    published = yaml.safe_load((ref / "pyserini_2cr_beir.yaml").read_text())
    conditions = {c["name"]: c["datasets"] for c in published["conditions"]}
    shipped = load_references()["sources"]
    for key, condition in [
        ("anserini-bm25-flat", "bm25-flat"),
        ("anserini-bm25-multifield", "bm25-multifield"),
        ("pyserini-contriever-msmarco", "contriever-msmarco"),
        ("pyserini-contriever", "contriever"),
        ("pyserini-bge-base-en-v1.5", "bge-base-en-v1.5.faiss"),
    ]:
        expected = {
            d["dataset"]: {"NDCG@10": d["scores"][0]["nDCG@10"], "Recall@100": d["scores"][0]["R@100"]}
            for d in conditions[condition]
        }
        assert shipped[key]["values"] == expected, key
    with (ref / "beir_paper_table2_bm25_ndcg10.csv").open() as f:
        paper = {row["dataset"]: {"NDCG@10": float(row["bm25_ndcg@10"])} for row in csv.DictReader(f)}
    assert shipped["beir-paper-bm25"]["values"] == paper


def test_compare_two_suites_dataset_by_dataset(suite, tmp_path, capsys):
    other = tmp_path / "top3"
    assert main(["beir", *suite["datasets"], "-o", str(other), "-k", K, "--top-k", "3", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["compare", str(suite["out"]), str(other), "--no-stats"]) == 0
    table = capsys.readouterr().out
    a = json.loads((suite["out"] / "sample" / "metrics.json").read_text())
    b = json.loads((other / "sample" / "metrics.json").read_text())
    row = f"| sample | NDCG@10 | {a['NDCG@10']:.5f} | {b['NDCG@10']:.5f} | {b['NDCG@10'] - a['NDCG@10']:+.5f} |"
    assert row in table and "| half | Recall@100 |" in table and "| **average** | NDCG@10 |" in table
    assert main(["compare", str(suite["out"]), str(other), "--format", "json", "--no-stats", "-m", "MRR@10"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert list(result["datasets"]) == ["sample", "half"] and list(result["average"]) == ["MRR@10"]
    board_a = json.loads((suite["out"] / "leaderboard.json").read_text())
    assert result["average"]["MRR@10"][suite["out"].name] == board_a["average"]["MRR@10"]
    # --qrels belongs to run comparisons; a suite beside a run file is refused.
    assert main(["compare", str(suite["out"]), str(other), "--qrels", "x.tsv"]) == 2
    assert main(["compare", str(suite["out"]), str(other / "sample" / "run.trec"), "--qrels", "x.tsv"]) == 2
    capsys.readouterr()
    # Two dataset folders compare as runs, on the qrels their summary.json name unless --qrels is given.
    qrels = sample_path() / "qrels" / "test.tsv"
    pair = ["compare", str(suite["out"] / "sample"), str(other / "sample"), "--no-stats"]
    assert main(pair) == 0
    found = capsys.readouterr().out
    assert main([*pair, "--qrels", str(qrels)]) == 0
    assert capsys.readouterr().out == found


def test_the_leaderboard_shows_holes_only_where_every_summary_has_them_well_formed():
    good = {**_summary(0.5, 0.8), "holes": {"Hole@10": 0.2}, "hole_bounds": {"NDCG@10": {"low": 0.4, "high": 0.7}}}
    odd = {**_summary(0.6, 0.9), "holes": {"Hole@10": "x"}, "hole_bounds": {"NDCG@10": {"low": None}}}
    board = build_leaderboard({"a": good, "b": odd, "c": _summary(0.7, 0.9)})
    assert board.holes == {"a": {"Hole@10": 0.2}, "b": {}}
    assert board.hole_bounds == {"a": {"NDCG@10": [0.4, 0.7]}, "b": {}}
    table = board.markdown()  # rows without holes show a dash; the average needs every row
    assert "| a | 0.50000 | 0.80000 | 0.20000 | [0.40000, 0.70000] |" in table
    assert "| **average** | 0.60000 | 0.86667 | — | — |" in table
