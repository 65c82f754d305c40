"""Stage 5 of the feedback path: score systems against the judgments -- the metrics on full and condensed
lists, Judged@k, and per segment the bootstrap intervals and paired tests against a baseline.

Feedback judges few documents per query, and a new system mostly retrieves documents nobody voted on.
Three numbers per metric keep that visible:

* **full** -- the ranking as it is; unjudged documents count as not relevant (trec_eval's convention).
* **condensed** -- unjudged documents removed before scoring (Sakai's condensed lists): what the metric
  would be if the unjudged documents were not there. Optimistic where the full list is pessimistic.
* **Judged@k** -- the share of the top k that has a judgment of any label, ``|judged in top k| / k``
  (the core's ``Judged@k``, as ir_measures defines it). A low Judged@k says the full-list score is mostly
  about unjudged documents.

Every system is scored over the same queries -- those with at least one judgment -- and a query a system
does not answer scores 0 (``missing_queries="zero"``), so per-query values pair up for the tests.
Ids equal to the query id are kept (``ignore_identical_ids=False``): a log's ids are not BEIR's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core import Preset, Qrels, Run, evaluate, resolve_measures, resolve_preset
from ..core.inputs import ArrayRun, QrelsDict, RunDict
from ..core.inputs import as_run as core_as_run
from ..core.plausibility import judgments_built_here
from ..core.results import bounded, short_list
from ..errors import FeedbackError
from ..stats import Comparison, bootstrap_means, compare_with_baseline, percentile_interval
from ._deps import pl
from .judgments import AggregatedFeedback
from .settings import FeedbackSettings

VARIANTS = ("full", "condensed")
#: The system name of the rankings users saw (:meth:`~.judgments.AggregatedFeedback.logged_run`).
LOGGED = "logged"


#: What feedback changes in any base preset: every system is scored over the same judged queries (a query it
#: does not answer, or without a relevant document, scores 0) and ids equal to the query id are kept.
FEEDBACK_POLICY: dict[str, Any] = {"missing_queries": "zero", "ignore_identical_ids": False, "no_relevant": "zero"}


def feedback_preset(preset: str | Preset = "beir", threshold: float = 0.5) -> Preset:
    """The preset every feedback score uses: ``preset`` (``"beir"`` or ``"trec"``) with :data:`FEEDBACK_POLICY`
    and the relevance ``threshold`` (what a report of a feedback evaluation evaluates with too)."""
    return resolve_preset(preset, relevance_threshold=threshold, **FEEDBACK_POLICY)


def as_run(run: RunDict | Mapping[str, Sequence[str]] | Run | ArrayRun) -> Run | ArrayRun:
    """A core run object (a columnar run from the file readers stays columnar; ranked lists become a ``RankedRun``)."""
    return core_as_run(run)


def answered(run: Run | ArrayRun) -> set[str]:
    """Queries the run retrieved at least one document for."""
    if isinstance(run, ArrayRun):
        sizes = np.diff(run.offsets)
        return {q for q, n in zip(run.qids, sizes.tolist(), strict=True) if n}
    return {q for q, docs in run.data.items() if docs}


def condense(run: RunDict | Run | ArrayRun, qrels: QrelsDict | Qrels) -> dict[str, dict[str, float]]:
    """The run with every unjudged document removed; queries without judgments are dropped.

    A judged query the run answered stays, possibly with no document left (it then scores 0). Work per
    query is proportional to its judged documents, not to the run's length (a columnar run from the
    file readers is matched against the judged ids in one vectorised pass). Kept documents stay in the
    run's order, which the ``stable`` tie policy depends on.

    Usage::

        >>> condense({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}, "q2": {"d5": 1.0}, "q9": {"d1": 1.0}},
        ...          {"q1": {"d3": 1, "d1": 0}, "q2": {"d4": 1}})
        {'q1': {'d1': 0.9, 'd3': 0.7}, 'q2': {}}
    """
    judged = Qrels.from_dict(qrels).data
    r = as_run(run)
    if isinstance(r, ArrayRun):
        return _condense_columnar(r, judged)
    out: dict[str, dict[str, float]] = {}
    for q, docs in r.data.items():
        keep = judged.get(q)
        if not keep:
            continue
        found = [d for d in keep if d in docs]
        if len(found) > 1:
            if len({docs[d] for d in found}) < len(found):
                wanted = set(found)  # tied scores: take the run's order (O(run) only for this query)
                found = [d for d in docs if d in wanted]
            found.sort(key=docs.__getitem__, reverse=True)  # stable: ties keep the run's order
        out[q] = {d: docs[d] for d in found}
    return out


def _condense_columnar(run: ArrayRun, judged: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    qids = [q for q in run.qids if judged.get(q)]
    out: dict[str, dict[str, float]] = {q: {} for q in qids}
    candidates = list({d for q in qids for d in judged[q]})
    if not candidates:
        return out
    hits, which = run.find(candidates)
    owner = np.searchsorted(run.offsets, hits, side="right") - 1
    for pos, qi, ci in zip(hits.tolist(), owner.tolist(), which.tolist(), strict=True):
        q = run.qids[qi]
        d = candidates[ci]
        if q in out and d in judged[q]:
            out[q][d] = float(run.scores[pos])
    return out


@dataclass
class SystemScores:
    """One system's per-query values over ``queries`` (the judged queries, in qrels order).

    ``values[variant][measure]`` and ``judged["Judged@k"]`` are float arrays aligned with ``queries``;
    ``raw_means[measure]``: the full list's means as :func:`~haystack_irmetrics.evaluate` sums them (what a
    report of the evaluation shows, without evaluating again).
    """

    name: str
    queries: list[str]
    values: dict[str, dict[str, np.ndarray]]
    judged: dict[str, np.ndarray]
    retrieved_queries: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    raw_means: dict[str, float] = field(default_factory=dict)

    def means(self, variant: str = "full") -> dict[str, float]:
        return {m: float(v.mean()) for m, v in self.values[variant].items()}

    def judged_means(self) -> dict[str, float]:
        return {m: float(v.mean()) for m, v in self.judged.items()}


def score_system(
    name: str,
    run: RunDict | Run | ArrayRun,
    qrels: Qrels,
    *,
    k_values: Sequence[int],
    measures: Sequence[str] | None = None,
    threshold: float = 0.5,
    preset: str = "beir",
    condensed: bool = True,
) -> SystemScores:
    """Score one run against feedback qrels: full (and condensed) lists, and Judged@k.

    NDCG uses the labels as gains; P, Recall, MAP, MRR and R_cap count a label ``>= threshold`` as
    relevant.
    """
    wanted = resolve_measures(measures, k_values)
    names = [m.name for m in wanted]
    ks = sorted({m.cutoff for m in wanted})
    queries = [q for q in qrels.qids if qrels.data[q]]
    r = as_run(run)
    common = {"preset": feedback_preset(preset, threshold)}
    # Judged@k is the core's measure, scored with the full list (the same ranking, ties included).
    judged_names = [f"Judged@{k}" for k in ks]
    full = _evaluate(qrels, _answering(r, queries), measures=list(dict.fromkeys(names + judged_names)), **common)
    values = {"full": _aligned(full.per_query, names, queries)}
    judged = _aligned(full.per_query, judged_names, queries)
    if condensed:
        result = _evaluate(qrels, Run.from_dict(condense(r, qrels) or {queries[0]: {}}), measures=names, **common)
        values["condensed"] = _aligned(result.per_query, names, queries)
    got = answered(r)
    raw = {m: full.raw_means[m] for m in names}
    return SystemScores(name, queries, values, judged, retrieved_queries=sum(q in got for q in queries), raw_means=raw)


def _evaluate(qrels: Qrels, run: Run | ArrayRun, **options: Any) -> Any:
    """``evaluate`` without the core's check for swapped arguments: the judgments come from the log, so they
    cannot be a run, and fractional labels (mean votes, Wilson bounds) beside the logged rankings' whole
    scores (``n - rank``) are what feedback looks like, not ``evaluate(results, qrels)``."""
    with judgments_built_here():
        return evaluate(qrels, run, None, **options)


def _answering(run: Run | ArrayRun, queries: list[str]) -> Run | ArrayRun:
    """``run``, or, when it answers none of ``queries`` (a segment it never saw), one empty query in
    its place: each query then scores 0, as an unanswered query does anywhere (evaluate needs an overlap)."""
    got = answered(run)
    return run if not queries or any(q in got for q in queries) else Run.from_dict({queries[0]: {}})


def _aligned(
    per_query: Mapping[str, Mapping[str, float]], names: list[str], queries: list[str]
) -> dict[str, np.ndarray]:
    """Per-query values of every measure as arrays in ``queries`` order.

    The measures of one evaluation list the same queries in the same order, so the permutation to
    ``queries`` is computed once and applied to each measure's values (no per-query lookups).
    """
    out: dict[str, np.ndarray] = {}
    order: np.ndarray | None = None
    keys: list[str] | None = None
    for m in names:
        pq = per_query[m]
        current = list(pq)
        if current != keys:
            keys = current
            position = {q: i for i, q in enumerate(keys)}
            missing = [q for q in queries if q not in position]
            if missing or len(keys) != len(queries):  # pragma: no cover - the policy scores every judged query
                raise AssertionError(f"{m}: judged queries without a value: {missing[:5]}")
            order = np.fromiter((position[q] for q in queries), np.int64, count=len(queries))
        assert order is not None
        out[m] = np.fromiter(pq.values(), np.float64, count=len(keys))[order]
    return out


@dataclass
class SegmentResult:
    """Every system scored on one segment's judgments (``segment`` is :data:`~.judgments.ALL` for the whole log).

    ``intervals[system][variant][metric]`` and ``judged_intervals[system][metric]``: bootstrap intervals of
    the means. ``comparisons[system][variant]``: one :class:`~haystack_irmetrics.stats.Comparison` per
    metric against the baseline, Holm-adjusted over the metrics of that (system, variant).
    """

    segment: Any
    label: str
    queries: list[str]
    systems: dict[str, SystemScores]
    intervals: dict[str, dict[str, dict[str, tuple[float, float]]]]
    judged_intervals: dict[str, dict[str, tuple[float, float]]]
    comparisons: dict[str, dict[str, list[Comparison]]]
    queries_with_relevant: int

    def __repr__(self) -> str:
        return bounded(
            f"SegmentResult(label={self.label!r}, queries={len(self.queries)}, systems={short_list(list(self.systems))}, "
            f"queries_with_relevant={self.queries_with_relevant})"
        )


def score_segment(
    feedback: AggregatedFeedback,
    segment: Any,
    label: str,
    external: dict[str, Run | ArrayRun],
    systems: list[str],
    settings: FeedbackSettings,
    metrics: list[str],
) -> SegmentResult:
    """Every system of ``systems`` scored on ``segment``'s judgments and compared with ``settings.baseline`` (set:
    :func:`~.evaluate.evaluate_feedback` resolves it), on ``metrics``, with ``settings``' threshold, preset, lists
    and bootstrap."""
    baseline, threshold, preset, condensed = settings.baseline, settings.threshold, settings.preset, settings.condensed
    n_resamples, seed, confidence = settings.n_resamples, settings.seed, settings.confidence
    assert baseline is not None
    qrels: Qrels = feedback.qrels(segment)
    ks = sorted({int(m.split("@")[1]) for m in metrics})
    scores: dict[str, SystemScores] = {}
    for name in systems:
        run = feedback.logged_run(segment) if name == LOGGED else external[name]
        try:
            scores[name] = score_system(
                name,
                run,
                qrels,
                k_values=ks,
                measures=metrics,
                threshold=threshold,
                preset=preset,
                condensed=condensed,
            )
        except FeedbackError:
            raise
        except ValueError as e:
            raise type(e)(f"system {name!r}, segment {label}: {e}") from e
    queries = scores[systems[0]].queries
    variants = VARIANTS if condensed else VARIANTS[:1]

    # One bootstrap over every column of every system: each mean's interval and, from the same
    # resamples, each difference's interval (resampled mean of a difference = difference of means).
    columns: list[tuple[str, str, str]] = []
    matrix: list[np.ndarray] = []
    for name, s in scores.items():
        for variant in variants:
            for m in metrics:
                columns.append((name, variant, m))
                matrix.append(s.values[variant][m])
        for m, v in s.judged.items():
            columns.append((name, "judged", m))
            matrix.append(v)
    index = {c: i for i, c in enumerate(columns)}
    if len(queries) >= 2:
        means = bootstrap_means(np.column_stack(matrix), n_resamples=n_resamples, seed=seed)
    else:  # one query: no resampling, intervals collapse to the value
        means = np.column_stack(matrix)[:1]
    low, high = percentile_interval(means, confidence)
    intervals: dict[str, dict[str, dict[str, tuple[float, float]]]] = {n: {v: {} for v in variants} for n in scores}
    judged_intervals: dict[str, dict[str, tuple[float, float]]] = {n: {} for n in scores}
    for (name, variant, m), lo, hi in zip(columns, low.tolist(), high.tolist(), strict=True):
        target = judged_intervals[name] if variant == "judged" else intervals[name][variant]
        target[m] = (lo, hi)

    # Every (system, variant, metric) against the baseline; Holm per (system, variant).
    comparisons: dict[str, dict[str, list[Comparison]]] = {}
    others = [n for n in systems if n != baseline]
    if others and len(queries) >= 2:
        values = {n: {(v, m): scores[n].values[v][m] for v in variants for m in metrics} for n in systems}
        compared = compare_with_baseline(
            values,
            baseline,
            holm_scope="system_group",  # each system's list variant: keys are (variant, metric)
            n_resamples=n_resamples,
            seed=seed,
            intervals=False,  # from the shared resamples above
        )
        keys = [(n, *key) for n in others for key in values[n]]
        deltas = means[:, [index[k] for k in keys]] - means[:, [index[(baseline, *k[1:])] for k in keys]]
        d_low, d_high = percentile_interval(deltas, confidence)
        found = [(n, c) for n in others for c in compared.comparisons[n].values()]
        for (name, c), lo, hi in zip(found, d_low.tolist(), d_high.tolist(), strict=True):
            variant, m = c.metric
            c = replace(c, metric=(name, variant, m), ci_low=lo, ci_high=hi)
            comparisons.setdefault(name, {}).setdefault(variant, []).append(c)

    judgments, _ = feedback._frames(segment)
    relevant = judgments.filter(pl.col("label") >= threshold)["query"].n_unique()
    return SegmentResult(segment, label, queries, scores, intervals, judged_intervals, comparisons, relevant)


__all__ = [
    "FEEDBACK_POLICY",
    "LOGGED",
    "VARIANTS",
    "SegmentResult",
    "SystemScores",
    "answered",
    "as_run",
    "condense",
    "feedback_preset",
    "score_segment",
    "score_system",
]
