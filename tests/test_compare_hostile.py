"""`irmetrics compare` on hostile folders, as a user runs it (a subprocess): a malformed leaderboard.json or
summary.json, folders of different datasets, bad arguments. Each exits 2 with one line naming the file or the
problem, and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\n"
RUN = "q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\nq2 Q0 d2 1 2.0 x\nq3 Q0 d1 1 2.0 x\n"


def compare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "haystack_irmetrics.cli", "compare", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def dataset(folder, qrels: str = QRELS):
    (folder / "qrels").mkdir(parents=True)
    (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


def run_folder(folder, data, run: str = RUN):
    folder.mkdir(parents=True)
    (folder / "run.trec").write_text(run)
    (folder / "summary.json").write_text(json.dumps({"dataset": data.name, "dataset_path": str(data), "split": "test"}))
    return folder


def suite(folder, data, run: str = RUN):
    run_folder(folder / "sample", data, run)
    (folder / "leaderboard.json").write_text(json.dumps({"datasets": {"sample": {}}, "groups": {}}))
    return folder


@pytest.fixture
def two_suites(tmp_path):
    data = dataset(tmp_path / "data" / "sample")
    return suite(tmp_path / "a", data), suite(tmp_path / "b", data, RUN.replace("d1 1 2.0", "d1 1 0.5"))


def assert_one_line_error(proc: subprocess.CompletedProcess, *expected: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("irmetrics: error: "), proc.stderr
    for text in expected:
        assert text in lines[0], lines[0]


def test_the_fixtures_compare_cleanly(two_suites):
    a, b = two_suites
    for args in ((str(a), str(b)), (str(a / "sample"), str(b / "sample")), (str(a / "sample"),) * 3):
        proc = compare(*args, "-k", "1", "--no-stats")
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr


LEADERBOARDS = {
    "not JSON": (b'{"datasets": ', "not a JSON leaderboard (invalid JSON: Expecting value at line 1, column 14)"),
    "not UTF-8": (b'{"datasets": {"sample\xff": {}}}', "not UTF-8"),
    "a list": (b'[{"datasets": {}}]', "expected a JSON object, got a JSON array"),
    "empty": (b"", "not a JSON leaderboard"),
    "no datasets": (b'{"average": {}}', "expected 'datasets'"),
    "datasets a list": (b'{"datasets": ["sample"]}', "expected 'datasets'"),
    "groups a list": (b'{"datasets": {"sample": {}}, "groups": ["sample"]}', "expected 'groups'"),
    "members a string": (b'{"datasets": {"sample": {}}, "groups": {"sample": "x"}}', "groups.sample"),
    "a path as member": (b'{"datasets": {"sample": {}}, "groups": {"sample": ["../../x"]}}', "'../../x' is not"),
    "a path as row": (b'{"datasets": {"..": {}}}', "'..' is not a dataset folder name"),
    "no dataset in common": (b'{"datasets": {"gone": {}}}', "have no dataset in common"),
    "nested too deeply": (b"[" * 100_000, "nested too deeply"),
}


@pytest.mark.parametrize("case", LEADERBOARDS, ids=list(LEADERBOARDS))
def test_a_malformed_leaderboard_is_one_line_naming_the_file(two_suites, case):
    a, b = two_suites
    content, message = LEADERBOARDS[case]
    (b / "leaderboard.json").write_bytes(content)
    named = str(b) if case == "no dataset in common" else str(b / "leaderboard.json")
    assert_one_line_error(compare(str(a), str(b)), named, message)


SUMMARIES = {
    "not JSON": (b"{", "not a JSON summary (invalid JSON"),
    "not UTF-8": (b'{"dataset_path": "\xfe"}', "not UTF-8"),
    "a list": (b"[]", "expected a JSON object, got a JSON array"),
    "a number as path": (b'{"dataset_path": 3}', "dataset_path should be a string or null, got a JSON number"),
    "a list as split": (b'{"dataset_path": "x", "split": ["test"]}', "split should be a string"),
    "a string as configuration": (b'{"dataset_path": "x", "configuration": "x"}', "configuration should be"),
    "files a list": (
        b'{"dataset_path": "x", "configuration": {"dataset": {"files": []}}}',
        "configuration.dataset.files should be",
    ),
    "a file without hash": (
        b'{"dataset_path": "x", "configuration": {"dataset": {"files": {"corpus.jsonl": {"size": 1}}}}}',
        "configuration.dataset.files.corpus.jsonl.sha256 should be a string",
    ),
}


def test_a_suite_dataset_without_its_summary_is_one_line_naming_it(two_suites):
    a, b = two_suites
    (b / "sample" / "summary.json").unlink()
    assert_one_line_error(compare(str(a), str(b)), str(b / "sample" / "summary.json"), "file not found")


@pytest.mark.parametrize("case", SUMMARIES, ids=list(SUMMARIES))
@pytest.mark.parametrize("kind", ["suites", "dataset folders"])
def test_a_malformed_summary_is_one_line_naming_the_file(two_suites, case, kind):
    a, b = two_suites
    content, message = SUMMARIES[case]
    (b / "sample" / "summary.json").write_bytes(content)
    args = (str(a), str(b)) if kind == "suites" else (str(a / "sample"), str(b / "sample"))
    assert_one_line_error(compare(*args), str(b / "sample" / "summary.json"), message)


def test_a_malformed_summary_is_not_read_when_qrels_are_given(two_suites):
    a, b = two_suites
    (b / "sample" / "summary.json").write_bytes(b"[")
    qrels = json.loads((a / "sample" / "summary.json").read_text())["dataset_path"] + "/qrels/test.tsv"
    proc = compare(str(a / "sample"), str(b / "sample"), "--qrels", qrels, "-k", "1", "--no-stats")
    assert proc.returncode == 0, proc.stderr


def test_folders_of_different_datasets_are_one_line_naming_both(tmp_path):
    one = run_folder(tmp_path / "runs" / "one", dataset(tmp_path / "one"))
    two = run_folder(tmp_path / "runs" / "two", dataset(tmp_path / "two", QRELS.replace("q3\td3", "q3\td9")))
    assert_one_line_error(compare(str(one), str(two)), str(one), str(two), "qrels/test.tsv differs", "--qrels")
    a = suite(tmp_path / "a", tmp_path / "one")
    b = suite(tmp_path / "b", tmp_path / "two")
    assert_one_line_error(compare(str(a), str(b)), "ran different copies of 1 dataset(s)", "sample (qrels/test.tsv")


def test_a_dataset_folder_that_is_gone_is_one_line(tmp_path):
    data = dataset(tmp_path / "data")
    one, two = run_folder(tmp_path / "one", data), run_folder(tmp_path / "two", data)
    (data / "qrels" / "test.tsv").unlink()
    assert_one_line_error(compare(str(one), str(two)), "no qrels file where the summaries say", "--qrels")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{a}"], "compare needs two runs or more"),
        (["{a}", "{b}", "{a}"], "give two suite folders"),
        (["{a}", "{b}/sample"], "give two suite folders"),
        (["{a}", "{b}", "--baseline", "a"], "--baseline is for runs"),
        (["{a}/sample", "{b}/sample", "--baseline", "c"], "the baseline 'c' is not one of the runs"),
        (["{a}/sample", "{b}/sample", "--names", "x"], "--names needs two labels"),
        (["{a}/sample", "{b}/sample", "--names", "x,x"], "two different labels"),
        (["{a}/sample/run.trec", "{b}/sample/run.trec"], "no qrels: give --qrels"),
        (["{a}/sample", "{b}/missing"], "missing: file not found"),
    ],
)
def test_bad_arguments_are_one_line(two_suites, args, message):
    a, b = two_suites
    assert_one_line_error(compare(*(arg.format(a=a, b=b) for arg in args)), message)
