"""The shipped QA sample (examples/data/qa) is what examples/make_qa_sample.py writes, and holds what its docstring
says; the answers file's reader and writer (io/answers.py); the stand-in server's prompt and rule."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from haystack_irmetrics.errors import ParseError
from haystack_irmetrics.io.answers import read_answers, write_answers
from haystack_irmetrics.usefulness.asker import DEFAULT_PROMPT, fill
from haystack_irmetrics.usefulness.server import USER, first_span, rule_answer

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "data" / "qa"
FILES = ("corpus.jsonl", "queries.jsonl", "answers.jsonl", "lexical.trec", "noisy.trec")


def test_the_shipped_sample_is_what_make_qa_sample_writes(tmp_path):
    written = runpy.run_path(str(ROOT / "examples" / "make_qa_sample.py"), run_name="not_main")["main"](tmp_path)
    assert sorted(p.name for p in written) == sorted(FILES)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def test_each_question_is_answered_by_two_passages_of_its_landmark_and_no_other():
    corpus = {r["_id"]: f"{r['title']} {r['text']}" for r in map(json.loads, (SAMPLE / "corpus.jsonl").open())}
    queries = {r["_id"]: r["text"] for r in map(json.loads, (SAMPLE / "queries.jsonl").open())}
    answers = read_answers(SAMPLE / "answers.jsonl")
    assert list(answers) == list(queries) and len(queries) == 24 and len(corpus) == 48
    for qid, given in answers.items():
        holding = [d for d, text in corpus.items() if first_span(text, given) is not None]
        landmark = (int(qid[2:]) - 1) // 2  # two questions per landmark, four passages each
        assert len(holding) == 2 and {(int(d[1:]) - 1) // 4 for d in holding} == {landmark}, qid
    for name in ("lexical", "noisy"):
        rows = [line.split() for line in (SAMPLE / f"{name}.trec").read_text().splitlines()]
        assert {r[0] for r in rows} == set(queries) and len(rows) == 240 and {r[5] for r in rows} == {name}


def test_the_answers_file_reads_back_what_was_written_and_bad_lines_are_named(tmp_path):
    given = {"q1": ["1887"], "q 2": ["Hedda Marsh", "Marsh", "é"]}
    assert read_answers(write_answers(given, tmp_path / "a.jsonl")) == given
    cases = [
        ('{"query_id": 1, "answers": ["x"]}', ":1: 'query_id' must be a string, found int 1"),
        ('{"query_id": "q", "answers": []}', ":1: query 'q': 'answers' must be a list of one or more strings"),
        ('{"query_id": "q", "answers": "x"}', ":1: query 'q': 'answers' must be a list of one or more strings"),
        (
            '{"query_id": "q", "answers": ["x"]}\n{"query_id": "q", "answers": ["y"]}',
            ":2: query 'q' appears twice (first on line 1)",
        ),
        ('{"answers": ["x"]}', ":1: expected a JSON object with an 'query_id'"),
        ("", ": no reference answers (empty file?)"),
    ]
    for i, (text, message) in enumerate(cases):
        path = tmp_path / f"bad{i}.jsonl"
        path.write_text(text + "\n")
        with pytest.raises(ParseError) as caught:
            read_answers(path)
        assert str(caught.value) == f"{path}{message}" or str(caught.value).startswith(f"{path}{message}")


def test_the_server_reads_the_default_prompt_back_and_answers_by_its_rule():
    message = fill(DEFAULT_PROMPT, "Who designed {document}?", "Designed by Hedda Marsh.\n\nQuestion: x")
    assert USER.match(message).groups() == ("Who designed {document}?", "Designed by Hedda Marsh.\n\nQuestion: x")
    assert USER.match("Question: q\n\nPassage: p") is None
    assert first_span("by hedda marsh and Marsh", ["Marsh", "Hedda Marsh"]) == "hedda marsh"  # the first to start
    assert first_span("Marshall", ["Marsh"]) is None  # whole words
    assert rule_answer("q", "no answer here", ["1887"]) == "unknown"
    forms = {rule_answer(f"q{i}", "opened in 1887", ["1887"]) for i in range(30)}
    assert forms == {"1887", "The answer is 1887.", "1887."}


def test_a_request_in_another_prompt_is_a_400(tmp_path):
    pytest.importorskip("haystack")
    from haystack_irmetrics.usefulness.server import AnswerServer

    server = AnswerServer({"q": ["a"]})
    status, body, _ = server.answer("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})
    assert status == 400 and body["error"]["message"] == "not the prompt this server reads"
    status, body, _ = server.answer(
        "/v1/chat/completions", {"messages": [{"role": "user", "content": fill(DEFAULT_PROMPT, "q", "an a")}]}
    )
    assert status == 200 and body["choices"][0]["message"]["content"] in ("a", "The answer is a.", "A.")
    server.httpd.server_close()
