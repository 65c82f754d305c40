"""The model judge: answer parsing, cut points, the component and its YAML, and judging through a real
OpenAI-compatible HTTP server (tests/judge_server.py) reached by Haystack's ``OpenAIChatGenerator``: retries on
429s, 500s and time-outs, concurrency, garbage left unjudged, the cache (a second run makes no request, a changed
prompt or model misses). The CLI, the kill test and bad input are in tests/test_judge_cli.py."""

from __future__ import annotations

import json
import math
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_irmetrics.errors import JudgeError
from haystack_irmetrics.judges.batch import judge_texts
from haystack_irmetrics.judges.cache import JudgmentCache
from haystack_irmetrics.judges.judge import ChatJudge, grade_of, learn_cut_points
from haystack_irmetrics.judges.prompt import USER_TEMPLATE, fill, parse_grade

from .judge_server import JudgeServer, mixed_faults

pytest.importorskip("haystack")


# ---- parsing ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        ("2", 2),
        (" 3\n", 3),
        ("**1**", 1),
        ('{"grade": 2, "reason": "x"}', 2),
        ('```json\n{"grade": 0}\n```', 0),
        ("<think>It mentions the topic.</think>\n3", 3),
        ("The passage answers the query in part.\nGrade: 2", 2),
        ("Grade: 1", 1),
        ("**Grade:** 3", 3),
    ],
)
def test_an_answer_in_the_form_asked_for_is_read_as_that_grade(answer, grade):
    assert parse_grade(answer) == grade


@pytest.mark.parametrize(
    "answer",
    [
        "",
        None,
        "I cannot tell.",
        "4",
        "-1",
        "2.5",
        '{"grade": 7}',
        '{"grade": true}',
        '{"verdict": "yes"}',
        "score: 3/10",
        "no",
        "[]",
        "The passage answers the query in part, so I grade it 2.",
        'Here you go: {"grade": 3}',
    ],
)
def test_an_answer_without_a_grade_in_range_is_unparseable_never_zero(answer):
    assert parse_grade(answer) is None


@settings(max_examples=40)
@given(st.text(max_size=60))
def test_parsing_never_raises_and_gives_a_grade_in_range_or_none(text):
    grade = parse_grade(text)
    assert grade is None or grade in (0, 1, 2, 3)


def test_the_template_is_filled_in_one_pass_so_braces_in_the_texts_stay():
    assert fill(USER_TEMPLATE, "a {document} b", "{query}") == (
        "<query>\na {document} b\n</query>\n\n<passage>\n{query}\n</passage>\n\nGrade (0, 1, 2 or 3):"
    )


# ---- cut points ------------------------------------------------------------------------------------------


def _agreements(scores, labels, cuts):
    return sum(grade_of(s, cuts) == g for s, g in zip(scores, labels))


@settings(max_examples=40)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 2)), min_size=2, max_size=9))
def test_learned_cut_points_agree_with_as_many_labels_as_the_best_monotone_grading(pairs):
    scores = [float(s) for s, _ in pairs]
    labels = [g for _, g in pairs]
    cuts = learn_cut_points(scores, labels, max_grade=2)
    assert cuts == sorted(cuts)
    # Oracle: every monotone grading of the distinct scores, by brute force.
    values = sorted(set(scores))
    best = 0
    import itertools

    for grading in itertools.product(range(3), repeat=len(values)):
        if list(grading) == sorted(grading):
            of = dict(zip(values, grading))
            best = max(best, sum(of[s] == g for s, g in zip(scores, labels)))
    assert _agreements(scores, labels, cuts) == best


def test_cut_points_refuse_labels_out_of_the_scale_and_non_finite_scores():
    with pytest.raises(JudgeError, match="the label of labelled pair 1 must be a whole number from 0 to 3, got 4"):
        learn_cut_points([0.1, 0.2], [0, 4])
    with pytest.raises(JudgeError, match="the score of labelled pair 0 must be a finite number, got nan"):
        learn_cut_points([math.nan, 0.2], [0, 1])
    with pytest.raises(JudgeError, match="at least two"):
        learn_cut_points([0.1], [0])


# ---- the server and the chat judge -----------------------------------------------------------------------


def _generator(url, model="judge-model", timeout=1.0):
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    return OpenAIChatGenerator(
        api_key=Secret.from_token("test-key"), model=model, api_base_url=url, timeout=timeout, max_retries=0
    )


class _Recorder:
    def __init__(self):
        self.verdicts = {}
        self.lock = threading.Lock()

    def __call__(self, i, verdict, cached):
        self.verdicts[i] = (verdict, cached)


def _pairs(n=40):
    texts = [(f"query {i % 5}", f"passage number {i} on things") for i in range(n)]
    labels = {t: i % 4 for i, t in enumerate(texts)}
    return texts, labels


def test_a_chat_judge_over_http_retries_429_500_and_time_outs_and_leaves_garbage_unjudged(tmp_path):
    texts, labels = _pairs(48)
    with JudgeServer(labels, faults=mixed_faults, timeout_delay=1.0) as server:
        judge = ChatJudge(_generator(server.url, timeout=0.4))
        out = _Recorder()
        counts = judge_texts(
            judge, texts, cache=JudgmentCache(tmp_path / "c.sqlite"), on_verdict=out, concurrency=6, backoff=0.01
        )
    faults = [mixed_faults(q, d, 0) for q, d in texts]
    assert {"429", "500", "timeout", "garbage"} <= set(faults)  # every fault happened
    for i, (q, d) in enumerate(texts):
        verdict, cached = out.verdicts[i]
        assert not cached
        assert verdict.label == (None if faults[i] == "garbage" else labels[q, d]), (i, verdict)
    retried = sum(f in ("429", "500", "timeout") for f in faults)
    garbage = faults.count("garbage")  # asked once more with a reminder of the form, and garbage again
    assert counts.reasked == counts.unparseable == garbage
    assert counts.requests == len(texts) + retried + garbage and counts.retries == retried
    assert counts.unparseable == faults.count("garbage")
    assert counts.tokens["completion"] == 3 * (len(texts) + garbage)
    assert set(server.temperatures) == {0.0}  # temperature 0 sent with every request


def test_concurrency_keeps_that_many_requests_in_flight(tmp_path):
    texts, labels = _pairs(24)
    in_flight, peak, lock = [0], [0], threading.Lock()

    class Counting(JudgeServer):
        def answer(self, path, body):
            with lock:
                in_flight[0] += 1
                peak[0] = max(peak[0], in_flight[0])
            try:
                return super().answer(path, body)
            finally:
                with lock:
                    in_flight[0] -= 1

    with Counting(labels, delay=0.05) as server:
        judge_texts(
            ChatJudge(_generator(server.url)),
            texts,
            cache=JudgmentCache(enabled=False),
            on_verdict=_Recorder(),
            concurrency=8,
        )
    assert 6 <= peak[0] <= 8


def test_the_cache_answers_a_second_run_and_misses_on_a_changed_prompt_or_model(tmp_path):
    texts, labels = _pairs(12)
    cache_file = tmp_path / "c.sqlite"
    with JudgeServer(labels) as server:

        def run(judge):
            before = len(server.requests)
            out = _Recorder()
            judge_texts(judge, texts, cache=JudgmentCache(cache_file), on_verdict=out, concurrency=4)
            return len(server.requests) - before, out

        first, _ = run(ChatJudge(_generator(server.url)))
        again, out = run(ChatJudge(_generator(server.url)))
        assert (first, again) == (12, 0) and all(cached for _, cached in out.verdicts.values())
        assert [out.verdicts[i][0].label for i in range(12)] == [labels[t] for t in texts]
        other_model, _ = run(ChatJudge(_generator(server.url, model="another-model")))
        other_prompt, _ = run(ChatJudge(_generator(server.url), system_prompt="Grade it, 0 to 3."))
        assert (other_model, other_prompt) == (12, 12)
        assert set(server.models) == {"judge-model", "another-model"}


def test_a_fingerprint_never_holds_the_api_key(tmp_path, monkeypatch):
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-secret-123")
    judge = ChatJudge(OpenAIChatGenerator(api_key=Secret.from_env_var("JUDGE_TEST_KEY"), model="m"))
    assert "sk-secret" not in json.dumps(judge.settings()) and "JUDGE_TEST_KEY" not in json.dumps(judge.settings())


def test_a_server_error_that_persists_stops_the_run_and_keeps_every_finished_judgment(tmp_path):
    texts, labels = _pairs(30)
    bad = texts[17]
    cache_file = tmp_path / "c.sqlite"
    with JudgeServer(labels, faults=lambda q, d, a: "500" if (q, d) == bad else None) as server:
        out = _Recorder()
        with pytest.raises(JudgeError, match=r"server error 500 .* after 3 attempts; the judgments made so far"):
            judge_texts(
                ChatJudge(_generator(server.url)),
                texts,
                cache=JudgmentCache(cache_file),
                on_verdict=out,
                names=[(f"q{i}", f"d{i}") for i in range(30)],
                concurrency=3,
                retries=2,
                backoff=0.01,
            )
        finished = {texts[i] for i in out.verdicts}
        assert bad not in finished and finished
        served = {(q, d) for q, d, _ in server.requests}
        assert finished <= served
        port = server.httpd.server_address[1]
    # The server mended, at the same URL (part of the judge's fingerprint): only what was not finished is asked.
    with JudgeServer(labels, port=port) as server:
        judge_texts(ChatJudge(_generator(server.url)), texts, cache=JudgmentCache(cache_file), on_verdict=_Recorder())
        asked = {(q, d) for q, d, _ in server.requests}
    assert asked == set(texts) - finished


# ---- the component ---------------------------------------------------------------------------------------


def test_relevance_judge_round_trips_through_a_pipeline_yaml_with_its_generator(tmp_path):
    from haystack import Document, Pipeline
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    from haystack_irmetrics.components import RelevanceJudge, load_pipeline

    texts, labels = _pairs(8)
    with JudgeServer(labels) as server:
        gen = OpenAIChatGenerator(api_key=Secret.from_env_var("JUDGE_KEY"), model="m", api_base_url=server.url)
        pipe = Pipeline()
        pipe.add_component("judge", RelevanceJudge(generator=gen, system_prompt="Grade it."))
        path = tmp_path / "judge.yaml"
        path.write_text(pipe.dumps())
        assert "JUDGE_KEY" in path.read_text() and "test-key" not in path.read_text()
        import os

        os.environ["JUDGE_KEY"] = "test-key"
        try:
            loaded = load_pipeline(path).get_component("judge")
            assert loaded.fingerprint() == pipe.get_component("judge").fingerprint()
            docs = [Document(content=texts[0][1]), Document(content=texts[5][1])]  # pairs 0 and 5: query 0
            out = loaded.run(query=texts[0][0], documents=docs)
        finally:
            del os.environ["JUDGE_KEY"]
    assert out["grades"] == [labels[texts[0]], labels[texts[5]]] == [0, 1]
    assert out["documents"][0].meta["relevance_grade"] == labels[texts[0]]


@pytest.mark.parametrize("params", [{}, {"generator": None, "scorer": None}])
def test_a_relevance_judge_with_neither_generator_nor_scorer_is_refused(params):
    from haystack_irmetrics.components import RelevanceJudge

    with pytest.raises(JudgeError, match="exactly one of 'generator'"):
        RelevanceJudge(**params)


def test_max_document_chars_cuts_what_is_sent_and_is_part_of_the_fingerprint(tmp_path):
    texts = [("query 0", "x" * 50 + " the rest")]
    labels = {("query 0", "x" * 20): 2}
    with JudgeServer(labels) as server:
        judge = ChatJudge(_generator(server.url), max_document_chars=20)
        out = _Recorder()
        judge_texts(judge, texts, cache=JudgmentCache(enabled=False), on_verdict=out)
        assert server.requests == [("query 0", "x" * 20, 0)] and out.verdicts[0][0].label == 2
        assert judge.fingerprint() != ChatJudge(_generator(server.url)).fingerprint()
    with pytest.raises(JudgeError, match="max_document_chars must be"):
        ChatJudge(_generator("http://127.0.0.1:9/v1"), max_document_chars=0)
