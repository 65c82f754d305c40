"""The feedback aggregation's Arrow functions inside a real (local) Spark job, as the README shows them.

``mapInArrow`` runs them in Spark's Python workers on the partitions Spark chose; the partials merge
to the judgments the local path gives. Needs pyspark (the ``spark`` extra, part of ``test``) and a
Java runtime; without Java the module is skipped (it is a system package, not a Python one).
"""

from __future__ import annotations

import functools
import os
import shutil

import polars as pl
import pyarrow as pa
import pytest

from haystack_irmetrics.feedback import Strategy, aggregate_feedback
from haystack_irmetrics.feedback.aggregate import finalize, merge_partials, partial_aggregate, partial_schema
from haystack_irmetrics.feedback.normalize import canonical_schema, normalize_batches

from .test_feedback_aggregate import COLS, random_log

pyspark = pytest.importorskip("pyspark", reason="the spark extra (pip install 'haystack-irmetrics[spark]')")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime (none on PATH, no JAVA_HOME)", allow_module_level=True)


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no lookup of the machine's name
    session = (
        SparkSession.builder.master("local[2]")
        .appName("haystack-irmetrics-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _log_table(rows: list[dict]) -> pa.Table:
    """The log as strings (what a text log gives Spark), with a global row number for "last vote" ties."""
    records = [{k: (None if v is None else str(v)) for k, v in r.items()} for r in rows]
    table = pa.Table.from_pylist(records, schema=pa.schema([(k, pa.string()) for k in records[0]]))
    return table.append_column("row", pa.array(range(1, len(rows) + 1), pa.int64()))


@pytest.mark.parametrize(("strategy", "dedup"), [("wilson", "last"), ("mean", "none"), ("majority", "first")])
def test_map_in_arrow_on_spark_partitions_merges_to_the_local_judgments(spark, strategy, dedup):
    from pyspark.sql.pandas.types import from_arrow_schema

    rows = random_log(11)
    strat = Strategy(strategy, dedup=dedup)
    # Spark takes a pyarrow Table as it is (no pandas: its string dtype would turn None into "NaN").
    df = spark.createDataFrame(_log_table(rows)).repartition(3)
    normalize = functools.partial(normalize_batches, columns={"query": "query_id", "doc": "doc_id", **COLS})
    partials = df.mapInArrow(normalize, from_arrow_schema(canonical_schema())).mapInArrow(
        functools.partial(partial_aggregate, strategy=strat), from_arrow_schema(partial_schema())
    )
    collected = partials.toArrow()
    assert collected.num_rows > 0
    merged = pl.from_arrow(merge_partials(collected.to_batches(), strat))
    judgments, _ = finalize(merged, strat, by_segment=False)
    local = aggregate_feedback(rows, strat, columns=COLS).judgments
    key = ["query", "doc"]
    assert judgments.drop("raw_votes").sort(key).equals(local.drop("raw_votes").sort(key))
    assert judgments.height == local.height > 10
