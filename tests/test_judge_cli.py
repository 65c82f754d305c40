"""``irmetrics judge`` end to end against a real OpenAI-compatible server on 127.0.0.1 (tests/judge_server.py):
the output folder, human labels kept, the cache across runs, a run killed midway (a real subprocess, SIGKILL)
that resumes making only the requests it had not finished, and bad input that exits 2 with one clear line;
and the agreement figures against scikit-learn, scipy and the ``krippendorff`` package."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

from haystack_irmetrics.cli.app import main

from .conftest import ROOT
from .judge_data import make_case
from .judge_server import JudgeServer, mixed_faults

pytest.importorskip("haystack")


def _args(case, url, out, *extra):
    return [
        "judge",
        *map(str, case.runs),
        "--qrels",
        str(case.qrels),
        "--queries",
        str(case.folder),
        "--corpus",
        str(case.folder / "corpus.jsonl"),
        "--depth",
        "5",
        "--llm",
        "judge-model",
        "--api-base-url",
        url,
        "-o",
        str(out),
        "--backoff",
        "0.01",
        "--timeout",
        "0.5",
        *extra,
    ]


def _jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _pool(case, depth=5):
    from haystack_irmetrics.io import read_qrels, read_run
    from haystack_irmetrics.pooling import pool_runs

    qrels = read_qrels(case.qrels).data
    return pool_runs([read_run(p).data for p in case.runs], [p.name for p in case.runs], depth).pairs(qrels), qrels


def test_judge_fills_exactly_the_holes_of_the_top_k_and_keeps_the_human_labels(tmp_path, capsys):
    case = make_case(tmp_path / "data")
    pairs, human = _pool(case)
    out = tmp_path / "out"
    with JudgeServer(case.labels, faults=mixed_faults, timeout_delay=1.0) as server:
        assert main(_args(case, server.url, out, "--concurrency", "4")) == 0
        first = len(server.requests)
        assert main(_args(case, server.url, out)) == 0
        assert len(server.requests) == first  # the second run: no request
    lines = _jsonl(out / "judgments.jsonl")
    assert sorted((r["query_id"], r["doc_id"]) for r in lines) == sorted(pairs)
    queries = {json.loads(x)["_id"]: json.loads(x)["text"] for x in (case.folder / "queries.jsonl").open()}
    for row in lines:
        q, d = row["query_id"], row["doc_id"]
        text = f"T{d[1:]} text of document {d[1:]} about topic {int(d[1:]) % 7}"
        garbage = mixed_faults(queries[q], text, 0) == "garbage"
        assert row["label"] == (None if garbage else case.truth[q][d])
        assert len(row["judge"]) == 64 and row["raw"]
    from haystack_irmetrics.io import read_qrels

    filled = read_qrels(out / "qrels.tsv").data
    for q, docs in human.items():
        for d, label in docs.items():
            assert filled[q][d] == label  # never replaced
    model = {(r["query_id"], r["doc_id"]): r["label"] for r in lines if r["label"] is not None}
    assert sum(len(v) for v in filled.values()) == sum(len(v) for v in human.values()) + len(model)
    summary = json.loads((out / "summary.json").read_text())
    unparseable = sum(r["label"] is None for r in lines)
    assert summary["pairs"] == len(pairs) and summary["unparseable"] == unparseable
    assert (summary["requests"], summary["cache_hits"]) == (0, len(pairs))
    # A garbage answer is asked once more (a reminder of the form), and stays unparseable: its tokens count twice.
    assert summary["reasked"] == unparseable and summary["reader"] == "contract"
    assert summary["tokens"]["completion"] == 3 * (len(pairs) + unparseable)
    # Hole@5 is BEIR's evaluate_custom(..., "hole") with the human and with the filled qrels (BEIR rounds to 5
    # decimals); the share of the top 5 unjudged for its query is apart, under its own name.
    from beir.retrieval.evaluation import EvaluateRetrieval

    from haystack_irmetrics.io import read_run

    for path in case.runs:
        run = read_run(path).data
        hole, pairs_share = summary["Hole@5"][path.stem], summary["unjudged_pairs@5"][path.stem]  # run0.trec: run0
        assert hole["before"] > hole["after"] >= 0 and pairs_share["before"] > pairs_share["after"] >= 0
        for when, qrels in (("before", human), ("after", filled)):
            beir = EvaluateRetrieval.evaluate_custom(qrels, run, [5], "hole")["Hole@5"]
            assert hole[when] == pytest.approx(beir, abs=5e-6), (path.name, when)
    assert "judged" in capsys.readouterr().out


def test_the_api_key_is_read_from_its_variable_and_written_nowhere(tmp_path, monkeypatch):
    case = make_case(tmp_path / "data", n_queries=2)
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-very-secret-key")
    seen = []

    class KeyServer(JudgeServer):
        pass

    with KeyServer(case.labels) as server:
        handler = server.httpd.RequestHandlerClass
        original = handler.do_POST

        def spy(self):
            seen.append(self.headers.get("Authorization"))
            original(self)

        handler.do_POST = spy
        out = tmp_path / "out"
        assert main(_args(case, server.url, out, "--api-key-env", "MY_JUDGE_KEY")) == 0
    assert set(seen) == {"Bearer sk-very-secret-key"}
    written = [*out.iterdir(), *(tmp_path / "cache").rglob("*")]
    assert any(p.name == "judgments.sqlite" for p in written)
    for path in written:
        if path.is_file():
            assert b"sk-very-secret" not in path.read_bytes()


def test_a_run_killed_midway_resumes_making_only_the_requests_it_had_not_finished(tmp_path):
    case = make_case(tmp_path / "data", n_queries=5, per_run=12)
    pairs, _ = _pool(case, depth=8)
    cache = tmp_path / "cache"
    env = {**os.environ, "IRMETRICS_CACHE_DIR": str(cache), "HAYSTACK_TELEMETRY_ENABLED": "False"}
    args = lambda url: [a if a != "5" else "8" for a in _args(case, url, tmp_path / "out", "--concurrency", "2")]  # noqa: E731
    with JudgeServer(case.labels, delay=0.05) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "haystack_irmetrics.cli", *args(server.url)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 120
        while len(server.requests) < len(pairs) // 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        first = {(q, d) for q, d, _ in server.requests}
        assert 0 < len(first) < len(pairs), "the run was not killed midway"
        db = sqlite3.connect(cache / "judgments" / "judgments.sqlite")
        finished = db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
        db.close()
        assert 0 < finished <= len(first)
        before = len(server.requests)
        assert main(args(server.url)) == 0  # the test's cache folder: the subprocess's too
        second = server.requests[before:]
    assert len(second) == len(pairs) - finished  # only the unfinished ones, each once
    assert len({(q, d) for q, d, _ in second}) == len(second)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["requests"], summary["cache_hits"]) == (len(pairs) - finished, finished)


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    """Each test its own judgment cache (the cases repeat texts: a shared cache would answer them)."""
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))


def _closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_an_unreachable_server_exits_2_with_one_line(tmp_path, capsys):
    case = make_case(tmp_path / "data", n_queries=2)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    assert main(_args(case, url, tmp_path / "out", "--retries", "1")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"irmetrics: error: cannot reach the judge at {url}"), err


def test_a_corpus_without_a_judged_documents_text_exits_2_before_any_request(tmp_path, capsys):
    case = make_case(tmp_path / "data", n_queries=2)
    pairs, _ = _pool(case)
    missing = pairs[0][1]
    corpus = case.folder / "corpus.jsonl"
    corpus.write_text("".join(x for x in corpus.open() if json.loads(x)["_id"] != missing))
    with JudgeServer(case.labels) as server:
        assert main(_args(case, server.url, tmp_path / "out")) == 2
        assert server.requests == []
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"irmetrics: error: document {missing!r} (query {pairs[0][0]!r}'s top 5) is not in the corpus {corpus}"
    ]


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        (
            "components:\n  judge:\n    type: haystack_irmetrics.components.judge.RelevanceJudge\n"
            "    init_parameters: {}\nconnections: []\n",
            "exactly one of 'generator'",
        ),
        ("components: {}\nconnections: []\n", "must hold one RelevanceJudge component, it holds 0"),
    ],
)
def test_a_judge_yaml_that_names_no_generator_exits_2_with_one_line(tmp_path, capsys, yaml, message):
    case = make_case(tmp_path / "data", n_queries=2)
    path = tmp_path / "judge.yaml"
    path.write_text(yaml)
    args = _args(case, "http://127.0.0.1:9/v1", tmp_path / "out")
    i = args.index("--llm")
    args[i : i + 4] = ["--judge", str(path)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


# ---- agreement -------------------------------------------------------------------------------------------


def test_agreement_figures_equal_scikit_learn_scipy_and_krippendorff_on_random_labellings():
    import numpy as np

    krippendorff = pytest.importorskip("krippendorff")
    from scipy.stats import kendalltau
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    from haystack_irmetrics.judges.agreement import label_agreement, system_agreement

    rng = np.random.default_rng(7)
    worst = 0.0
    for case in range(60):
        n = int(rng.integers(2, 60))
        human = rng.integers(0, 4, n)
        model = np.clip(human + rng.integers(-2, 3, n) * (rng.random(n) < 0.5), 0, 3)
        if case % 7 == 0:
            model = rng.integers(0, 4, n)
        got = label_agreement(human.tolist(), model.tolist(), threshold=2)
        expected = {
            "kappa": cohen_kappa_score(human >= 2, model >= 2),
            "weighted_kappa": cohen_kappa_score(human, model, weights="quadratic"),
            "weighted_kappa_linear": cohen_kappa_score(human, model, weights="linear"),
        }
        if len(set(human) | set(model)) > 1:
            for level, key in (("ordinal", "alpha"),):
                expected[key] = krippendorff.alpha(
                    reliability_data=np.array([human, model], dtype=float), level_of_measurement=level
                )
        for key, value in expected.items():
            if np.isnan(value):
                assert np.isnan(got[key]), (case, key)
            else:
                worst = max(worst, abs(got[key] - value))
        labels = sorted(set(human) | set(model))
        matrix = confusion_matrix(human, model, labels=labels)
        for i, h in enumerate(labels):
            for j, m in enumerate(labels):
                assert got["confusion"].get(str(h), {}).get(str(m), 0) == matrix[i, j]
    assert worst < 1e-12, worst
    for _ in range(30):
        systems = [f"s{i}" for i in range(int(rng.integers(2, 9)))]
        a = {s: float(v) for s, v in zip(systems, rng.random(len(systems)))}
        b = {s: a[s] + float(v) for s, v in zip(systems, rng.normal(0, 0.2, len(systems)))}
        got = system_agreement(a, b)
        assert abs(got["tau"] - kendalltau(list(a.values()), list(b.values())).statistic) < 1e-12
        swaps = {tuple(sorted(p)) for p in got["swaps"]}
        assert swaps == {tuple(sorted((x, y))) for x in a for y in a if x < y and (a[x] - a[y]) * (b[x] - b[y]) < 0}


def _tau_ap_by_definition(truth, estimate):
    """Yilmaz et al. 2008, eq. (2), transcribed: p(i) = fraction of the i-1 systems above rank i (estimate)
    that the truth also ranks above; tau_AP = 2/(N-1) * sum_{i=2..N} p(i) - 1 (no ties)."""
    order = sorted(estimate, key=lambda s: -estimate[s])
    n = len(order)
    return 2 / (n - 1) * sum(sum(truth[s] > truth[order[i]] for s in order[:i]) / i for i in range(1, n)) - 1


def test_tau_ap_equals_its_definition_and_kendalls_tau_for_two_systems_or_a_uniform_error():
    import numpy as np

    from haystack_irmetrics.stats.correlation import tau_ap

    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(2, 12))
        names = [f"s{i}" for i in range(n)]
        truth = dict(zip(names, rng.permutation(n).astype(float).tolist()))
        estimate = dict(zip(names, rng.permutation(n).astype(float).tolist()))
        assert abs(tau_ap(truth, estimate) - _tau_ap_by_definition(truth, estimate)) < 1e-12
    assert tau_ap({"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0}) == -1.0
    # A swap at the top costs more than the same swap at the bottom (the measure's point).
    truth = {"a": 4, "b": 3, "c": 2, "d": 1}
    top = tau_ap(truth, {"a": 3, "b": 4, "c": 2, "d": 1})
    bottom = tau_ap(truth, {"a": 4, "b": 3, "c": 1, "d": 2})
    assert top < bottom


def test_agreement_json_on_a_stratified_sample_of_human_pairs(tmp_path):
    case = make_case(tmp_path / "data", n_queries=6, judged=8)
    out = tmp_path / "out"
    with JudgeServer(case.labels) as server:
        assert main(_args(case, server.url, out, "--agreement", "12", "--seed", "3")) == 0
    agreement = json.loads((out / "agreement.json").read_text())
    # The server answers the truth, which the human qrels are: perfect agreement.
    assert agreement["sampled"] == 12 and agreement["labels"]["kappa"] == 1.0 and agreement["labels"]["alpha"] == 1.0
    assert agreement["systems"]["measure"] == "NDCG@5" and agreement["systems"]["tau"] is not None
    lines = _jsonl(out / "judgments.jsonl")
    sampled = [r for r in lines if "human" in r]
    assert len(sampled) == 12 and all(r["human"] == r["label"] for r in sampled)
    from haystack_irmetrics.io import read_qrels

    human = read_qrels(case.qrels).data
    filled = read_qrels(out / "qrels.tsv").data
    assert all(filled[q][d] == human[q][d] for q in human for d in human[q])


def test_the_agreement_sample_is_seeded_and_stratified_by_grade():
    from haystack_irmetrics.judges.agreement import sample_labelled

    qrels = {f"q{i}": {f"d{j}": (j % 10 == 0) * 2 + (j % 3 == 0) for j in range(30)} for i in range(10)}
    grades = {}
    for docs in qrels.values():
        for g in docs.values():
            grades[g] = grades.get(g, 0) + 1
    sample = sample_labelled(qrels, 50, seed=1)
    assert sample == sample_labelled(qrels, 50, seed=1) != sample_labelled(qrels, 50, seed=2)
    assert len(set(sample)) == 50
    got = {}
    for q, d in sample:
        got[qrels[q][d]] = got.get(qrels[q][d], 0) + 1
    total = sum(grades.values())
    for g, count in grades.items():
        assert abs(got.get(g, 0) - 50 * count / total) <= 1
