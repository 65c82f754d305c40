"""Paired significance tests, bootstrap intervals and Holm correction for per-query IR scores.

Needs scipy for :func:`paired_t_test` (the ``stats`` extra); everything else is numpy. Importing this
package imports neither.
"""

from .compare import Comparison, compare_paired
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
    "Comparison",
    "StatsInputError",
    "TestResult",
    "bootstrap_ci",
    "bootstrap_means",
    "compare_paired",
    "holm",
    "paired_t_test",
    "percentile_interval",
    "randomization_test",
]
