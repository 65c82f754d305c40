"""Queries -> ranked Documents through any Haystack pipeline: the one loop every caller runs.

:class:`QueryRunner` holds a pipeline and its :class:`~.sockets.PipelineSockets` and runs one query at a
time (:meth:`QueryRunner.run`) or a sequence of them in batches (:meth:`QueryRunner.rankings`): before a
batch runs query by query, every component fed the query directly that can work on many queries at
once (a ``prefetch(queries, top_k)`` method, as :class:`~.stores.bm25s_store.BM25sRetriever` has) gets
the whole batch (``irmetrics beir`` also embeds each batch through its embedding cache first, then runs
the queries with :meth:`QueryRunner.run`). A pipeline whose components form one chain runs them directly
(:class:`~.fastpath.DirectRun`, the same outputs without ``Pipeline.run``'s bookkeeping) unless tracing
is on; anything else goes through ``Pipeline.run``.

Errors are :class:`~haystack_irmetrics.errors.PipelineError` naming the pipeline and the query: the
pipeline failing, not producing its output, or producing something other than a list of Documents.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import PipelineError
from .fastpath import DirectRun, NotProduced
from .sockets import PipelineSockets

if TYPE_CHECKING:  # pragma: no cover
    from haystack import Document, Pipeline

#: Queries worked on together (prefetched, embedded) before they run one by one.
QUERY_BATCH = 1000


class QueryRunner:
    """Run queries through ``pipeline`` and read the ranked Documents of its output socket.

    :param pipeline: a :class:`haystack.Pipeline`.
    :param sockets: where the query and ``top_k`` go and where the documents come out
        (:func:`~.sockets.find_sockets`).
    :param source: what the pipeline is called in messages.
    :param extra_inputs: inputs added to every run (``{component: {socket: value}}``).
    :param direct_run: run a chain of components directly (``False``: always ``Pipeline.run``).
    :param output_hint: how to name the output, appended when the output is not a list of Documents.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        sockets: PipelineSockets,
        *,
        source: str = "the pipeline",
        extra_inputs: Mapping[str, Mapping[str, Any]] | None = None,
        direct_run: bool = True,
        output_hint: str = "",
    ) -> None:
        self.pipeline = pipeline
        self.sockets = sockets
        self.source = source
        self.extra_inputs = {c: dict(v) for c, v in (extra_inputs or {}).items()}
        self.direct_run = direct_run
        self.output_hint = output_hint
        #: The planned DirectRun; None until planned, False when the pipeline is not a chain.
        self._direct: Any = None

    def run(self, query: str, top_k: int | None = None) -> list[Document]:
        """The ranked documents of one query."""
        data = self.sockets.inputs(query, top_k, self.extra_inputs)
        comp, socket = self.sockets.output
        direct = self._direct_plan()
        try:
            if direct is not None:
                try:
                    out = {comp: direct.run(data)}
                except NotProduced:  # a router-like component: Pipeline.run decides what runs next, from now on
                    self._direct = False
                    out = self._pipeline_run(data)
            else:
                out = self._pipeline_run(data)
        except Exception as e:
            raise PipelineError(f"the retrieval pipeline of {self.source} failed on query {query!r}: {e}") from e
        try:
            docs = out[comp][socket]
        except (KeyError, TypeError):
            raise PipelineError(
                f"the retrieval pipeline of {self.source} produced no {comp}.{socket} for query {query!r}"
            ) from None
        if not isinstance(docs, list | tuple):
            raise PipelineError(
                f"{self.source} returned {type(docs).__name__} for query {query!r} where a list of Documents was "
                f"expected{': ' + self.output_hint if self.output_hint else ''}"
            )
        return list(docs)

    def ranked_meta(self, key: str, query: str, top_k: int | None = None) -> tuple[list, list] | None:
        """One query's ranked documents as two lists, each one's ``meta.get(key)`` and its score, without a
        Document per hit, where the pipeline's one component answers so (:meth:`.fastpath.DirectRun.ranked_meta`:
        a ``ranked_meta`` method, as :class:`~.stores.bm25s_store.BM25sRetriever` has) and would be called
        directly; None otherwise (:meth:`run` then gives the Documents)."""
        direct = self._direct_plan()
        if direct is None:
            return None
        data = self.sockets.inputs(query, top_k, self.extra_inputs)
        try:
            return direct.ranked_meta(data, self.sockets.output[1], key)
        except Exception as e:
            raise PipelineError(f"the retrieval pipeline of {self.source} failed on query {query!r}: {e}") from e

    def prefetch(self, queries: Sequence[str], top_k: int | None) -> None:
        """Hand ``queries`` to every component fed the query directly that has ``prefetch(queries, top_k)``."""
        fed = {comp for comp, _ in self.sockets.query}
        for name, comp in self.pipeline.walk():
            if name in fed and callable(getattr(comp, "prefetch", None)):
                comp.prefetch(list(queries), top_k)

    def rankings(
        self,
        queries: Sequence[str],
        top_k: int | None = None,
        *,
        batch_size: int = QUERY_BATCH,
    ) -> Iterator[list[Document]]:
        """The ranked documents of each query, in order, worked on ``batch_size`` queries at a time: each
        batch is handed to :meth:`prefetch` first."""
        for start in range(0, len(queries), batch_size):
            batch = list(queries[start : start + batch_size])
            self.prefetch(batch, top_k)
            for query in batch:
                yield self.run(query, top_k)

    def _pipeline_run(self, data: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return self.pipeline.run(data, include_outputs_from=self.sockets.include_outputs_from)

    def _direct_plan(self) -> DirectRun | None:
        """The :class:`DirectRun` of the pipeline, when it has one and it may be used for this query."""
        from haystack import tracing

        if not self.direct_run or tracing.is_tracing_enabled():  # spans are Pipeline.run's
            return None
        if self._direct is None:
            self.pipeline.warm_up()  # as Pipeline.run does before its first query
            fed = [*self.sockets.query, *self.sockets.top_k, *_sockets_of(self.extra_inputs)]
            self._direct = DirectRun.plan(self.pipeline, fed, self.sockets.output) or False
        return self._direct or None


def _sockets_of(data: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [(comp, socket) for comp, values in data.items() for socket in values]


__all__ = ["QUERY_BATCH", "QueryRunner"]
