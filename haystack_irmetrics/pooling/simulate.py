"""Strategies replayed against complete judgments: how many relevant documents each finds for a budget, and
how well the systems' order under its judgments agrees with their order under all of them.

A pair is judged when the strategy asks for it, with its label in the complete judgments (a pair they do not
list is not relevant). For each budget the runs are scored by a measure (default ``NDCG@10``, trec_eval's
conventions through the core) under the judgments made so far, unjudged documents counting as not relevant,
each run's mean taken over the queries of the runs that have a relevant document in the complete judgments
(0 where the run has nothing for one); Kendall's tau and tau_AP (:mod:`haystack_irmetrics.stats.correlation`)
compare that order with the order under the complete judgments.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..checks import refuse
from ..checks import whole as check_whole
from ..core.evaluation import evaluate
from ..core.inputs import Qrels
from ..core.measures import parse_measure
from ..errors import PoolingError, SuspiciousInputWarning
from ..io.progress import bar
from ..stats.correlation import system_correlation, tau_ap
from ..stats.significance import seed_value
from .registry import STRATEGIES, make_strategy, strategy_spec
from .runs import PoolRuns, RunInput, check_depth, judged_labels, pool_runs

#: The strategies replayed by default: every one that orders the pool (a sample, drawn once, is left out).
DEFAULT_STRATEGIES = tuple(name for name, spec in STRATEGIES.items() if not spec.sampled)


def system_scores(
    runs: PoolRuns, qrels: Mapping[str, Mapping[str, float]], measure: str, queries: Sequence[str]
) -> dict[str, float]:
    """Each run's mean of ``measure`` under ``qrels`` over ``queries`` (a query the run or the judgments miss
    counts 0), the runs' rankings scored as ranked lists."""
    name = parse_measure(measure).name
    judged = {q: docs for q, docs in qrels.items() if docs}
    out = {}
    for r, run_name in enumerate(runs.names):
        lists = {q: list(ranking) for q, ranking in zip(runs.qids, runs.rankings[r]) if ranking and q in judged}
        per_query: Mapping[str, float] = {}
        if lists:
            with warnings.catch_warnings():  # a run none of whose documents is judged yet: a budget's early state
                warnings.simplefilter("ignore", SuspiciousInputWarning)
                result = evaluate({q: judged[q] for q in lists}, lists, None, measures=[measure], preset="trec")
            per_query = result.per_query[name]
        out[run_name] = math.fsum(float(per_query.get(q, 0.0)) for q in queries) / len(queries) if queries else 0.0
    return out


def _correlations(truth: dict[str, float], scores: dict[str, float]) -> tuple[float | None, float | None]:
    tau = system_correlation(scores, truth, "kendall").statistic
    return (None if math.isnan(tau) else tau), tau_ap(truth, scores)


@dataclass(frozen=True)
class _Replay:
    """What every replay of one simulation shares: the runs whole (scored) and cut (pooled), the complete
    labels, the queries scored, the order under all labels, the budgets in increasing order."""

    whole: PoolRuns
    pooled: PoolRuns
    full: dict[str, dict[str, float]]
    queries: list[str]
    truth: dict[str, float]
    measure: str
    threshold: float
    budgets: list[int]

    def run(self, name: str, seed: int, params: Mapping[str, Any], tick: Any) -> dict[str, dict[str, Any]]:
        """Strategy ``name`` under ``seed``, judged from the complete labels: one row per budget."""
        row: dict[str, dict[str, Any]] = {}
        sampled = strategy_spec(name).sampled
        strategy = None
        judged: dict[str, dict[str, float]] = {}
        found = asked = 0
        for b in self.budgets:
            if sampled or strategy is None:  # a sample is drawn for its budget; the others grow
                strategy = make_strategy(
                    name, self.pooled, budget=b, seed=seed, relevance_threshold=self.threshold, **params
                )
                judged, found, asked = {}, 0, 0
            while asked < b and (pair := strategy.next()) is not None:
                label = self.full.get(pair.query, {}).get(pair.doc, 0.0)
                strategy.record(pair.query, pair.doc, label)
                judged.setdefault(pair.query, {})[pair.doc] = label
                asked += 1
                found += label >= self.threshold
            scores = system_scores(self.whole, judged, self.measure, self.queries)
            tau, tau_ap_value = _correlations(self.truth, scores)
            row[str(b)] = {"judged": asked, "relevant_found": found, "tau": tau, "tau_ap": tau_ap_value}
            tick(1)
        return row


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One budget's rows under several seeds: ``judged`` (the same under each), each figure's mean and its
    ``_range`` ``[min, max]`` (a ``None``, an undefined tau, left out; ``None`` when every one is)."""
    out: dict[str, Any] = {"judged": rows[0]["judged"]}
    for key in ("relevant_found", "tau", "tau_ap"):
        values = [r[key] for r in rows if r[key] is not None]
        out[key] = math.fsum(values) / len(values) if values else None
        out[f"{key}_range"] = [min(values), max(values)] if values else None
    return out


def simulate(
    runs: Sequence[RunInput] | PoolRuns,
    qrels: Mapping[str, Mapping[str, Any]] | Qrels,
    budgets: Sequence[int],
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    *,
    measure: str = "NDCG@10",
    depth: int | None = None,
    seed: int | Sequence[int] = 0,
    relevance_threshold: float = 1.0,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool | None = False,
) -> dict[str, Any]:
    """Replay each strategy against complete judgments (see the module).

    :param runs: two runs or more (the systems to order); ``depth`` cuts them for the pool only, the measure
        reads the runs' whole rankings.
    :param qrels: the complete judgments.
    :param budgets: numbers of judgments, each >= 0.
    :param seed: the seed of every strategy's tie-break between runs (and of a sample's draw); or a sequence of
        seeds (``range(10)``: ``irmetrics pool simulate --repeats 10``): each strategy is replayed under each,
        each figure is the mean over them and ``relevant_found_range``, ``tau_range``, ``tau_ap_range`` its
        ``[min, max]`` (a seed whose tau is undefined is left out of tau's), and ``"seeds"`` lists them.
    :param params: per strategy name, its parameters (e.g. ``{"rbp": {"p": 0.9}}``).
    :returns: ``{"strategies": {name: {str(budget): {"judged", "relevant_found", "tau", "tau_ap"}}},
        "relevant_total": R}`` (``R``: the complete judgments' relevant pairs of the runs' queries; ``tau`` is
        ``None`` where one order is constant).
    :raises PoolingError: fewer than two runs, no budget, a budget below 0, an unknown strategy, an empty
        sequence of seeds. :raises InvalidSeedError: a seed that is not a whole number from 0 to 2**32 - 1.

    Usage::

        >>> runs = [{"q1": {"a": 2, "b": 1}}, {"q1": {"c": 2, "a": 1}}, {"q1": {"b": 2, "d": 1}}]
        >>> qrels = {"q1": {"a": 2, "c": 1, "d": 1}}
        >>> out = simulate(runs, qrels, [2], ["depth"], measure="NDCG@2")
        >>> row = out["strategies"]["depth"]["2"]  # rank 1 of the first two runs in seed 0's tie order: b, a
        >>> row["judged"], row["relevant_found"], round(row["tau"], 6), row["tau_ap"], out["relevant_total"]
        (2, 1, 0.333333, 0.0, 3)
        >>> out = simulate(runs, qrels, [2], ["depth"], measure="NDCG@2", seed=range(12))  # seeds 0 to 11
        >>> row = out["strategies"]["depth"]["2"]
        >>> round(row["relevant_found"], 4), row["relevant_found_range"], [round(t, 4) for t in row["tau_range"]]
        (1.0833, [1, 2], [0.3333, 1.0])
    """
    replay = _prepare(runs, qrels, budgets, strategies, measure, depth, relevance_threshold)
    several = isinstance(seed, Sequence) and not isinstance(seed, str)
    seeds = [seed_value(s) for s in seed] if several else [seed_value(seed)]
    if not seeds:
        raise refuse(seed, "seed", "a seed or a sequence of one seed or more", PoolingError)
    params = params or {}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    with bar(len(strategies) * len(replay.budgets) * len(seeds), "pool simulate", "budget", progress) as progress_bar:
        for name in strategies:
            rows = [replay.run(name, s, params.get(name, {}), progress_bar.update) for s in seeds]
            if not several:
                out[name] = {str(b): rows[0][str(b)] for b in budgets}
            else:
                out[name] = {str(b): _summary([r[str(b)] for r in rows]) for b in budgets}
    total = sum(v >= relevance_threshold for q in replay.whole.qids for v in replay.full.get(q, {}).values())
    return {"strategies": out, "relevant_total": total, **({"seeds": seeds} if several else {})}


def _prepare(
    runs: Sequence[RunInput] | PoolRuns,
    qrels: Mapping[str, Mapping[str, Any]] | Qrels,
    budgets: Sequence[int],
    strategies: Sequence[str],
    measure: str,
    depth: int | None,
    threshold: float,
) -> _Replay:
    """The arguments checked and what every replay shares."""
    if not budgets:
        raise PoolingError("give one budget or more")
    for b in budgets:
        check_whole(b, "a budget", least=0, error=PoolingError)  # judgments
    for name in strategies:
        strategy_spec(name)
    full = judged_labels(qrels)
    whole = pool_runs(runs) if not isinstance(runs, PoolRuns) else runs
    if len(whole.names) < 2:
        raise PoolingError(f"a simulation orders systems: give two runs or more, got {len(whole.names)}")
    queries = [q for q in whole.qids if any(v >= threshold for v in full.get(q, {}).values())]
    truth = system_scores(whole, full, measure, queries)
    pooled = whole.cut(check_depth(depth))
    return _Replay(whole, pooled, full, queries, truth, measure, threshold, sorted(set(budgets)))


__all__ = ["DEFAULT_STRATEGIES", "simulate", "system_scores"]
