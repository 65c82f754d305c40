"""What the package prints and writes is safe to read back (issue 39): strict JSON (no bare NaN or Infinity)
from one writer, CSV from one writer that neutralises spreadsheet formulas, markdown tables whose cells the
input cannot break, and a help that lists every subcommand."""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import build_parser, main
from haystack_irmetrics.errors import InvalidLabelError
from haystack_irmetrics.io.tables import FORMULA_STARTS, csv_text, json_text
from tests.conftest import ROOT

PACKAGE = ROOT / "haystack_irmetrics"
DATA = ROOT / "examples" / "data"


def _strict(text: str):
    """``text`` parsed as JSON that has no NaN, Infinity or -Infinity (Python's json would accept them)."""

    def refuse(constant: str):
        raise AssertionError(f"bare {constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path.read_text(encoding="utf-8")


# -- JSON ---------------------------------------------------------------------------------------------------


def test_the_one_json_writer_writes_null_for_every_number_that_is_not_finite():
    value = {
        "nan": float("nan"),
        "inf": float("inf"),
        "numpy": [np.float64("nan"), np.float32(-np.inf), np.float32(0.5), np.int64(3)],
        "nested": ({"x": (1.0, float("-inf"))},),
        "array": np.array([1.0, np.nan]),
    }
    text = json_text(value, indent=2)
    assert _strict(text) == {
        "nan": None,
        "inf": None,
        "numpy": [None, None, 0.5, 3],
        "nested": [{"x": [1.0, None]}],
        "array": [1.0, None],
    }
    assert json_text({"a": 0.1}) == json.dumps({"a": 0.1})  # finite values: json's own text


#: json.dumps outside io/tables.py that writes no output: hashes and fingerprints (their text is never shown),
#: the judge cache's own columns, and the core's public ``EvaluationResult.to_json`` (the core imports nothing of
#: io/; the package's own outputs write ``io.tables.json_text(result.to_dict())``); and, for their owners to move
#: to the one writer, the judge's local server's replies and the judging page's (assess/) files and prints.
NOT_OUTPUTS = {
    "integration/stores/bm25s_store.py": "hashlib.sha256(json.dumps(parameters",
    "beir/pipelines.py": ("text = json.dumps([spec, indexing_spec]", "return json.dumps(store.to_dict()"),
    "beir/runner.py": "hashlib.sha256(json.dumps(list(ds.queries))",
    "beir/cache.py": ("hashlib.sha256(json.dumps(obj", "digest.update(json.dumps(settings"),
    "core/results.py": "return json.dumps(self.to_dict(per_query), indent=indent)",
    "judges/judge.py": "text = json.dumps(settings, sort_keys=True",
    "judges/cache.py": ("(fingerprint, json.dumps(settings", "json.dumps(verdict.tokens)"),
    # a run's contents hashed for the pools' tie-break draw (never written or printed)
    "pooling/runs.py": "h.update(json.dumps([qid, *ranking])",
}


def test_no_json_is_printed_or_written_but_through_the_one_writer():
    found = []
    for name, text in _sources():
        if name == "io/tables.py":
            continue
        for line in text.splitlines():
            if not re.search(r"\bjson\.dumps?\(", line):
                continue
            allowed = NOT_OUTPUTS.get(name, ())
            if name in NOT_OUTPUTS and allowed is None:
                continue
            if not any(part in line for part in ((allowed,) if isinstance(allowed, str) else allowed)):
                found.append(f"{name}: {line.strip()}")
    assert found == [], "write JSON with haystack_irmetrics.io.tables.json_text"


def test_interleave_of_a_log_without_clicks_prints_null_with_its_reason(tmp_path, capsys):
    log = tmp_path / "log.csv"
    rows = ["session,query_id,doc_id,position,click,team,device"]
    for s in range(3):
        rows += [f"s{s},q1,d1,1,0,a,x|y", f"s{s},q1,d2,2,0,b,x|y"]
    log.write_text("\n".join(rows) + "\n")
    assert main(["interleave", str(log), "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    assert {k: out[k] for k in ("wins", "losses", "ties", "impressions")} == {
        "wins": 0,
        "losses": 0,
        "ties": 0,
        "impressions": 3,
    }
    assert out["delta"] is None and out["p_value"] is None and out["ci_low"] is None and out["ci_high"] is None
    assert out["reason"].startswith("no impression has a click")
    assert main(["interleave", str(log), "--segment", "device", "--json"]) == 0
    assert _strict(capsys.readouterr().out)["x|y"]["delta"] is None
    assert main(["interleave", str(log)]) == 0
    table = capsys.readouterr().out
    assert "nan" not in table.lower() and "| all | 3 | 0 | 0 | 0 | — | — | — | — |" in table


@pytest.mark.parametrize("fmt", ["json", "tsv", "markdown"])
def test_a_gain_map_whose_gains_overflow_is_a_typed_error_not_nan(fmt, tmp_path, capsys):
    qrels, run = tmp_path / "q.txt", tmp_path / "r.trec"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 2\n")
    run.write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\n")
    measure = "nDCG(gains={0:0,1:1e308,2:1e308})@10"
    assert main(["evaluate", str(qrels), str(run), "-m", measure, "--format", fmt, "--per-query"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"irmetrics: error: {measure.replace('1e308', '1e+308')}: the gains of the judgments of query 'q1' add up "
        "beyond any float, so its DCG cannot be computed; use smaller gains (NDCG is the same with every gain "
        "divided by one number)"
    ]
    with pytest.raises(InvalidLabelError, match="query 'q1'"):
        evaluate({"q1": {"d1": 1, "d2": 2}}, {"q1": {"d1": 2.0, "d2": 1.0}}, [10], measures=[measure])
    # the same gains divided by one number: the same NDCG, computed
    scaled = evaluate(
        {"q1": {"d1": 1, "d2": 2}}, {"q1": {"d1": 2.0, "d2": 1.0}}, [10], measures=["nDCG(gains={1:1,2:1})"]
    )
    assert scaled.means == {"nDCG(gains={1:1,2:1})@10": 1.0}


# -- CSV ----------------------------------------------------------------------------------------------------

_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _cells(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as f:
        return [cell for row in csv.reader(f) for cell in row]


def _no_formula(path: Path) -> None:
    for cell in _cells(path):
        assert not cell.startswith(FORMULA_STARTS) or _PLAIN_NUMBER.fullmatch(cell), (path.name, cell)


def test_no_csv_is_written_but_through_the_one_writer():
    found = [
        f"{name}: {line.strip()}"
        for name, text in _sources()
        if name != "io/tables.py"
        for line in text.splitlines()
        if re.search(r"\bcsv\.(writer|DictWriter)\(|\.write_csv\(|\.to_csv\(|\.sink_csv\(", line)
    ]
    assert found == [], "write CSV with haystack_irmetrics.io.tables.write_csv or csv_text"


def test_the_one_csv_writer_neutralises_formulas_and_keeps_numbers():
    text = csv_text(
        ["name", "value"],
        [
            ['=HYPERLINK("http://x","y")', -0.25],
            ["@SUM(A1)", "-0.25"],
            ["+1+2", "-1e5"],
            ["\tcmd", float("nan")],
            ["-1+2", None],
        ],
    )
    rows = list(csv.reader(text.splitlines()))
    assert rows == [
        ["name", "value"],
        ['\'=HYPERLINK("http://x","y")', "-0.25"],
        ["'@SUM(A1)", "-0.25"],
        ["'+1+2", "-1e5"],
        ["'\tcmd", ""],
        ["'-1+2", ""],
    ]
    assert text.endswith("\r\n")


def test_a_formula_from_the_input_comes_out_neutralised_in_every_csv_the_cli_writes(tmp_path):
    formula = '=HYPERLINK("http://evil.example","click")'
    quoted = '"' + formula.replace('"', '""') + '"'
    # irmetrics clicks fit --on-error skip: the skipped rows and sessions
    log = tmp_path / "clicks.csv"
    log.write_text(
        "session,query_id,doc_id,position,click\n"
        f"s1,q,a,1,1\ns1,q,b,2,{quoted}\n"  # a malformed click: a skipped row whose value is the formula
        f"{quoted},q,a,1,0\n{quoted},q,b,3,1\n"  # a session whose positions skip: a skipped session
        "s3,q,a,-1,0\n"  # a malformed position: its value, a plain number, stays as it is
        "s4,q,a,1,0\ns4,q,b,2,1\n"
    )
    fit = tmp_path / "fit"
    assert main(["clicks", "fit", str(log), "--model", "ctr", "-o", str(fit), "--on-error", "skip"]) == 0
    rows = list(csv.reader((fit / "skipped_rows.csv").open(newline="", encoding="utf-8")))
    assert rows[1][:4] == ["2", "3", "click", "'" + formula] and rows[2][:4] == ["5", "6", "position", "-1"]
    sessions = list(csv.reader((fit / "skipped_sessions.csv").open(newline="", encoding="utf-8")))
    assert sessions[1][:2] == ["'" + formula, "3 4"]
    # irmetrics feedback --report: the log's query ids, a malformed row's value and a run's name
    feedback = tmp_path / "feedback.csv"
    shutil.copy(DATA / "feedback_log.csv", feedback)
    with feedback.open("a", encoding="utf-8") as f:
        f.write(f"{quoted},q01-d04,1,up,u1,2026-03-01T09:01:00Z,mobile\n")
        f.write(f"q01,q01-d04,{quoted},up,u1,2026-03-01T09:01:00Z,mobile\n")
    run = tmp_path / "@run.trec"
    shutil.copy(DATA / "new.trec", run)
    report = tmp_path / "report"
    args = ["feedback", str(feedback), "--run", str(run), "--on-error", "skip", "--report", str(report)]
    assert main([*args, "--n-resamples", "200"]) == 0
    # irmetrics report --csv: a run's name
    page_run = tmp_path / "=cmd.trec"
    shutil.copy(DATA / "good.trec", page_run)
    exported = tmp_path / "report.csv"
    qrels = ROOT / "haystack_irmetrics" / "datasets" / "sample" / "qrels" / "test.tsv"
    assert (
        main(
            [
                "report",
                "--qrels",
                str(qrels),
                str(page_run),
                str(DATA / "poor.trec"),
                "-o",
                str(tmp_path / "p.html"),
                "--csv",
                str(exported),
            ]
        )
        == 0
    )
    written = sorted([*fit.glob("*.csv"), *report.glob("*.csv"), exported])
    assert {p.name for p in written} >= {"skipped_rows.csv", "skipped_sessions.csv", "per_query.csv", "report.csv"}
    for path in written:
        _no_formula(path)
    cells = {c for path in written for c in _cells(path)}
    assert {"'" + formula, "'@run", "'=cmd"} <= cells
    assert any(c.startswith("-0.") for c in cells)  # a negative number stays a number


# -- markdown -----------------------------------------------------------------------------------------------


def _row_cells(line: str) -> int:
    return len(re.split(r"(?<!\\)\|", line.strip())) - 2


def test_untrusted_text_in_markdown_tables_keeps_each_row_whole(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    rows = []
    for s in range(20):
        device = "a|b\nc" if s % 2 else "desk|top"  # a segment's value: a pipe, a line end
        for r, doc in enumerate("ab"):
            click = int(s % 4 == (1 if doc == "a" else 0))
            team = "a" if doc == "a" else "b"
            rows.append(
                {
                    "session": f"s{s}",
                    "query_id": "q",
                    "doc_id": doc,
                    "position": r + 1,
                    "click": click,
                    "team": team,
                    "device": device,
                }
            )
    log.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["interleave", str(log), "--segment", "device", "--n-resamples", "100"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert len(lines) == 4 and all(_row_cells(line) == 9 for line in lines), lines
    assert any(line.startswith("| a\\|b<br>c |") for line in lines)
    # run names in irmetrics compare's table
    qrels = ROOT / "haystack_irmetrics" / "datasets" / "sample" / "qrels" / "test.tsv"
    a, b = tmp_path / "a|x.trec", tmp_path / "b.trec"
    shutil.copy(DATA / "good.trec", a)
    shutil.copy(DATA / "poor.trec", b)
    assert main(["compare", "--qrels", str(qrels), str(a), str(b), "--format", "markdown", "--no-stats"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert lines and len({_row_cells(line) for line in lines}) == 1, lines


# -- help ---------------------------------------------------------------------------------------------------


def test_irmetrics_help_names_every_subcommand_of_each_command():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in commands._choices_actions}
    for name, command in commands.choices.items():
        for verbs in (a for a in command._actions if isinstance(a, argparse._SubParsersAction)):
            missing = [v for v in verbs.choices if not re.search(rf"\b{re.escape(v)}\b", helps[name])]
            assert missing == [], f"irmetrics --help says nothing of irmetrics {name} {', '.join(missing)}"
