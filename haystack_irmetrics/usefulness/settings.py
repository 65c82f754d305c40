"""How usefulness labels are made, as one frozen value the CLI and the Python API build once (standard library only,
so that ``irmetrics usefulness --help`` imports nothing more): :class:`UsefulnessSettings`, the settings of
:func:`~haystack_irmetrics.usefulness.labelling.label_usefulness`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._settings import settings_of

#: The default measures' families, each at the depth: ``NDCG@10, P@10, MRR@10, Success@10`` at depth 10.
DEFAULT_FAMILIES = ("NDCG", "P", "MRR", "Success")


def default_measures(depth: int) -> tuple[str, ...]:
    """The default measures at cutoff ``depth``.

    >>> default_measures(10)
    ('NDCG@10', 'P@10', 'MRR@10', 'Success@10')
    """
    return tuple(f"{family}@{depth}" for family in DEFAULT_FAMILIES)


@dataclass(frozen=True)
class UsefulnessSettings:
    """How :func:`~haystack_irmetrics.usefulness.labelling.label_usefulness` labels (each field is its keyword of
    the same name; its docstring says what each does). Each value is checked when the settings are built; the
    measures (known, no cutoff above ``depth``) before the first request."""

    depth: int = 10
    answer_metric: str = "exact_match"
    #: ``None``: :func:`default_measures` of ``depth``.
    measures: tuple[str, ...] | None = None
    #: ``None``: no end-to-end answers; N: each run's top N asked together too.
    end_to_end: int | None = None
    concurrency: int = 8
    retries: int = 4
    backoff: float = 0.5
    progress: bool | None = False
    #: What to call the queries, the corpus and the answers in messages (their files).
    sources: tuple[str, str, str] = ("the queries", "the corpus", "the answers")
    #: The answers file, recorded in ``summary.json`` (its absolute path and SHA-256).
    answers_file: str | None = None

    def __post_init__(self) -> None:
        from ..checks import choice, number, whole
        from ..errors import UsefulnessError
        from .metrics import ANSWER_METRICS

        for name, least in (("depth", 1), ("concurrency", 1), ("retries", 0)):
            whole(getattr(self, name), name, least=least, error=UsefulnessError)
        if self.end_to_end is not None:
            whole(self.end_to_end, "end_to_end (documents asked together)", least=1, error=UsefulnessError)
        number(self.backoff, "backoff (seconds)", 0, None, error=UsefulnessError)
        choice(self.answer_metric, "the answer metric", ANSWER_METRICS, error=UsefulnessError)
        if self.measures is not None:
            given = self.measures
            if isinstance(given, str) or not given or not all(isinstance(m, str) for m in given):
                raise UsefulnessError(f"measures must be a list of one or more measure names, got {given!r:.80}")
            object.__setattr__(self, "measures", tuple(given))

    @property
    def measure_names(self) -> tuple[str, ...]:
        """The measures asked for, or the defaults at the depth (:func:`default_measures`)."""
        return default_measures(self.depth) if self.measures is None else self.measures

    @classmethod
    def of(cls, settings: UsefulnessSettings | None, options: Mapping[str, Any]) -> UsefulnessSettings:
        """``settings`` (default: the defaults) with the keyword ``options`` in place of its fields.

        :raises TypeError: an option that is no field, as Python says of an unknown keyword.
        """
        return settings_of(cls, options, "label_usefulness", base=settings)


__all__ = ["DEFAULT_FAMILIES", "UsefulnessSettings", "default_measures"]
