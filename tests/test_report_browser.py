"""The report page in a real browser: Debian's chromium driven by Playwright (never ``playwright install``).

One page load serves every test (module fixture): the summary's values are evaluate's, sorting and
filtering work, a drill-down's judgments are the qrels', no console error, no request leaves the file,
and a screenshot is written to ``tests/artifacts/report.png`` for a reviewer. Without chromium or the
playwright package the module skips with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.io import read_qrels, read_run
from haystack_irmetrics.report import write_report
from haystack_irmetrics.report.browser import chromium, open_report
from haystack_irmetrics.report.data import label_text
from haystack_irmetrics.report.sources import read_queries

from .report_fixtures import NAMES, QRELS, SAMPLE, sample_runs

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
K, MEASURES = [10, 100], ["NDCG", "Recall", "MRR"]


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    """``(page, console errors, requests, runs)`` after loading the report of the three sample runs."""
    if chromium() is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install -y chromium; .ci/run installs it where apt works)")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    folder = tmp_path_factory.mktemp("browser")
    runs = sample_runs(folder)
    path = write_report(
        runs, folder / "report.html", QRELS, k_values=K, measures=MEASURES, corpus=SAMPLE, n_resamples=2000
    )
    with open_report(path) as opened:
        yield opened.page, opened.errors, opened.requests, runs


def _rows(page) -> list[str]:
    return page.eval_on_selector_all("#pq tbody tr[data-qid]", "rows => rows.map(r => r.dataset.qid)")


def test_summary_values_in_the_browser_are_evaluates(browser_page):
    page, _, _, runs = browser_page
    cells = page.eval_on_selector_all(
        "#means td[data-value]", "cells => cells.map(c => [c.dataset.run, c.dataset.measure, c.dataset.value])"
    )
    qrels = read_qrels(QRELS)
    expected = {n: evaluate(qrels, read_run(runs[n]), K, measures=MEASURES).raw_means for n in NAMES}
    assert len(cells) == len(NAMES) * len(K) * len(MEASURES)
    for run, measure, value in cells:
        assert float(value) == expected[run][measure]


def test_sorting_and_filtering_the_per_query_table(browser_page):
    page, _, _, runs = browser_page
    qrels = read_qrels(QRELS)
    hybrid = evaluate(qrels, read_run(runs["hybrid"]), K, measures=MEASURES).per_query["NDCG@10"]
    page.click("#pq th[data-sort=v2]")  # hybrid's NDCG@10, descending first
    shown = [hybrid[q] for q in _rows(page)]
    assert len(shown) == len(hybrid) and shown == sorted(hybrid.values(), reverse=True)
    page.click("#pq th[data-sort=v2]")  # ascending
    assert [hybrid[q] for q in _rows(page)] == sorted(hybrid.values())
    assert page.get_attribute("#pq th[data-sort=v2]", "aria-sort") == "ascending"
    page.fill("#pq-filter", "Ankle")
    texts = read_queries(SAMPLE / "queries.jsonl")
    assert set(_rows(page)) == {q for q in hybrid if "ankle" in texts[q].lower() or "ankle" in q} != set()
    page.fill("#pq-filter", "")
    assert len(_rows(page)) == len(hybrid)


def test_a_drilldown_shows_the_qrels_judgments_side_by_side(browser_page):
    page, _, _, runs = browser_page
    qid = _rows(page)[0]
    page.click(f'#pq tbody tr[data-qid="{qid}"]')
    box = page.wait_for_selector(f'[data-drilldown="{qid}"]')
    docs = box.eval_on_selector_all(
        "li[data-run]", "els => els.map(e => [e.dataset.run, +e.dataset.rank, e.dataset.doc, e.dataset.judgment])"
    )
    judged = read_qrels(QRELS).data[qid]
    assert {r for r, *_ in docs} == set(NAMES)
    for name in NAMES:
        ranks = [rank for r, rank, *_ in docs if r == name]
        assert ranks == list(range(1, len(ranks) + 1)) and len(ranks) == min(20, len(read_run(runs[name]).data[qid]))
    for _, _, doc, judgment in docs:
        assert judgment == (label_text(judged[doc]) if doc in judged else "unjudged")
    page.hover(f'[data-drilldown="{qid}"] li[data-run="{NAMES[0]}"] >> nth=0')
    first = docs[0][2]
    same = box.eval_on_selector_all("li.same", "els => els.map(e => e.dataset.doc)")
    assert same and set(same) == {first}
    ARTIFACTS.mkdir(exist_ok=True)
    page.evaluate("document.querySelector('#queries').scrollIntoView()")
    page.screenshot(path=str(ARTIFACTS / "report.png"))
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


def test_no_console_error_and_nothing_fetched(browser_page):
    _, errors, requests, _ = browser_page
    assert errors == []
    assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
