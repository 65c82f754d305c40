"""A fusion's parameters tuned on judgments, chosen by cross-validation over queries.

The grid is ranx 0.3.21's (``ranx.optimize_fusion``): weights from 0 to 1 in steps of ``step`` (0.1) whose
sum is 1 (as a float sum: ranx's test ``sum(seq) == 1.0``), RRF's k from 10 to 100 by 10, ``gamma``,
``phi`` and ``sigma`` from 0.01 to 1 by 0.01, probfuse's ``n_segments`` and slidefuse's ``w`` from 1 to 100; a
tie keeps the later configuration, as ranx's ``>=`` does. The queries judged and retrieved are shuffled
(``seed``) into ``folds`` folds; each fold's queries are scored by the configuration best on the other
folds (a trained method also learns from those only), so the held-out score is the score of a choice made
without them. The parameters reported for use are the best on all queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np

from ..core.evaluate import evaluate
from ..core.inputs import Qrels
from ..core.measures import parse_measure
from ..errors import FusionError
from ..stats.compare import Comparison
from ..stats.paired import compare_with_baseline
from ..stats.significance import check_seed
from .api import check_method, fuse
from .methods import TRAINED, WEIGHTED
from .packed import PackedRuns, RunInput, pack_runs

#: The parameter each method's grid runs over, with ranx's range (first, last, step).
RANGES: dict[str, tuple[str, float, float, float]] = {
    "rrf": ("k", 10, 100, 10),
    "gmnz": ("gamma", 0.01, 1.0, 0.01),
    "logn_isr": ("sigma", 0.01, 1.0, 0.01),
    "rbc": ("phi", 0.01, 1.0, 0.01),
    "probfuse": ("n_segments", 1, 100, 1),
    "slidefuse": ("w", 1, 100, 1),
}


def _digits(step: float) -> int:
    return str(step)[::-1].find(".")


def weight_grid(n_runs: int, step: float = 0.1) -> list[tuple[float, ...]]:
    """ranx's weight configurations: every ``n_runs``-tuple of ``0, step, ..., 1`` (rounded as ranx does)
    whose float sum is exactly 1."""
    if not 0 < step <= 1:
        raise FusionError(f"the weight step must be in (0, 1], got {step}")
    digits = _digits(step)
    values = [round(x, digits) if digits >= 0 else x for x in np.arange(0, 1 + step, step).tolist()]
    return [seq for seq in product(values, repeat=n_runs) if sum(seq) == 1.0]


def default_grid(method: str, n_runs: int, step: float = 0.1) -> list[dict[str, Any]]:
    """The configurations ranx's ``optimize_fusion`` tries for ``method`` (one empty one if it has no parameter)."""
    if method in WEIGHTED:
        return [{"weights": list(w)} for w in weight_grid(n_runs, step)]
    if method not in RANGES:
        return [{}]
    name, first, last, by = RANGES[method]
    if isinstance(by, int):
        return [{name: v} for v in range(int(first), int(last) + 1, int(by))]
    digits = _digits(by)
    return [{name: round(v, digits)} for v in np.arange(first, last + by, by).tolist()]


def grid_from_values(method: str, n_runs: int, values: Sequence[float]) -> list[dict[str, Any]]:
    """A grid from the command line's ``--grid``: for a weighted method one value, the weight step; else
    the values of the method's parameter (``rrf``: k)."""
    if method in WEIGHTED:
        if len(values) != 1:
            raise FusionError(f"{method}'s --grid is one value, the weight step (ranx's 0.1), got {list(values)}")
        return default_grid(method, n_runs, float(values[0]))
    if method not in RANGES:
        raise FusionError(f"{method} has no parameter to tune")
    name = RANGES[method][0]
    whole = name in ("k", "n_segments", "w")
    return [{name: int(v) if whole else float(v)} for v in values]


@dataclass(frozen=True)
class FusionTuning:
    """What :func:`optimize_fusion` found.

    :ivar params: the configuration best on all queries (``weights`` and/or the method's parameter).
    :ivar held_out: the cross-validated score of the fused run (each query scored by the choice made on
        the other folds); ``inputs``: each input run's score on the same queries; ``best_input`` the best.
    :ivar folds: per fold, its configuration and its train and held-out scores.
    :ivar comparisons: ``{input: Comparison}`` of the held-out fused run against each input (``delta`` =
        fused − input; p-values Holm-adjusted over the inputs), from ``stats.compare_with_baseline``.
    :ivar per_query: ``{"fused": {qid: value}, input: {qid: value}, ...}``.
    """

    method: str
    norm: str | None
    metric: str
    params: dict[str, Any]
    held_out: float
    inputs: dict[str, float]
    best_input: str
    folds: list[dict[str, Any]]
    comparisons: dict[str, Comparison]
    per_query: dict[str, dict[str, float]] = field(repr=False)
    n_queries: int = 0
    n_configurations: int = 0

    def joiner_parameters(self, top_k: int | None = None) -> dict[str, Any]:
        """The Haystack ``DocumentJoiner`` init parameters reproducing the tuned fusion
        (:func:`~.joiner.joiner_parameters`; raises ``FusionError`` where no join mode can)."""
        from .joiner import joiner_parameters

        weights = self.params.get("weights")
        params = {k: v for k, v in self.params.items() if k != "weights"}
        return joiner_parameters(
            self.method, norm=self.norm, weights=weights, params=params, n_runs=len(self.inputs), top_k=top_k
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (no per-query values)."""
        return {
            "method": self.method,
            "norm": self.norm,
            "metric": self.metric,
            "params": self.params,
            "held_out": self.held_out,
            "inputs": self.inputs,
            "best_input": self.best_input,
            "queries": self.n_queries,
            "configurations": self.n_configurations,
            "folds": self.folds,
            "comparisons": {
                name: {
                    "delta": -c.delta,
                    "p_t_test": c.p_t,
                    "p_randomization": c.p_randomization,
                    "p_t_test_holm": c.p_t_holm,
                    "p_randomization_holm": c.p_randomization_holm,
                }
                for name, c in self.comparisons.items()
            },
        }


def _scores(run: Any, qrels: Qrels, metric: str, queries: list[str], preset: str) -> np.ndarray:
    values = evaluate(qrels, run, None, measures=[metric], preset=preset).per_query[metric]
    return np.array([values.get(q, 0.0) for q in queries], dtype=np.float64)


def optimize_fusion(
    runs: Sequence[RunInput] | PackedRuns,
    qrels: Mapping[str, Mapping[str, float]] | Qrels,
    *,
    method: str = "wsum",
    norm: str | None = "min-max",
    metric: str = "NDCG@10",
    folds: int = 5,
    grid: Sequence[Mapping[str, Any]] | None = None,
    step: float = 0.1,
    seed: int = 0,
    preset: str = "beir",
    params: Mapping[str, Any] | None = None,
    names: Sequence[str] | None = None,
    depth: int | None = None,
) -> FusionTuning:
    """Tune ``method``'s weights or parameter on ``qrels`` by ``folds``-fold cross-validation over queries.

    :param grid: the configurations to try (dicts of ``fuse`` keywords: ``weights`` and/or ``params``
        keys); default ranx's (:func:`default_grid`, weights in steps of ``step``).
    :param metric: the measure maximised, any name :func:`~haystack_irmetrics.evaluate` takes, scored
        with ``preset``.
    :param params: fixed parameters of the method (not tuned).
    :raises FusionError: fewer judged queries than folds, ``folds`` below 2, an empty grid.

    Usage::

        >>> from haystack_irmetrics.fusion import optimize_fusion
        >>> qrels = {f"q{i}": {"good": 1} for i in range(6)}
        >>> a = {f"q{i}": {"good": 1.0, "bad": 2.0, "other": 0.0} for i in range(6)}
        >>> b = {f"q{i}": {"good": 3.0, "bad": 0.0, "other": 1.0} for i in range(6)}
        >>> tuned = optimize_fusion([a, b], qrels, method="wsum", metric="P@1", folds=3)
        >>> tuned.params, tuned.held_out, tuned.inputs
        ({'weights': [0.6, 0.4]}, 1.0, {'run1': 0.0, 'run2': 1.0})
    """
    metric = parse_measure(metric).name
    rng = check_seed(seed)  # before any work
    packed = runs if isinstance(runs, PackedRuns) else pack_runs(runs, names=names, depth=depth)
    judged = qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise FusionError(f"folds must be an integer >= 2, got {folds!r}")
    queries = sorted(q for q in packed.qids if judged.judged(q))
    if len(queries) < folds:
        raise FusionError(f"{len(queries)} judged queries cannot make {folds} folds")
    configs = [dict(c) for c in (grid if grid is not None else default_grid(method, len(packed.runs), step))]
    if not configs:
        raise FusionError(f"the grid for {method} is empty")
    fixed = dict(params or {})
    for c in configs:  # every configuration checked before any fusion
        check_method(
            method, len(packed.runs), c.get("weights"), {**fixed, **{k: v for k, v in c.items() if k != "weights"}}
        )
    fold_of = np.empty(len(queries), dtype=np.int64)
    for f, part in enumerate(np.array_split(rng.permutation(len(queries)), folds)):
        fold_of[part] = f

    def fused(c: Mapping[str, Any], train: Qrels | None) -> Any:
        extra = {k: v for k, v in c.items() if k != "weights"}
        return fuse(packed, method, norm=norm, weights=c.get("weights"), qrels=train, params={**fixed, **extra})

    def restricted(keep: np.ndarray) -> Qrels:
        return Qrels.from_dict({q: judged.data[q] for q in np.asarray(queries, dtype=object)[keep].tolist()})

    def best(values: list[np.ndarray], mask: np.ndarray) -> int:
        means = [float(v[mask].mean()) for v in values]
        top = max(means)
        return max(i for i, m in enumerate(means) if m == top)  # a tie keeps the later one (ranx's >=)

    held = np.zeros(len(queries))
    fold_report = []
    if method in TRAINED:
        for f in range(folds):
            train = fold_of != f
            train_qrels = restricted(train)
            values = [_scores(fused(c, train_qrels), judged, metric, queries, preset) for c in configs]
            i = best(values, train)
            held[~train] = values[i][~train]
            fold_report.append(
                {"params": configs[i], "train": float(values[i][train].mean()), "test": float(values[i][~train].mean())}
            )
        whole = [_scores(fused(c, judged), judged, metric, queries, preset) for c in configs]
    else:
        whole = [_scores(fused(c, None), judged, metric, queries, preset) for c in configs]
        for f in range(folds):
            train = fold_of != f
            i = best(whole, train)
            held[~train] = whole[i][~train]
            fold_report.append(
                {"params": configs[i], "train": float(whole[i][train].mean()), "test": float(whole[i][~train].mean())}
            )
    chosen = configs[best(whole, np.ones(len(queries), dtype=bool))]
    inputs = {}
    per_query = {"fused": dict(zip(queries, held.tolist()))}
    for name, rows in zip(packed.names, packed.runs):
        run = _input_run(packed, rows)
        values = _scores(run, judged, metric, queries, preset)
        inputs[name] = float(values.mean())
        per_query[name] = dict(zip(queries, values.tolist()))
    best_input = max(inputs, key=lambda n: inputs[n])
    table = {name: {metric: per_query[name]} for name in ["fused", *packed.names]}
    comparison = compare_with_baseline(table, "fused", measures=[metric], holm_scope="all", seed=seed)
    return FusionTuning(
        method=method,
        norm=norm,
        metric=metric,
        params={**fixed, **chosen},
        held_out=float(held.mean()),
        inputs=inputs,
        best_input=best_input,
        folds=fold_report,
        comparisons={name: found[metric] for name, found in comparison.comparisons.items()},
        per_query=per_query,
        n_queries=len(queries),
        n_configurations=len(configs),
    )


def _input_run(packed: PackedRuns, rows: Any) -> dict[str, dict[str, float]]:
    """One packed input back as ``{qid: {docid: score}}`` (its depth cut applied), for scoring it alone."""
    ids = packed.doc_ids
    bounds = rows.offsets.tolist()
    cands = rows.candidate.tolist()
    scores = rows.score.tolist()
    out = {}
    for q, a, b in zip(packed.qids, bounds[:-1], bounds[1:]):
        if a < b:
            out[q] = {ids[c]: s for c, s in zip(cands[a:b], scores[a:b])}
    return out
