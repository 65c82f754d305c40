"""People's judging without a browser: the SQLite store (labels, skips, undo, resume), the session over it, the
export (BEIR qrels through the judge's writer, judgments.jsonl), the agreement figures (against scikit-learn and
krippendorff), the prelabels reader, the scale and the highlighting."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from haystack_irmetrics.assess.export import agreement, agreement_table, consensus, export, read_prelabels
from haystack_irmetrics.assess.scale import default_definitions, grade_definitions, highlight
from haystack_irmetrics.assess.session import JudgingSession
from haystack_irmetrics.assess.store import STORE_FILE, AssessStore
from haystack_irmetrics.errors import AssessError, ParseError, StalePairError
from haystack_irmetrics.io.beir_data import read_beir_qrels_tsv
from haystack_irmetrics.judges.prompt import SYSTEM_PROMPT

from .assess_fixtures import CORPUS, PAIRS, QUERIES


@pytest.fixture
def store(tmp_path):
    s = AssessStore.create(tmp_path / "judged", max_grade=3)
    s.add_pairs([(q, d, 1.0) for q, d in PAIRS])
    yield s
    s.close()


def session(store, assessor="ann", **kwargs) -> JudgingSession:
    return JudgingSession(store, QUERIES, CORPUS, assessor, default_definitions(), **kwargs)


# -- the store ---------------------------------------------------------------------------------------------


def test_pairs_are_shown_in_order_a_skipped_one_comes_back_last_and_undo_steps_back(store):
    assert store.next_pair("ann") == ("q1", "d1")
    store.label("ann", "q1", "d1", 3)
    store.skip("ann", "q1", "d2")
    assert store.next_pair("ann") == ("q1", "d3")
    store.label("ann", "q1", "d3", 0)
    store.label("ann", "q2", "d4", 2)
    store.label("ann", "q2", "d5", 1)
    assert store.next_pair("ann") == ("q1", "d2")  # every other pair done: the skipped one
    assert store.counts("ann") == {"judged": 4, "relevant": 3, "skipped": 1, "pairs": 5}
    assert store.undo("ann") == ("q2", "d5")
    assert store.next_pair("ann") == ("q2", "d5")
    assert store.counts("ann")["judged"] == 3
    store.label("ann", "q2", "d5", 2)
    store.label("ann", "q1", "d2", 1)
    assert store.next_pair("ann") is None
    assert [(j.query_id, j.doc_id, j.label) for j in store.judgments("ann")] == [
        ("q1", "d1", 3),
        ("q1", "d3", 0),
        ("q2", "d4", 2),
        ("q2", "d5", 2),
        ("q1", "d2", 1),
    ]


def test_undoing_a_skip_shows_the_pair_again_and_undo_stops_at_the_first_action(store):
    store.skip("ann", "q1", "d1")
    assert store.next_pair("ann") == ("q1", "d2")
    assert store.undo("ann") == ("q1", "d1")
    assert store.next_pair("ann") == ("q1", "d1")
    assert store.undo("ann") is None and not store.can_undo("ann")


def test_each_assessor_has_their_own_place(store):
    store.label("ann", "q1", "d1", 2)
    assert store.next_pair("bob") == ("q1", "d1")
    store.label("bob", "q1", "d1", 3)
    assert store.undo("ann") == ("q1", "d1")
    assert [(j.assessor, j.label) for j in store.judgments()] == [("bob", 3)]


def test_a_reopened_store_resumes_where_it_stopped_and_keeps_the_history(tmp_path):
    with AssessStore.create(tmp_path, max_grade=3) as s:
        s.add_pairs([(q, d, 1.0) for q, d in PAIRS])
        s.label("ann", "q1", "d1", 2)
        s.skip("ann", "q1", "d2")
        s.label("ann", "q1", "d3", 1)
        s.undo("ann")
        token = s.token()
    with AssessStore.create(tmp_path, max_grade=3) as s:
        assert s.add_pairs([(q, d, 1.0) for q, d in PAIRS]) == 0  # the same pairs file again: nothing new
        assert s.next_pair("ann") == ("q1", "d3")
        assert s.token() == token
    rows = (
        sqlite3.connect(tmp_path / STORE_FILE).execute("SELECT kind, label, undone FROM events ORDER BY id").fetchall()
    )
    assert rows == [("label", 2, 0), ("skip", None, 0), ("label", 1, 1)]


def test_labels_and_pairs_off_the_scale_are_refused_and_nothing_is_recorded(store):
    for bad in (4, -1, True, 1.0, "2"):
        with pytest.raises(AssessError, match=r"not a grade of the scale 0\.\.3"):
            store.label("ann", "q1", "d1", bad)
    with pytest.raises(AssessError, match=r"pair \('q9', 'd1'\) is not one of the pairs"):
        store.label("ann", "q9", "d1", 1)
    with pytest.raises(AssessError, match="is not one of the pairs"):
        store.skip("ann", "q1", "d9")
    assert store.judgments() == [] and not store.can_undo("ann")


def test_a_folder_on_another_scale_or_a_file_that_is_no_store_is_refused(tmp_path, store):
    with pytest.raises(AssessError, match=r"holds labels on the scale 0..3, not 0..1"):
        AssessStore.create(store.path.parent, max_grade=1)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / STORE_FILE).write_bytes(b"not a database at all, just bytes" * 100)
    with pytest.raises(AssessError, match="cannot be opened as a judging store"):
        AssessStore.open(tmp_path / "junk")
    with pytest.raises(AssessError, match=r"holds no assess\.sqlite"):
        AssessStore.open(tmp_path / "empty")


# -- the session -----------------------------------------------------------------------------------------------


def test_the_state_shows_the_pair_its_texts_as_segments_and_the_progress(store):
    s = session(store)
    state = s.state()
    pair = state["pair"]
    assert (pair["query_id"], pair["doc_id"], pair["query"]) == ("q1", "d1", QUERIES["q1"])
    assert "".join(t for t, _ in pair["text"]) == CORPUS["d1"]["text"]
    assert [t for t, hit in pair["text"] if hit] == ["leak", "tube"]
    assert state["scale"] == [[g, d] for g, d in default_definitions().items()]
    assert state["progress"] == {"judged": 0, "budget": 5, "relevant": 0, "skipped": 0, "threshold": 1}
    assert pair["prelabel"] is None and state["done"] is False and state["can_undo"] is False


def test_a_key_for_a_pair_no_longer_shown_records_nothing(store):
    s = session(store)
    s.label("q1", "d1", 2)
    with pytest.raises(StalePairError):
        s.label("q1", "d1", 3)  # pressed twice, or a second tab
    with pytest.raises(StalePairError):
        s.skip("q2", "d4")
    assert [(j.doc_id, j.label) for j in store.judgments()] == [("d1", 2)]


def test_the_budget_ends_the_judging(store):
    s = session(store, budget=2)
    s.label("q1", "d1", 1)
    s.skip("q1", "d2")
    state = s.label("q1", "d3", 0)
    assert state["done"] and state["pair"] is None and state["progress"]["budget"] == 2
    assert s.undo()["pair"]["doc_id"] == "d3"


def test_model_labels_are_hidden_unless_asked(store):
    store.set_prelabels({("q1", "d1"): 3})
    assert session(store).state()["pair"]["prelabel"] is None
    assert session(store, show_prelabels=True).state()["pair"]["prelabel"] == 3


# -- the export -----------------------------------------------------------------------------------------------


def test_export_writes_beir_qrels_and_the_judgments(store):
    s = session(store)
    s.state()  # the page loads: the first pair is shown
    s.label("q1", "d1", 3)
    s.skip("q1", "d2")
    s.label("q1", "d3", 0)
    s.label("q2", "d4", 2)
    s.undo()
    s.label("q2", "d4", 1)
    done = export(store.path.parent)
    assert (done.pairs, done.labels, done.assessors) == (3, 3, ("ann",))
    assert done.qrels.read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"
    assert read_beir_qrels_tsv(done.qrels) == {"q1": {"d1": 3, "d3": 0}, "q2": {"d4": 1}}
    rows = [json.loads(line) for line in done.judgments.read_text().splitlines()]
    assert [(r["query_id"], r["doc_id"], r["label"], r["assessor"]) for r in rows] == [
        ("q1", "d1", 3, "ann"),
        ("q1", "d3", 0, "ann"),
        ("q2", "d4", 1, "ann"),
    ]
    assert all(r["time"].endswith("Z") and r["seconds"] >= 0 for r in rows)


def test_several_assessors_export_the_median_label_or_one_persons(store):
    for who, labels in {"ann": [3, 0, 2], "bob": [1, 0], "cy": [2]}.items():
        for (q, d), label in zip(PAIRS, labels):
            store.label(who, q, d, label)
    export(store.path.parent)
    assert read_beir_qrels_tsv(store.path.parent / "qrels.tsv") == {"q1": {"d1": 2, "d2": 0, "d3": 2}}
    export(store.path.parent, assessor="bob")
    assert read_beir_qrels_tsv(store.path.parent / "qrels.tsv") == {"q1": {"d1": 1, "d2": 0}}
    with pytest.raises(AssessError, match=r"'dan' labelled no pair .*assessors: ann, bob, cy"):
        export(store.path.parent, assessor="dan")
    assert [consensus(x) for x in ([3, 1, 2], [3, 1], [0, 0, 3, 3])] == [2, 1, 0]


# -- agreement ----------------------------------------------------------------------------------------------


def test_agreement_between_people_and_with_a_model_equals_scikit_learn_and_krippendorff(tmp_path):
    krippendorff = pytest.importorskip("krippendorff")
    metrics = pytest.importorskip("sklearn.metrics")
    ann = [3, 2, 0, 1, 2, 3, 0, 0, 1, 2, 3, 1]
    bob = [3, 1, 0, 1, 2, 2, 0, 1, 1, 3, 3, 0]
    model = [2, 2, 0, 0, 3, 3, 1, 0, 1, 2, 2, 1]
    pairs = [(f"q{i // 4}", f"d{i}") for i in range(len(ann))]
    with AssessStore.create(tmp_path, max_grade=3) as s:
        s.add_pairs([(q, d, 1.0) for q, d in pairs])
        for (q, d), a, b in zip(pairs, ann, bob):
            s.label("ann", q, d, a)
            s.label("bob", q, d, b)
        s.label("cy", *pairs[0], 3)  # one shared pair, the same label: no room for chance
    (tmp_path / "model.jsonl").write_text(
        "".join(
            json.dumps({"query_id": q, "doc_id": d, "label": m, "judge": "x"}) + "\n" for (q, d), m in zip(pairs, model)
        )
        + json.dumps({"query_id": "q9", "doc_id": "d9", "label": None})
        + "\n"
    )
    result = agreement(tmp_path, tmp_path / "model.jsonl", threshold=2)

    def expected(a, b):
        binary = [int(x >= 2) for x in a], [int(x >= 2) for x in b]
        return {
            "pairs": len(a),
            "kappa": metrics.cohen_kappa_score(*binary),
            "weighted_kappa": metrics.cohen_kappa_score(a, b, weights="quadratic"),
            "weighted_kappa_linear": metrics.cohen_kappa_score(a, b, weights="linear"),
            "alpha": krippendorff.alpha(reliability_data=[a, b], level_of_measurement="ordinal"),
        }

    ann_bob = next(e for e in result["people"] if (e["a"], e["b"]) == ("ann", "bob"))
    for name, value in expected(ann, bob).items():
        assert ann_bob[name] == pytest.approx(value, abs=1e-12), name
    ann_model = next(e for e in result["model"] if e["assessor"] == "ann")
    for name, value in expected(ann, model).items():
        assert ann_model[name] == pytest.approx(value, abs=1e-12), name
    cy = next(e for e in result["people"] if (e["a"], e["b"]) == ("ann", "cy"))
    assert cy["pairs"] == 1 and cy["kappa"] is None and set(cy["undefined"]) >= {"kappa", "alpha"}  # never a NaN
    json.dumps(result, allow_nan=False)
    assert result["assessors"] == {"ann": 12, "bob": 12, "cy": 1}
    table = agreement_table(result)
    assert f"| ann · bob | 12 | {ann_bob['kappa']:.3f} |" in table and "| cy · model | 1 | n/a |" in table


def test_agreement_uses_the_model_labels_the_server_kept_and_needs_something_to_compare(tmp_path):
    with AssessStore.create(tmp_path, max_grade=3) as s:
        s.add_pairs([("q1", "d1", 1.0), ("q1", "d2", 1.0)])
        s.label("ann", "q1", "d1", 2)
        s.label("ann", "q1", "d2", 0)
        with pytest.raises(AssessError, match="agreement needs two assessors"):
            agreement(tmp_path)
        s.set_prelabels({("q1", "d1"): 2, ("q1", "d2"): 1})
    result = agreement(tmp_path)
    assert result["people"] == [] and result["model"][0]["pairs"] == 2 and result["model"][0]["exact"] == 0.5


def test_empty_shared_pairs_give_nulls_not_errors(tmp_path):
    with AssessStore.create(tmp_path, max_grade=3) as s:
        s.add_pairs([("q1", "d1", 1.0), ("q1", "d2", 1.0)])
        s.label("ann", "q1", "d1", 2)
        s.label("bob", "q1", "d2", 0)
    (entry,) = agreement(tmp_path)["people"]
    assert entry["pairs"] == 0 and entry["kappa"] is None and entry["undefined"]["kappa"] == "no pair labelled by both"
    notes = agreement_table(agreement(tmp_path)).split("\n\n")[1].splitlines()
    # One line for the row with no overlap, naming how to get one, not a line per undefined figure.
    assert notes == [
        "ann · bob: no pair labelled by both, so no figure: have the model judge the pairs people judged "
        "(irmetrics judge --pairs PAIRS.tsv, the pairs file the page was given), or people the model's"
    ]


# -- readers ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"query_id": "q1", "label": 1}, "expected string 'query_id' and 'doc_id'"),
        ({"query_id": "q1", "doc_id": 7, "label": 1}, "expected string 'query_id' and 'doc_id'"),
        ({"query_id": "q1", "doc_id": "d1"}, "no 'label' field"),
        ({"query_id": "q1", "doc_id": "d1", "label": True}, "label True is not a whole number"),
        ({"query_id": "q1", "doc_id": "d1", "label": 1.5}, "label 1.5 is not a whole number"),
        ({"query_id": "q1", "doc_id": "d1", "label": 4}, "label 4 is above the scale's top grade 3"),
        ({"query_id": "q0", "doc_id": "d0", "label": 2}, "pair ('q0', 'd0') is labelled 1 on line 1 and 2 here"),
    ],
)
def test_bad_prelabels_are_named_with_their_line(tmp_path, line, message):
    path = tmp_path / "judgments.jsonl"
    path.write_text(json.dumps({"query_id": "q0", "doc_id": "d0", "label": 1}) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(ParseError, match=rf"{path}:2: .*{re.escape(message)}"):
        read_prelabels(path, max_grade=3)


# -- the scale and highlighting -----------------------------------------------------------------------------


def test_the_scale_is_the_judges_prompt_line_by_line():
    lines = [line for line in SYSTEM_PROMPT.splitlines() if line[:1].isdigit() and " = " in line]
    assert len(lines) == 4
    expected = {int(line.split(" = ")[0]): line.split(" = ", 1)[1].rstrip(";.") for line in lines}
    assert default_definitions() == dict(sorted(expected.items()))


def test_another_scale_comes_from_a_prompt_file_and_must_define_every_grade():
    prompt = "Grade it.\n1 = relevant;\n0 = not relevant.\nAnswer with one digit."
    assert grade_definitions(prompt, 1, "binary.txt") == {0: "not relevant", 1: "relevant"}
    with pytest.raises(AssessError, match=r"binary\.txt defines no grade 2 of the scale 0\.\.2"):
        grade_definitions(prompt, 2, "binary.txt")
    with pytest.raises(AssessError, match=r"defines no grade 4 of the scale 0..4 \(the default scale is 0..3"):
        default_definitions(4)
    with pytest.raises(AssessError, match="defines grade 1 twice"):
        grade_definitions("1 = a\n1 = b\n0 = c", 1, "twice.txt")


def test_highlighting_marks_the_query_words_stems_and_keeps_the_text_whole():
    text = 'Tubes <b>leak</b> & it is "slowly" leaking; fix-it'
    segments = highlight(text, "how do I fix a slow leak in a bicycle tube")
    assert "".join(t for t, _ in segments) == text
    assert [t for t, hit in segments if hit] == ["Tubes", "leak", "leaking", "fix"]  # not "is" (a stop word: "I")
    assert highlight("", "anything") == [] and highlight("no match", "") == [["no match", False]]


# -- an adaptive strategy asked live --------------------------------------------------------------------------

STRATEGY_RUNS = [
    {"q1": {"d1": 5, "d2": 4, "d3": 3, "d6": 2}, "q2": {"d4": 3, "d5": 2, "d7": 1}},
    {"q1": {"d3": 5, "d6": 4, "d1": 3}, "q2": {"d7": 3, "d4": 2, "d8": 1}},
    {"q1": {"d6": 5, "d2": 4}, "q2": {"d8": 3, "d5": 2}},
]
TRUTH = {
    ("q1", "d1"): 0,
    ("q1", "d2"): 0,
    ("q1", "d3"): 2,
    ("q1", "d6"): 3,
    ("q2", "d4"): 1,
    ("q2", "d5"): 0,
    ("q2", "d7"): 2,
    ("q2", "d8"): 0,
}


@pytest.mark.parametrize("name", ["mtf", "maxmean", "depth", "rbp"])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("restart", [False, True])
@pytest.mark.parametrize("order", ["topic", "file"])
def test_the_page_asks_an_adaptive_strategy_what_driving_it_by_hand_asks(tmp_path, name, batch, restart, order):
    from haystack_irmetrics.assess.session import PageOptions
    from haystack_irmetrics.pooling import make_strategy, pool, pool_runs

    runs = pool_runs(STRATEGY_RUNS)
    asked = by_hand(name, batch, TRUTH)
    # topic by topic, the first batch is judged query by query (each query's pairs in its order); then the pairs
    # the strategy asks one at a time come in its order
    first = (
        sorted(asked[:batch], key=lambda p: [q for q, _ in asked].index(p[0])) if order == "topic" else asked[:batch]
    )
    expected = first + asked[batch:]
    corpus = {d: {"title": "", "text": "text"} for _, d in TRUTH}

    def new_session(store):
        return JudgingSession(
            store, {"q1": "one", "q2": "two"}, corpus, "ann", default_definitions(), budget=len(TRUTH),
            strategy=lambda judged: make_strategy(name, runs, judged=judged), options=PageOptions(order),
        )  # fmt: skip

    store = AssessStore.create(tmp_path, max_grade=3)
    store.add_pairs(pool(runs, batch, name))
    shown = []
    s = new_session(store)
    while (pair := s.state()["pair"]) is not None:
        q, d = pair["query_id"], pair["doc_id"]
        shown.append((q, d))
        s.label(q, d, TRUTH[q, d])
        if restart:  # a new server after every key: the strategy replayed from the store
            s = new_session(store)
    assert shown == expected and len(shown) == len(TRUTH)
    assert [(q, d) for q, d, _ in store.queue()] == asked  # what the strategy asked, as driven by hand
    assert [o for _, _, o in store.queue()] == ["pairs"] * batch + ["strategy"] * (len(TRUTH) - batch)
    store.close()


def by_hand(name: str, batch: int, truth: dict, seed: int = 0) -> list[tuple[str, str]]:
    """The pairs a strategy asks when driven by hand: its first ``batch`` at once, then one at a time, each
    label told as it is given."""
    from haystack_irmetrics.pooling import make_strategy, pool_runs

    strategy = make_strategy(name, pool_runs(STRATEGY_RUNS), seed=seed)
    asked = [(p.query, p.doc) for p in (strategy.next() for _ in range(batch))]
    for q, d in asked:
        strategy.record(q, d, truth[q, d])
    while (p := strategy.next()) is not None:
        asked.append((p.query, p.doc))
        strategy.record(p.query, p.doc, truth[p.query, p.doc])
    return asked


def test_an_undone_label_is_not_what_the_strategy_learns_from(tmp_path):
    from haystack_irmetrics.pooling import make_strategy, pool, pool_runs

    runs = pool_runs(STRATEGY_RUNS)
    first = by_hand("mtf", 2, TRUTH)[0]
    wrong = 0 if TRUTH[first] else 3
    assert by_hand("mtf", 2, {**TRUTH, first: wrong}) != by_hand("mtf", 2, TRUTH)  # the label matters
    corpus = {d: {"title": "", "text": "text"} for _, d in TRUTH}
    with AssessStore.create(tmp_path, max_grade=3) as store:
        store.add_pairs(pool(runs, 2, "mtf"))
        s = JudgingSession(
            store, {"q1": "a", "q2": "b"}, corpus, "ann", default_definitions(), budget=8,
            strategy=lambda judged: make_strategy("mtf", runs, judged=judged),
        )  # fmt: skip
        assert (s.state()["pair"]["query_id"], s.state()["pair"]["doc_id"]) == first
        s.label(*first, wrong)
        s.undo()
        shown = []
        while (pair := s.state()["pair"]) is not None:
            shown.append((pair["query_id"], pair["doc_id"]))
            s.label(*shown[-1], TRUTH[shown[-1]])
    assert shown == by_hand("mtf", 2, TRUTH)


def test_importing_the_package_loads_no_web_stack_and_no_haystack():
    import subprocess
    import sys

    code = (
        "import sys, haystack_irmetrics.assess; print(sorted({'starlette', 'uvicorn', 'haystack'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
