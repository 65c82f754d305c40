"""Votes -> judgments: every strategy and option against hand-computed cases, and the columnar path's merge laws."""

from __future__ import annotations

import functools
import math
import random

import polars as pl
import pyarrow as pa
import pytest

from haystack_irmetrics.feedback import (
    FeedbackError,
    FeedbackLog,
    Strategy,
    UnknownStrategyError,
    aggregate_feedback,
    merge_partials,
    normalize_batches,
    partial_aggregate,
    wilson_lower_bound,
)
from haystack_irmetrics.feedback.aggregate import finalize
from haystack_irmetrics.feedback.judgments import labels_dict


def row(q, d, vote, pos=1, user=None, ts=None, session=None, segment=None):
    return {
        "query_id": q,
        "doc_id": d,
        "position": pos,
        "vote": vote,
        "user": user,
        "ts": ts,
        "session": session,
        "seg": segment,
    }


COLS = {"user": "user", "timestamp": "ts", "session": "session", "segment": "seg"}


def labels(rows, strategy="mean", **options):
    agg = aggregate_feedback(rows, Strategy.parse(strategy, **options), columns=COLS)
    return labels_dict(agg.judgments)


VOTES = [  # q1/d1: 3 up 1 down; q1/d2: 1 up 1 down; q1/d3: graded 1.0, 0.5, 0.3; q2/d1: 2 down
    row("q1", "d1", 1),
    row("q1", "d1", 1),
    row("q1", "d1", 0),
    row("q1", "d1", 1),
    row("q1", "d2", 1, 2),
    row("q1", "d2", 0, 2),
    row("q1", "d3", 1.0, 3),
    row("q1", "d3", 0.5, 3),
    row("q1", "d3", 0.3, 3),
    row("q2", "d1", 0),
    row("q2", "d1", 0),
]


def test_mean_strategy_is_the_mean_vote_per_query_and_document():
    assert labels(VOTES, "mean") == {
        "q1": {"d1": 0.75, "d2": 0.5, "d3": pytest.approx(1.8 / 3)},
        "q2": {"d1": 0.0},
    }


def test_majority_strategy_needs_more_up_than_down_votes_and_a_tie_is_not_relevant():
    # d3: 1.0 and 0.5 are up (>= 0.5), 0.3 is down: 2 of 3 up.
    assert labels(VOTES, "majority") == {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.0}, "q2": {"d1": 0.0}}


def test_majority_up_threshold_decides_what_an_up_vote_is():
    assert labels(VOTES, "majority", up_threshold=0.8)["q1"]["d3"] == 0.0  # only 1.0 is up now


def test_wilson_strategy_equals_hand_computed_lower_bounds():
    # 3 up of 4, z = 1.959964: p = .75, (p + z²/8 - z*sqrt(p(1-p)/4 + z²/64)) / (1 + z²/4)
    z = 1.959963984540054
    hand = (0.75 + z * z / 8 - z * math.sqrt(0.75 * 0.25 / 4 + z * z / 64)) / (1 + z * z / 4)
    got = labels(VOTES, "wilson")
    assert got["q1"]["d1"] == pytest.approx(hand, abs=1e-12) == pytest.approx(0.300642, abs=1e-6)
    assert got["q1"]["d2"] == pytest.approx(wilson_lower_bound(1, 2), abs=1e-12)
    assert got["q2"]["d1"] == 0.0  # no up vote: judged, not relevant
    assert wilson_lower_bound(1, 1) == pytest.approx(0.206549, abs=1e-6)


def test_wilson_confidence_moves_the_bound():
    assert labels(VOTES, "wilson", confidence=0.8)["q1"]["d1"] > labels(VOTES, "wilson")["q1"]["d1"]


def test_min_votes_leaves_pairs_with_fewer_votes_unjudged_not_judged_zero():
    got = labels(VOTES, "mean", min_votes=3)
    assert got == {"q1": {"d1": 0.75, "d3": pytest.approx(0.6)}}  # d2 (2 votes) and q2/d1 (2) are absent


def test_unvoted_impressions_stay_unjudged_but_are_part_of_the_logged_ranking():
    rows = [row("q1", "d1", 1, 1), row("q1", "d2", None, 2), row("q1", "d3", 0, 3)]
    agg = aggregate_feedback(rows, columns=COLS)
    assert agg.qrels().data == {"q1": {"d1": 1.0, "d3": 0.0}}  # d3 judged not relevant, d2 unjudged
    assert list(agg.logged_run().data["q1"]) == ["d1", "d2", "d3"]
    assert agg.shown.filter(pl.col("doc") == "d2")["judged"].to_list() == [False]


def test_dedup_last_keeps_each_users_latest_vote_by_timestamp_then_row():
    rows = [
        row("q", "d", 1, user="u1", ts=10),
        row("q", "d", 0, user="u1", ts=20),  # u1: latest is 0
        row("q", "d", 0, user="u2", ts=5),
        row("q", "d", 1, user="u2", ts=5),  # u2: same ts, later row: 1
        row("q", "d", 1, user="u3", ts=1),
        row("q", "d", None, user="u3", ts=99),  # u3: an impression is no vote
    ]
    agg = aggregate_feedback(rows, Strategy("mean", dedup="last"), columns=COLS)
    got = agg.judgments.row(0, named=True)
    assert (got["label"], got["votes"], got["voters"], got["raw_votes"]) == (pytest.approx(2 / 3), 3, 3, 5)


def test_dedup_first_keeps_each_users_earliest_vote():
    rows = [row("q", "d", 1, user="u1", ts=10), row("q", "d", 0, user="u1", ts=20), row("q", "d", 0, user="u2", ts=3)]
    assert labels(rows, "mean", dedup="first") == {"q": {"d": 0.5}}
    assert labels(rows, "mean", dedup="last") == {"q": {"d": 0.0}}
    assert labels(rows, "mean") == {"q": {"d": pytest.approx(1 / 3)}}


def test_dedup_counts_every_vote_of_rows_without_a_user():
    rows = [row("q", "d", 1), row("q", "d", 1), row("q", "d", 0, user="u1"), row("q", "d", 0, user="u1")]
    agg = aggregate_feedback(rows, Strategy("majority", dedup="last"), columns=COLS)
    assert agg.judgments.select("label", "votes", "up_votes", "voters").row(0) == (1.0, 3, 2, 1)


def test_dedup_by_session_keys_on_the_session_column():
    rows = [row("q", "d", 1, session="s1"), row("q", "d", 1, session="s1"), row("q", "d", 0, session="s2")]
    assert labels(rows, "majority", dedup="last", dedup_by="session") == {"q": {"d": 0.0}}  # 1 up, 1 down: a tie


def test_dedup_without_its_key_column_is_refused():
    with pytest.raises(FeedbackError, match="needs a user column"):
        aggregate_feedback(VOTES, Strategy("mean", dedup="last"))


@pytest.mark.parametrize(
    "bad",
    [{"name": "median"}, {"dedup": "all"}, {"min_votes": 0}, {"confidence": 1.5}, {"dedup_by": "ip"}],
)
def test_unknown_strategy_options_raise_a_typed_error(bad):
    with pytest.raises(UnknownStrategyError):
        Strategy(**bad)


def test_logged_ranking_orders_by_mean_position_then_best_position_then_doc_id():
    rows = [
        row("q", "a", None, 1),
        row("q", "a", None, 3),  # mean 2, best 1
        row("q", "b", None, 2),
        row("q", "b", None, 2),  # mean 2, best 2
        row("q", "c", None, 1),  # mean 1
        row("q", "e", 1, 4),
        row("q", "d", 1, 4),  # mean 4: doc id decides
    ]
    agg = aggregate_feedback(rows, columns=COLS)
    assert agg.logged_run().data == {"q": {"c": 5.0, "a": 4.0, "b": 3.0, "d": 2.0, "e": 1.0}}


def test_segments_are_aggregated_from_their_own_rows():
    rows = [row("q", "d", 1, segment="en"), row("q", "d", 0, segment="de"), row("q", "d", 0, segment="de")]
    agg = aggregate_feedback(rows, columns=COLS)
    assert agg.segments == ["de", "en"]
    assert agg.qrels("en").data == {"q": {"d": 1.0}}
    assert agg.qrels("de").data == {"q": {"d": 0.0}}
    assert agg.qrels().data == {"q": {"d": pytest.approx(1 / 3)}}


def random_log(seed: int, n: int = 400) -> list[dict]:
    rng = random.Random(seed)
    return [
        row(
            f"q{rng.randrange(6)}",
            f"d{rng.randrange(5)}",
            rng.choice([None, 0, 1, 0.5, 0.3, "up", "down"]),
            rng.randrange(1, 6),
            rng.choice([None, "u1", "u2", "u3"]),
            rng.choice([None, 1.0, 2.0, 3.0]),
            segment=rng.choice(["a", "b", None]),
        )
        for _ in range(n)
    ]


@pytest.mark.parametrize("strategy", ["mean", "majority", "wilson"])
@pytest.mark.parametrize("dedup", ["none", "last", "first"])
def test_any_split_of_the_log_merges_to_the_same_judgments(strategy, dedup):
    rows = random_log(hash((strategy, dedup)) % 1000)
    strat = Strategy(strategy, dedup=dedup)
    whole = aggregate_feedback(rows, strat, columns=COLS)
    small = aggregate_feedback(FeedbackLog(rows, columns=COLS, batch_rows=7), strat)
    assert small.judgments.equals(whole.judgments)
    assert small.shown.equals(whole.shown)
    assert small.segment_judgments.equals(whole.segment_judgments)


def test_partials_merged_while_reading_give_the_same_judgments(monkeypatch):
    from haystack_irmetrics.feedback import aggregate as module

    rows = random_log(11, n=600)
    strat = Strategy("wilson", dedup="last")
    whole = aggregate_feedback(rows, strat, columns=COLS)
    monkeypatch.setattr(module, "MERGE_EVERY", 20)  # re-merge after nearly every batch
    merged = aggregate_feedback(FeedbackLog(rows, columns=COLS, batch_rows=9), strat)
    assert merged.judgments.equals(whole.judgments) and merged.shown.equals(whole.shown)
    assert merged.segment_judgments.equals(whole.segment_judgments)


def test_arrow_batch_functions_compose_like_spark_map_in_arrow_and_match_the_local_path():
    rows = random_log(5)
    strat = Strategy("wilson", dedup="last")
    table = pa.Table.from_pylist([{k: (None if v is None else str(v)) for k, v in r.items()} for r in rows])
    # Partitions number their own rows; a global row column keeps "last vote" ties in log order.
    table = table.append_column("row", pa.array(range(1, len(rows) + 1), pa.int64()))
    normalize = functools.partial(normalize_batches, columns={"query": "query_id", "doc": "doc_id", **COLS})
    aggregate = functools.partial(partial_aggregate, strategy=strat)
    # Two "partitions", each mapped on its own, then one merge.
    parts = [list(aggregate(normalize(chunk.to_batches()))) for chunk in (table.slice(0, 150), table.slice(150))]
    merged = pl.from_arrow(merge_partials([b for p in parts for b in p], strat))
    judgments, _ = finalize(merged, strat, by_segment=False)
    local = aggregate_feedback(rows, strat, columns=COLS).judgments
    assert judgments.drop("raw_votes").equals(local.drop("raw_votes"))
