"""``irmetrics pool --sample-queries N``: a pooling design for estimation, the whole depth-k pool of N queries
drawn uniformly (each pair's probability its query's inclusion probability, N over the queries there are), which
``irmetrics judge --ppi`` accepts once people have labelled it: its queries are PPI's labelled set."""

from __future__ import annotations

import json

import pytest

from haystack_irmetrics.cli.app import main
from haystack_irmetrics.io import read_run
from haystack_irmetrics.pooling import pool_runs, read_pairs, sample_queries

from .judge_data import make_case
from .judge_server import JudgeServer
from .test_judge_cli import _args


def _runs(case):
    return [read_run(p).data for p in case.runs]


def test_the_sample_is_the_whole_pool_of_uniformly_drawn_queries(tmp_path):
    case = make_case(tmp_path / "data", n_queries=8)
    runs = _runs(case)
    pool = pool_runs(runs, depth=5)
    drawn = [sample_queries(runs, 3, depth=5, seed=s) for s in range(40)]
    for pairs in drawn:
        queries = {p.query for p in pairs}
        assert len(queries) == 3 and {p.probability for p in pairs} == {3 / 8}
        whole = {(q, d) for i, q in enumerate(pool.qids) if q in queries for d in pool.layered(i)}
        assert {(p.query, p.doc) for p in pairs} == whole  # every run's top 5 of each drawn query, nothing else
    assert sample_queries(runs, 3, depth=5, seed=7) == sample_queries(runs, 3, depth=5, seed=7)
    counts = {q: sum(q in {p.query for p in pairs} for pairs in drawn) for q in pool.qids}
    assert len({frozenset(p.query for p in pairs) for pairs in drawn}) > 10 and min(counts.values()) > 0
    judged = {"q0": {d: 1 for d in pool.layered(0)}}
    assert all(p.query != "q0" or p.doc not in judged["q0"] for p in sample_queries(runs, 8, depth=5, judged=judged))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sample-queries", "9"], "the queries to sample must be a whole number from 1 to 8, got 9"),
        (["--sample-queries", "2", "--budget", "5"], "--sample-queries lists whole pools: it takes no --budget"),
        ([], "irmetrics pool needs --budget (the pairs to list), or --sample-queries N"),
    ],
)
def test_sample_queries_refuses_what_does_not_fit(tmp_path, capsys, extra, message):
    case = make_case(tmp_path / "data", n_queries=8)
    assert main(["pool", *map(str, case.runs), "--depth", "5", *extra, "-o", str(tmp_path / "p.tsv")]) == 2
    assert message in capsys.readouterr().err


def test_judge_ppi_accepts_the_sample_once_people_labelled_it(tmp_path, capsys):
    pytest.importorskip("haystack")
    case = make_case(tmp_path / "data", n_queries=8, judged=2)
    pairs_file = tmp_path / "sample.tsv"
    argv = ["pool", *map(str, case.runs), "--depth", "5", "--sample-queries", "3", "--seed", "1"]
    assert main([*argv, "-o", str(pairs_file)]) == 0
    sampled = read_pairs(pairs_file)
    # People label every pair of the sample (what irmetrics assess and its export give), beside the few
    # judgments the other queries had.
    qrels = tmp_path / "qrels.tsv"
    lines = case.qrels.read_text().splitlines()
    lines += [f"{p.query}\t{p.doc}\t{case.truth[p.query][p.doc]}" for p in sampled]
    qrels.write_text("\n".join(dict.fromkeys(lines)) + "\n")
    args = _args(case, "", tmp_path / "out", "--ppi")
    args[args.index("--qrels") + 1] = str(qrels)
    with JudgeServer(case.labels) as server:
        args[args.index("--api-base-url") + 1] = server.url
        assert main(args) == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "out" / "ppi.json").read_text())
    assert set(report["labelled"]) == {p.query for p in sampled}  # the drawn queries: PPI's random labelled set
