"""Prediction-powered intervals (stats/ppi.py, judges/ppi.py, ``irmetrics judge --ppi``) against the reference
implementation, ``ppi_py`` (ppi-python): the estimate and both ends of the interval, with and without power
tuning, on random data and on per-query values of runs judged through the local server."""

from __future__ import annotations

import json

import numpy as np
import pytest

from haystack_irmetrics.errors import StatsInputError
from haystack_irmetrics.stats.ppi import ppi_mean

ppi_py = pytest.importorskip("ppi_py")


def _reference(y, yhat, unl, alpha, lam):
    low, high = ppi_py.ppi_mean_ci(np.asarray(y), np.asarray(yhat), np.asarray(unl), alpha=alpha, lam=lam)
    est = ppi_py.ppi_mean_pointestimate(np.asarray(y), np.asarray(yhat), np.asarray(unl), lam=lam)
    return float(np.ravel(est)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0])


def test_ppi_mean_equals_ppi_python_with_and_without_power_tuning_on_random_data():
    rng = np.random.default_rng(11)
    worst = 0.0
    cases = 0
    for _ in range(150):
        n, big_n = int(rng.integers(2, 40)), int(rng.integers(2, 400))
        y = rng.random(n)
        yhat = np.clip(y + rng.normal(0, rng.uniform(0, 0.5), n), 0, 1)
        unl = rng.random(big_n) * rng.uniform(0.5, 1.5)
        if rng.random() < 0.2:  # ties and tiny sets: values on a grid
            y, yhat, unl = np.round(y, 1), np.round(yhat, 1), np.round(unl, 1)
        for lam in (None, 1.0, 0.0, 0.4):
            for alpha in (0.05, 0.1):
                got = ppi_mean(y, yhat, unl, alpha=alpha, lam=lam)
                ref = _reference(y, yhat, unl, alpha, lam)
                worst = max(worst, *(abs(a - b) for a, b in zip((got.estimate, got.low, got.high), ref)))
                cases += 1
    assert cases == 1200 and worst < 1e-12, worst


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1.0], [1.0], [0.5, 0.4]), "at least two labelled"),
        (([1.0, 0.0], [1.0], [0.5, 0.4]), "2 labelled values but 1 predictions"),
        (([1.0, float("nan")], [1.0, 0.0], [0.5, 0.4]), "NaN"),
    ],
)
def test_ppi_refuses_inputs_it_cannot_use(args, message):
    with pytest.raises(StatsInputError, match=message):
        ppi_mean(*args)


def test_irmetrics_judge_ppi_equals_ppi_python_on_the_per_query_values(tmp_path, monkeypatch, capsys):
    from haystack_irmetrics import evaluate
    from haystack_irmetrics.cli.app import main
    from haystack_irmetrics.io import read_qrels, read_run
    from haystack_irmetrics.pooling import pool_runs

    from .judge_data import make_case
    from .judge_server import JudgeServer, stable_hash
    from .test_judge_cli import _args

    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))
    case = make_case(tmp_path / "data", n_queries=14, judged=2, runs=3)
    runs = {p.stem: read_run(p).data for p in case.runs}  # a run is named by its file, less .trec
    # People judged the whole pool of half the queries (the labelled set), a few pairs of the others.
    full = {f"q{j}" for j in range(0, 14, 2)}
    lines = case.qrels.read_text().splitlines()
    judged = {tuple(line.split("\t")[:2]) for line in lines[1:]}
    for q, d in pool_runs(list(runs.values()), list(runs), 5).pairs():
        if q in full and (q, d) not in judged:
            lines.append(f"{q}\t{d}\t{case.truth[q][d]}")
    case.qrels.write_text("\n".join(lines) + "\n")
    # The model is wrong on about a third of the pairs (one grade off): the rectifier has work to do.
    labels = {k: (g + 1) % 4 if stable_hash(*k) % 3 == 0 else g for k, g in case.labels.items()}
    out = tmp_path / "out"
    with JudgeServer(labels) as server:
        assert main(_args(case, server.url, out, "--ppi", "--alpha", "0.1")) == 0
    report = json.loads((out / "ppi.json").read_text())
    assert report["labelled_queries"] == 7 and report["unlabelled_queries"] == 7
    human = read_qrels(case.qrels).data
    model = read_qrels(out / "model_qrels.tsv").data
    filled = read_qrels(out / "qrels.tsv").data
    # The model's qrels: its label for every pool pair, and nothing else.
    assert sum(len(v) for v in model.values()) == len(pool_runs(list(runs.values()), list(runs), 5).pairs())
    for q, d in pool_runs(list(runs.values()), list(runs), 5).pairs():
        text_key = next(k for k in labels if k[0].endswith(f"number {q[1:]}") and k[1].startswith(f"T{d[1:]} "))
        assert model[q][d] == labels[text_key]

    def values(qrels, run):
        return evaluate(qrels, run, None, measures=["NDCG@5"]).per_query["NDCG@5"]

    lab = sorted(full)
    unl = sorted(f"q{j}" for j in range(1, 14, 2))
    worst = 0.0
    for name, run in runs.items():
        y, yhat = values(human, run), values(model, run)
        ref = _reference([y[q] for q in lab], [yhat[q] for q in lab], [yhat[q] for q in unl], 0.1, None)
        row = report["runs"][name]
        worst = max(worst, *(abs(a - b) for a, b in zip((row["estimate"], row["low"], row["high"]), ref)))
        naive = values(filled, run)
        assert row["filled"] == pytest.approx(sum(naive.values()) / len(naive), abs=1e-15)
    a, b = list(runs)[:2]
    ya, yb, ha, hb = values(human, runs[a]), values(human, runs[b]), values(model, runs[a]), values(model, runs[b])
    ref = _reference(
        [ya[q] - yb[q] for q in lab], [ha[q] - hb[q] for q in lab], [ha[q] - hb[q] for q in unl], 0.1, None
    )
    row = report["differences"][f"{a} - {b}"]
    worst = max(worst, *(abs(x - r) for x, r in zip((row["estimate"], row["low"], row["high"]), ref)))
    assert worst < 1e-12, worst
    assert "(PPI, 7 labelled + 7 queries)" in capsys.readouterr().out
    # irmetrics evaluate QRELS RUN --judged DIR: the same interval beside the human and the filled value.
    name = next(iter(runs))
    run_file = next(p for p in case.runs if p.stem == name)
    capsys.readouterr()
    assert (
        main(["evaluate", str(case.qrels), str(run_file), "-m", "NDCG@5", "--judged", str(out), "--format", "json"])
        == 0
    )
    shown = json.loads(capsys.readouterr().out)
    judged = shown["judged"]["NDCG@5"]
    assert judged["estimate"] == report["runs"][name]["estimate"] and judged["filled"] == report["runs"][name]["filled"]
    y = values(human, runs[name])
    assert judged["human"] == pytest.approx(sum(y.values()) / len(y), abs=1e-15)
    assert "NDCG@5" in json.dumps(shown["evaluation"])  # the usual result, kept whole
    assert (
        main(["evaluate", str(case.qrels), str(run_file), "-m", "NDCG@5", "--judged", str(out), "--format", "markdown"])
        == 0
    )
    assert "| NDCG@5 |" in capsys.readouterr().out.split("PPI 90% interval |", 1)[1]


def test_evaluate_judged_refuses_a_run_the_judge_was_not_asked_about(tmp_path, capsys):
    from haystack_irmetrics.cli.app import main

    (tmp_path / "judged").mkdir()
    for name, text in (("ppi.json", '{"labelled": [], "alpha": 0.05}'), ("summary.json", '{"depth": 5}')):
        (tmp_path / "judged" / name).write_text(text)
    (tmp_path / "judged" / "judgments.jsonl").write_text('{"query_id": "q1", "doc_id": "d1", "label": 1}\n')
    for name in ("model_qrels.tsv", "qrels.tsv"):
        (tmp_path / "judged" / name).write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (tmp_path / "qrels.tsv").write_text("q1 0 d9 1\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n")
    argv = ["evaluate", str(tmp_path / "qrels.tsv"), str(tmp_path / "run.trec"), "--judged", str(tmp_path / "judged")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds 1 pairs the judge" in err[0] and "'d2'" in err[0], err
