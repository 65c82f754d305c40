"""The benchmark command runs end to end on tiny workloads (timings are never asserted)."""

from __future__ import annotations

import json
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
