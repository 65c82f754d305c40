"""Runs compared on the same qrels, each against a baseline (``irmetrics compare``), and two suites written by
``irmetrics beir --output`` compared dataset by dataset: the core's evaluation of each run, then one paired
comparison through :func:`~haystack_irmetrics.stats.compare_with_baseline`.

The old paths ``haystack_irmetrics.beir.compare`` and ``haystack_irmetrics.beir.suite_compare`` (and the names
``haystack_irmetrics.beir`` exports) stay importable.
"""

from .runs import CompareResult, RunsComparison, compare_many, compare_runs
from .suites import SUITE_MEASURES, SuiteComparison, compare_suites, is_suite

__all__ = [
    "SUITE_MEASURES",
    "CompareResult",
    "RunsComparison",
    "SuiteComparison",
    "compare_many",
    "compare_runs",
    "compare_suites",
    "is_suite",
]
