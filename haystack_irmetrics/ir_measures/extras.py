"""What ir_measures' open issues ask for and the core already has, through ir_measures' names.

* :data:`NCG`, normalised cumulative gain (``NCG@10``; terrierteam/ir_measures#19: TREC DL reports it, no
  provider has it): an ir_measures measure, registered so that ``ir_measures.parse_measure("NCG@10")`` reads it,
  computed by the ``irmetrics`` provider alone (from the core's gain curves).
* :func:`bootstrap_intervals`: a percentile bootstrap interval of each measure's mean from ``iter_calc``'s
  metrics (terrierteam/ir_measures#69), through :func:`haystack_irmetrics.stats.significance.bootstrap_ci`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from ir_measures import measures as _measures
from ir_measures.measures.base import MeanAgg

from ..errors import InvalidArgumentError
from ..stats.significance import bootstrap_ci


class _NCG(_measures.Measure):
    """Normalised Cumulative Gain at k: the sum of the top k's labels (negative ones count 0) over the same sum
    for the ideal ranking (every judged document, best label first); 0 where the ideal sums to 0. Used in the
    TREC Deep Learning track; ranked as trec_eval ranks (float32 scores, ties by doc id descending)."""

    __name__ = "NCG"
    NAME = __name__
    PRETTY_NAME = "Normalised Cumulative Gain"
    SHORT_DESC = "The cumulative gain of the top k over that of the ideal ranking."
    SUPPORTED_PARAMS = {  # noqa: RUF012 - ir_measures' own measures declare their parameters so
        "cutoff": _measures.ParamInfo(dtype=int, required=True, desc="ranking cutoff threshold")
    }


NCG = _NCG()
if "NCG" not in _measures.registry:  # ir_measures' registry refuses a name twice (a module reloaded)
    _measures.register(NCG)


@dataclass(frozen=True)
class Interval:
    """A measure's mean over its queries and the percentile bootstrap interval around it."""

    mean: float
    low: float
    high: float
    n_queries: int


def bootstrap_intervals(
    metrics: Iterable[Any], *, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0
) -> dict[Any, Interval]:
    """``{measure: Interval}`` from ``iter_calc``'s metrics (any provider's): each measure's per-query values
    resampled by query (numpy's linear percentiles of the resampled means, as scipy's ``bootstrap`` with
    ``method="percentile"``). The mean is the measure's own aggregate, as ``calc_aggregate`` gives it.

    :raises InvalidArgumentError: a measure summed rather than averaged (``NumQ``, ``NumRet``, ``NumRel``),
        a query given twice for one measure, or no metric at all.

    Usage::

        >>> from ir_measures import Metric, nDCG
        >>> metrics = [Metric(q, nDCG @ 10, v) for q, v in (("1", 0.5), ("2", 0.7), ("3", 0.9), ("4", 0.4))]
        >>> bootstrap_intervals(metrics, n_resamples=2000, seed=1)[nDCG @ 10]
        Interval(mean=0.625, low=0.45, high=0.8, n_queries=4)
    """
    values: dict[Any, dict[str, float]] = {}
    for metric in metrics:
        seen = values.setdefault(metric.measure, {})
        if metric.query_id in seen:
            raise InvalidArgumentError(f"query {metric.query_id!r} has two values of {metric.measure}")
        seen[metric.query_id] = metric.value
    if not values:
        raise InvalidArgumentError("no metric given: pass iter_calc's metrics (ir_measures.iter_calc(...))")
    out = {}
    for measure, per_query in values.items():
        agg = measure.aggregator()
        if not isinstance(agg, MeanAgg):
            raise InvalidArgumentError(f"{measure} is summed over the queries, not averaged: it has no mean to bound")
        for v in per_query.values():
            agg.add(v)
        column = np.fromiter(per_query.values(), np.float64, count=len(per_query))
        low, high = bootstrap_ci(column, confidence=confidence, n_resamples=n_resamples, seed=seed)
        out[measure] = Interval(agg.result(), float(low), float(high), len(per_query))
    return out
