"""``[NAME=]RUN`` means the same in every command that takes runs, and an unnamed run has one name everywhere
(:mod:`haystack_irmetrics.io.run_names`): ``compare``, ``report``, ``plot``, ``judge``, ``feedback`` and ``fuse``
each name ``bm25.run.trec`` ``bm25`` and take ``dense=x/other.trec`` as ``dense``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import InvalidArgumentError

from .conftest import ROOT

DATA = ROOT / "examples" / "data"
QRELS = DATA / "half_qrels.tsv"


@pytest.fixture
def two_runs(tmp_path):
    """``bm25.run.trec`` (examples' good.trec) and ``x/other.trec`` (poor.trec), and the working folder."""
    (tmp_path / "x").mkdir()
    shutil.copy(DATA / "good.trec", tmp_path / "bm25.run.trec")
    shutil.copy(DATA / "poor.trec", tmp_path / "x" / "other.trec")
    return tmp_path / "bm25.run.trec", tmp_path / "x" / "other.trec"


def test_the_rule(tmp_path):
    from haystack_irmetrics.io.run_names import label_runs, run_name, run_names, split_named, split_runs

    assert run_name("a/bm25.run.trec.gz") == "bm25" and run_name("run.v2.TREC") == "run.v2"
    assert run_name("pipe.yaml") == "pipe" and run_name(".trec") == ".trec" and run_name("results") == "results"
    (tmp_path / "scifact.trec").mkdir()  # a folder keeps its whole name
    assert run_name(tmp_path / "scifact.trec") == "scifact.trec"
    assert run_names(["r/bm25/scifact.trec", "r/dense/scifact.trec", {"q": {}}]) == [
        "bm25/scifact",
        "dense/scifact",
        None,
    ]
    assert split_named("a=b.trec") == ("a", "b.trec") and split_named("=b.trec") == (None, "=b.trec")
    odd = tmp_path / "k=1.trec"  # an existing file is that file, '=' in its name or not
    odd.write_text("")
    assert split_named(str(odd)) == (None, str(odd))
    with pytest.raises(InvalidArgumentError, match="names no run"):
        split_named("bm25=")
    assert split_runs(["a.trec", "b.trec"]) == (["a.trec", "b.trec"], None)
    assert split_runs(["x=a.trec", "d/b.trec"]) == (["a.trec", "d/b.trec"], ["x", "b"])
    with pytest.raises(InvalidArgumentError, match="either as NAME=RUN or with --names"):
        split_runs(["x=a.trec", "b.trec"], ["p", "q"])
    with pytest.raises(InvalidArgumentError, match="two runs are named 'b'"):
        label_runs(["b=a.trec", "b.trec"])


def test_compare(two_runs, capsys):
    a, b = two_runs
    assert main(["compare", str(a), f"dense={b}", "--qrels", str(QRELS), "-k", "10", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == ["bm25", "dense"]
    assert main(["compare", str(a), str(b), "--qrels", str(QRELS), "-k", "10", "--format", "json", "--no-stats"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == ["bm25", "other"]


def test_report(two_runs, tmp_path):
    a, b = two_runs
    md = tmp_path / "t.md"
    argv = ["report", str(a), f"dense={b}", "--qrels", str(QRELS), "-k", "10", "-m", "NDCG", "--no-stats"]
    assert main([*argv, "-o", str(tmp_path / "r.html"), "--markdown", str(md)]) == 0
    rows = [line.split(" | ")[0].strip("| ") for line in md.read_text().splitlines() if line.startswith("| ")]
    assert {"bm25", "dense"} <= set(rows)
    assert main([*argv, "--names", "p,q", "-o", str(tmp_path / "r2.html")]) == 2


def test_plot(two_runs, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "svg.fonttype", "none")  # the legend's names as text
    a, b = two_runs
    out = tmp_path / "pr.svg"
    assert main(["plot", "pr", str(QRELS), str(a), f"dense={b}", "-o", str(out)]) == 0
    legend = {t.split(" (area")[0] for t in re.findall(r">([^<>]+) \(area [\d.]+\)</text>", out.read_text())}
    assert legend == {"bm25", "dense"}


def test_fuse(two_runs, tmp_path, capsys):
    a, b = two_runs
    argv = ["fuse", str(a), f"dense={b}", "--method", "wsum", "--optimize", "--qrels", str(QRELS), "--folds", "2"]
    assert main([*argv, "--json", "-o", str(tmp_path / "f.trec")]) == 0
    assert set(json.loads(capsys.readouterr().out)["inputs"]) == {"bm25", "dense"}


def test_feedback(tmp_path, capsys):
    """The same file name in two folders: named by their folders as everywhere, not refused as 'new' twice."""
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copy(DATA / "new.trec", tmp_path / sub / "new.trec")
    shutil.copy(DATA / "new.trec", tmp_path / "bm25.run.trec")
    log = str(DATA / "feedback_log.csv")
    runs = ["--run", str(tmp_path / "a" / "new.trec"), "--run", str(tmp_path / "b" / "new.trec")]
    runs += ["--run", str(tmp_path / "bm25.run.trec"), "--run", f"dense={tmp_path / 'a' / 'new.trec'}"]
    assert main(["feedback", log, *runs, "--n-resamples", "100", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["systems"]) >= {"a/new", "b/new", "bm25", "dense"}
    twice = ["--run", str(tmp_path / "bm25.run.trec"), "--run", f"bm25={tmp_path / 'a' / 'new.trec'}"]
    assert main(["feedback", log, *twice, "--n-resamples", "100"]) == 2
    assert "two systems are named 'bm25'" in capsys.readouterr().err


def test_judge(tmp_path):
    pytest.importorskip("haystack")
    from .judge_data import make_case
    from .judge_server import JudgeServer

    case = make_case(tmp_path / "data")
    first, second = case.runs
    named = tmp_path / "data" / "bm25.run.trec"
    first.rename(named)
    out = tmp_path / "out"
    argv = ["judge", str(named), f"dense={second}", "--qrels", str(case.qrels), "--queries", str(case.folder)]
    argv += ["--corpus", str(case.folder), "--depth", "3", "--llm", "m", "-o", str(out), "--no-cache"]
    with JudgeServer(case.labels) as server:
        assert main([*argv, "--api-base-url", server.url]) == 0
    assert set(json.loads((out / "summary.json").read_text())["Hole@3"]) == {"bm25", "dense"}


def test_the_rule_is_written_in_the_cli_page():
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "## Naming runs" in page and "bm25.run.trec" in page
    for ext in (".gz", ".trec", ".run"):
        assert ext in page
    assert Path(ROOT / "haystack_irmetrics" / "io" / "run_names.py").is_file()
