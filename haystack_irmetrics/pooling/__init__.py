"""Pools that find the relevant documents first: which (query, document) pairs to judge, in which order, for a
budget; the strategies of the literature as objects a judging loop drives (``next()``, ``record()``), a
stratified sample with the statAP and xinfAP estimates, and every strategy replayed against complete
judgments (:func:`simulate`).

numpy only; above the core, ``io/`` and ``stats/``, beside ``compare/`` and ``fusion/``.
"""

from .estimators import ESTIMATORS, Estimate, estimate, query_estimate
from .pairs import read_pairs, write_pairs
from .registry import STRATEGIES, Param, StrategySpec, make_strategy, pool, strategy_spec
from .runs import PoolRuns, judged_labels, pool_runs
from .sampling import Stratified, StratifiedDesign, Stratum, design_from_sample
from .simulate import DEFAULT_STRATEGIES, simulate, system_scores
from .strategies import Depth, MaxMean, MoveToFront, PoolPair, RBPWeighted, Strategy, layered_order

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
