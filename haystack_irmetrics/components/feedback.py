"""A Haystack component that turns feedback rows into gold documents with graded scores.

:class:`FeedbackToGoldDocuments` aggregates user feedback (one row per query, shown document, position,
vote) with a named strategy (:class:`haystack_irmetrics.feedback.Strategy`) and emits, per query, the
judged documents as ``Document(id=..., score=label)`` -- the graded ground truth the evaluators of
:mod:`haystack_irmetrics.components.evaluators` read from ``Document.score`` -- plus the ranking the
users saw, so an evaluator can score the logged system without a retriever:

    feedback rows -> FeedbackToGoldDocuments -> ground_truth_documents ---> IRMetricsEvaluator
                                             -> logged_documents -------/  (retrieved_documents)
                                             -> query_ids -------------/

Judged-not-relevant documents are gold documents with a label ``<= 0`` (or below the evaluator's
threshold); unjudged documents are simply absent, and a query without any judgment gets an empty gold
list, which the evaluators treat as unjudged (``nan``, left out of the mean).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from ..checks import whole
from ..errors import InvalidIdError, InvalidPolicyError
from ..feedback import FeedbackColumns, Strategy, aggregate_feedback
from ..feedback.replay import document_id_target, gold_documents
from ..feedback.schema import vote_words


def shown_documents(shown: Any, query_ids: Sequence[str], *, id_field: str = "id") -> list[list[Document]]:
    """The ranking users saw per query (by mean logged position), as Documents in that order."""
    kind, key = document_id_target(id_field)
    by_query: dict[str, list[Document]] = {}
    for q, d, mean_position, impressions in shown.select("query", "doc", "mean_position", "impressions").iter_rows():
        meta = {"mean_position": mean_position, "impressions": impressions}
        doc = Document(id=d, meta=meta) if kind == "id" else Document(meta={**meta, key: d})
        by_query.setdefault(q, []).append(doc)
    return [by_query.get(q, []) for q in query_ids]


@component
class FeedbackToGoldDocuments:
    """
    Feedback rows -> per-query gold documents with graded scores, the logged rankings and query ids.

    Usage::

        >>> from haystack_irmetrics.components import IRMetricsEvaluator
        >>> from haystack_irmetrics.components.feedback import FeedbackToGoldDocuments
        >>> rows = [
        ...     {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1.0},
        ...     {"query_id": "q1", "doc_id": "d2", "position": 2, "vote": 0.5},
        ...     {"query_id": "q2", "doc_id": "d3", "position": 1, "vote": 0.3},
        ...     {"query_id": "q2", "doc_id": "d1", "position": 2, "vote": 1.0},
        ... ]
        >>> out = FeedbackToGoldDocuments().run(feedback=rows)
        >>> [[(d.id, d.score) for d in docs] for docs in out["ground_truth_documents"]]
        [[('d1', 1.0), ('d2', 0.5)], [('d1', 1.0), ('d3', 0.3)]]
        >>> metrics = IRMetricsEvaluator(metrics=["NDCG", "P"], k_values=[1], relevance_threshold=0.5)
        >>> metrics.run(out["ground_truth_documents"], out["logged_documents"], out["query_ids"])["means"]
        {'NDCG@1': 0.65, 'P@1': 0.5}
    """

    def __init__(
        self,
        strategy: str = "mean",
        min_votes: int = 1,
        dedup: str = "none",
        dedup_by: str = "user",
        up_threshold: float = 0.5,
        confidence: float = 0.95,
        columns: dict[str, str | None] | None = None,
        vote_map: dict[str, float] | None = None,
        position_base: int = 1,
        on_error: str = "raise",
        id_field: str = "id",
    ) -> None:
        """
        Create the component. Every parameter is a plain JSON value.

        :param strategy: ``"mean"``, ``"majority"`` or ``"wilson"`` (see :class:`haystack_irmetrics.feedback.Strategy`).
        :param min_votes: pairs with fewer votes (after de-duplication) stay unjudged.
        :param dedup: ``"none"``, ``"last"`` or ``"first"``: each user's last / first vote counts.
        :param dedup_by: ``"user"`` or ``"session"``: the column de-duplication keys on.
        :param up_threshold: a vote ``>=`` this is an up vote (``majority``, ``wilson``).
        :param confidence: confidence of the Wilson bound.
        :param columns: ``{role: column name}`` of the feedback rows (default ``query_id``, ``doc_id``,
            ``position``, ``vote``; optional ``user``, ``session``, ``timestamp``, ``segment``, ``query_text``).
        :param vote_map: words accepted as votes (default ``up``/``down``, ``like``/``dislike``, ...).
        :param position_base: the first position in the rows (1, or 0 for 0-based logs).
        :param on_error: ``"raise"`` on a malformed row (default), or ``"skip"``: count it in ``skipped_rows``.
        :param id_field: where the log's doc id goes on the output Documents: ``"id"`` or ``"meta.<key>"``
            (match the evaluators' ``document_comparison_field``).
        """
        self._strategy = Strategy.parse(
            strategy,
            min_votes=min_votes,
            dedup=dedup,
            dedup_by=dedup_by,
            up_threshold=up_threshold,
            confidence=confidence,
        )
        self._columns = FeedbackColumns.coerce(columns)
        document_id_target(id_field)
        if on_error not in ("raise", "skip"):
            raise InvalidPolicyError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        whole(position_base, "position_base", error=InvalidPolicyError)  # 1 or 0
        vote_words(vote_map)  # checked here, not first at run: words -> finite numbers
        self.strategy = strategy
        self.min_votes = min_votes
        self.dedup = dedup
        self.dedup_by = dedup_by
        self.up_threshold = up_threshold
        self.confidence = confidence
        self.columns = columns
        self.vote_map = vote_map
        self.position_base = position_base
        self.on_error = on_error
        self.id_field = id_field

    def to_dict(self) -> dict[str, Any]:
        """Serialize the component to a dictionary (init parameters only)."""
        return default_to_dict(
            self,
            strategy=self.strategy,
            min_votes=self.min_votes,
            dedup=self.dedup,
            dedup_by=self.dedup_by,
            up_threshold=self.up_threshold,
            confidence=self.confidence,
            columns=self.columns,
            vote_map=self.vote_map,
            position_base=self.position_base,
            on_error=self.on_error,
            id_field=self.id_field,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeedbackToGoldDocuments:
        """Deserialize the component from a dictionary made by :meth:`to_dict`."""
        return default_from_dict(cls, data)

    @component.output_types(
        ground_truth_documents=list[list[Document]],
        logged_documents=list[list[Document]],
        query_ids=list[str],
        queries=list[str],
        skipped_rows=int,
    )
    def run(self, feedback: list[dict[str, Any]], query_ids: list[str] | None = None) -> dict[str, Any]:
        """
        Aggregate feedback rows into gold documents.

        :param feedback: one dict per log row (query, shown document, position, vote; see ``columns``).
        :param query_ids: the queries to output, in this order (default: every logged query, sorted); a
            query without judgments gets an empty gold list.
        :returns: ``ground_truth_documents`` (judged documents, ``score`` = label), ``logged_documents``
            (the rankings users saw), ``query_ids``, ``queries`` (the logged query texts, else the ids)
            and ``skipped_rows`` (malformed rows left out under ``on_error="skip"``).
        :raises MalformedRowError: on a malformed row under ``on_error="raise"`` (names the row and column).
        """
        if query_ids is not None and (
            isinstance(query_ids, str | bytes)
            or not isinstance(query_ids, Sequence)
            or not all(isinstance(q, str) for q in query_ids)
        ):
            raise InvalidIdError(f"query_ids must be a list of str query ids, got {query_ids!r}"[:200])
        agg = aggregate_feedback(
            feedback,
            self._strategy,
            columns=self._columns,
            on_error=self.on_error,
            vote_map=self.vote_map,
            position_base=self.position_base,
            by_segment=False,
        )
        texts = agg.query_text()
        qids = sorted(texts) if query_ids is None else list(query_ids)
        return {
            "ground_truth_documents": gold_documents(agg.judgments, qids, id_field=self.id_field, source=agg.source),
            "logged_documents": shown_documents(agg.shown, qids, id_field=self.id_field),
            "query_ids": qids,
            "queries": [texts.get(q, q) for q in qids],
            "skipped_rows": agg.read.skipped,
        }


__all__ = ["FeedbackToGoldDocuments", "gold_documents", "shown_documents"]
