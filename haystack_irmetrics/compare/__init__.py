"""Runs compared on the same qrels, each against a baseline (``irmetrics compare``), and two suites written by
``irmetrics beir --output`` compared dataset by dataset: the core's evaluation of each run, then one paired
comparison through :func:`~haystack_irmetrics.stats.compare_with_baseline`.

``haystack_irmetrics.beir`` exports the same names, for BEIR users.
"""

from .runs import CompareResult, CompareSettings, RunsComparison, compare_many, compare_runs
from .suites import SUITE_MEASURES, SuiteComparison, compare_suites, is_suite

__all__ = [
    "SUITE_MEASURES",
    "CompareResult",
    "CompareSettings",
    "RunsComparison",
    "SuiteComparison",
    "compare_many",
    "compare_runs",
    "compare_suites",
    "is_suite",
]
