"""The trend of a measure over time windows: each window's mean with its interval, the flagged drops marked.

One figure for both kinds of window (:class:`~haystack_irmetrics.stats.windows.Window`): a click measure per
impression (``irmetrics clicks windows --plot``) and a feedback log's measures per query (``irmetrics
feedback --window``, one figure per measure, in the report). Written by
:func:`~haystack_irmetrics.plots.figure.save`: PNG, SVG or PDF by the path's suffix.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InvalidArgumentError
from .figure import DEFAULT_DPI, DEFAULT_SIZE, figure, label, save

if TYPE_CHECKING:  # pragma: no cover
    from ..stats.windows import Window

#: What one value of a window is, by what its size counts.
_PER = {"impressions": "impression", "queries": "query"}


def plot_windows(
    rows: Sequence[Window],
    path: str | os.PathLike[str],
    *,
    measure: str | None = None,
    figsize: tuple[float, float] = DEFAULT_SIZE,
    dpi: int = DEFAULT_DPI,
) -> Path:
    """The trend of one measure: each window's mean with its interval, in time order, the flagged windows
    circled; ``measure`` (default: the windows' own) names the line and the axis.

    :raises InvalidArgumentError: no windows, or windows of more than one measure.
    """
    if not rows:
        raise InvalidArgumentError("no windows to plot")
    kinds = {r.measure for r in rows}
    if len(kinds) > 1:
        raise InvalidArgumentError(f"one measure a trend plot; these windows hold {sorted(kinds)}")
    measure = measure or rows[0].measure
    fig = figure(path, figsize=figsize, dpi=dpi)
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    means = np.array([r.mean for r in rows], dtype=float)
    # A percentile interval need not hold the mean (and, all values equal, differs from it in the last bit).
    low = np.maximum(means - np.array([r.ci_low for r in rows], dtype=float), 0.0)
    high = np.maximum(np.array([r.ci_high for r in rows], dtype=float) - means, 0.0)
    ax.errorbar(x, means, yerr=[low, high], marker="o", capsize=3, label=label(measure))
    flagged = [i for i, r in enumerate(rows) if r.flagged]
    if flagged:
        ax.scatter(x[flagged], means[flagged], s=120, facecolors="none", edgecolors="C3", label="significant drop")
    ax.set_xticks(x, [label(r.start[:16].replace("T00:00", "")) for r in rows], rotation=45, ha="right")
    per = _PER.get(rows[0].counted, rows[0].counted)
    ax.set_ylabel(label(f"mean {measure} per {per}"))
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    fig.subplots_adjust(bottom=0.25)
    return save(fig, path)


__all__ = ["plot_windows"]
