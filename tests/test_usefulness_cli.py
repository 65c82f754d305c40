"""``irmetrics usefulness`` on the shipped QA sample (examples/data/qa) against a real OpenAI-compatible server on
127.0.0.1 (haystack_irmetrics.usefulness.server: it answers from the passage by a rule this test knows, so every
label is known before a request), reached by Haystack's ``OpenAIChatGenerator`` over HTTP.

Oracles: SQuAD v1.1's official script (the copy in tests/test_usefulness.py) on the generations, pytrec_eval on the
written qrels and the runs, the ``erag`` package (eRAG's own P and success, given the same generations), scipy's
kendalltau and spearmanr on the end-to-end scores."""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import pytest
import pytrec_eval

from haystack_irmetrics.cli import main
from haystack_irmetrics.usefulness.server import AnswerServer, references_from_files, rule_answer

from .test_usefulness import ORACLES, metric_max_over_ground_truths

pytest.importorskip("haystack")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "data" / "qa"
RUNS = [str(SAMPLE / "lexical.trec"), str(SAMPLE / "noisy.trec")]
DEPTH = 5


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


QUESTIONS = {row["_id"]: row["text"] for row in _jsonl(SAMPLE / "queries.jsonl")}
ANSWERS = {row["query_id"]: row["answers"] for row in _jsonl(SAMPLE / "answers.jsonl")}
# What a pipeline indexes of a BEIR document, the text the generator is sent: title and text.
TEXTS = {row["_id"]: f"{row['title']} {row['text']}".strip() for row in _jsonl(SAMPLE / "corpus.jsonl")}
#: What the stand-in server answers from: each question's text and its reference answers.
REFERENCES = references_from_files(str(SAMPLE / "queries.jsonl"), str(SAMPLE / "answers.jsonl"))


def _ranked(path: str, depth: int) -> dict[str, list[str]]:
    """A run's top ``depth`` per query in trec_eval's order (score descending, then doc id descending)."""
    run: dict[str, list[tuple[float, str]]] = {}
    for line in Path(path).read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, []).append((float(score), d))
    return {q: [d for _, d in sorted(docs, reverse=True)[:depth]] for q, docs in run.items()}


def expected_label(metric: str, qid: str, passage: str) -> float:
    """The label the rule's answer gets, by SQuAD's official script."""
    answer = rule_answer(QUESTIONS[qid], passage, ANSWERS[qid])
    return metric_max_over_ground_truths(ORACLES[metric], answer, ANSWERS[qid])


@pytest.fixture(scope="module")
def server():
    with AnswerServer(REFERENCES) as s:
        yield s


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    """Each test its own answer cache, unless it shares one on purpose."""
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))


def _args(url: str, out: Path, *extra: str, runs=RUNS) -> list[str]:
    return [
        "usefulness",
        *runs,
        "--queries",
        str(SAMPLE / "queries.jsonl"),
        "--corpus",
        str(SAMPLE / "corpus.jsonl"),
        "--answers",
        str(SAMPLE / "answers.jsonl"),
        "--llm",
        "stand-in",
        "--api-base-url",
        url,
        "--depth",
        str(DEPTH),
        "-o",
        str(out),
        "--no-progress",
        *extra,
    ]


def _pool() -> list[tuple[str, str]]:
    pairs = {(q, d) for path in RUNS for q, docs in _ranked(path, DEPTH).items() for d in docs}
    return sorted(pairs)


def _qrels(path: Path) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    lines = path.read_text().splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore"
    for line in lines[1:]:
        q, d, label = line.split("\t")
        out.setdefault(q, {})[d] = label
    return out


def test_the_command_labels_each_pool_pair_once_as_the_rule_says_and_scores_as_pytrec_eval(server, tmp_path, capsys):
    before = len(server.requests)
    assert main(_args(server.url, tmp_path / "out")) == 0
    asked = server.requests[before:]
    pairs = _pool()
    assert len(asked) == len(pairs) == len({(q, d) for q, d, _ in asked})  # a pair both runs retrieved: asked once
    rows = _jsonl(tmp_path / "out" / "generations.jsonl")
    assert sorted((r["query_id"], r["doc_id"]) for r in rows) == pairs
    for r in rows:
        assert r["answer"] == rule_answer(QUESTIONS[r["query_id"]], TEXTS[r["doc_id"]], ANSWERS[r["query_id"]])
        assert r["label"] == expected_label("exact_match", r["query_id"], TEXTS[r["doc_id"]])
    qrels = _qrels(tmp_path / "out" / "qrels.tsv")
    assert {(q, d): int(v) for q, docs in qrels.items() for d, v in docs.items()} == {
        (r["query_id"], r["doc_id"]): r["label"] for r in rows
    }
    labels = {q: {d: int(v) for d, v in docs.items()} for q, docs in qrels.items()}
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    for name, path in zip(("lexical", "noisy"), RUNS):
        ranked = _ranked(path, DEPTH)
        run = {q: {d: float(DEPTH - i) for i, d in enumerate(docs)} for q, docs in ranked.items()}
        oracle = pytrec_eval.RelevanceEvaluator(labels, {"ndcg_cut_5", "P_5", "success_5", "recip_rank"}).evaluate(run)
        mine = metrics["runs"][name]
        for measure, theirs in (
            ("NDCG@5", "ndcg_cut_5"),
            ("P@5", "P_5"),
            ("Success@5", "success_5"),
            ("MRR@5", "recip_rank"),
        ):
            for q in ranked:
                assert mine["per_query"][measure][q] == pytest.approx(oracle[q][theirs], abs=1e-12)
            mean = sum(oracle[q][theirs] for q in ranked) / len(ranked)
            assert mine["means"][measure] == pytest.approx(mean, abs=1e-12)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["pairs"], summary["requests"], summary["cache_hits"]) == (len(pairs), len(pairs), 0)
    assert summary["useful_pairs"] == sum(r["label"] for r in rows) and summary["empty_generations"] == 0
    out = capsys.readouterr().out
    assert out.startswith(f"labelled {len(pairs)} pairs of 24 queries ({len(pairs)} requests, 0 cached, 0 empty;")
    # Run again: every answer from the cache, no request, the same files.
    files = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.name != "summary.json"}
    before = len(server.requests)
    assert main(_args(server.url, tmp_path / "out")) == 0
    assert len(server.requests) == before
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.name != "summary.json"} == files
    again = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (again["requests"], again["cache_hits"]) == (0, len(pairs))


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("usefulness-cache")


@pytest.mark.parametrize("metric", ["exact_match", "f1", "contains"])
def test_p_and_success_equal_erags_given_the_same_generations(server, tmp_path, monkeypatch, shared_cache, metric):
    erag = pytest.importorskip("erag", reason="erag is not installed (make test-install: pip install --no-deps erag)")
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(shared_cache))  # one cache: the metric is not in its key
    first = not (shared_cache / "judgments").exists()
    before = len(server.requests)
    assert main(_args(server.url, tmp_path / "out", "--answer-metric", metric)) == 0
    assert (len(server.requests) - before == 0) is not first  # another metric labels again from the cache
    rows = _jsonl(tmp_path / "out" / "generations.jsonl")
    said = {(r["query_id"], r["doc_id"]): r["answer"] for r in rows}
    qid_of = {text: q for q, text in QUESTIONS.items()}
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())

    def generate(batch):  # eRAG calls it one rank position at a time: {question: [document]}
        return {question: said[qid_of[question], docs[0]] for question, docs in batch.items()}

    def downstream(generated, expected):
        return {q: metric_max_over_ground_truths(ORACLES[metric], generated[q], expected[q]) for q in generated}

    for name, path in zip(("lexical", "noisy"), RUNS):
        ranked = _ranked(path, DEPTH)
        results = erag.eval(
            {QUESTIONS[q]: docs for q, docs in ranked.items()},
            {QUESTIONS[q]: ANSWERS[q] for q in ranked},
            generate,
            downstream,
            {"P_5", "success_5"},
        )
        mine = metrics["runs"][name]["means"]
        assert mine["P@5"] == pytest.approx(results["aggregated"]["P_5"], abs=1e-12)
        assert mine["Success@5"] == pytest.approx(results["aggregated"]["success_5"], abs=1e-12)
    if metric == "f1":  # graded labels, written with repr's digits
        labels = {(r["query_id"], r["doc_id"]): r["label"] for r in rows}
        for q, docs in _qrels(tmp_path / "out" / "qrels.tsv").items():
            for d, text in docs.items():
                assert text == repr(float(labels[q, d])) and float(text) == expected_label("f1", q, TEXTS[d])
        assert any(0 < v < 1 for v in labels.values())


def test_end_to_end_asks_each_runs_top_n_together_and_correlates_as_scipy(server, tmp_path, capsys):
    stats = pytest.importorskip("scipy.stats")
    third = tmp_path / "reversed.trec"  # a third run: lexical's top 10 upside down
    lines = Path(RUNS[0]).read_text().splitlines()
    third.write_text("".join(f"{q} Q0 {d} {r} {-float(s)} rev\n" for q, _, d, r, s, _ in map(str.split, lines)))
    runs = [*RUNS, f"reversed={third}"]
    args = _args(
        server.url, tmp_path / "out", "--end-to-end", "3", "--answer-metric", "contains", "--depth", "3", runs=runs
    )
    assert main(args) == 0
    together = _jsonl(tmp_path / "out" / "end_to_end.jsonl")
    assert len(together) == 3 * 24
    for row in together:
        ranked = _ranked(str(third) if row["run"] == "reversed" else RUNS[("lexical", "noisy").index(row["run"])], 3)
        assert row["docs"] == ranked[row["query_id"]]
        passage = "\n\n".join(TEXTS[d] for d in row["docs"])
        assert row["answer"] == rule_answer(QUESTIONS[row["query_id"]], passage, ANSWERS[row["query_id"]])
        assert row["score"] == expected_label("contains", row["query_id"], passage)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    for name, run in metrics["runs"].items():
        e2e = run["end_to_end"]
        scores = [row["score"] for row in together if row["run"] == name]
        assert e2e["mean"] == pytest.approx(sum(scores) / 24)
        qids = sorted(e2e["per_query"])
        for measure, values in run["per_query"].items():
            x, y = [values[q] for q in qids], [e2e["per_query"][q] for q in qids]
            for method, oracle in (("kendall", stats.kendalltau), ("spearman", stats.spearmanr)):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", stats.ConstantInputWarning)  # then both are nan
                    got, want = e2e["correlation"][measure][method], oracle(x, y)
                assert got["n"] == 24
                assert _same(got["statistic"], want.statistic) and _same(got["pvalue"], want.pvalue)
    names = list(metrics["runs"])
    for measure in run["means"]:
        x = [metrics["runs"][n]["means"][measure] for n in names]
        y = [metrics["runs"][n]["end_to_end"]["mean"] for n in names]
        got = metrics["across_runs"][measure]["kendall"]
        assert _same(got["statistic"], stats.kendalltau(x, y).statistic) and got["n"] == 3
    out = capsys.readouterr().out
    assert "| run | NDCG@3 | P@3 | MRR@3 | Success@3 | end to end (top 3) |" in out
    assert "Kendall's tau (Spearman's rho) with the end-to-end score, across each run's queries:" in out
    assert "\n| across the 3 runs | " in out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["end_to_end"]["top"] == 3 and summary["end_to_end"]["asked"] == 3 * 24
    assert summary["end_to_end"]["requests"] + summary["end_to_end"]["cache_hits"] == 3 * 24
    # Without --end-to-end the next run in the folder leaves no stale end_to_end.jsonl.
    assert main(_args(server.url, tmp_path / "out")) == 0
    assert not (tmp_path / "out" / "end_to_end.jsonl").exists()


def _same(a, b) -> bool:
    """Equal to 1e-12, or both undefined (JSON's null for scipy's nan)."""
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or math.isnan(b)
    return a == pytest.approx(float(b), abs=1e-12)


def test_an_empty_generation_is_label_0_counted_and_said(tmp_path, capsys):
    from haystack_irmetrics.judges.server import completion

    def respond(question, passage, attempt, content):
        return (200, completion("", "m"), {}) if "Corran" in passage else None

    with AnswerServer(REFERENCES, respond=respond) as s:
        assert main(_args(s.url, tmp_path / "out", "--answer-metric", "contains")) == 0
    rows = _jsonl(tmp_path / "out" / "generations.jsonl")
    empty = [r for r in rows if "Corran" in TEXTS[r["doc_id"]]]
    assert empty and all(r["answer"] == "" and r["label"] == 0 for r in empty)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["empty_generations"] == len(empty) and summary["requests"] == len(rows)  # an answer: no retry
    assert f"{len(empty)} empty;" in capsys.readouterr().out


def test_429s_and_500s_are_retried_and_counted(tmp_path):
    def faults(question, passage, attempt):
        return ("429", "500")[len(passage) % 2] if attempt == 0 and "Tolvern" in passage else None

    with AnswerServer(REFERENCES, faults=faults) as s:
        assert main(_args(s.url, tmp_path / "out", "--backoff", "0")) == 0
    rows = _jsonl(tmp_path / "out" / "generations.jsonl")
    retried = [r for r in rows if "Tolvern" in TEXTS[r["doc_id"]]]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert retried and summary["retries"] == len(retried) and summary["requests"] == len(rows) + len(retried)
    assert all(r["label"] == expected_label("exact_match", r["query_id"], TEXTS[r["doc_id"]]) for r in rows)


def test_a_pair_that_keeps_failing_stops_the_run_and_the_next_asks_only_what_is_missing(tmp_path, capsys):
    broken = {"on": True}

    def respond(question, passage, attempt, content):
        if broken["on"] and "Saltmarsh" in passage and "history" in passage:
            return 400, {"error": {"message": "the model is away"}}, {}
        return None

    with AnswerServer(REFERENCES, respond=respond) as s:
        assert main(_args(s.url, tmp_path / "out", "--concurrency", "2")) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("irmetrics: error: the generator failed on query 'qa")
        assert "the model is away" in err[0] and err[0].endswith("(run again to go on)")
        first = {(q, d) for q, d, _ in s.requests}
        broken["on"] = False
        before = len(s.requests)
        assert main(_args(s.url, tmp_path / "out")) == 0
        second = [(q, d) for q, d, _ in s.requests[before:]]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert 0 < summary["cache_hits"] < len(_pool())  # stopped midway, every finished answer kept
    assert summary["requests"] == len(second) == len(set(second)) == len(_pool()) - summary["cache_hits"]
    again = set(second) & first  # asked twice: only what failed, never an answer that was kept
    assert again and all("Saltmarsh" in passage and "history" in passage for _, passage in again)


def test_the_urls_credentials_are_written_nowhere(server, tmp_path, capsys):
    url = server.url.replace("http://", "http://someone:s3cret-pw@")
    assert main(_args(url, tmp_path / "out")) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["server"] == summary["generator"]["server"] == server.url
    for path in (tmp_path / "out").iterdir():
        text = path.read_text()
        assert "s3cret" not in text and "someone" not in text, path.name
    # A failure's message names the server without them too.
    assert main(_args(url.replace(server.url.split(":")[-1].split("/")[0], "1"), tmp_path / "x", "--retries", "0")) == 2
    err = capsys.readouterr().err
    assert "cannot reach the generator at http://127.0.0.1:1/v1" in err and "s3cret" not in err


def test_a_generator_yaml_labels_as_the_llm_options_do(server, tmp_path, monkeypatch):
    from haystack import Pipeline
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    monkeypatch.setenv("STAND_IN_KEY", "no-key")
    pipe = Pipeline()
    pipe.add_component(
        "llm",
        OpenAIChatGenerator(api_key=Secret.from_env_var("STAND_IN_KEY"), model="stand-in", api_base_url=server.url),
    )
    (tmp_path / "rag.yaml").write_text(pipe.dumps())
    args = _args(server.url, tmp_path / "yaml")
    at = args.index("--llm")
    args[at : at + 4] = ["--generator", str(tmp_path / "rag.yaml")]
    assert main(args) == 0
    assert main(_args(server.url, tmp_path / "llm")) == 0
    yaml_rows, llm_rows = (_jsonl(tmp_path / d / "generations.jsonl") for d in ("yaml", "llm"))
    assert yaml_rows == llm_rows


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("answers", "irmetrics: error: query 'qa24' of the runs has no reference answers in {answers}: every question"),
        (
            "queries",
            "irmetrics: error: the answers file {answers} names query 'qa99', which the queries file {queries} lacks",
        ),
        ("measure", "irmetrics: error: P@10 reads each ranking's top 10, but only the top 5 documents are labelled"),
        ("empty", "irmetrics: error: query 'qa01' ({answers}): reference answer 'The' is empty once normalized"),
    ],
)
def test_bad_input_exits_2_with_one_line_before_any_request(server, tmp_path, capsys, change, message):
    answers = tmp_path / "answers.jsonl"
    rows = _jsonl(SAMPLE / "answers.jsonl")
    extra = []
    if change == "answers":
        rows = rows[:-1]
    elif change == "queries":
        rows.append({"query_id": "qa99", "answers": ["x"]})
    elif change == "measure":
        extra = ["--measures", "NDCG@5,P@10"]
    else:
        rows[0]["answers"] = ["The"]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = _args(server.url, tmp_path / "out", *extra)
    args[args.index("--answers") + 1] = str(answers)
    before = len(server.requests)
    assert main(args) == 2
    assert len(server.requests) == before
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(message.format(answers=answers, queries=SAMPLE / "queries.jsonl")), err


def test_another_commands_folder_is_refused_and_its_files_kept(server, tmp_path, capsys):
    folder = tmp_path / "judged"
    folder.mkdir()
    (folder / ".irmetrics.lock").write_text("irmetrics judge\n")
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq\td\t1\n")
    assert main(_args(server.url, folder)) == 2
    assert "is irmetrics judge's" in capsys.readouterr().err
    assert (folder / "qrels.tsv").read_text().endswith("q\td\t1\n")


def test_end_to_end_without_scipy_names_the_stats_extra_before_any_request(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "scipy", None)
    before = len(server.requests)
    assert main(_args(server.url, tmp_path / "out", "--end-to-end", "2")) == 2
    assert len(server.requests) == before
    err = capsys.readouterr().err
    assert "scipy is not installed" in err and "haystack-irmetrics[stats]" in err
