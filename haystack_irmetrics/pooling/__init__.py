"""Pools that find the relevant documents first: which (query, document) pairs to judge, in which order, for a
budget; the strategies of the literature as objects a judging loop drives (``next()``, ``record()``), a
stratified sample with the statAP and xinfAP estimates, and every strategy replayed against complete
judgments (:func:`simulate`).

- :mod:`.runs`: the runs a pool is drawn from, each ranking in trec_eval's order cut at the pool depth, and the
  judgments a pool starts from (:class:`PoolRuns`: a pool's pairs or its holes, the share of a run's top k a
  judge fills; :func:`pool_runs`, :func:`judged_labels`);
- :mod:`.strategies`: the strategies a judging loop drives, ``next()`` and ``record(query, doc, label)``: depth
  pooling, RBP-weighted, Move-to-Front and the MaxMean bandit;
- :mod:`.sampling`: a stratified sample with known inclusion probabilities (:class:`Stratified`,
  :class:`StratifiedDesign`), and the design rebuilt from a sample file (:func:`design_from_sample`);
- :mod:`.estimators`: the statAP and xinfAP estimates of average precision from such a sample's judgments;
- :mod:`.registry`: the strategies with their parameters and ranges, as data (``STRATEGIES``, which the CLI's
  choices read), :func:`make_strategy` and :func:`pool`, a budget's pairs;
- :mod:`.pairs`: the pairs file of ``irmetrics pool``, written whole and read back;
- :mod:`.simulate`: each strategy replayed against complete judgments: the relevant documents found for a budget,
  and the systems' order compared with their order under all the judgments.

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
    "sample_queries": ".registry",
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
    "sample_queries",
    "simulate",
    "strategy_spec",
    "system_scores",
    "write_pairs",
]
