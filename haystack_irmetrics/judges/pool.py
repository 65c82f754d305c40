"""The pairs a judge is asked about: each run's top k per query (trec_eval's order: score descending, ties by
document id descending), pooled over the runs and deduplicated, less the pairs people judged; and the share of
a run's top k a judge would fill.

:func:`unjudged_share` is per pair: the share of a run's top k (or of fewer, when the query has fewer
documents) that has no judgment *for that query*, averaged over the run's queries (a query nobody judged is all
unjudged): what a judge fills. It is not BEIR's hole: ``evaluate_custom(..., "hole")`` counts a document
judged for any query as judged and divides by the number of judged queries; that is the core's ``Hole@k``,
which ``summary.json`` reports as ``Hole@K`` beside this share (``unjudged_pairs@K``).

Usage::

    >>> runs = {"a": {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}, "b": {"q1": {"d4": 1.0, "d1": 0.5}}}
    >>> unjudged_pairs(runs, {"q1": {"d1": 1}}, depth=2)
    [('q1', 'd2'), ('q1', 'd4')]
    >>> unjudged_share(runs["a"], {"q1": {"d1": 1}}, 2)
    0.5
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.ranking import trec_order

RunDict = Mapping[str, Mapping[str, float]]
QrelsDict = Mapping[str, Mapping[str, float]]


def top_k(run: RunDict, qid: str, k: int) -> list[str]:
    """The first ``k`` documents of ``run`` for ``qid`` in trec_eval's order."""
    return trec_order(run.get(qid) or {})[:k]


def pooled_pairs(runs: Mapping[str, RunDict], depth: int) -> list[tuple[str, str]]:
    """Every ``(query id, doc id)`` in some run's top ``depth``, each once, in the order first met."""
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str]] = []
    for run in runs.values():
        for qid in run:
            for doc in top_k(run, qid, depth):
                if (qid, doc) not in seen:
                    seen.add((qid, doc))
                    out.append((qid, doc))
    return out


def unjudged_pairs(runs: Mapping[str, RunDict], qrels: QrelsDict, depth: int) -> list[tuple[str, str]]:
    """Every ``(query id, doc id)`` in some run's top ``depth`` that ``qrels`` does not judge, each once, in
    the order first met (runs in order, queries in run order, ranks in order)."""
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str]] = []
    for run in runs.values():
        for qid in run:
            judged = qrels.get(qid) or {}
            for doc in top_k(run, qid, depth):
                pair = (qid, doc)
                if doc not in judged and pair not in seen:
                    seen.add(pair)
                    out.append(pair)
    return out


def unjudged_share(run: RunDict, qrels: QrelsDict, k: int) -> float | None:
    """The mean share of the top ``k`` with no judgment for its query, over the run's queries that retrieved
    something (``None`` when there is none)."""
    shares = []
    for qid in run:
        judged = qrels.get(qid) or {}
        top = top_k(run, qid, k)
        if top:
            shares.append(sum(doc not in judged for doc in top) / len(top))
    return sum(shares) / len(shares) if shares else None


__all__ = ["pooled_pairs", "top_k", "unjudged_pairs", "unjudged_share"]
