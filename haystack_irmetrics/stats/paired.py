"""N systems against a baseline on per-query values: every paired test, interval and Holm adjustment.

The one comparison ``irmetrics compare``, the report and the feedback evaluation all run
(:func:`compare_with_baseline`): per system, the measures that pair the same queries share one call of
:func:`~.compare.compare_paired` (one set of random draws), and Holm's correction then runs over the
family the ``holm`` scope names.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..checks import Choice, refuse
from .compare import Comparison, compare_paired
from .significance import StatsInputError, check_bootstrap_size, holm

#: The named Holm scopes of :func:`compare_with_baseline` (a callable names any other family).
HOLM_SCOPES = ("all", "system", "system_group")


@dataclass(frozen=True)
class BaselineComparison:
    """Every system but the baseline against it (:func:`compare_with_baseline`).

    :ivar baseline: the system the others are compared with.
    :ivar comparisons: ``{system: {measure: Comparison}}`` in the order given: ``delta`` = system −
        baseline, its bootstrap interval, paired t-test and randomization p-values, ``*_holm`` adjusted
        over the ``holm`` scope's family.
    :ivar untested: ``{system: [measures, ...]}``: each group of measures that pair fewer than two
        queries (no test for them).
    """

    baseline: Any
    comparisons: dict[Any, dict[Any, Comparison]]
    untested: dict[Any, list[tuple[Any, ...]]] = field(default_factory=dict)

    @property
    def tests(self) -> int:
        """How many (system, measure) pairs were tested."""
        return sum(len(found) for found in self.comparisons.values())


def paired_arrays(
    a: Mapping[Any, float], b: Mapping[Any, float], fill: float = 0.0
) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """``(queries, a's values, b's values)`` over the queries either is scored on (sorted); a query one of
    them has no value for takes ``fill`` (a measure's value for a missing query: 0, GMAP's floor).

    Usage::

        >>> paired_arrays({"q1": 0.5, "q2": 1.0}, {"q2": 0.5, "q3": 1.0})
        (['q1', 'q2', 'q3'], array([0.5, 1. , 0. ]), array([0. , 0.5, 1. ]))
    """
    queries = sorted(a.keys() | b.keys())
    x = np.array([a.get(q, fill) for q in queries], dtype=np.float64)
    y = np.array([b.get(q, fill) for q in queries], dtype=np.float64)
    return queries, x, y


def _system_group(system: Any, measure: Any) -> Hashable:
    """The ``"system_group"`` family: a system and its measure's group (the first item of a tuple key)."""
    if not isinstance(measure, tuple) or not measure:
        raise StatsInputError(f"holm_scope='system_group' needs measures written (group, ...), got {measure!r}")
    return system, measure[0]


def _scope(holm_scope: str | Callable[[Any, Any], Hashable]) -> Callable[[Any, Any], Hashable]:
    if callable(holm_scope):
        return holm_scope
    if holm_scope == "all":
        return lambda system, measure: None
    if holm_scope == "system":
        return lambda system, measure: system
    if holm_scope == "system_group":
        return _system_group
    raise refuse(
        holm_scope, "holm_scope", f"{Choice(HOLM_SCOPES).describe()}, or a callable (system, measure)", StatsInputError
    )


def compare_with_baseline(
    values: Mapping[Any, Mapping[Any, Any]],
    baseline: Any,
    *,
    measures: Sequence[Any] | None = None,
    holm_scope: str | Callable[[Any, Any], Hashable] = "all",
    fill: Mapping[Any, float] | float = 0.0,
    log: Collection[Any] = (),
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    intervals: bool = True,
) -> BaselineComparison:
    """Compare every system of ``values`` but ``baseline`` with it, on every measure.

    :param values: ``{system: {measure: per-query values}}``; the per-query values are ``{qid: value}``
        (paired over the queries either system is scored on, a missing one taking ``fill``) or arrays
        aligned by position with the baseline's.
    :param baseline: the system the others are compared with (a key of ``values``).
    :param measures: the measures compared, in this order (default: the baseline's).
    :param holm_scope: the family Holm's correction runs over: ``"all"`` (every system × measure tested,
        the default), ``"system"`` (each system's measures), ``"system_group"`` (each system and group of
        measures, a measure being a tuple ``(group, ...)``: the feedback evaluation's list variants), or a
        callable ``(system, measure) -> family``.
    :param fill: the value of a query a system has no value for, per measure (``{measure: value}``) or for all.
    :param log: measures compared on the log of their values (geometric means: ``delta`` is the log ratio).
    :param n_resamples: sign patterns and bootstrap resamples; ``seed``: their seed; ``confidence``: the level
        of the intervals; ``intervals=False`` leaves them NaN (for callers that resample once for everything).

    Each system's measures over the same queries share one call of :func:`~.compare.compare_paired` (one set
    of random draws); a group of fewer than two queries is not tested (:attr:`BaselineComparison.untested`).

    Usage::

        >>> values = {"bm25": {"P@1": [0.0, 1.0, 0.0, 1.0]}, "dense": {"P@1": [1.0, 1.0, 1.0, 1.0]}}
        >>> c = compare_with_baseline(values, "bm25").comparisons["dense"]["P@1"]
        >>> c.delta, c.p_randomization, c.p_randomization_holm
        (0.5, 0.5, 0.5)
    """
    if baseline not in values:
        raise StatsInputError(f"the baseline {baseline!r} is not one of the systems {list(values)}")
    family_of = _scope(holm_scope)
    names = list(values[baseline]) if measures is None else list(measures)
    base = values[baseline]
    found: list[tuple[Any, Comparison]] = []
    untested: dict[Any, list[tuple[Any, ...]]] = {}
    pending: list[tuple[Any, list[Any], dict[Any, np.ndarray], dict[Any, np.ndarray]]] = []
    for system, own in values.items():
        if system == baseline:
            continue
        groups: dict[tuple[Any, ...], list[Any]] = {}
        pairs: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
        for m in names:  # measures over the same queries share one call (one set of draws)
            a, b = own[m], base[m]
            if isinstance(a, Mapping) and isinstance(b, Mapping):
                queries, x, y = paired_arrays(a, b, fill.get(m, 0.0) if isinstance(fill, Mapping) else fill)
                key = tuple(queries)
            else:
                x, y = np.asarray(a), np.asarray(b)
                key = (len(x),)
            if m in log:  # a geometric mean's values are >= its floor (> 0)
                x, y = np.log(x), np.log(y)
            pairs[m] = (x, y)
            groups.setdefault(key, []).append(m)
        for group in groups.values():
            n = len(pairs[group[0]][0])
            if n < 2:
                untested.setdefault(system, []).append(tuple(group))
                continue
            pending.append((system, group, {m: pairs[m][0] for m in group}, {m: pairs[m][1] for m in group}))
    if intervals:  # every group's bootstrap fits, before any test runs
        for _, group, _, _ in pending:
            check_bootstrap_size(n_resamples, len(group))
    for system, _, a, b in pending:
        for c in compare_paired(a, b, n_resamples=n_resamples, seed=seed, confidence=confidence, intervals=intervals):
            found.append((system, c))
    families: dict[Hashable, list[int]] = {}
    for i, (system, c) in enumerate(found):
        families.setdefault(family_of(system, c.metric), []).append(i)
    p_t, p_r = np.empty(len(found)), np.empty(len(found))
    for idx in families.values():
        p_t[idx] = holm([found[i][1].p_t for i in idx])
        p_r[idx] = holm([found[i][1].p_randomization for i in idx])
    adjusted: dict[Any, dict[Any, Comparison]] = {}
    for (system, c), t, r in zip(found, p_t.tolist(), p_r.tolist(), strict=True):
        adjusted.setdefault(system, {})[c.metric] = replace(c, p_t_holm=float(t), p_randomization_holm=float(r))
    ordered = {s: {m: adjusted[s][m] for m in names if m in adjusted[s]} for s in values if s in adjusted}
    return BaselineComparison(baseline, ordered, untested)


__all__ = ["HOLM_SCOPES", "BaselineComparison", "compare_with_baseline", "paired_arrays"]
