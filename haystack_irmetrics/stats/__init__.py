"""Paired significance tests, bootstrap intervals, Holm correction and rank correlations for per-query IR scores.

Needs scipy for :func:`paired_t_test` (the ``stats`` extra); everything else is numpy. Importing this
package imports neither.
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
