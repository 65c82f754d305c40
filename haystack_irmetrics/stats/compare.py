"""One system against another over several metrics: deltas, intervals, tests and Holm-adjusted p-values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from ..checks import choice
from .significance import (
    StatsInputError,
    _same_index,
    bootstrap_ci,
    check_bootstrap_size,
    check_resamples,
    holm,
    paired_t_test,
    per_query_values,
    randomization_test,
)

TESTS = ("randomization", "t")


@dataclass(frozen=True)
class Comparison:
    """System A vs system B on one metric (a name, or any key given to :func:`compare_paired`), same ``n`` queries.

    ``delta = mean_a - mean_b``; ``ci_low``/``ci_high``: percentile bootstrap interval of the delta;
    ``p_t``/``p_randomization``: two-sided p-values; ``*_holm``: Holm-adjusted over the metrics compared
    together (one family per call of :func:`compare_paired`).
    """

    metric: Any
    n: int
    mean_a: float
    mean_b: float
    delta: float
    ci_low: float
    ci_high: float
    p_t: float
    p_randomization: float
    p_t_holm: float
    p_randomization_holm: float

    def p(self, test: str = "randomization", adjusted: bool = True) -> float:
        choice(test, "test", TESTS, error=StatsInputError)
        name = "p_t" if test == "t" else "p_randomization"
        return getattr(self, name + ("_holm" if adjusted else ""))

    def marker(self, test: str = "randomization", levels: Sequence[float] = (0.05, 0.01)) -> str:
        """``"*"`` per significance level the Holm-adjusted p-value is below (``""``, ``"*"``, ``"**"``)."""
        p = self.p(test)
        return "*" * sum(p < level for level in levels)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def format_p(p: float) -> str:
    """A p-value as the reports print it: four decimals, ``<0.0001`` below."""
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def holm_adjust(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons with ``p_t_holm`` and ``p_randomization_holm`` adjusted over all of them as one family.

    For comparisons made in several calls of :func:`compare_paired` that form one family of tests (several
    runs against one baseline, each on several measures: Holm over runs × measures); their own ``*_holm``
    values are replaced, the unadjusted p-values kept.

    Usage::

        >>> first = compare_paired({"P@10": [0.5, 0.7, 0.9, 0.4]}, {"P@10": [0.3, 0.6, 0.5, 0.4]})
        >>> second = compare_paired({"P@10": [0.5, 0.7, 0.9, 0.1]}, {"P@10": [0.3, 0.6, 0.5, 0.4]})
        >>> [(c.p_randomization, c.p_randomization_holm) for c in first + second]
        [(0.25, 0.25), (0.625, 0.625)]
        >>> [(c.p_randomization, c.p_randomization_holm) for c in holm_adjust(first + second)]
        [(0.25, 0.5), (0.625, 0.625)]
    """
    items = list(comparisons)
    if not all(isinstance(c, Comparison) for c in items):
        raise StatsInputError("holm_adjust takes Comparison objects (from compare_paired)")
    if not items:
        return []
    p_t = holm([c.p_t for c in items]).tolist()
    p_r = holm([c.p_randomization for c in items]).tolist()
    return [
        replace(c, p_t_holm=float(t), p_randomization_holm=float(r)) for c, t, r in zip(items, p_t, p_r, strict=True)
    ]


def compare_paired(
    a: Mapping[Any, Any],
    b: Mapping[Any, Any],
    *,
    families: Mapping[Any, Any] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    intervals: bool = True,
) -> list[Comparison]:
    """Compare per-query values ``a[metric]`` with ``b[metric]`` (aligned arrays) for every metric of ``a``.

    All metrics share one set of random sign patterns and bootstrap resamples (one matrix product per
    batch, whatever the number of metrics). Holm's correction runs separately for each test over each
    family: ``families[metric]`` names a metric's family (default: all metrics of the call form one).
    ``intervals=False`` skips the bootstrap (``ci_low``/``ci_high`` are NaN) for callers that resample once
    for many comparisons (:func:`~.significance.bootstrap_means`).

    Usage::

        >>> a = {"NDCG@10": [0.5, 0.7, 0.9, 0.4, 0.8], "P@10": [0.2, 0.3, 0.4, 0.1, 0.3]}
        >>> b = {"NDCG@10": [0.3, 0.6, 0.5, 0.4, 0.5], "P@10": [0.2, 0.2, 0.3, 0.1, 0.2]}
        >>> [(c.metric, round(c.delta, 3), c.p_randomization, c.p_randomization_holm) for c in compare_paired(a, b)]
        [('NDCG@10', 0.2, 0.125, 0.25), ('P@10', 0.06, 0.25, 0.25)]
    """
    names = _metric_names(a, b, families)
    if not names:
        return []
    x, y = _columns(a, b, names)
    if intervals:  # before any test runs
        check_resamples(n_resamples)
        check_bootstrap_size(n_resamples, len(names))
    t = paired_t_test(x, y)
    r = randomization_test(x, y, n_resamples=n_resamples, seed=seed)
    if intervals:
        low, high = bootstrap_ci(x, y, confidence=confidence, n_resamples=n_resamples, seed=seed)
    else:
        low = high = np.full(x.shape[1], np.nan)
    p_t = np.asarray(t.pvalue)
    p_r = np.asarray(r.pvalue)
    p_t_holm, p_r_holm = _holm_by_family(names, families, p_t, p_r)
    mean_a, mean_b = x.mean(axis=0), y.mean(axis=0)
    return [
        Comparison(
            metric=m,
            n=x.shape[0],
            mean_a=float(mean_a[i]),
            mean_b=float(mean_b[i]),
            delta=float(mean_a[i] - mean_b[i]),
            ci_low=float(low[i]),
            ci_high=float(high[i]),
            p_t=float(p_t[i]),
            p_randomization=float(p_r[i]),
            p_t_holm=float(p_t_holm[i]),
            p_randomization_holm=float(p_r_holm[i]),
        )
        for i, m in enumerate(names)
    ]


def _metric_names(a: Mapping[Any, Any], b: Mapping[Any, Any], families: Mapping[Any, Any] | None) -> list[Any]:
    """The metrics of ``a``, once ``a`` and ``b`` are mappings holding each and ``families`` names each's family."""
    for side, values in (("first", a), ("second", b)):
        if not isinstance(values, Mapping):
            raise StatsInputError(
                f"compare_paired takes {{metric: per-query values}} for each system; the {side} is "
                f"{type(values).__name__}"
            )
    if families is not None and not isinstance(families, Mapping):
        raise StatsInputError(f"families must map each metric to a family name, got {type(families).__name__}")
    names = list(a)
    missing = [m for m in names if m not in b]
    if missing:
        raise StatsInputError(f"metrics {missing} are missing from the second system")
    if families is not None and (unnamed := [m for m in names if m not in families]):
        raise StatsInputError(f"families names no family for metrics {unnamed}")
    return names


def _columns(a: Mapping[Any, Any], b: Mapping[Any, Any], names: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)``: each system's per-query values, a column per metric, the queries the same for every column."""
    for m in names:
        _same_index(a[m], b[m])
    shape = per_query_values(a[names[0]]).shape
    columns: dict[tuple[str, Any], np.ndarray] = {}
    for side, values in (("first", a), ("second", b)):
        for m in names:
            column = columns[side, m] = per_query_values(values[m])
            if column.ndim != 1 or column.shape != shape:
                raise StatsInputError(
                    f"every metric needs one value per query, the same queries for both systems: {m!r} of the "
                    f"{side} system has shape {column.shape}, {names[0]!r} of the first {shape}"
                )
    x = np.column_stack([columns["first", m] for m in names])
    y = np.column_stack([columns["second", m] for m in names])
    return x, y


def _holm_by_family(
    names: list[Any], families: Mapping[Any, Any] | None, p_t: np.ndarray, p_r: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Both tests' p-values Holm-adjusted within each family of metrics (default: all metrics one family)."""
    groups: dict[Any, list[int]] = {}
    for i, m in enumerate(names):
        family = None if families is None else families[m]
        try:
            groups.setdefault(family, []).append(i)
        except TypeError:  # unhashable
            raise StatsInputError(f"families[{m!r}] must be a name (str, int, ...), got {family!r}") from None
    p_t_holm, p_r_holm = np.empty(len(names)), np.empty(len(names))
    for idx in groups.values():
        p_t_holm[idx], p_r_holm[idx] = holm(p_t[idx]), holm(p_r[idx])
    return p_t_holm, p_r_holm


__all__ = ["TESTS", "Comparison", "compare_paired", "format_p", "holm_adjust"]
