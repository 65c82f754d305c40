"""Pools that find the relevant documents first: which (query, document) pairs to judge, in which order, for a
budget; the strategies of the literature as objects a judging loop drives (``next()``, ``record()``), a
stratified sample with the statAP and xinfAP estimates, and every strategy replayed against complete
judgments (:func:`simulate`).

numpy only; above the core, ``io/`` and ``stats/``, beside ``compare/`` and ``fusion/``.
"""

from .._lazy import lazy_names

_HOMES = {
    "ESTIMATORS": ".estimators",
    "Estimate": ".estimators",
    "estimate": ".estimators",
    "query_estimate": ".estimators",
    "read_pairs": ".pairs",
    "write_pairs": ".pairs",
    "STRATEGIES": ".registry",
    "Param": ".registry",
    "StrategySpec": ".registry",
    "make_strategy": ".registry",
    "pool": ".registry",
    "strategy_spec": ".registry",
    "PoolRuns": ".runs",
    "judged_labels": ".runs",
    "pool_runs": ".runs",
    "Stratified": ".sampling",
    "StratifiedDesign": ".sampling",
    "Stratum": ".sampling",
    "design_from_sample": ".sampling",
    "DEFAULT_STRATEGIES": ".simulate",
    "system_scores": ".simulate",
    "Depth": ".strategies",
    "MaxMean": ".strategies",
    "MoveToFront": ".strategies",
    "PoolPair": ".strategies",
    "RBPWeighted": ".strategies",
    "Strategy": ".strategies",
    "layered_order": ".strategies",
}
__getattr__, __dir__ = lazy_names(__name__, _HOMES)
# The function shares its module's name: imported now, or importing the module would bind the name to it.
from .simulate import simulate  # noqa: E402

__all__ = [
    "DEFAULT_STRATEGIES",
    "ESTIMATORS",
    "STRATEGIES",
    "Depth",
    "Estimate",
    "MaxMean",
    "MoveToFront",
    "Param",
    "PoolPair",
    "PoolRuns",
    "RBPWeighted",
    "Strategy",
    "StrategySpec",
    "Stratified",
    "StratifiedDesign",
    "Stratum",
    "design_from_sample",
    "estimate",
    "judged_labels",
    "layered_order",
    "make_strategy",
    "pool",
    "pool_runs",
    "query_estimate",
    "read_pairs",
    "simulate",
    "strategy_spec",
    "system_scores",
    "write_pairs",
]
