"""The judging page in a real browser: Debian's chromium driven by Playwright (never ``playwright install``), with
real keypresses and no click: judge, skip, undo, a key off the scale, the server killed with kill -9 while the page
is open (the key is refused on the page and nothing is lost), the same command started again on the same port
(the page goes on), the end of the pairs, and the export on SIGTERM. Every request is intercepted: none may leave
127.0.0.1. The document's markup is shown as text (no image is fetched, no script runs). Screenshots at 1,280 px
go to ``tests/artifacts/assess-*.png`` for a reviewer. Without chromium or playwright the module skips."""

from __future__ import annotations

import signal
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from haystack_irmetrics.io.beir_data import read_beir_qrels_tsv
from haystack_irmetrics.report.browser import CHROMIUM_FLAGS, chromium

from .assess_fixtures import HOSTILE, PAIRS, QUERIES, Server, write_dataset

pytest.importorskip("starlette", reason="the assess extra (starlette) is not installed")
pytest.importorskip("uvicorn", reason="the assess extra (uvicorn) is not installed")

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
WIDTH, HEIGHT = 1280, 800


@pytest.fixture(scope="module")
def browser():  # one browser for a module's tests, each in a context of its own
    if chromium() is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install -y chromium; .ci/run installs it where apt works)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=list(CHROMIUM_FLAGS))
        try:
            yield b
        finally:
            b.close()


class Watched:
    """A page at 1,280 px whose every request goes through a route: to 127.0.0.1 it goes on, anywhere else it
    is aborted and listed; console errors, uncaught exceptions and dialogs are listed too."""

    def __init__(self, browser) -> None:
        self.context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
        self.outside: list[str] = []
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def _route(self, route) -> None:
        url = route.request.url
        self.requests.append(url)
        if urlsplit(url).hostname == "127.0.0.1" or url.startswith("data:"):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def press(self, key: str) -> None:
        """A real keypress on the page (nothing focused, nothing clicked), then wait for the server's answer."""
        self.page.keyboard.press(key)
        self.page.wait_for_selector("body[data-busy=false]")

    def text(self, selector: str) -> str:
        return self.page.text_content(selector) or ""

    def pair(self) -> tuple[str, str] | None:
        value = self.page.get_attribute("body", "data-pair")
        return tuple(value.split("\t")) if value else None  # type: ignore[return-value]

    def shot(self, name: str, full_page: bool = True) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"assess-{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        assert path.stat().st_size > 10_000
        return path


def test_judging_by_keyboard_survives_kill_9_and_exports(tmp_path, browser):
    data = write_dataset(tmp_path / "data")
    out = tmp_path / "judged"
    server = Server(data, "-o", str(out), "--assessor", "ann")
    port = urlsplit(server.url).port
    w = Watched(browser)
    try:
        w.page.goto(server.url)
        w.page.wait_for_selector("body[data-ready=true]")
        assert w.pair() == ("q1", "d1") and w.text("#query") == QUERIES["q1"]
        assert w.text("#judged") == "0" and w.text("#budget") == str(len(PAIRS))
        assert w.page.eval_on_selector_all("#text mark", "m => m.map(e => e.textContent)") == ["leak", "tube"]
        assert w.page.eval_on_selector_all("#scale kbd", "k => k.map(e => e.textContent)") == ["0", "1", "2", "3"]
        assert not w.page.is_visible("#prelabel-box")  # no model labels shown unless asked
        # the page fits 1,280 px: nothing wider than the window
        assert w.page.eval_on_selector("body", "b => b.scrollWidth") <= WIDTH
        for selector in ("#query", "#text", "#scale", "#progress-box", "#skip", "#undo"):
            box = w.page.locator(selector).bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, selector
        w.shot("first")

        w.press("3")  # d1: 3
        assert w.pair() == ("q1", "d2") and w.text("#judged") == "1" and w.text("#relevant") == "1"
        w.press("s")  # d2 skipped
        assert w.pair() == ("q1", "d3") and w.text("#skipped") == "1"
        # the hostile document: its markup is text on the page; no image, no script from it
        assert HOSTILE in w.text("#text") and w.text("#title") == "<b>Tube</b> & tyre"
        assert w.page.query_selector_all("#doc img, #doc script, #doc b") == []
        w.shot("hostile")
        w.press("u")  # undo the skip: d2 again
        assert w.pair() == ("q1", "d2") and w.text("#skipped") == "0"
        w.press("9")  # off the scale: said, nothing sent
        assert "the grades are 0 to 3" in w.text("#status") and w.pair() == ("q1", "d2")
        w.press("1")  # d2: 1
        w.press("0")  # d3: 0
        assert w.pair() == ("q2", "d4") and w.text("#judged") == "3"

        server.kill()  # kill -9 with the page open
        w.press("2")
        assert "not saved" in w.text("#status") and w.pair() == ("q2", "d4") and w.text("#judged") == "3"
        w.shot("server-down")
        refused = [e for e in w.errors if "ERR_CONNECTION_REFUSED" in e or "Failed to fetch" in e]
        assert refused and len(refused) == len(w.errors)  # the one failed request, nothing else
        w.errors.clear()

        server = Server(data, "-o", str(out), "--assessor", "ann", port=port)  # the same command, same port
        assert "resuming: 3 judged" in server.lines[0]
        w.press("2")  # the same page goes on: d4: 2
        assert w.text("#status") == "saved" and w.pair() == ("q2", "d5") and w.text("#judged") == "4"
        # a long document without a title: it wraps within the page, the scale stays in view as it scrolls
        assert not w.page.is_visible("#title") and w.page.eval_on_selector("body", "b => b.scrollWidth") <= WIDTH
        w.page.keyboard.press("End")  # the browser's own scrolling key still works
        w.page.wait_for_timeout(300)
        assert w.page.evaluate("window.scrollY") > 0
        w.shot("long", full_page=False)
        for selector in ("#scale", "#query"):  # in the window's coordinates: the query and the scale in view
            box = w.page.locator(selector).bounding_box()
            assert box and box["y"] >= 40 and box["y"] + box["height"] <= HEIGHT, selector
        # keyboard alone: Tab to the grade buttons and Enter presses one
        w.page.keyboard.press("Tab")
        w.page.keyboard.press("Tab")
        assert w.page.evaluate("document.activeElement.dataset.grade") == "1"
        w.press("Enter")  # d5: 1
        assert w.pair() is None and w.page.is_visible("#done") and w.text("#judged") == "5"
        w.shot("done")
    finally:
        status, _, err = server.stop(signal.SIGTERM)
        w.context.close()
    assert status == 0, err
    assert read_beir_qrels_tsv(out / "qrels.tsv") == {"q1": {"d1": 3, "d2": 1, "d3": 0}, "q2": {"d4": 2, "d5": 1}}
    assert w.errors == [] and w.dialogs == []
    assert w.outside == []  # nothing was fetched from outside 127.0.0.1
    assert w.requests and all(urlsplit(u).hostname == "127.0.0.1" for u in w.requests if not u.startswith("data:"))


def test_model_labels_are_shown_only_when_asked(tmp_path, browser):
    import json

    data = write_dataset(tmp_path / "data")
    model = tmp_path / "model.jsonl"
    model.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "label": 2}) + "\n" for q, d in PAIRS))
    server = Server(data, "-o", str(tmp_path / "judged"), "--prelabels", str(model), "--show-prelabels")
    w = Watched(browser)
    try:
        w.page.goto(server.url)
        w.page.wait_for_selector("body[data-ready=true]")
        assert w.page.is_visible("#prelabel-box") and w.text("#prelabel") == "2"
        w.shot("prelabels")
    finally:
        server.stop()
        w.context.close()
    assert w.errors == [] and w.outside == []
