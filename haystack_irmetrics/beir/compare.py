"""Moved to :mod:`haystack_irmetrics.compare.runs` (comparing runs needs no BEIR): this path stays importable."""

from ..compare.runs import CompareResult, RunsComparison, compare_many, compare_runs

__all__ = ["CompareResult", "RunsComparison", "compare_many", "compare_runs"]
