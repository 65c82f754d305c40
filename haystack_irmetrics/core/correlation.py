"""Rank correlation: Spearman's rho and Kendall's tau-b, exactly as :mod:`scipy.stats` computes them.

Three questions, one function underneath:

* two rankings of the same items (``["d3", "d1", "d2"]`` or ``{"d1": 0.9, ...}``) --
  :func:`rank_correlation`;
* two systems' per-query scores (do they find the same queries hard?) -- :func:`per_query_correlation`;
* two orderings of systems (do two measures, or two sets of judgments, rank the systems alike?) --
  :func:`system_correlation`.

A ranking given as a sequence is best first; a mapping gives each item a score (higher = better;
equal scores are ties, which tau-b and Spearman's average ranks account for). The statistic and the
p-value are scipy's own (``scipy.stats.spearmanr`` / ``kendalltau(variant="b")``), imported on first
use; a constant input gives ``nan`` as in scipy.

Usage (the lecture's example: K = 10 documents whose squared position differences sum to 24)::

    >>> from haystack_irmetrics.core.correlation import rank_correlation
    >>> r1 = ["d123", "d84", "d56", "d6", "d8", "d9", "d511", "d129", "d187", "d25"]
    >>> r2 = ["d56", "d123", "d84", "d8", "d6", "d187", "d9", "d511", "d25", "d129"]
    >>> round(rank_correlation(r1, r2, "spearman").statistic, 4)
    0.8545
    >>> round(rank_correlation(r1[:5], ["d56", "d123", "d84", "d8", "d6"], "kendall").statistic, 4)
    0.4
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._extras import require
from ..errors import EmptyInputError, InvalidIdError, InvalidPolicyError, InvalidScoreError
from .inputs import _is_finite_number, _shown

Method = Literal["kendall", "spearman"]
Ranking = Sequence[str] | Mapping[str, float]


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with scipy's two-sided p-value over ``n`` paired items."""

    method: str
    statistic: float
    pvalue: float
    n: int

    def __float__(self) -> float:
        return self.statistic


def _scores(ranking: Ranking, which: str) -> dict[Any, float]:
    if isinstance(ranking, Mapping):
        out = {}
        for item, value in ranking.items():
            if not _is_finite_number(value):  # the core's rule: no bool, no numeric string
                raise InvalidScoreError(f"{which}: score {_shown(value)} of {item!r} is not a finite number")
            out[item] = float(value)
        return out
    if isinstance(ranking, str | bytes):
        raise InvalidIdError(f"{which}: a ranking is a sequence of items or a mapping item -> score, got a string")
    items = list(ranking)
    out = {item: -float(pos) for pos, item in enumerate(items)}
    if len(out) != len(items):
        seen: set = set()
        dup = next(x for x in items if x in seen or seen.add(x))
        raise InvalidIdError(f"{which}: item {dup!r} appears twice in the ranking")
    return out


def rank_correlation(a: Ranking, b: Ranking, method: Method = "kendall") -> Correlation:
    """Correlation between two rankings of the same items.

    :param a: items best first, or ``{item: score}`` (higher = better).
    :param b: the same items, ranked by the other system (either form).
    :param method: ``"kendall"`` (tau-b, ties accounted for) or ``"spearman"``.
    :returns: :class:`Correlation`, equal to scipy's result on the aligned scores.
    :raises InvalidIdError: the two rankings do not hold the same items (or one repeats an item).
    :raises EmptyInputError: fewer than two items. :raises InvalidPolicyError: unknown method.

    Usage::

        >>> rank_correlation({"a": 3.0, "b": 2.0, "c": 1.0}, ["a", "c", "b"], "spearman").statistic
        0.5
    """
    if method not in ("kendall", "spearman"):
        raise InvalidPolicyError(f"method must be 'kendall' or 'spearman', got {method!r}")
    sa, sb = _scores(a, "first ranking"), _scores(b, "second ranking")
    if sa.keys() != sb.keys():
        only_a = sorted(map(str, sa.keys() - sb.keys()))[:5]
        only_b = sorted(map(str, sb.keys() - sa.keys()))[:5]
        raise InvalidIdError(
            f"the rankings must hold the same items: only in the first {only_a}, only in the second {only_b}"
        )
    if len(sa) < 2:
        raise EmptyInputError(f"a rank correlation needs at least two items, got {len(sa)}")
    items = list(sa)
    x = [sa[i] for i in items]
    y = [sb[i] for i in items]
    require("scipy", purpose="rank correlations")
    from scipy import stats

    res = stats.kendalltau(x, y) if method == "kendall" else stats.spearmanr(x, y)
    return Correlation(method, float(res.statistic), float(res.pvalue), len(items))


def per_query_correlation(
    a: Mapping[str, float] | Any,
    b: Mapping[str, float] | Any,
    measure: str | None = None,
    method: Method = "kendall",
) -> Correlation:
    """Correlation of two systems' per-query values of one measure, over their shared query set.

    :param a: ``{qid: value}``, or an :class:`~haystack_irmetrics.core.evaluate.EvaluationResult`
        (then ``measure`` names the measure, e.g. ``"NDCG@10"``).
    :param b: the other system, same form and same queries.
    :returns: :class:`Correlation`.

    Usage::

        >>> per_query_correlation({"q1": 0.2, "q2": 0.9, "q3": 0.5}, {"q1": 0.1, "q2": 0.7, "q3": 0.6}).statistic
        1.0
    """
    return rank_correlation(_per_query(a, measure), _per_query(b, measure), method)


def _per_query(x: Any, measure: str | None) -> Mapping[str, float]:
    if hasattr(x, "per_query") and hasattr(x, "raw_means"):
        if measure is None:
            raise InvalidPolicyError("pass measure= to correlate two EvaluationResults")
        from .measures import parse_measure

        name = parse_measure(measure).name
        if name not in x.per_query:
            raise InvalidPolicyError(f"{name} is not among the evaluated measures: {', '.join(x.per_query)}")
        return x.per_query[name]
    return x


def system_correlation(a: Mapping[str, float], b: Mapping[str, float], method: Method = "kendall") -> Correlation:
    """Correlation between two orderings of the same systems, e.g. ``{system: MAP}`` vs ``{system: NDCG@10}``.

    Usage::

        >>> c = system_correlation({"bm25": 0.41, "dense": 0.47, "hybrid": 0.52},
        ...                        {"bm25": 0.30, "dense": 0.36, "hybrid": 0.33})
        >>> round(c.statistic, 4), c.n
        (0.3333, 3)
    """
    return rank_correlation(a, b, method)


__all__ = ["Correlation", "per_query_correlation", "rank_correlation", "system_correlation"]
