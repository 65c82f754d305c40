"""The dense path of a BEIR run: the corpus embedded and indexed as a bounded pipeline, and the queries
ranked in batches without a Document per hit.

**Indexing** (:class:`StreamedIndexing`): when the indexing pipeline is one SentenceTransformers document
embedder feeding ``DocumentWriter``\\ s into this package's stores (``FaissDocumentStore``, and
``BM25sDocumentStore`` for ``hybrid``), as the built-in ``dense`` and ``hybrid`` are, the corpus goes
through three stages that run at once, each batch of documents handed on through queues of two batches:

1. a thread makes the next batches' texts (exactly the texts the embedder would make) and reads their
   vectors from the embedding cache when they are there;
2. this thread embeds a batch with the model (``SentenceTransformer.encode``; torch and the tokenizer
   release the GIL while they compute): on a GPU the batches' vectors stay on the device until the whole
   call is done, so tokenizing the next batch overlaps the device's work on this one; several devices
   embed in sentence-transformers' multi-process pool, started once for the corpus;
3. a thread writes the vectors to the cache and into the stores: the FAISS store takes the float32 matrix
   and the documents as a :class:`~haystack_irmetrics.integration.corpus.CorpusTable` (no Document per
   entry, no list of floats per vector), and adds them to its index.

The embedder is called on the same batches of documents with the same parameters as the indexing
pipeline would call it (a cache entry written by one path is read by the other), and the stores receive
the same documents and vectors, so a run gives the same bytes either way (``tests/test_beir_dense_path.py``).
Any other indexing pipeline runs through :meth:`BeirPipelines.index`.

**Retrieval** (:class:`RankedQueries`): when the retrieval pipeline is a SentenceTransformers text embedder
feeding a ``FaissEmbeddingRetriever`` (the built-in ``dense``), each batch of queries is embedded in one
call (through the cache) and searched in one FAISS call, and each query's ranked corpus ids and scores are
read from the result arrays: what the pipeline's Documents would say, without making them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import PipelineError

if TYPE_CHECKING:  # pragma: no cover
    from haystack import Document

_DOC_EMBEDDER = "SentenceTransformersDocumentEmbedder"
_TEXT_EMBEDDER = "SentenceTransformersTextEmbedder"
_FAISS_STORE = "haystack_irmetrics.integration.stores.faiss_store.FaissDocumentStore"
_BM25S_STORE = "haystack_irmetrics.integration.stores.bm25s_store.BM25sDocumentStore"
_FAISS_RETRIEVER = "haystack_irmetrics.integration.stores.faiss_store.FaissEmbeddingRetriever"
#: Batches waiting between two stages: bounds the texts and vectors held at once.
_QUEUED = 2
_DONE = object()


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        import ctypes

        return ctypes.CDLL(None).malloc_trim  # glibc's; other C libraries lack it
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def release_freed() -> None:
    """Hand memory freed since the last call back to the system (glibc's ``malloc_trim``; nothing elsewhere).

    Each batch frees arrays of tens of MB from several threads; glibc keeps such blocks in per-thread heaps
    once its adaptive mmap threshold has grown past them, and the process's resident size then climbs by
    about one embedding matrix over a corpus (measured in ``benchmarks/gpu_dense.md``)."""
    if _TRIM is not None:
        _TRIM(0)


def _qualified(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def embed_kwargs(embedder: Any) -> dict[str, Any]:
    """What a SentenceTransformers document embedder's ``run`` passes to its backend's ``embed`` (the
    embedding cache keys a batch by these, less the progress bar)."""
    return {
        "batch_size": embedder.batch_size,
        "show_progress_bar": False,
        "normalize_embeddings": embedder.normalize_embeddings,
        "precision": embedder.precision,
        "quantization_ranges": embedder.quantization_ranges,
        **(embedder.encode_kwargs or {}),
    }


def document_texts(embedder: Any, documents: Sequence[Document], start: int, stop: int) -> list[str]:
    """The texts a SentenceTransformers document embedder embeds for ``documents[start:stop]``: its prefix,
    the meta fields it embeds and the content, joined by its separator, and its suffix."""
    prefix, suffix, fields = embedder.prefix, embedder.suffix, embedder.meta_fields_to_embed
    contents = getattr(documents, "contents", None)
    if not fields and contents is not None:  # a CorpusTable: no Document made
        texts = contents(start, stop)
    else:
        texts = []
        for doc in documents[start:stop]:
            values = [str(doc.meta[k]) for k in fields if k in doc.meta and doc.meta[k] is not None]
            texts.append(embedder.embedding_separator.join([*values, doc.content or ""]))
    return [prefix + text + suffix for text in texts] if prefix or suffix else texts


@dataclass
class _Writer:
    store: Any
    policy: Any
    vectors: bool  # the FAISS store: it takes the matrix; a bm25s store takes the documents alone


class _Stages:
    """The two bounded queues between a streamed indexing's stages (texts prepared, vectors embedded), and the
    stop every stage watches: a stage that fails records its error and stops the others."""

    def __init__(self) -> None:
        self.prepared: queue.Queue = queue.Queue(_QUEUED)
        self.embedded: queue.Queue = queue.Queue(_QUEUED)
        self.failed: list[BaseException] = []
        self.stop = threading.Event()

    def put(self, q: queue.Queue, item: Any) -> bool:
        while not self.stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def get(self, q: queue.Queue) -> Any:
        while not self.stop.is_set():
            try:
                return q.get(timeout=0.1)
            except queue.Empty:
                continue
        return _DONE

    def guarded(self, work: Callable[[], None]) -> Callable[[], None]:
        def body() -> None:
            try:
                work()
            except BaseException as e:  # handed to the embedding thread, which raises it
                self.failed.append(e)
                self.stop.set()

        return body


@dataclass
class StreamedIndexing:
    """The corpus embedded, cached and indexed as a bounded pipeline (see the module's docstring).

    :ivar embedder: the SentenceTransformers document embedder (its backend: the caching one, or the model's).
    :ivar writers: the stores it feeds, with their writers' duplicate policies.
    :ivar source: the pipeline's name in messages.
    """

    embedder: Any
    writers: list[_Writer]
    source: str
    _pool: Any = field(default=None, repr=False)

    @classmethod
    def plan(cls, pipes: Any) -> StreamedIndexing | None:
        """The streamed indexing of a :class:`~haystack_irmetrics.beir.pipelines.BeirPipelines`' indexing
        pipeline, or None when only the pipeline runs it
        faithfully (other components, other stores, quantized vectors, direct runs switched off)."""
        graph = pipes.indexing.graph
        embedders = [n for n in graph.nodes if type(pipes.indexing.get_component(n)).__name__ == _DOC_EMBEDDER]
        if not pipes.direct_run or len(embedders) != 1 or pipes.document_inputs != [(embedders[0], "documents")]:
            return None
        embedder = pipes.indexing.get_component(embedders[0])
        if embedder.precision != "float32" or embedder.quantization_ranges is not None:
            return None  # quantized vectors: the pipeline's own path
        writers = []
        for name in graph.nodes:
            if name == embedders[0]:
                continue
            comp = pipes.indexing.get_component(name)
            store = getattr(comp, "document_store", None)
            edges = [(d["from_socket"].name, d["to_socket"].name) for *_, d in graph.in_edges(name, data=True)]
            if type(comp).__name__ != "DocumentWriter" or edges != [("documents", "documents")]:
                return None
            if any(True for _ in graph.successors(name)) or _qualified(store) not in (_FAISS_STORE, _BM25S_STORE):
                return None
            writers.append(_Writer(store, comp.policy, _qualified(store) == _FAISS_STORE))
        if not writers:
            return None
        return cls(embedder, writers, pipes.source)

    def run(self, documents: Sequence[Document], chunk: int, update: Callable[[int], None]) -> None:
        """Embed and write ``documents``, ``chunk`` at a time (each one call of the embedder, as the indexing
        pipeline is called); ``update(n)`` is called as ``n`` more documents are embedded.

        :raises PipelineError: naming the pipeline, when the model or a store fails.
        """
        from .cache import CachingEmbeddingBackend

        backend = self.embedder.embedding_backend
        cache = backend if isinstance(backend, CachingEmbeddingBackend) else None
        kwargs = embed_kwargs(self.embedder)
        spans = [(s, min(s + chunk, len(documents))) for s in range(0, len(documents), chunk)]
        stages = _Stages()

        def prepare() -> None:
            for start, end in spans:
                texts = document_texts(self.embedder, documents, start, end)
                path, cached = cache.lookup(texts, kwargs) if cache is not None else (None, None)
                if not stages.put(stages.prepared, (start, end, texts, path, cached)):
                    return
            stages.put(stages.prepared, _DONE)

        def write() -> None:
            while (item := stages.get(stages.embedded)) is not _DONE:
                start, end, vectors, path = item
                if path is not None:
                    vectors = cache.keep(path, vectors)
                self._write(documents[start:end], vectors)
                del vectors
                release_freed()

        threads = [threading.Thread(target=stages.guarded(w), name=f"irmetrics-{w.__name__}") for w in (prepare, write)]
        for thread in threads:
            thread.start()
        try:
            self._embed_prepared(stages, cache, kwargs, update)
        except BaseException:
            stages.stop.set()
            raise
        finally:
            for thread in threads:
                thread.join()
            self._stop_pool()
        if stages.failed:
            error = stages.failed[0]
            if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit
                raise error
            raise PipelineError(f"the indexing pipeline of {self.source} failed: {error}") from error

    def _embed_prepared(
        self, stages: _Stages, cache: Any, kwargs: dict[str, Any], update: Callable[[int], None]
    ) -> None:
        """The embedding stage, on the calling thread: each prepared batch embedded, or its cached vectors taken,
        and handed to the writing thread."""
        while (item := stages.get(stages.prepared)) is not _DONE:
            start, end, texts, path, cached = item
            if cached is not None:
                vectors, path = cached, None
                if cache is not None:
                    cache.hits += 1
                update(end - start)
            else:
                vectors = self._embed(texts, kwargs, update)
                if cache is not None:
                    cache.misses += 1
            if not stages.put(stages.embedded, (start, end, vectors, path)):
                break
        stages.put(stages.embedded, _DONE)

    def _write(self, documents: Sequence[Document], vectors: np.ndarray) -> None:
        """One batch into every store (the FAISS store adds it to its index at once)."""
        for writer in self.writers:
            if writer.vectors:
                writer.store.write_vectors(documents, vectors, writer.policy)
                writer.store.build_index()
            else:  # bm25s reads contents; the vectors it would keep unread are left out
                writer.store.write_documents(list(documents), writer.policy)

    def _embed(self, texts: list[str], kwargs: dict[str, Any], update: Callable[[int], None]) -> np.ndarray:
        """The float32 vectors of ``texts``, as the embedder's backend computes them."""
        from .models import LazyModel

        backend = self.embedder.embedding_backend
        backend = getattr(backend, "inner", backend)  # the caching backend's model
        try:
            loaded = backend.load() if isinstance(backend, LazyModel) else backend
            model = getattr(loaded, "model", None)
            if type(loaded).__name__ != "_SentenceTransformersEmbeddingBackend" or not callable(
                getattr(model, "encode", None)
            ):
                vectors = np.asarray(loaded.embed(texts, **kwargs))
                update(len(texts))
                return vectors.astype(np.float32) if vectors.dtype.kind == "f" else vectors
            return self._encode(model, texts, kwargs, update)
        except Exception as e:  # as the indexing pipeline's own path says it
            raise PipelineError(f"the indexing pipeline of {self.source} failed: {e}") from e

    def _encode(
        self, model: Any, texts: list[str], kwargs: dict[str, Any], update: Callable[[int], None]
    ) -> np.ndarray:
        """``model.encode`` as the Haystack backend calls it, without its list of floats: on several devices
        through one pool for the whole corpus; on a GPU with the vectors left there until the call ends."""
        call = {k: v for k, v in kwargs.items() if k != "quantization_ranges"}
        devices = call.get("device")
        counted = [0]
        if isinstance(devices, list | tuple) and len(devices) > 1:
            del call["device"]
            call["pool"] = self._start_pool(model, list(devices))
            hook = None
        else:
            if getattr(getattr(model, "device", None), "type", "cpu") != "cpu" and "convert_to_tensor" not in call:
                call["convert_to_tensor"] = True  # no copy to the CPU (and wait for the device) per batch

            def seen(module: Any, args: Any, output: Any) -> None:
                n = int(output["sentence_embedding"].shape[0])
                counted[0] += n
                update(n)

            hook = model.register_forward_hook(seen)
        try:
            out = model.encode(texts, **call)
        finally:
            if hook is not None:
                hook.remove()
        update(len(texts) - counted[0])
        if hasattr(out, "cpu"):  # a tensor (on the device)
            out = out.float().cpu().numpy()
        vectors = np.asarray(out)
        return vectors.astype(np.float32, copy=False) if vectors.dtype.kind == "f" else vectors

    def _start_pool(self, model: Any, devices: list[str]) -> Any:
        """One process per device, started at the first batch and stopped when the corpus is embedded."""
        if self._pool is None:
            self._pool = (model, model.start_multi_process_pool(target_devices=devices))
        return self._pool[1]

    def _stop_pool(self) -> None:
        if self._pool is not None:
            (model, pool), self._pool = self._pool, None
            model.stop_multi_process_pool(pool)


@dataclass
class RankedQueries:
    """The built-in ``dense`` retrieval (a SentenceTransformers text embedder feeding a
    ``FaissEmbeddingRetriever``) for a batch of queries at once: their corpus ids and scores, best first."""

    embedder: Any
    retriever: Any
    takes_top_k: bool

    @classmethod
    def plan(cls, pipes: Any) -> RankedQueries | None:
        """The batch ranking of a :class:`~haystack_irmetrics.beir.pipelines.BeirPipelines`' retrieval
        pipeline, or None when its components must run per query."""
        from haystack import tracing

        pipe, sockets = pipes.retrieval, pipes.sockets
        names = list(pipe.graph.nodes)
        if not pipes.direct_run or tracing.is_tracing_enabled() or len(names) != 2:
            return None
        by_type = {type(pipe.get_component(n)).__name__: n for n in names}
        embedder = by_type.get(_TEXT_EMBEDDER)
        retriever = next((n for n in names if n != embedder), None)
        if embedder is None or retriever is None or _qualified(pipe.get_component(retriever)) != _FAISS_RETRIEVER:
            return None
        edges = [(d["from_socket"].name, d["to_socket"].name) for *_, d in pipe.graph.edges(data=True)]
        if edges != [("embedding", "query_embedding")] or list(pipe.graph.successors(embedder)) != [retriever]:
            return None
        if list(sockets.query) != [(embedder, "text")] or sockets.output != (retriever, "documents"):
            return None
        if not set(sockets.top_k) <= {(retriever, "top_k")}:
            return None
        return cls(pipe.get_component(embedder), pipe.get_component(retriever), bool(sockets.top_k))

    def rank(self, queries: list[str], top_k: int | None) -> list[tuple[list[str], list[float]]] | None:
        """Each query's corpus ids (``meta["beir_id"]``) and scores, best first, as the pipeline would return
        them; None when a stored document has no ``beir_id`` (the pipeline's Documents then say which)."""
        from ..integration.stores.common import check_top_k
        from . import cache

        own = top_k is None or not self.takes_top_k
        k = self.retriever.top_k if own else check_top_k(top_k, "FaissEmbeddingRetriever")
        store = self.retriever.document_store
        column = store.meta_column("beir_id")
        if any(cid is None for cid in column):
            return None
        vectors = cache.embed_queries_in_batches(self.embedder, queries)
        positions, scores = store.search(vectors, k)
        ids = np.asarray(column, dtype=object)
        return [(ids[row].tolist(), values.tolist()) for row, values in zip(positions, scores)]


__all__ = ["RankedQueries", "StreamedIndexing", "document_texts", "embed_kwargs", "release_freed"]
