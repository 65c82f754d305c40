"""Kernels of the diversity measures, as ndeval (TREC Web 2009-2014; pyndeval) computes them.

Each query is scored alone from its ranked documents and its judgments per subtopic
(:meth:`.subtopics.SubtopicQrels.relevant_sets`): a document is relevant to a subtopic when its label
there is at least the relevance level ``rel`` (ndeval binarises every judgment). N, the number of
subtopics, counts those with a relevant document; a query with none scores 0. The novelty gain of the
document at rank i (0-based) is ``G_i = sum_{s: d_i relevant to s} (1 - alpha)^{c_s(i)}``, c_s(i) the
documents above i relevant to s. A family's value (``Family.diversity`` in :mod:`.families`) is
``value(query, cutoffs, params)`` -> one value per cutoff, ``query`` a :class:`QueryView`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

Params = Mapping[str, float | None]


class QueryView:
    """One query as the diversity families read it, shared by those of one tie order and level.

    ``ranked``: its retrieved documents relevant to some subtopic, ``(rank, doc id)`` in rank order (the
    others gain nothing, whatever the measure); ``sets``: doc -> indices of the subtopics it is relevant
    to; ``n``: the subtopics with a relevant document; ``n_judged``: the documents judged for the query.
    """

    __slots__ = ("_gains", "n", "n_judged", "ranked", "sets")

    def __init__(self, ranked: list[tuple[int, str]], sets: Mapping[str, list[int]], n: int, n_judged: int) -> None:
        self.ranked, self.sets, self.n, self.n_judged = ranked, sets, n, n_judged
        self._gains: dict[float, list[float]] = {}

    def gains(self, alpha: float) -> list[float]:
        """:func:`novelty_gains` of the ranked documents (computed once per alpha)."""
        if alpha not in self._gains:
            self._gains[alpha] = novelty_gains(self.ranked, self.sets, alpha)
        return self._gains[alpha]


DiversityValue = Callable[[QueryView, Sequence[int | None], Params], list[float]]


def at_level(labels: Any, params: Params, relevant: Callable[[Any], Any]) -> Any:
    """A query has a relevant document when a label reaches the diversity family's ``rel`` (default 1)."""
    return labels >= params["rel"]


def novelty_gains(ranked: list[tuple[int, str]], sets: Mapping[str, list[int]], alpha: float) -> list[float]:
    """``G_i`` of each ranked document, walking down the ranking as ndeval's loops do."""
    remaining: dict[int, float] = {}
    out = []
    for _, doc in ranked:
        score = 0.0
        for s in sets.get(doc, ()):
            gain = remaining.get(s, 1.0)
            score += gain
            remaining[s] = gain * (1.0 - alpha)
        out.append(score)
    return out


def _discount(rank: int) -> float:
    """ndeval's ``log(2) / log(rank + 2)`` (natural logs, as its C)."""
    return math.log(2.0) / math.log(rank + 2.0)


def _ideal(sets: Mapping[str, list[int]], n_judged: int, alpha: float, depth: int) -> list[float]:
    """ndeval's greedy ideal ranking: at each rank the judged document of highest novelty gain (ties: the
    greatest doc id), to ``depth`` ranks; its gains. Each document's gain is summed over its subtopics in
    index order, as ndeval adds them (adding 0.0 for the others changes no bit). Documents relevant to no
    subtopic gain 0 wherever they stand, so the greedy walks the others and the rest of the ranks gain 0."""
    docs = sorted(sets)
    out: list[float] = []
    if docs:
        n_sub = 1 + max(s for doc in docs for s in sets[doc])
        member = np.zeros((len(docs), n_sub), bool)
        rows, cols = zip(*[(i, sub) for i, doc in enumerate(docs) for sub in sets[doc]], strict=True)
        member[list(rows), list(cols)] = True
        remaining = np.ones(n_sub, np.float64)
        left = np.ones(len(docs), bool)
        for _ in range(min(depth, len(docs))):
            # Running sums along the subtopics, in index order: one addition at a time, as ndeval adds.
            score = np.cumsum(np.where(member, remaining, 0.0), axis=1)[:, -1]
            score[~left] = -1.0
            best = len(docs) - 1 - int(np.argmax(score[::-1]))  # the last maximum: the greatest doc id
            left[best] = False
            remaining[member[best]] *= 1.0 - alpha
            out.append(float(score[best]))
    return out + [0.0] * (min(depth, n_judged) - len(out))


def _depth(cutoffs: Sequence[int | None], n: int) -> int:
    return max(n if k is None else min(k, n) for k in cutoffs) if cutoffs else 0


def alpha_ndcg(query: QueryView, cutoffs: Sequence[int | None], params: Params) -> list[float]:
    """alpha-nDCG@k: ``sum_{i<k} G_i log(2)/log(i+2)`` over the same sum for the greedy ideal ranking."""
    alpha = float(params["alpha"])  # type: ignore[arg-type]
    ranked, gains = query.ranked, query.gains(alpha)
    ideal = _ideal(query.sets, query.n_judged, alpha, _depth(cutoffs, query.n_judged))
    out = []
    for k in cutoffs:
        dcg = 0.0
        for (rank, _), g in zip(ranked, gains, strict=True):
            if k is None or rank < k:
                dcg += g * _discount(rank)
        best = 0.0
        for rank, g in enumerate(ideal if k is None else ideal[:k]):
            best += g * _discount(rank)
        out.append(dcg / best if dcg and best > 0 else 0.0)
    return out


def err_ia(query: QueryView, cutoffs: Sequence[int | None], params: Params) -> list[float]:
    """ERR-IA@k: ``sum_{i<k} G_i / (i+1)`` over ``sum_{i<k} N (1 - alpha)^i / (i+1)`` (ndeval's "ideal ideal")."""
    alpha = float(params["alpha"])  # type: ignore[arg-type]
    ranked, gains = query.ranked, query.gains(alpha)
    out = []
    for k in cutoffs:
        total = 0.0
        for (rank, _), g in zip(ranked, gains, strict=True):
            if k is None or rank < k:
                total += g / (rank + 1.0)
        norm, gain = 0.0, float(query.n)
        for i in range(k if k is not None else max((r for r, _ in ranked), default=0) + 1):
            norm += gain / (i + 1.0)
            gain *= 1.0 - alpha
        out.append(total / norm if norm > 0 else 0.0)
    return out


def nrbp(query: QueryView, cutoffs: Sequence[int | None], params: Params) -> list[float]:
    """NRBP: ``(1 - (1 - alpha) beta) / N * sum_i beta^i G_i`` over the whole ranking."""
    alpha, beta = float(params["alpha"]), float(params["beta"])  # type: ignore[arg-type]
    total = 0.0
    for (rank, _), g in zip(query.ranked, query.gains(alpha), strict=True):
        total += g * beta**rank
    value = total * (1 - (1 - alpha) * beta) / query.n if query.n else 0.0
    return [value for _ in cutoffs]


def subtopic_recall(query: QueryView, cutoffs: Sequence[int | None], params: Params) -> list[float]:
    """StRecall@k (ndeval's strec): the subtopics with a relevant document in the top k, over N."""
    out = []
    for k in cutoffs:
        seen: set[int] = set()
        for rank, doc in query.ranked:
            if k is None or rank < k:
                seen.update(query.sets[doc])
        out.append(len(seen) / query.n if query.n else 0.0)
    return out
