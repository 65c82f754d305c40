"""Paired significance tests and bootstrap intervals for per-query scores of two systems.

All functions take per-query values aligned by query (``a[i]`` and ``b[i]`` are the same query), as
1-D arrays or as ``(n_queries, n_metrics)`` matrices, where every metric column is tested with the
same random draws (one pass, not one per metric). Results are deterministic given ``seed``.

* :func:`paired_t_test` -- :func:`scipy.stats.ttest_rel` (two-sided), with the degenerate cases defined:
  identical systems give t = 0, p = 1; a constant non-zero difference gives t = +-inf, p = 0 (differences
  that agree to 1e-12 of their size count as constant).

* :func:`randomization_test` -- the paired randomization (sign-flip permutation) test of the mean
  difference, with :func:`scipy.stats.permutation_test`'s conventions (``permutation_type="samples"``):
  every one of the ``2**n`` sign patterns when that is at most ``n_resamples`` (exact p-value), else
  ``n_resamples`` random ones with p = (hits + 1) / (n_resamples + 1); two-sided p is twice the smaller
  one-sided p, capped at 1.
* :func:`bootstrap_ci` -- the percentile bootstrap interval of the mean (resampling queries), drawn as
  multinomial weights so all columns share one matrix product per batch.
* :func:`holm` -- Holm's step-down adjustment of a family of p-values.

Rounding is no difference: where ``b`` is given, a query's difference within 1e-12 of the larger
magnitude of that query's two values (``0.1 + 0.2`` against ``0.3``) counts as 0 in every test and interval,
so two systems that differ only by rounding are identical (t = 0, p = 1) for all of them. Values must
lie within +-1e100, so that no sum of squares overflows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._extras import require
from ..checks import number, whole
from ..errors import InvalidSeedError, StatsInputError

#: Matrix elements per batch of random draws (bounds memory: 8 bytes each).
_BATCH_ELEMENTS = 1 << 22


MAX_RESAMPLES = 10**8  # beyond this the resampled means alone outgrow memory (and add no precision)
#: Resampled means a bootstrap keeps (resamples x columns, 8 bytes each): 2 GiB.
MAX_MEANS = 2**28

#: Relative size below which a difference is rounding (floats carry ~16 digits).
_ROUNDING = 1e-12
#: Largest magnitude accepted: squares and sums of 1e8 of them stay finite.
_LIMIT = 1e100


def per_query_values(a: Any, what: str = "per-query values") -> np.ndarray:
    """``a`` as float64; anything but real numbers (a numeric string, a bool, a dict too) raises
    :class:`StatsInputError` (the check every test, interval and plot of per-query values applies)."""
    try:
        x = np.asarray(a)
    except ValueError as e:  # ragged lists
        raise StatsInputError(f"{what} must be a 1-D or 2-D array of numbers ({e})") from None
    if x.dtype.kind not in "fiu":
        example = repr(x.flat[0]) if x.size else "none"
        raise StatsInputError(f"{what} must be real numbers, got {type(a).__name__} of {x.dtype} (e.g. {example})")
    return x.astype(np.float64)


#: The largest seed: seeds are whole numbers from 0 to 2**32 - 1 in every function and command.
MAX_SEED = 2**32 - 1


def seed_value(seed: Any, name: str = "seed") -> int:
    """``seed`` as an int, checked: a whole number from 0 to :data:`MAX_SEED` (a Python or numpy int; a bool,
    a float, a string or a number out of range raise). The one check of every seed the package takes, the
    ``--seed`` of every command included.

        >>> seed_value(7), seed_value(np.int64(2**32 - 1))
        (7, 4294967295)
        >>> seed_value(-1)
        Traceback (most recent call last):
        haystack_irmetrics.errors.InvalidSeedError: seed must be a whole number from 0 to 4294967295, got -1

    :raises InvalidSeedError: naming ``name`` and the value (an :class:`~haystack_irmetrics.errors.InvalidArgumentError`).
    """
    return whole(seed, name, least=0, most=MAX_SEED, error=InvalidSeedError)


def check_seed(seed: Any) -> np.random.Generator:
    """The generator of ``seed``: a seed :func:`seed_value` accepts, ``None`` (fresh entropy) or a Generator.

    :raises InvalidSeedError: any other value.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(None if seed is None else seed_value(seed))


def check_resamples(n_resamples: Any, least: int = 2) -> None:
    """``n_resamples`` is an int in ``[least, MAX_RESAMPLES]`` (bootstraps need 2, randomization 1)."""
    whole(n_resamples, "n_resamples", least=least, error=StatsInputError)
    if n_resamples > MAX_RESAMPLES:
        raise StatsInputError(f"n_resamples must be at most {MAX_RESAMPLES:,}, got {n_resamples:,}")


def check_bootstrap_size(n_resamples: int, columns: int) -> None:
    """A bootstrap keeps ``n_resamples x columns`` means: refuse more than :data:`MAX_MEANS` up front."""
    if n_resamples * columns > MAX_MEANS:
        raise StatsInputError(
            f"{n_resamples:,} resamples of {columns:,} columns are {n_resamples * columns:,} means, more than the "
            f"{MAX_MEANS:,} ({MAX_MEANS * 8 // 2**30} GiB) kept at once: use fewer resamples or columns"
        )


def check_confidence(confidence: Any) -> float:
    return float(number(confidence, "confidence", 0, 1, closed="neither", error=StatsInputError))


def _pair(a: Any, b: Any | None = None) -> tuple[np.ndarray, bool]:
    """(differences as an (n, m) float64 matrix, rounding-level ones set to 0; whether the input was 1-D)."""
    x = _checked(per_query_values(a))
    one, n = x.ndim == 1, x.shape[0]
    if b is None:
        return x.reshape(n, -1), one
    y = _checked(_same_shape(x, per_query_values(b)))
    _same_index(a, b)
    x, y = x.reshape(n, -1), y.reshape(n, -1)
    d = x - y
    # Each query's difference against that query's own values: one large value elsewhere in the
    # column must not swallow real small differences.
    d[np.abs(d) <= _ROUNDING * np.maximum(np.abs(x), np.abs(y))] = 0.0
    return d, one


def _checked(x: np.ndarray) -> np.ndarray:
    if x.ndim not in (1, 2):
        raise StatsInputError(f"per-query values must be 1-D or (queries, metrics), got shape {x.shape}")
    if x.shape[0] < 2:
        raise StatsInputError(f"need at least 2 queries to test, got {x.shape[0]}")
    return _finite_within_limit(x, "per-query values")


def _finite_within_limit(x: np.ndarray, what: str) -> np.ndarray:
    if not np.isfinite(x).all():
        raise StatsInputError(f"{what} contain NaN or infinity")
    if x.size and np.abs(x).max() > _LIMIT:
        raise StatsInputError(f"{what} must lie within +-{_LIMIT:g}, got {np.abs(x).max():g}")
    return x


def _same_shape(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.shape != b.shape:
        raise StatsInputError(f"paired values need the same queries: shapes {a.shape} and {b.shape}")
    return b


def _labels(values: Any, axis: str = "index") -> Any:
    """A pandas object's row (``"index"``) or column labels, else None (a list's ``index`` is a method;
    a pyarrow Table's ``columns`` are its data, and it has no ``index``)."""
    if axis != "index" and _labels(values) is None:
        return None
    found = getattr(values, axis, None)
    return None if found is None or callable(found) else found


def _same_labels(la: Any, lb: Any) -> bool:
    if hasattr(la, "equals"):
        return bool(la.equals(lb))  # pandas: a missing label equals itself
    return np.array_equal(np.asarray(la, dtype=object), np.asarray(lb, dtype=object))


def _same_index(a: Any, b: Any) -> None:
    """Values are paired by position: refuse two labelled (pandas) inputs whose labels are not in the same order."""
    for axis, fix in (("index", "b.reindex(a.index)"), ("columns", "b[a.columns]")):
        la, lb = _labels(a, axis), _labels(b, axis)
        if la is not None and lb is not None and not _same_labels(la, lb):
            raise StatsInputError(
                f"the two systems' values carry different {'row' if axis == 'index' else 'column'} labels (pandas "
                f"objects are paired by position, not by label): align them first, e.g. {fix}"
            )


def _out(values: np.ndarray, one: bool) -> Any:
    return float(values[0]) if one else values


@dataclass(frozen=True)
class TestResult:
    """A test's statistic and p-value (floats for 1-D input, arrays with one value per metric column)."""

    statistic: Any
    pvalue: Any
    n: int
    method: str


def paired_t_test(a: Any, b: Any | None = None) -> TestResult:
    """Two-sided paired t-test of ``mean(a - b) == 0`` (:func:`scipy.stats.ttest_rel`); with ``b`` None,
    ``a`` holds the differences (:func:`scipy.stats.ttest_1samp` against 0).

    Usage::

        >>> r = paired_t_test([0.5, 0.7, 0.9, 0.4], [0.3, 0.6, 0.5, 0.4])
        >>> round(r.statistic, 4), round(r.pvalue, 4)
        (2.0494, 0.1328)
    """
    require("scipy", purpose="the paired t-test")
    from scipy import stats

    d, one = _pair(a, b)
    n = d.shape[0]
    peak = np.abs(d).max(axis=0)
    # Differences equal up to rounding (e.g. 0.2 - 0.1 vs 0.6 - 0.5) are constant, not a tiny variance.
    varied = np.ptp(d, axis=0) > _ROUNDING * peak
    t = np.zeros(d.shape[1])
    p = np.ones(d.shape[1])
    if varied.any():
        if b is None:
            res = stats.ttest_1samp(d[:, varied], 0.0, axis=0)
        else:  # scipy's own arithmetic on the values as given
            res = stats.ttest_rel(
                per_query_values(a).reshape(n, -1)[:, varied], per_query_values(b).reshape(n, -1)[:, varied], axis=0
            )
        t[varied] = res.statistic
        p[varied] = res.pvalue
    constant = ~varied & (peak > 0)
    t[constant] = np.copysign(np.inf, d.mean(axis=0)[constant])
    p[constant] = 0.0
    return TestResult(_out(t, one), _out(p, one), n, "paired t-test")


def _tolerance(d: np.ndarray) -> np.ndarray:
    # Means computed in different summation orders differ by a few ulps; compare within this.
    return 1e-12 * np.maximum(np.abs(d).mean(axis=0), 1e-300)


def randomization_test(
    a: Any,
    b: Any | None = None,
    *,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator | None = 0,
    alternative: str = "two-sided",
) -> TestResult:
    """Paired randomization test of the mean difference (sign flips of ``a - b``).

    :param a: per-query values of system A (or the differences, when ``b`` is None).
    :param b: per-query values of system B, aligned with ``a``.
    :param n_resamples: random sign patterns; when ``2**n <= n_resamples`` all patterns are enumerated.
    :param seed: seed or :class:`numpy.random.Generator` (deterministic for a given seed).
    :param alternative: ``"two-sided"``, ``"greater"`` (A better) or ``"less"``.

    Usage::

        >>> r = randomization_test([0.5, 0.7, 0.9, 0.4], [0.3, 0.6, 0.5, 0.4])  # 16 patterns: exact
        >>> r.statistic, r.pvalue, r.method
        (0.175, 0.25, 'paired randomization (exact, 16 sign patterns)')
    """
    if alternative not in ("two-sided", "greater", "less"):
        raise StatsInputError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    check_resamples(n_resamples, 1)
    rng = check_seed(seed)
    d, one = _pair(a, b)
    n, m = d.shape
    observed = d.mean(axis=0)
    tol = _tolerance(d)
    exact = n < 63 and 2**n <= n_resamples
    total = 2**n if exact else n_resamples
    greater = np.zeros(m, np.int64)
    less = np.zeros(m, np.int64)
    rows = max(1, _BATCH_ELEMENTS // n)
    d_t = np.ascontiguousarray(d.T)
    for start in range(0, total, rows):
        count = min(rows, total - start)
        if exact:
            codes = np.arange(start, start + count, dtype=np.int64)
            bits = (codes[:, None] >> np.arange(n, dtype=np.int64)) & 1
            signs = 1.0 - 2.0 * bits
        else:
            signs = 1.0 - 2.0 * rng.integers(0, 2, size=(count, n), dtype=np.int8)
        null = _weighted_sums(d_t, signs) / n
        greater += (null >= observed - tol).sum(axis=0)
        less += (null <= observed + tol).sum(axis=0)
    adjust = 0 if exact else 1
    p_greater = (greater + adjust) / (total + adjust)
    p_less = (less + adjust) / (total + adjust)
    if alternative == "greater":
        p = p_greater
    elif alternative == "less":
        p = p_less
    else:
        p = np.minimum(1.0, 2 * np.minimum(p_greater, p_less))
    how = f"exact, {total} sign patterns" if exact else f"{total} random sign patterns"
    return TestResult(_out(observed, one), _out(p, one), n, f"paired randomization ({how})")


def _weighted_sums(d_t: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``(draws, metrics)``: each draw's weighted sum of each metric's per-query values.

    numpy's own loops, not a BLAS product: a threaded BLAS splits the sums by its thread count, so the
    last bits (and a percentile bound printed at 4 decimals) would depend on the machine's cores.
    """
    return np.einsum("mq,cq->cm", d_t, weights, optimize=False)


def bootstrap_means(
    a: Any, b: Any | None = None, *, n_resamples: int = 10_000, seed: int | np.random.Generator | None = 0
) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples of the queries: an ``(n_resamples, n_metrics)`` array.

    Every column is resampled with the same draws (as multinomial weights, one matrix product per
    batch), so a difference of two columns' resampled means is the resampled mean of their difference.
    """
    check_resamples(n_resamples, 2)
    rng = check_seed(seed)
    d, _ = _pair(a, b)
    n, m = d.shape
    check_bootstrap_size(n_resamples, m)
    means = np.empty((n_resamples, m))
    rows = max(1, _BATCH_ELEMENTS // n)
    d_t = np.ascontiguousarray(d.T)
    for start in range(0, n_resamples, rows):
        count = min(rows, n_resamples - start)
        kind = np.int32 if count * n < 2**31 else np.int64  # int32 draws: half the memory traffic
        picks = rng.integers(0, n, size=(count, n), dtype=kind) + (np.arange(count, dtype=kind) * n)[:, None]
        weights = np.bincount(picks.ravel(), minlength=count * n).reshape(count, n).astype(np.float64)
        means[start : start + count] = _weighted_sums(d_t, weights) / n
    return means


def percentile_interval(means: Any, confidence: float = 0.95) -> tuple[Any, Any]:
    """The percentile interval of resampled means, as numpy's linear quantiles (scipy's too).

    :param means: ``(n_resamples, n_metrics)`` (as :func:`bootstrap_means` returns: arrays out) or
        ``(n_resamples,)`` (floats out).
    """
    confidence = check_confidence(confidence)
    m = per_query_values(means, "resampled means")
    one = m.ndim == 1
    if m.ndim not in (1, 2) or m.shape[0] == 0:
        raise StatsInputError(f"resampled means must be (n_resamples,) or (n_resamples, metrics), got shape {m.shape}")
    m = _finite_within_limit(m, "resampled means").reshape(m.shape[0], -1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(m, [alpha, 1 - alpha], axis=0)
    # A constant column resamples to the same mean up to rounding: report the mean itself.
    flat = np.ptp(m, axis=0) <= _ROUNDING * np.abs(m).max(axis=0)
    low[flat] = high[flat] = m[0, flat]
    return _out(low, one), _out(high, one)


def bootstrap_ci(
    a: Any,
    b: Any | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator | None = 0,
) -> tuple[Any, Any]:
    """Percentile bootstrap interval of ``mean(a)`` (or of ``mean(a - b)``), resampling queries.

    Usage::

        >>> low, high = bootstrap_ci([0.5, 0.7, 0.9, 0.4, 0.6, 0.8], n_resamples=2000, seed=1)
        >>> round(low, 3), round(high, 3)
        (0.517, 0.783)
    """
    check_confidence(confidence)
    _, one = _pair(a, b)
    low, high = percentile_interval(bootstrap_means(a, b, n_resamples=n_resamples, seed=seed), confidence)
    return _out(low, one), _out(high, one)


def holm(pvalues: Any) -> np.ndarray:
    """Holm step-down adjusted p-values (same order as given), capped at 1.

    Usage::

        >>> holm([0.01, 0.04, 0.03, 0.005]).tolist()
        [0.03, 0.06, 0.06, 0.02]
    """
    p = per_query_values(pvalues, "p-values")
    if p.ndim != 1:
        raise StatsInputError(f"holm takes a 1-D family of p-values, got shape {p.shape}")
    if p.size and (np.isnan(p).any() or (p < 0).any() or (p > 1).any()):
        raise StatsInputError("p-values must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


__all__ = [
    "MAX_SEED",
    "StatsInputError",
    "TestResult",
    "bootstrap_ci",
    "bootstrap_means",
    "holm",
    "paired_t_test",
    "percentile_interval",
    "randomization_test",
    "seed_value",
]
