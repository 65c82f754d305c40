"""``irmetrics power`` in judgments: a judging budget is spent in judgments, not queries. ``judgments_needed`` is
the queries needed times the runs' mean pool size per query at ``--depth`` (hand-counted pools below), and
``judgments_now`` the qrels' judgments of the queries the runs answer."""

from __future__ import annotations

import json
import math

import pytest

from haystack_irmetrics.cli.app import main

pytest.importorskip("scipy")

#: Two runs over three queries: at depth 2 the pools are q1 {d1, d2, d4}, q2 {d1, d9, d5, d6}, q3 {d7, d8}.
RUN_A = {"q1": ["d1", "d2", "d3"], "q2": ["d1", "d9"], "q3": ["d7", "d8"]}
RUN_B = {"q1": ["d2", "d4"], "q2": ["d5", "d6", "d1"], "q3": ["d7"]}


def _write(path, run):
    lines = [f"{q} Q0 {d} {r + 1} {10 - r} x" for q, docs in run.items() for r, d in enumerate(docs)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_judgments_needed_are_the_queries_needed_times_the_mean_pool_at_the_depth(tmp_path, capsys):
    a, b = _write(tmp_path / "a.trec", RUN_A), _write(tmp_path / "b.trec", RUN_B)
    qrels = tmp_path / "qrels.txt"
    # q4 is judged but answered by no run: its judgments are not the runs' to count.
    qrels.write_text("q1 0 d1 1\nq1 0 d4 1\nq2 0 d5 1\nq2 0 d9 0\nq3 0 d8 1\nq4 0 d1 1\nq4 0 d2 1\n")
    argv = ["power", a, b, "--qrels", str(qrels), "-m", "P@2", "--delta", "0.2"]
    assert main([*argv, "--depth", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mean_pool_size"] == pytest.approx(3.0) and out["depth"] == 2
    assert out["judgments_needed"] == math.ceil(out["queries_needed"] * 3)
    assert out["judgments_now"] == 5
    assert main([*argv, "--depth", "1", "--json"]) == 0  # pools of one rank: q1 {d1, d2}, q2 {d1, d5}, q3 {d7}
    assert json.loads(capsys.readouterr().out)["mean_pool_size"] == pytest.approx(5 / 3)
    assert main([*argv, "--depth", "2"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    needed = math.ceil(out["queries_needed"] * 3)
    assert last == (
        f"judgments needed at depth 2: {needed} ({out['queries_needed']} queries x a mean pool of 3 documents); "
        "judgments there are: 5"
    )
    assert main([*argv, "--depth", "0"]) == 2
    assert "--depth must be a whole number >= 1, got 0" in capsys.readouterr().err
