"""A damaged ``--judged`` folder (the output of ``irmetrics judge --ppi``) is one line naming the file and the key,
exit 2, wherever it is read (``irmetrics evaluate --judged``, ``irmetrics report --judged``): every value is
checked by its one reader, :meth:`haystack_irmetrics.judges.folder.JudgedFolder.read`, never a ``TypeError``."""

from __future__ import annotations

import json

import pytest

from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import JudgeError, ParseError
from haystack_irmetrics.judges.folder import JudgedFolder

QUERIES = ("q1", "q2", "q3", "q4")


@pytest.fixture
def case(tmp_path):
    """A run of four queries (top 2), human qrels judging q1's and q2's pool in full, and a judged folder whose
    model judged every pool pair: ``irmetrics evaluate --judged`` works on it as it is."""
    run = tmp_path / "run.trec"
    run.write_text("".join(f"{q} Q0 {q}-a 1 2.0 x\n{q} Q0 {q}-b 2 1.0 x\n" for q in QUERIES))
    qrels = tmp_path / "human.tsv"
    qrels.write_text("q1 0 q1-a 1\nq1 0 q1-b 0\nq2 0 q2-a 0\nq2 0 q2-b 1\nq3 0 q3-x 1\nq4 0 q4-x 1\n")
    folder = tmp_path / "judged"
    folder.mkdir()
    pairs = [(q, f"{q}-{d}") for q in QUERIES for d in "ab"]
    model = "".join(f"{q}\t{d}\t{i % 2}\n" for i, (q, d) in enumerate(pairs))
    (folder / "model_qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + model)
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + model)
    lines = [json.dumps({"query_id": q, "doc_id": d, "label": i % 2}) for i, (q, d) in enumerate(pairs)]
    (folder / "judgments.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "summary.json").write_text(json.dumps({"depth": 2, "pairs": 4}))
    (folder / "ppi.json").write_text(json.dumps({"alpha": 0.1, "labelled": ["q1", "q2"], "measure": "P@2"}))
    return run, qrels, folder


def _evaluate(run, qrels, folder):
    return ["evaluate", str(qrels), str(run), "-m", "P@2", "--judged", str(folder), "--format", "markdown"]


def test_an_intact_folder_is_read_and_evaluates(case, capsys):
    run, qrels, folder = case
    found = JudgedFolder.read(folder)
    assert (found.depth, found.alpha, found.labelled) == (2, 0.1, frozenset({"q1", "q2"}))
    assert main(_evaluate(run, qrels, folder)) == 0
    assert "PPI 90% interval" in capsys.readouterr().out
    (folder / "ppi.json").unlink()  # a folder judged without --ppi
    with pytest.raises(JudgeError, match=f"{folder} holds no ppi.json: judge with irmetrics judge ... --ppi -o"):
        JudgedFolder.read(folder)


DAMAGES = [
    ("summary.json", {"depth": "x"}, "'depth' must be a whole number of at least 1, got 'x'"),
    ("summary.json", {"depth": -1}, "'depth' must be a whole number of at least 1, got -1"),
    ("summary.json", {"depth": 0}, "'depth' must be a whole number of at least 1, got 0"),
    ("summary.json", {"depth": 2.0}, "'depth' must be a whole number of at least 1, got 2.0"),
    ("summary.json", {"depth": True}, "'depth' must be a whole number of at least 1, got True"),
    ("summary.json", {"pairs": 4}, "the key 'depth' is missing"),
    ("summary.json", [2], "expected a JSON object, got a JSON array"),
    ("summary.json", '{"depth": 2', "not a JSON summary (invalid JSON"),
    ("ppi.json", {"alpha": 0.1, "labelled": 5}, "'labelled' must be a list of query ids (strings), got 5"),
    ("ppi.json", {"alpha": 0.1, "labelled": [1, 2]}, "'labelled' must be a list of query ids (strings), got [1, 2]"),
    ("ppi.json", {"alpha": 0.1}, "the key 'labelled' is missing"),
    ("ppi.json", {"alpha": "0.1", "labelled": []}, "'alpha' must be a number between 0 and 1, got '0.1'"),
    ("ppi.json", {"alpha": 1.5, "labelled": []}, "'alpha' must be a number between 0 and 1, got 1.5"),
    ("ppi.json", '{"alpha": NaN, "labelled": []}', "'alpha' must be a number between 0 and 1, got nan"),
    ("ppi.json", {"labelled": []}, "the key 'alpha' is missing"),
    ("judgments.jsonl", '{"query_id": 5, "doc_id": "d"}\n', ":1: 'query_id' must be a string, got 5"),
    ("judgments.jsonl", '{"query_id": "q1"}\n', ":1: 'doc_id' must be a string, got None"),
    ("judgments.jsonl", '{"query_id": "q1", "doc_id": "d"}\n[1]\n', ":2: expected a JSON object, found list"),
    ("judgments.jsonl", "{not json\n", ":1: invalid JSON"),
]


@pytest.mark.parametrize("name,content,message", DAMAGES)
def test_a_damaged_judged_folder_is_one_line_naming_the_file_and_the_key(
    case, capsys, tmp_path, name, content, message
):
    run, qrels, folder = case
    path = folder / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises((JudgeError, ParseError)) as raised:
        JudgedFolder.read(folder)
    assert str(path) in str(raised.value) and message in str(raised.value)
    page = tmp_path / "r.html"
    report = ["report", str(run), "--qrels", str(qrels), "-m", "P", "-k", "2", "--judged", str(folder), "-o", str(page)]
    for argv in (_evaluate(run, qrels, folder), report):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        err = [line for line in err if not line.startswith("irmetrics: warning:")]
        assert len(err) == 1 and err[0].startswith("irmetrics: error: "), err
        assert str(path) in err[0] and message in err[0], err
    assert not page.exists()
