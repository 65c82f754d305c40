"""io/'s one log reader: CSV/TSV, JSONL, Parquet and tables read in validated batches, its column roles a parameter.

A package declares its roles (``feedback.FeedbackColumns``: votes; ``clicks.ClickColumns``: clicks); the reader
knows no role by name. A log of roles made up here reads the same from every format, its malformed rows named;
feedback's and clicks' logs are that reader with their own roles, and neither package's roles are the other's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from haystack_irmetrics.clicks import ClickColumns, ClickLog
from haystack_irmetrics.errors import FeedbackSchemaError, MalformedRowError
from haystack_irmetrics.feedback import FeedbackColumns, FeedbackLog
from haystack_irmetrics.io.log_columns import LogColumns, Role, canonical_schema
from haystack_irmetrics.io.logs import Log


@dataclass(frozen=True)
class RatingColumns(LogColumns):
    """A log no package of ours reads: a rating of a document per reader, with a confidence."""

    query: str = "qid"
    doc: str = "docid"
    rating: str | None = "stars"
    sure: str | None = "confidence"
    reader: str | None = None

    ROLES: ClassVar[Mapping[str, Role]] = {
        "query": Role("id", label="query"),
        "doc": Role("id", label="document"),
        "rating": Role("number"),
        "sure": Role("probability"),
        "reader": Role("text"),
    }
    purpose: ClassVar[str] = "rating logs"
    rows_name: ClassVar[str] = "rating rows"


ROWS = [
    {"qid": "q1", "docid": "d1", "stars": "good", "confidence": 0.9, "who": "ann"},
    {"qid": "q1", "docid": "d2", "stars": 2, "confidence": 1, "who": "bob"},
    {"qid": 7, "docid": "d3", "stars": "", "confidence": 0.5, "who": "ann"},
]
WORDS = {"rating": {"good": 3.0}}


def ratings(source, **options) -> Log:
    """A log of the ratings' roles, given the words a rating may be."""
    return Log(source, words=WORDS, **options)


def write(rows: list[dict], tmp_path, fmt: str):
    path = tmp_path / f"log.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "csv":
        keys = list(rows[0])
        path.write_text(",".join(keys) + "\n" + "".join(",".join(str(r[k]) for k in keys) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist([{k: str(v) for k, v in r.items()} for r in rows]), path)
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet", "table"])
def test_a_log_of_any_roles_reads_the_same_from_every_format(tmp_path, fmt):
    source = ROWS if fmt == "table" else write(ROWS, tmp_path, fmt)
    log = ratings(source, columns=RatingColumns(reader="who"))
    frame = log.to_frame()
    assert frame.columns == ["row", "line", "query", "doc", "rating", "sure", "reader"]
    assert frame.select("query", "doc", "rating", "sure", "reader").rows() == [
        ("q1", "d1", 3.0, 0.9, "ann"),
        ("q1", "d2", 2.0, 1.0, "bob"),
        ("7", "d3", None, 0.5, "ann"),  # a blank number is no value, an int id its text
    ]
    assert log.stats.rows == 3 and log.stats.skipped == 0
    assert canonical_schema(RatingColumns).names == [
        "row",
        "line",
        *RatingColumns.roles(),
        "error",
        "error_column",
        "error_value",
    ]


def test_a_malformed_row_is_named_with_its_roles_rule_and_skipped_on_request(tmp_path):
    rows = [*ROWS, {"qid": "q2", "docid": "d9", "stars": "meh", "confidence": 1.5, "who": "cy"}]
    path = write(rows, tmp_path, "csv")
    with pytest.raises(
        MalformedRowError,
        match=r"row 4 \(line 5\): column 'stars': rating is neither a number nor a word of the rating map",
    ):
        ratings(path, columns=RatingColumns()).to_frame()
    log = ratings(path, columns=RatingColumns(), on_error="skip")
    assert log.to_frame().height == 3
    assert log.skipped.select("row", "column", "reason").rows() == [
        (4, "stars", "rating is neither a number nor a word of the rating map")
    ]
    with pytest.raises(FeedbackSchemaError, match=r"rating rows: column\(s\) \['nope'\] not found"):
        ratings(ROWS, columns=RatingColumns(sure="nope")).to_frame()


def test_feedback_and_clicks_read_through_the_one_reader_each_with_its_own_roles():
    assert issubclass(FeedbackLog, Log)
    click = ClickLog([{"session": "s", "query_id": "q", "doc_id": "d", "position": 1, "click": "yes"}])
    assert type(click.rows) is Log and isinstance(click.rows.columns, ClickColumns)
    assert click.rows.to_frame().columns == ["row", "line", *ClickColumns.roles()]
    assert set(ClickColumns.roles()) & {"vote", "user", "query_text"} == set()
    assert set(FeedbackColumns.roles()) & {"click", "team", "propensity"} == set()
    with pytest.raises(FeedbackSchemaError, match=r"unknown column roles \['click'\]"):
        FeedbackColumns.coerce({"click": "clicked"})
    with pytest.raises(FeedbackSchemaError, match=r"unknown column roles \['vote'\]"):
        ClickColumns.coerce({"vote": "grade"})


def test_a_click_table_is_named_as_click_rows_a_vote_table_as_feedback_rows():
    with pytest.raises(FeedbackSchemaError, match=r"^click rows: column\(s\) \['click'\] not found"):
        ClickLog([{"session": "s", "query_id": "q", "doc_id": "d", "position": 1}]).sessions()
    with pytest.raises(FeedbackSchemaError, match=r"^feedback rows: column\(s\) \['vote'\] not found"):
        FeedbackLog([{"query_id": "q", "doc_id": "d", "position": 1}]).to_frame()
