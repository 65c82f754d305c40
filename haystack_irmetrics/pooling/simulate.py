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
from collections.abc import Mapping, Sequence
from typing import Any

from ..checks import whole as check_whole
from ..core.evaluation import evaluate
from ..core.inputs import Qrels
from ..core.measures import parse_measure
from ..errors import PoolingError
from ..io.progress import bar
from ..stats.correlation import system_correlation, tau_ap
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
            result = evaluate({q: judged[q] for q in lists}, lists, None, measures=[measure], preset="trec")
            per_query = result.per_query[name]
        out[run_name] = math.fsum(float(per_query.get(q, 0.0)) for q in queries) / len(queries) if queries else 0.0
    return out


def _correlations(truth: dict[str, float], scores: dict[str, float]) -> tuple[float | None, float | None]:
    tau = system_correlation(scores, truth, "kendall").statistic
    return (None if math.isnan(tau) else tau), tau_ap(truth, scores)


def simulate(
    runs: Sequence[RunInput] | PoolRuns,
    qrels: Mapping[str, Mapping[str, Any]] | Qrels,
    budgets: Sequence[int],
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    *,
    measure: str = "NDCG@10",
    depth: int | None = None,
    seed: int = 0,
    relevance_threshold: float = 1.0,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool | None = False,
) -> dict[str, Any]:
    """Replay each strategy against complete judgments (see the module).

    :param runs: two runs or more (the systems to order); ``depth`` cuts them for the pool only, the measure
        reads the runs' whole rankings.
    :param qrels: the complete judgments.
    :param budgets: numbers of judgments, each >= 0.
    :param params: per strategy name, its parameters (e.g. ``{"rbp": {"p": 0.9}}``).
    :returns: ``{"strategies": {name: {str(budget): {"judged", "relevant_found", "tau", "tau_ap"}}},
        "relevant_total": R}`` (``R``: the complete judgments' relevant pairs of the runs' queries; ``tau`` is
        ``None`` where one order is constant).
    :raises PoolingError: fewer than two runs, no budget, a budget below 0, an unknown strategy.

    Usage::

        >>> runs = [{"q1": {"a": 2, "b": 1}}, {"q1": {"c": 2, "a": 1}}, {"q1": {"b": 2, "d": 1}}]
        >>> out = simulate(runs, {"q1": {"a": 2, "c": 1, "d": 1}}, [2], ["depth"], measure="NDCG@2")
        >>> row = out["strategies"]["depth"]["2"]  # a and c judged: d, unjudged, counts as not relevant
        >>> row["judged"], row["relevant_found"], round(row["tau"], 6), row["tau_ap"], out["relevant_total"]
        (2, 2, 1.0, 1.0, 3)
    """
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
    depth = check_depth(depth)
    pooled = (
        whole
        if depth is None
        else PoolRuns(whole.names, whole.qids, tuple(tuple(r[:depth] for r in run) for run in whole.rankings), depth)
    )
    queries = [q for q in whole.qids if any(v >= relevance_threshold for v in full.get(q, {}).values())]
    truth = system_scores(whole, full, measure, queries)
    total = sum(v >= relevance_threshold for q in whole.qids for v in full.get(q, {}).values())
    params = params or {}
    ordered = sorted(set(budgets))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    with bar(len(strategies) * len(ordered), "pool simulate", "budget", progress) as progress_bar:
        for name in strategies:
            row: dict[str, dict[str, Any]] = {}
            sampled = strategy_spec(name).sampled
            strategy = None
            judged: dict[str, dict[str, float]] = {}
            found = asked = 0
            for b in ordered:
                if sampled or strategy is None:  # a sample is drawn for its budget; the others grow
                    strategy = make_strategy(
                        name,
                        pooled,
                        budget=b,
                        seed=seed,
                        relevance_threshold=relevance_threshold,
                        **params.get(name, {}),
                    )
                    judged, found, asked = {}, 0, 0
                while asked < b:
                    pair = strategy.next()
                    if pair is None:
                        break
                    label = full.get(pair.query, {}).get(pair.doc, 0.0)
                    strategy.record(pair.query, pair.doc, label)
                    judged.setdefault(pair.query, {})[pair.doc] = label
                    asked += 1
                    found += label >= relevance_threshold
                tau, tau_ap_value = _correlations(truth, system_scores(whole, judged, measure, queries))
                row[str(b)] = {"judged": asked, "relevant_found": found, "tau": tau, "tau_ap": tau_ap_value}
                progress_bar.update(1)
            out[name] = {str(b): row[str(b)] for b in budgets}
    return {"strategies": out, "relevant_total": total}


__all__ = ["DEFAULT_STRATEGIES", "simulate", "system_scores"]
