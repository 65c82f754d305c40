"""Runs compared on the same qrels, each against a baseline (``irmetrics compare``), and two suites written by
``irmetrics beir --output`` compared dataset by dataset: the core's evaluation of each run, then one paired
comparison through :func:`~haystack_irmetrics.stats.compare_with_baseline`.

- :mod:`.runs`: runs side by side, BEIR's numbers and each run against the baseline, Holm over runs × measures
  (:func:`compare_runs`, :func:`compare_many`; their settings one frozen :class:`CompareSettings`);
- :mod:`.suites`: two suites compared dataset by dataset, each dataset on its own qrels found through its
  ``summary.json``, and refused before anything is scored where the suites ran different copies of it
  (:func:`compare_suites`).

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
