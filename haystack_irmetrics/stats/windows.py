"""Time windows compared: which window's measure dropped against its reference, Holm across windows.

:func:`compare_windows` takes one array of values per window (impressions, queries: unpaired samples,
as windows hold different ones) and, for each window with a reference (the previous window, or one
baseline window), gives the change of the mean, Welch's two-sample t-test p-value and its Holm
adjustment across the windows compared; a window is flagged when it is worse than its reference and
its adjusted p-value is below ``alpha``. Used by ``irmetrics clicks windows`` and ``irmetrics feedback
--window``; :func:`window_series` turns the windows' values into one :class:`Window` each (mean,
bootstrap interval and the comparison), the one result type of both.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..checks import choice
from ..errors import StatsInputError

_UNITS = {"m": 60, "h": 3600, "d": 86_400, "w": 604_800}
#: Numeric timestamps' units, as factors to microseconds.
SCALE = {"us": 1.0, "ms": 1e3, "s": 1e6}


def parse_window(text: str) -> int:
    """``"1d"`` -> the width in microseconds (units ``m``, ``h``, ``d``, ``w``).

    :raises StatsInputError: not a positive whole number and a unit.
    """
    import re

    match = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", text) if isinstance(text, str) else None
    if not match or int(match.group(1)) == 0:
        raise StatsInputError(
            f"a window is a positive whole number and a unit (m, h, d, w), e.g. 1d or 7d; got {text!r}"
        )
    return int(match.group(1)) * _UNITS[match.group(2)] * 1_000_000


def iso(us: int) -> str:
    """Epoch microseconds as ISO 8601 UTC text (``2026-03-05T00:00:00Z``)."""
    import datetime

    when = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(microseconds=us)
    return when.isoformat().replace("+00:00", "Z")


def window_of(stamps: np.ndarray, width: str, unit: str = "us") -> tuple[np.ndarray, list[str], list[str]]:
    """(window index of each timestamp, the windows' starts, their ends): windows ``width`` long, aligned
    to the epoch (days start at midnight UTC), only those holding a timestamp, in time order."""
    choice(unit, "unit", SCALE, error=StatsInputError)
    step = parse_window(width)
    index = np.floor(np.asarray(stamps, dtype=float) * SCALE[unit]).astype(np.int64) // step
    bins, inverse = np.unique(index, return_inverse=True)
    return inverse, [iso(int(b * step)) for b in bins], [iso(int((b + 1) * step)) for b in bins]


def baseline_index(starts: Sequence[str], baseline: str | None) -> int | None:
    """The window starting at ``baseline`` (its start as printed, or its date), or None."""
    if baseline is None:
        return None
    names = {s: i for i, s in enumerate(starts)} | {s[:10]: i for i, s in enumerate(starts)}
    if baseline not in names:
        shown = ", ".join(starts[:5]) + (", ..." if len(starts) > 5 else "")
        raise StatsInputError(f"no window starts at {baseline!r}; windows start at {shown}")
    return names[baseline]


@dataclass(frozen=True)
class WindowChange:
    """A window against its reference: ``delta`` (its mean minus the reference's), p-values, flagged."""

    reference: int | None
    delta: float | None
    p_value: float | None
    p_holm: float | None
    flagged: bool


def references(n: int, baseline: int | None = None) -> list[int | None]:
    """Each window's reference: the previous window (the first has none), or ``baseline`` for all others."""
    if baseline is None:
        return [None, *range(n - 1)]
    if not 0 <= baseline < n:
        raise StatsInputError(f"the baseline window {baseline} is not one of the {n} windows")
    return [None if i == baseline else baseline for i in range(n)]


def compare_windows(
    groups: Sequence[np.ndarray],
    refs: Sequence[int | None],
    *,
    lower_is_better: bool = False,
    alpha: float = 0.05,
) -> list[WindowChange]:
    """One :class:`WindowChange` per window (see the module docs); windows with fewer than 2 values are not tested."""
    from scipy.stats import ttest_ind

    from .significance import holm

    if len(groups) != len(refs):
        raise StatsInputError(f"{len(groups)} windows but {len(refs)} references")
    arrays = [np.asarray(g, dtype=float) for g in groups]
    raw: dict[int, float] = {}
    for i, ref in enumerate(refs):
        if ref is None or arrays[i].size < 2 or arrays[ref].size < 2:
            continue
        a, b = arrays[i], arrays[ref]
        if np.ptp(np.concatenate([a, b])) == 0:  # no variation at all: nothing to test
            raw[i] = 1.0
            continue
        with warnings.catch_warnings():  # nearly constant samples: scipy's precision note, not the user's
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(ttest_ind(a, b, equal_var=False).pvalue)
        raw[i] = 1.0 if np.isnan(p) else p
    adjusted = dict(zip(raw, holm(list(raw.values())).tolist() if raw else [], strict=True))
    worse = -1.0 if lower_is_better else 1.0
    out = []
    for i, ref in enumerate(refs):
        delta = (
            None
            if ref is None or not arrays[i].size or not arrays[ref].size
            else float(arrays[i].mean() - arrays[ref].mean())
        )
        flagged = i in adjusted and adjusted[i] < alpha and delta is not None and worse * delta < 0
        out.append(WindowChange(ref, delta, raw.get(i), adjusted.get(i), bool(flagged)))
    return out


@dataclass(frozen=True)
class Window:
    """One window of one measure: its span, how many values it averages (``size``, counting ``counted``:
    ``"impressions"`` of a click log, ``"queries"`` of a feedback log), mean and interval, and the change
    against its reference window (its start; None for a window compared with nothing)."""

    measure: str
    start: str
    end: str
    size: int
    mean: float
    ci_low: float
    ci_high: float
    reference: str | None
    delta: float | None
    p_value: float | None
    p_holm: float | None
    flagged: bool
    counted: str = "queries"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``measure``, ``start``, ``end``, the size under its ``counted`` name, ``mean``, ...,
        ``flagged``."""
        out: dict[str, Any] = {"measure": self.measure, "start": self.start, "end": self.end, self.counted: self.size}
        for key in ("mean", "ci_low", "ci_high", "reference", "delta", "p_value", "p_holm", "flagged"):
            out[key] = getattr(self, key)
        return out


def window_series(
    groups: Sequence[np.ndarray],
    starts: Sequence[str],
    ends: Sequence[str],
    *,
    measure: str,
    counted: str = "queries",
    baseline: str | None = None,
    lower_is_better: bool = False,
    alpha: float = 0.05,
    **bootstrap: Any,
) -> list[Window]:
    """One :class:`Window` per group of values (a window's per-impression or per-query values, in time
    order): the mean with its percentile bootstrap interval (the value itself for one value, nan for none)
    and :func:`compare_windows` against the previous window or the one starting at ``baseline``
    (:func:`baseline_index`).

    :param bootstrap: the interval's ``confidence`` (0.95), ``n_resamples`` (10,000) and ``seed`` (0), as
        :func:`~.significance.bootstrap_ci` takes them.
    :raises StatsInputError: ``baseline`` starts no window; lengths differ.
    :raises TypeError: a keyword that is none of these.
    """
    from .significance import bootstrap_ci

    unknown = sorted(set(bootstrap) - {"confidence", "n_resamples", "seed"})
    if unknown:
        raise TypeError(f"window_series() got an unexpected keyword argument {unknown[0]!r}")

    if not len(groups) == len(starts) == len(ends):
        raise StatsInputError(f"{len(groups)} windows but {len(starts)} starts and {len(ends)} ends")
    arrays = [np.asarray(g, dtype=float) for g in groups]
    refs = references(len(arrays), baseline_index(starts, baseline))
    changes = compare_windows(arrays, refs, lower_is_better=lower_is_better, alpha=alpha)
    out = []
    for g, start, end, change in zip(arrays, starts, ends, changes, strict=True):
        mean = float(g.mean()) if g.size else float("nan")
        if g.size >= 2:
            low, high = (float(x) for x in bootstrap_ci(g, **bootstrap))
        else:
            low = high = mean
        reference = None if change.reference is None else starts[change.reference]
        out.append(
            Window(
                measure,
                start,
                end,
                int(g.size),
                mean,
                low,
                high,
                reference,
                change.delta,
                change.p_value,
                change.p_holm,
                change.flagged,
                counted,
            )
        )
    return out


__all__ = [
    "SCALE",
    "Window",
    "WindowChange",
    "baseline_index",
    "compare_windows",
    "iso",
    "parse_window",
    "references",
    "window_of",
    "window_series",
]
