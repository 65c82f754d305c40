"""Grades by contract: a judge's label is read from the answer form it was asked for, or not at all.

The default reader (:mod:`haystack_irmetrics.judges.grades`) reads a JSON object's ``grade``, a bare whole number
or a final ``Grade: N`` line, after one ``<think>`` block and one code fence; nothing else. A table of more than
a hundred answers (the lenient grammar's table and phrasings a chat model answers with) holds each one's grade or
null, and no answer may be read as a grade it does not give. End to end against the package's OpenAI-compatible
server on 127.0.0.1 (Haystack's own client): ``response_format`` in the request body, the fallback when a server
answers 400 to it, the one re-ask with a reminder, and what the cache and the output folder keep of both answers.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_irmetrics.cli.app import main
from haystack_irmetrics.judges.batch import judge_texts
from haystack_irmetrics.judges.cache import JudgmentCache
from haystack_irmetrics.judges.grades import REMINDER, answer_form, read_contract, response_format
from haystack_irmetrics.judges.judge import ChatJudge

from .judge_data import make_case
from .judge_server import JudgeServer, completion
from .test_judge_cli import _args, _jsonl
from .test_judge_trust import PHRASINGS

pytest.importorskip("haystack")

#: Of the lenient grammar's table, the answers the contract reads, with their grade: every other one is not read.
READ_OF_LENIENT = {
    "2": 2,
    " 3\n": 3,
    "0": 0,
    "2.": 2,
    "**1**": 1,
    "`2`": 2,
    "**Grade:** 3": 3,
    "Grade: **2**": 2,
    "Grade: 1": 1,
    '{"grade": 2, "reason": "x"}': 2,
    '{"grade": 2.0}': 2,
    '{"confidence_score": 0.9, "grade": 1}': 1,
    '{"grade": 2, "reason": "it mentions 3 studies, score: 1"}': 2,
    '```\n{"grade": 1}\n```': 1,
}

#: Phrasings a chat model answers with, each with the grade the contract reads or None. The first eight misread
#: under the free-text grammar (the issue's table: "This deserves a 2, not a 3." was read 3).
CHAT_ANSWERS = [
    ("This deserves a 2, not a 3.", None),
    ("I'd give it a 2 rather than a 3.", None),
    ("Off topic; I would not give it even a 1.", None),
    ("Grade: 2. Actually, on reflection, 1.", None),
    ("Grade: not 3", None),
    ('{"grade": 2, "grade": 3}', None),
    ('```json {"grade": 2} ``` On second thought, Grade: 3', None),
    ("Relevance: 0 = unrelated, ..., 3 = exact. My pick: 2", None),
    ('```json\n{"grade": 2}\n```\nGrade: 3', None),
    ("Grade: 2\nGrade: 3", None),
    ("Grade: 2\nGrade: 2", None),
    ("2\nGrade: 3", None),
    ("Score: 1\nGrade: 2", None),
    ('{"grade": 2}\n{"grade": 3}', None),
    ('{"grade": 1, "relevance": 3}', None),
    ('{"grade": 1, "final_grade": 2}', None),
    ('{"grade": 1, "nested": {"grade": 1, "grade": 2}}', None),
    ('{"Grade": 2}', None),
    ('{"grade": -0}', None),
    ('{"grade": 2.5}', None),
    ('{"grade": 02}', None),
    ("Grade: 4", None),
    ("Grade: 2 out of 3", None),
    ("<think>The grade is 3.", None),
    ("<think>It is clearly a 3.</think>", None),
    ("Let me think.\n<think>1</think>\n2", None),
    ("```\n2\n```\n3", None),
    ("Grade:\n2", None),
    ("Final grade: 2", None),
    ("Grade = 2", None),
    ("二", None),
    ("Grade: ³", None),
    ('{"grade": 2, "relevance_score": 2}', 2),
    ('{"grade": 3, "confidence": 0.4, "reason": "it cites 2 studies"}', 3),
    ('{"grade": 0, "nested": {"score": 3}}', 0),
    ("<think>It cites 2 studies, maybe a 3.</think>\n1", 1),
    ('<THINK>\nhmm: 3?\n</THINK>\n```json\n{"grade": 2}\n```', 2),
    ("The passage names the drug but not its dose, so partly.\nGrade: 2", 2),
    ("It mentions 1999 and 3 trials.\n**Grade: 1**", 1),
    ("grade: 0", 0),
    ("GRADE: 3.", 3),
    ("```\n0\n```", 0),
]

ANSWERS = [(a, READ_OF_LENIENT.get(a)) for a, _ in PHRASINGS] + CHAT_ANSWERS


def test_the_table_holds_over_a_hundred_answers_each_once_and_names_only_its_own_answers():
    answers = [a for a, _ in ANSWERS]
    assert len(answers) >= 100 and len(set(answers)) == len(answers)
    assert set(READ_OF_LENIENT) <= {a for a, _ in PHRASINGS}


@pytest.mark.parametrize(("answer", "grade"), ANSWERS, ids=[repr(a)[:40] for a, _ in ANSWERS])
def test_an_answer_is_read_as_its_contract_grade_or_not_at_all(answer, grade):
    assert read_contract(answer) == grade


def test_the_default_reader_gives_no_wrong_grade_where_the_lenient_one_gave_eight():
    wrong = [a for a, g in ANSWERS if read_contract(a) is not None and read_contract(a) != g]
    assert wrong == []
    misread = [a for a, g in CHAT_ANSWERS[:8] if read_contract(a, 3) is None and _lenient(a) is not None]
    assert len(misread) == 8


def _lenient(answer):
    from haystack_irmetrics.judges.lenient import parse_free_text

    return parse_free_text(answer)


def _forms(grade):
    """The contract's three forms of ``grade``, bare and wrapped in a think block and a fence."""
    core = [
        json.dumps({"grade": grade}),
        json.dumps({"reason": "on topic", "grade": grade}),
        json.dumps({"grade": grade, "relevance_score": grade}),
        str(grade),
        f"**{grade}**",
        f"The passage is on topic; it names 1999 and {grade + 4} studies.\nGrade: {grade}",
        f"Reasoning over two lines.\nIt is partial.\n**Grade:** {grade}",
    ]
    return core + [f"<think>maybe {grade + 1}</think>\n{c}" for c in core] + [f"```json\n{c}\n```" for c in core[:3]]


@pytest.mark.parametrize("max_grade", [1, 3, 9])
def test_every_answer_in_the_contracts_three_forms_is_read_as_its_grade(max_grade):
    for grade in range(max_grade + 1):
        for form in _forms(grade):
            assert read_contract(form, max_grade) == grade, form
    for form in _forms(max_grade + 1):
        assert read_contract(form, max_grade) is None, form  # above the scale: no grade


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet=st.characters(blacklist_characters="0123456789{"), max_size=40), max_size=4),
    st.integers(0, 3),
)
def test_a_final_grade_line_after_any_reasoning_without_numbers_is_the_grade(lines, grade):
    reasoning = "\n".join(line for line in lines if "grade" not in line.lower())
    assert read_contract(f"{reasoning}\nGrade: {grade}") == grade


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_reading_never_raises_and_gives_a_grade_in_range_or_none(text):
    assert read_contract(text) in (None, 0, 1, 2, 3)


def test_the_response_format_is_a_json_schema_of_one_required_integer_grade_in_range():
    schema = response_format(2)["json_schema"]["schema"]
    assert response_format(2)["type"] == "json_schema" and response_format(2)["json_schema"]["strict"] is True
    assert schema["required"] == ["grade"] and schema["additionalProperties"] is False
    assert schema["properties"] == {"grade": {"type": "integer", "enum": [0, 1, 2]}}
    assert answer_form(1) == 'Answer with a JSON object and nothing else: {"grade": N}, where N is 0 or 1.'


# ---- end to end against the local server -------------------------------------------------------------------


def _summary(out):
    return json.loads((out / "summary.json").read_text())


def test_the_request_carries_the_answer_form_and_the_server_answers_it(tmp_path):
    case = make_case(tmp_path / "data")
    with JudgeServer(case.labels, quirks=["free_text_first"]) as server:
        assert main(_args(case, server.url, tmp_path / "out")) == 0
        formats = server.response_formats
    assert formats and all(f == response_format(3) for f in formats)
    rows = _jsonl(tmp_path / "out" / "judgments.jsonl")
    assert all(r["label"] == case.truth[r["query_id"]][r["doc_id"]] for r in rows)
    summary = _summary(tmp_path / "out")
    assert summary["response_format"] == {"sent": True, "refused_by_server": False}
    assert summary["reasked"] == summary["unparseable"] == 0
    assert summary["judge"]["response_format"] == response_format(3)


def test_without_the_form_a_free_text_answer_is_asked_once_more_and_both_answers_are_kept(tmp_path, capsys):
    case = make_case(tmp_path / "data")
    cache_dir = tmp_path / "cache"
    with JudgeServer(case.labels, quirks=["free_text_first"]) as server:
        args = _args(case, server.url, tmp_path / "out", "--no-response-format", "--concurrency", "1")
        assert main(args) == 0
        requests, reasks, formats = list(server.requests), list(server.reasks), list(server.response_formats)
        assert main(args) == 0
        assert len(server.requests) == len(requests)  # the second run: all from the cache
    rows = _jsonl(tmp_path / "out" / "judgments.jsonl")
    assert rows and formats == [None] * len(formats)
    # Each pair: a free-text answer ("I'd give it a 2 rather than a 3.": no grade), then the form when reminded.
    assert len(requests) == 2 * len(rows) and reasks.count(True) == len(rows)
    for r in rows:
        truth = case.truth[r["query_id"]][r["doc_id"]]
        assert r["label"] == truth and r["label_from"] == "reask"
        assert (
            r["raw"] == f"I'd give it a {truth} rather than a {truth + 1}."
            and r["reask_raw"] == f'{{"grade": {truth}}}'
        )
    summary = _summary(tmp_path / "out")
    assert summary["reasked"] == len(rows) and summary["unparseable"] == 0
    assert summary["response_format"] == {"sent": False, "refused_by_server": False}
    assert f"0 unparseable, {len(rows)} asked again)" in capsys.readouterr().out
    db = sqlite3.connect(cache_dir / "judgments" / "judgments.sqlite")
    kept = db.execute("SELECT raw, reask_raw, from_reask, label FROM judgments").fetchall()
    assert len(kept) == len(rows) and all(raw.startswith("I'd") and again and used == 1 for raw, again, used, _ in kept)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))


def test_reask_zero_leaves_a_free_text_answer_unjudged_with_one_request_per_pair(tmp_path):
    case = make_case(tmp_path / "data")
    with JudgeServer(case.labels, quirks=["free_text_first"]) as server:
        out = tmp_path / "out"
        assert main(_args(case, server.url, out, "--no-response-format", "--reask", "0")) == 0
        assert not any(server.reasks)
    rows = _jsonl(out / "judgments.jsonl")
    assert len(server.requests) == len(rows) and {r["label"] for r in rows} == {None}
    assert "reask_raw" not in rows[0]
    summary = _summary(out)
    assert summary["unparseable"] == len(rows) and summary["reasked"] == 0 and summary["judge"]["reask"] == 0


def test_a_server_refusing_response_format_is_asked_without_it_and_the_summary_says_so(tmp_path, capsys):
    case = make_case(tmp_path / "data")
    with JudgeServer(case.labels, quirks=["refuse_response_format"]) as server:
        out = tmp_path / "out"
        assert main(_args(case, server.url, out, "--concurrency", "1")) == 0
        formats = server.response_formats
    rows = _jsonl(out / "judgments.jsonl")
    # One request carried it and was refused; every later one went without it.
    assert formats[0] == response_format(3) and formats[1:] == [None] * len(rows)
    assert all(r["label"] == case.truth[r["query_id"]][r["doc_id"]] for r in rows)
    assert _summary(out)["response_format"] == {"sent": True, "refused_by_server": True}
    assert "the server refused response_format" in capsys.readouterr().out


def test_a_400_that_does_not_name_response_format_still_stops_the_run(tmp_path, capsys):
    case = make_case(tmp_path / "data")

    def bad_request(query, document, attempt, content):
        return 400, {"error": {"message": "context length exceeded", "type": "invalid_request_error"}}, {}

    with JudgeServer(case.labels, respond=bad_request) as server:
        assert main(_args(case, server.url, tmp_path / "out", "--concurrency", "1")) == 2
        assert {attempt for *_, attempt in server.requests} == {0}  # a bad request is never retried
    assert "context length exceeded" in capsys.readouterr().err


def test_a_prompt_of_ones_own_keeps_the_contract_and_the_reader(tmp_path):
    case = make_case(tmp_path / "data")
    prompt = tmp_path / "system.txt"
    prompt.write_text('Grade the passage 0-3. Reply {"grade": N}.', encoding="utf-8")
    with JudgeServer(case.labels, quirks=["free_text_first"]) as server:
        out = tmp_path / "out"
        assert main(_args(case, server.url, out, "--system-prompt", str(prompt))) == 0
        assert set(map(json.dumps, server.response_formats)) == {json.dumps(response_format(3))}
    assert _summary(out)["judge"]["system_prompt"] == prompt.read_text()


def test_the_component_re_asks_and_round_trips_its_contract_settings(tmp_path, monkeypatch):
    from haystack import Document
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    from haystack_irmetrics.components import RelevanceJudge

    labels = {("red cat", "a red cat"): 3, ("red cat", "a dog"): 0}
    with JudgeServer(labels, quirks=["free_text_first"]) as server:
        monkeypatch.setenv("JUDGE_TEST_KEY", "k")
        key = Secret.from_env_var("JUDGE_TEST_KEY")
        generator = OpenAIChatGenerator(api_key=key, model="m", api_base_url=server.url)
        judge = RelevanceJudge(generator=generator, response_format=False)
        out = judge.run(query="red cat", documents=[Document(content="a red cat"), Document(content="a dog")])
        assert out["grades"] == [3, 0] and server.reasks == [False, True, False, True]
    data = judge.to_dict()["init_parameters"]
    assert (data["response_format"], data["reask"], data["lenient"]) == (False, 1, False)
    again = RelevanceJudge.from_dict(judge.to_dict())
    assert again.fingerprint() == judge.fingerprint()
    assert RelevanceJudge(generator=generator).fingerprint() != judge.fingerprint()  # another request, another key


def test_the_reminder_names_the_form_and_a_reask_goes_through_the_judges_cache(tmp_path):
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    assert REMINDER.format(form=answer_form(3)).endswith('{"grade": N}, where N is 0, 1, 2 or 3.')
    texts = [("q", f"passage {i}") for i in range(4)]
    with JudgeServer({t: i % 4 for i, t in enumerate(texts)}, quirks=["free_text_first"]) as server:
        generator = OpenAIChatGenerator(api_key=Secret.from_token("k"), model="m", api_base_url=server.url)
        judge = ChatJudge(generator, response_format=False)
        cache = JudgmentCache(tmp_path / "c.sqlite")
        seen = {}
        counts = judge_texts(judge, texts, cache=cache, on_verdict=lambda i, v, c: seen.update({i: v}))
        assert counts.requests == 8 and counts.reasked == 4 and [seen[i].label for i in range(4)] == [0, 1, 2, 3]
        again = judge_texts(judge, texts, cache=cache, on_verdict=lambda i, v, c: seen.update({i: (v, c)}))
        assert again.requests == 0 and again.reasked == 4 and len(server.requests) == 8
        cache.close()


def _labels(out):
    return {(r["query_id"], r["doc_id"]): r["label"] for r in _jsonl(out / "judgments.jsonl")}


def test_a_server_answering_zero_out_of_three_is_unread_by_default_and_zero_under_lenient(tmp_path):
    case = make_case(tmp_path / "data")
    with JudgeServer(
        case.labels, respond=lambda q, d, a, c: (200, completion("Not relevant: 0 out of 3.", "m"), {})
    ) as server:
        assert main(_args(case, server.url, tmp_path / "contract")) == 0
        asked = len(server.requests)
        assert main(_args(case, server.url, tmp_path / "lenient", "--lenient")) == 0
        assert len(server.requests) > asked  # another reader is another judge: asked again, never mixed
    contract, lenient = _labels(tmp_path / "contract"), _labels(tmp_path / "lenient")
    assert contract and set(contract.values()) == {None}
    assert lenient.keys() == contract.keys() and set(lenient.values()) == {0}
    summaries = [json.loads((tmp_path / d / "summary.json").read_text()) for d in ("contract", "lenient")]
    assert [s["reader"] for s in summaries] == ["contract", "lenient"]
    assert summaries[0]["reasked"] == summaries[0]["unparseable"] == len(contract) and summaries[1]["reasked"] == 0
    assert "reader" not in summaries[0]["judge"] and summaries[1]["judge"]["reader"] == "lenient"
