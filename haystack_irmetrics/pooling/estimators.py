"""Average precision estimated from a stratified sample's judgments (:class:`~.sampling.StratifiedDesign`).

Both estimators score a run's whole ranking (trec_eval's order) against the pool the sample was drawn from:
a retrieved document outside the pool counts as not relevant (it only takes its rank), as with infAP. What
they estimate is AP under the complete judgments of the pool (``R``: the pool's relevant documents); a query
whose estimated ``R`` is 0 scores 0, and a run's mean is over every query of the design (0 where the run has
none of the query's documents).

* ``statAP`` (Pavlu & Aslam 2007, *A practical sampling strategy for efficient retrieval evaluation*; Aslam,
  Pavlu & Yilmaz 2006, SIGIR): Horvitz-Thompson estimates of ``R`` and of the sum of precisions at the
  relevant documents' ranks, AP their ratio::

      R^  = sum_{i in S} x_i / pi_i
      N^  = sum_{i in S} (x_i / k_i) (1 / pi_i + sum_{j in S, k_j < k_i} x_j / pi_ij)
      statAP = N^ / R^

  ``x`` is 1 for a relevant document, ``k`` its rank, ``pi_i`` its inclusion probability and ``pi_ij`` the
  pair's: ``n (n - 1) / (N (N - 1))`` in one stratum, ``pi_i pi_j`` across strata. ``R^`` and ``N^`` are
  unbiased (every pair's second-order probability is the design's own); their ratio is consistent.
* ``xinfAP`` (Yilmaz, Kanoulas & Aslam 2008, SIGIR): infAP's expected precision with one ratio per stratum::

      E[prec@k] = 1                                                    (k = 1)
                = 1/k + (1/k) sum_h m_h (r_h + eps) / (r_h + n_h + 2 eps)   (k > 1)
      xinfAP = (1 / R^) sum_{relevant i in S} E[prec@k_i] / pi_i

  with ``m_h`` the pool documents of stratum ``h`` above rank ``k`` (sampled or not), ``r_h``/``n_h`` the
  sampled ones judged relevant/not relevant, and ``eps`` trec_eval's 0.00001. With one stratum this is
  trec_eval's infAP exactly (the pool's unsampled documents judged ``-1``).

Documents judged before the sample form a stratum of their own, in the sample with probability 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.kernels_user import INFAP_EPSILON
from ..errors import PoolingError
from .runs import PoolRuns, RunInput, judged_labels, pool_runs
from .sampling import StratifiedDesign, Stratum

#: The estimators :func:`estimate` knows.
ESTIMATORS = ("statAP", "xinfAP")


@dataclass(frozen=True)
class Estimate:
    """One run's estimate: the mean over the design's queries and the value of each query."""

    mean: float
    per_query: dict[str, float]


def _labels_of(design: StratifiedDesign, qrels: Mapping[str, Mapping[str, float]], q: str) -> dict[str, float]:
    """The labels of query ``q``'s sampled and certain documents; :raises PoolingError: one is missing."""
    got = qrels.get(q, {})
    wanted = [d for s in design.strata.get(q, ()) for d in s.sampled] + sorted(design.certain.get(q, ()))
    missing = [d for d in wanted if d not in got]
    if missing:
        raise PoolingError(
            f"the judgments have no label for {len(missing)} sampled pair(s) of query {q!r}, e.g. {missing[0]!r}: "
            "judge every pair of the sample (and give the judgments there were before it)"
        )
    return {d: got[d] for d in wanted}


def _r_hat(design: StratifiedDesign, q: str, labels: Mapping[str, float], threshold: float) -> float:
    total = float(sum(labels[d] >= threshold for d in design.certain.get(q, ())))
    for s in design.strata.get(q, ()):
        hits = sum(labels[d] >= threshold for d in s.sampled)
        if hits:
            total += hits / s.probability
    return total


def query_estimate(
    design: StratifiedDesign,
    q: str,
    ranking: Sequence[str],
    labels: Mapping[str, float],
    estimator: str,
    threshold: float = 1.0,
) -> float:
    """One query's ``statAP`` or ``xinfAP`` (see the module) of ``ranking`` (best first)."""
    total, r_hat = query_parts(design, q, ranking, labels, estimator, threshold)
    return total / r_hat if r_hat else 0.0


def query_parts(
    design: StratifiedDesign,
    q: str,
    ranking: Sequence[str],
    labels: Mapping[str, float],
    estimator: str,
    threshold: float = 1.0,
) -> tuple[float, float]:
    """``(numerator, R^)`` of one query's estimate: for ``statAP`` the unbiased ``N^`` (the sum of precisions
    at the relevant documents' ranks) and ``R^``; for ``xinfAP`` its sum of ``E[prec@k] / pi`` and ``R^``."""
    r_hat = _r_hat(design, q, labels, threshold)
    if r_hat == 0.0:
        return 0.0, 0.0
    sampled = {d for s in design.strata.get(q, ()) for d in s.sampled} | set(design.certain.get(q, ()))
    # Per stratum (None: the documents judged before) above the current rank: pool documents, sampled relevant
    # and sampled non-relevant ones.
    pool_above: dict[Stratum | None, int] = {}
    rel_above: dict[Stratum | None, int] = {}
    nonrel_above: dict[Stratum | None, int] = {}
    total = 0.0
    for k, d in enumerate(ranking, 1):
        if not design.in_pool(q, d):
            continue
        s = design.stratum(q, d)
        if d in sampled:
            relevant = labels[d] >= threshold
            if relevant:
                pi = 1.0 if s is None else s.probability
                if estimator == "statAP":
                    inner = 1.0 / pi
                    for g, c in rel_above.items():
                        if c:
                            joint = s.joint if g is s and s is not None else pi * (1.0 if g is None else g.probability)
                            inner += c / joint
                    total += inner / k
                else:
                    expected = 1.0
                    if k > 1:
                        above = sum(
                            m
                            * (rel_above.get(g, 0) + INFAP_EPSILON)
                            / (rel_above.get(g, 0) + nonrel_above.get(g, 0) + 2 * INFAP_EPSILON)
                            for g, m in pool_above.items()
                        )
                        expected = 1.0 / k + above / k
                    total += expected / pi
            counts = rel_above if relevant else nonrel_above
            counts[s] = counts.get(s, 0) + 1
        pool_above[s] = pool_above.get(s, 0) + 1
    return total, r_hat


def estimate(
    runs: Sequence[RunInput] | PoolRuns,
    design: StratifiedDesign,
    qrels: Mapping[str, Mapping[str, Any]],
    *,
    estimator: str = "statAP",
    names: Sequence[str] | None = None,
    relevance_threshold: float = 1.0,
) -> dict[str, Estimate]:
    """Each run's estimated AP from a sample's judgments (see the module).

    :param runs: the runs to score (whole rankings; any runs, pooled or not).
    :param design: the sample (``Stratified(...).design``, or :func:`~.sampling.design_from_sample`).
    :param qrels: the labels of every sampled pair and of the pool's documents judged before the sample.
    :param estimator: ``"statAP"`` or ``"xinfAP"``.
    :returns: ``{run name: Estimate}``.
    :raises PoolingError: an unknown estimator, or a sampled pair without a label.

    Usage::

        >>> from haystack_irmetrics.pooling import Stratified, pool_runs
        >>> runs = pool_runs([{"q1": {"a": 3, "b": 2, "c": 1, "d": 0.5}}])
        >>> design = Stratified(runs, budget=4, edges=(2,)).design  # the whole pool: every probability is 1
        >>> estimate(runs, design, {"q1": {"a": 1, "b": 0, "c": 1, "d": 0}})["run1"].mean  # AP = (1 + 2/3) / 2
        0.8333333333333333
    """
    if estimator not in ESTIMATORS:
        raise PoolingError(f"unknown estimator {estimator!r}: {', '.join(ESTIMATORS)}")
    scored = pool_runs(runs, names=names) if not isinstance(runs, PoolRuns) else runs
    labels = judged_labels(qrels)
    index = {q: i for i, q in enumerate(scored.qids)}
    queries = list(design.strata)
    per_query_labels = {q: _labels_of(design, labels, q) for q in queries}
    out = {}
    for r, name in enumerate(scored.names):
        values = {}
        for q in queries:
            ranking = scored.rankings[r][index[q]] if q in index else ()
            values[q] = query_estimate(design, q, ranking, per_query_labels[q], estimator, relevance_threshold)
        mean = sum(values.values()) / len(values) if values else 0.0
        out[name] = Estimate(mean, values)
    return out


__all__ = ["ESTIMATORS", "Estimate", "estimate", "query_estimate", "query_parts"]
