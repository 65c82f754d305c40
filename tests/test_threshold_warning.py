"""Qrels whose labels never reach the relevance threshold (click-derived labels in [0, 1] under the default 1)
make every binary measure and the P-R curve 0: every command says so once, naming the threshold and the
labels' range (a :class:`~haystack_irmetrics.errors.NoRelevantLabelWarning` from the core's plausibility
checks, which every evaluation passes), and ``--threshold`` (``report`` has it too) gives the numbers."""

from __future__ import annotations

import json
import warnings

import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import main

#: Click-derived labels of two queries (as `irmetrics clicks fit` writes them) and two runs.
CLICK_QRELS = "q1 0 d1 0.8125\nq1 0 d2 0.25\nq1 0 d3 0.0\nq2 0 d4 0.5\nq2 0 d5 0.0625\n"
RUN_A = "q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq1 Q0 d9 3 1 a\nq2 Q0 d4 1 2 a\nq2 Q0 d5 2 1 a\n"
RUN_B = "q1 Q0 d3 1 3 b\nq1 Q0 d1 2 2 b\nq1 Q0 d2 3 1 b\nq2 Q0 d5 1 2 b\nq2 Q0 d4 2 1 b\n"
WARNING = "irmetrics: warning: no label of the qrels reaches the relevance threshold 1 "

# The suite ignores the SuspiciousInputWarning family (pyproject.toml); here it is shown, as a user sees it.
pytestmark = pytest.mark.filterwarnings("default::haystack_irmetrics.errors.NoRelevantLabelWarning")


@pytest.fixture
def files(tmp_path):
    for name, text in (("clicks.qrels", CLICK_QRELS), ("a.trec", RUN_A), ("b.trec", RUN_B)):
        (tmp_path / name).write_text(text)
    return tmp_path / "clicks.qrels", tmp_path / "a.trec", tmp_path / "b.trec"


def _warned_once(err: str) -> None:
    lines = [line for line in err.splitlines() if line.startswith("irmetrics: warning:")]
    assert len(lines) == 1, err
    assert lines[0].startswith(WARNING) and "range from 0 to 0.8125" in lines[0] and "--threshold" in lines[0]


def test_evaluate(files, capsys):
    qrels, a, _ = files
    assert main(["evaluate", str(qrels), str(a), "-k", "1,3", "-m", "P,NDCG"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["P@1"] == 0.0
    _warned_once(err)
    assert main(["evaluate", str(qrels), str(a), "-k", "1,3", "-m", "P,NDCG", "--threshold", "0.5"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["P@1"] == 1.0 and "warning" not in err
    assert main(["evaluate", str(qrels), str(a), "-k", "1", "-m", "NDCG"]) == 0  # no binary measure: nothing to say
    assert "warning" not in capsys.readouterr().err


def test_compare_says_it_once_for_all_its_runs(files, capsys):
    qrels, a, b = files
    argv = ["compare", str(a), str(b), "--qrels", str(qrels), "-k", "1,3", "-m", "P,MAP", "--format", "json"]
    assert main([*argv, "--no-stats"]) == 0
    out, err = capsys.readouterr()
    _warned_once(err)
    assert main([*argv, "--no-stats", "--threshold", "0.5"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["metrics"]["P@1"]["a"] == 1.0 and "warning" not in err


def test_report_takes_threshold_and_says_it_once(files, tmp_path, capsys):
    qrels, a, b = files
    argv = ["report", str(a), str(b), "--qrels", str(qrels), "-k", "1,3", "-m", "P,NDCG", "--no-stats"]
    assert main([*argv, "-o", str(tmp_path / "r.html"), "--csv", str(tmp_path / "r.csv")]) == 0
    _warned_once(capsys.readouterr().err)
    assert main([*argv, "--threshold", "0.5", "-o", str(tmp_path / "t.html"), "--csv", str(tmp_path / "t.csv")]) == 0
    assert "warning" not in capsys.readouterr().err
    rows = (tmp_path / "t.csv").read_text().splitlines()
    assert any(row.startswith("a,P@1,1") for row in rows), rows


def test_plot_pr(files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    qrels, a, b = files
    assert main(["plot", "pr", str(qrels), str(a), str(b), "-o", str(tmp_path / "pr.png")]) == 0
    _warned_once(capsys.readouterr().err)
    assert main(["plot", "pr", str(qrels), str(a), "--threshold", "0.25", "-o", str(tmp_path / "t.png")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_the_python_api_warns_with_the_class_and_not_when_a_label_reaches_the_threshold():
    from haystack_irmetrics.errors import NoRelevantLabelWarning, SuspiciousInputWarning

    qrels = {"q1": {"d1": 0.8, "d2": 0.2}}
    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    with pytest.warns(NoRelevantLabelWarning, match=r"threshold 1 .*range from 0\.2 to 0\.8") as caught:
        assert evaluate(qrels, run, [1], measures=["P", "MAP"]).means["P@1"] == 0.0
    assert len(caught) == 1 and issubclass(NoRelevantLabelWarning, SuspiciousInputWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert evaluate(qrels, run, [1], measures=["P"], relevance_threshold=0.5).means["P@1"] == 1.0
        evaluate(qrels, run, [1], measures=["NDCG"])  # gains, not a threshold
        evaluate({"q1": {"d1": 1, "d2": 0}}, run, [1], measures=["P"])
