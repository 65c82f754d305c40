"""Time windows over a feedback log: the logged system's measures per window, and the windows that dropped.

The judgments come from the whole log (every vote, the strategy's labels); per window (``"1d"``, ``"7d"``,
... aligned to the epoch, days at midnight UTC), the rankings users saw in that window (per query,
documents by mean logged position, then best position, then id, as the logged run is made) are scored
against them, query by query, with the feedback preset. Per measure and window: the mean over the
window's judged queries with a percentile bootstrap interval; each window against the previous one (or
one ``baseline`` window) by Welch's two-sample t-test, Holm-adjusted across windows
(:func:`~haystack_irmetrics.stats.windows.compare_windows`): a window worse than its reference at an
adjusted p below ``alpha`` is flagged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._settings import settings_of
from ..errors import FeedbackSchemaError
from ..stats.windows import Window, window_of, window_series
from .judgments import Strategy
from .reading import FeedbackLog
from .settings import WindowSettings

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl


def _ranked(frame: pl.DataFrame) -> dict[str, list[str]]:
    from ._deps import pl

    shown = (
        frame.filter(pl.col("position").is_not_null())
        .group_by("query", "doc")
        .agg(pl.col("position").mean().alias("mean"), pl.col("position").min().alias("best"))
        .sort("query", "mean", "best", "doc")
    )
    out: dict[str, list[str]] = {}
    for q, d in shown.select("query", "doc").iter_rows():
        out.setdefault(q, []).append(d)
    return out


def feedback_windows(
    log: FeedbackLog,
    strategy: Strategy | str = "mean",
    settings: WindowSettings | None = None,
    **options: Any,
) -> list[Window]:
    """Every measure per window for the logged system (see the module docs), measure by measure in time order.

    :param settings: the window width, the measures and the tests, as one value
        (:class:`~.settings.WindowSettings`); ``options`` are its fields as keywords (``width="1d"``,
        ``k_values=[5]``), each in place of the settings' own.
    :raises FeedbackSchemaError: the log has no timestamp or position column, or a row has no timestamp.
    :raises TypeError: an option that is no field of :class:`~.settings.WindowSettings`.
    """
    s = settings_of(WindowSettings, options, "feedback_windows", base=settings)
    from ._deps import pl
    from .aggregate import aggregate_feedback
    from .scoring import score_system

    if log.columns.timestamp is None:
        raise FeedbackSchemaError(f"{log.name}: windows need the log's timestamp column (--timestamp-col)")
    if log.columns.position is None:
        raise FeedbackSchemaError(f"{log.name}: windows score the logged rankings, which need positions")
    strat = Strategy.parse(strategy) if isinstance(strategy, str) else strategy
    qrels = aggregate_feedback(log, strat).qrels()
    frame = log.to_frame()
    missing = frame.filter(pl.col("timestamp").is_null())
    if missing.height:
        raise FeedbackSchemaError(f"{log.name}: row {missing['row'][0]} has no timestamp; windows need one per row")
    index, starts, ends = window_of(frame["timestamp"].to_numpy(), s.width, s.unit)
    frame = frame.with_columns(pl.Series("window", index))
    per_window: list[dict[str, np.ndarray]] = []
    names: list[str] = []
    for w in range(len(starts)):
        ranked = _ranked(frame.filter(pl.col("window") == w))
        scores = score_system("logged", ranked, qrels, k_values=s.k_values, measures=s.measures,
                              threshold=s.threshold, preset=s.preset, condensed=False)  # fmt: skip
        keep = np.array([q in ranked for q in scores.queries], dtype=bool)  # the queries shown in the window
        names = list(scores.values["full"])
        per_window.append({m: v[keep] for m, v in scores.values["full"].items()})
    out: list[Window] = []
    for m in names:
        groups = [values[m] for values in per_window]
        out += window_series(groups, starts, ends, measure=m, counted="queries", baseline=s.baseline, alpha=s.alpha,
                             confidence=s.confidence, n_resamples=s.n_resamples, seed=s.seed)  # fmt: skip
    return out


__all__ = ["Window", "WindowSettings", "feedback_windows"]
