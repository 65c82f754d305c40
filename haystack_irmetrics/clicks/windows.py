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

import datetime
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ClickModelError
from .log import Sessions

MEASURES = ("clicks", "ctr@1", "mrr", "abandonment")
#: Measures where a lower value is better (a rise is the drop).
LOWER_IS_BETTER = ("abandonment",)
_UNITS = {"m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_SCALE = {"us": 1.0, "ms": 1e3, "s": 1e6}


def parse_window(text: str) -> int:
    """``"1d"`` -> the width in microseconds (units ``m``, ``h``, ``d``, ``w``).

    :raises ClickModelError: not a positive whole number and a unit.
    """
    match = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", text) if isinstance(text, str) else None
    if not match or int(match.group(1)) == 0:
        raise ClickModelError(
            f"a window is a positive whole number and a unit (m, h, d, w), e.g. 1d or 7d; got {text!r}"
        )
    return int(match.group(1)) * _UNITS[match.group(2)] * 1_000_000


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


def _iso(us: int) -> str:
    when = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(microseconds=us)
    return when.isoformat().replace("+00:00", "Z")


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
    :raises ClickModelError: no timestamp column, an impression without a timestamp, an unknown unit,
        measure or baseline.
    """
    from scipy.stats import ttest_ind

    from ..stats.significance import bootstrap_ci, holm

    if sessions.timestamp is None:
        raise ClickModelError("the click log has no timestamp column (name it with --timestamp-col)")
    if unit not in _SCALE:
        raise ClickModelError(f"unit must be one of {list(_SCALE)}, got {unit!r}")
    step = parse_window(width)
    values = per_impression(sessions, measure)
    missing = np.isnan(sessions.timestamp)
    if missing.any():
        row = int(sessions.first_row[int(np.argmax(missing))])
        raise ClickModelError(f"the session starting at row {row} has no timestamp; windows need one per impression")
    stamps = np.floor(sessions.timestamp * _SCALE[unit]).astype(np.int64)
    index = stamps // step
    bins = np.unique(index)
    starts = [_iso(int(b * step)) for b in bins]
    groups = [values[index == b] for b in bins]
    ref_of: list[int | None] = [None, *range(len(bins) - 1)]
    if baseline is not None:
        names = {s: i for i, s in enumerate(starts)} | {s[:10]: i for i, s in enumerate(starts)}
        if baseline not in names:
            raise ClickModelError(f"no window starts at {baseline!r}; windows start at {', '.join(starts[:5])}, ...")
        base = names[baseline]
        ref_of = [None if i == base else base for i in range(len(bins))]
    worse = -1.0 if measure in LOWER_IS_BETTER else 1.0
    p_raw: list[float] = []
    compared: list[int] = []
    for i, ref in enumerate(ref_of):
        if ref is None or groups[i].size < 2 or groups[ref].size < 2:
            continue
        a, b = groups[i], groups[ref]
        if np.ptp(np.concatenate([a, b])) == 0:  # no variation at all: nothing to test
            p = 1.0
        else:
            p = float(ttest_ind(a, b, equal_var=False).pvalue)
            p = 1.0 if np.isnan(p) else p
        p_raw.append(p)
        compared.append(i)
    adjusted = dict(zip(compared, holm(p_raw).tolist() if p_raw else [], strict=True))
    raw = dict(zip(compared, p_raw, strict=True))
    out = []
    for i, g in enumerate(groups):
        if g.size >= 2:
            low, high = bootstrap_ci(g, confidence=confidence, n_resamples=n_resamples, seed=seed)
        else:
            low = high = float(g.mean())
        ref = ref_of[i]
        delta = None if ref is None else float(g.mean() - groups[ref].mean())
        flagged = i in adjusted and adjusted[i] < alpha and delta is not None and worse * delta < 0
        out.append(
            Window(
                start=starts[i],
                end=_iso(int((bins[i] + 1) * step)),
                impressions=int(g.size),
                mean=float(g.mean()),
                ci_low=float(low),
                ci_high=float(high),
                reference=None if ref is None else starts[ref],
                delta=delta,
                p_value=raw.get(i),
                p_holm=adjusted.get(i),
                flagged=bool(flagged),
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
