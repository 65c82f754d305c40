"""How a feedback log is scored, as frozen values the CLI and the Python API build once (standard library only at
import; the checks import what they check with): :class:`FeedbackSettings`, the settings of
:func:`~haystack_irmetrics.feedback.evaluate.evaluate_feedback`, and :class:`WindowSettings`, those of
:func:`~haystack_irmetrics.feedback.windows.feedback_windows`. Each function takes its settings value, or its fields
as keywords (:func:`split_settings`); each value is checked when the settings are built, before a log is read
(aggregating a large one takes a while).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar

from .._settings import settings_of

if TYPE_CHECKING:  # pragma: no cover
    from .judgments import Strategy

#: The cutoffs a feedback report scores unless told otherwise.
DEFAULT_K_VALUES = (1, 3, 5, 10)


@dataclass(frozen=True)
class FeedbackSettings:
    """How :func:`~haystack_irmetrics.feedback.evaluate.evaluate_feedback` scores (each field is its keyword of
    the same name; its docstring says what each does).

    :raises FeedbackError: a threshold, preset, test or measure it cannot take (a measure without a cutoff too:
        the report's tables, curves and Judged@k are per cutoff).
    :raises UnknownStrategyError: a strategy that is none of the names.
    :raises StatsInputError: ``n_resamples``, ``seed`` or ``confidence`` the tests could not take.
    """

    strategy: Strategy | str = "mean"
    threshold: float = 0.5
    k_values: Sequence[int] = DEFAULT_K_VALUES
    measures: Sequence[str] | None = None
    condensed: bool = True
    include_logged: bool = True
    baseline: str | None = None
    by_segment: bool | None = None
    preset: str = "beir"
    n_resamples: int = 10_000
    seed: int = 0
    confidence: float = 0.95
    test: str = "randomization"

    def __post_init__(self) -> None:
        from ..checks import choice
        from ..errors import FeedbackError
        from .judgments import Strategy

        if isinstance(self.strategy, str):
            Strategy.parse(self.strategy)  # a name it knows; the Strategy itself is made where the log is read
        choice(self.test, "test", ("randomization", "t"), error=FeedbackError)
        _check_scoring(self)
        whole = [m.name for m in self.wanted() if m.cutoff is None]
        if whole:
            raise FeedbackError(f"feedback reports take measures with a cutoff (e.g. NDCG@10, P@5); got {whole}")

    def wanted(self) -> list[Any]:
        """The measures scored: ``measures`` (default BEIR's six families) at ``k_values``."""
        return _measures(self)


@dataclass(frozen=True)
class WindowSettings:
    """How :func:`~haystack_irmetrics.feedback.windows.feedback_windows` scores the logged rankings per time
    window: the window ``width`` (``"1d"``), the ``unit`` of numeric timestamps, the measures (``k_values`` ×
    ``measures``) at ``threshold`` with ``preset``, the window every other is compared with (``baseline``; default
    each with the previous), the adjusted p below which a drop is flagged (``alpha``), and the bootstrap's
    ``confidence``, ``n_resamples`` and ``seed``."""

    width: str = "1d"
    k_values: Sequence[int] = (10,)
    measures: Sequence[str] | None = ("NDCG",)
    threshold: float = 0.5
    preset: str = "beir"
    unit: str = "us"
    baseline: str | None = None
    alpha: float = 0.05
    confidence: float = 0.95
    n_resamples: int = 10_000
    seed: int = 0

    def __post_init__(self) -> None:
        from ..checks import choice, number
        from ..errors import FeedbackError
        from ..stats.windows import SCALE, parse_window

        parse_window(self.width)
        choice(self.unit, "unit", SCALE, error=FeedbackError)
        number(self.alpha, "alpha", 0, 1, closed="neither", error=FeedbackError)
        _check_scoring(self)
        _measures(self)


def _check_scoring(s: FeedbackSettings | WindowSettings) -> None:
    """What both settings share: the threshold, the preset and the tests' resamples, seed and confidence."""
    from ..checks import choice, number
    from ..core.presets import PRESETS
    from ..errors import FeedbackError
    from ..stats.significance import check_confidence, check_resamples, check_seed

    number(s.threshold, "threshold", 0, closed="neither", finite=False, error=FeedbackError)
    choice(s.preset, "preset", tuple(PRESETS), error=FeedbackError)
    # Checked here, not only where a test runs: a log with one query runs none.
    check_resamples(s.n_resamples)
    check_seed(s.seed)
    check_confidence(s.confidence)


def _measures(s: FeedbackSettings | WindowSettings) -> list[Any]:
    from ..core import resolve_measures

    return resolve_measures(s.measures, s.k_values)


S = TypeVar("S", FeedbackSettings, WindowSettings)


def split_settings(
    kind: type[S], settings: S | None, options: Mapping[str, Any], caller: str
) -> tuple[S, dict[str, Any]]:
    """``(settings, rest)``: ``settings`` (default: ``kind()``) with those of the keyword ``options`` that are its
    fields in their place (:func:`haystack_irmetrics._settings.settings_of`), and the other options, which
    ``caller`` checks and takes for another function of its own (``evaluate_feedback``: the log's ``columns``,
    the strategy's ``min_votes``, ..., each refused up front when it is none of those). A field's name is the
    settings' (``confidence``)."""
    names = {f.name for f in fields(kind)}
    mine = {k: v for k, v in options.items() if k in names}
    rest = {k: v for k, v in options.items() if k not in names}
    return settings_of(kind, mine, caller, base=settings), rest


__all__ = ["DEFAULT_K_VALUES", "FeedbackSettings", "WindowSettings", "split_settings"]
