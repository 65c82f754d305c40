"""The report's holes: each run's Judged@k and Hole@k (against BEIR's ``evaluate_custom(..., "hole")`` and
pytrec_eval's P@k with every judged document relevant), and, given the folder of ``irmetrics judge --ppi`` (``--judged``), the section that
shows each measure with the human and the filled qrels and its prediction-powered estimate and interval: the
numbers :func:`~haystack_irmetrics.judges.ppi.judged_ppi` returns, and ``ppi_py``'s."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.cli import main
from haystack_irmetrics.io import read_qrels, read_run
from haystack_irmetrics.report import build_report, write_report

from .report_fixtures import NAMES, QRELS, SAMPLE, sample_runs

pytest.importorskip("haystack")

K = [5, 10]
MEASURES = ["NDCG", "MRR", "Recall"]


@pytest.fixture(scope="module")
def judged_case(tmp_path_factory):
    """``(runs, human qrels path, judged folder)``: the three sample runs, the sample qrels with every pool pair
    (top 10 of the runs) of half the queries judged by people (unjudged ones as 0), the holes of the others
    filled by a word-overlap score judge through ``judge_runs(..., ppi=True)``."""
    from haystack import Document, component

    from haystack_irmetrics.io.beir_data import read_beir_corpus, read_beir_queries
    from haystack_irmetrics.io.trec import write_qrels
    from haystack_irmetrics.judges import judge_runs
    from haystack_irmetrics.judges.cache import JudgmentCache
    from haystack_irmetrics.judges.judge import ScoreJudge
    from haystack_irmetrics.pooling import pool_runs

    @component
    class WordOverlap:
        @component.output_types(documents=list[Document])
        def run(self, query: str, documents: list[Document]):
            words = set(query.lower().split())
            return {
                "documents": [
                    Document(
                        id=d.id, content=d.content, score=float(len(words & set((d.content or "").lower().split())))
                    )
                    for d in documents
                ]
            }

    folder = tmp_path_factory.mktemp("judged")
    runs = sample_runs(folder)
    dicts = {n: read_run(p).data for n, p in runs.items()}
    human = {q: dict(d) for q, d in read_qrels(QRELS).data.items()}
    full = set(sorted(human)[::2])
    for q, d in pool_runs(list(dicts.values()), list(dicts), 10).pairs():
        if q in full:
            human[q].setdefault(d, 0)
    qrels = folder / "human.tsv"
    write_qrels(human, qrels, layout="beir")
    judge_runs(
        ScoreJudge(WordOverlap(), cut_points=[1.0, 2.0, 3.0]),
        dicts,
        human,
        read_beir_queries(SAMPLE / "queries.jsonl"),
        read_beir_corpus(SAMPLE / "corpus.jsonl"),
        folder / "out",
        depth=10,
        cache=JudgmentCache(enabled=False),
        ppi=True,
    )
    return runs, qrels, folder / "out"


@pytest.fixture(scope="module")
def judged_page(judged_case):
    runs, qrels, out = judged_case
    data = build_report(list(runs.values()), qrels, k_values=K, measures=MEASURES, judged=out, n_resamples=200)
    page = write_report(data, out.parent / "report.html").read_text(encoding="utf-8")
    return data, page


def _rows(page: str, table: str) -> list[dict[str, str]]:
    body = re.search(rf'<table id="{table}">(.*?)</table>', page, re.S).group(1)
    return [dict(re.findall(r'data-([a-z-]+)="([^"]*)"', tr)) for tr in re.findall(r"<tr ([^>]*data-run[^>]*)>", body)]


def test_the_judged_section_shows_the_numbers_judged_ppi_returns(judged_case, judged_page):
    from haystack_irmetrics.judges.ppi import judged_ppi

    runs, qrels, out = judged_case
    data, page = judged_page
    rows = _rows(page, "judged")
    measures = [f"{m}@{k}" for m in MEASURES for k in K]
    assert len(rows) == len(NAMES) * len(measures)
    human = read_qrels(qrels).data
    for name in NAMES:
        expected = judged_ppi(read_run(runs[name]).data, human, out, measures, "beir")
        assert data.judged[name] == expected
        for row in (r for r in rows if r["run"] == name):
            want = expected[row["measure"]]
            for key in ("human", "filled", "estimate", "low", "high"):
                assert float(row[key]) == want[key], (name, row["measure"], key)
    # Beside the naive value, visibly: the estimate and its interval as printed.
    first = expected["NDCG@10"]
    assert f"[{first['low']:.4f}, {first['high']:.4f}]" in page and "PPI 95% interval" in page


def test_the_judged_intervals_are_ppi_pythons(judged_case, judged_page):
    ppi_py = pytest.importorskip("ppi_py")
    import json

    runs, qrels, out = judged_case
    data, _ = judged_page
    labelled = set(json.loads((out / "ppi.json").read_text())["labelled"])
    human, model = read_qrels(qrels), read_qrels(out / "model_qrels.tsv")
    worst, cases = 0.0, 0
    for name in NAMES:
        run = read_run(runs[name])
        for measure in ("NDCG@10", "MRR@5", "Recall@10"):
            y = evaluate(human, run, None, measures=[measure]).per_query[measure]
            yhat = evaluate(model, run, None, measures=[measure]).per_query[measure]
            lab = [q for q in yhat if q in labelled and q in y]
            unl = [q for q in yhat if q not in labelled]
            args = (np.array([y[q] for q in lab]), np.array([yhat[q] for q in lab]), np.array([yhat[q] for q in unl]))
            low, high = ppi_py.ppi_mean_ci(*args, alpha=0.05)
            est = ppi_py.ppi_mean_pointestimate(*args)
            row = data.judged[name][measure]
            got = (row["estimate"], row["low"], row["high"])
            ref = (float(np.ravel(est)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0]))
            worst = max(worst, *(abs(a - b) for a, b in zip(got, ref)))
            cases += 1
    assert cases == 9 and worst < 1e-12, worst


def test_judged_and_hole_per_run_are_beirs_hole_and_pytrec_evals_judged_precision(judged_case, judged_page):
    import pytrec_eval
    from beir.retrieval.evaluation import EvaluateRetrieval

    runs, qrels, _ = judged_case
    data, page = judged_page
    cells = {(r["run"], r["coverage"]): float(r["value"]) for r in _coverage_cells(page)}
    assert set(cells) == {(n, f"{m}@{k}") for n in NAMES for k in K for m in ("Judged", "Hole")}
    human = read_qrels(qrels).data
    for name in NAMES:
        run = read_run(runs[name]).data
        beir_hole = EvaluateRetrieval.evaluate_custom(human, run, K, "hole")
        for k in K:
            assert cells[name, f"Hole@{k}"] == pytest.approx(beir_hole[f"Hole@{k}"], abs=5e-6)  # BEIR rounds to 5
            assert cells[name, f"Hole@{k}"] == data.coverage[name][f"Hole@{k}"]
        # Judged@k is P@k with every judged document relevant (ir_measures' definition), in trec_eval's order.
        every = {q: {d: 1 for d in docs} for q, docs in human.items()}
        per_query = pytrec_eval.RelevanceEvaluator(every, {f"P.{k}" for k in K}).evaluate(run)
        for k in K:
            ref = np.mean([v[f"P_{k}"] for v in per_query.values()])
            assert cells[name, f"Judged@{k}"] == pytest.approx(ref, abs=1e-12)


def _coverage_cells(page: str) -> list[dict[str, str]]:
    body = re.search(r'<table id="coverage">(.*?)</table>', page, re.S).group(1)
    return [
        dict(re.findall(r'data-([a-z-]+)="([^"]*)"', td)) for td in re.findall(r"<td ([^>]*data-coverage[^>]*)>", body)
    ]


def test_a_report_without_judged_still_counts_the_holes_and_has_no_ppi_section(tmp_path):
    runs = sample_runs(tmp_path)
    page = write_report(runs, tmp_path / "r.html", QRELS, k_values=[10], measures=["NDCG"], n_resamples=100)
    text = page.read_text(encoding="utf-8")
    assert 'data-coverage="Hole@10"' in text and 'id="judged"' not in text


def test_cli_report_judged_writes_the_section_and_a_run_the_judge_never_saw_exits_2(judged_case, tmp_path, capsys):
    runs, qrels, out = judged_case
    page = tmp_path / "r.html"
    argv = ["report", *map(str, runs.values()), "--qrels", str(qrels), "-k", "10", "-m", "NDCG", "--judged", str(out)]
    assert main([*argv, "-o", str(page), "--n-resamples", "100"]) == 0
    assert len(_rows(page.read_text(encoding="utf-8"), "judged")) == len(NAMES)
    other = tmp_path / "other.trec"
    other.write_text(
        "".join(f"{q} Q0 never-judged-{i} {i} {10 - i} x\n" for q in read_qrels(qrels).qids for i in range(3))
    )
    capsys.readouterr()
    assert main(["report", str(other), "--qrels", str(qrels), "-m", "NDCG", "--judged", str(out), "-o", str(page)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run 'other'" in err[0] and "not asked about" in err[0], err
    assert main(["report", str(other), "--qrels", str(qrels), "--judged", str(tmp_path), "-o", str(page)]) == 2
    assert "irmetrics judge ... --ppi" in capsys.readouterr().err


def _brute_force_bounds(qrels, run, k, grade):
    """Per query, the smallest and largest nDCG@k and P@k over every judging of the holes of its top k (each 0
    or ``grade``), by pytrec_eval: one virtual query per judging."""
    import itertools

    import pytrec_eval

    vq, vr = {}, {}
    owner = {}
    for q, docs in run.items():
        if q not in qrels:
            continue
        top = sorted(docs, key=lambda d: (docs[d], d), reverse=True)[:k]
        holes = [d for d in top if d not in qrels[q]]
        for i, labels in enumerate(itertools.product((0, grade), repeat=len(holes))):
            name = f"{q}#{i}"
            vq[name] = {**qrels[q], **dict(zip(holes, labels))}
            vr[name] = docs
            owner[name] = q
    got = pytrec_eval.RelevanceEvaluator(vq, {f"ndcg_cut.{k}", f"P.{k}"}).evaluate(vr)
    out = {}
    for measure, key in ((f"NDCG@{k}", f"ndcg_cut_{k}"), (f"P@{k}", f"P_{k}")):
        per = {}
        for name, values in got.items():
            lo, hi = per.get(owner[name], (np.inf, -np.inf))
            per[owner[name]] = (min(lo, values[key]), max(hi, values[key]))
        out[measure] = (np.mean([v[0] for v in per.values()]), np.mean([v[1] for v in per.values()]))
    return out


def test_bounds_beside_each_mean_are_the_extremes_over_every_judging_of_the_holes(tmp_path):
    runs = sample_runs(tmp_path)
    qrels = read_qrels(QRELS).data
    data = build_report(list(runs.values()), QRELS, k_values=[5], measures=["NDCG", "P"], bounds=2, n_resamples=100)
    page = write_report(data, tmp_path / "r.html").read_text(encoding="utf-8")
    cells = re.findall(
        r'data-run="([^"]+)" data-measure="([^"]+)" data-value="[^"]+">[^<]*(?:<sup[^>]*>[^<]*</sup>)?'
        r' <span class="bounds" data-low="([^"]+)" data-high="([^"]+)"',
        page,
    )
    assert len(cells) == len(NAMES) * 2  # every run has holes in its top 5
    worst = 0.0
    for name in NAMES:
        truth = _brute_force_bounds(qrels, read_run(runs[name]).data, 5, 2)
        for run, measure, low, high in cells:
            if run == name:
                worst = max(worst, abs(float(low) - truth[measure][0]), abs(float(high) - truth[measure][1]))
                assert float(low) <= data.means[run][measure] <= float(high)
    assert worst < 1e-12, worst
    assert "each 0 or 2" in page
    # The exports carry the same bounds: CSV columns and a markdown table.
    from haystack_irmetrics.report import to_csv, to_markdown

    for row in csv.DictReader(io.StringIO(to_csv(data))):
        b = data.bounds.get(row["run"], {}).get(row["measure"])
        assert (row["bounds_low"], row["bounds_high"]) == (("", "") if b is None else tuple(map(repr, b)))
    name = NAMES[0]
    low, high = data.bounds[name]["NDCG@5"]
    assert f"| {name} | NDCG@5 | {data.means[name]['NDCG@5']:.4f} | {low:.4f} | {high:.4f} |" in to_markdown(data)


def test_the_exports_carry_the_ppi_rows_and_each_runs_holes(judged_page):
    from haystack_irmetrics.report import to_csv, to_markdown

    data, _ = judged_page
    for row in csv.DictReader(io.StringIO(to_csv(data))):
        want = data.judged[row["run"]].get(row["measure"])
        if want is not None:
            assert [float(row[k]) for k in ("filled", "ppi_estimate", "ppi_low", "ppi_high")] == [
                want[k] for k in ("filled", "estimate", "low", "high")
            ]
    md = to_markdown(data)
    r = data.judged[NAMES[0]]["NDCG@10"]
    assert f"| {r['human']:.4f} | {r['filled']:.4f} | {r['estimate']:.4f} | [{r['low']:.4f}, {r['high']:.4f}] |" in md
    hole = data.coverage[NAMES[0]]["Hole@10"]
    assert f"| {NAMES[0]} | " in md and f"{hole:.4f}" in md


def test_bounds_are_left_out_where_there_is_no_hole_and_a_bad_grade_exits_2(tmp_path, capsys):
    qrels = tmp_path / "q.tsv"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 a 1 2 x\nq1 Q0 b 2 1 x\nq2 Q0 c 1 1 x\n")
    out = tmp_path / "r.html"
    assert (
        main(["report", str(run), "--qrels", str(qrels), "-k", "2", "-m", "NDCG", "--bounds", "1", "-o", str(out)]) == 0
    )
    assert 'class="bounds"' not in out.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["report", str(run), "--qrels", str(qrels), "--bounds", "0", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "grade" in err[0], err


def test_in_a_browser_the_judged_rows_follow_the_column_checkboxes_and_the_bounds_fit_a_1280_screen(
    judged_case, tmp_path
):
    from concurrent.futures import ThreadPoolExecutor

    from haystack_irmetrics.report.browser import chromium, open_report

    if chromium() is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install -y chromium; .ci/run installs it where apt works)")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    runs, qrels, out = judged_case
    path = write_report(list(runs.values()), tmp_path / "r.html", qrels, judged=out, bounds=1, n_resamples=100)

    def check() -> None:
        with open_report(path, viewport=(1280, 800)) as opened:
            page = opened.page
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            row = '#judged tr[data-run="dense"][data-measure="NDCG@100"]'
            assert page.is_visible('#judged tr[data-run="dense"][data-measure="NDCG@10"]') and not page.is_visible(row)
            page.check('#columns input[data-column="NDCG@100"]')
            assert page.is_visible(row)
            assert page.is_visible('#means td[data-run="dense"][data-measure="NDCG@10"] span.bounds')
            artifacts = Path(__file__).resolve().parent / "artifacts"
            page.screenshot(path=str(artifacts / "report-judged-summary.png"))  # the bounds under the means
            page.evaluate("document.querySelector('#coverage').scrollIntoView()")
            page.screenshot(path=str(artifacts / "report-judged.png"))  # Judged@k, Hole@k and the PPI table
            assert opened.errors == [] and opened.external_requests() == []

    (Path(__file__).resolve().parent / "artifacts").mkdir(exist_ok=True)
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API in a thread of its own, as the browser tests do
        pool.submit(check).result()


@pytest.mark.parametrize("source", ["corpus", "run folder"])
def test_report_judged_without_qrels_is_refused_not_scored_on_the_datasets_qrels(judged_case, tmp_path, capsys, source):
    """The folder was judged against other qrels than the dataset's (here half the sample's pools, the rest 0):
    "human" on the dataset's qrels would be another number under the same name. The report refuses, saying so
    on one line, and scores it with --qrels."""
    import json

    runs, qrels, out = judged_case
    given = [str(p) for p in runs.values()]
    if source == "corpus":
        where = ["--corpus", str(SAMPLE)]
    else:  # an `irmetrics beir --output` folder, whose summary.json names the sample as its dataset
        folder = tmp_path / next(iter(runs))
        folder.mkdir()
        (folder / "run.trec").write_bytes(next(iter(runs.values())).read_bytes())
        (folder / "summary.json").write_text(
            json.dumps({"dataset": "sample", "dataset_path": str(SAMPLE), "split": "test"})
        )
        given[0], where = str(folder), []
    page = tmp_path / "r.html"
    argv = ["report", *given, *where, "-k", "10", "-m", "NDCG", "--judged", str(out), "--n-resamples", "100"]
    assert main([*argv, "-o", str(page)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert (
        line.startswith(f"irmetrics: error: --judged {out} (judged=) without --qrels (qrels=)") and "records no" in line
    )
    assert not page.exists()
    assert main([*argv, "--qrels", str(qrels), "-o", str(page)]) == 0
    # bpref reads the judged non-relevant documents: the human qrels' zeros make it another number.
    human = build_report(given, qrels, measures=["bpref"], judged=out, n_resamples=100).judged
    dataset = build_report(given, QRELS, measures=["bpref"], n_resamples=100).means
    name = next(iter(human))
    assert human[name]["bpref"]["human"] != pytest.approx(dataset[name]["bpref"])  # what it would have shown


@pytest.mark.filterwarnings("always::haystack_irmetrics.errors.SuspiciousInputWarning")
def test_report_judged_reads_the_qrels_the_folder_records_says_so_and_refuses_them_changed(
    judged_case, tmp_path, capsys
):
    """A folder that records its human qrels (irmetrics judge writes their path and SHA-256 in summary.json) is
    scored on them without --qrels, the choice said on one line; the same numbers as with --qrels. Changed or
    gone, they are refused; other qrels given are scored, with a warning."""
    import json
    import shutil

    from haystack_irmetrics.judges.folder import file_record

    runs, qrels, out = judged_case
    folder, human = tmp_path / "judged", tmp_path / "human.tsv"
    shutil.copytree(out, folder)
    shutil.copy(qrels, human)
    summary = json.loads((folder / "summary.json").read_text())
    (folder / "summary.json").write_text(json.dumps({**summary, "qrels": file_record(human)}))
    argv = ["report", *map(str, runs.values()), "--corpus", str(SAMPLE), "-k", "10", "-m", "NDCG", "--judged",
            str(folder), "--n-resamples", "100"]  # fmt: skip
    assert main([*argv, "-o", str(tmp_path / "a.html")]) == 0
    err = capsys.readouterr().err
    assert f"irmetrics: warning: 'human' is scored on the qrels {folder} was judged against" in err
    assert str(human.resolve()) in err
    recorded = build_report(list(map(str, runs.values())), None, measures=["NDCG"], judged=folder, n_resamples=100)
    given = build_report(list(map(str, runs.values())), str(qrels), measures=["NDCG"], judged=folder, n_resamples=100)
    assert recorded.judged == given.judged
    other = tmp_path / "other.tsv"
    other.write_text(Path(QRELS).read_text())
    assert main([*argv, "--qrels", str(other), "-o", str(tmp_path / "b.html")]) == 0
    assert "was judged against the qrels" in capsys.readouterr().err
    human.write_text(human.read_text() + "q99\td1\t1\n")  # changed since the folder was judged
    assert main([*argv, "-o", str(tmp_path / "c.html")]) == 2
    assert "changed since the folder was judged" in capsys.readouterr().err
    human.unlink()
    assert main([*argv, "-o", str(tmp_path / "d.html")]) == 2
    assert "are gone" in capsys.readouterr().err


class _Opens:
    """Counts the files under ``folder`` this process opens while counting (an audit hook: ``open`` events, the
    ``io.open`` of every reader; a hook cannot be removed, so it counts only inside ``with``)."""

    hooked: ClassVar[list] = []

    def __init__(self, folder: Path):
        self.folder, self.counts, self.on = str(folder.resolve()), {}, False
        if not _Opens.hooked:
            import sys

            sys.addaudithook(lambda event, args: [c._event(event, args) for c in _Opens.hooked])
        _Opens.hooked[:] = [self]

    def _event(self, event, args):
        if self.on and event == "open" and isinstance(args[0], str | Path):
            path = str(Path(args[0]).resolve())
            if path.startswith(self.folder):
                name = Path(path).name
                self.counts[name] = self.counts.get(name, 0) + 1

    def __enter__(self):
        self.on = True
        return self.counts

    def __exit__(self, *exc):
        self.on = False


@pytest.mark.parametrize("n_runs", [2, 3])
def test_a_report_opens_each_file_of_the_judged_folder_once_whatever_the_number_of_runs(judged_case, n_runs):
    runs, qrels, out = judged_case
    chosen = list(runs.values())[:n_runs]
    with _Opens(out) as opened:
        data = build_report(chosen, qrels, k_values=K, measures=MEASURES, judged=out, n_resamples=20)
    assert len(data.judged) == n_runs
    names = {"summary.json", "ppi.json", "judgments.jsonl", "model_qrels.tsv", "qrels.tsv"}
    assert opened == dict.fromkeys(names, 1)  # was 8 and 6 times for two runs before one reader


def test_evaluate_judged_opens_each_file_of_the_folder_once_and_gives_intervals_only_where_they_apply(
    judged_case, capsys
):
    runs, qrels, out = judged_case
    argv = ["evaluate", str(qrels), str(next(iter(runs.values()))), "-m", "NDCG@10,Judged@10,GMAP"]
    with _Opens(out) as opened:
        assert main([*argv, "--judged", str(out), "--format", "markdown"]) == 0
    assert set(opened.values()) == {1} and len(opened) == 5
    table = capsys.readouterr().out.split("| measure | human qrels")[1]
    assert "| NDCG@10 |" in table and "Judged@10" not in table and "GMAP" not in table  # the one rule: ppi_measures
