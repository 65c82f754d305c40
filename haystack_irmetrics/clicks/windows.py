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

import numpy as np

from ..checks import Choice, refuse
from ..errors import ClickModelError
from ..stats.windows import Window, parse_window, window_of, window_series
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
    raise refuse(measure, "measure", Choice(MEASURES).describe(), ClickModelError)


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
    if sessions.timestamp is None:
        raise ClickModelError("the click log has no timestamp column (name it with --timestamp-col)")
    values = per_impression(sessions, measure)
    missing = np.isnan(sessions.timestamp)
    if missing.any():
        row = int(sessions.first_row[int(np.argmax(missing))])
        raise ClickModelError(f"the session starting at row {row} has no timestamp; windows need one per impression")
    index, starts, ends = window_of(sessions.timestamp, width, unit)
    groups = [values[index == i] for i in range(len(starts))]
    return window_series(
        groups,
        starts,
        ends,
        measure=measure,
        counted="impressions",
        baseline=baseline,
        lower_is_better=measure in LOWER_IS_BETTER,
        alpha=alpha,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


__all__ = ["LOWER_IS_BETTER", "MEASURES", "Window", "parse_window", "per_impression", "windows"]
