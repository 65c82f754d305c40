"""haystack_irmetrics' core as an ir_measures provider: ``import haystack_irmetrics.ir_measures`` registers it.

Importing this package registers :data:`PROVIDER` as ``ir_measures.providers.registry["irmetrics"]`` (also
``ir_measures.irmetrics``) and appends it to ``ir_measures.DefaultPipeline``, where it computes what no provider
before it does (``NCG@k``); :func:`prefer` puts it first, so ``ir_measures.calc_aggregate`` and every tool on
it (PyTerrier's ``pt.Experiment``) compute each measure it supports through the core. It gives each measure
exactly as that measure's reference provider does (pytrec_eval, gdeval, msmarco, judged, cwl_eval) and
declines the rest, which fall through to them. The same provider is the entry point
``irmetrics = haystack_irmetrics.ir_measures:PROVIDER`` of the ``ir_measures.provider`` group.

- :mod:`.plans`: which of the core's measures gives what an ir_measures measure's reference provider gives, in
  which ranking order and over which queries, or ``None`` where it cannot (:func:`plan`);
- :mod:`.frames`: qrels and runs in every form ir_measures takes (dicts, DataFrames, namedtuples) read into the
  core's dicts, and a run ranked in the references' orders;
- :mod:`.provider`: the provider and its evaluator (:class:`IRMetricsProvider`, :class:`IRMetricsEvaluator`):
  the qrels read once, each run once, one :class:`~haystack_irmetrics.core.Evaluation` per order and threshold;
- :mod:`.extras`: what ir_measures' issues ask for and the core has: ``NCG@k``, and bootstrap intervals of each
  measure's mean from ``iter_calc``'s metrics (:func:`bootstrap_intervals`).

Usage::

    >>> import ir_measures
    >>> from ir_measures import AP, P, nDCG
    >>> from haystack_irmetrics.ir_measures import PROVIDER
    >>> qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.5, "d4": 0.4}, "q2": {"d5": 0.8, "d3": 0.7}}
    >>> PROVIDER.calc_aggregate([nDCG @ 3, AP(rel=2), P @ 1], qrels, run)
    {nDCG@3: 0.7453242267118274, AP(rel=2): 0.25, P@1: 0.5}
    >>> ir_measures.providers.registry["irmetrics"] is PROVIDER is ir_measures.irmetrics
    True
"""

from __future__ import annotations

from .._extras import require

require("ir_measures", purpose="the ir_measures provider", extra="ir-measures")

import ir_measures  # noqa: E402 - after the check that names the extra

from .extras import NCG, Interval, bootstrap_intervals  # noqa: E402
from .plans import Plan, plan  # noqa: E402
from .provider import IRMetricsEvaluator, IRMetricsProvider, Policy  # noqa: E402

__all__ = [
    "NCG",
    "PROVIDER",
    "IRMetricsEvaluator",
    "IRMetricsProvider",
    "Interval",
    "Plan",
    "Policy",
    "bootstrap_intervals",
    "plan",
    "prefer",
    "register",
]

#: The registered provider (trec_eval's conventions, each measure ranked as its reference ranks it).
PROVIDER = IRMetricsProvider()


def register() -> IRMetricsProvider:
    """Register :data:`PROVIDER` (a no-op once done): ``ir_measures.providers.registry["irmetrics"]``,
    ``ir_measures.irmetrics``, and the last provider of ``ir_measures.DefaultPipeline``."""
    ir_measures.providers.register(PROVIDER)
    ir_measures.irmetrics = PROVIDER
    if PROVIDER not in ir_measures.DefaultPipeline.providers:
        ir_measures.DefaultPipeline.providers.append(PROVIDER)
    return PROVIDER


def prefer(first: bool = True) -> IRMetricsProvider:
    """Put :data:`PROVIDER` first in ``ir_measures.DefaultPipeline`` (``first=False``: back to last), so
    ``ir_measures.calc_aggregate``, ``iter_calc``, ``evaluator`` and the tools on them (``pt.Experiment``)
    compute every measure it supports through the core, and the rest through the providers they did."""
    providers = ir_measures.DefaultPipeline.providers
    register()
    providers.remove(PROVIDER)
    if first:
        providers.insert(0, PROVIDER)
    else:
        providers.append(PROVIDER)
    return PROVIDER


register()
