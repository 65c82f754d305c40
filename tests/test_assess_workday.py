"""The judging page for a working day (issue 47.4), without a browser: pairs topic by topic (``--order file``
keeps the file's), the topic's description and narrative (a query's own fields or BEIR's ``metadata``), the
guidelines, the history (every event kept, the last counts in the export and the agreement), a relabel, a note and
an unsure mark per label (columns of judgments.jsonl, never of qrels.tsv), the model's raw answer, the pace, a
store made before these existed, and bad input (one line and exit 2 from the command; a 400 from the server)."""

from __future__ import annotations

import json
import sqlite3
from functools import partial

import pytest

from haystack_irmetrics.assess.export import agreement, export
from haystack_irmetrics.assess.job import model_answers, read_guidelines, topic_fields
from haystack_irmetrics.assess.scale import default_definitions
from haystack_irmetrics.assess.session import JudgingSession, PageOptions
from haystack_irmetrics.assess.store import IDLE_CAP, MAX_NOTE, STORE_FILE, AssessStore
from haystack_irmetrics.errors import AssessError, ParseError
from haystack_irmetrics.io.beir_data import read_beir_qrels_tsv

from .assess_fixtures import CORPUS, QUERIES, cli, write_dataset, write_pairs

#: Depth pooling's order: the queries take turns, so the file switches topic on every pair.
INTERLEAVED = [("q1", "d1"), ("q2", "d4"), ("q1", "d2"), ("q2", "d5"), ("q1", "d3")]


def made(tmp_path, pairs=INTERLEAVED, **kwargs) -> tuple[AssessStore, JudgingSession]:
    store = AssessStore.create(tmp_path / "judged", max_grade=3)
    store.add_pairs([(q, d, 1.0) for q, d in pairs])
    return store, JudgingSession(store, QUERIES, CORPUS, "ann", default_definitions(), **kwargs)


def judge_all(session: JudgingSession) -> list[tuple[str, str]]:
    shown = []
    while (pair := session.state()["pair"]) is not None:
        shown.append((pair["query_id"], pair["doc_id"]))
        session.label(*shown[-1], 1)
    return shown


# -- the order ----------------------------------------------------------------------------------------------


def test_pairs_come_topic_by_topic_by_default_and_in_the_files_order_with_order_file(tmp_path):
    store, session = made(tmp_path)
    assert judge_all(session) == [("q1", "d1"), ("q1", "d2"), ("q1", "d3"), ("q2", "d4"), ("q2", "d5")]
    store.close()
    store, session = made(tmp_path / "file", options=PageOptions("file"))
    assert judge_all(session) == INTERLEAVED
    store.close()


def test_a_skipped_pair_still_comes_back_last_topic_by_topic(tmp_path):
    store, session = made(tmp_path)
    session.state()
    session.skip("q1", "d1")
    assert judge_all(session) == [("q1", "d2"), ("q1", "d3"), ("q2", "d4"), ("q2", "d5"), ("q1", "d1")]
    store.close()


# -- the topic's fields and the guidelines ------------------------------------------------------------------------


def test_description_and_narrative_come_from_the_query_or_its_beir_metadata(tmp_path):
    path = tmp_path / "queries.jsonl"
    rows = [
        {"_id": "q1", "text": "t", "description": "Find patches.", "narrative": "A relevant one says how."},
        {"_id": "q2", "text": "t", "metadata": {"description": "Chains.", "narrative": "  "}},
        {"_id": "q3", "text": "t"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fields = topic_fields(path)
    assert fields == {"q1": {"description": "Find patches.", "narrative": "A relevant one says how."},
                      "q2": {"description": "Chains."}}  # fmt: skip
    store, session = made(tmp_path, options=PageOptions(topics=fields))
    pair = session.state()["pair"]
    assert (pair["description"], pair["narrative"]) == ("Find patches.", "A relevant one says how.")
    session.label("q1", "d1", 1), session.label("q1", "d2", 1), session.label("q1", "d3", 1)
    pair = session.state()["pair"]
    assert (pair["query_id"], pair["description"], pair["narrative"]) == ("q2", "Chains.", None)
    store.close()
    path.write_text('{"_id": "q1", "text": "t"}\n{"_id": "q2", "text": "t", "narrative": 7}\n')
    with pytest.raises(ParseError, match=r"queries.jsonl:2: 'narrative' must be text, found int"):
        topic_fields(path)


def test_guidelines_are_read_whole_and_a_file_that_is_not_utf8_is_named_with_its_line(tmp_path):
    good = tmp_path / "guide.md"
    good.write_text("# Guide\n\n<b>bold</b> is not bold\n", encoding="utf-8")
    assert read_guidelines(good) == "# Guide\n\n<b>bold</b> is not bold\n"
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# Guide\nfine\n\xff\xfe latin\n")
    with pytest.raises(ParseError, match="not UTF-8") as e:
        read_guidelines(bad)
    assert "bad.md" in str(e.value) and "3" in str(e.value)


# -- history, relabel, note, unsure -------------------------------------------------------------------------------


def test_a_relabel_is_one_more_event_and_the_export_and_agreement_use_the_last(tmp_path):
    store, session = made(tmp_path)
    session.state()
    session.label("q1", "d1", 3, ("first thought", False))
    session.skip("q1", "d2")
    session.label("q1", "d3", 0)
    assert session.open("q1", "d1")["pair"]["last"] == {"kind": "label", "label": 3, "note": "first thought",
                                                        "unsure": False}  # fmt: skip
    state = session.relabel("q1", "d1", 1, ("on second reading, off topic", True), history=True)
    assert state["pair"]["doc_id"] == "d4" and not state["pair"]["reopened"]  # back to the pair to judge
    assert state["history"] == [
        ["q1", "d2", "skip", None, None, False],
        ["q1", "d3", "label", 0, None, False],
        ["q1", "d1", "label", 1, "on second reading, off topic", True],
    ]
    session.relabel("q1", "d2", 2)  # a skipped pair is labelled from the history too
    events = sqlite3.connect(store.path).execute("SELECT COUNT(*) FROM events").fetchone()[0]
    assert events == 5  # every event kept
    store.label("bo", "q1", "d1", 3)
    done = export(store.path.parent, assessor="ann")
    assert read_beir_qrels_tsv(done.qrels) == {"q1": {"d1": 1, "d2": 2, "d3": 0}}
    assert "second" not in done.qrels.read_text()  # notes never in the qrels
    rows = {(r["doc_id"]): r for r in map(json.loads, done.judgments.read_text().splitlines())}
    assert (rows["d1"]["label"], rows["d1"]["note"], rows["d1"]["unsure"]) == (1, "on second reading, off topic", True)
    assert (rows["d3"]["note"], rows["d3"]["unsure"]) == (None, False)
    assert agreement(store.path.parent)["people"][0]["confusion"] == {"1": {"3": 1}}  # ann's last, 1
    store.close()


def test_back_opens_the_pair_judged_before_and_a_pair_never_judged_cannot_open(tmp_path):
    store, session = made(tmp_path)
    session.state()
    for d in ("d1", "d2", "d3"):
        session.label("q1", d, 2)
    assert session.back()["pair"]["doc_id"] == "d3"  # from the pair to judge: the last judged
    assert session.back("q1", "d3")["pair"]["doc_id"] == "d2"
    assert session.back("q1", "d2")["pair"]["doc_id"] == "d1"
    assert session.back("q1", "d1")["note"] == "nothing judged before this pair"
    for call in (lambda: session.open("q2", "d5"), lambda: session.relabel("q2", "d5", 1)):
        with pytest.raises(AssessError, match=r"pair \('q2', 'd5'\) was never judged by ann"):
            call()
    assert [(j.doc_id, j.label) for j in store.judgments()] == [("d1", 2), ("d2", 2), ("d3", 2)]  # nothing recorded
    store.close()


@pytest.mark.parametrize(
    ("marks", "message"),
    [
        (("x" * (MAX_NOTE + 1), False), f"the note's length in characters must be a whole number <= {MAX_NOTE}"),
        ((7, False), "the note must be text, got 7"),
        ((None, "yes"), "the unsure mark must be one of True, False, got 'yes'"),
    ],
)
def test_a_note_too_long_or_a_mark_that_is_not_true_or_false_records_nothing(tmp_path, marks, message):
    store, session = made(tmp_path)
    session.state()
    with pytest.raises(AssessError, match=message.replace("(", r"\(").replace(")", r"\)")):
        session.label("q1", "d1", 2, marks)
    assert store.judgments() == []
    session.label("q1", "d1", 2, ("x" * MAX_NOTE, False))  # the longest note is kept
    assert store.judgments()[0].note == "x" * MAX_NOTE
    store.close()


# -- the pace and the model's answer ------------------------------------------------------------------------------


def test_the_pace_is_the_time_judged_each_pair_capped_and_the_time_left_at_it(tmp_path):
    store, session = made(tmp_path)
    assert session.state()["pace"] == {"seconds": 0.0, "per_hour": None, "remaining": None}
    store.label("ann", "q1", "d1", 1, seconds=30.0)
    store.label("ann", "q1", "d2", 1, seconds=90.0)
    store.label("ann", "q1", "d3", 1, seconds=IDLE_CAP + 600)  # a break: counts IDLE_CAP
    store.label_many("ann", [("q2", "d4", 0)])  # imported: no time
    # 420 s over 3 timed labels: 140 s each, 25.7 an hour; 1 pair left of 5
    assert session.state()["pace"] == {"seconds": 420.0, "per_hour": 25.7, "remaining": 140.0}
    store.undo("ann")
    store.undo("ann")  # the capped label taken back
    assert session.state()["pace"] == {"seconds": 120.0, "per_hour": 60.0, "remaining": 180.0}
    store.close()


def test_the_models_suggestion_and_raw_answer_are_sent_only_when_shown(tmp_path):
    path = tmp_path / "model.jsonl"
    path.write_text(
        json.dumps({"query_id": "q1", "doc_id": "d1", "label": 2, "raw": '{"grade": 2} <i>'}) + "\n"
        + json.dumps({"query_id": "q1", "doc_id": "d2", "label": 0}) + "\n"
    )  # fmt: skip
    answers = model_answers(path)
    assert answers == {("q1", "d1"): '{"grade": 2} <i>'}
    store, hidden = made(tmp_path)
    store.set_prelabels({("q1", "d1"): 2, ("q1", "d2"): 0}, answers)
    assert (hidden.state()["pair"]["prelabel"], hidden.state()["pair"]["raw"]) == (None, None)
    shown = JudgingSession(store, QUERIES, CORPUS, "ann", default_definitions(), show_prelabels=True)
    assert (shown.state()["pair"]["prelabel"], shown.state()["pair"]["raw"]) == (2, '{"grade": 2} <i>')
    shown.label("q1", "d1", 2)
    assert (shown.state()["pair"]["prelabel"], shown.state()["pair"]["raw"]) == (0, None)
    store.close()


# -- a store made before --------------------------------------------------------------------------------------------

#: The layout of a store made before notes, marks and raw answers (issue 47.4): what older folders hold.
OLD_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pairs (position INTEGER PRIMARY KEY, query_id TEXT NOT NULL, doc_id TEXT NOT NULL,
    probability REAL NOT NULL, origin TEXT NOT NULL, UNIQUE (query_id, doc_id));
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, assessor TEXT NOT NULL, query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('label', 'skip')), label INTEGER, time TEXT NOT NULL,
    seconds REAL, undone INTEGER NOT NULL DEFAULT 0);
CREATE TABLE prelabels (query_id TEXT NOT NULL, doc_id TEXT NOT NULL, label INTEGER NOT NULL,
    PRIMARY KEY (query_id, doc_id));
INSERT INTO meta VALUES ('max_grade', '3');
INSERT INTO pairs VALUES (1, 'q1', 'd1', 1.0, 'pairs'), (2, 'q2', 'd4', 1.0, 'pairs'), (3, 'q1', 'd2', 1.0, 'pairs');
INSERT INTO events (assessor, query_id, doc_id, kind, label, time, seconds)
    VALUES ('ann', 'q1', 'd1', 'label', 2, '2026-01-01T00:00:00.000Z', 12.5);
INSERT INTO prelabels VALUES ('q1', 'd1', 3);
PRAGMA user_version = 1;
"""


def test_a_store_made_before_notes_and_marks_opens_exports_and_goes_on(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    db = sqlite3.connect(folder / STORE_FILE)
    db.executescript(OLD_SCHEMA)
    db.close()
    done = export(folder)  # opened as it is: the columns are added, empty
    row = json.loads(done.judgments.read_text())
    assert row == {"query_id": "q1", "doc_id": "d1", "label": 2, "assessor": "ann", "time": "2026-01-01T00:00:00.000Z",
                   "seconds": 12.5, "note": None, "unsure": False}  # fmt: skip
    with AssessStore.create(folder, max_grade=3) as store:
        session = JudgingSession(store, QUERIES, CORPUS, "ann", default_definitions(), show_prelabels=True)
        assert session.state()["pair"]["doc_id"] == "d2"  # topic by topic: q1's other pair before q2's
        assert session.open("q1", "d1")["pair"]["prelabel"] == 3 and session.state()["pair"]["raw"] is None
        session.relabel("q1", "d1", 1, ("kept", True))
        assert store.history("ann") == [("q1", "d1", "label", 1, "kept", True)]
    assert read_beir_qrels_tsv(export(folder).qrels) == {"q1": {"d1": 1}}


# -- the command and the server -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--order", "random"], "--order must be one of topic, file, got 'random'"),
        (["--guidelines", "{d}/missing.md"], "missing.md"),
        (["--guidelines", "{d}/latin.md"], "not UTF-8"),
        (["--batch", "0"], "--batch must be a whole number >= 1, got 0"),
        (["--batch", "3"], "--batch is how many pairs --strategy is asked at a time: give --strategy too"),
    ],
)
def test_bad_workday_options_are_one_line_and_exit_2_before_the_folder_is_made(tmp_path, args, message):
    data = write_dataset(tmp_path / "data")
    (data / "latin.md").write_bytes(b"caf\xe9\n")
    out = tmp_path / "judged"
    done = cli("assess", str(data / "pairs.tsv"), "--queries", str(data), "--corpus", str(data), "-o", str(out),
               *[a.format(d=data) for a in args])  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("irmetrics: error: ") and message in line
    assert not out.exists()
    done = cli("assess", "export", str(out), "--order", "file")
    assert done.returncode == 2 and "irmetrics assess export takes no --order" in done.stderr


def test_the_server_refuses_a_relabel_of_a_pair_never_shown_and_a_long_note_with_a_400(tmp_path):
    pytest.importorskip("starlette", reason="the assess extra (starlette) is not installed")
    pytest.importorskip("httpx", reason="httpx (Starlette's TestClient) is not installed")
    from starlette.testclient import TestClient

    from haystack_irmetrics.assess.server import create_app

    data = write_dataset(tmp_path / "data")
    write_pairs(data / "pairs.tsv", INTERLEAVED)
    store, session = made(tmp_path)
    headers = {"X-Assess-Token": store.token()}
    with TestClient(create_app(session, store.token(), allowed_hosts=("testserver",))) as c:
        first = {"query_id": "q1", "doc_id": "d1"}
        r = c.post("/api/relabel", json={"query_id": "q2", "doc_id": "d5", "label": 2}, headers=headers)
        assert r.status_code == 400 and r.json()["error"] == (
            "not saved: pair ('q2', 'd5') was never judged by ann: only a pair labelled or skipped before opens again"
        )
        r = c.post("/api/label", json={**first, "label": 2, "note": "x" * (MAX_NOTE + 1)}, headers=headers)
        assert r.status_code == 400 and "the note's length in characters must be" in r.json()["error"]
        assert store.judgments() == [] and r.json()["state"]["pair"]["doc_id"] == "d1"
        r = c.post("/api/label", json={**first, "label": 2, "note": "odd <b>", "unsure": True}, headers=headers)
        assert r.status_code == 200 and r.json()["state"]["pair"]["doc_id"] == "d2"
        r = c.post("/api/open", json={**first, "history": True}, headers=headers)
        state = r.json()["state"]
        assert state["pair"]["reopened"] and state["pair"]["last"]["note"] == "odd <b>"
        assert state["history"] == [["q1", "d1", "label", 2, "odd <b>", True]]
        assert c.get("/api/state?history=1", headers=headers).json()["state"]["pair"]["doc_id"] == "d2"
        r = c.post("/api/back", json={}, headers=headers)
        assert r.json()["state"]["pair"]["doc_id"] == "d1"
        r = c.post("/api/relabel", json={**first, "label": 0}, headers=headers)
        assert r.status_code == 200 and [j.label for j in store.judgments()] == [0]
    store.close()


# -- an adaptive strategy asked a batch at a time -----------------------------------------------------------------


def by_hand_in_batches(name: str, first: int, size: int, budget: int) -> list[list[tuple[str, str]]]:
    """The batches a strategy asks when driven by hand: ``first`` pairs, then up to ``size`` at a time within the
    ``budget``, each batch's labels told once it is judged."""
    from haystack_irmetrics.pooling import make_strategy, pool_runs

    from .test_assess_store import STRATEGY_RUNS, TRUTH

    strategy = make_strategy(name, pool_runs(STRATEGY_RUNS))
    batches, asked = [], 0
    while asked < budget:
        want = first if not batches else min(size, budget - asked)
        batch = [(p.query, p.doc) for p in (strategy.next() for _ in range(want)) if p is not None]
        if not batch:
            break
        batches.append(batch)
        asked += len(batch)
        for q, d in batch:
            strategy.record(q, d, TRUTH[q, d])
    return batches


@pytest.mark.parametrize("name", ["mtf", "maxmean"])
@pytest.mark.parametrize("restart", [False, True])
def test_a_strategy_asked_a_batch_at_a_time_has_each_batch_judged_topic_by_topic(tmp_path, name, restart):
    from haystack_irmetrics.pooling import make_strategy, pool, pool_runs

    from .test_assess_store import STRATEGY_RUNS, TRUTH

    runs = pool_runs(STRATEGY_RUNS)
    budget = len(TRUTH) - 1
    batches = by_hand_in_batches(name, 2, 4, budget)
    assert [len(b) for b in batches] == [2, 4, 1]  # the last batch cut to the budget
    first_seen = list(dict.fromkeys(q for batch in batches for q, _ in batch))
    expected = [p for batch in batches for p in sorted(batch, key=lambda p: first_seen.index(p[0]))]
    assert expected != [p for batch in batches for p in batch]  # the strategy's own order switches topic
    corpus = {d: {"title": "", "text": "text"} for _, d in TRUTH}

    def new_session(store):
        return JudgingSession(
            store, {"q1": "one", "q2": "two"}, corpus, "ann", default_definitions(), budget=budget,
            strategy=lambda judged: make_strategy(name, runs, judged=judged), options=PageOptions(batch=4),
        )  # fmt: skip

    with AssessStore.create(tmp_path, max_grade=3) as store:
        store.add_pairs(pool(runs, 2, name))
        s, shown = new_session(store), []
        while (pair := s.state()["pair"]) is not None:
            shown.append((pair["query_id"], pair["doc_id"]))
            s.label(*shown[-1], TRUTH[shown[-1]])
            if restart:  # the strategy replayed from the store, batch by batch, as it was
                s = new_session(store)
                assert s._replay(s._labels()) is not None
        assert shown == expected
        assert [(q, d) for q, d, _ in store.queue()] == [p for batch in batches for p in batch]
        assert [o for _, _, o in store.queue()] == ["pairs"] * 2 + ["strategy 1"] * 4 + ["strategy 2"]


# -- a key's cost does not grow with the folder ---------------------------------------------------------------


def saved_before(tmp_path, labels: int, **kwargs) -> tuple[AssessStore, JudgingSession]:
    """A folder of ``labels + 40`` pairs (20 a query), the first ``labels`` labelled by ann on a day before."""
    pairs = [(f"t{i // 20:03d}", f"p{i:05d}") for i in range(labels + 40)]
    corpus = {d: CORPUS["d1"] for _, d in pairs}
    store = AssessStore.create(tmp_path / f"judged-{labels}", max_grade=3)
    store.add_pairs([(q, d, 1.0) for q, d in pairs])
    store.label_many("ann", [(q, d, i % 4) for i, (q, d) in enumerate(pairs[:labels])])
    queries = {q: QUERIES["q1"] for q, _ in pairs}
    return store, JudgingSession(store, queries, corpus, "ann", default_definitions(), **kwargs)


def sqlite_work(store: AssessStore, key) -> tuple[int, int]:
    """``(statements, virtual machine steps)`` SQLite runs for ``key()``: what grows when a key reads every event."""
    statements, steps = [], [0]

    def step() -> int:
        steps[0] += 1
        return 0

    db = store._db  # the store's own connection: what the server's key runs on it
    db.set_trace_callback(statements.append)
    db.set_progress_handler(step, 1)
    try:
        key()
    finally:
        db.set_trace_callback(None)
        db.set_progress_handler(None, 1)
    return len(statements), steps[0]


def keys_of_a_day(session: JudgingSession) -> list:
    """A label, a skip, an undo, a relabel of a pair judged before and the state asked again: the page's keys,
    each given the history the page holds."""

    def shown() -> tuple[str, str]:
        pair = session.state()["pair"]
        return pair["query_id"], pair["doc_id"]

    first = shown()
    return [
        lambda held: session.label(*first, 2, ("why", True), history=held),
        lambda held: session.skip(*shown(), history=held),
        lambda held: session.undo(history=held),
        lambda held: session.relabel(*first, 0, history=held),
        lambda held: session.state(history=held),
    ]


@pytest.mark.parametrize("history", [False, True])
def test_each_key_runs_the_same_sqlite_work_with_20_and_with_1000_labels_in_the_folder(tmp_path, history):
    work = {}
    for labels in (20, 1000):
        store, session = saved_before(tmp_path, labels)
        held = session.state(history=True)["history_version"] if history else False
        work[labels] = []
        for key in keys_of_a_day(session):
            work[labels].append(sqlite_work(store, lambda key=key, held=held: key(held)))
            held = session.state(history=held)["history_version"] if history else False  # what the page holds
        store.close()
    assert work[1000] == work[20]  # statements and steps: none reads every event, pair or label
    assert all(steps < 2000 for _, steps in work[20])


def test_a_label_told_to_a_strategy_reads_that_pairs_labels_only_with_20_and_with_1000_in_the_folder(tmp_path):
    from haystack_irmetrics.pooling import make_strategy

    work = {}
    for labels in (20, 1000):
        run: dict[str, dict[str, float]] = {}  # one run ranking every pair of the folder
        for i in range(labels + 40):
            run.setdefault(f"t{i // 20:03d}", {})[f"p{i:05d}"] = 1.0 / (1 + i % 20)
        store, session = saved_before(
            tmp_path, labels, strategy=lambda judged, run=run: make_strategy("mtf", [run], judged=judged)
        )
        pair = session.state()["pair"]
        work[labels] = sqlite_work(store, partial(session.label, pair["query_id"], pair["doc_id"], 2))
        store.close()
    assert work[1000] == work[20]


def test_a_keys_answer_with_the_history_open_holds_only_what_changed_whatever_its_length(tmp_path):
    sizes = {}
    for labels in (20, 1000):
        store, session = saved_before(tmp_path, labels)
        held = session.state(history=True)["history_version"]
        pair = session.state()["pair"]
        answer = session.label(pair["query_id"], pair["doc_id"], 1, history=held)
        assert answer["history"] is None and answer["history_patch"]["count"] == labels + 1
        sizes[labels] = len(json.dumps(answer))
        store.close()
    assert abs(sizes[1000] - sizes[20]) < 40  # the counts' digits; the history of 1,001 pairs is not sent again


def apply_patch(rows: list, patch: dict) -> list:
    """What the page does with a ``history_patch``: each changed query's rows in place of its old ones, after the
    last row of the query it names (first when none)."""
    rows = [r for r in rows if r[0] not in {g["query"] for g in patch["groups"]}]
    for group in patch["groups"]:
        at = max((i + 1 for i, r in enumerate(rows) if r[0] == group["after"]), default=0)
        rows[at:at] = group["rows"]
    assert len(rows) == patch["count"]
    return rows


def test_the_history_patch_and_the_kept_counts_match_a_store_read_again_after_every_key(tmp_path):
    pairs = [(q, d) for d in ("a", "b", "c") for q in ("q1", "q2", "q3")]
    corpus = {d: CORPUS["d1"] for d in "abc"}
    store = AssessStore.create(tmp_path / "judged", max_grade=3)
    store.add_pairs([(q, d, 1.0) for q, d in pairs])
    session = JudgingSession(store, {q: "t" for q, _ in pairs}, corpus, "ann", default_definitions())
    state = session.state(history=True)
    shown, held = state["history"], state["history_version"]
    keys = ["2", "s", "1", "u", "u", "r q1 a 3", "0", "s", "r q2 a 1", "u", "r q1 a 0", "3", "u", "s", "2", "r q2 a 2"]
    keys += ["1", "s", "0", "1", "u", "2", "3", "1", "r q1 c 0", "u"]  # to the end: the skipped pairs come back
    keys += ["r q1 a 1", "r q1 b 1", "r q1 c 1", "u", "r q1 c 2"]  # q1's place: after q3's, back, after again
    for key in keys:
        pair = session.state()["pair"]
        here = (pair["query_id"], pair["doc_id"]) if pair else None
        if key == "s":
            state = session.skip(*here, history=held)
        elif key == "u":
            state = session.undo(history=held)
        elif key.startswith("r"):
            _, q, d, label = key.split()
            state = session.relabel(q, d, int(label), history=held)
        else:
            state = session.label(*here, int(key), ("n", key == "1"), history=held)
        shown, held = apply_patch(shown, state["history_patch"]), state["history_version"]
        again = AssessStore.open(tmp_path / "judged")  # another connection: read from the events alone
        assert shown == [list(r) for r in again.history("ann")] == [list(r) for r in store.history("ann")], key
        for method, args in (("counts", ("ann", 2)), ("timing", ("ann",)), ("can_undo", ("ann",))):
            assert getattr(store, method)(*args) == getattr(again, method)(*args), (key, method)
        for by_topic in (True, False):
            assert store.next_pair("ann", by_topic) == again.next_pair("ann", by_topic), key
        assert [store.last("ann", q, d) for q, d in pairs] == [again.last("ann", q, d) for q, d in pairs]
        again.close()
    assert session.state(history="0123abcd-7")["history"] == shown  # a version it never gave: the whole list
    store.close()


def test_a_label_written_by_another_connection_is_counted_at_once(tmp_path):
    store, _ = made(tmp_path)
    assert store.counts("ann")["judged"] == 0 and store.next_pair("ann") == ("q1", "d1")
    with AssessStore.open(tmp_path / "judged") as other:
        other.label("ann", "q1", "d1", 3)
        other.skip("ann", "q1", "d2")
    assert store.counts("ann") == {"judged": 1, "relevant": 1, "skipped": 1, "pairs": 5}
    assert store.next_pair("ann") == ("q1", "d3") and store.last("ann", "q1", "d1") == ("label", 3, None, False)
    store.close()
