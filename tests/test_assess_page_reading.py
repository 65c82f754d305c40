"""The judging page labels only what the person chose (issue 46.4), in Debian's chromium with real keypresses and
mouse clicks: after a label is saved focus is on the passage, so Space, Enter, the arrows, Page Up/Down, Home and
End only scroll it (a grade button clicked on one pair never labels the next); ids are drawn as written; a lone
surrogate in a query or a passage is drawn as U+FFFD, said once at start, and every answer is still sent.
Screenshots go to ``tests/artifacts/assess-*.png``."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .assess_fixtures import CORPUS, QUERIES, Server, write_dataset, write_pairs
from .test_assess_browser import Watched, browser  # noqa: F401 - the fixture

#: The keys a person reads a passage with; none may label, skip or undo.
READING_KEYS = ("Space", "Enter", "ArrowDown", "PageDown", "End", "ArrowUp", "PageUp", "Home", "Shift+Space")


def api_posts(w: Watched) -> list[str]:
    return [u for u in w.requests if "/api/label" in u or "/api/skip" in u or "/api/undo" in u]


def read_without_labelling(w: Watched) -> None:
    """Press every reading key on the pair shown: nothing is sent, the pair and the counts stay, the passage
    scrolls (the pair shown is the long one)."""
    pair, judged, posts = w.pair(), w.text("#judged"), len(api_posts(w))
    w.page.evaluate("window.scrollTo(0, 0)")
    w.page.keyboard.press("Space")
    w.page.wait_for_timeout(250)  # a label sent would be answered by now
    assert (w.pair(), w.text("#judged"), len(api_posts(w))) == (pair, judged, posts)
    assert w.page.evaluate("window.scrollY") > 0  # Space scrolled the passage
    for key in READING_KEYS:
        w.page.keyboard.press(key)
    w.page.wait_for_timeout(250)
    assert w.page.get_attribute("body", "data-busy") == "false"
    assert (w.pair(), w.text("#judged"), len(api_posts(w))) == (pair, judged, posts)


@contextmanager
def judging(chromium, data: Path, out: Path, *args: str) -> Iterator[Watched]:
    """``irmetrics assess`` judging ``data``'s pairs into ``out`` as ann with ``args``, its page open and ready;
    stopped by SIGTERM at the end (its exit status and stderr then in ``w.stopped``)."""
    server = Server(data, "-o", str(out), "--assessor", "ann", *args)
    w = Watched(chromium)
    try:
        w.page.goto(server.url)
        w.page.wait_for_selector("body[data-ready=true]")
        yield w
    finally:
        status, _, err = server.stop(signal.SIGTERM)
        w.context.close()
        w.stopped = (status, err)


def click(w: Watched, selector: str) -> None:
    """A real mouse click, then wait for the server's answer."""
    w.page.click(selector)
    w.page.wait_for_selector("body[data-busy=false]")


def focused(w: Watched) -> str:
    return w.page.evaluate("document.activeElement.id || document.activeElement.tagName")


def test_a_grade_clicked_on_one_pair_never_labels_the_next(tmp_path, browser):  # noqa: F811
    data = write_dataset(tmp_path / "data")
    write_pairs(data / "pairs.tsv", [("q1", "d1"), ("q2", "d5"), ("q1", "d2"), ("q2", "d4"), ("q1", "d3")])
    out = tmp_path / "judged"
    with judging(browser, data, out, "--order", "file") as w:  # the pairs file's order
        # ids as written: no CSS changes their case (d1 was drawn D1)
        assert w.page.inner_text("#query-id") == "q1" and w.page.inner_text("#doc-id") == "d1"
        click(w, '#scale button[data-grade="2"]')  # d1 is 2
        assert w.pair() == ("q2", "d5") and w.text("#judged") == "1" and focused(w) == "doc"
        read_without_labelling(w)  # the button clicked on d1 does not label d5
        w.shot("focus-after-click", full_page=False)
        w.page.keyboard.press("Tab")  # tabbed to on the pair shown: the 0 button, and Space presses it
        assert w.page.evaluate("document.activeElement.dataset.grade") == "0"
        w.press("Space")
        assert w.pair() == ("q1", "d2") and w.text("#judged") == "2" and focused(w) == "doc"
        click(w, "#skip")  # d2 skipped by the mouse: the skip button does not skip the next
        assert w.pair() == ("q2", "d4") and focused(w) == "doc"
        w.page.keyboard.press("Enter")
        w.page.keyboard.press("Space")
        w.page.wait_for_timeout(250)
        assert w.pair() == ("q2", "d4") and w.text("#skipped") == "1"
        click(w, "#undo")  # back to d2: the undo button does not undo again
        assert w.pair() == ("q1", "d2") and focused(w) == "doc"
        w.page.keyboard.press("Enter")
        w.page.keyboard.press("Space")
        w.page.wait_for_timeout(250)
        assert w.pair() == ("q1", "d2") and w.text("#judged") == "2"
        assert sum("/api/undo" in u for u in w.requests) == 1
        w.press("3")  # a grade key labels from wherever focus is
        assert w.pair() == ("q2", "d4") and w.text("#judged") == "3"
    status, err = w.stopped
    assert status == 0, err
    rows = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    assert [(r["doc_id"], r["label"]) for r in rows] == [("d1", 2), ("d5", 0), ("d2", 3)]
    assert w.errors == [] and w.outside == []


def test_a_lone_surrogate_is_drawn_as_a_replacement_character_and_said_once(tmp_path, browser):  # noqa: F811
    queries = {**QUERIES, "q2": QUERIES["q2"] + " \ud800"}
    corpus = {**CORPUS, "d4": {"title": "Chain \udfff wear", "text": "A stretched chain \udc80 skips under load."}}
    data = write_dataset(tmp_path / "data")
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, **doc}) + "\n" for d, doc in corpus.items()))
    write_pairs(data / "pairs.tsv", [("q1", "d1"), ("q2", "d4"), ("q1", "d2")])
    out = tmp_path / "judged"
    with judging(browser, data, out, "--order", "file") as w:  # the pairs file's order
        w.press("1")  # d1; the answer carries d4, whose texts hold lone surrogates
        assert w.text("#status") == "saved" and w.pair() == ("q2", "d4")
        assert w.text("#query") == QUERIES["q2"] + " \ufffd"
        assert (
            w.text("#title") == "Chain \ufffd wear" and w.text("#text") == "A stretched chain \ufffd skips under load."
        )
        assert w.page.eval_on_selector_all("#text mark", "m => m.map(e => e.textContent)") == ["chain", "skips"]
        w.shot("surrogate", full_page=False)
        w.press("2")
        assert w.text("#status") == "saved" and w.text("#judged") == "2"
        w.page.reload()  # every later state is sent too
        w.page.wait_for_selector("body[data-ready=true]")
        assert w.pair() == ("q1", "d2") and w.text("#judged") == "2" and w.text("#status") == ""
    status, err = w.stopped
    assert status == 0, err
    warned = [line for line in err.splitlines() if line.startswith("irmetrics: warning: ")]
    assert len(warned) == 1 and "lone surrogate" in warned[0] and "U+FFFD" in warned[0], err
    assert "query 'q2'" in warned[0] and "document 'd4'" in warned[0]
    assert "Traceback" not in err and w.errors == [] and w.outside == []
