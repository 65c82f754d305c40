"""Which of a report's measures its summary shows before any column is switched on or off
(:func:`summary_columns`): the page's default columns, and the measures the hole bounds are computed for."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.measures import parse_measure
from ..errors import IRMetricsError

#: Columns of means the summary shows before any is switched on or off: more scroll sideways at 1280 pixels.
MAX_SUMMARY_COLUMNS = 8
#: The cutoff each measure is shown at by default (the one nearest it when the report has no @10).
SUMMARY_CUTOFF = 10
#: Shown by default besides each measure at :data:`SUMMARY_CUTOFF`, as BEIR's tables report it.
SUMMARY_EXTRA = ("Recall@100",)


def summary_columns(measures: list[str]) -> list[str]:
    """The measures the summary shows by default, in the evaluation's order: every one when at most
    :data:`MAX_SUMMARY_COLUMNS`; else each measure at cutoff 10 (the nearest cutoff, the smaller of two,
    when 10 is not evaluated), Recall@100 and each measure without a cutoff, the first
    :data:`MAX_SUMMARY_COLUMNS` of them. The page switches any other column on in one click.

        >>> summary_columns([f"{f}@{k}" for f in ("NDCG", "MAP", "Recall") for k in (1, 3, 5, 10, 100, 1000)])
        ['NDCG@10', 'MAP@10', 'Recall@10', 'Recall@100']
    """
    if len(measures) <= MAX_SUMMARY_COLUMNS:
        return list(measures)
    cutoffs: dict[str, dict[int, str]] = {}  # {stem: {k: measure}}
    for m in measures:
        measure = parsed(m)
        if measure is not None and measure.cutoff is not None and "@" in m:
            cutoffs.setdefault(m.rpartition("@")[0], {})[measure.cutoff] = m
    chosen = {m for m in measures if m in SUMMARY_EXTRA or not any(m in ks.values() for ks in cutoffs.values())}
    for ks in cutoffs.values():
        chosen.add(ks[min(ks, key=lambda k: (abs(np.log(k / SUMMARY_CUTOFF)), k))])
    return [m for m in measures if m in chosen][:MAX_SUMMARY_COLUMNS]


def parsed(name: str) -> Any:
    """The measure ``name`` parses to, or ``None`` (a name this package does not know)."""
    try:
        return parse_measure(name)
    except IRMetricsError:  # a name of an evaluator output this package does not know: no curve
        return None


__all__ = ["MAX_SUMMARY_COLUMNS", "SUMMARY_CUTOFF", "SUMMARY_EXTRA", "parsed", "summary_columns"]
