"""One reader per format in ``io/``: both BEIR qrels readers follow one label rule, every JSONL corpus and
queries file is read by one reader (line limit, errors naming file and line), and no package imports
another package's private names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from haystack_irmetrics.beir import load_beir
from haystack_irmetrics.errors import ParseError
from haystack_irmetrics.io import read_beir_qrels, read_qrels
from haystack_irmetrics.io.beir_data import beir_label, read_beir_corpus, read_beir_queries, read_jsonl
from haystack_irmetrics.io.limits import ENV_VAR
from haystack_irmetrics.report.sources import read_documents, read_queries

PACKAGE = Path(__file__).resolve().parent.parent / "haystack_irmetrics"


def _dataset(root: Path, label: str) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"}\n')
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n')
    (root / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t{label}\nq1\td2\t0\n")
    return root


# Accepted: a plain finite number (a whole value as an int, a fraction as a float). Refused: not finite, not plain
# ASCII, not a number.
LABELS = ["1", "2", "+1", "-1", "1.0", "2.00", "1e0", "1.", "-2.5e-1", "1_000", "inf", "nan", "\u0661", "0x1", "one"]


@pytest.mark.parametrize("label", LABELS)
def test_evaluate_and_beir_read_the_same_qrels_file_alike(tmp_path, label):
    """One file passes (with the same labels) or fails both ``irmetrics evaluate`` and ``irmetrics beir``."""
    root = _dataset(tmp_path / "ds", label)
    qrels_file = root / "qrels" / "test.tsv"
    try:
        by_evaluate = read_qrels(qrels_file).data
    except ParseError as e:
        by_evaluate = e
    try:
        by_beir = load_beir(root).qrels
    except ParseError as e:
        by_beir = e
    if isinstance(by_evaluate, ParseError):
        assert isinstance(by_beir, ParseError), (label, by_beir)
        assert "test.tsv:2:" in str(by_evaluate) and "test.tsv:2:" in str(by_beir)
    else:
        assert not isinstance(by_beir, ParseError), (label, by_beir)
        assert by_beir == by_evaluate == {"q1": {"d1": beir_label(label), "d2": 0}}
        whole = float(label) == round(float(label))
        assert type(by_beir["q1"]["d1"]) is (int if whole else float), (label, by_beir)
    assert (beir_label(label) is None) == isinstance(by_beir, ParseError)


def test_a_label_written_1_0_reads_as_the_integer_1_in_both_readers(tmp_path):
    root = _dataset(tmp_path / "ds", "1.0")
    assert read_beir_qrels(root / "qrels" / "test.tsv").data == {"q1": {"d1": 1, "d2": 0}}
    assert load_beir(root).qrels == {"q1": {"d1": 1, "d2": 0}}


def test_a_first_line_with_a_whole_number_label_is_a_judgment_not_a_header(tmp_path):
    root = _dataset(tmp_path / "ds", "1")
    (root / "qrels" / "test.tsv").write_text("q1\td1\t1.0\n")
    with pytest.raises(ParseError, match=r"test.tsv:1: the first line is a judgment, not a header"):
        load_beir(root)


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ('{"_id": "a"}\n{"_id": ]\n', r"invalid JSON \(Expecting value at column 9\)", 2),
        ('{"_id": "a"}\n\n[1]\n', r"expected a JSON object, found list", 3),
        ('{"_id": "a", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n", r"invalid JSON \(nested too deeply\)", 1),
        ('{"_id": "a"}\n{"_id": "' + "x" * 300 + '"}\n', r"a line longer than 200 bytes", 2),
    ],
)
def test_every_jsonl_consumer_reports_the_same_error_at_the_same_line(tmp_path, monkeypatch, text, message, line):
    if "longer" in message:
        monkeypatch.setenv(ENV_VAR, "200")
    path = tmp_path / "queries.jsonl"
    path.write_text(text)
    for read in (
        lambda: list(read_jsonl(path)),
        lambda: read_beir_queries(path),
        lambda: read_beir_corpus(path),
        lambda: read_queries(path),
        lambda: read_documents(path, {"a"}),
    ):
        with pytest.raises(ParseError, match=rf"queries.jsonl:{line}: {message}"):
            read()


@pytest.mark.parametrize("data", [b'{"_id": "a"}\n{"_id": "caf\xe9"}\n', b'{"_id": "a"}\n{"_id": "b"}\n\xc3'])
def test_a_byte_that_is_not_utf8_is_named_with_its_line_even_at_the_end_of_the_file(tmp_path, data):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(data)
    n = data.count(b"\n") + (not data.endswith(b"\n"))
    with pytest.raises(ParseError, match=rf"corpus.jsonl:{n}: not UTF-8 text"):
        list(read_jsonl(path))


def test_the_report_and_the_feedback_command_take_id_or__id(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n{"_id": "b"}\n{"text": "no id"}\n')
    with pytest.raises(ParseError, match=r"d.jsonl:3: expected a JSON object with an '_id' \(or 'id'\)"):
        read_documents(path, {"a"})


def _private_imports_across_packages() -> list[str]:
    """``file:line name`` of every ``from X import _name`` where X is in another subpackage of the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        own = parts[0] if len(parts) > 1 else None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                anchor = list(parts[:-1])[: len(parts) - node.level]
                target = anchor + (node.module.split(".") if node.module else [])
            elif (node.module or "").startswith("haystack_irmetrics."):
                target = node.module.split(".")[1:]
            else:
                continue
            if not target or target[0] == own or not (PACKAGE / target[0]).is_dir():
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {'.'.join(target)}.{alias.name}")
    return found


def test_no_package_imports_private_names_of_another():
    assert _private_imports_across_packages() == []
