"""How a feedback log is scored, as frozen values the CLI and the Python API build once (standard library only):
:class:`FeedbackSettings`, the settings of :func:`~haystack_irmetrics.feedback.evaluate.evaluate_feedback`, and
:class:`WindowSettings`, those of :func:`~haystack_irmetrics.feedback.windows.feedback_windows`. Each function
takes its settings value, or its fields as keywords (:func:`split_settings`).
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
    the same name; its docstring says what each does). The values are checked there, before the log is read."""

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


S = TypeVar("S", FeedbackSettings, WindowSettings)


def split_settings(
    kind: type[S], settings: S | None, options: Mapping[str, Any], caller: str
) -> tuple[S, dict[str, Any]]:
    """``(settings, rest)``: ``settings`` (default: ``kind()``) with those of the keyword ``options`` that are its
    fields in their place (:func:`haystack_irmetrics._settings.settings_of`), and the other options, which
    ``caller`` takes for another function of its own (``evaluate_feedback``: the log's ``columns``, ...)."""
    names = {f.name for f in fields(kind)}
    mine = {k: v for k, v in options.items() if k in names}
    rest = {k: v for k, v in options.items() if k not in names}
    return settings_of(kind, mine, caller, base=settings), rest


__all__ = ["DEFAULT_K_VALUES", "FeedbackSettings", "WindowSettings", "split_settings"]
