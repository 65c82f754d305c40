"""The registry of pooling strategies: each strategy's class, source and parameters with their ranges, as data
(what :mod:`haystack_irmetrics.core.families` is for measures). The CLI's ``--strategy`` choices and
``--param`` checks read it; :func:`make_strategy` builds a strategy by name, :func:`pool` lists a budget's pairs.

    >>> sorted(STRATEGIES)
    ['depth', 'maxmean', 'mtf', 'rbp', 'stratified']
    >>> STRATEGIES["rbp"].params[0].parse("0.95")
    0.95
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..checks import Number, Param, refuse, whole
from ..core.inputs import Qrels
from ..errors import PoolingError
from ..stats.significance import seed_value
from .runs import PoolRuns, RunInput, check_depth, judged_labels, pool_runs
from .sampling import Stratified, check_edges
from .strategies import Depth, MaxMean, MoveToFront, PoolPair, RBPWeighted, Strategy


@dataclass(frozen=True)
class StrataEdges:
    """The rule of ``stratified``'s ``edges`` (a :class:`~haystack_irmetrics.checks.Param`'s rule): increasing
    whole numbers >= 1, written ``10,30,100`` on the command line (:func:`~.sampling.check_edges`)."""

    def describe(self) -> str:
        return "increasing whole numbers >= 1, e.g. 10,30,100"

    def holds(self, value: object) -> bool:
        try:
            check_edges(value)
        except PoolingError:
            return False
        return True

    def check(self, value: Any, name: str, error: Callable[[str], Exception] = PoolingError) -> tuple[int, ...]:
        try:
            return check_edges(value)
        except PoolingError:
            raise refuse(value, name, self.describe(), error) from None

    def parse(self, text: str) -> tuple[int, ...]:
        return tuple(int(x) for x in text.split(",") if x.strip())


@dataclass(frozen=True)
class StrategySpec:
    """A strategy by name: its class, a one-line summary, its source, its parameters."""

    name: str
    cls: type[Strategy]
    summary: str
    reference: str
    params: tuple[Param, ...] = ()

    @property
    def adaptive(self) -> bool:
        return self.cls.adaptive

    @property
    def sampled(self) -> bool:
        """Whether the pairs are a sample with inclusion probabilities below 1."""
        return self.cls is Stratified


STRATEGIES: dict[str, StrategySpec] = {
    spec.name: spec
    for spec in (
        StrategySpec(
            "depth",
            Depth,
            "every run's top k, rank by rank over all queries",
            "TREC's pooling (Harman 1992; Voorhees & Harman 2005)",
        ),
        StrategySpec(
            "mtf",
            MoveToFront,
            "per query, read the run of highest priority while it finds relevant documents",
            "Cormack, Palmer & Clarke 1998, SIGIR",
        ),
        StrategySpec(
            "maxmean",
            MaxMean,
            "per query, the run whose Beta posterior mean of relevance is largest",
            "Losada, Parapar & Barreiro 2016 (ACM SAC), 2017 (IP&M)",
        ),
        StrategySpec(
            "rbp",
            RBPWeighted,
            "documents by summed RBP weight (1 - p) p^(k-1) over the runs",
            "Moffat, Webber & Zobel 2007, SIGIR",
            (Param("p", Number(0, 1, "neither"), 0.8, "RBP persistence", PoolingError),),
        ),
        StrategySpec(
            "stratified",
            Stratified,
            "a stratified random sample by best rank, with inclusion probabilities",
            "Yilmaz, Kanoulas & Aslam 2008, SIGIR",
            (
                Param("edges", StrataEdges(), (10, 30, 100), "the strata's last best ranks", PoolingError),
                Param(
                    "decay",
                    Number(0, 1, "right"),
                    0.5,
                    "stratum h's sampling rate is proportional to decay^h",
                    PoolingError,
                ),
            ),
        ),
    )
}


def strategy_spec(name: str) -> StrategySpec:
    """The registry entry of ``name``; :raises PoolingError: an unknown name (the known ones listed)."""
    if name not in STRATEGIES:
        raise PoolingError(f"unknown pooling strategy {name!r}: {', '.join(STRATEGIES)}")
    return STRATEGIES[name]


def make_strategy(
    name: str,
    runs: Sequence[RunInput] | PoolRuns,
    *,
    budget: int | None = None,
    judged: Mapping[str, Mapping[str, Any]] | Qrels | None = None,
    depth: int | None = None,
    seed: int = 0,
    relevance_threshold: float = 1.0,
    **params: Any,
) -> Strategy:
    """A strategy by its registry name, its parameters checked against their ranges.

    :param budget: the number of judgments to spend (``stratified`` needs it: its sample is drawn now; the
        others stop where their caller stops).
    :param judged: judgments there are already (never asked again).
    :param depth: each run's top ``depth`` documents per query form the pool (``None``: whole runs).
    :param seed: seed of the draw that breaks ties between runs (every strategy, the same pool for any order
        the runs are listed in) and of a sample's draw.
    :raises PoolingError: an unknown strategy or parameter, a value out of range, a missing budget.
    """
    spec = strategy_spec(name)
    known = {p.name: p for p in spec.params}
    unknown = sorted(set(params) - set(known))
    if unknown:
        takes = ", ".join(known) or "no parameter"
        raise PoolingError(f"strategy {name} has no parameter {unknown[0]!r} (it takes {takes})")
    values = {k: known[k].check(v) for k, v in params.items()}
    seed = seed_value(seed)
    pooled = pool_runs(runs, depth=check_depth(depth))  # runs pooled already take no depth (an error)
    if budget is not None:
        whole(budget, "the budget", least=0, error=PoolingError)  # judgments
    common = {"judged": judged, "relevance_threshold": relevance_threshold, "seed": seed}
    if spec.sampled:
        if budget is None:
            raise PoolingError("a stratified sample is drawn for a budget: give budget")
        return spec.cls(pooled, budget=budget, **values, **common)
    return spec.cls(pooled, **values, **common)


def pool(
    runs: Sequence[RunInput] | PoolRuns,
    budget: int,
    strategy: str = "depth",
    *,
    judged: Mapping[str, Mapping[str, Any]] | Qrels | None = None,
    depth: int | None = None,
    seed: int = 0,
    **params: Any,
) -> list[PoolPair]:
    """The first ``budget`` pairs a strategy asks for, in order, none of them in ``judged``.

    For an adaptive strategy this is its first batch: what it asks before any new label (it learns from
    ``judged``); drive :meth:`~.strategies.Strategy.next` and :meth:`~.strategies.Strategy.record` to judge
    adaptively.

        >>> runs = [{"q1": {"a": 2, "b": 1}, "q2": {"c": 1}}, {"q1": {"b": 2, "d": 1}}]
        >>> [(p.query, p.doc) for p in pool(runs, 3)]  # rank 1 in seed 0's tie order: run 2's b, run 1's a
        [('q1', 'b'), ('q1', 'a'), ('q2', 'c')]
    """
    s = make_strategy(strategy, runs, budget=budget, judged=judged, depth=depth, seed=seed, **params)
    out = []
    while len(out) < budget:
        pair = s.next()
        if pair is None:
            break
        out.append(pair)
    return out


def sample_queries(
    runs: Sequence[RunInput] | PoolRuns,
    n: int,
    *,
    depth: int | None = None,
    seed: int = 0,
    judged: Mapping[str, Mapping[str, Any]] | Qrels | None = None,
) -> list[PoolPair]:
    """The whole pool (every run's top ``depth``) of ``n`` queries drawn uniformly without replacement from the
    queries some run ranks documents for (seeded by ``seed``): a pooling design for estimation, whose labelled
    queries are the random sample PPI needs (people judge each drawn query's pool in full). Each pair's
    ``probability`` is its query's inclusion probability, ``n`` over the queries there are. Pairs ``judged``
    already are not listed; the queries come in the pool's order, each query's documents by their best rank
    (a rank's documents in the tie order of ``seed``: the same list for any order the runs are listed in).

        >>> runs = [{"q1": {"a": 2, "b": 1}, "q2": {"c": 1}, "q3": {"d": 1}}, {"q1": {"b": 2, "e": 1}}]
        >>> sorted({p.query for p in sample_queries(runs, 2, seed=1)}), sample_queries(runs, 3)[0].probability
        (['q1', 'q3'], 1.0)

    :raises PoolingError: ``n`` not a whole number from 1 to the number of queries there are, a bad seed.
    """
    import random

    pooled = pool_runs(runs, depth=depth) if not isinstance(runs, PoolRuns) else runs
    orders = pooled.tie_orders(seed_value(seed))
    ranked = [i for i in range(len(pooled.qids)) if any(run[i] for run in pooled.rankings)]
    whole(n, "the queries to sample", least=1, most=max(len(ranked), 1), error=PoolingError)
    chosen = sorted(random.Random(seed_value(seed)).sample(ranked, n))
    done = judged_labels(judged)
    probability = n / len(ranked)
    return [
        PoolPair(pooled.qids[i], doc, probability)
        for i in chosen
        for doc in pooled.layered(i, orders[i])
        if doc not in done.get(pooled.qids[i], {})
    ]


__all__ = [
    "STRATEGIES",
    "Param",
    "StrataEdges",
    "StrategySpec",
    "make_strategy",
    "pool",
    "sample_queries",
    "strategy_spec",
]
