"""Click-derived qrels into the feedback evaluation: ``irmetrics clicks fit`` then ``irmetrics feedback LOG --qrels``.

A DBN log simulated over the shipped sample as ``tests/test_clicks_models.py`` draws them (its qrels the
true relevance; four rankers of its judged documents, better to worse): the click qrels, through the
feedback evaluation, rank the runs as the true qrels do (Kendall's tau = 1), each judgment is the click
label, and --min-impressions leaves the rarely shown pairs unjudged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import main
from haystack_irmetrics.clicks import ClickLog, fit_model
from haystack_irmetrics.clicks.simulate import log_rows
from haystack_irmetrics.errors import ClickModelError
from haystack_irmetrics.feedback import FeedbackLog, JudgedLog, evaluate_feedback
from tests.test_clicks_models import QRELS, RUNS, simulated

RANKERS = {f"r{i}": run for i, run in enumerate(RUNS)}  # better to worse: label + growing noise


def write_trec(run: dict[str, list[str]], path: Path) -> Path:
    path.write_text("".join(f"{q} Q0 {d} {r + 1} {10 - r} x\n" for q, docs in run.items() for r, d in enumerate(docs)))
    return path


@pytest.fixture(scope="module")
def log_file(tmp_path_factory) -> Path:
    import polars as pl

    path = tmp_path_factory.mktemp("clicks") / "clicks.csv"
    pl.DataFrame(log_rows(simulated("dbn", 8_000))).write_csv(path)
    return path


def test_click_qrels_through_irmetrics_feedback_rank_the_runs_as_the_true_qrels_do(log_file, tmp_path, capsys):
    assert main(["clicks", "fit", str(log_file), "--model", "dbn", "-o", str(tmp_path / "dbn")]) == 0
    capsys.readouterr()
    runs = [f"{name}={write_trec(run, tmp_path / f'{name}.trec')}" for name, run in RANKERS.items()]
    args = ["feedback", str(log_file), "--qrels", str(tmp_path / "dbn" / "qrels.tsv"), "--min-impressions", "10"]
    args += [x for r in runs for x in ("--run", r)] + ["-k", "10", "-m", "NDCG", "--n-resamples", "200", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    got = {
        s["system"]: s["mean"]
        for s in data["scores"]
        if s["segment"] == "all" and s["list"] == "full" and s["metric"] == "NDCG@10"
    }
    dicts = {
        n: {q: {d: float(10 - r) for r, d in enumerate(docs)} for q, docs in run.items()} for n, run in RANKERS.items()
    }
    true = [evaluate(QRELS, dicts[n], [10]).means["NDCG@10"] for n in sorted(RANKERS)]
    clicks = [got[n] for n in sorted(RANKERS)]
    assert kendalltau(true, clicks).statistic == pytest.approx(1.0), (true, clicks)  # tau = 1: the same order
    assert clicks == sorted(clicks, reverse=True)  # r0 (least noise) best, r3 worst


def test_each_judgment_is_the_click_label_and_rare_pairs_stay_unjudged(log_file):
    clicks = ClickLog(log_file)
    fit = fit_model("dbn", clicks.sessions())
    labels = fit.qrels()
    shown = {}
    for row in FeedbackLog(log_file, columns={"vote": None}).to_frame().iter_rows(named=True):
        shown[(row["query"], row["doc"])] = shown.get((row["query"], row["doc"]), 0) + 1
    cut = int(np.percentile(list(shown.values()), 20))  # leaves some pairs out
    ev = evaluate_feedback(
        JudgedLog(clicks, fit, min_impressions=cut), k_values=[10], measures=["NDCG"], n_resamples=100
    )
    judged = {
        (q, d): (label, votes)
        for q, d, label, votes in ev.feedback.judgments.select("query", "doc", "label", "votes").rows()
    }
    expected = {p for p, n in shown.items() if n >= cut}
    assert set(judged) == expected and len(expected) < len(shown)
    assert max(abs(label - labels[q][d]) for (q, d), (label, _) in judged.items()) < 1e-12
    assert all(votes == shown[p] for p, (_, votes) in judged.items())  # the votes are the impressions
    every = evaluate_feedback(JudgedLog(clicks, fit), k_values=[10], measures=["NDCG"], n_resamples=100)
    assert every.feedback.judgments.height == len(shown) == sum(len(d) for d in labels.values())


def test_a_log_without_positions_or_a_bad_minimum_is_a_typed_error():
    rows = [{"query_id": "q", "doc_id": "d", "vote": 1}]
    with pytest.raises(ClickModelError, match="need the log's positions"):
        JudgedLog(FeedbackLog(rows, columns={"position": None}), {"q": {"d": 1.0}})
    with pytest.raises(ClickModelError, match="min_impressions must be a whole number >= 1"):
        JudgedLog(FeedbackLog(rows), {"q": {"d": 1.0}}, min_impressions=0)
    with pytest.raises(ClickModelError, match="qrels must be a path"):
        JudgedLog(FeedbackLog(rows), [("q", "d", 1.0)])
