"""Which (query, document) pair to judge next: the pooling strategies of the literature as objects a judging
loop drives.

A strategy is built over :class:`~.runs.PoolRuns` and the judgments there are already (never asked again;
the adaptive strategies learn from them). :meth:`Strategy.next` gives the next pair to judge (``None`` when
the pool is exhausted) and :meth:`Strategy.record` takes its label::

    >>> from haystack_irmetrics.pooling import pool_runs, MoveToFront
    >>> runs = pool_runs([{"q1": {"a": 3, "b": 2, "c": 1}}, {"q1": {"d": 3, "a": 2, "e": 1}}])
    >>> s = MoveToFront(runs)  # seed 0's draw puts run 1 first on this query's ties (seed 1's: run 2)
    >>> s.next()
    PoolPair(query='q1', doc='a', probability=1.0)
    >>> s.record("q1", "a", 1)  # relevant: run 1 keeps its turn
    >>> s.next().doc
    'b'
    >>> s.record("q1", "b", 0)  # not relevant: run 1 drops behind run 2
    >>> s.next().doc
    'd'

Pairs handed out by :meth:`~Strategy.next` and not yet recorded are *pending*: never handed out twice, and
decisions use only the labels recorded so far, so a caller may ask for a batch before judging it.

Budgets across queries: :class:`Depth` and :class:`RBPWeighted` order every pair of the pool in one list;
the adaptive strategies (:class:`MoveToFront`, :class:`MaxMean`) run one process per query, as their papers
define them, and the queries take turns (round robin in query order), so a budget is split evenly over the
queries (Lipani et al.'s fixed-cost split); a query whose pool is exhausted leaves the turn.

Ties between runs (equal priorities, equal means, documents of one rank, equal weights) go by each query's
:meth:`~.runs.PoolRuns.tie_orders`: a draw seeded by ``seed`` over the runs' contents, the same
for any order the runs are listed in (:attr:`Strategy.orders`).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, ClassVar, NamedTuple

from ..checks import number
from ..core.inputs import Qrels
from ..errors import PoolingError
from ..stats.significance import seed_value
from .runs import PoolRuns, RunInput, check_label, judged_labels, pool_runs


class PoolPair(NamedTuple):
    """A pair to judge; ``probability``: its inclusion probability (1 except in a sample)."""

    query: str
    doc: str
    probability: float = 1.0


class Strategy:
    """The interface every strategy has, and the bookkeeping they share.

    :param runs: a :class:`~.runs.PoolRuns`, or runs :func:`~.runs.pool_runs` reads (then ``depth`` applies).
    :param judged: judgments there are already, ``{qid: {docid: label}}``: never asked again; the adaptive
        strategies count them as the runs' outcomes.
    :param relevance_threshold: labels ``>=`` this are relevant (what the adaptive strategies reward).
    :param depth: each run's top ``depth`` documents form the pool (``None``: whole runs).
    :param seed: the seed of the draw that breaks ties between runs (:meth:`~.runs.PoolRuns.tie_orders`).
    """

    #: The registry name (:data:`~.registry.STRATEGIES`).
    name: ClassVar[str] = ""
    #: Whether the next pair depends on the labels recorded so far.
    adaptive: ClassVar[bool] = False

    def __init__(
        self,
        runs: PoolRuns | list[RunInput],
        *,
        judged: Mapping[str, Mapping[str, Any]] | Qrels | None = None,
        relevance_threshold: float = 1.0,
        depth: int | None = None,
        seed: int = 0,
    ) -> None:
        pooled = pool_runs(runs, depth=depth) if not isinstance(runs, PoolRuns) else pool_runs(runs)
        if depth is not None and isinstance(runs, PoolRuns) and runs.depth != depth:
            raise PoolingError(f"the runs were pooled at depth {runs.depth}, not {depth}")
        self.seed = seed_value(seed)
        self.runs = pooled
        #: Per query, the runs in the order a tie between them goes by: the seeded draw, never the listing.
        self.orders = pooled.tie_orders(self.seed)
        number(relevance_threshold, "relevance_threshold", error=PoolingError)
        self.threshold = float(relevance_threshold)
        self.labels: dict[tuple[str, str], float] = {}
        for q, docs in judged_labels(judged).items():
            for d, label in docs.items():
                self.labels[(q, d)] = label
        self.pending: set[tuple[str, str]] = set()
        self.asked = 0
        self._index = {q: i for i, q in enumerate(self.runs.qids)}

    def next(self) -> PoolPair | None:
        """The next pair to judge (now pending), or ``None`` when every pair of the pool is judged or pending."""
        found = self._next()
        if found is None:
            return None
        pair = (self.runs.qids[found[0]], found[1])
        self.pending.add(pair)
        self.asked += 1
        return PoolPair(pair[0], pair[1], self.probability(*pair))

    def record(self, query: str, doc: str, label: float) -> None:
        """The label of ``(query, doc)``: a pair handed out by :meth:`next`, or any other judgment (a pair
        recorded again takes the new label).

        :raises InvalidLabelError: a label that is not a finite number. :raises InvalidIdError: ids that are not strings.
        """
        new = check_label(query, doc, label)
        pair = (query, doc)
        old = self.labels.get(pair)
        self.labels[pair] = new
        self.pending.discard(pair)
        i = self._index.get(query)
        if i is not None:
            self._labelled(i, doc, old, new)

    def probability(self, query: str, doc: str) -> float:
        """The pair's inclusion probability: 1 (every strategy but a sample)."""
        return 1.0

    def known(self, query: str, doc: str) -> bool:
        """Whether the pair is judged or pending."""
        return (query, doc) in self.labels or (query, doc) in self.pending

    def relevant(self, label: float) -> bool:
        return label >= self.threshold

    # What a subclass defines.
    def _next(self) -> tuple[int, str] | None:
        raise NotImplementedError

    def _labelled(self, i: int, doc: str, old: float | None, new: float) -> None:
        """A label arrived for document ``doc`` of query ``qids[i]`` (``old``: its label before, if any)."""


class _Ordered(Strategy):
    """A fixed order of the pool's pairs, judged pairs skipped."""

    def _order(self) -> list[tuple[int, str]]:
        raise NotImplementedError

    def _next(self) -> tuple[int, str] | None:
        if not hasattr(self, "_pairs"):
            self._pairs = self._order()
            self._at = 0
        qids = self.runs.qids
        while self._at < len(self._pairs):
            i, d = self._pairs[self._at]
            self._at += 1
            if not self.known(qids[i], d):
                return i, d
        return None


def layered_order(runs: PoolRuns, orders: list[list[int]] | None = None) -> list[tuple[int, str]]:
    """Every pair of the pool once, rank by rank: rank 1 of every query (queries in order, a query's runs in
    the order ``orders[i]`` gives, a strategy's :attr:`~Strategy.orders`; else as listed), then rank 2, ...:
    the order a depth-k pool grows in."""
    out: list[tuple[int, str]] = []
    seen: set[tuple[int, str]] = set()
    deepest = max((len(r) for run in runs.rankings for r in run), default=0)
    lists = [runs.query_rankings(i, None if orders is None else orders[i]) for i in range(len(runs.qids))]
    for rank in range(deepest):
        for i, rankings in enumerate(lists):
            for ranking in rankings:
                if rank < len(ranking) and (i, ranking[rank]) not in seen:
                    seen.add((i, ranking[rank]))
                    out.append((i, ranking[rank]))
    return out


class Depth(_Ordered):
    """Depth-k pooling, the TREC default (Harman, TREC-1 1992; Voorhees & Harman 2005, *TREC*, ch. 2): the
    union of every run's top k documents per query. Under a budget the pool grows rank by rank over all queries
    (:func:`layered_order`), so ``B`` judgments are the deepest uniform pool they buy and part of the next rank."""

    name = "depth"

    def _order(self) -> list[tuple[int, str]]:
        return layered_order(self.runs, self.orders)


class RBPWeighted(_Ordered):
    """Documents by their summed rank-biased precision weight over the runs (Moffat, Webber & Zobel 2007,
    *Strategic system comparisons via targeted relevance judgments*, SIGIR): a document at rank k (1-based) of a
    run weighs ``(1 - p) p^(k-1)`` there, its weight is the sum over the runs, and the pool is judged heaviest
    first over all queries (equal weights: :func:`layered_order`). Not adaptive.

    :param p: RBP's persistence, in (0, 1) (default 0.8).
    """

    name = "rbp"

    def __init__(self, runs: PoolRuns | list[RunInput], *, p: float = 0.8, **kwargs: Any) -> None:
        super().__init__(runs, **kwargs)
        number(p, "rbp's persistence p", 0, 1, closed="neither", error=PoolingError)
        self.p = float(p)

    def weights(self) -> dict[tuple[int, str], float]:
        """Each pair's summed weight (runs in the query's tie order, ranks in order: the additions' order, and so
        each float sum, is the same for any listing of the runs)."""
        w: dict[tuple[int, str], float] = {}
        for i, order in enumerate(self.orders):
            for ranking in self.runs.query_rankings(i, order):
                for k, d in enumerate(ranking):
                    w[(i, d)] = w.get((i, d), 0.0) + (1.0 - self.p) * self.p**k
        return w

    def _order(self) -> list[tuple[int, str]]:
        w = self.weights()
        layered = layered_order(self.runs, self.orders)
        return sorted(layered, key=lambda pair: -w[pair])  # stable: equal weights keep the layered order


class _Arms:
    """One query's runs as arms: how far each run has been read (``pos``: documents consumed, judged, pending
    or handed out through it) and how many of those are labelled relevant and not relevant."""

    def __init__(self, owner: Strategy, i: int) -> None:
        self.owner = owner
        self.qid = owner.runs.qids[i]
        self.lists = owner.runs.query_rankings(i, owner.orders[i])  # a tie: the first in the seeded draw
        n = len(self.lists)
        self.pos = [0] * n
        self.rel = [0] * n
        self.nonrel = [0] * n
        self.where: dict[str, list[tuple[int, int]]] = {}
        for r, ranking in enumerate(self.lists):
            for k, d in enumerate(ranking):
                self.where.setdefault(d, []).append((r, k))

    def open(self) -> list[int]:
        """The runs with a document left to read."""
        return [r for r, ranking in enumerate(self.lists) if self.pos[r] < len(ranking)]

    def take(self, r: int) -> tuple[str, str]:
        """Read run ``r``'s next document: ``(doc, state)``, state ``"rel"`` or ``"nonrel"`` (labelled: counted
        for the run at no cost), ``"pending"`` (handed out, label to come) or ``"new"`` (to hand out)."""
        d = self.lists[r][self.pos[r]]
        self.pos[r] += 1
        label = self.owner.labels.get((self.qid, d))
        if label is not None:
            if self.owner.relevant(label):
                self.rel[r] += 1
                return d, "rel"
            self.nonrel[r] += 1
            return d, "nonrel"
        return d, "pending" if (self.qid, d) in self.owner.pending else "new"

    def labelled(self, doc: str, old: float | None, new: float) -> list[tuple[int, int]]:
        """Count a label that arrived for ``doc`` for every run that has read it; returns those ``(run, rank)``."""
        hit = [(r, k) for r, k in self.where.get(doc, ()) if k < self.pos[r]]
        for r, _ in hit:
            if old is not None:
                if self.owner.relevant(old):
                    self.rel[r] -= 1
                else:
                    self.nonrel[r] -= 1
            if self.owner.relevant(new):
                self.rel[r] += 1
            else:
                self.nonrel[r] += 1
        return hit


class _PerQuery(Strategy):
    """One process per query; the queries take turns (round robin in query order)."""

    adaptive = True

    def __init__(self, runs: PoolRuns | list[RunInput], **kwargs: Any) -> None:
        super().__init__(runs, **kwargs)
        self._states: dict[int, Any] = {}
        self._live = list(range(len(self.runs.qids)))
        self._turn = 0

    def _state(self, i: int) -> Any:
        if i not in self._states:
            self._states[i] = self._new_state(i)
        return self._states[i]

    def _new_state(self, i: int) -> Any:
        raise NotImplementedError

    def _next(self) -> tuple[int, str] | None:
        while self._live:
            k = self._turn % len(self._live)
            i = self._live[k]
            doc = self._state(i).next()
            if doc is None:
                del self._live[k]  # the next query takes this place in the turn
                continue
            self._turn = k + 1
            return i, doc
        return None

    def _labelled(self, i: int, doc: str, old: float | None, new: float) -> None:
        if i in self._states:
            self._states[i].labelled(doc, old, new)


class _MTFQuery(_Arms):
    def __init__(self, owner: Strategy, i: int) -> None:
        super().__init__(owner, i)
        self.current: int | None = None
        self.turn_start = 0
        self.failed = False

    def next(self) -> str | None:
        while True:
            if self.current is not None and (self.failed or self.pos[self.current] >= len(self.lists[self.current])):
                self.current = None
            if self.current is None:
                runs = self.open()
                if not runs:
                    return None
                # The highest priority (fewest non-relevant documents read); equal priorities: the first run
                # in tie order (the seeded draw).
                self.current = max(runs, key=lambda r: (-self.nonrel[r], -r))
                self.turn_start = self.pos[self.current]
                self.failed = False
            d, state = self.take(self.current)
            if state == "new":
                return d
            self.failed = state == "nonrel"

    def labelled(self, doc: str, old: float | None, new: float) -> list[tuple[int, int]]:
        hit = super().labelled(doc, old, new)
        if not self.owner.relevant(new) and any(r == self.current and k >= self.turn_start for r, k in hit):
            self.failed = True  # a document of the current turn is not relevant: the turn ends
        return hit


class MoveToFront(_PerQuery):
    """Move-to-Front pooling (Cormack, Palmer & Clarke 1998, *Efficient construction of large test
    collections*, SIGIR), per query: every run starts with the same priority; the run of highest priority is
    read down its ranking, its next unjudged document judged, while its documents are relevant; a non-relevant
    one lowers its priority by one and ends its turn, and the run of highest priority goes next (equal
    priorities: the first run in the query's tie order, a draw seeded by ``seed``). A run's priority is minus
    the non-relevant documents among those it has read, a document judged already (before, or through another
    run) counting at no cost."""

    name = "mtf"

    def _new_state(self, i: int) -> _MTFQuery:
        return _MTFQuery(self, i)


class _MaxMeanQuery(_Arms):
    def next(self) -> str | None:
        while True:
            runs = self.open()
            if not runs:
                return None
            # Beta(1, 1) prior: the posterior mean (1 + relevant) / (2 + read); exact fractions, the first run
            # in tie order (the seeded draw) on equal means.
            r = max(runs, key=lambda r: (Fraction(1 + self.rel[r], 2 + self.pos[r]), -r))
            d, state = self.take(r)
            if state == "new":
                return d


class MaxMean(_PerQuery):
    """The MaxMean bandit (Losada, Parapar & Barreiro 2016, *Feeling lucky? Multi-armed bandits for ordering
    judgements in pooling-based evaluation*, ACM SAC; 2017, *Multi-armed bandits for adjudicating documents in
    pooling-based evaluation of information retrieval systems*, IP&M), per query: each run is an arm whose
    chance of giving a relevant document has a Beta(1, 1) prior; the arm with the largest posterior mean
    ``(1 + relevant read) / (2 + read)`` gives its next document (equal means: the first run in tie order, a
    draw seeded by ``seed``). A document
    judged already (before, or through another run) is read at no cost and counts as the arm's outcome; a
    pending one counts as read, not yet relevant (the stationary MaxMean, MM in the papers)."""

    name = "maxmean"

    def _new_state(self, i: int) -> _MaxMeanQuery:
        return _MaxMeanQuery(self, i)


__all__ = ["Depth", "MaxMean", "MoveToFront", "PoolPair", "RBPWeighted", "Strategy", "layered_order"]
