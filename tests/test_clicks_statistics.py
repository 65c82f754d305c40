"""The sufficient-statistics pass over Arrow batches, partition by partition, gives the local fit's parameters
(and on a local Spark session, under ``-m slow``)."""

from __future__ import annotations

import functools
import sys
import zlib

import numpy as np
import pyarrow as pa
import pytest

from haystack_irmetrics.clicks import ClickLog, make_model
from haystack_irmetrics.clicks.simulate import log_rows
from haystack_irmetrics.clicks.statistics import fit_statistics, session_statistics, statistics_schema
from haystack_irmetrics.errors import ClickModelError
from tests.test_clicks_models import simulated


def partitions(rows, n: int):
    """The rows split into ``n`` Arrow tables, every session whole in one (as a repartition by session)."""
    parts = [[] for _ in range(n)]
    for r in rows:
        parts[zlib.crc32(r["session"].encode()) % n].append(r)
    return [pa.Table.from_pylist(p) for p in parts if p]


def by_pair(model):
    queries, docs = model.fitted.pair_names()
    return {(q, d): i for i, (q, d) in enumerate(zip(queries, docs, strict=True))}


@pytest.mark.parametrize("name", ["pbm", "ubm", "dbn"])
def test_statistics_of_partitions_fit_the_local_parameters(name):
    rows = log_rows(simulated(name, 1_500))
    local = make_model(name, max_iter=40, tol=0, accelerate=False).fit(ClickLog(rows).sessions())
    stats = [batch for part in partitions(rows, 3) for batch in session_statistics(part.to_batches(), model=name)]
    assert all(b.schema == statistics_schema() for b in stats)
    merged = fit_statistics(name, stats, max_iter=40, tol=0, accelerate=False)
    mine, theirs = by_pair(local), by_pair(merged)
    assert set(mine) == set(theirs)
    keys = sorted(mine)
    assert np.abs(local.alpha[[mine[k] for k in keys]] - merged.alpha[[theirs[k] for k in keys]]).max() < 1e-12
    if name == "dbn":
        assert np.abs(local.sigma[[mine[k] for k in keys]] - merged.sigma[[theirs[k] for k in keys]]).max() < 1e-12
        assert abs(local.gamma - merged.gamma) < 1e-12
    else:
        assert np.abs(local.gamma - merged.gamma).max() < 1e-12
    assert merged.params().keys() == local.params().keys()


def flat(params, path=()):
    """``{(key, key, ...): value}`` of nested parameter dicts (pairs and ranks by name, not by code)."""
    if isinstance(params, dict):
        return {k: v for key, inner in params.items() for k, v in flat(inner, (*path, key)).items()}
    return {path: float(params)}


CLOSED_FORMS = ["gctr", "rctr", "ctr", "cascade", "dcm", "sdbn"]


@pytest.mark.parametrize("name", CLOSED_FORMS)
def test_statistics_of_partitions_give_the_closed_forms_local_parameters(name):
    rows = log_rows(simulated("dbn", 1_500))  # clicks below the first, several per session, none: every case
    local = make_model(name).fit(ClickLog(rows).sessions())
    stats = [batch for part in partitions(rows, 3) for batch in session_statistics(part.to_batches(), model=name)]
    assert all(b.schema == statistics_schema() for b in stats)
    merged = fit_statistics(name, stats)
    mine, theirs = flat(local.params()), flat(merged.params())
    assert mine.keys() == theirs.keys()
    assert len(mine) > 1 or name == "gctr"  # gctr: one click rate
    assert max(abs(mine[k] - theirs[k]) for k in mine) < 1e-12
    if name != "rctr":  # rctr has no per-document label
        labels = dict(zip(zip(*local.fitted.pair_names(), strict=True), local.labels().tolist(), strict=True))
        again = dict(zip(zip(*merged.fitted.pair_names(), strict=True), merged.labels().tolist(), strict=True))
        assert labels.keys() == again.keys() and max(abs(labels[k] - again[k]) for k in labels) < 1e-12


def test_statistics_are_for_the_click_models_and_need_rows():
    with pytest.raises(ClickModelError, match="click models"):
        list(session_statistics([], model="bogus"))
    with pytest.raises(ClickModelError, match="no statistics"):
        fit_statistics("pbm", [])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pbm", "ubm", "dbn", *CLOSED_FORMS])
def test_a_spark_job_gives_the_local_fit(name, tmp_path):
    pyspark = pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession
    from pyspark.sql.pandas.types import from_arrow_schema

    del pyspark
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYSPARK_PYTHON", sys.executable)
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("haystack-irmetrics-clicks")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "3")
            .getOrCreate()
        )
        try:
            rows = log_rows(simulated(name if name in ("pbm", "ubm", "dbn") else "dbn", 1_500))
            table = pa.Table.from_pylist([{k: str(v) for k, v in r.items()} for r in rows])
            df = spark.createDataFrame(table).repartition(3, "session")
            stats = df.mapInArrow(
                functools.partial(session_statistics, model=name), from_arrow_schema(statistics_schema())
            ).toArrow()
        finally:
            spark.stop()
    local = make_model(name, max_iter=40, tol=0, accelerate=False).fit(ClickLog(rows).sessions())
    merged = fit_statistics(name, [stats], max_iter=40, tol=0, accelerate=False)
    mine, theirs = flat(local.params()), flat(merged.params())
    assert mine.keys() == theirs.keys()
    assert max(abs(mine[k] - theirs[k]) for k in mine) < 1e-12
