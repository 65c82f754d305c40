"""Time windows over a click log: a measure per window with its interval, and the windows that dropped.

Each impression (session) falls into the window of its earliest row's timestamp; windows are
``width`` long (``"1d"``, ``"7d"``, ``"12h"``, ``"30m"``, ``"2w"``) and aligned to the epoch (days start
at midnight UTC). Per impression, the measure is one of :data:`MEASURES`:

* ``clicks``: its number of clicks; ``ctr@1``: whether rank 1 was clicked;
* ``mrr``: the reciprocal rank of its first click (0 without one); ``abandonment``: 1 without a click
  (lower is better: its drop is a rise).

Per window: the mean over its impressions with a percentile bootstrap interval. Each window but the
first is compared with the previous one (or with one named ``baseline`` window) by Welch's two-sample
t-test; the p-values are Holm-adjusted across the windows compared, and a window is **flagged** when it
is worse than its reference and its adjusted p-value is below ``alpha``.

Timestamps are the feedback log's: ISO 8601 text and dates read as epoch microseconds; numbers are taken
in ``unit`` (``"us"`` by default, or ``"ms"``, ``"s"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ClickModelError
from ..stats.windows import baseline_index, compare_windows, parse_window, references, window_of
from .log import Sessions

MEASURES = ("clicks", "ctr@1", "mrr", "abandonment")
#: Measures where a lower value is better (a rise is the drop).
LOWER_IS_BETTER = ("abandonment",)


def per_impression(sessions: Sessions, measure: str) -> np.ndarray:
    """One value per impression of ``measure`` (:data:`MEASURES`)."""
    clicks = sessions.clicks & sessions.shown
    if measure == "clicks":
        return clicks.sum(axis=1).astype(float)
    if measure == "ctr@1":
        return clicks[:, 0].astype(float)
    if measure == "mrr":
        first = np.where(clicks.any(axis=1), clicks.argmax(axis=1) + 1, 0)
        return np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0)
    if measure == "abandonment":
        return (~clicks.any(axis=1)).astype(float)
    raise ClickModelError(f"measure must be one of {MEASURES}, got {measure!r}")


@dataclass(frozen=True)
class Window:
    """One window: its span, impressions, mean and interval, and the comparison with its reference."""

    start: str
    end: str
    impressions: int
    mean: float
    ci_low: float
    ci_high: float
    reference: str | None
    delta: float | None
    p_value: float | None
    p_holm: float | None
    flagged: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def windows(
    sessions: Sessions,
    *,
    width: str = "1d",
    measure: str = "clicks",
    baseline: str | None = None,
    unit: str = "us",
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[Window]:
    """The windows of ``sessions`` in time order (empty windows left out); see the module docs.

    :param baseline: the start of the window every other is compared with (as printed, e.g.
        ``"2026-03-01T00:00:00Z"``, or its date ``"2026-03-01"``); default: each with the previous.
    :raises ClickModelError: no timestamp column, an impression without a timestamp, an unknown measure.
    :raises StatsInputError: an unknown unit, width or baseline.
    """
    from ..stats.significance import bootstrap_ci

    if sessions.timestamp is None:
        raise ClickModelError("the click log has no timestamp column (name it with --timestamp-col)")
    values = per_impression(sessions, measure)
    missing = np.isnan(sessions.timestamp)
    if missing.any():
        row = int(sessions.first_row[int(np.argmax(missing))])
        raise ClickModelError(f"the session starting at row {row} has no timestamp; windows need one per impression")
    index, starts, ends = window_of(sessions.timestamp, width, unit)
    groups = [values[index == i] for i in range(len(starts))]
    refs = references(len(groups), baseline_index(starts, baseline))
    changes = compare_windows(groups, refs, lower_is_better=measure in LOWER_IS_BETTER, alpha=alpha)
    out = []
    for i, (g, change) in enumerate(zip(groups, changes, strict=True)):
        if g.size >= 2:
            low, high = bootstrap_ci(g, confidence=confidence, n_resamples=n_resamples, seed=seed)
        else:
            low = high = float(g.mean())
        out.append(
            Window(
                start=starts[i],
                end=ends[i],
                impressions=int(g.size),
                mean=float(g.mean()),
                ci_low=float(low),
                ci_high=float(high),
                reference=None if change.reference is None else starts[change.reference],
                delta=change.delta,
                p_value=change.p_value,
                p_holm=change.p_holm,
                flagged=change.flagged,
            )
        )
    return out


def plot_windows(rows: list[Window], path: str | Path, *, measure: str = "clicks") -> Path:
    """The trend: each window's mean with its interval, flagged windows marked (PNG, SVG or PDF by suffix)."""
    from ..plots.figure import figure, label, save

    fig = figure(path)
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    means = np.array([r.mean for r in rows])
    low = means - np.array([r.ci_low for r in rows])
    high = np.array([r.ci_high for r in rows]) - means
    ax.errorbar(x, means, yerr=[low, high], marker="o", capsize=3, label=label(measure))
    flagged = [i for i, r in enumerate(rows) if r.flagged]
    if flagged:
        ax.scatter(x[flagged], means[flagged], s=120, facecolors="none", edgecolors="C3", label="significant drop")
    ax.set_xticks(x, [label(r.start[:16].replace("T00:00", "")) for r in rows], rotation=45, ha="right")
    ax.set_ylabel(label(f"mean {measure} per impression"))
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    fig.subplots_adjust(bottom=0.25)
    return save(fig, path)


__all__ = ["LOWER_IS_BETTER", "MEASURES", "Window", "parse_window", "per_impression", "plot_windows", "windows"]
