"""Paired significance tests, bootstrap intervals, Holm correction and rank correlations for per-query IR scores.

- :mod:`.significance`: the paired t-test, the randomization test, bootstrap intervals and Holm's correction on
  per-query values aligned by query, every measure tested with the same draws; the one check of every seed;
- :mod:`.compare`: one system against another over several measures: deltas, intervals, tests and Holm-adjusted
  p-values (:func:`compare_paired`);
- :mod:`.paired`: N systems against a baseline, the one comparison ``irmetrics compare``, the report and the
  feedback evaluation run, Holm's scope a parameter (:func:`compare_with_baseline`);
- :mod:`.correlation`: Spearman's rho and Kendall's tau-b as scipy computes them, and tau_AP: two rankings, two
  systems' per-query scores, or two orders of systems;
- :mod:`.windows`: time windows, each compared with the previous one or a baseline by Welch's test, Holm across
  windows (:func:`compare_windows`), and the one window type (:class:`~.windows.Window`);
- :mod:`.ppi`: a prediction-powered interval of a mean from a few labelled and many predicted items, as
  ``ppi_py`` computes it;
- :mod:`.power`: how many queries a comparison needs, Sakai's topic set size design for the paired t-test and the
  one-way ANOVA (``irmetrics power``).

Needs scipy (the ``stats`` extra) for the t-tests, the rank correlations, the windows' Welch test and the topic
set size design, each importing it on first use; everything else is numpy. Importing this package imports
neither.
"""

from .compare import Comparison, compare_paired, holm_adjust
from .correlation import Correlation, per_query_correlation, rank_correlation, system_correlation
from .paired import BaselineComparison, compare_with_baseline, paired_arrays
from .significance import (
    StatsInputError,
    TestResult,
    bootstrap_ci,
    bootstrap_means,
    holm,
    paired_t_test,
    percentile_interval,
    randomization_test,
)

__all__ = [
    "BaselineComparison",
    "Comparison",
    "Correlation",
    "StatsInputError",
    "TestResult",
    "bootstrap_ci",
    "bootstrap_means",
    "compare_paired",
    "compare_with_baseline",
    "holm",
    "holm_adjust",
    "paired_arrays",
    "paired_t_test",
    "per_query_correlation",
    "percentile_interval",
    "randomization_test",
    "rank_correlation",
    "system_correlation",
]
