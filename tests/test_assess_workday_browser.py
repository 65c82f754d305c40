"""The judging page for a working day (issue 47.4) in Debian's chromium, with real keypresses: topic by topic with
the topic's description and narrative, the guidelines and the help drawn as text, the history panel (a click or
``b`` opens a pair judged before, a grade key relabels it, Esc goes back), a note typed without labelling and an
unsure mark, the model's suggestion accepted with ``a`` (Space and Enter only read) and its answer on ``m``, the
pace in the top bar; no key acts on the pair while the guidelines or the help cover it; and the time from a key to
the next pair shown with a history of 500 pairs, closed and open (written to ``tests/artifacts/assess-latency.json``,
never asserted). Screenshots go to ``tests/artifacts/assess-*.png``."""

from __future__ import annotations

import json
import re
import sqlite3
import statistics
from pathlib import Path

import pytest

from haystack_irmetrics.assess.store import AssessStore
from haystack_irmetrics.io.beir_data import read_beir_qrels_tsv

from .assess_fixtures import CORPUS, QUERIES, write_dataset, write_pairs
from .test_assess_browser import ARTIFACTS, HEIGHT, WIDTH, Watched, browser  # noqa: F401 - the fixture
from .test_assess_page_reading import judging

pytest.importorskip("starlette", reason="the assess extra (starlette) is not installed")
pytest.importorskip("uvicorn", reason="the assess extra (uvicorn) is not installed")

#: Depth pooling's order, which switches topic on every pair.
INTERLEAVED = [("q1", "d1"), ("q2", "d4"), ("q1", "d2"), ("q2", "d5"), ("q1", "d3")]
NARRATIVE = (
    "A relevant document says how to find a slow leak (water, soap, listening) or how to patch it. "
    "Documents about tyres in general, or about punctures on cars, are not relevant. " * 4
).strip()
GUIDELINES = "# Guidelines\n\n- Judge the **passage**, not the site.\n- <script>alert('x')</script> is text here.\n"
#: Counts a key's time to the next frame drawn after the page shows another pair (``data-pair`` set).
PROBE = """
window.__latency = [];
let pressed = null;
document.addEventListener("keydown", () => { pressed = performance.now(); }, true);
new MutationObserver(() => {
  if (pressed === null) return;
  const t0 = pressed;
  pressed = null;
  requestAnimationFrame(() => window.__latency.push(performance.now() - t0));
}).observe(document.documentElement, { attributes: true, subtree: true, attributeFilter: ["data-pair"] });
"""


#: Whether an element is drawn on top where it stands (its middle's point hits it): nothing covers it.
UNCOVERED = """e => { const r = e.getBoundingClientRect();
  return r.height > 0 && e.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)); }"""


def keyed(w: Watched, key: str) -> None:
    """A key, its answer awaited in XPath: Playwright's CSS engine (``Watched.press``) walks the whole DOM at each
    poll, which with a history of hundreds of rows costs more than the page's own work and would be timed with it."""
    w.page.keyboard.press(key)
    w.page.wait_for_selector("xpath=/html/body[@data-busy='false']")


def workday_dataset(folder: Path) -> Path:
    """The fixtures' dataset with the pairs interleaved, q1's description and narrative (its own fields), q2's
    description in BEIR's metadata, and a guidelines file holding markup."""
    data = write_dataset(folder)
    write_pairs(data / "pairs.tsv", INTERLEAVED)
    rows = [
        {"_id": "q1", "text": QUERIES["q1"], "description": "Fixing a slow leak.", "narrative": NARRATIVE},
        {"_id": "q2", "text": QUERIES["q2"], "metadata": {"description": "Chains that skip under load."}},
    ]
    (data / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (data / "guidelines.md").write_text(GUIDELINES, encoding="utf-8")
    return data


def visible(w: Watched, selector: str) -> bool:
    return w.page.is_visible(selector)


def history(w: Watched) -> list[str]:
    return w.page.eval_on_selector_all("#history-list button", "b => b.map(e => e.innerText.replace(/\\s+/g, ' '))")


def test_topic_by_topic_with_the_narrative_in_view_the_guidelines_and_the_help(tmp_path, browser):  # noqa: F811
    data = workday_dataset(tmp_path / "data")
    out = tmp_path / "judged"
    with judging(browser, data, out, "--guidelines", str(data / "guidelines.md")) as w:
        assert w.pair() == ("q1", "d1")
        assert w.text("#description") == "Fixing a slow leak." and w.text("#narrative") == NARRATIVE
        # the narrative whole, in view with the query as the pair opens: never cut off
        box = w.page.locator("#narrative").bounding_box()
        assert box and box["y"] + box["height"] <= HEIGHT
        assert w.page.eval_on_selector("#narrative", "e => e.scrollHeight <= e.clientHeight + 1")
        w.shot("workday-topic", full_page=False)
        w.press("3")
        assert w.pair() == ("q1", "d2")  # q1 again: the file's q2 waits for q1 to be done
        w.press("1")
        w.press("0")
        assert w.pair() == ("q2", "d4") and w.text("#description") == "Chains that skip under load."
        assert not visible(w, "#narrative") and not visible(w, "#narrative-label")
        w.page.keyboard.press("g")
        assert visible(w, "#guidelines") and w.text("#guidelines-text") == GUIDELINES  # Markdown as text
        assert w.page.query_selector_all("#guidelines script, #guidelines strong, #guidelines li") == []
        w.shot("workday-guidelines", full_page=False)
        w.page.keyboard.press("Escape")
        assert not visible(w, "#guidelines") and w.pair() == ("q2", "d4")
        w.page.keyboard.press("?")
        keys = w.page.eval_on_selector_all("#help kbd", "k => k.map(e => e.textContent)")
        assert {"a", "m", "x", "n", "h", "b", "Esc", "g", "?"} <= set(keys)
        w.shot("workday-help", full_page=False)
        w.page.keyboard.press("?")
        assert not visible(w, "#help")
        w.press("2")
        w.press("2")
        assert w.pair() is None and w.text("#judged") == "5"
    status, err = w.stopped
    assert status == 0, err
    order = [json.loads(x)["doc_id"] for x in (out / "judgments.jsonl").read_text().splitlines()]
    assert order == ["d1", "d2", "d3", "d4", "d5"]
    assert w.errors == [] and w.outside == [] and w.dialogs == []


def test_the_history_reopens_and_relabels_and_a_note_and_a_mark_go_with_the_label(tmp_path, browser):  # noqa: F811
    data = workday_dataset(tmp_path / "data")
    out = tmp_path / "judged"
    with judging(browser, data, out) as w:
        w.press("2")  # d1: 2
        w.page.keyboard.press("x")  # d2 unsure
        assert w.page.get_attribute("#unsure", "aria-pressed") == "true"
        w.page.keyboard.press("n")
        w.page.keyboard.type("3 sentences, 1 on topic")  # digits typed in the note label nothing
        w.page.keyboard.press("Enter")
        assert w.text("#judged") == "1" and w.pair() == ("q1", "d2")
        w.press("1")  # d2: 1, with the note and the mark
        assert w.page.get_attribute("#unsure", "aria-pressed") == "false" and w.page.input_value("#note-input") == ""
        w.press("0")  # d3: 0
        w.press("h")
        assert visible(w, "#history") and history(w) == ["d1 2", "d2 1 ? \u270e", "d3 0"]
        assert w.page.eval_on_selector("body", "b => b.scrollWidth") <= WIDTH
        w.shot("workday-history", full_page=False)
        w.page.click('#history-list button[data-pair="q1\td1"]')  # a click opens d1 again
        w.page.wait_for_selector("body[data-busy=false]")
        assert w.pair() == ("q1", "d1") and w.page.get_attribute("body", "data-reopened") == "true"
        assert "Judged before: labelled 2" in w.text("#reopened")
        w.shot("workday-reopened", full_page=False)
        w.press("0")  # relabelled: back to the pair to judge
        assert w.pair() == ("q2", "d4") and w.page.get_attribute("body", "data-reopened") == "false"
        assert history(w) == ["d2 1 ? \u270e", "d3 0", "d1 0"] and w.text("#judged") == "3"
        w.press("b")  # the pair judged last: d1
        assert w.pair() == ("q1", "d1")
        w.press("b")  # and before it, d3
        assert w.pair() == ("q1", "d3")
        w.press("Escape")
        assert w.pair() == ("q2", "d4")
        w.press("b")
        w.press("b")
        w.press("b")
        assert w.pair() == ("q1", "d2") and w.page.input_value("#note-input") == "3 sentences, 1 on topic"
        assert w.page.get_attribute("#unsure", "aria-pressed") == "true"  # what was kept with its label
        w.page.keyboard.press("x")  # no longer unsure
        w.press("3")
        assert w.pair() == ("q2", "d4") and history(w)[-1] == "d2 3 \u270e"
    status, err = w.stopped
    assert status == 0, err
    rows = {r["doc_id"]: r for r in map(json.loads, (out / "judgments.jsonl").read_text().splitlines())}
    assert {d: (r["label"], r["note"], r["unsure"]) for d, r in rows.items()} == {
        "d1": (0, None, False),
        "d2": (3, "3 sentences, 1 on topic", False),
        "d3": (0, None, False),
    }
    assert read_beir_qrels_tsv(out / "qrels.tsv") == {"q1": {"d1": 0, "d2": 3, "d3": 0}}
    assert "sentences" not in (out / "qrels.tsv").read_text()
    events = sqlite3.connect(out / "assess.sqlite").execute("SELECT COUNT(*) FROM events").fetchone()[0]
    assert events == 5  # three labels and two relabels: every event kept
    assert w.errors == [] and w.outside == []


def drawn(w: Watched) -> list[list]:
    """The history panel as drawn: each query's heading and its rows' text."""
    return w.page.eval_on_selector_all(
        "#history-list h3",
        "hs => hs.map(h => [h.textContent, [...h.nextElementSibling.querySelectorAll('button')]"
        ".map(b => b.innerText.replace(/\\s+/g, ' '))])",
    )


def kept(out: Path) -> list[list]:
    """The history as the store holds it, drawn as the page draws it (read by another connection)."""
    with AssessStore.open(out) as store:
        rows = store.history("ann")
    groups: dict[str, list[str]] = {}
    for q, d, kind, label, note, unsure in rows:
        grade = ("skipped" if kind == "skip" else str(label)) + (" ?" if unsure else "") + (" \u270e" if note else "")
        groups.setdefault(q, []).append(f"{d} {grade}")
    return [[q, rows] for q, rows in groups.items()]


def test_the_open_history_is_kept_up_to_date_key_by_key_as_the_store_holds_it(tmp_path, browser):  # noqa: F811
    data = workday_dataset(tmp_path / "data")
    out = tmp_path / "judged"
    with judging(browser, data, out) as w:
        w.press("h")
        assert drawn(w) == [] and w.text("#history-count") == "0"
        # labels, a skip, undos, relabels that move a row and its query's place, the skipped pair coming back
        for key in ("2", "s", "1", "u", "0", "3", "b", "b", "b", "1", "u", "b", "b", "x", "2", "1", "2", "u", "u"):
            w.press(key)
            assert drawn(w) == kept(out), key
            assert w.text("#history-count") == str(sum(len(rows) for _, rows in kept(out))), key
            listed = {(q, row.split()[0]) for q, rows in kept(out) for row in rows}
            on = w.page.eval_on_selector_all("#history-list button.on", "b => b.map(e => e.dataset.pair.split('\\t'))")
            assert on == ([list(w.pair())] if w.pair() in listed else []), key  # the pair shown, marked
        for doc in ("d1", "d2", "d3"):  # q1's pairs relabelled: its part goes after q2's
            w.page.click(f'#history-list button[data-pair="q1\t{doc}"]')
            w.page.wait_for_selector("body[data-busy=false]")
            w.press("3")
            assert drawn(w) == kept(out), doc
        assert [q for q, _ in drawn(w)] == ["q2", "q1"]
        w.press("u")
        assert drawn(w) == kept(out)  # d3 back to its label before
        w.press("h")
        w.press("3")
        w.press("h")  # opened again: drawn whole
        assert drawn(w) == kept(out)
    status, err = w.stopped
    assert status == 0, err
    assert w.errors == [] and w.outside == []


def test_the_models_suggestion_is_accepted_with_a_and_its_answer_shown_on_m(tmp_path, browser):  # noqa: F811
    data = workday_dataset(tmp_path / "data")
    model = tmp_path / "model.jsonl"
    raw = '{"grade": 2} <b>the passage explains patching</b>'
    model.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "label": 2, "raw": raw}) + "\n"
                             for q, d in INTERLEAVED))  # fmt: skip
    out = tmp_path / "judged"
    with judging(browser, data, out, "--prelabels", str(model), "--show-prelabels") as w:
        assert w.text("#prelabel") == "2" and not visible(w, "#raw")
        assert w.page.get_attribute('#scale button[data-grade="2"]', "class") == "suggested"
        for key in ("Space", "Enter"):  # reading keys never accept
            w.page.keyboard.press(key)
        w.page.wait_for_timeout(250)
        assert w.text("#judged") == "0"
        w.page.keyboard.press("m")
        assert visible(w, "#raw") and w.text("#raw") == raw and w.page.query_selector_all("#raw b") == []
        w.shot("workday-model", full_page=False)
        w.press("a")  # accepted: d1 is 2
        assert w.pair() == ("q1", "d2") and w.text("#judged") == "1" and not visible(w, "#raw")
        w.press("a")
        assert w.text("#spent") == "0 min" and re.fullmatch(r"\d+", w.text("#rate")) and w.text("#left") == "0 min"
    status, err = w.stopped
    assert status == 0, err
    rows = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    assert [(r["doc_id"], r["label"]) for r in rows] == [("d1", 2), ("d2", 2)]
    assert w.errors == [] and w.outside == []


def test_the_time_from_a_key_to_the_next_pair_with_the_history_of_500_pairs_closed_and_open(tmp_path, browser):  # noqa: F811
    data = write_dataset(tmp_path / "data")
    queries = {f"t{i:02d}": f"{QUERIES['q1']} {i}" for i in range(30)}
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    docs = {f"p{j:03d}": CORPUS[f"d{j % 5 + 1}"] for j in range(600)}
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, **doc}) + "\n" for d, doc in docs.items()))
    pairs = [(q, f"p{(i * 20 + j):03d}") for j in range(20) for i, q in enumerate(queries)]  # depth order
    write_pairs(data / "pairs.tsv", pairs)
    out = tmp_path / "judged"
    with judging(browser, data, out, "--order", "file") as w:  # the folder made; then 500 labels as ann's
        pass
    db = sqlite3.connect(out / "assess.sqlite")
    db.executemany(
        "INSERT INTO events (assessor, query_id, doc_id, kind, label, time, seconds) VALUES (?, ?, ?, 'label', ?, ?, ?)",
        [("ann", q, d, i % 4, "2026-01-01T00:00:00.000Z", 20.0) for i, (q, d) in enumerate(pairs[:500])],
    )
    db.commit()
    db.close()
    keys = 50
    latency = {}
    with judging(browser, data, out) as w:
        w.page.evaluate(PROBE)
        for i in range(keys):  # the history closed
            keyed(w, str(i % 4))
        latency["closed"] = w.page.evaluate("window.__latency.splice(0)")
        w.press("h")
        assert len(history(w)) == 500 + keys
        w.page.evaluate("window.__latency.splice(0)")  # the h key's own redraw
        first = w.pair()
        for i in range(keys):  # and open
            keyed(w, str(i % 4))
        latency["open"] = w.page.evaluate("window.__latency")
        assert len(history(w)) == 500 + 2 * keys and w.pair() != first and w.text("#judged") == str(500 + 2 * keys)
        assert w.text("#spent") == "2 h 47 min"  # 500 labels of 20 s, and the 100 just given
        w.shot("workday-history-600", full_page=False)
    status, err = w.stopped
    assert status == 0, err
    figures = {"keys": keys, "history": [500, 500 + 2 * keys]}
    for panel, times in latency.items():
        assert len(times) == keys, panel
        ordered = sorted(times)
        figures[f"history {panel}"] = {
            "median_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[int(0.95 * (keys - 1))], 1),
            "max_ms": round(ordered[-1], 1),
        }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "assess-latency.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(figures)
    assert w.errors == [] and w.outside == []


def test_keys_that_act_on_the_pair_do_nothing_under_the_guidelines_or_the_help(tmp_path, browser):  # noqa: F811
    data = workday_dataset(tmp_path / "data")
    # guidelines longer than the window: the panel at its tallest must leave the status line in view
    (data / "guidelines.md").write_text(GUIDELINES + "\n- Read the passage whole.\n" * 60, encoding="utf-8")
    model = tmp_path / "model.jsonl"
    model.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "label": 2}) + "\n" for q, d in INTERLEAVED))
    out = tmp_path / "judged"
    args = ("--guidelines", str(data / "guidelines.md"), "--prelabels", str(model), "--show-prelabels")
    with judging(browser, data, out, *args) as w:
        w.press("g")
        for key in ("2", "a", "s", "u", "b", "x", "n"):  # the pair is under the panel, unseen: none acts on it
            w.press(key)
            assert w.pair() == ("q1", "d1") and w.text("#judged") == "0" and w.text("#skipped") == "0", key
            assert visible(w, "#guidelines") and w.text("#status") == "close the guidelines (Esc or g) to judge", key
        assert kept(out) == [] and w.page.get_attribute("#unsure", "aria-pressed") == "false"
        assert w.page.evaluate("document.activeElement.id") != "note-input"
        for shown in ("#status", "#scale"):  # the panel over the pair's column only: why a key did nothing, in view
            assert w.page.eval_on_selector(shown, UNCOVERED), shown
        w.shot("guidelines-key", full_page=False)
        w.press("Escape")  # closed: the keys work as before
        assert not visible(w, "#guidelines") and w.text("#status") == ""
        w.press("2")
        assert w.pair() == ("q1", "d2") and kept(out) == [["q1", ["d1 2"]]]
        w.press("?")
        for key in ("1", "a", "s", "u"):
            w.press(key)
            assert w.pair() == ("q1", "d2") and w.text("#judged") == "1" and w.text("#skipped") == "0", key
            assert w.text("#status") == "close the help (Esc or ?) to judge", key
        assert kept(out) == [["q1", ["d1 2"]]]
        w.press("?")  # the panel's own key closes it too
        w.press("u")  # d1's label taken back
        assert not visible(w, "#help") and w.pair() == ("q1", "d1") and kept(out) == []
        w.press("s")
        assert w.pair() == ("q1", "d2") and w.text("#skipped") == "1"
        w.press("a")
        assert w.pair() == ("q1", "d3") and kept(out) == [["q1", ["d1 skipped", "d2 2"]]]
        # a pair opened again from the history: under the guidelines a grade key does not relabel it; Esc closes
        # the guidelines and leaves it open, and a grade key then relabels it
        w.press("h")
        w.press("b")
        assert w.pair() == ("q1", "d2") and w.page.get_attribute("body", "data-reopened") == "true"
        w.press("g")
        w.press("0")
        assert w.pair() == ("q1", "d2") and kept(out) == [["q1", ["d1 skipped", "d2 2"]]]
        w.press("Escape")
        assert w.pair() == ("q1", "d2") and w.page.get_attribute("body", "data-reopened") == "true"
        w.press("0")
        assert w.pair() == ("q1", "d3") and kept(out) == [["q1", ["d1 skipped", "d2 0"]]]
    status, err = w.stopped
    assert status == 0, err
    rows = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    assert [(r["doc_id"], r["label"]) for r in rows] == [("d2", 0)]
    assert w.errors == [] and w.outside == [] and w.dialogs == []
