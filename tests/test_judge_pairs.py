"""``irmetrics judge`` on a corpus with no qrels, and on exactly the pairs of a pairs file: every pool pair a
hole when no person judged; ``--pairs`` asks about exactly its pairs (with or without runs and qrels), a pair
people judged asked too and its human label kept; against the package's OpenAI-compatible server on
127.0.0.1."""

from __future__ import annotations

import json

import pytest

from haystack_irmetrics.cli.app import main
from haystack_irmetrics.pooling import PoolPair, pool_runs, write_pairs

from .judge_data import make_case
from .judge_server import JudgeServer
from .test_judge_cli import _args, _jsonl

pytest.importorskip("haystack")


def _without(args, flag):
    """``args`` less ``flag`` and its value."""
    i = args.index(flag)
    return args[:i] + args[i + 2 :]


def _asked(server, case):
    """The (query id, doc id) of each pair the server was asked about."""
    by_text = {}
    for line in (case.folder / "queries.jsonl").read_text().splitlines():
        row = json.loads(line)
        by_text[row["text"]] = row["_id"]
    return {(by_text[q], "d" + d.split(" ")[0][1:]) for q, d, _ in server.requests}


def test_a_corpus_with_no_qrels_has_every_pool_pair_judged_and_qrels_of_the_models_labels(tmp_path, capsys):
    from haystack_irmetrics.io import read_qrels, read_run

    case = make_case(tmp_path / "data")
    out = tmp_path / "out"
    with JudgeServer(case.labels) as server:
        assert main(_without(_args(case, server.url, out), "--qrels")) == 0
        asked = _asked(server, case)
    pool = pool_runs([read_run(p).data for p in case.runs], [p.name for p in case.runs], 5).pairs()
    assert asked == set(pool) and len(pool) > 0
    filled = read_qrels(out / "qrels.tsv").data
    assert {(q, d) for q, docs in filled.items() for d in docs} == set(pool)
    assert all(filled[q][d] == case.truth[q][d] for q, d in pool)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["human_labels"] == 0 and summary["pairs"] == len(pool) and "qrels" not in summary
    assert {h["before"] for h in summary["Hole@5"].values()} == {1.0}
    assert {h["before"] for h in summary["unjudged_pairs@5"].values()} == {1.0}
    assert {h["after"] for h in summary["unjudged_pairs@5"].values()} == {0.0}


def test_pairs_are_judged_exactly_with_no_runs_and_no_qrels(tmp_path):
    case = make_case(tmp_path / "data")
    chosen = [("q0", "d3"), ("q1", "d7"), ("q1", "d0"), ("q4", "d39")]
    pairs = tmp_path / "pairs.tsv"
    write_pairs([PoolPair(q, d, 0.5) for q, d in chosen], pairs)
    out = tmp_path / "out"
    with JudgeServer(case.labels) as server:
        args = _without(_args(case, server.url, out), "--qrels")
        args = [a for a in args if a not in set(map(str, case.runs))]
        assert main([*args, "--pairs", str(pairs)]) == 0
        assert _asked(server, case) == set(chosen)
    rows = _jsonl(out / "judgments.jsonl")
    assert sorted((r["query_id"], r["doc_id"]) for r in rows) == sorted(chosen)
    assert all(r["label"] == case.truth[r["query_id"]][r["doc_id"]] for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["Hole@5"] == {} and summary["pairs"] == len(chosen)


def test_pairs_people_judged_are_asked_too_and_their_labels_kept(tmp_path):
    from haystack_irmetrics.io import read_qrels

    case = make_case(tmp_path / "data")
    human = read_qrels(case.qrels).data
    judged = [(q, d) for q, docs in human.items() for d in docs][:2]
    unjudged = [("q2", d) for d in ("d1", "d2", "d5") if d not in human["q2"]][:2]
    pairs = tmp_path / "pairs.tsv"
    write_pairs([PoolPair(q, d, 1.0) for q, d in judged + unjudged], pairs)
    out = tmp_path / "out"
    with JudgeServer(case.labels) as server:
        assert main([*_args(case, server.url, out), "--pairs", str(pairs)]) == 0
        assert _asked(server, case) == set(judged + unjudged)
    rows = {(r["query_id"], r["doc_id"]): r for r in _jsonl(out / "judgments.jsonl")}
    assert all(rows[p]["human"] == human[p[0]][p[1]] for p in judged)  # the same pairs, both labels: comparable
    assert all("human" not in rows[p] for p in unjudged)
    filled = read_qrels(out / "qrels.tsv").data
    assert all(filled[q][d] == human[q][d] for q, docs in human.items() for d in docs)  # never replaced
    assert all(filled[q][d] == case.truth[q][d] for q, d in unjudged)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ppi"], "--pairs names the pairs to judge: it does not go with --ppi or --strategy"),
        (["--strategy", "depth", "--budget", "2"], "it does not go with --ppi or --strategy"),
    ],
)
def test_pairs_do_not_go_with_a_pool_of_runs_and_nothing_at_all_is_refused(tmp_path, capsys, extra, message):
    case = make_case(tmp_path / "data")
    pairs = tmp_path / "pairs.tsv"
    write_pairs([PoolPair("q0", "d1", 1.0)], pairs)
    with JudgeServer(case.labels) as server:
        assert main([*_args(case, server.url, tmp_path / "a"), "--pairs", str(pairs), *extra]) == 2
        assert message in capsys.readouterr().err
        bare = [a for a in _without(_args(case, server.url, tmp_path / "b"), "--qrels") if a not in map(str, case.runs)]
        assert main(bare) == 2
        assert (
            "nothing to judge: give runs (their top k is pooled) or the pairs to judge (--pairs)"
            in capsys.readouterr().err
        )
        assert server.requests == []
