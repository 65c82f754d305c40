"""The report without a browser: every number on the page is evaluate's, the statistics are the stats
functions' (Holm over runs × measures), ranked lists and judgments follow the qrels, the exports, the CLI,
the Python inputs (evaluator outputs, EvaluationRunResults, beir folders, feedback) and bad input."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import InvalidArgumentError, IRMetricsError, NoOverlapError
from haystack_irmetrics.io import read_qrels, read_run
from haystack_irmetrics.report import build_report, payload, to_csv, to_latex, to_markdown, write_report
from haystack_irmetrics.report.data import label_text, ranked_lists
from haystack_irmetrics.stats import compare_paired, holm

from .report_fixtures import NAMES, QRELS, SAMPLE, sample_runs

K = [5, 10]
MEASURES = ["NDCG", "Recall", "MRR"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return sample_runs(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def data(runs):
    return build_report(list(runs.values()), QRELS, k_values=K, measures=MEASURES, corpus=SAMPLE, n_resamples=2000)


@pytest.fixture(scope="module")
def page(data, tmp_path_factory):
    return write_report(data, tmp_path_factory.mktemp("page") / "report.html").read_text(encoding="utf-8")


def _embedded(page: str) -> dict:
    blob = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    return json.loads(blob.replace("<\\/", "</"))


def test_every_summary_cell_is_evaluates_unrounded_mean(runs, page):
    cells = re.findall(r'data-run="([^"]+)" data-measure="([^"]+)" data-value="([^"]+)"', page)
    assert len(cells) == len(NAMES) * len(MEASURES) * len(K)
    qrels = read_qrels(QRELS)
    expected = {n: evaluate(qrels, read_run(runs[n]), K, measures=MEASURES).raw_means for n in NAMES}
    for run, measure, value in cells:
        assert float(value) == expected[run][measure], (run, measure)
    assert {m for _, m, _ in cells} == {f"{f}@{k}" for f in MEASURES for k in K}  # BEIR's names


def test_per_query_values_are_evaluates(runs, page):
    blob = _embedded(page)
    qrels = read_qrels(QRELS)
    for r, name in enumerate(blob["runs"]):
        ev = evaluate(qrels, read_run(runs[name]), K, measures=MEASURES)
        for m, measure in enumerate(blob["measures"]):
            shown = {q: v for q, v in zip(blob["qids"], blob["values"][r][m]) if v is not None}
            assert shown == dict(ev.per_query[measure].items())


def test_ranked_lists_are_trec_order_and_judgments_are_the_qrels(runs, data, page):
    blob = _embedded(page)
    qrels = read_qrels(QRELS).data
    for r, name in enumerate(blob["runs"]):
        run = read_run(runs[name]).data
        for q, flat in zip(blob["qids"], blob["lists"][r]):
            docs = [blob["docs"][i] for i in flat[::2]]
            expected = sorted(run[q], key=lambda d: (np.float32(run[q][d]), d), reverse=True)[: data.depth]
            assert docs == expected
            for d, c in zip(docs, flat[1::2]):
                assert (blob["labels"][c] if c >= 0 else "unjudged") == (
                    label_text(qrels[q][d]) if d in qrels[q] else "unjudged"
                )
    for q, flat in zip(blob["qids"], blob["missed"]):
        missed = {blob["docs"][i] for i in flat[::2]}
        relevant = {d for d, label in qrels[q].items() if label >= 1}
        retrieved = set().union(*(read_run(runs[n]).data[q] for n in NAMES))
        assert missed == relevant - retrieved


def test_titles_and_snippets_come_from_the_corpus(page):
    blob = _embedded(page)
    corpus = {}
    for line in (SAMPLE / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        corpus[obj["_id"]] = obj
    assert blob["text"][0] and len(blob["titles"]) == len(blob["docs"])
    for d, title, snippet in zip(blob["docs"], blob["titles"], blob["snippets"]):
        assert title == corpus[d]["title"] and " ".join(corpus[d]["text"].split()).startswith(snippet.rstrip("…"))


def test_significance_is_the_stats_functions_with_holm_over_runs_and_measures(data):
    found, order = [], []
    for name in data.others:
        a = {m: np.array([data.values[name][m][q] for q in data.qids]) for m in data.measures}
        b = {m: np.array([data.values[data.baseline][m][q] for q in data.qids]) for m in data.measures}
        for c in compare_paired(a, b, n_resamples=2000, seed=0):
            found.append(c)
            order.append((name, c.metric))
    p_t = holm([c.p_t for c in found])
    p_r = holm([c.p_randomization for c in found])
    for (name, m), c, t, r in zip(order, found, p_t, p_r):
        got = data.comparisons[name][m]
        assert (got.delta, got.ci_low, got.ci_high, got.p_t, got.p_randomization) == (
            c.delta,
            c.ci_low,
            c.ci_high,
            c.p_t,
            c.p_randomization,
        )
        assert (got.p_t_holm, got.p_randomization_holm) == (t, r)
        d = np.array([data.values[name][m][q] - data.values[data.baseline][m][q] for q in data.qids])
        assert data.wtl[name][m] == (int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))


def test_the_best_of_each_column_is_marked(data, page):
    for m in data.measures:
        best = max(data.means[n][m] for n in data.names)
        cell = re.search(rf'<td class="best" data-run="([^"]+)" data-measure="{re.escape(m)}"', page)
        assert cell and data.means[cell.group(1)][m] == best


def test_significance_marks_say_the_direction(runs, tmp_path):
    # the best run as the baseline: the others' significant differences are losses, marked "worse"
    data = build_report(list(runs.values()), QRELS, k_values=K, measures=MEASURES, baseline="hybrid", n_resamples=500)
    html = write_report(data, tmp_path / "r.html").read_text(encoding="utf-8")
    marks = re.findall(r'<td [^>]*data-run="([^"]+)" data-measure="([^"]+)"[^>]*>[^<]*<sup class="sig (\w+)"', html)
    assert marks
    for run, measure, side in marks:
        assert side == ("better" if data.comparisons[run][measure].delta > 0 else "worse")
    assert {side for *_, side in marks} == {"worse"}


def test_the_page_fetches_nothing_and_draws_the_curves(data, page):
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "<script src" not in page and "@import" not in page
    figures = re.findall(r'<img alt="([^"]+)" src="data:image/svg\+xml;base64,', page)
    assert [f for f in figures if f.endswith("against k")] == ["NDCG against k", "Recall against k", "MRR against k"]
    assert "Interpolated precision-recall" in figures
    # one figure of per-query differences per measure, every run against the baseline in it
    assert [f for f in figures if "differences" in f] == [f"{m}: per-query differences to bm25" for m in data.measures]


def test_latex_is_booktabs_with_ranx_superscripts(data):
    tex = to_latex(data)
    assert all(cmd in tex for cmd in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{c|l|cccccc}"))
    lines = {line.split(" & ")[1]: line for line in tex.splitlines() if line[:4] in ("a & ", "b & ", "c & ")}
    assert set(lines) == set(NAMES)
    for m_index, m in enumerate(data.measures):
        c = data.comparisons["hybrid"][m]
        cell = lines["hybrid"].removesuffix(r" \\").split(" & ")[2 + m_index]
        assert cell.endswith("$^{a}$") == (c.p_randomization_holm < 0.05 and c.delta > 0)
        assert cell.startswith(r"\textbf{") == (data.means["hybrid"][m] == data.best(m))


def test_csv_and_markdown_carry_the_same_numbers(data):
    rows = list(csv.DictReader(io.StringIO(to_csv(data))))
    assert len(rows) == len(data.names) * len(data.measures)
    for row in rows:
        assert float(row["mean"]) == data.means[row["run"]][row["measure"]]
        if row["run"] != data.baseline:
            c = data.comparisons[row["run"]][row["measure"]]
            assert float(row["p_randomization_holm"]) == c.p_randomization_holm
            assert (int(row["wins"]), int(row["ties"]), int(row["losses"])) == data.wtl[row["run"]][row["measure"]]
    md = to_markdown(data)
    assert md.startswith("| run | NDCG@5 | NDCG@10 |") and "| bm25 (baseline) |" in md
    assert f"| hybrid | NDCG@10 | {data.comparisons['hybrid']['NDCG@10'].delta:+.4f} |" in md


def test_cli_writes_the_page_and_the_exports(runs, tmp_path, capsys):
    out = tmp_path / "r.html"
    args = ["report", *map(str, runs.values()), "--qrels", str(QRELS), "-k", "10", "-m", "NDCG", "--names", "a,b,c"]
    args += ["--baseline", "b", "--queries", str(SAMPLE / "queries.jsonl"), "--depth", "5", "--n-resamples", "500"]
    args += ["-o", str(out), "--latex", str(tmp_path / "t.tex"), "--csv", str(tmp_path / "t.csv")]
    assert main([*args, "--markdown", str(tmp_path / "t.md")]) == 0
    blob = _embedded(out.read_text(encoding="utf-8"))
    assert blob["runs"] == ["a", "b", "c"] and blob["baseline"] == 1 and blob["measures"] == ["NDCG@10"]
    assert max(len(x) for x in blob["lists"][0]) == 2 * 5 and blob["titles"] == []
    assert (tmp_path / "t.tex").read_text().count(r"\toprule") == 1
    assert (tmp_path / "t.md").read_text().startswith("| run | NDCG@10 |")
    assert "report: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--baseline", "nope"], "baseline 'nope' is not one of the runs ['bm25', 'dense']"),
        (["--names", "a,a"], "two runs are named 'a'"),
        (["--names", "a"], "1 names for 2 runs"),
        (["--depth", "0"], "--depth must be a whole number >= 1"),
    ],
)
def test_cli_bad_input_exits_2_naming_it(runs, tmp_path, capsys, extra, message):
    args = ["report", str(runs["bm25"]), str(runs["dense"]), "--qrels", str(QRELS), "-o", str(tmp_path / "r.html")]
    assert main([*args, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irmetrics: error: ") and message in err and "Traceback" not in err


def test_a_run_sharing_no_query_with_the_qrels_is_named(runs, tmp_path):
    other = tmp_path / "other.qrels"
    other.write_text("zz 0 doc1 1\n")
    with pytest.raises(NoOverlapError, match="run 'dense'"):
        build_report({"dense": runs["dense"]}, other)
    with pytest.raises(InvalidArgumentError, match="no qrels"):
        build_report([runs["dense"]])
    with pytest.raises(InvalidArgumentError, match="is a folder"):
        write_report([runs["dense"]], tmp_path, QRELS)


def test_a_beir_output_folder_brings_its_qrels_queries_and_corpus(runs, tmp_path):
    folder = tmp_path / "bm25-run"
    folder.mkdir()
    (folder / "run.trec").write_bytes(runs["bm25"].read_bytes())
    (folder / "summary.json").write_text(
        json.dumps({"dataset": "sample", "dataset_path": str(SAMPLE), "split": "test"})
    )
    data = build_report([folder, runs["dense"]], k_values=[10], measures=["NDCG"], n_resamples=200)
    assert data.names == ["bm25-run", "dense"] and data.query_text["q01"] and data.documents
    (tmp_path / "suite").mkdir()  # a suite: OUTPUT/NAME/run.trec, its one dataset taken
    folder.rename(tmp_path / "suite" / "sample")
    suite = build_report([tmp_path / "suite", runs["dense"]], k_values=[10], measures=["NDCG"], n_resamples=200)
    assert suite.names == ["suite", "dense"] and suite.means["suite"] == data.means["bm25-run"]
    (tmp_path / "suite" / "other").mkdir()
    (tmp_path / "suite" / "other" / "run.trec").write_bytes(runs["dense"].read_bytes())
    with pytest.raises(InvalidArgumentError, match="holds the runs of 2 datasets"):
        build_report([tmp_path / "suite"], QRELS)
    qrels = read_qrels(QRELS)
    assert (
        data.means["bm25-run"]["NDCG@10"]
        == evaluate(qrels, read_run(runs["bm25"]), [10], measures=["NDCG"]).raw_means["NDCG@10"]
    )


def test_runs_named_alike_take_as_many_parent_folders_as_tell_them_apart(runs, tmp_path):
    """`irmetrics report runs/bm25/sample runs/dense/sample` labels them as `irmetrics compare` does."""
    for system in ("bm25", "dense"):
        folder = tmp_path / "runs" / system / "sample"
        folder.mkdir(parents=True)
        (folder / "run.trec").write_bytes(runs[system].read_bytes())
    bm25, dense = tmp_path / "runs" / "bm25" / "sample", tmp_path / "runs" / "dense" / "sample"
    out = tmp_path / "r.html"
    assert main(["report", str(bm25), str(dense), "--qrels", str(QRELS), "-k", "10", "-m", "NDCG", "-o", str(out)]) == 0
    assert _embedded(out.read_text(encoding="utf-8"))["runs"] == ["bm25/sample", "dense/sample"]
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "bm25.trec").write_bytes(runs["bm25"].read_bytes())
    mixed = build_report([runs["bm25"], tmp_path / "x" / "bm25.trec", runs["dense"]], QRELS, k_values=[10])
    assert mixed.names == [f"{runs['bm25'].parent.name}/bm25", "x/bm25", "dense"]
    with pytest.raises(InvalidArgumentError, match="two runs are named 'sample'"):  # one folder twice
        build_report([bm25, bm25], QRELS, k_values=[10])


def test_evaluator_outputs_and_evaluation_run_results(tmp_path):
    from haystack import Document

    from haystack_irmetrics.components import IRMetricsEvaluator, to_evaluation_run_result

    gold = [[Document(id="d1"), Document(id="d2")], [Document(id="d3")], [Document(id="d4")]]
    a = [[Document(id="d1"), Document(id="x")], [Document(id="d3")], [Document(id="y")]]
    b = [[Document(id="x"), Document(id="d2")], [Document(id="z")], [Document(id="d4")]]
    ev = IRMetricsEvaluator(metrics=["NDCG", "Recall"], k_values=[1, 2])
    out_a, out_b = ev.run(gold, a, query_ids=["q1", "q2", "q3"]), ev.run(gold, b, query_ids=["q1", "q2", "q3"])
    for runs in (
        {"a": out_a, "b": out_b},
        [to_evaluation_run_result(out_a, "a"), to_evaluation_run_result(out_b, "b")],
    ):
        path = write_report(runs, tmp_path / "e.html", n_resamples=100)
        page = path.read_text(encoding="utf-8")
        cells = re.findall(r'data-run="([^"]+)" data-measure="([^"]+)" data-value="([^"]+)"', page)
        expected = {"a": out_a["raw_means"], "b": out_b["raw_means"]}
        assert {(r, m): float(v) for r, m, v in cells} == {(r, m): v for r in "ab" for m, v in expected[r].items()}
        assert _embedded(page)["lists"] == [None, None] and "no ranked list" in page


def test_feedback_report_writes_the_page_of_the_logged_rankings_and_the_new_systems(tmp_path, capsys):
    from haystack_irmetrics.feedback import evaluate_feedback

    from .test_feedback_report import synthetic

    log, paths = synthetic(tmp_path, bad_rows=0)
    args = ["feedback", str(log), "--run", str(paths["better"]), "-k", "1,5", "-m", "NDCG,P", "--n-resamples", "200"]
    assert main([*args, "--report", str(tmp_path / "fb"), "--no-plots"]) == 0
    page = (tmp_path / "fb" / "report.html").read_text(encoding="utf-8")
    cells = {
        (r, m): float(v)
        for r, m, v in re.findall(r'data-run="([^"]+)" data-measure="([^"]+)" data-value="([^"]+)"', page)
    }
    ev = evaluate_feedback(
        str(log), {"better": str(paths["better"])}, k_values=[1, 5], measures=["NDCG", "P"], n_resamples=200
    )
    for system, means in ev.means().items():
        for m, v in means.items():
            assert cells[system, m] == pytest.approx(v, rel=0, abs=1e-15)
    blob = _embedded(page)
    assert blob["runs"] == ["logged", "better"] and blob["baseline"] == 0 and blob["text"]


def test_ranked_lists_of_dict_and_columnar_runs_agree(runs):
    columnar = read_run(runs["dense"])
    qids = list(read_qrels(QRELS).qids)
    from haystack_irmetrics import Run

    as_dict = Run.from_dict(columnar.data)
    for depth in (1, 7, 40):
        assert ranked_lists(columnar, qids, depth, True) == ranked_lists(as_dict, qids, depth, True)


def test_importing_the_report_loads_neither_matplotlib_nor_scipy():
    code = (
        "import sys, haystack_irmetrics.report; print(sorted(m for m in ('matplotlib', 'scipy') if m in sys.modules))"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
    )


def test_every_report_error_is_a_typed_error(runs):
    with pytest.raises(IRMetricsError):
        build_report([runs["bm25"]], QRELS, depth=0)
    with pytest.raises(IRMetricsError):
        build_report({"a": runs["bm25"]}, QRELS, names=["b"])
    assert payload(build_report([runs["bm25"]], QRELS, k_values=[1], measures=["P"]))["lists"][0]


def test_only_the_cli_imports_the_report():
    from .test_architecture import MODULES, _imports

    for name in MODULES:
        if name.startswith(("haystack_irmetrics.cli", "haystack_irmetrics.report")):
            continue
        for target, line in _imports(name):
            assert not target.startswith("haystack_irmetrics.report"), f"{name} line {line} imports {target}"


def test_measures_without_a_cutoff_levels_and_geometric_means(runs):
    from haystack_irmetrics.report.html import render

    measures = ["Rprec", "iP@0.5", "nDCG(gains={0:0,1:1,2:3})@10", "GMAP", "Hole@10"]
    data = build_report([runs["bm25"], runs["dense"]], QRELS, k_values=None, measures=measures, n_resamples=200)
    assert data.measures == measures and data.log_scale == {"GMAP"}
    page = render(data)
    assert re.findall(r'<img alt="([^"]+) against k"', page) == ["nDCG(gains={0:0,1:1,2:3})", "Hole"]
    qrels = read_qrels(QRELS)
    expected = evaluate(qrels, read_run(runs["dense"]), None, measures=measures).raw_means
    cells = re.findall(r'data-run="dense" data-measure="([^"]+)" data-value="([^"]+)"', page)
    assert {m: float(v) for m, v in cells} == expected


def test_the_default_summary_shows_each_measure_at_10_and_recall_at_100_and_hides_the_rest(runs):
    from haystack_irmetrics.report.html import MAX_SUMMARY_COLUMNS, render, summary_columns

    defaults = [f"{f}@{k}" for f in ("NDCG", "MAP", "Recall", "P", "MRR", "R_cap") for k in (1, 3, 5, 10, 100, 1000)]
    assert summary_columns(defaults) == ["NDCG@10", "MAP@10", "Recall@10", "Recall@100", "P@10", "MRR@10", "R_cap@10"]
    assert summary_columns(["NDCG@5", "NDCG@20", "P@1", "P@100", "Rprec"] + [f"MAP@{k}" for k in (1, 2, 3, 4, 5)]) == [
        "NDCG@5", "P@1", "Rprec", "MAP@5",  # the cutoff nearest 10 (the smaller of two as near), no-cutoff measures
    ]  # fmt: skip
    assert summary_columns(["NDCG@10", "P@10"]) == ["NDCG@10", "P@10"]  # few enough: all of them
    assert len(summary_columns([f"P@{k}" for k in range(1, 40)] + [f"X{i}" for i in range(12)])) == MAX_SUMMARY_COLUMNS
    page = render(build_report([runs["bm25"], runs["dense"]], QRELS, n_resamples=100))
    hidden = re.findall(r'<th class="m off" data-measure="([^"]+)"', page)
    assert len(hidden) == 36 - 7 and "NDCG@10" not in hidden  # off by default, still in the page
    assert len(re.findall(r'<input type="checkbox" data-column="', page)) == 36
    assert _embedded(page)["start"] == 3  # the per-query table opens on NDCG@10


def test_the_feedback_page_takes_the_evaluations_own_scores_and_evaluates_again_only_when_told_otherwise(
    tmp_path, monkeypatch
):
    from haystack_irmetrics.feedback import evaluate_feedback
    from haystack_irmetrics.report import data as data_module
    from haystack_irmetrics.report import feedback_report

    from .test_feedback_report import synthetic

    log, paths = synthetic(tmp_path, bad_rows=0)
    runs = {"better": read_run(paths["better"])}
    ev = evaluate_feedback(str(log), runs, k_values=[1, 5], measures=["NDCG", "P"], n_resamples=200)
    evaluated = []
    original = data_module.Evaluation  # each run's measures are read from one Evaluation of it
    monkeypatch.setattr(data_module, "Evaluation", lambda *a, **k: evaluated.append(1) or original(*a, **k))
    first = feedback_report(ev, runs, tmp_path / "a.html").read_text(encoding="utf-8")
    assert evaluated == []
    again = feedback_report(ev, runs, tmp_path / "b.html", measures=ev.settings["measures"])
    assert len(evaluated) == 2  # a scoring option given: both systems evaluated again, to the same numbers

    def cells(page):
        return re.findall(r'data-run="([^"]+)" data-measure="([^"]+)" data-value="([^"]+)"', page)

    assert cells(first) == cells(again.read_text(encoding="utf-8")) and cells(first)


def test_build_report_returns_a_frozen_value():
    import dataclasses

    from haystack_irmetrics.report import build_report

    data = build_report({"a": {"q1": {"d1": 1.0}}}, {"q1": {"d1": 1}}, k_values=[1], measures=["P"], n_resamples=100)
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.wtl = {}


def test_build_report_takes_its_settings_and_the_presets_overrides_and_refuses_any_other_keyword():
    from haystack_irmetrics.report import ReportSettings, build_report

    runs = {"a": {"q1": {"d1": 1.0, "d2": 0.5}}, "b": {"q1": {"d2": 1.0, "d1": 0.5}}}
    qrels = {"q1": {"d1": 1, "d2": 1}}
    data = build_report(runs, qrels, k_values=[1], measures=["P"], ties="stable", significance=False)
    assert data.preset.policy("P").ties == "stable" and data.measures == ["P@1"]
    with pytest.raises(TypeError, match=r"^build_report\(\) got an unexpected keyword argument 'tie'$"):
        build_report(runs, qrels, tie="stable")  # never handed to the preset, which would name itself
    with pytest.raises(InvalidArgumentError, match="depth must be a whole number >= 1, got 0"):
        ReportSettings(depth=0)  # the settings check their values when built
