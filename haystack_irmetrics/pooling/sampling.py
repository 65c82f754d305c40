"""A stratified sample of the pool with known inclusion probabilities (Yilmaz, Kanoulas & Aslam 2008, *A simple
and efficient sampling method for estimating AP and NDCG*, SIGIR), for the estimators of :mod:`.estimators`.

Each query's pool (the runs' top ``depth`` documents) is cut into strata by each document's best rank over the
runs: with ``edges=(10, 30, 100)`` the strata are ranks 1-10, 11-30, 31-100 and below 100. Stratum ``h``
(from 0) gets a sampling rate proportional to ``decay ** h`` (shallow documents are sampled more), capped at
1, one common factor for every query and stratum chosen so that the sample is the budget (at least one
document of every stratum when the budget allows one each); the counts are rounded by largest remainders.
``n`` documents are drawn without replacement from a stratum of ``N`` (seeded), so each has the inclusion
probability ``n / N``, and two of the same stratum ``n (n - 1) / (N (N - 1))``. Pool documents judged before
(``judged``) are no part of any stratum: they are in the sample with probability 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ..checks import is_whole, number, whole
from ..errors import PoolingError
from ..stats.significance import check_seed
from .runs import PoolRuns, RunInput
from .strategies import PoolPair, Strategy


@dataclass(frozen=True)
class Stratum:
    """One query's documents of one band of best ranks, and the ones drawn from them."""

    query: str
    index: int
    docs: tuple[str, ...]
    sampled: tuple[str, ...]

    @property
    def probability(self) -> float:
        """Each document's inclusion probability ``n / N``."""
        return len(self.sampled) / len(self.docs) if self.docs else 0.0

    @property
    def joint(self) -> float:
        """Two documents' joint inclusion probability ``n (n - 1) / (N (N - 1))`` (0 when fewer than 2 are drawn)."""
        n, size = len(self.sampled), len(self.docs)
        return n * (n - 1) / (size * (size - 1)) if n > 1 else 0.0


@dataclass(frozen=True)
class StratifiedDesign:
    """A stratified sample of a pool: ``strata[qid]`` in band order; ``certain[qid]``: pool documents judged
    before the sample (inclusion probability 1); ``edges``: the bands' last ranks."""

    edges: tuple[int, ...]
    strata: dict[str, tuple[Stratum, ...]]
    certain: dict[str, frozenset[str]]
    _where: dict[tuple[str, str], Stratum | None] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for q, strata in self.strata.items():
            for s in strata:
                for d in s.docs:
                    self._where[(q, d)] = s
            for d in self.certain.get(q, ()):
                self._where[(q, d)] = None

    def stratum(self, query: str, doc: str) -> Stratum | None:
        """The stratum of a pool document (``None`` for a document judged before); :raises KeyError: outside the pool."""
        return self._where[(query, doc)]

    def in_pool(self, query: str, doc: str) -> bool:
        return (query, doc) in self._where

    def probability(self, query: str, doc: str) -> float:
        """The inclusion probability of a pool document (1 for one judged before; 0 outside the pool)."""
        if (query, doc) not in self._where:
            return 0.0
        s = self._where[(query, doc)]
        return 1.0 if s is None else s.probability

    def pairs(self) -> list[PoolPair]:
        """The sampled pairs: stratum by stratum (shallowest first), queries in order, documents by best rank."""
        deepest = max((len(s) for s in self.strata.values()), default=0)
        out = []
        for h in range(deepest):
            for q, strata in self.strata.items():
                if h < len(strata):
                    s = strata[h]
                    out.extend(PoolPair(q, d, s.probability) for d in s.sampled)
        return out


def check_edges(edges: Any) -> tuple[int, ...]:
    """Strata edges checked: increasing whole numbers >= 1."""
    try:
        values = tuple(edges)
    except TypeError:
        values = (edges,)
    if not values or any(not is_whole(e) or e < 1 for e in values):
        raise PoolingError(f"strata edges are whole numbers >= 1, e.g. 10,30,100; got {edges!r}")
    if any(b <= a for a, b in pairwise(values)):
        raise PoolingError(f"strata edges must increase, got {','.join(map(str, values))}")
    return values


def band(best_rank: int, edges: Sequence[int]) -> int:
    """The stratum of a document whose best rank (1-based) over the runs is ``best_rank``."""
    for h, edge in enumerate(edges):
        if best_rank <= edge:
            return h
    return len(edges)


def populations(runs: PoolRuns, edges: Sequence[int], judged: set[tuple[str, str]]) -> dict[str, list[list[str]]]:
    """Each query's pool documents not in ``judged``, by stratum (index ``h`` of the list), best rank first,
    equal best ranks by document id: an order no listing of the runs changes (the sample's draw indexes it)."""
    out: dict[str, list[list[str]]] = {}
    for i, q in enumerate(runs.qids):
        best: dict[str, int] = {}
        for ranking in runs.query_rankings(i):
            for k, d in enumerate(ranking):
                if d not in best or k < best[d]:
                    best[d] = k
        bands: list[list[str]] = [[] for _ in range(len(edges) + 1)]
        for d in sorted(best, key=lambda d: (best[d], d)):
            if (q, d) not in judged:
                bands[band(best[d] + 1, edges)].append(d)
        while bands and not bands[-1]:
            bands.pop()
        out[q] = bands
    return out


def allocate(sizes: Sequence[int], weights: Sequence[float], budget: int) -> list[int]:
    """How many to draw from each cell: ``min(N, c w N)`` (at least 1 per non-empty cell when the budget has
    one for each), the common factor ``c`` making the sum ``budget``; counts rounded by largest remainders
    (equal remainders: the first cells)."""
    total = sum(sizes)
    if budget >= total:
        return list(sizes)
    live = [i for i, n in enumerate(sizes) if n > 0]
    floor = 1 if budget >= len(live) else 0

    def share(c: float) -> list[float]:
        return [min(float(n), max(float(floor), c * w * n)) if n else 0.0 for n, w in zip(sizes, weights)]

    lo, hi = 0.0, 1.0
    while sum(share(hi)) < budget:
        hi *= 2.0
    for _ in range(200):  # bisection of a continuous, non-decreasing sum
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if sum(share(mid)) < budget else (lo, mid)
    x = share(hi)
    counts = [min(n, math.floor(v + 1e-9)) for n, v in zip(sizes, x)]
    left = budget - sum(counts)
    order = sorted(range(len(sizes)), key=lambda i: (-(x[i] - counts[i]), i))
    while left > 0:
        moved = False
        for i in order:
            if left and counts[i] < sizes[i]:
                counts[i] += 1
                left -= 1
                moved = True
        if not moved:  # pragma: no cover - budget < total leaves room
            break
    for i in reversed(order):  # a sum over the budget (rounding of the floors): the smallest remainders give back
        while left < 0 and counts[i] > floor:
            counts[i] -= 1
            left += 1
    return counts


class Stratified(Strategy):
    """A stratified random sample of the pool (see the module), for the statAP and xinfAP estimates of
    :mod:`.estimators` (Yilmaz, Kanoulas & Aslam 2008; Pavlu & Aslam 2007). Not adaptive: the sample is drawn
    when the strategy is made, and :meth:`next` hands it out stratum by stratum.

    :param budget: the sample's size (the whole pool when it is smaller).
    :param edges: the strata's last best ranks (default 10, 30, 100).
    :param decay: stratum ``h``'s rate is proportional to ``decay ** h``, in (0, 1] (default 0.5).
    :param seed: seed of the draw and of the tie order (a whole number from 0 to 2**32 - 1).
    """

    name = "stratified"

    def __init__(
        self,
        runs: PoolRuns | list[RunInput],
        *,
        budget: int,
        edges: Sequence[int] = (10, 30, 100),
        decay: float = 0.5,
        seed: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(runs, seed=seed, **kwargs)
        whole(budget, "a sample's budget", least=0, error=PoolingError)
        number(decay, "the strata's rate decay", 0, 1, closed="right", error=PoolingError)
        edges = check_edges(edges)
        rng = check_seed(seed)
        judged = set(self.labels)
        bands = populations(self.runs, edges, judged)
        cells = [(q, h) for q, bs in bands.items() for h in range(len(bs))]
        sizes = [len(bands[q][h]) for q, h in cells]
        counts = allocate(sizes, [float(decay) ** h for _, h in cells], budget)
        drawn = {}
        for (q, h), size, n in zip(cells, sizes, counts):
            picked = sorted(rng.choice(size, size=n, replace=False).tolist()) if n else []
            drawn[(q, h)] = tuple(bands[q][h][j] for j in picked)
        strata = {
            q: tuple(Stratum(q, h, tuple(bs[h]), drawn[(q, h)]) for h in range(len(bs))) for q, bs in bands.items()
        }
        pool = {q: set().union(*map(set, self.runs.query_rankings(i))) for i, q in enumerate(self.runs.qids)}
        certain = {q: frozenset(d for d in pool[q] if (q, d) in judged) for q in self.runs.qids}
        self.design = StratifiedDesign(edges, strata, certain)
        self._queue = self.design.pairs()
        self._at = 0
        self._position = {q: i for i, q in enumerate(self.runs.qids)}

    def _next(self) -> tuple[int, str] | None:
        while self._at < len(self._queue):
            pair = self._queue[self._at]
            self._at += 1
            if not self.known(pair.query, pair.doc):
                return self._position[pair.query], pair.doc
        return None

    def probability(self, query: str, doc: str) -> float:
        return self.design.probability(query, doc)


def design_from_sample(
    runs: PoolRuns,
    sample: Sequence[PoolPair],
    *,
    edges: Sequence[int] = (10, 30, 100),
    judged: Mapping[str, Mapping[str, Any]] | None = None,
) -> StratifiedDesign:
    """The design a sample was drawn under, rebuilt from the runs and options it was drawn with (``edges``,
    the runs' depth, the judgments there were before, ``judged``) and checked against the sample's
    probabilities.

    :raises PoolingError: a sampled pair outside the pool or judged before, a pair listed twice, or a
        probability that is not the one the rebuilt strata give (other runs or options than the sample's).
    """
    edges = check_edges(edges)
    before = {(q, d) for q, docs in (judged or {}).items() for d in docs}
    bands = populations(runs, edges, before)
    where = {(q, d): h for q, bs in bands.items() for h, docs in enumerate(bs) for d in docs}
    chosen: dict[tuple[str, int], list[str]] = {}
    seen: set[tuple[str, str]] = set()
    for pair in sample:
        key = (pair.query, pair.doc)
        if key in seen:
            raise PoolingError(f"the sample lists the pair ({pair.query!r}, {pair.doc!r}) twice")
        seen.add(key)
        if key not in where:
            why = "was judged before the sample" if key in before else "is not in the pool of these runs"
            raise PoolingError(
                f"sampled pair ({pair.query!r}, {pair.doc!r}) {why}: give the runs, depth and earlier judgments "
                "the sample was drawn with"
            )
        chosen.setdefault((pair.query, where[key]), []).append(pair.doc)
    strata = {}
    for q, bs in bands.items():
        strata[q] = tuple(Stratum(q, h, tuple(docs), tuple(chosen.get((q, h), ()))) for h, docs in enumerate(bs))
    pool = {q: set().union(*map(set, runs.query_rankings(i))) for i, q in enumerate(runs.qids)}
    certain = {q: frozenset(d for d in pool[q] if (q, d) in before) for q in runs.qids}
    design = StratifiedDesign(edges, strata, certain)
    for pair in sample:
        expected = design.probability(pair.query, pair.doc)
        if not math.isclose(pair.probability, expected, rel_tol=1e-9, abs_tol=1e-12):
            raise PoolingError(
                f"sampled pair ({pair.query!r}, {pair.doc!r}) has probability {pair.probability!r}, but its stratum "
                f"of these runs gives {expected!r}: give the runs, depth, strata edges and earlier judgments the "
                "sample was drawn with"
            )
    return design


__all__ = ["Stratified", "StratifiedDesign", "Stratum", "allocate", "band", "check_edges", "design_from_sample"]
