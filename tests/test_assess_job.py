"""``irmetrics assess PAIRS`` as one call (``assess/job.py``): :class:`AssessSettings` refuses what the page cannot
take when built, before any file is read, and :func:`run_assess` reads and checks every input, a strategy's runs
included, before anything is made. The page served through it is tested through the command
(``tests/test_assess_server.py``, ``tests/test_assess_browser.py``)."""

from __future__ import annotations

import re

import pytest

from haystack_irmetrics.assess import AssessSettings, run_assess
from haystack_irmetrics.errors import AssessError, InvalidArgumentError, ParseError

from .assess_fixtures import write_dataset, write_pairs


@pytest.mark.parametrize(
    ("extra", "error", "message"),
    [
        ({"runs": ("a.trec",)}, InvalidArgumentError, "--runs are pooled by a strategy: give --strategy too"),
        ({"strategy": "mtf", "runs": ("a.trec",)}, InvalidArgumentError, "up to a --budget: give both"),
        ({"strategy": "mtf", "budget": 5}, InvalidArgumentError, "up to a --budget: give both"),
        ({"strategy": "stratified", "runs": ("a",), "budget": 5}, InvalidArgumentError, "stratified is a sample"),
        ({"budget": 0}, InvalidArgumentError, "--budget must be a whole number >= 1, got 0"),
        ({"budget": True}, InvalidArgumentError, "--budget must be a whole number >= 1, got True"),
        ({"port": 65536}, AssessError, "--port must be"),
        ({"max_grade": 10}, AssessError, "one key per grade"),
        ({"assessor": " "}, AssessError, "the assessor's name is empty"),
    ],
)
def test_the_settings_refuse_what_the_page_cannot_take_when_built(tmp_path, extra, error, message):
    with pytest.raises(error, match=re.escape(message)):
        AssessSettings("absent.tsv", "absent", "absent", tmp_path / "judged", **extra)


def test_settings_the_page_takes_are_built_without_reading_a_file(tmp_path):
    edge = AssessSettings("absent.tsv", "q", "c", tmp_path, runs=["a"], strategy="mtf", budget=1, port=65535)
    assert edge.runs == ("a",) and edge.max_grade == 3 and edge.port == 65535  # a list of runs kept as a tuple
    assert AssessSettings("absent.tsv", "q", "c", tmp_path, port=0, max_grade=9).max_grade == 9


def test_run_assess_checks_every_input_before_anything_is_made(tmp_path):
    data = write_dataset(tmp_path / "data")
    out = tmp_path / "judged"
    write_pairs(data / "missing.tsv", [("q1", "d1"), ("q1", "d99")])
    missing = AssessSettings(str(data / "missing.tsv"), data, data, out, assessor="ann", port=0)
    with pytest.raises(AssessError, match=r"pair \('q1', 'd99'\) of .*missing\.tsv: document 'd99' is not in"):
        run_assess(missing)
    write_pairs(data / "empty.tsv", [])
    with pytest.raises(ParseError, match=r"empty\.tsv: the pairs file holds a header and no pair"):
        run_assess(AssessSettings(str(data / "empty.tsv"), data, data, out, assessor="ann", port=0))
    # a strategy's runs are checked against the texts too, each pair naming its run
    (data / "run.trec").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d77 2 1.0 r\n", encoding="utf-8")
    pooled = AssessSettings(
        str(data / "pairs.tsv"), data, data, out, port=0, strategy="mtf", runs=(str(data / "run.trec"),), budget=3
    )
    with pytest.raises(AssessError, match=r"document 'd77' \(query 'q1' of run run\.trec\) is not in the corpus"):
        run_assess(pooled)
    assert not out.exists()
