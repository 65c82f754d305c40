"""Moved to :mod:`haystack_irmetrics.compare.suites`: this path stays importable."""

from ..compare.suites import SUITE_MEASURES, SuiteComparison, compare_suites, is_suite

__all__ = ["SUITE_MEASURES", "SuiteComparison", "compare_suites", "is_suite"]
