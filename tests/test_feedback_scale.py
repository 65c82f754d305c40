"""Scale (slow, excluded by default; run with -m slow): the benchmark's columnar path on a 1M-row Parquet log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "feedback_10m.py"


@pytest.mark.slow
def test_million_row_parquet_log_aggregates_and_scores_within_bounded_memory(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--rows",
            "1000000",
            "--queries",
            "20000",
            "--n-resamples",
            "200",
            "--cache-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    phases = {r["phase"]: r for r in map(json.loads, out.stdout.splitlines()) if "phase" in r}
    assert phases["aggregate"]["rows"] == phases["aggregate"]["usable_rows"] == 1_000_000
    assert phases["full"]["queries_scored"] == phases["full"]["queries_with_judgments"]
    # Memory follows distinct pairs and voters, not rows: far below a whole-log copy in Python objects.
    assert phases["aggregate"]["peak_rss_mb"] < 1200
    assert phases["full"]["peak_rss_mb"] < 1500
