"""Reports and the CLI: markdown, CSV, JSON and plots side by side; exit codes and named rows on bad input."""

from __future__ import annotations

import csv
import json
import random
import struct

import pytest

from haystack_irmetrics.cli import main
from haystack_irmetrics.feedback import evaluate_feedback
from haystack_irmetrics.io import write_trec_run


def synthetic(tmp_path, seed: int = 0, bad_rows: int = 2):
    """A JSONL log (40 queries, 2 locales, users) and a better and a reversed (worst-first) TREC run."""
    rng = random.Random(seed)
    log = tmp_path / "log.jsonl"
    runs = {"better": {}, "worse": {}}
    lines = []
    for q in range(40):
        docs = [f"d{q}_{i}" for i in range(10)]
        quality = {d: rng.random() for d in docs}
        for _ in range(3):
            locale = rng.choice(["en", "de"])
            shown = sorted(docs, key=lambda d: -quality[d] + rng.gauss(0, 0.5))[:5]
            for pos, d in enumerate(shown, 1):
                vote = ("up" if rng.random() < quality[d] else "down") if rng.random() < 0.6 else None
                lines.append(
                    {
                        "query_id": f"q{q}",
                        "doc_id": d,
                        "position": pos,
                        "vote": vote,
                        "user_id": f"u{rng.randrange(30)}",
                        "locale": locale,
                    }
                )
        runs["better"][f"q{q}"] = {d: quality[d] + rng.gauss(0, 0.05) for d in docs}
        runs["worse"][f"q{q}"] = {d: -quality[d] for d in docs}  # worst first
    for i in range(bad_rows):
        lines.insert(7 + 50 * i, {"query_id": "q1", "doc_id": "d1_0", "position": "first", "vote": 1})
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    paths = {}
    for name, run in runs.items():
        paths[name] = tmp_path / f"{name}.trec"
        write_trec_run(run, paths[name])
    return log, paths


def test_cli_writes_markdown_csv_json_qrels_and_plots_with_markers(tmp_path, capsys):
    log, runs = synthetic(tmp_path)
    report = tmp_path / "report"
    code = main(
        [
            "feedback",
            str(log),
            "--run",
            str(runs["better"]),
            "--run",
            f"random={runs['worse']}",
            "--strategy",
            "majority",
            "--threshold",
            "0.5",
            "--segment",
            "locale",
            "--on-error",
            "skip",
            "-k",
            "1,5,10",
            "--n-resamples",
            "2000",
            "--report",
            str(report),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert out == (report / "report.md").read_text()
    assert "| metric | logged | better | random |" in out
    assert "**2 skipped as malformed**" in out and "| 8 | 8 | position | first | position is not an integer |" in out
    assert "NDCG@10 condensed" in out and "Judged@10" in out
    assert "## Per segment" in out and "| de |" in out and "| en |" in out
    assert {p.name for p in report.iterdir()} >= {
        "report.md",
        "report.json",
        "scores.csv",
        "comparisons.csv",
        "per_query.csv",
        "skipped_rows.csv",
        "qrels.txt",
        "plots",
    }
    data = json.loads((report / "report.json").read_text())
    assert data["summary"]["skipped_rows"] == 2 and data["baseline"] == "logged"
    assert [r["row"] for r in data["skipped_rows"]] == [8, 58]
    with open(report / "comparisons.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["system"] for r in rows} == {"better", "random"}
    assert {r["segment"] for r in rows} == {"all", "de", "en"}
    # The reversed run is worse than what users saw: significant after Holm over the 18 metrics of its list
    # (2,000 sign patterns: the smallest two-sided p is 2/2001, times 18 is 0.018).
    worst = next(
        r
        for r in rows
        if r["system"] == "random" and r["metric"] == "NDCG@10" and r["list"] == "full" and r["segment"] == "all"
    )
    assert float(worst["delta"]) < 0 and float(worst["p_randomization_holm"]) < 0.05 and worst["marker"] == "*"
    for png in (report / "plots").iterdir():
        assert struct.unpack(">II", png.read_bytes()[16:24]) == (640, 400)
    assert len(list((report / "plots").iterdir())) == 2 + 6 + 1  # 2 deltas, 6 families, 1 distribution


def test_cli_stops_at_the_first_malformed_row_with_exit_code_2_naming_it(tmp_path, capsys):
    log, _ = synthetic(tmp_path)
    assert main(["feedback", str(log)]) == 2
    err = capsys.readouterr().err
    assert "row 8 (line 8): column 'position': position is not an integer (value 'first')" in err


def test_cli_json_output_is_strict_json_with_every_table(tmp_path, capsys):
    log, runs = synthetic(tmp_path, bad_rows=0)
    assert (
        main(
            [
                "feedback",
                str(log),
                "--run",
                str(runs["better"]),
                "--json",
                "-k",
                "5",
                "-m",
                "NDCG,P",
                "--n-resamples",
                "200",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert {r["metric"] for r in data["scores"]} == {"Judged@5", "NDCG@5", "P@5"}
    assert data["settings"]["strategy"].startswith("mean")


def test_cli_writes_trec_qrels_of_the_chosen_strategy(tmp_path, capsys):
    log, _ = synthetic(tmp_path, bad_rows=0)
    qrels = tmp_path / "q.txt"
    assert (
        main(["feedback", str(log), "--strategy", "wilson", "--min-votes", "2", "--write-qrels", str(qrels), "-k", "5"])
        == 0
    )
    lines = qrels.read_text().splitlines()
    assert lines and all(len(line.split()) == 4 for line in lines)
    assert all(0.0 <= float(line.split()[3]) < 1.0 for line in lines)  # Wilson bounds


def test_evaluation_is_deterministic_given_the_seed(tmp_path):
    log, runs = synthetic(tmp_path, bad_rows=0)
    first = evaluate_feedback(log, runs, k_values=[5], n_resamples=300, seed=7)
    again = evaluate_feedback(log, runs, k_values=[5], n_resamples=300, seed=7)
    assert first.to_dict() == again.to_dict()


def test_baseline_can_be_a_run_and_logged_can_be_left_out(tmp_path):
    log, runs = synthetic(tmp_path, bad_rows=0)
    ev = evaluate_feedback(log, runs, k_values=[5], include_logged=False, baseline="worse", n_resamples=100)
    assert ev.systems == ["better", "worse"] and list(ev.overall.comparisons) == ["better"]
    with pytest.raises(ValueError, match="baseline 'nope'"):
        evaluate_feedback(log, runs, k_values=[5], baseline="nope")


BM25_YAML = """
components:
  retriever:
    type: haystack.components.retrievers.in_memory.bm25_retriever.InMemoryBM25Retriever
    init_parameters:
      top_k: 4
      document_store:
        type: haystack.document_stores.in_memory.document_store.InMemoryDocumentStore
        init_parameters: {index: feedback_cli_test, shared: false}
connections: []
metadata: {}
max_runs_per_component: 100
"""


def test_cli_replays_logged_query_texts_through_a_pipeline_yaml_with_a_corpus(tmp_path, capsys):
    corpus = {"doc1": "How to train a cat", "doc2": "How to train a dog", "doc3": "How to train a parrot"}
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in corpus.items()))
    (tmp_path / "bm25.yaml").write_text(BM25_YAML)
    rows = [
        {"query_id": "q1", "text": "train cat", "doc_id": "doc2", "position": 1, "vote": "down"},
        {"query_id": "q1", "text": "train cat", "doc_id": "doc1", "position": 2, "vote": "up"},
        {"query_id": "q2", "text": "train parrot", "doc_id": "doc1", "position": 1, "vote": "down"},
        {"query_id": "q2", "text": "train parrot", "doc_id": "doc3", "position": 2, "vote": "up"},
    ]
    (tmp_path / "log.csv").write_text(
        "query_id,text,doc_id,position,vote\n" + "".join(",".join(str(v) for v in r.values()) + "\n" for r in rows)
    )
    code = main(
        [
            "feedback",
            str(tmp_path / "log.csv"),
            "--pipeline",
            f"bm25={tmp_path / 'bm25.yaml'}",
            "--corpus",
            str(tmp_path / "corpus.jsonl"),
            "--query-text-col",
            "text",
            "-k",
            "1",
            "-m",
            "P,MRR",
            "--json",
            "--n-resamples",
            "100",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    means = {(r["system"], r["list"], r["metric"]): r["mean"] for r in data["scores"] if r["segment"] == "all"}
    assert means[("logged", "full", "P@1")] == 0.0  # users saw the down-voted document first
    assert means[("bm25", "full", "P@1")] == 1.0  # BM25 puts the named animal first


def test_one_query_runs_no_test_says_so_and_still_refuses_bad_settings(tmp_path, capsys):
    log = tmp_path / "one.jsonl"
    rows = [{"query_id": "q0", "doc_id": f"d{p}", "position": p, "vote": v} for p, v in [(1, 0), (2, 1), (3, 1)]]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "new.trec"
    run.write_text("q0 Q0 d2 1 3 x\nq0 Q0 d1 2 2 x\n")
    args = ["feedback", str(log), "--run", f"new={run}", "-k", "3", "-m", "NDCG", "--no-plots"]
    for bad, name in [
        (["--n-resamples", "0"], "n_resamples"),
        (["--confidence", "2"], "confidence"),
    ]:
        assert main([*args, *bad]) == 2
        assert name in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:  # every --seed is an argparse type (cli.args.seed)
        main([*args, "--seed", "-1"])
    assert exit_.value.code == 2 and "argument --seed: seed must be a whole number" in capsys.readouterr().err
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "With one query there is nothing to resample or test" in out
    assert "## Differences from" not in out


def test_settings_are_checked_before_the_log_is_read(tmp_path):
    from haystack_irmetrics.stats import StatsInputError

    missing = tmp_path / "not-written-yet.jsonl"
    with pytest.raises(StatsInputError, match="seed"):
        evaluate_feedback(missing, {}, seed=-1)
    with pytest.raises(StatsInputError, match="fewer resamples or columns"):
        evaluate_feedback(missing, {}, k_values=[1, 3, 5, 10], n_resamples=10_000_000)
