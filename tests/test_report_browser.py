"""The report page in a real browser: Debian's chromium driven by Playwright (never ``playwright install``).

One page load serves every test (module fixture): the summary's values are evaluate's, sorting and
filtering work, a drill-down's judgments are the qrels', no console error, no request leaves the file,
and a screenshot is written to ``tests/artifacts/report.png`` for a reviewer. Without chromium or the
playwright package the module skips with the reason.
"""

from __future__ import annotations

import json
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


def _need_browser() -> None:
    if chromium() is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install -y chromium; .ci/run installs it where apt works)")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")


def _in_own_thread(check) -> None:
    """Run ``check`` (which opens its own page) in a thread of its own: the module's page keeps Playwright's
    sync API busy in this thread, and a second one cannot start beside it."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        pool.submit(check).result()


#: What ends or escapes a <script> element's text in HTML, and JavaScript's two line ends.
MARKUP = "<!--<script></script>&amp;\u2028\u2029"


def test_a_page_with_markup_in_every_text_renders_its_tables(tmp_path):
    _need_browser()
    qid, doc, name = f"q{MARKUP}", f"d{MARKUP}", f"run{MARKUP}"
    qrels = {qid: {doc: 1, "e": 0}, "q2": {"e": 1}}
    run = {qid: {doc: 0.9, "e": 0.1}, "q2": {"e": 1.0}}
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"_id": doc, "title": MARKUP, "text": MARKUP}) + "\n", encoding="utf-8")
    path = write_report(
        {name: run, "other": {"q2": {"e": 1.0}}}, tmp_path / "r.html", qrels, k_values=[1], measures=["NDCG"],
        n_resamples=100, queries={qid: MARKUP}, docs=docs, title=MARKUP,
    )  # fmt: skip
    # A blank page never draws its table: data-ready never comes, open_report times out.
    _in_own_thread(lambda: _check_markup_page(path, qid, name))


def _check_markup_page(path: Path, qid: str, name: str) -> None:
    with open_report(path, timeout_s=20) as opened:
        page = opened.page
        assert sorted(_rows(page)) == sorted([qid, "q2"])
        assert page.get_attribute('#means td[data-measure="NDCG@1"] >> nth=0', "data-run") == name
        texts = page.eval_on_selector_all("#pq tbody td.text", "tds => tds.map(td => td.textContent)")
        assert MARKUP in texts
        rows = page.locator("#pq tbody tr.row")
        rows.nth([rows.nth(i).get_attribute("data-qid") for i in range(rows.count())].index(qid)).click()
        box = page.wait_for_selector("[data-drilldown]")
        assert box.get_attribute("data-drilldown") == qid
        assert box.eval_on_selector("h3", "h => h.textContent") == f"Query {qid}: {MARKUP}"
        assert box.eval_on_selector_all(".doc .title", "els => els.map(e => e.textContent)") == [MARKUP]
        assert page.title() == MARKUP
        assert opened.errors == []


def test_the_default_summary_fits_a_1280_screen_and_every_column_is_a_click_away(tmp_path):
    _need_browser()
    runs = sample_runs(tmp_path)
    path = write_report(runs, tmp_path / "report.html", QRELS, n_resamples=200)  # default: 6 measures x 6 cutoffs
    _in_own_thread(lambda: _check_default_summary(path))


def _check_default_summary(path: Path) -> None:
    with open_report(path, viewport=(1280, 800)) as opened:
        page = opened.page
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-default-summary.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280  # no sideways scrolling
        shown = page.eval_on_selector_all(
            "#means th[data-measure]:not(.off)", "ths => ths.map(th => th.dataset.measure)"
        )
        assert shown == ["NDCG@10", "MAP@10", "Recall@10", "Recall@100", "P@10", "MRR@10", "R_cap@10"]
        # every value stays in the page, hidden columns included
        assert page.eval_on_selector_all("#means td[data-value]", "tds => tds.length") == len(NAMES) * 36
        cell = '#means td[data-run="dense"][data-measure="NDCG@100"]'
        assert not page.is_visible(cell)
        page.check('#columns input[data-column="NDCG@100"]')
        assert page.is_visible(cell) and page.is_visible('#comparisons tr[data-run="dense"][data-measure="NDCG@100"]')
        page.click("#columns-all")
        assert page.eval_on_selector_all("#means th.off", "ths => ths.length") == 0
        page.click("#columns-default")
        assert not page.is_visible(cell)
        assert page.input_value("#pq-measure") == "3"  # the per-query table opens on NDCG@10
        page.click("#pq tbody tr.row >> nth=0")  # a drill-down lists the values of the columns shown
        measures = "els => els.map(e => e.textContent)"
        assert page.eval_on_selector_all(".qvalues td.name", measures) == shown
        page.check('#columns input[data-column="P@1"]')
        page.click("#pq tbody tr.row >> nth=0")  # closed
        page.click("#pq tbody tr.row >> nth=0")  # opened again
        assert page.eval_on_selector_all(".qvalues td.name", measures) == [*shown[:4], "P@1", *shown[4:]]
        assert opened.errors == []
