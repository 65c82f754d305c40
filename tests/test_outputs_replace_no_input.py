"""An output never replaces an input: every ``irmetrics`` command that writes refuses, before any work, an output
path that is one of its inputs or would replace one (through a symbolic link, ``..`` or a hard link alike), with
exit 2 and one line naming both paths, the input left byte for byte as it was (``io.output.check_outputs``, run
by ``cli.main`` on what each command declares); what each command declares covers every file it writes; and
``irmetrics judge -o DIR`` holds DIR's lock as ``irmetrics beir`` does."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from haystack_irmetrics.cli import build_parser, main

from .conftest import ROOT

EXAMPLES = ROOT / "examples" / "data"
SAMPLE = ROOT / "haystack_irmetrics" / "datasets" / "sample"
RUN_A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq2 Q0 d3 1 1.0 a\n"
RUN_B = "q1 Q0 d2 1 3.0 b\nq1 Q0 d3 2 1.0 b\nq2 Q0 d1 1 2.0 b\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"


def refused(capsys, argv: list[str], *inputs: Path) -> str:
    """Run ``irmetrics argv``: exit 2, one line naming the output and the input, each input byte-identical."""
    before = {p: p.read_bytes() for p in inputs}
    stamps = {p: p.stat().st_mtime_ns for p in inputs}
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("irmetrics: error: "), err
    assert "replace the input" in err[0] or "holds the input" in err[0] or "are one file" in err[0], err
    for p in inputs:
        assert p.read_bytes() == before[p] and p.stat().st_mtime_ns == stamps[p], p
    return err[0]


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.trec").write_text(RUN_A)
    (tmp_path / "b.trec").write_text(RUN_B)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "link.trec").symlink_to(tmp_path / "a.trec")
    (tmp_path / "sub").mkdir()
    return tmp_path


# -- fuse: the issue's own example, and every spelling of the same file ---------------------------------------


@pytest.mark.parametrize("output", ["a.trec", "link.trec", "sub/../a.trec", "{abs}/a.trec", "hard.trec"])
def test_fuse_refuses_to_write_the_fused_run_over_an_input_run(files, capsys, output):
    os.link(files / "a.trec", files / "hard.trec")
    output = output.format(abs=files)
    err = refused(capsys, ["fuse", "a.trec", "b.trec", "-o", output], files / "a.trec")
    assert f"the output {output} would replace the input a.trec" in err
    if output in ("link.trec", "hard.trec"):
        assert "both are" in err or "hard links" in err
    assert main(["fuse", "a.trec", "b.trec", "-o", "fused.trec"]) == 0  # another path: fused as before


def test_fuse_refuses_the_qrels_and_two_outputs_that_are_one_file(files, capsys):
    argv = ["fuse", "a.trec", "b.trec", "--qrels", "qrels.txt", "--method", "wsum", "--optimize", "--folds", "2"]
    refused(capsys, [*argv, "--joiner-yaml", "qrels.txt"], files / "qrels.txt")
    err = refused(capsys, ["fuse", "a.trec", "b.trec", "-o", "f.trec", "--joiner-yaml", "sub/../f.trec"])
    assert "the outputs f.trec and sub/../f.trec are one file" in err
    assert not (files / "f.trec").exists()


# -- judge: the human qrels are never replaced by the filled ones ----------------------------------------------


def _judge_args(case, out, url="http://127.0.0.1:9/v1", *extra):
    return [
        "judge",
        *map(str, case.runs),
        "--qrels",
        str(case.qrels),
        "--queries",
        str(case.folder),
        "--corpus",
        str(case.folder),
        "--depth",
        "5",
        "--llm",
        "judge-model",
        "--api-base-url",
        url,
        "-o",
        str(out),
        "--backoff",
        "0.01",
        *extra,
    ]


def test_judge_refuses_to_write_the_filled_qrels_over_the_human_ones(tmp_path, capsys):
    pytest.importorskip("haystack")
    from .judge_data import make_case

    case = make_case(tmp_path / "data", n_queries=2)  # its human qrels are data/qrels.tsv
    assert case.qrels == case.folder / "qrels.tsv"
    (tmp_path / "linked").symlink_to(case.folder)
    inputs = (case.qrels, case.folder / "queries.jsonl", case.folder / "corpus.jsonl", *case.runs)
    there = sorted(case.folder.iterdir())
    for out in (case.folder, tmp_path / "linked", tmp_path / "data" / "." / ".." / "data"):
        err = refused(capsys, _judge_args(case, out), *inputs)  # the server is never asked: nothing listens there
        assert f"would replace the input {case.qrels}" in err
    assert sorted(case.folder.iterdir()) == there  # nothing written, not even the lock
    run = case.runs[0]
    (tmp_path / "out2").mkdir()
    (tmp_path / "out2" / "judgments.jsonl").symlink_to(run)  # a link in DIR to an input run
    err = refused(capsys, _judge_args(case, tmp_path / "out2"), *inputs)
    assert f"would replace the input {run}" in err


# -- clicks fit and windows, feedback, plot, report --------------------------------------------------------------


def test_clicks_fit_and_windows_refuse_to_write_over_the_click_log(tmp_path, capsys):
    pytest.importorskip("polars")
    log = tmp_path / "clicks" / "skipped_rows.csv"  # a log whose name clicks fit writes in its folder
    log.parent.mkdir()
    shutil.copy(EXAMPLES / "click_log.csv", log)
    err = refused(capsys, ["clicks", "fit", str(log), "--model", "ctr", "-o", str(log.parent)], log)
    assert f"the output {log} would replace the input {log}" in err
    test_log = tmp_path / "test.csv"
    test_log.symlink_to(log)
    err = refused(capsys, ["clicks", "fit", str(EXAMPLES / "click_log.csv"), "--model", "pbm", "--test",
                           str(test_log), "-o", str(log.parent)], log)  # fmt: skip
    assert f"would replace the input {test_log} (both are {log})" in err
    refused(capsys, ["clicks", "windows", str(log), "--plot", str(test_log)], log)
    assert not (log.parent / "qrels.tsv").exists()


def test_feedback_refuses_to_write_its_report_or_qrels_over_its_inputs(tmp_path, capsys):
    pytest.importorskip("polars")
    log = tmp_path / "log.csv"
    shutil.copy(EXAMPLES / "feedback_log.csv", log)
    qrels = tmp_path / "report" / "qrels.txt"  # the qrels an earlier --report wrote, given back as --qrels
    qrels.parent.mkdir()
    qrels.write_text("q01 0 q01-d05 1\n")
    base = ["feedback", str(log), "--no-plots"]
    err = refused(capsys, [*base, "--qrels", str(qrels), "--report", str(qrels.parent)], log, qrels)
    assert f"the output {qrels} would replace the input {qrels}" in err
    refused(capsys, [*base, "--qrels", str(qrels), "--write-qrels", str(qrels)], log, qrels)
    refused(capsys, [*base, "--write-qrels", str(tmp_path / "." / "log.csv")], log)
    (qrels.parent / "plots").mkdir()
    inside = qrels.parent / "plots" / "log.csv"  # the plots folder is the report's own: no input may be in it
    shutil.copy(log, inside)
    err = refused(capsys, ["feedback", str(inside), "--report", str(qrels.parent)], inside)
    assert f"the output folder {qrels.parent / 'plots'} holds the input {inside}" in err
    new = EXAMPLES / "new.trec"
    named = tmp_path / "new.trec"
    shutil.copy(new, named)
    refused(capsys, [*base, "--run", f"new={named}", "--write-qrels", str(named)], log, named)


def test_plot_refuses_to_draw_over_the_qrels_or_a_named_run(files, capsys):
    pytest.importorskip("matplotlib")
    (files / "plot.png").symlink_to(files / "qrels.txt")
    err = refused(capsys, ["plot", "pr", "qrels.txt", "a.trec", "-o", "plot.png"], files / "qrels.txt")
    assert "the output plot.png would replace the input qrels.txt" in err
    refused(capsys, ["plot", "pr", "qrels.txt", "bm25=a.trec", "-o", "link.trec"], files / "a.trec")


def test_report_refuses_to_write_the_page_or_an_export_over_an_input(files, capsys):
    base = ["report", "a.trec", "b.trec", "--qrels", "qrels.txt", "-m", "NDCG", "-k", "10", "--no-stats"]
    refused(capsys, [*base, "-o", "link.trec"], files / "a.trec")
    refused(capsys, [*base, "-o", "r.html", "--csv", "qrels.txt"], files / "qrels.txt")
    (files / "queries.tsv").write_text("q1\tfirst\nq2\tsecond\n")
    refused(capsys, [*base, "--queries", "queries.tsv", "-o", "r.html", "--markdown", "queries.tsv"])
    err = refused(capsys, [*base, "-o", "r.html", "--latex", "sub/../r.html"])
    assert "are one file" in err
    # a beir output folder given as the run: its run.trec and summary.json are inputs
    folder = files / "beir" / "sample"
    folder.mkdir(parents=True)
    shutil.copy(files / "a.trec", folder / "run.trec")
    refused(capsys, ["report", str(files / "beir"), "--qrels", "qrels.txt", "-o", str(folder / "run.trec")],
            folder / "run.trec")  # fmt: skip
    # the judged folder's files are inputs: -o DIR/qrels.tsv is refused
    judged = files / "judged"
    judged.mkdir()
    (judged / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    err = refused(capsys, [*base, "--judged", str(judged), "-o", str(judged / "qrels.tsv")], judged / "qrels.tsv")
    assert f"would replace the input {judged / 'qrels.tsv'}" in err
    assert main([*base, "-o", str(folder / "report.html")]) == 0  # beside the inputs: written as before


# -- beir: an output folder that is the dataset's own ------------------------------------------------------------


def test_beir_refuses_an_output_dataset_folder_that_is_the_dataset(tmp_path, capsys):
    pytest.importorskip("haystack")
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data / "sample")
    (tmp_path / "linked").symlink_to(data / "sample")
    (data / "sample" / "summary.json").write_text("{}")  # a file --overwrite would delete
    inputs = sorted(p for p in (data / "sample").rglob("*") if p.is_file())
    for spec in (data / "sample", tmp_path / "linked"):
        err = refused(capsys, ["beir", str(spec), "-o", str(data), "--overwrite"], *inputs)
        assert f"the output folder {data / 'sample'} holds the input {spec}" in err
    assert sorted(p for p in (data / "sample").rglob("*") if p.is_file()) == inputs
    from haystack_irmetrics.beir import run_beir
    from haystack_irmetrics.errors import OutputError

    with pytest.raises(OutputError, match="holds the input"):  # the Python entry point: the same check
        run_beir(data / "sample", output_dir=data / "sample", progress=False)
    assert sorted(p for p in (data / "sample").rglob("*") if p.is_file()) == inputs


# -- every command declares what it reads and writes, and what it declares covers what it writes -------------------


def _leaves(parser: argparse.ArgumentParser, prog: str = "irmetrics"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                if command.get_default("func") is not None:
                    yield f"{prog} {name}", command
                yield from _leaves(command, f"{prog} {name}")


def test_every_command_declares_what_it_reads_and_writes_and_one_that_does_not_cannot_run():
    leaves = dict(_leaves(build_parser()))
    assert {"irmetrics fuse", "irmetrics judge", "irmetrics clicks fit", "irmetrics cache"} <= set(leaves)
    assert all(command.get_default("paths") is not None for command in leaves.values())
    from haystack_irmetrics.cli import app

    parser = argparse.ArgumentParser(prog="irmetrics")
    sub = parser.add_subparsers()
    sub.add_parser("new").set_defaults(func=lambda args: 0)  # a new command that forgot paths=
    with pytest.raises(TypeError, match="irmetrics new sets func but not paths"):
        app._check_declared(parser)


def _declared(argv: list[str]):
    args = build_parser().parse_args(argv)
    return args.paths(args)


def _covered(written: set[Path], declared) -> set[Path]:
    files = {Path(os.path.realpath(p)) for p in declared.writes}
    folders = [Path(os.path.realpath(p)) for p in declared.folders]
    return {p for p in written if p not in files and not any(p.is_relative_to(f) for f in folders)}


def _new_files(folder: Path, before: set[Path]) -> set[Path]:
    return {Path(os.path.realpath(p)) for p in folder.rglob("*") if p.is_file() and p not in before}


def test_what_each_writing_command_declares_covers_every_file_it_writes(tmp_path, monkeypatch, capsys):
    pytest.importorskip("polars")
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.trec").write_text(RUN_A)
    (tmp_path / "b.trec").write_text(RUN_B)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "out").mkdir()
    shutil.copy(EXAMPLES / "feedback_log.csv", "feedback.csv")
    shutil.copy(EXAMPLES / "new.trec", "new.trec")
    with open("feedback.csv", "a", encoding="utf-8") as f:
        f.write("q01,q01-d05,x,down,u1,2026-03-01T09:02:00Z,mobile\n")  # a malformed row: skipped_rows.csv
    shutil.copy(EXAMPLES / "click_log.csv", "clicks.csv")
    rows = [
        f"s{i},q{i % 3},d{(i + r) % 7},{r},{int(r == 1)},2026-03-0{1 + i % 4}T10:00:00Z"
        for i in range(40)
        for r in (1, 2)
    ]
    Path("timed.csv").write_text("session,query_id,doc_id,position,click,timestamp\n" + "\n".join(rows) + "\n")
    with open("clicks.csv", "a", encoding="utf-8") as f:
        f.write("s999,q01,doc0001,2,1\n")  # a session without position 1: skipped_sessions.csv
    commands = [
        ["fuse", "a.trec", "b.trec", "-o", "out/fused.trec", "--joiner-yaml", "out/joiner.yaml"],
        ["plot", "pr", "qrels.txt", "a.trec", "-o", "out/pr.png"],
        ["report", "a.trec", "b.trec", "--qrels", "qrels.txt", "-o", "out/r.html", "--csv", "out/r.csv", "--latex",
         "out/r.tex", "--markdown", "out/r.md", "--n-resamples", "100"],
        ["feedback", "feedback.csv", "--run", "new=new.trec", "--report", "out/fb", "--write-qrels", "out/q.txt",
         "--on-error", "skip", "--timestamp-col", "ts", "--window", "7d", "--user-col", "user_id"],
        ["clicks", "fit", "clicks.csv", "--model", "pbm", "-o", "out/fit", "--on-error", "skip", "--max-iter", "5"],
        ["clicks", "windows", "timed.csv", "--plot", "out/w.png", "--n-resamples", "50"],
    ]  # fmt: skip
    for argv in commands:
        before = {p for p in tmp_path.rglob("*") if p.is_file()}
        assert main(argv) == 0, (argv, capsys.readouterr().err)
        written = _new_files(tmp_path, before)
        assert written, argv
        assert _covered(written, _declared(argv)) == set(), argv
    assert any(p.name == "skipped_rows.csv" for p in (tmp_path / "out" / "fb").iterdir())
    assert any(p.name == "skipped_sessions.csv" for p in (tmp_path / "out" / "fit").iterdir())


def test_what_judge_declares_covers_every_file_it_writes(tmp_path, monkeypatch):
    pytest.importorskip("haystack")
    from .judge_data import make_case
    from .judge_server import JudgeServer

    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))
    case = make_case(tmp_path / "data", n_queries=4)
    out = tmp_path / "out"
    with JudgeServer(case.labels) as server:
        argv = _judge_args(case, out, server.url, "--agreement", "4")
        assert main(argv) == 0
    written = _new_files(out, set())
    assert {p.name for p in written} >= {"judgments.jsonl", "qrels.tsv", "summary.json", "agreement.json"}
    assert _covered(written - {Path(os.path.realpath(out / ".irmetrics.lock"))}, _declared(argv)) == set()


# -- irmetrics judge -o DIR: one judge at a time -------------------------------------------------------------------


def test_a_second_judge_on_the_same_folder_is_refused_while_the_first_runs(tmp_path, capsys, monkeypatch):
    pytest.importorskip("haystack")
    from .judge_data import make_case
    from .judge_server import JudgeServer

    case = make_case(tmp_path / "data", n_queries=4)
    out = tmp_path / "out"
    env = {
        **os.environ,
        "IRMETRICS_CACHE_DIR": str(tmp_path / "cache1"),
        "HAYSTACK_TELEMETRY_ENABLED": "False",
    }
    with JudgeServer(case.labels, delay=0.2) as server:
        argv = _judge_args(case, out, server.url, "--concurrency", "1")
        first = subprocess.Popen(
            [sys.executable, "-m", "haystack_irmetrics.cli", *argv],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 120
        while not server.requests and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.01)
        assert server.requests and first.poll() is None, "the first judge did not start judging"
        monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache2"))
        second = [a if a != "judge-model" else "second-model" for a in argv]
        capsys.readouterr()
        assert main(second) == 2  # refused at once: no request, nothing written
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"output folder {out} is in use by another irmetrics judge run" in err[0], err
        assert first.poll() is None, "the first judge ended before the second was refused: no overlap tested"
        server.delay = 0.0  # the overlap is tested: both judges' remaining requests need no pause
        _, stderr = first.communicate(timeout=300)
        assert first.returncode == 0, stderr
        assert "second-model" not in server.models
        lines = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
        assert len(lines) == len({(r["query_id"], r["doc_id"]) for r in lines}) > 0  # one judge's lines, each once
        summary = json.loads((out / "summary.json").read_text())
        assert summary["pairs"] == len(lines) == summary["requests"]
        assert main(second) == 0  # the first is done: the folder is free again
    assert "second-model" in server.models
