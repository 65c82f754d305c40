"""`irmetrics beir -o DIR` as a real process against a hostile output folder: a damaged or tampered
checkpoint, a damaged summary of a finished dataset, a full disk, a second run on the same folder.
Each ends with exit status 2 and one line of error (never a traceback), and ``--overwrite`` (where it
applies) starts over and succeeds. The default dataset is the shipped sample (under a second a run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from haystack_irmetrics.beir._builtin import builtin_pipeline
from haystack_irmetrics.beir.checkpoint import record_fields, record_line

from .conftest import ROOT
from .test_beir_resume import make_checkpoint, relist


def irmetrics_beir(*args: str, code: str | None = None, wait: bool = True):
    """``python -m haystack_irmetrics.cli beir ARGS --no-progress`` (or ``python -c CODE beir ...``)."""
    command = [sys.executable, *(["-c", code] if code else ["-m", "haystack_irmetrics.cli"]), "beir", *args]
    env = {**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False"}
    if not wait:
        return subprocess.Popen(
            [*command, "--no-progress"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    return subprocess.run([*command, "--no-progress"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def assert_one_line_error(proc, *fragments: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("irmetrics: error: ")
    for fragment in fragments:
        assert fragment in line, line
    return line


def assert_runs_over(out: Path, *args: str) -> None:
    proc = irmetrics_beir("-o", str(out), "--overwrite", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads((out / "sample" / "metrics.json").read_text())["NDCG@10"] == 0.76977
    assert not (out / "sample" / ".partial").exists()
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


# --- damaged and tampered checkpoints (--overwrite used to loop on them, or they gave a traceback) ---


def _not_utf8(partial: Path) -> None:
    path = partial / "batch-000001.jsonl"
    path.write_bytes(b"\xff" + path.read_bytes()[1:])


def _not_utf8_and_relisted(partial: Path) -> None:
    _not_utf8(partial)
    relist(partial)


def _index_state(partial: Path) -> None:
    index = json.loads((partial / "index.json").read_text())
    index["index"]["n_indexed"] = "lots"  # min(top_k, "lots") was a TypeError
    (partial / "index.json").write_text(json.dumps(index))


def _index_not_utf8(partial: Path) -> None:
    (partial / "index.json").write_bytes(b'{"index": "\xff"}')


def _stray_batch(partial: Path) -> None:
    shutil.copy(partial / "batch-000000.jsonl", partial / "batch-000077.jsonl")


def _document_outside_the_corpus(partial: Path) -> None:
    path = partial / "batch-000002.jsonl"
    rows = path.read_text().splitlines()
    row = record_fields(rows[0])
    row["d"].insert(0, ["doc9999", 50.0])  # would rank first and change every measure of that query
    line = record_line(row["q"], [d for d, _ in row["d"]], [s for _, s in row["d"]], row["m"], row["s"])
    path.write_text("\n".join([line, *rows[1:]]) + "\n")
    relist(partial)


@pytest.mark.parametrize(
    "damage,says",
    [
        (_not_utf8, "batch-000001.jsonl is not the batch index.json recorded"),
        (_not_utf8_and_relisted, "batch-000001.jsonl, line 1: not UTF-8"),
        (_index_state, "index.json: 'index' is not what indexing records"),
        (_index_not_utf8, "cannot read"),
        (_stray_batch, "batch-000077.jsonl is not a batch this checkpoint's index.json lists"),
        (_document_outside_the_corpus, "batch-000002.jsonl, line 1: document 'doc9999'"),
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else None,
)
def test_a_damaged_checkpoint_exits_2_in_one_line_and_overwrite_starts_over(tmp_path, monkeypatch, damage, says):
    out = tmp_path / "out"
    damage(make_checkpoint(out / "sample", monkeypatch))
    assert_one_line_error(irmetrics_beir("-o", str(out)), says, "pass --overwrite")
    assert_runs_over(out)


# --- a damaged summary.json of a finished dataset ---


@pytest.mark.parametrize("keep", [["configuration"], ["configuration", "metrics", "raw_metrics"]])
def test_a_finished_dataset_whose_summary_lost_its_fields_exits_2_in_one_line(tmp_path, keep):
    out = tmp_path / "out"
    assert irmetrics_beir("-o", str(out), "-k", "10").returncode == 0
    path = out / "sample" / "summary.json"
    summary = json.loads(path.read_text())
    path.write_text(json.dumps({key: summary[key] for key in keep}))  # its configuration still matches
    assert_one_line_error(irmetrics_beir("-o", str(out), "-k", "10"), "its summary.json is damaged", "--overwrite")
    assert_runs_over(out, "-k", "10")


# --- a full disk ---

FULL_DISK = """
import errno, sys
from haystack_irmetrics.beir import runner

def full(results, path, tag):
    with open(path, "w") as f:
        f.write("q Q0 d 1 1.0 x\\n" * 20000)
    raise OSError(errno.ENOSPC, "No space left on device")

runner.write_trec_run = full
from haystack_irmetrics.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _mount_tmpfs(folder: Path, size: str) -> bool:
    folder.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)]).returncode == 0


def test_a_full_disk_exits_2_naming_the_file_and_leaves_no_temporary_file_then_resumes(tmp_path):
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "64k"):  # not root: the write itself fails as a full disk would
        out = disk / "out"
        line = assert_one_line_error(irmetrics_beir("-o", str(out), code=FULL_DISK), "No space left on device")
        assert line == f"irmetrics: error: cannot write {out / 'sample' / 'run.trec'}: No space left on device"
        assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
        return
    try:
        out = disk / "out"
        line = assert_one_line_error(irmetrics_beir("-o", str(out)), "No space left on device")
        assert line.startswith(f"irmetrics: error: cannot write {out / 'sample'}/")
        assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]  # the half-written file is gone
        assert sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) < 16_000
        subprocess.run(["mount", "-o", "remount,size=8m", str(disk)], check=True)
        proc = irmetrics_beir("-o", str(out))  # the same command, with room: it resumes and finishes
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert json.loads((out / "sample" / "metrics.json").read_text())["NDCG@10"] == 0.76977
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


# --- two runs on one output folder ---


def gated_pipeline(path: Path, reached: Path, release: Path) -> Path:
    """The built-in BM25 pipeline holding every query at a gate (tests.beir_gate.Gate) until ``release`` exists."""
    spec = builtin_pipeline("bm25")
    spec["components"]["gate"] = {
        "type": "tests.beir_gate.Gate",
        "init_parameters": {"reached": str(reached), "release": str(release)},
    }
    spec["connections"] = [{"sender": "retriever.documents", "receiver": "gate.documents"}]
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def test_a_second_run_on_the_same_output_folder_exits_2_at_once_and_the_first_finishes(tmp_path):
    reached, release = tmp_path / "reached", tmp_path / "release"
    pipe = gated_pipeline(tmp_path / "gated.yaml", reached, release)
    out = tmp_path / "out"
    args = ["-o", str(out), "-r", str(pipe), "--allow-module", "tests.*", "-k", "10", "--checkpoint-every", "4"]
    first = irmetrics_beir(*args, wait=False)
    try:
        deadline = time.monotonic() + 300
        while not reached.exists():  # the first run is retrieving, inside the folder's lock
            assert first.poll() is None, first.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the first run never reached its first query"
            time.sleep(0.02)
        second = irmetrics_beir(*args)
        assert_one_line_error(second, f"output folder {out} is in use by another irmetrics beir run")
        assert first.poll() is None  # the second run stopped at once; the first is still at the gate
    finally:
        release.touch()
        _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err[-3000:]
    assert json.loads((out / "sample" / "metrics.json").read_text())["NDCG@10"] == 0.76977
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    # once the first has finished, the same command runs (and skips the finished dataset)
    again = irmetrics_beir(*args)
    assert again.returncode == 0 and "finished earlier" in again.stderr
