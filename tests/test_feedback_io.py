"""Feedback logs in: JSONL, CSV/TSV, Parquet and tables read alike; malformed rows named by row (and line)."""

from __future__ import annotations

import gzip
import json

import polars as pl
import pytest

from haystack_irmetrics.errors import ParseError
from haystack_irmetrics.feedback import (
    FeedbackLog,
    FeedbackSchemaError,
    MalformedRowError,
    UnknownStrategyError,
    aggregate_feedback,
)

ROWS = [
    {"qid": "q1", "doc": "d1", "pos": 1, "grade": 1.0, "user": "u1", "when": "2024-05-01T10:00:00", "locale": "en"},
    {"qid": "q1", "doc": "d2", "pos": 2, "grade": 0.5, "user": "u2", "when": "2024-05-01T10:01:00", "locale": "en"},
    {"qid": "q1", "doc": "d3", "pos": 3, "grade": None, "user": "u2", "when": "2024-05-01T10:01:00", "locale": "de"},
    {"qid": "q2", "doc": "d1", "pos": 1, "grade": 0.3, "user": "u1", "when": "2024-05-02T09:00:00", "locale": "de"},
]
COLUMNS = {
    "query": "qid",
    "doc": "doc",
    "position": "pos",
    "vote": "grade",
    "user": "user",
    "timestamp": "when",
    "segment": "locale",
}


def write(tmp_path, name: str, rows: list[dict]) -> str:
    path = tmp_path / name
    if name.endswith((".jsonl", ".jsonl.gz")):
        text = "".join(json.dumps(r) + "\n" for r in rows)
        if name.endswith(".gz"):
            path.write_bytes(gzip.compress(text.encode()))
        else:
            path.write_text(text)
    elif name.endswith(".parquet"):
        pl.DataFrame(rows).write_parquet(path)
    else:
        sep = "\t" if name.endswith(".tsv") else ","
        keys = list(rows[0])
        lines = [sep.join(keys)] + [sep.join("" if r[k] is None else str(r[k]) for k in keys) for r in rows]
        path.write_text("\n".join(lines) + "\n")
    return str(path)


def canonical(log: FeedbackLog) -> list[tuple]:
    return log.to_frame().select("row", "query", "doc", "position", "vote", "user", "timestamp", "segment").rows()


@pytest.mark.parametrize("name", ["log.jsonl", "log.jsonl.gz", "log.csv", "log.tsv", "log.parquet"])
def test_every_format_reads_to_the_same_canonical_rows_as_the_in_memory_table(tmp_path, name):
    expected = canonical(FeedbackLog(ROWS, columns=COLUMNS))
    assert canonical(FeedbackLog(write(tmp_path, name, ROWS), columns=COLUMNS)) == expected
    assert expected[2][4] is None  # an empty vote is an impression, not an error
    assert expected[0][6] == 1714557600000000.0  # ISO time -> epoch microseconds


def test_small_batches_read_the_same_rows_with_the_same_numbers(tmp_path):
    path = write(tmp_path, "log.csv", ROWS * 5)
    assert canonical(FeedbackLog(path, columns=COLUMNS, batch_rows=3)) == canonical(FeedbackLog(path, columns=COLUMNS))


def test_words_booleans_and_numeric_text_are_votes_and_the_vote_map_extends_them():
    rows = [
        {"query_id": "q", "doc_id": f"d{i}", "position": i + 1, "vote": v}
        for i, v in enumerate(["UP", " down ", "thumbs_up", "0.25", True, "meh"])
    ]
    assert FeedbackLog(rows[:5]).to_frame()["vote"].to_list() == [1.0, 0.0, 1.0, 0.25, 1.0]
    # A vote_map replaces the default words (booleans always count): thumbs_up is unknown there.
    log = FeedbackLog(rows, vote_map={"meh": 0.5, "up": 1, "down": 0}, on_error="skip")
    assert log.to_frame()["vote"].to_list() == [1.0, 0.0, 0.25, 1.0, 0.5]
    assert log.skipped.select("row", "value").rows() == [(3, "thumbs_up")]


def test_position_base_zero_reads_zero_based_positions_as_first():
    rows = [
        {"query_id": "q", "doc_id": "a", "position": 0, "vote": 1},
        {"query_id": "q", "doc_id": "b", "position": 1, "vote": 0},
    ]
    assert FeedbackLog(rows, position_base=0).to_frame()["position"].to_list() == [1, 2]
    with pytest.raises(MalformedRowError, match="row 1: column 'position': position is below position_base=1"):
        FeedbackLog(rows).to_frame()


BAD_CSV = """query_id,doc_id,position,vote
q1,d1,1,1
q1,d2,two,1
q1,d3,3,1,extra

q1,d4,4,nan
,d5,5,1
q1,d6,6,maybe
q1,d7,7,
"""


def test_csv_malformed_row_raises_with_row_line_and_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(BAD_CSV)
    with pytest.raises(MalformedRowError) as e:
        FeedbackLog(path).to_frame()
    assert str(e.value).startswith(
        f"{path}: row 2 (line 3): column 'position': position is not an integer (value 'two')"
    )
    assert (e.value.row, e.value.line, e.value.column) == (2, 3, "position")


def test_csv_skip_policy_counts_and_lists_every_malformed_row_and_keeps_the_rest(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(BAD_CSV)
    log = FeedbackLog(path, on_error="skip")
    assert log.to_frame().select("row", "doc", "vote").rows() == [(1, "d1", 1.0), (8, "d7", None)]
    assert log.skipped.select("row", "line", "column", "reason").rows() == [
        (2, 3, "position", "position is not an integer"),
        (3, 4, None, "expected 4 fields, found 5: 'q1,d3,3,1,extra'"),
        (4, 5, "query_id", "query id is missing or empty"),  # a blank line is a row of empty fields
        (5, 6, "vote", "vote is not a finite number"),
        (6, 7, "query_id", "query id is missing or empty"),
        (7, 8, "vote", "vote is neither a number nor a word of the vote map"),
    ]
    assert (log.stats.rows, log.stats.usable, log.stats.skipped) == (8, 2, 6)


def test_csv_line_numbers_stay_exact_after_rows_the_parser_rejects(tmp_path):
    lines = ["query_id,doc_id,position,vote"] + [f"q,d{i},{i},1" for i in range(1, 6)]
    lines[2] = "q,d2,2,1,x"  # line 3: too many fields
    lines[5] = "q,d5,x,1"  # line 6: bad position, after the rejected line
    path = tmp_path / "x.csv"
    path.write_text("\n".join(lines) + "\n")
    log = FeedbackLog(path, on_error="skip", batch_rows=2)
    assert log.skipped.select("row", "line").rows() == [(2, 3), (5, 6)]
    assert log.to_frame().select("row", "line", "doc").rows() == [(1, 2, "d1"), (3, 4, "d3"), (4, 5, "d4")]


def test_jsonl_invalid_lines_are_named_by_line_and_blank_lines_are_ignored(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1}\n'
        "\n"
        '{"query_id": "q1", "doc_id": "d2", "position": 2, "vote": \n'
        '["not", "an", "object"]\n'
        '{"query_id": "q1", "doc_id": {"nested": 1}, "position": 3, "vote": "up"}\n'
        '{"query_id": "q1", "doc_id": "d4", "position": 4, "vote": "up"}\n'
    )
    with pytest.raises(MalformedRowError, match=r"row 2 \(line 3\): invalid JSON"):
        FeedbackLog(path).to_frame()
    log = FeedbackLog(path, on_error="skip")
    assert log.to_frame().select("row", "line", "doc", "vote").rows() == [(1, 1, "d1", 1.0), (5, 6, "d4", 1.0)]
    assert log.skipped.select("row", "line", "reason").rows() == [
        (2, 3, "invalid JSON: Expecting value (column 59)"),
        (3, 4, "expected a JSON object, found list"),
        (4, 5, "value is a JSON object or list, not a scalar"),
    ]


def test_parquet_malformed_rows_are_named_by_row(tmp_path):
    rows = [
        {"query_id": "q", "doc_id": "d1", "position": 1, "vote": 1.0},
        {"query_id": "q", "doc_id": None, "position": 2, "vote": float("inf")},
    ]
    path = write(tmp_path, "log.parquet", rows)
    with pytest.raises(
        MalformedRowError, match=r"log.parquet: row 2: column 'doc_id': document id is missing or empty"
    ):
        FeedbackLog(path).to_frame()


def test_missing_configured_column_is_a_schema_error_naming_the_available_ones(tmp_path):
    path = write(tmp_path, "log.csv", ROWS)
    with pytest.raises(
        FeedbackSchemaError,
        match=r"column\(s\) \['query_id', 'doc_id', 'position', 'vote'\] not found; the header has \['qid'",
    ):
        FeedbackLog(path).to_frame()
    with pytest.raises(FeedbackSchemaError, match="appear in no row"):
        FeedbackLog(write(tmp_path, "log.jsonl", ROWS), columns={**COLUMNS, "session": "sess"}).to_frame()


def test_unreadable_sources_raise_typed_errors(tmp_path):
    with pytest.raises(ParseError, match="file not found"):
        FeedbackLog(tmp_path / "nope.jsonl").to_frame()
    (tmp_path / "log.txt").write_text("query_id,doc_id\n")
    with pytest.raises(FeedbackSchemaError, match="cannot tell the format"):
        FeedbackLog(tmp_path / "log.txt").to_frame()
    with pytest.raises(UnknownStrategyError, match="on_error"):
        FeedbackLog(ROWS, on_error="ignore")


def test_a_float_id_column_is_a_schema_error_not_silently_text():
    with pytest.raises(FeedbackSchemaError, match=r"'qid' \(query\) has type float"):
        FeedbackLog(
            [{"qid": 1.5, "doc": "d", "pos": 1, "grade": 1}],
            columns={"query": "qid", "doc": "doc", "position": "pos", "vote": "grade"},
        ).to_frame()


def test_skipped_rows_reach_the_aggregate_and_its_summary():
    rows = [*ROWS, {"qid": "q3", "doc": "d9", "pos": 1, "grade": "??", "user": None, "when": None, "locale": None}]
    agg = aggregate_feedback(rows, columns=COLUMNS, on_error="skip")
    assert agg.summary()["skipped_rows"] == 1
    assert agg.skipped.select("row", "column", "value").rows() == [(5, "grade", "??")]
    assert "q3" not in agg.qrels().data


def test_csv_line_numbers_stay_exact_across_parser_blocks(tmp_path):
    lines = ["query_id,doc_id,position,vote"] + [f"q{i % 97},doc{i},{1 + i % 10},{i % 2}" for i in range(1, 20_001)]
    rejected = {101, 5_000, 12_345, 19_999}  # lines with a field too many
    for n in rejected:
        lines[n - 1] += ",x"
    path = tmp_path / "big.csv"
    path.write_text("\n".join(lines) + "\n")  # ~500 kB: several 64 kB parser blocks
    log = FeedbackLog(path, on_error="skip", batch_rows=1000)
    frame = log.to_frame()
    assert frame.height == 20_000 - len(rejected)
    assert (frame["line"] == frame["row"] + 1).all()
    assert frame["doc"].to_list() == [f"doc{i}" for i in range(1, 20_001) if i + 1 not in rejected]
    assert log.skipped["line"].to_list() == sorted(rejected)


def test_log_columns_named_row_or_line_are_ordinary_columns():
    rows = [{"query_id": "q", "doc_id": "d", "row": 7, "line": "A", "vote": 1}]
    frame = FeedbackLog(rows, columns={"position": "row"}).to_frame()
    assert frame.select("row", "line", "position").rows() == [(1, None, 7)]
