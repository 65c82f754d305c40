"""The feedback aggregation's Arrow functions inside a real (local) Spark job, as the README shows them.

``mapInArrow`` runs them in Spark's Python workers on the partitions Spark chose; the partials merge
to the judgments the local path gives. Needs pyspark (the ``spark`` extra, part of ``test``) and a
Java runtime; without Java the module is skipped (it is a system package, not a Python one).
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import sys

import polars as pl
import pyarrow as pa
import pytest

from haystack_irmetrics.feedback import Strategy, aggregate_feedback
from haystack_irmetrics.feedback.aggregate import finalize, merge_partials, partial_aggregate, partial_schema
from haystack_irmetrics.feedback.schema import canonical_schema, normalize_batches

from .test_feedback_aggregate import COLS, random_log

pyspark = pytest.importorskip("pyspark", reason="the spark extra (pip install 'haystack-irmetrics[spark]')")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime (none on PATH, no JAVA_HOME)", allow_module_level=True)


@pytest.fixture(scope="module")
def bare_python_on_path(tmp_path_factory):
    """``python3`` and ``python`` on PATH are interpreters without our packages (as on a fresh machine).

    They fail loudly, so a Spark worker started from PATH instead of ``sys.executable`` fails the test
    rather than passing only where pyarrow happens to be installed system-wide.
    """
    folder = tmp_path_factory.mktemp("bare-python")
    for name in ("python3", "python"):
        shim = folder / name
        shim.write_text(
            "#!/bin/sh\necho 'a bare python3 from PATH was started, not the interpreter named' >&2\nexit 1\n"
        )
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
        for var in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
            patch.delenv(var, raising=False)
        yield folder


@pytest.fixture(scope="module")
def spark(bare_python_on_path):
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no lookup of the machine's name
    # As the docs' recipe: Spark's Python workers run this interpreter, not the first python3 on PATH
    # (pyspark reads PYSPARK_PYTHON when the context starts; the spark.pyspark.python setting only
    # reaches spark-submit).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYSPARK_PYTHON", sys.executable)
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


def test_spark_workers_run_the_interpreter_named_in_the_session(spark, bare_python_on_path):
    assert shutil.which("python3") == str(bare_python_on_path / "python3")  # PATH's python3 is the bare one
    executables = spark.sparkContext.parallelize([0, 1], 2).map(lambda _: __import__("sys").executable).collect()
    assert set(executables) == {sys.executable}


def _log_table(rows: list[dict]) -> pa.Table:
    """The log as strings (what a text log gives Spark)."""
    records = [{k: (None if v is None else str(v)) for k, v in r.items()} for r in rows]
    return pa.Table.from_pylist(records, schema=pa.schema([(k, pa.string()) for k in records[0]]))


def _spark_judgments(spark, tables: list[pa.Table], columns: dict, strategy: Strategy, partitions: int | None):
    """The README's recipe on the log ``tables`` (in log order, e.g. files): rows numbered in log order
    before any shuffle, two mapInArrow steps, one merge."""
    from functools import reduce

    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    # Spark takes a pyarrow Table as it is (no pandas: its string dtype would turn None into "NaN").
    df = reduce(lambda x, y: x.union(y), [spark.createDataFrame(t) for t in tables])
    df = df.withColumn("row", F.monotonically_increasing_id() + 1)
    if partitions is not None:
        df = df.repartition(partitions)
    partials = df.mapInArrow(
        functools.partial(normalize_batches, columns=columns), from_arrow_schema(canonical_schema())
    ).mapInArrow(functools.partial(partial_aggregate, strategy=strategy), from_arrow_schema(partial_schema()))
    collected = partials.toArrow()
    assert collected.num_rows > 0
    merged = merge_partials(collected.to_batches(), strategy)
    judgments, _ = finalize(pl.from_arrow(merged), strategy, by_segment=False)
    return judgments.drop("raw_votes").sort(["query", "doc"])


@pytest.mark.parametrize(("strategy", "dedup"), [("wilson", "last"), ("mean", "none"), ("majority", "first")])
def test_map_in_arrow_on_spark_partitions_merges_to_the_local_judgments(spark, strategy, dedup):
    rows = random_log(11)
    strat = Strategy(strategy, dedup=dedup)
    columns = {"query": "query_id", "doc": "doc_id", **COLS}
    judgments = _spark_judgments(spark, [_log_table(rows)], columns, strat, partitions=3)
    local = aggregate_feedback(rows, strat, columns=COLS).judgments.drop("raw_votes").sort(["query", "doc"])
    assert judgments.equals(local) and judgments.height > 10


def test_a_vote_changed_across_files_without_timestamps_keeps_the_last_one(spark):
    # u1 votes q1/d1 up in the first file (its 16th row), then down in the second (its 4th row); no
    # timestamps, so only the log order decides. Rows numbered per file would keep the up vote.
    rows = [{"query_id": f"q{i + 2}", "doc_id": "d1", "position": 1, "vote": 1, "user": "u9"} for i in range(21)]
    rows[15] = {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1, "user": "u1"}
    rows.append({"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 0, "user": "u1"})
    strat = Strategy("mean", dedup="last")
    columns = {"query": "query_id", "doc": "doc_id", "user": "user"}
    table = _log_table(rows)
    judgments = _spark_judgments(spark, [table.slice(0, 18), table.slice(18)], columns, strat, partitions=None)
    q1 = judgments.filter(pl.col("query") == "q1")
    assert q1["label"].to_list() == [0.0]
    local = aggregate_feedback(rows, strat, columns={"user": "user"}).judgments
    assert judgments.equals(local.drop("raw_votes").sort(["query", "doc"]))
