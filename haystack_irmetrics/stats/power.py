"""How many queries a comparison needs: Sakai's topic set size design (T. Sakai, "Topic set size design",
Information Retrieval Journal 19(3): 256-283, 2016), after Nagata's sample size designs.

Two designs, each from the per-query values of the runs compared:

* **paired-t**, two runs compared by a two-sided paired t-test at level ``alpha``. With ``variance`` the
  variance of the per-query differences (Sakai's sigma_t^2), ``n`` queries detect a true difference ``delta``
  with probability

      power(n) = P(|T'| >= t(1 - alpha/2; n - 1)),   T' ~ noncentral t(n - 1, sqrt(n) * delta / sigma_t)

  (Sakai 2016, section 4; the noncentral t that the two-sided test's statistic follows).
* **anova**, ``m`` runs compared by a one-way ANOVA at level ``alpha``. With ``variance`` the within-system
  variance (Sakai's sigma^2, the ANOVA's residual mean square V_E) and ``delta`` Sakai's minimum detectable
  range (the best and worst runs ``delta`` apart, the others at the grand mean: the least favourable case),
  Delta = delta^2 / (2 sigma^2) and

      power(n) = P(F' >= F(1 - alpha; m - 1, m(n - 1))),   F' ~ noncentral F(m - 1, m(n - 1), n * Delta)

  (Sakai 2016, section 5).

``queries_needed`` is the smallest ``n`` whose power reaches the target, ``min_detectable_delta`` the
``delta`` the test detects with that power over the ``n`` queries there are. Sakai's spreadsheets approximate
the noncentral distributions (a normal approximation of the noncentral t, a noncentral chi-square for the F);
here they are scipy's exact ones, as statsmodels' ``TTestPower`` and ``FTestAnovaPower`` compute them (the
tests check both, and Sakai's approximations, which agree to within a query).

Needs scipy (the ``stats`` extra).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .._extras import require
from ..checks import choice, number, whole
from .significance import StatsInputError

#: The largest number of queries :func:`queries_needed` searches (a difference this small needs more).
MAX_QUERIES = 10_000_000
#: The defaults: a test at level 0.05 that detects the difference with probability 0.8 (Sakai's, Cohen's).
ALPHA = 0.05
POWER = 0.8
#: The largest noncentralities at which scipy's noncentral t and F are used, checked there against the power
#: integrated independently (the t: mpmath at 40 digits; the F: a quadrature over the noncentral chi-square)
#: to 1e-12; past them they drift without a warning (the t: 1e-9 at 1e4, 3e-7 at 1e5). Only a tiny alpha
#: needs more where the power is not 1 to double precision: refused, not guessed.
MAX_NONCENTRALITY_T = 3000.0
MAX_NONCENTRALITY_F = 1e5
#: The two designs.
DESIGNS = ("paired-t", "anova")

Design = Literal["paired-t", "anova"]


def _scipy() -> Any:
    require("scipy", purpose="topic set size design")
    from scipy import optimize, stats

    return stats, optimize


def _number(value: Any, name: str, low: float, high: float | None = None, low_open: bool = True) -> float:
    """``value`` as a float, finite, above ``low`` (or at it, unless ``low_open``) and below ``high``."""
    closed = "neither" if low_open else "left"
    return float(number(value, name, low, high, closed=closed, error=StatsInputError))


def _level(alpha: Any, design: str, systems: int) -> float:
    """``alpha``, checked with the design and its number of systems."""
    choice(design, "design", DESIGNS, error=StatsInputError)
    whole(systems, "systems", least=2, error=StatsInputError)
    if design == "paired-t" and systems != 2:
        raise StatsInputError(f"the paired t-test compares two systems, got {systems}: use the anova design")
    return _number(alpha, "alpha", 0.0, 1.0)


def _check(alpha: Any, power: Any, design: str, systems: int) -> tuple[float, float]:
    a = _level(alpha, design, systems)
    p = _number(power, "power", a, 1.0)  # power at no difference is alpha: a target at or below it asks nothing
    return a, p


def _queries(n: Any) -> int:
    return whole(n, "n", least=2, error=StatsInputError)  # queries


def power_at(
    n: int, delta: float, variance: float, *, design: Design = "paired-t", systems: int = 2, alpha: float = 0.05
) -> float:
    """The probability that the test of ``design`` over ``n`` queries finds a true ``delta`` (a difference of
    two runs' means, or the ANOVA's range between the best and the worst run) significant at ``alpha``.

        >>> round(power_at(20, 0.1, 0.01), 4)  # effect size 1: statsmodels' TTestPower gives the same
        0.9886
    """
    a = _level(alpha, design, systems)
    d = _number(delta, "delta", 0.0, low_open=False)
    return _power(_queries(n), d / math.sqrt(_number(variance, "variance", 0.0)), design, systems, a)


def _power(n: int, effect: float, design: str, systems: int, alpha: float) -> float:
    """Power at ``n`` queries of a standardized ``effect`` (``delta / sigma``)."""
    stats, _ = _scipy()
    return _power_t(stats, n, effect, alpha) if design == "paired-t" else _power_f(stats, n, effect, systems, alpha)


def _power_t(stats: Any, n: int, effect: float, alpha: float) -> float:
    df = n - 1
    critical = _critical(stats.t, alpha / 2, alpha, n, df)
    nc = math.sqrt(n) * effect
    # T' = (Z + nc) / sqrt(V / df) >= critical whenever Z >= -nc/4 and sqrt(V / df) <= 3 nc / (4 critical): a lower
    # bound of the power, 1 to double precision where scipy's noncentral t is lost (NaN at df 1, nc 7e10).
    ratio = 3 * nc / (4 * critical)
    if 1.0 - (stats.norm.cdf(-nc / 4) + stats.chi2.sf(df * ratio * ratio, df)) == 1.0:  # x * x: inf, not an error
        return 1.0
    _exact_range(nc, MAX_NONCENTRALITY_T, n, effect, alpha)
    upper = float(stats.nct.sf(critical, df, nc))
    if math.isnan(upper):
        upper = 1.0 - float(stats.nct.cdf(critical, df, nc))
    # The other tail is below alpha / 2 and, for a large noncentrality, below any float: scipy's noncentral
    # t then answers NaN for it (df 3, nc 8), where the value is 0 to double precision.
    lower = float(stats.nct.cdf(-critical, df, nc))
    return _finite(upper + (0.0 if math.isnan(lower) else lower), n, effect)


def _power_f(stats: Any, n: int, effect: float, systems: int, alpha: float) -> float:
    df_num, df_den = systems - 1, systems * (n - 1)
    critical = _critical(stats.f, alpha, alpha, n, df_num, df_den)
    nc = n * effect * effect / 2
    # F' = (X / df_num) / (W / df_den) >= critical whenever X >= nc / 4 (missed with probability at most
    # Phi(-sqrt(nc) / 2)) and W / df_den <= nc / (4 critical df_num): the same lower bound for the F.
    shortfall = stats.norm.cdf(-math.sqrt(nc) / 2) + stats.chi2.sf(df_den * nc / (4 * critical * df_num), df_den)
    if 1.0 - shortfall == 1.0:
        return 1.0
    if nc == 0:  # the central F; scipy's noncentral F answers sf = -cdf there (-0.95 for 0.05; scipy gh-26188)
        return float(stats.f.sf(critical, df_num, df_den))
    _exact_range(nc, MAX_NONCENTRALITY_F, n, effect, alpha)
    return _finite(float(stats.ncf.sf(critical, df_num, df_den, nc)), n, effect)


def _finite(power: float, n: int, effect: float) -> float:
    if not math.isfinite(power):
        raise StatsInputError(f"the power at {n} queries and effect size {effect:g} cannot be computed")
    return power


def _critical(distribution: Any, tail: float, alpha: float, n: int, *df: int) -> float:
    """The test's critical value, the point ``tail`` above which its null distribution leaves ``tail``; scipy's
    inverse is lost for a tiny ``tail`` (t's answers -inf at df 11 and 5e-301, F's inf at 1e-100): checked
    by mapping it back."""
    critical = float(distribution.isf(tail, *df))
    if not (math.isfinite(critical) and critical > 0) or not math.isclose(
        float(distribution.sf(critical, *df)), tail, rel_tol=1e-9
    ):
        raise StatsInputError(
            f"alpha {alpha:g} is too small: the test's critical value at {n} queries cannot be computed; give a "
            "larger alpha"
        )
    return critical


def _exact_range(nc: float, limit: float, n: int, effect: float, alpha: float) -> None:
    """Refuse a noncentrality past the range where scipy's noncentral distribution was checked exact."""
    if nc > limit:
        raise StatsInputError(
            f"the power at {n} queries, effect size {effect:g} and alpha {alpha:g} needs a noncentrality of "
            f"{nc:.4g}, past {limit:g}, where scipy's noncentral distributions are no longer exact: give a larger "
            "alpha"
        )


def queries_needed(
    delta: float,
    variance: float,
    *,
    design: Design = "paired-t",
    systems: int = 2,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    """The smallest number of queries (>= 2) over which the test of ``design`` finds a true ``delta``
    significant at ``alpha`` with probability ``power`` at least.

        >>> queries_needed(0.1, 0.04)  # effect size 0.5: statsmodels' TTestPower solves 33.37 queries
        34
        >>> queries_needed(0.1, 0.02, design="anova", systems=3)  # FTestAnovaPower: 3 x 39.55 queries
        40

    :raises StatsInputError: a setting out of range, or more than :data:`MAX_QUERIES` queries needed.
    """
    a, p = _check(alpha, power, design, systems)
    effect = _number(delta, "delta", 0.0) / math.sqrt(_number(variance, "variance", 0.0))
    if _power(2, effect, design, systems, a) >= p:
        return 2
    low, high = 2, 4  # power grows with n: double, then halve the gap
    while _power(high, effect, design, systems, a) < p:
        low, high = high, high * 2
        if low >= MAX_QUERIES:
            raise StatsInputError(
                f"a difference of {delta:g} with variance {variance:g} needs more than {MAX_QUERIES:,} queries "
                f"for power {p:g} at alpha {a:g}: ask about a larger difference"
            )
    while high - low > 1:
        mid = (low + high) // 2
        if _power(mid, effect, design, systems, a) >= p:
            high = mid
        else:
            low = mid
    return high


def min_detectable_delta(
    n: int,
    variance: float,
    *,
    design: Design = "paired-t",
    systems: int = 2,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    """The difference (``anova``: the range between the best and the worst run) that the test of ``design``
    over ``n`` queries finds significant at ``alpha`` with probability ``power``.

        >>> round(min_detectable_delta(34, 0.04), 4)  # statsmodels' TTestPower: effect size 0.4950
        0.099
    """
    a, p = _check(alpha, power, design, systems)
    queries = _queries(n)
    sigma = math.sqrt(_number(variance, "variance", 0.0))
    _, optimize = _scipy()
    # The effect at which the noncentrality reaches the exact range's end: the search doubles up to it, not past.
    if design == "paired-t":
        last = MAX_NONCENTRALITY_T / math.sqrt(queries)
    else:
        last = math.sqrt(2 * MAX_NONCENTRALITY_F / queries)
    last *= 1 - 1e-12  # rounding: nc a hair above the end would be refused
    high = min(1.0, last)
    while _power(queries, high, design, systems, a) < p:
        high = min(high * 2, last) if high < last else high * 2  # past the end: _power refuses it
    effect = optimize.brentq(
        lambda e: _power(queries, e, design, systems, a) - p, 0.0, high, xtol=1e-14, rtol=1e-12, maxiter=500
    )
    return float(effect * sigma)


@dataclass(frozen=True)
class TopicSetSize:
    """The topic set size design of runs' per-query values (:func:`topic_set_size`).

    :ivar design: ``"paired-t"`` (two runs) or ``"anova"`` (more).
    :ivar queries_needed: the queries the test needs to detect :attr:`delta` with :attr:`power`.
    :ivar queries_now: the queries paired: those any run is scored on.
    :ivar min_detectable_delta: the difference (anova: the range of the means) the test detects with
        :attr:`power` over :attr:`queries_now` queries.
    :ivar variance: the observed variance: of the per-query differences (paired-t), within systems (anova:
        the one-way ANOVA's residual mean square).
    :ivar delta: the difference :attr:`queries_needed` is for (given, or the observed one).
    :ivar observed: the observed difference of the means (anova: the best run's mean minus the worst's).
    """

    design: Design
    queries_needed: int
    queries_now: int
    min_detectable_delta: float
    variance: float
    delta: float
    observed: float
    alpha: float
    power: float
    systems: int

    def to_dict(self) -> dict[str, Any]:
        """``queries_needed``, ``queries_now``, ``min_detectable_delta``, ``variance``, ``design``."""
        return {
            "queries_needed": self.queries_needed,
            "queries_now": self.queries_now,
            "min_detectable_delta": self.min_detectable_delta,
            "variance": self.variance,
            "design": self.design,
        }


def topic_set_size(
    values: Mapping[str, Mapping[str, float]] | Sequence[Sequence[float]],
    delta: float | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    fill: float = 0.0,
) -> TopicSetSize:
    """Sakai's topic set size design from the per-query values of two runs (paired t-test) or more (one-way
    ANOVA), over the queries any run is scored on: a query a run lacks counts at ``fill`` in that run, as
    ``irmetrics compare``'s paired tests and ``trec_eval -c`` count it.

    :param values: ``{run: {query: value}}`` (an ``EvaluationResult.per_query[measure]`` per run), or rows of
        values aligned by query, one row per run
        (:func:`~haystack_irmetrics.compare.runs.paired_rows` makes them as ``irmetrics power`` does).
    :param delta: the difference to detect (anova: the range between the best and the worst run); default the
        observed one.
    :param fill: a missing query's value (the measure's: 0, GMAP's 1e-5).

    Usage::

        >>> t = topic_set_size({"a": {"q1": 0.5, "q2": 0.75, "q3": 0.25}, "b": {"q1": 0.5, "q2": 0.5, "q3": 0.0}},
        ...                    delta=0.1)
        >>> t.design, t.queries_needed, t.queries_now, round(t.variance, 5), round(t.min_detectable_delta, 4)
        ('paired-t', 19, 3, 0.02083, 0.4711)
    """
    rows = _rows(values, fill)
    m, n = rows.shape
    if n < 2:
        raise StatsInputError(
            f"the runs are scored on {n} quer{'y' if n == 1 else 'ies'} in all; the design needs two or more"
        )
    if not np.isfinite(rows).all():
        raise StatsInputError("the per-query values hold NaN or infinities")
    design: Design = "paired-t" if m == 2 else "anova"
    a, p = _check(alpha, power, design, m)
    if design == "paired-t":
        diff = rows[0] - rows[1]
        variance = float(np.var(diff, ddof=1))
        observed = abs(float(diff.mean()))
    else:
        means = rows.mean(axis=1)
        variance = float(((rows - means[:, None]) ** 2).sum() / (m * (n - 1)))
        observed = float(means.max() - means.min())
    if variance == 0:
        raise StatsInputError(
            "the per-query values do not vary ("
            + ("every query's difference is the same" if design == "paired-t" else "each run scores every query alike")
            + "): the design needs a variance to scale the difference by"
        )
    wanted = observed if delta is None else _number(delta, "delta", 0.0)
    if wanted == 0:
        raise StatsInputError("the runs' means do not differ: give the difference to detect (delta=, --delta)")
    options = {"design": design, "systems": m, "alpha": a, "power": p}
    return TopicSetSize(
        design=design,
        queries_needed=queries_needed(wanted, variance, **options),  # type: ignore[arg-type]
        queries_now=n,
        min_detectable_delta=min_detectable_delta(n, variance, **options),  # type: ignore[arg-type]
        variance=variance,
        delta=wanted,
        observed=observed,
        alpha=a,
        power=p,
        systems=m,
    )


def _rows(values: Any, fill: float) -> np.ndarray:
    """A runs x queries array: a mapping's runs over the queries any of them is scored on (sorted), a query a run
    lacks at ``fill`` (as ``irmetrics compare``'s paired tests and ``trec_eval -c``)."""
    if isinstance(values, Mapping):
        runs = list(values.values())
        if len(runs) < 2:
            raise StatsInputError(f"the design compares two runs or more, got {len(runs)}")
        queries = sorted(set().union(*runs))
        rows = [[float(r.get(q, fill)) for q in queries] for r in runs]
        return np.array(rows, dtype=np.float64).reshape(len(runs), -1)
    rows = np.asarray(values, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] < 2:
        raise StatsInputError(f"values must be two rows or more of per-query values, got shape {rows.shape}")
    return rows


__all__ = [
    "ALPHA",
    "DESIGNS",
    "MAX_QUERIES",
    "POWER",
    "TopicSetSize",
    "min_detectable_delta",
    "power_at",
    "queries_needed",
    "topic_set_size",
]
