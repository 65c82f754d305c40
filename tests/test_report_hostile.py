"""The report, its exports and the plots with hostile input: markup, ``$``, ``_``, ``|``, formulas and lone
surrogates in names, ids and texts; files that are not UTF-8, nested too deeply or with a line over the
limit; a disk that fills up while the page is written.

The last section is the hostile layer of the command line: each case runs ``python -m
haystack_irmetrics.cli`` in a subprocess and checks the exit status (0, or 2 with one line naming the
file) and that no Python traceback reaches stderr.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from haystack_irmetrics.errors import OutputError, ParseError
from haystack_irmetrics.io.output import write_file, write_text
from haystack_irmetrics.report import build_report, payload, render, to_csv, to_latex, to_markdown, write_report
from haystack_irmetrics.report.html import script_json

ROOT = Path(__file__).resolve().parent.parent
#: Everything that ends or escapes a <script> element's text, and the two JavaScript line ends.
MARKUP = "<!--<script></script>&amp;\u2028\u2029"
QRELS = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 1}}
BM25 = {"q1": {"a": 0.9, "x": 0.8, "b": 0.1}, "q2": {"x": 0.9, "c": 0.3}, "q3": {"y": 1.0}}
DENSE = {"q1": {"b": 0.9, "a": 0.8}, "q2": {"c": 0.9}, "q3": {"d": 0.5, "y": 0.4}}


def _report(names: tuple[str, str] = ("bm25", "dense"), **options):
    options = {"k_values": [1, 10], "measures": ["NDCG", "Recall"], "n_resamples": 100, **options}
    return build_report(dict(zip(names, (BM25, DENSE))), QRELS, **options)


def _script_text(page: str) -> str:
    return re.search(r'<script id="report-data" type="application/json">(.*?)</script>', page, re.S).group(1)


# -- the page's embedded JSON -------------------------------------------------------------------------


def test_embedded_json_holds_no_markup_character_and_reads_back_as_it_was():
    value = {"text": [MARKUP, "a < b > c & d"], MARKUP: [1.5, None]}
    blob = script_json(value)
    assert not set(blob) & set("<>&\u2028\u2029")
    assert json.loads(blob) == value


def test_markup_in_ids_names_and_texts_stays_inside_the_data_script(tmp_path):
    qrels = {f"q{MARKUP}": {f"d{MARKUP}": 1, "e": 0}, "q2": {"e": 1}}
    run = {f"q{MARKUP}": {f"d{MARKUP}": 0.9, "e": 0.1}, "q2": {"e": 1.0}}
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"_id": f"d{MARKUP}", "title": MARKUP, "text": MARKUP}) + "\n", encoding="utf-8")
    data = build_report(
        {f"run{MARKUP}": run, "other": run}, qrels, k_values=[1], measures=["NDCG"], n_resamples=100,
        queries={f"q{MARKUP}": MARKUP}, docs=docs, title=MARKUP,
    )  # fmt: skip
    page = render(data)
    blob = _script_text(page)
    assert "<" not in blob and json.loads(blob) == json.loads(script_json(payload(data)))
    assert json.loads(blob)["text"][0] == MARKUP and json.loads(blob)["titles"][0] == MARKUP
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the data and the code, nothing else


# -- any text: lone surrogates ------------------------------------------------------------------------


def test_a_lone_surrogate_is_written_as_its_backslash_escape_in_the_page_and_every_export(tmp_path):
    data = _report(("bm25\ud800", "dense"), queries={"q1": "tubes \udcff"})
    page = write_report(data, tmp_path / "r.html").read_text(encoding="utf-8")  # strict UTF-8
    assert 'data-run="bm25\\ud800"' in page  # the HTML's text
    blob = json.loads(_script_text(page))
    assert blob["runs"][0] == "bm25\\ud800" and blob["text"][0] == "tubes \\udcff"  # the same text in the data
    for name, export in (("t.csv", to_csv), ("t.md", to_markdown), ("t.tex", to_latex)):
        text = write_text(tmp_path / name, export(data)).read_text(encoding="utf-8")
        assert "bm25\\ud800" in text or "bm25\\textbackslash{}ud800" in text


# -- written whole or not at all ------------------------------------------------------------------------


def test_a_failing_write_raises_an_output_error_naming_the_file_and_leaves_the_old_one(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("the old page", encoding="utf-8")

    def disk_full(f: io.BufferedWriter) -> None:
        f.write(b"half a page")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OutputError, match=rf"cannot write {re.escape(str(target))}: No space left on device"):
        write_file(target, disk_full)
    assert target.read_text(encoding="utf-8") == "the old page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no temporary file left

    def broken(f: io.BufferedWriter) -> None:
        f.write(b"x")
        raise ValueError("a bug in the writer")

    with pytest.raises(ValueError, match="a bug in the writer"):
        write_file(target, broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_an_output_path_that_cannot_be_a_file_is_an_output_error_naming_it(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match=r"cannot write .*file/r\.html"):
        write_report(_report(), tmp_path / "file" / "r.html")
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(OutputError, match=r"folder\.csv"):
        write_text(tmp_path / "folder.csv", "x")


def test_an_output_file_gets_the_permissions_open_gives(tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    path = write_text(tmp_path / "r.md", "x")
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_writing_through_a_symbolic_link_replaces_the_file_it_points_to(tmp_path):
    (tmp_path / "real.html").write_text("old")
    (tmp_path / "link.html").symlink_to(tmp_path / "real.html")
    write_text(tmp_path / "link.html", "new")
    assert (tmp_path / "link.html").is_symlink() and (tmp_path / "real.html").read_text() == "new"


# -- markdown and CSV exports ---------------------------------------------------------------------------


def _cells(line: str) -> list[str]:
    return re.split(r"(?<!\\)\|", line.strip())[1:-1]  # split on unescaped pipes


def test_markdown_export_escapes_pipes_and_line_ends_in_names():
    md = to_markdown(_report(("bm|25", "den\nse")))
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert {len(_cells(r)) for r in rows[:4]} == {5}  # run + 4 measures, header, rule and two runs
    assert {len(_cells(r)) for r in rows[4:10]} == {9}  # the comparisons table: header, rule, 4 measures
    holes = rows[10:]  # each run's Judged@k and Hole@k, names escaped there too
    assert len({len(_cells(r)) for r in holes}) == 1 and len(holes) == 4
    assert "| bm\\|25 (baseline) |" in md and "| den<br>se |" in md and holes[2].startswith("| bm\\|25 |")


def test_markdown_tables_of_evaluate_escape_pipes_and_line_ends_in_query_ids():
    from haystack_irmetrics import evaluate
    from haystack_irmetrics.io.tables import format_result

    qrels, run = {"a|b": {"d": 1}, "c\nd": {"d": 1}}, {"a|b": {"d": 1.0}, "c\nd": {"e": 1.0}}
    table = format_result(evaluate(qrels, run, [1], measures=["P"]), "markdown", per_query=True)
    rows = table.split("\n\n")[1].splitlines()
    assert rows[2:] == ["| a\\|b | 1.00000 |", "| c<br>d | 0.00000 |"]


FORMULAS = ['=HYPERLINK("http://evil.example","click")', "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "\rCR"]


def test_csv_export_defuses_formula_names_and_keeps_numbers_numbers():
    data = build_report(
        {name: (BM25 if i % 2 else DENSE) for i, name in enumerate(FORMULAS)}, QRELS, k_values=[1], measures=["P"],
        n_resamples=100,
    )  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(to_csv(data))))
    assert [r["run"] for r in rows] == ["'" + name for name in FORMULAS]
    assert {r["baseline"] for r in rows} == {"'" + FORMULAS[0]}
    deltas = [float(r["delta"]) for r in rows if r["delta"]]
    assert min(deltas) < 0  # a negative number stays a number, unquoted
    assert all(not r["delta"].startswith("'") for r in rows)


# -- plots: names as typed --------------------------------------------------------------------------------


def _svg_texts(path: Path) -> list[str]:
    return re.findall(r"<!-- (.*?) -->", path.read_text(encoding="utf-8"))  # matplotlib's comment per text


def test_every_plot_draws_names_with_dollars_and_backslashes_as_typed(tmp_path):
    pytest.importorskip("matplotlib")
    from haystack_irmetrics import plots

    name, metric = r"$\foo$ run", r"NDCG $x$"
    runs = {name: BM25, "dense": DENSE}
    drawn = [
        plots.plot_pr_curves(QRELS, runs, tmp_path / "pr.svg"),
        plots.plot_gain_curves(QRELS, runs, tmp_path / "gain.svg"),
        plots.plot_runs_metric_vs_k(QRELS, runs, tmp_path / "k.svg"),
        plots.plot_runs_score_distribution(QRELS, runs, tmp_path / "dist.svg"),
        plots.plot_metric_vs_k({name: {1: 0.5, 10: 0.7}}, tmp_path / "k2.svg", family=metric),
        plots.plot_score_distribution({name: [0.1, 0.5]}, tmp_path / "d2.svg", metric=metric),
        plots.plot_delta_histogram([0.5, 0.25], [0.25, 0.5], tmp_path / "h.svg", metric=metric, names=(name, "$b")),
        plots.plot_sorted_differences({name: [0.5, -0.25]}, tmp_path / "s.svg", metric=metric, baseline="$b$"),
    ]
    for path in drawn:
        assert any(name in t for t in _svg_texts(path)), path.name
    assert any(f"{metric}: {name} - $b" in t for t in _svg_texts(drawn[6]))


def test_names_starting_with_an_underscore_keep_their_legend_entry(tmp_path):
    pytest.importorskip("matplotlib")
    from haystack_irmetrics.plots import plot_metric_vs_k, plot_pr_curves
    from haystack_irmetrics.plots.figure import ZERO_WIDTH_SPACE

    texts = _svg_texts(plot_pr_curves(QRELS, {"_private": BM25, "dense": DENSE}, tmp_path / "pr.svg"))
    assert any(t.startswith(f"{ZERO_WIDTH_SPACE}_private (area ") for t in texts), texts
    texts = _svg_texts(plot_metric_vs_k({"_a": {1: 0.5}, "_b": {1: 0.6}}, tmp_path / "k.svg"))
    assert f"{ZERO_WIDTH_SPACE}_a" in texts and f"{ZERO_WIDTH_SPACE}_b" in texts


def test_a_lone_surrogate_in_a_name_is_drawn_as_its_escape(tmp_path):
    pytest.importorskip("matplotlib")
    from haystack_irmetrics.plots import plot_pr_curves

    texts = _svg_texts(plot_pr_curves(QRELS, {"bm25\ud800": BM25}, tmp_path / "pr.svg"))
    assert any(t.startswith("bm25\\ud800 (area") for t in texts)


# -- the report's readers under the package's limits -----------------------------------------------------


@pytest.mark.parametrize(
    ("option", "name", "content", "message"),
    [
        ("queries", "q.jsonl", b'{"_id": "q1", "text": "ok"}\n{"_id": "q2", "text": "caf\xe9"}\n', r"q.jsonl:2: not UTF-8"),
        ("queries", "q.tsv", b"q1\tok\nq2\tcaf\xe9\n", r"q.tsv:2: not UTF-8"),
        ("docs", "d.jsonl", b'{"_id": "a", "text": "ok"}\n\xff\n', r"d.jsonl:2: not UTF-8"),
        ("queries", "q.jsonl", b'{"_id": "q1", "text": ' + b"[" * 20_000 + b"]" * 20_000 + b"}\n", r"q.jsonl:1: .*nested too deeply"),
        ("queries", "q.jsonl", b'{"_id": "q1", "text": "ok"}\n{"_id": "q2", "text": "' + b"a" * 200_000 + b'"}\n', r"q.jsonl:2: a line longer than 100,000 bytes"),
        ("docs", "d.tsv", b"a\t" + b"b" * 200_000, r"d.tsv:1: a line longer than 100,000 bytes"),
        ("queries", "missing.jsonl", None, r"missing.jsonl: file not found"),
    ],
)  # fmt: skip
def test_a_file_the_report_reads_is_held_to_the_limits_of_every_reader(
    tmp_path, monkeypatch, option, name, content, message
):
    monkeypatch.setenv("IRMETRICS_MAX_LINE_BYTES", "100000")
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ParseError, match=message):
        _report(**{option: path})


def test_a_beir_folders_summary_nested_too_deeply_is_a_parse_error_naming_it(tmp_path):
    folder = tmp_path / "bm25"
    folder.mkdir()
    (folder / "run.trec").write_text("q1 Q0 a 1 1.0 x\n")
    (folder / "summary.json").write_text('{"dataset_path": ' + "[" * 50_000 + "]" * 50_000 + "}")
    with pytest.raises(ParseError, match=r"summary.json: not a JSON summary \(invalid JSON: nested too deeply\)"):
        build_report([folder], QRELS)


def test_a_byte_order_mark_and_windows_line_ends_are_read_as_text(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_bytes(b"\xef\xbb\xbfq1\tbicycle tubes\r\nq2\troses\r\n")
    assert _report(queries=path).query_text == {"q1": "bicycle tubes", "q2": "roses"}


# -- the hostile layer: the command line in a subprocess ---------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    out = {"qrels": folder / "qrels.txt", "bm25": folder / "bm25.trec", "dense": folder / "dense.trec"}
    out["qrels"].write_text("".join(f"{q} 0 {d} {v}\n" for q, docs in QRELS.items() for d, v in docs.items()))
    for name, run in (("bm25", BM25), ("dense", DENSE)):
        lines = [f"{q} Q0 {d} {i} {s} {name}\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items(), 1)]
        out[name].write_text("".join(lines))
    out["math"] = folder / "$\\foo$.trec"  # a file stem matplotlib would read as math
    out["math"].write_bytes(out["dense"].read_bytes())
    out["surrogate"] = folder / "surrogate.jsonl"  # a JSON \ud800 escape: a lone surrogate in Python
    out["surrogate"].write_text('{"_id": "q1", "text": "tubes \\ud800 <!--<script>"}\n')
    out["latin1"] = folder / "latin1.jsonl"
    out["latin1"].write_bytes(b'{"_id": "q1", "text": "caf\xe9"}\n')
    out["deep"] = folder / "deep.jsonl"
    out["deep"].write_text('{"_id": "q1", "text": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    out["long"] = folder / "long.jsonl"  # 3 MB on one line: over the 1 MiB every reader refuses
    out["long"].write_text('{"_id": "q1", "text": "' + "a" * 3_000_000 + '"}\n')
    run_folder = folder / "beir-run"
    run_folder.mkdir()
    (run_folder / "run.trec").write_bytes(out["bm25"].read_bytes())
    (run_folder / "summary.json").write_text('{"dataset_path": ' + "[" * 100_000 + "]" * 100_000 + "}")
    out["folder"] = run_folder
    return out


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("IRMETRICS_MAX_LINE_BYTES", None)
    cmd = [sys.executable, "-m", "haystack_irmetrics.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, **kwargs)


def _checked(proc: subprocess.CompletedProcess, code: int, message: str = "") -> None:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == code, proc.stderr[-3000:]
    if code == 2:
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("irmetrics: error: ") and re.search(message, lines[0]), lines


#: case: (runs, options, exit status, what the error line says)
REPORT_CASES = {
    "surrogate query text": (["{bm25}", "{dense}"], ["--queries", "{surrogate}"], 0, ""),
    "math and underscore names": (["{bm25}", "{dense}"], ["--names", "$\\foo$,_x"], 0, ""),
    "math file stem": (["{bm25}", "{math}"], [], 0, ""),
    "not UTF-8 queries": (["{bm25}"], ["--queries", "{latin1}"], 2, r"latin1.jsonl:1: not UTF-8 text"),
    "deep JSON queries": (["{bm25}"], ["--queries", "{deep}"], 2, r"deep.jsonl:1: .*nested too deeply"),
    "3 MB line": (["{bm25}"], ["--queries", "{long}"], 2, r"long.jsonl:1: a line longer than 1,048,576 bytes"),
    "deep summary.json": (["{folder}"], [], 2, r"summary.json: not a JSON summary"),
    "not UTF-8 documents": (["{bm25}"], ["--docs", "{latin1}"], 2, r"latin1.jsonl:1: not UTF-8 text"),
}


def _filled(args: list[str], files: dict[str, Path]) -> list[str]:
    return [a.format(**{k: str(v) for k, v in files.items()}) for a in args]


@pytest.mark.parametrize("case", list(REPORT_CASES))
def test_cli_report_with_hostile_input_exits_0_or_2_without_a_traceback(files, tmp_path, case):
    runs, options, code, message = REPORT_CASES[case]
    out = tmp_path / "r.html"
    proc = _cli("report", *_filled(runs, files), *_filled(options, files), "--qrels", str(files["qrels"]), "-k", "10",
                "-m", "NDCG", "--n-resamples", "100", "-o", str(out), "--csv", str(tmp_path / "r.csv"))  # fmt: skip
    _checked(proc, code, message)
    if code == 0:
        assert "</html>" in out.read_text(encoding="utf-8")  # whole, and UTF-8
    else:
        assert not out.exists()


@pytest.mark.parametrize(
    "kind,runs",
    [
        ("pr", ["$\\foo$={bm25}", "_x={dense}"]),
        ("gain", ["{math}", "_x={dense}"]),
        ("metric-vs-k", ["$a$ b={bm25}"]),
        ("distribution", ["{math}", "{bm25}"]),
    ],
)
def test_cli_plot_with_hostile_names_exits_0_without_a_traceback(files, tmp_path, kind, runs):
    proc = _cli("plot", kind, str(files["qrels"]), *_filled(runs, files), "-o", str(tmp_path / "p.png"))
    _checked(proc, 0)
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_cli_plot_reads_a_run_whose_path_holds_an_equals_sign(files, tmp_path):
    run = tmp_path / "k=10.trec"
    run.write_bytes(files["bm25"].read_bytes())
    proc = _cli("plot", "pr", str(files["qrels"]), str(run), "-o", str(tmp_path / "p.svg"))
    _checked(proc, 0)
    assert any(t.startswith("k=10 (area") for t in _svg_texts(tmp_path / "p.svg"))  # the path, named by its file


def test_cli_feedback_with_a_math_run_name_writes_its_plots_and_page(files, tmp_path):
    pytest.importorskip("matplotlib")
    from .test_feedback_report import synthetic

    log, paths = synthetic(tmp_path, bad_rows=0)
    proc = _cli("feedback", str(log), "--run", f"$\\foo$={paths['better']}", "--run", f"_x={paths['worse']}",
                "-k", "5", "-m", "NDCG", "--n-resamples", "100", "--report", str(tmp_path / "fb"))  # fmt: skip
    _checked(proc, 0)
    assert list((tmp_path / "fb" / "plots").glob("*.png")) and (tmp_path / "fb" / "report.html").is_file()


def test_a_full_disk_leaves_the_old_page_whole_and_no_temporary_file(files, tmp_path):
    import resource

    out = tmp_path / "r.html"
    out.write_text("the old page", encoding="utf-8")
    limit = 150_000  # bytes a file of the process may grow to: the figures fit, the page does not

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = _cli("report", str(files["bm25"]), str(files["dense"]), "--qrels", str(files["qrels"]),
                "--n-resamples", "100", "-o", str(out), preexec_fn=small_disk)  # fmt: skip
    _checked(proc, 2, rf"cannot write {re.escape(str(out))}: File too large")
    assert out.read_text(encoding="utf-8") == "the old page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_feedback_report_files_defuse_formulas_and_keep_markdown_tables_whole(tmp_path):
    from haystack_irmetrics.feedback import evaluate_feedback

    from .test_feedback_report import synthetic

    log, paths = synthetic(tmp_path, bad_rows=0)
    rows = [
        {"query_id": "=HYPERLINK(1)", "doc_id": "d0_0", "position": 1, "vote": "up", "user_id": "u1", "locale": "en"},
        {"query_id": "q1", "doc_id": "d1_0", "position": "a|b\nc", "vote": "up", "user_id": "u1", "locale": "en"},
    ]
    with log.open("a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    runs = {"=x|y": str(paths["better"])}
    ev = evaluate_feedback(str(log), runs, k_values=[5], measures=["NDCG"], n_resamples=100, on_error="skip")
    written = ev.write_report(tmp_path / "fb", plots=False)
    assert {p.name for p in written} >= {"scores.csv", "per_query.csv", "skipped_rows.csv", "report.md"}
    scores = list(csv.DictReader((tmp_path / "fb" / "scores.csv").open(encoding="utf-8")))
    assert "'=x|y" in {r["system"] for r in scores} and "=x|y" not in {r["system"] for r in scores}
    per_query = list(csv.DictReader((tmp_path / "fb" / "per_query.csv").open(encoding="utf-8")))
    assert "'=HYPERLINK(1)" in {r["query"] for r in per_query}
    assert any(h.startswith("'=x|y|") for h in per_query[0])
    md = (tmp_path / "fb" / "report.md").read_text(encoding="utf-8")
    table = next(line for line in md.splitlines() if line.startswith("| metric |"))
    assert table == "| metric | logged | =x\\|y |"
    skipped = [line for line in md.splitlines() if "a\\|b" in line]
    assert any("a\\|b<br>c" in line and len(_cells(line)) == 5 for line in skipped), skipped
