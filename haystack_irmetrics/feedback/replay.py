"""Beside the stages: replay the logged queries through a Haystack pipeline, a new system's rankings to
score (stage 5).

Each judged query's text (the log's ``query_text`` column, else its id) goes to the pipeline's query
input; the documents it returns become a ranking through the same document path as the evaluator
components (:class:`~haystack_irmetrics.integration.documents.DocumentPath`: match on ``Document.id`` or a
meta key, rank by list order or by score, repeated keys count once).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import FeedbackError, InvalidPolicyError
from .judgments import AggregatedFeedback, finite_labels

if TYPE_CHECKING:  # pragma: no cover
    from haystack import Document


def document_id_target(field: str) -> tuple[str, str | None]:
    """Where a log's doc id goes on a Document: ``("id", None)`` or ``("meta", key)`` for ``"meta.<key>"``."""
    if field == "id":
        return ("id", None)
    if isinstance(field, str) and field.startswith("meta.") and len(field) > 5:
        return ("meta", field[5:])
    raise InvalidPolicyError(f"id_field must be 'id' or 'meta.<key>', got {field!r}")


def gold_documents(
    judgments: Any, query_ids: Sequence[str], *, id_field: str = "id", source: str = "feedback"
) -> list[list[Document]]:
    """One list of ``Document(score=label)`` per query id, from a judgments frame (``query, doc, label, ...``).

    ``meta`` carries ``votes``, ``up_votes`` and ``voters``; with ``id_field="meta.<key>"`` the log's doc id
    goes to ``meta[<key>]`` (and ``Document.id`` is Haystack's default hash) for evaluators that match on it.

    :raises InvalidLabelError: if a label is not finite (votes that aggregate beyond any float), as
        :meth:`~haystack_irmetrics.feedback.AggregatedFeedback.qrels` does; ``source`` names the log.
    """
    from haystack import Document

    kind, key = document_id_target(id_field)
    finite_labels(judgments, source)
    by_query: dict[str, list[Document]] = {}
    for q, d, label, votes, up, voters in judgments.select(
        "query", "doc", "label", "votes", "up_votes", "voters"
    ).iter_rows():
        meta = {"votes": votes, "up_votes": up, "voters": voters}
        if kind == "id":
            doc = Document(id=d, score=float(label), meta=meta)
        else:
            doc = Document(content=None, score=float(label), meta={**meta, key: d})
        by_query.setdefault(q, []).append(doc)
    return [by_query.get(q, []) for q in query_ids]


def replay_pipeline(
    pipeline: Any,
    feedback: AggregatedFeedback,
    *,
    query_input: str | Sequence[str] | None = None,
    output: str | None = None,
    document_comparison_field: str = "id",
    rank_by: str = "order",
    top_k: int | None = None,
    queries: Sequence[str] | None = None,
    run_kwargs: dict[str, Any] | None = None,
) -> dict[str, dict[str, float]]:
    """Run ``pipeline`` once per judged query and return the rankings as ``{qid: {doc key: score}}``.

    :param pipeline: a :class:`haystack.Pipeline`, or a YAML path / text (loaded with
        :func:`~haystack_irmetrics.components.load_pipeline`). Its document store must hold the corpus.
    :param feedback: the aggregated log; its judged queries are replayed (or ``queries``).
    :param query_input: ``"component.socket"`` receiving the query text (default: every open ``query`` / ``text``).
    :param output: ``"component.socket"`` of the ranked documents (default: the one open ``documents`` output).
    :param document_comparison_field: ``"id"`` or ``"meta.<key>"``: which value is the log's doc id.
    :param rank_by: ``"order"`` (the list as returned) or ``"score"`` (``Document.score``).
    :param top_k: passed to every open ``top_k`` input when given.
    :param run_kwargs: extra inputs merged into each ``pipeline.run`` call (``{component: {socket: value}}``).
    """
    from haystack import Pipeline

    from ..integration.documents import DocumentPath
    from ..integration.queries import QueryRunner
    from ..integration.sockets import REPLAY_NAMING, find_sockets

    pipe = pipeline
    source = "the pipeline"
    if not isinstance(pipe, Pipeline):
        if not isinstance(pipe, str | os.PathLike):
            raise FeedbackError(f"pipeline must be a haystack Pipeline or a YAML path, got {type(pipe).__name__}")
        from ..integration.loading import load_pipeline

        if "\n" not in os.fspath(pipe):  # a path, not the YAML text itself
            source = f"the pipeline {os.fspath(pipe)}"
        pipe = load_pipeline(pipe)
    path = DocumentPath(document_comparison_field=document_comparison_field, rank_by=rank_by)
    extra = {c: dict(v) for c, v in (run_kwargs or {}).items()}
    filled = [(c, s) for c, values in extra.items() for s in values]
    # top_k goes to every open top_k input when given; without it each keeps its own default.
    sockets = find_sockets(pipe, query=query_input, output=output, source=source, naming=REPLAY_NAMING, filled=filled)
    runner = QueryRunner(pipe, sockets, source=source, extra_inputs=extra)
    texts = feedback.query_text()
    judged = feedback.judgments["query"].unique(maintain_order=True).to_list()
    qids = list(queries) if queries is not None else judged
    for qid in qids:
        if qid not in texts:
            raise FeedbackError(f"query {qid!r} is not in the log")
    retrieved = list(runner.rankings([texts[q] for q in qids], top_k))
    results = path.rankings(retrieved, qids)
    # rank_by="order" gives ranked lists: as a dict they are the scores n, n - 1, ..., 1 per query.
    return results if isinstance(results, dict) else results.data


__all__ = ["document_id_target", "gold_documents", "replay_pipeline"]
