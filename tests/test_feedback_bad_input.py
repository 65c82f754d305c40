"""Feedback logs: values the README accepts are read, bad ones are typed errors or named rows (found by fuzzing)."""

from __future__ import annotations

import datetime
import gzip
from decimal import Decimal

import numpy as np
import pytest

from haystack_irmetrics import InvalidIdError, InvalidLabelError
from haystack_irmetrics.cli import main
from haystack_irmetrics.core import Qrels
from haystack_irmetrics.errors import ParseError
from haystack_irmetrics.feedback import FeedbackError, Strategy, aggregate_feedback, evaluate_feedback, score_system


def row(**kw):
    return {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1, **kw}


LAST = Strategy("mean", dedup="last")
USER_TIME = {"user": "user", "timestamp": "ts"}


def labels(agg) -> dict[tuple[str, str], float]:
    return {(q, d): v for q, d, v in agg.judgments.select("query", "doc", "label").rows()}


@pytest.mark.parametrize(
    "later,earlier",
    [
        ("2024-01-01T10:00:01Z", "2024-01-01T10:00:00Z"),
        ("2024-01-01T10:00:00+01:00", "2024-01-01T10:00:00+02:00"),  # 09:00 UTC after 08:00 UTC
        (datetime.datetime(2024, 1, 2), datetime.datetime(2024, 1, 1)),
        (datetime.date(2024, 1, 2), datetime.date(2024, 1, 1)),
        (np.int64(2), np.int64(1)),
    ],
    ids=["Z", "offsets", "datetime", "date", "numpy int"],
)
def test_timestamps_with_zones_date_times_and_numpy_numbers_order_a_users_votes(later, earlier):
    rows = [row(user="u", ts=earlier, vote=0), row(user="u", ts=later, vote=1)]
    assert labels(aggregate_feedback(rows[::-1], LAST, columns=USER_TIME)) == {("q1", "d1"): 1.0}
    assert labels(aggregate_feedback(rows, LAST, columns=USER_TIME)) == {("q1", "d1"): 1.0}


@pytest.mark.parametrize("vote", [np.int64(1), np.float32(0.5), Decimal("0.5"), np.uint8(1)])
def test_numpy_and_decimal_votes_in_row_dicts_read_as_their_numbers(vote):
    assert labels(aggregate_feedback([row(vote=vote)])) == {("q1", "d1"): float(vote)}


def test_an_int_vote_or_position_beyond_any_column_type_is_a_named_malformed_row_never_an_impression():
    for bad in ({"vote": 10**400}, {"position": 2**63}, {"position": 10**5000}):
        agg = aggregate_feedback([row(**bad), row(doc_id="d2", position=2)], on_error="skip")
        assert labels(agg) == {("q1", "d2"): 1.0}
        skipped = agg.skipped.rows(named=True)
        assert len(skipped) == 1 and skipped[0]["row"] == 1 and skipped[0]["column"] == next(iter(bad))
    with pytest.raises(FeedbackError, match=r"row 2: column 'position': position is beyond 2,147,483,647"):
        aggregate_feedback([row(), row(doc_id="d2", position=2**40)])


def test_finite_votes_whose_mean_overflows_name_the_query_and_document():
    with pytest.raises(InvalidLabelError, match=r"votes for document 'd1' in query 'q1' aggregate to inf"):
        aggregate_feedback([row(vote=1e308), row(vote=1e308)]).qrels()


def test_the_gold_documents_component_refuses_an_infinite_label_as_qrels_does():
    from haystack_irmetrics.components.feedback import FeedbackToGoldDocuments

    rows = [row(vote=1e308), row(vote=1e308)]
    with pytest.raises(InvalidLabelError, match=r"votes for document 'd1' in query 'q1' aggregate to inf"):
        FeedbackToGoldDocuments().run(rows)


def test_a_vote_map_or_query_ids_of_the_wrong_shape_is_a_typed_error():
    from haystack_irmetrics.components.feedback import FeedbackToGoldDocuments

    with pytest.raises(FeedbackError, match="vote_map must be a dict"):
        aggregate_feedback([row()], vote_map="x")
    with pytest.raises(InvalidIdError, match="query_ids must be a list of str"):
        FeedbackToGoldDocuments().run([row()], query_ids="q1")


def _write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


CSV = b"query_id,doc_id,position,vote\nq1,d1,1,1\nq1,d2,2,0\n"


def test_a_csv_log_with_a_byte_order_mark_or_gzipped_without_a_gz_name_reads_as_the_plain_file(tmp_path):
    plain = labels(aggregate_feedback(_write(tmp_path, "plain.csv", CSV)))
    assert plain == {("q1", "d1"): 1.0, ("q1", "d2"): 0.0}
    assert labels(aggregate_feedback(_write(tmp_path, "bom.csv", b"\xef\xbb\xbf" + CSV))) == plain
    assert labels(aggregate_feedback(_write(tmp_path, "gz.csv", gzip.compress(CSV)))) == plain


@pytest.mark.parametrize("name", ["log.csv", "log.jsonl"])
def test_a_log_that_is_not_utf8_is_a_parse_error_naming_its_line(tmp_path, name, capsys):
    data = CSV if name.endswith("csv") else b'{"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1}\n' * 3
    lines = data.split(b"\n")
    lines[2] = lines[2].replace(b"d", b"\xe9", 1)
    path = _write(tmp_path, name, b"\n".join(lines))
    with pytest.raises(ParseError, match=rf"{name}:3: not UTF-8"):
        aggregate_feedback(path)
    assert main(["feedback", str(path)]) == 2
    assert f"{name}:3: not UTF-8" in capsys.readouterr().err


def test_the_cli_refuses_two_systems_of_one_name_instead_of_dropping_one(tmp_path, capsys):
    log = _write(tmp_path, "log.csv", CSV)
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "new.trec").write_text("q1 Q0 d1 1 2 x\n")
    runs = [str(tmp_path / "a" / "new.trec"), str(tmp_path / "b" / "new.trec")]
    assert main(["feedback", str(log), "--run", runs[0], "--run", f"new={runs[1]}", "--n-resamples", "100"]) == 2
    assert "two systems are named 'new'" in capsys.readouterr().err
    assert main(["feedback", str(log), "--run", runs[0], "--run", runs[0], "--n-resamples", "100"]) == 2
    assert "two systems are named 'new'" in capsys.readouterr().err
    assert main(["feedback", str(log), "--run", f"x={runs[0]}", "--run", f"y={runs[1]}", "--n-resamples", "100"]) == 0
    # Two files of one name in two folders are told apart by their folders, as every command does (docs/cli.md).
    assert main(["feedback", str(log), "--run", runs[0], "--run", runs[1], "--n-resamples", "100"]) == 0


def _segmented(segments):
    return [
        row(query_id=q, doc_id=f"d{i}", position=i + 1, vote=i % 2, dev=s)
        for q, s in zip(("q1", "q2", "q3", "q4"), segments)
        for i in range(2)
    ]


def test_a_run_that_answers_none_of_a_segments_queries_scores_them_zero_as_overall():
    run = {"q1": {"d1": 2.0}, "q2": {"d1": 2.0}}  # segment m only
    options = {"columns": {"segment": "dev"}, "k_values": [1], "measures": ["P"], "n_resamples": 100}
    ev = evaluate_feedback(_segmented("mmdd"), {"new": run}, **options)
    by_label = {s.label: s for s in ev.segments}
    assert ev.means(segment=by_label["d"])["new"]["P@1"] == 0.0
    assert ev.means(segment=by_label["m"])["new"]["P@1"] == 1.0
    assert ev.means()["new"]["P@1"] == 0.5
    alone = score_system("new", run, Qrels.from_dict({"q3": {"d0": 1}}), k_values=[1], measures=["P"])
    assert alone.queries == ["q3"] and alone.judged_means() == {"Judged@1": 0.0}


def test_rows_without_a_segment_and_a_segment_named_none_get_distinct_labels():
    ev = evaluate_feedback(
        _segmented([None, None, "(none)", "(none)"]),
        columns={"segment": "dev"}, k_values=[1], measures=["P"], n_resamples=100,
    )  # fmt: skip
    assert sorted(s.label for s in ev.segments) == ["'(none)'", "(none)"]


def test_strategy_options_are_keywords_of_aggregate_and_evaluate_feedback():
    rows = [row(user="u1", ts=1, vote=1), row(user="u1", ts=2, vote=0), row(user="u2", ts=1, vote=1)]
    by_keyword = aggregate_feedback(rows, "mean", dedup="last", columns=USER_TIME)
    assert labels(by_keyword) == labels(aggregate_feedback(rows, LAST, columns=USER_TIME)) == {("q1", "d1"): 0.5}
    assert by_keyword.strategy == LAST
    assert labels(aggregate_feedback(rows, "mean", min_votes=4, columns=USER_TIME)) == {}
    ev = evaluate_feedback(rows, k_values=[1], measures=["P"], dedup="last", columns=USER_TIME, n_resamples=10)
    assert ev.means() == {"logged": {"P@1": 1.0}}  # 0.5 >= the threshold 0.5


@pytest.mark.parametrize(
    "call",
    [
        lambda: aggregate_feedback([row()], "mean", dedupe="last"),
        lambda: evaluate_feedback([row()], n_resamples=10, min_vote=2),
        # Refused before the runs or the log are read: never handed on to find out.
        lambda: evaluate_feedback("no/such/log.jsonl", {"a": "no/such/run.trec"}, min_vote=2),
    ],
)
def test_an_unknown_option_names_the_options_of_the_strategy_and_the_log(call):
    with pytest.raises(
        FeedbackError, match=r"unknown options .*strategy takes min_votes, dedup.*log path or table takes columns"
    ):
        call()


def test_strategy_parse_refuses_an_unknown_option_by_name():
    from haystack_irmetrics.errors import UnknownStrategyError

    with pytest.raises(UnknownStrategyError, match=r"unknown strategy options \['min_vote'\]"):
        Strategy.parse("mean", min_vote=2)
    with pytest.raises(UnknownStrategyError, match="unknown strategy options"):
        Strategy.parse(LAST, name="wilson")


@pytest.mark.parametrize("batch", [{"query_id": ["q1"]}, [{"query_id": "q1"}], "rows.parquet", None])
def test_the_spark_functions_take_arrow_batches_only(batch):
    from haystack_irmetrics.errors import FeedbackSchemaError
    from haystack_irmetrics.feedback import merge_partials, normalize_batches, partial_aggregate

    for name, call in (
        ("normalize_batches", lambda: list(normalize_batches([batch]))),
        ("partial_aggregate", lambda: list(partial_aggregate([batch]))),
        ("merge_partials", lambda: merge_partials([batch])),
    ):
        with pytest.raises(FeedbackSchemaError, match=rf"{name} takes pyarrow RecordBatches or Tables, got"):
            call()
