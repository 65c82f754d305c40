"""Score rankings against feedback judgments: the six metrics, on full and condensed lists, plus Judged@k.

Feedback judges few documents per query, and a new system mostly retrieves documents nobody voted on.
Three numbers per metric keep that visible:

* **full** -- the ranking as it is; unjudged documents count as not relevant (trec_eval's convention).
* **condensed** -- unjudged documents removed before scoring (Sakai's condensed lists): what the metric
  would be if the unjudged documents were not there. Optimistic where the full list is pessimistic.
* **Judged@k** -- the share of the top k that has a judgment of any label, ``|judged in top k| / k``
  (ir_measures' ``Judged@k``). A low Judged@k says the full-list score is mostly about unjudged documents.

Every system is scored over the same queries -- those with at least one judgment -- and a query a system
does not answer scores 0 (``missing_queries="zero"``), so per-query values pair up for the tests.
Ids equal to the query id are kept (``ignore_identical_ids=False``): a log's ids are not BEIR's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import evaluate
from ..core.inputs import ColumnarRun, Qrels, QrelsDict, Run, RunDict
from ..core.inputs import as_run as core_as_run
from ..core.measures import resolve_measures

VARIANTS = ("full", "condensed")


def _policy(preset: str) -> dict[str, Any]:
    return {"preset": preset, "missing_queries": "zero", "ignore_identical_ids": False, "no_relevant": "zero"}


def judged_at_k(
    qrels: QrelsDict | Qrels,
    run: RunDict | Run | ColumnarRun,
    k_values: Sequence[int],
    *,
    preset: str = "beir",
    ties: str | None = None,
) -> dict[str, dict[str, float]]:
    """``{"Judged@k": {qid: share}}``: the share of each query's top k that has a judgment (any label).

    Computed by the core as P@k against the same judgments with every label set to 1, so the ranking
    (ties included) is exactly the one the metrics use. Divides by k, like P@k; every judged query is
    present (0 when the run does not answer it). This is the one place Judged@k is defined; swap it for
    the core's measure once it has one.

    Usage::

        >>> judged_at_k({"q1": {"d1": 0, "d3": 1}}, {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}}, [1, 2, 4])
        {'Judged@1': {'q1': 1.0}, 'Judged@2': {'q1': 0.5}, 'Judged@4': {'q1': 0.5}}
    """
    judged = Qrels.from_dict(qrels).data
    ones = {q: dict.fromkeys(docs, 1) for q, docs in judged.items() if docs}
    ks = [m.cutoff for m in resolve_measures(["P"], k_values)]
    result = evaluate(
        ones,
        _answering(as_run(run), list(ones)),
        ks,
        measures=["P"],
        relevance_threshold=1.0,
        ties=ties,
        **_policy(preset),
    )
    return {f"Judged@{k}": result.per_query[f"P@{k}"] for k in ks}


def as_run(run: RunDict | Mapping[str, Sequence[str]] | Run | ColumnarRun) -> Run | ColumnarRun:
    """A core run object (a columnar run from the file readers stays columnar; ranked lists become a ``RankedRun``)."""
    return core_as_run(run)


def answered(run: Run | ColumnarRun) -> set[str]:
    """Queries the run retrieved at least one document for."""
    if isinstance(run, ColumnarRun):
        sizes = np.diff(run.offsets)
        return {q for q, n in zip(run.qids, sizes.tolist(), strict=True) if n}
    return {q for q, docs in run.data.items() if docs}


def condense(run: RunDict | Run | ColumnarRun, qrels: QrelsDict | Qrels) -> dict[str, dict[str, float]]:
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
    if isinstance(r, ColumnarRun):
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


def _condense_columnar(run: ColumnarRun, judged: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
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

    ``values[variant][measure]`` and ``judged["Judged@k"]`` are float arrays aligned with ``queries``.
    """

    name: str
    queries: list[str]
    values: dict[str, dict[str, np.ndarray]]
    judged: dict[str, np.ndarray]
    retrieved_queries: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def means(self, variant: str = "full") -> dict[str, float]:
        return {m: float(v.mean()) for m, v in self.values[variant].items()}

    def judged_means(self) -> dict[str, float]:
        return {m: float(v.mean()) for m, v in self.judged.items()}


def score_system(
    name: str,
    run: RunDict | Run | ColumnarRun,
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
    common = {"measures": names, "relevance_threshold": threshold, **_policy(preset)}
    values: dict[str, dict[str, np.ndarray]] = {}
    runs = {"full": _answering(r, queries)}
    if condensed:
        runs["condensed"] = Run.from_dict(condense(r, qrels) or {queries[0]: {}})
    for variant, this in runs.items():
        result = evaluate(qrels, this, None, **common)
        values[variant] = _aligned(result.per_query, names, queries)
    judged_pq = judged_at_k(qrels, r, ks, preset=preset)
    judged = _aligned(judged_pq, list(judged_pq), queries)
    got = answered(r)
    return SystemScores(name, queries, values, judged, retrieved_queries=sum(q in got for q in queries))


def _answering(run: Run | ColumnarRun, queries: list[str]) -> Run | ColumnarRun:
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


__all__ = ["VARIANTS", "SystemScores", "answered", "as_run", "condense", "judged_at_k", "score_system"]
