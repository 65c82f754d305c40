"""The click log: the feedback readers with click columns; sessions whose positions repeat or skip."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haystack_irmetrics.clicks import ClickLog
from haystack_irmetrics.errors import ClickModelError, FeedbackSchemaError, MalformedRowError, SessionError


def rows(*sessions, **extra):
    """Rows of sessions given as (session, query, [(doc, click), ...]), positions 1.. in order."""
    return [
        {"session": s, "query_id": q, "doc_id": d, "position": r + 1, "click": c, **extra}
        for s, q, shown in sessions
        for r, (d, c) in enumerate(shown)
    ]


def test_clicks_spelled_as_numbers_booleans_and_words_are_read_as_0_and_1():
    log = ClickLog(rows(("s1", "q", [("a", 1), ("b", "no"), ("c", True), ("d", "YES"), ("e", "0"), ("f", False)])))
    assert log.sessions().clicks.tolist() == [[True, False, True, True, False, False]]


@pytest.mark.parametrize("bad", [2, "maybe", 0.5, None, ""])
def test_a_click_other_than_0_or_1_names_its_row_and_column(bad):
    data = rows(("s1", "q", [("a", 1), ("b", bad)]))
    with pytest.raises(MalformedRowError, match=r"row 2: column 'click'") as e:
        ClickLog(data).sessions()
    assert e.value.row == 2 and e.value.column == "click"
    log = ClickLog(data + rows(("s2", "q", [("a", 0)])), on_error="skip")
    assert log.skipped["row"].to_list() == [2]
    # the session that lost a row now skips nothing (position 1 is left); the other is whole
    assert log.sessions().n_sessions == 2


def test_column_names_are_configurable_like_the_feedback_logs():
    data = [{"imp": "x", "qid": "q", "doc": "a", "rank": 0, "clicked": "yes"}]
    log = ClickLog(
        data,
        columns={"session": "imp", "query": "qid", "doc": "doc", "position": "rank", "click": "clicked"},
        position_base=0,
    )
    assert log.sessions().clicks.tolist() == [[True]]
    with pytest.raises(FeedbackSchemaError, match="needs a 'click' column"):
        ClickLog(data, columns={"click": None})


def test_a_session_whose_position_repeats_is_an_error_naming_the_session_and_rows():
    data = [
        *rows(("s1", "q", [("a", 1), ("b", 0)])),
        {"session": "s1", "query_id": "q", "doc_id": "c", "position": 2, "click": 0},
    ]
    with pytest.raises(SessionError, match=r"session 's1' \(rows 1, 2, 3\): position 2 is shown twice"):
        ClickLog(data).sessions()


def test_a_session_whose_positions_skip_is_skipped_and_listed_with_on_error_skip():
    data = [
        *rows(("s1", "q", [("a", 1), ("b", 0)]), ("s3", "q", [("a", 0)])),
        {"session": "s2", "query_id": "q", "doc_id": "a", "position": 1, "click": 0},
        {"session": "s2", "query_id": "q", "doc_id": "b", "position": 3, "click": 1},
    ]
    with pytest.raises(SessionError, match="position 2 is missing"):
        ClickLog(data).sessions()
    log = ClickLog(data, on_error="skip")
    assert log.sessions().n_sessions == 2
    assert log.skipped_sessions.rows() == [("s2", [4, 5], "position 2 is missing (positions run 1, 3)")]


def test_a_session_that_starts_past_position_1_or_mixes_queries_is_an_error():
    with pytest.raises(SessionError, match="position 1 is missing"):
        ClickLog([{"session": "s", "query_id": "q", "doc_id": "a", "position": 2, "click": 0}]).sessions()
    mixed = [
        *rows(("s", "q1", [("a", 0)])),
        {"session": "s", "query_id": "q2", "doc_id": "b", "position": 2, "click": 0},
    ]
    with pytest.raises(SessionError, match="more than one query"):
        ClickLog(mixed).sessions()


def test_rows_of_sessions_may_come_in_any_order_and_sessions_keep_the_order_of_their_first_row():
    data = rows(("s2", "q", [("a", 0), ("b", 1)]), ("s1", "q", [("b", 1), ("c", 0)]))
    shuffled = [data[3], data[1], data[0], data[2]]
    s = ClickLog(shuffled).sessions()
    _queries, docs = s.pair_names()
    assert [[docs[p] for p in row] for row in s.pairs.tolist()] == [["b", "c"], ["a", "b"]]
    assert s.clicks.tolist() == [[True, False], [False, True]]


def test_the_same_log_as_csv_jsonl_and_parquet_gives_the_same_sessions(tmp_path):
    import polars as pl

    data = rows(("s1", "q", [("a", 1), ("b", 0)]), ("s2", "q", [("b", 0), ("a", 1)]))
    pl.DataFrame(data).write_csv(tmp_path / "log.csv")
    pl.DataFrame(data).write_parquet(tmp_path / "log.parquet")
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))
    got = [ClickLog(tmp_path / f"log.{ext}").sessions() for ext in ("csv", "jsonl", "parquet")]
    for s in got:
        assert s.clicks.tolist() == got[0].clicks.tolist()
        assert s.pair_names() == got[0].pair_names()


def test_a_bad_click_in_a_csv_file_names_file_row_and_line(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("session,query_id,doc_id,position,click\ns1,q,a,1,1\ns1,q,b,2,sometimes\n")
    with pytest.raises(MalformedRowError, match=r"log.csv: row 2 \(line 3\): column 'click'"):
        ClickLog(path).sessions()


def test_an_empty_log_and_a_log_of_skipped_sessions_are_typed_errors():
    with pytest.raises(ClickModelError, match="no rows"):
        ClickLog([]).sessions()
    bad = [{"session": "s", "query_id": "q", "doc_id": "a", "position": 2, "click": 0}]
    with pytest.raises(ClickModelError, match="no usable session"):
        ClickLog(bad, on_error="skip").sessions()


def test_reading_does_not_change_the_callers_rows():
    data = rows(("s1", "q", [("a", "yes"), ("b", 0)]))
    before = [dict(r) for r in data]
    ClickLog(data).sessions()
    assert data == before


def test_team_and_propensity_columns_are_read_when_asked():
    data = [
        {"session": "s", "query_id": "q", "doc_id": "a", "position": 1, "click": 1, "team": "A", "propensity": 0.5},
        {"session": "s", "query_id": "q", "doc_id": "b", "position": 2, "click": 0, "team": "b", "propensity": 1},
    ]
    s = ClickLog(data, team=True, propensity=True).sessions()
    assert s.team.tolist() == [[0, 1]]
    assert s.propensity.tolist() == [[0.5, 1.0]]
    with pytest.raises(MalformedRowError, match="propensity is not a number in"):
        ClickLog([{**data[0], "propensity": 0}], propensity=True).sessions()


def test_a_session_too_long_for_the_arrays_is_a_typed_error_that_names_max_rank(monkeypatch):
    import haystack_irmetrics.clicks.log as log_module

    monkeypatch.setattr(log_module, "MAX_CELLS", 10)
    data = rows(("s1", "q", [(f"d{i}", 0) for i in range(6)]), ("s2", "q", [("a", 1)]))
    with pytest.raises(ClickModelError, match=r"session 's1'.*max_rank"):
        ClickLog(data).sessions()
    assert ClickLog(data, max_rank=3).sessions().n_ranks == 3


CELLS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.sampled_from(["", " ", "yes", "no", "1", "0", "2", "x", "1.0", "nan", "é", "a b", "[1]"]),
    st.floats(allow_nan=True, allow_infinity=True),
)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "session": st.sampled_from(["s1", "s2", "s3", 7, None, ""]),
                "query_id": st.sampled_from(["q1", "q2", 3, None]),
                "doc_id": st.sampled_from(["a", "b", "c", None, 1.5]),
                "position": CELLS,
                "click": CELLS,
            }
        ),
        max_size=12,
    ),
    st.sampled_from(["raise", "skip"]),
)
def test_any_rows_give_sessions_or_a_typed_error_never_a_crash(rows, on_error):
    from haystack_irmetrics.errors import IRMetricsError

    try:
        s = ClickLog(rows, on_error=on_error).sessions()
    except IRMetricsError:
        return
    assert s.n_sessions >= 1
    assert ((s.pairs >= 0).sum(axis=1) == s.length).all()
    assert not (s.clicks & ~s.shown).any()
