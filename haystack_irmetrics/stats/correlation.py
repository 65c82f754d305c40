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

    >>> from haystack_irmetrics.stats.correlation import rank_correlation
    >>> r1 = ["d123", "d84", "d56", "d6", "d8", "d9", "d511", "d129", "d187", "d25"]
    >>> r2 = ["d56", "d123", "d84", "d8", "d6", "d187", "d9", "d511", "d25", "d129"]
    >>> round(rank_correlation(r1, r2, "spearman").statistic, 4)
    0.8545
    >>> round(rank_correlation(r1[:5], ["d56", "d123", "d84", "d8", "d6"], "kendall").statistic, 4)
    0.4
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Literal

from .._extras import require
from ..core.validation import is_finite_number, shown
from ..errors import EmptyInputError, InvalidIdError, InvalidPolicyError, InvalidScoreError

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
            if not is_finite_number(value):  # the core's rule: no bool, no numeric string
                raise InvalidScoreError(f"{which}: score {shown(value)} of {item!r} is not a finite number")
            out[item] = float(value)
        return out
    if isinstance(ranking, str | bytes) or not isinstance(ranking, Iterable):
        raise InvalidIdError(
            f"{which}: a ranking is a sequence of items or a mapping item -> score, got "
            + ("a string" if isinstance(ranking, str | bytes) else type(ranking).__name__)
        )
    items = list(ranking)
    try:
        out = {item: -float(pos) for pos, item in enumerate(items)}
    except TypeError:
        raise InvalidIdError(f"{which}: items must be hashable ids, got {_unhashable(items)!r}") from None
    if len(out) != len(items):
        seen: set = set()
        dup = next(x for x in items if x in seen or seen.add(x))
        raise InvalidIdError(f"{which}: item {dup!r} appears twice in the ranking")
    return out


def _unhashable(items: list) -> Any:
    for x in items:
        try:
            hash(x)
        except TypeError:
            return x
    return None


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

    :param a: ``{qid: value}`` (or a pandas Series indexed by query id), an
        :class:`~haystack_irmetrics.core.evaluation.EvaluationResult` (then ``measure`` names the measure,
        e.g. ``"NDCG@10"``), or values in query order (a list or 1-D array, as the
        :mod:`haystack_irmetrics.stats` functions take them).
    :param b: the other system. Mappings and results are paired by query id, over the queries both
        have (``Correlation.n`` says how many: e.g. each run's answered queries under the beir preset);
        values in query order are paired by position and must be as many.
    :returns: :class:`Correlation`.
    :raises EmptyInputError: fewer than two shared queries.

    Usage::

        >>> per_query_correlation({"q1": 0.2, "q2": 0.9, "q3": 0.5}, {"q1": 0.1, "q2": 0.7, "q3": 0.6}).statistic
        1.0
        >>> round(per_query_correlation([0.2, 0.9, 0.5, 0.7], [0.1, 0.7, 0.6, 0.9], method="spearman").statistic, 2)
        0.8
    """
    va, vb = _per_query(a, measure, "first"), _per_query(b, measure, "second")
    if isinstance(va, Mapping) != isinstance(vb, Mapping):
        raise InvalidIdError(
            "give both systems' per-query values the same way: both keyed by query id, or both in query order"
        )
    if not isinstance(va, Mapping):
        if len(va) != len(vb):
            raise InvalidIdError(f"values in query order must be as many for both systems: {len(va)} and {len(vb)}")
        va, vb = dict(enumerate(va)), dict(enumerate(vb))
    shared = [q for q in va if q in vb]
    if len(shared) < 2:
        raise EmptyInputError(
            f"a per-query correlation needs at least two queries that both systems have, got {len(shared)}"
        )
    return rank_correlation({q: va[q] for q in shared}, {q: vb[q] for q in shared}, method)


def _per_query(x: Any, measure: str | None, which: str) -> Mapping[Any, float] | list:
    if hasattr(x, "per_query") and hasattr(x, "raw_means"):
        if measure is None:
            raise InvalidPolicyError("pass measure= to correlate two EvaluationResults")
        from ..core.measures import parse_measure

        name = parse_measure(measure).name
        if name not in x.per_query:
            raise InvalidPolicyError(f"{name} is not among the evaluated measures: {', '.join(x.per_query)}")
        return x.per_query[name]
    if isinstance(x, Mapping):
        return x
    index = getattr(x, "index", None)
    if index is not None and not callable(index) and getattr(x, "ndim", 1) == 1:
        keyed = dict(zip(index, x.tolist()))  # a pandas Series: keyed by its labels (query ids)
        if len(keyed) != len(x):
            raise InvalidIdError(f"{which} system: a query id labels two values of the Series; ids must be unique")
        return keyed
    if (
        isinstance(x, str | bytes | AbstractSet)
        or not isinstance(x, Iterable)
        or getattr(x, "ndim", 1) != 1  # a 0-d or 2-d array
    ):
        raise InvalidScoreError(
            f"{which} system: per-query values are {{qid: value}}, an EvaluationResult or values in query order "
            f"(a list or 1-D array), got {type(x).__name__}"
        )
    values = x.tolist() if hasattr(x, "tolist") else list(x)  # numpy: plain floats
    if any(isinstance(v, list) for v in values):
        raise InvalidScoreError(f"{which} system: values in query order must be one number per query (1-D)")
    return values


def system_correlation(a: Mapping[str, float], b: Mapping[str, float], method: Method = "kendall") -> Correlation:
    """Correlation between two orderings of the same systems, e.g. ``{system: MAP}`` vs ``{system: NDCG@10}``.

    Usage::

        >>> c = system_correlation({"bm25": 0.41, "dense": 0.47, "hybrid": 0.52},
        ...                        {"bm25": 0.30, "dense": 0.36, "hybrid": 0.33})
        >>> round(c.statistic, 4), c.n
        (0.3333, 3)
    """
    return rank_correlation(a, b, method)


def tau_ap(truth: Mapping[str, float], estimate: Mapping[str, float]) -> float:
    """Yilmaz, Aslam and Robertson's AP rank correlation (SIGIR 2008) of the systems' order by ``estimate``
    against their order by ``truth`` (higher = better in both): swaps near the top cost more than swaps
    near the bottom, and the measure is not symmetric.

    ``tau_AP = 2 / (N - 1) * sum(C(i) / (i - 1) for i = 2..N) - 1``, with ``C(i)`` the systems above rank
    ``i`` of the estimated order that are above it in the truth too. Systems tied in ``estimate`` are ordered
    by their ``truth`` score, worst first (the pessimistic order); a pair tied in ``truth`` counts one half.

    Usage::

        >>> tau_ap({"a": 3, "b": 2, "c": 1}, {"a": 0.9, "b": 0.5, "c": 0.1})
        1.0
        >>> round(tau_ap({"a": 3, "b": 2, "c": 1}, {"a": 0.1, "b": 0.5, "c": 0.9}), 4)
        -1.0
        >>> tau_ap({"a": 3, "b": 2, "c": 1}, {"a": 0.9, "b": 0.1, "c": 0.5})
        0.5

    :raises InvalidIdError: the two mappings do not hold the same systems.
    :raises EmptyInputError: fewer than two systems.
    """
    if set(truth) != set(estimate):
        raise InvalidIdError("tau_AP needs the same systems on both sides")
    if len(truth) < 2:
        raise EmptyInputError("tau_AP needs at least two systems")
    t = _scores(truth, "truth")
    e = _scores(estimate, "estimate")
    order = sorted(t, key=lambda s: (-e[s], t[s]))
    total = 0.0
    for i in range(1, len(order)):
        below = t[order[i]]
        correct = sum(1.0 if t[s] > below else 0.5 if t[s] == below else 0.0 for s in order[:i])
        total += correct / i
    return 2.0 * total / (len(order) - 1) - 1.0


__all__ = ["Correlation", "per_query_correlation", "rank_correlation", "system_correlation", "tau_ap"]
