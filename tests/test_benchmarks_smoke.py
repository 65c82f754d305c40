"""The benchmark command runs end to end on tiny workloads (timings are never asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT


def test_benchmark_quick_run_writes_results_and_checks_exactness(tmp_path):
    cmd = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--no-imports",
           "--tools", "ours,pytrec_eval,beir", "--workloads", "beir,trecdl", "--repeat", "3",
           "--cache-dir", str(tmp_path)]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = tmp_path / "quick"
    assert (out / "RESULTS.md").read_text().startswith("# Benchmark results")
    results = json.loads((out / "results.json").read_text())
    assert "max |diff| 0.0e+00" in (out / "RESULTS.md").read_text()
    assert results
    # Timed like an installed package: ours is imported from bytecode, not compiled per process.
    assert results["meta"]["byte_compiled"] is True
    assert "package byte-compiled, as installed" in (out / "RESULTS.md").read_text()


def test_benchmark_interleaved_run_alternates_the_tools_in_one_process_and_reports_each_rounds_ratio(tmp_path):
    cmd = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--no-imports", "--interleave",
           "--tools", "ours,pytrec_eval,floor", "--workloads", "msmarco", "--repeat", "3",
           "--cache-dir", str(tmp_path)]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    text = (tmp_path / "quick" / "RESULTS.md").read_text()
    assert "max |diff| 0.0e+00" in text
    assert "msmarco: time vs pytrec_eval (interleaved, median of 3 rounds, " in text
    assert "Interleaved in one process (`--interleave`): each round's time over pytrec_eval's" in text
    tools = json.loads((tmp_path / "quick" / "results.json").read_text())["workloads"]["msmarco"]["tools"]
    assert {t: (r["status"], len(r["times_s"]), r["interleaved"]) for t, r in tools.items()} == {
        t: ("ok", 3, True) for t in ("pytrec_eval", "ours", "floor")
    }
    assert len(tools["ours"]["round_ratios"]["pytrec_eval"]) == 3


def test_everyday_path_benchmark_quick_run_compares_bm25s_alone_and_fresh_processes(tmp_path):
    out = tmp_path / "everyday_path.md"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "everyday_path.py"), "--quick", "--out", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    text = out.read_text()
    for row in ("| bm25s alone | ", "| ours, cold | ", "| ours, warm | ", "bm25s alone (tokenize + score all queries)",
                "ours: retrieval phase (ids and scores from the store)",
                "ours: retrieval phase, a Document per hit (components called directly)",
                "ours: retrieval phase, every query through Pipeline.run", "by top-level package: total "):  # fmt: skip
        assert row in text
    assert "Same documents and scores as bm25s alone: yes." in text
    assert "Same run.trec, metrics.json, per_query.json bytes from every fresh run: yes." in text


def test_gpu_dense_benchmark_quick_run_compares_encode_alone_and_fresh_processes(tmp_path):
    out = tmp_path / "gpu_dense.md"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "gpu_dense.py"), "--quick", "--out", str(out)]
    done = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=900, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    text = out.read_text()
    assert "the CPU proxy (random BERT, 1 layer, 32 wide, MiniLM's tokenizer)" in text
    row = next(line for line in text.splitlines() if line.startswith("| sample + 300 | 660 |"))
    assert "x |" in row  # dense / encode and again / bm25, as ratios
    for run in ("| dense |", "| dense again |", "| encode alone (encode"):
        assert run in text
