"""Exact vector search through FAISS, as a Haystack document store and embedding retriever component.

:class:`FaissDocumentStore` keeps Haystack :class:`~haystack.Document` objects, as
``InMemoryDocumentStore`` does, and their embeddings in a `FAISS <https://github.com/facebookresearch/faiss>`_
``IndexFlatIP`` (faiss-cpu): exact search, every document scored, as BEIR's own ``FlatIPFaissSearch``
and ``DenseRetrievalExactSearch`` do. ``similarity="cosine"`` (the default) L2-normalises the stored
and the query vectors first; ``"dot_product"`` scores the raw inner product.

:class:`FaissEmbeddingRetriever` is the Haystack component that queries it (``to_dict``/``from_dict``
like every Haystack retriever; ``pipelines/beir_dense.yaml`` uses both with Haystack's
``DocumentWriter`` and the SentenceTransformers embedders).

Why not an integration's store: ``faiss-haystack`` pins ``numpy<2``, and the stores that go through a
client API (Qdrant's local mode, Chroma, Milvus Lite) spend 30-1,300 ms a query building a thousand
result objects; docs/beir.md ("Engines") has the measurements. Here a hit is a shallow copy of the
stored Document with its score, and queries embedded together are searched together (:meth:`prefetch`:
one matrix product instead of one pass over the corpus per query).

Stored Documents are kept without their embedding (the vectors live in the FAISS index once);
``return_embedding=True`` returns them (the normalised vectors for ``"cosine"``). Filters are not supported.
faiss-cpu (the ``dense`` extra) is imported when the first index is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from typing import Any

import numpy as np
from haystack import Document, component, default_to_dict
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy

from .._extras import require
from ..errors import PipelineError, shorten
from ._stores import InProcessStore, check_flag, check_top_k, copy_document, retriever_from_dict

#: The similarities :class:`FaissDocumentStore` supports (Haystack's names).
SIMILARITIES = ("cosine", "dot_product")
#: Embeddings read (as float64) per step when documents are written: bounds the float64 copy's memory.
_CHUNK = 8192


class _Index:
    """The documents of one store, their vectors, and once built, the FAISS index."""

    def __init__(self) -> None:
        self.documents: list[Document] = []
        self.positions: dict[str, int] = {}
        #: Rows written since the index was last built, in document order (float32, normalised for cosine).
        self.pending: list[np.ndarray] = []
        self.dim: int | None = None
        #: The ``IndexFlatIP`` holding the rows written before :attr:`pending`.
        self.faiss: Any = None
        #: ``{(query vector bytes, k): (positions, scores)}`` searched in one batch by :meth:`FaissDocumentStore.prefetch`.
        self.prefetched: dict[tuple[bytes, int], tuple[np.ndarray, np.ndarray]] = {}

    def rows(self) -> np.ndarray:
        """Every document's row, in document order."""
        parts = []
        if self.faiss is not None and self.faiss.ntotal:
            parts.append(self.faiss.reconstruct_n(0, self.faiss.ntotal))
        parts.extend(self.pending)
        if not parts:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        return np.concatenate(parts) if len(parts) > 1 else parts[0]


class FaissDocumentStore(InProcessStore):
    """A Haystack document store searched exactly by FAISS (``IndexFlatIP``).

    :param index: name of the index; with ``shared``, stores of the same name share documents.
    :param shared: share the index with every store of the same name in this process.
    :param similarity: ``"cosine"`` (vectors L2-normalised) or ``"dot_product"``.
    :param return_embedding: return each hit's embedding (from the index) with the document.
    :raises PipelineError: on an unknown similarity, or a parameter of the wrong type.

    Cosine normalises each vector in float64 (scaled by its largest value first, so neither
    ``[1e30, 1e30]`` nor ``[1e-25, 0]`` under- or overflows) before it is stored as float32: every
    non-zero vector scores 1.0 against itself; a zero vector scores 0 against everything.
    """

    def __init__(
        self,
        index: str = "default",
        shared: bool = False,
        similarity: str = "cosine",
        return_embedding: bool = False,
    ) -> None:
        if not isinstance(similarity, str) or similarity not in SIMILARITIES:
            raise PipelineError(
                f"FaissDocumentStore: similarity must be one of {SIMILARITIES}, got {shorten(repr(similarity))}"
            )
        self._attach(index, shared, _Index)
        self.similarity = similarity
        self.return_embedding = check_flag(return_embedding, "FaissDocumentStore", "return_embedding")

    def to_dict(self) -> dict[str, Any]:
        """Serialize the store's parameters (not its documents)."""
        return default_to_dict(
            self,
            index=self.index,
            shared=self.shared,
            similarity=self.similarity,
            return_embedding=self.return_embedding,
        )

    def _rows(self, documents: Sequence[Document]) -> np.ndarray:
        """The documents' embeddings as float32 rows (normalised for cosine), checked."""
        idx = self._index
        for doc in documents:
            if doc.embedding is None:
                raise PipelineError(
                    f"FaissDocumentStore: document {doc.id!r} has no embedding; put an embedder before the writer"
                )
        want = idx.dim if idx.dim is not None else _length(documents[0].embedding)
        out = np.empty((len(documents), max(want, 0)), dtype=np.float32)
        for start in range(0, len(documents), _CHUNK):
            part = documents[start : start + _CHUNK]
            rows = _matrix([doc.embedding for doc in part])
            if rows is None or rows.shape[1] != want or want <= 0:
                bad = next((d for d in part if _length(d.embedding) != want), None)
                if bad is None:  # the right length, but not all numbers
                    bad = next(d for d in part if _matrix([d.embedding]) is None)
                    raise PipelineError(f"FaissDocumentStore: document {bad.id!r} has a non-numeric embedding value")
                raise PipelineError(
                    f"FaissDocumentStore: document {bad.id!r} has an embedding of {max(_length(bad.embedding), 0)} "
                    f"dimensions where the index {self.index!r} holds {want}"
                )
            finite = np.isfinite(rows).all(axis=1)
            if not finite.all():
                bad = part[int(np.argmin(finite))]
                raise PipelineError(f"FaissDocumentStore: document {bad.id!r} has a NaN or infinite embedding value")
            chunk = self._normalised(rows)
            fits = np.isfinite(chunk).all(axis=1)
            if not fits.all():
                bad = part[int(np.argmin(fits))]
                raise PipelineError(
                    f"FaissDocumentStore: document {bad.id!r} has an embedding value beyond float32's range "
                    "(over 3.4e38), which FAISS stores"
                )
            out[start : start + len(part)] = chunk
        return out

    def _normalised(self, rows: np.ndarray) -> np.ndarray:
        """Float64 ``rows`` as float32, L2-normalised for cosine.

        The norm is taken in float64 after dividing each row by its largest absolute value: in float32
        the squares of ``[1e30, 1e30]`` overflow and those of ``[1e-25, 0]`` underflow, and such vectors
        would score 0 against themselves. A zero vector stays zero (every score 0): it has no direction.
        """
        if self.similarity != "cosine":
            with np.errstate(over="ignore"):  # a value beyond float32's range: the caller names it
                return rows.astype(np.float32)
        scale = np.abs(rows).max(axis=1, keepdims=True) if rows.shape[1] else np.ones((len(rows), 1))
        scaled = rows / np.where(scale == 0, 1.0, scale)
        norms = np.linalg.norm(scaled, axis=1, keepdims=True)
        return (scaled / np.where(norms == 0, 1.0, norms)).astype(np.float32)

    def write_documents(self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE) -> int:
        """Add ``documents`` (each with an embedding); returns how many were written.

        :raises PipelineError: on a document without an embedding, of another dimension, or with NaN.
        :raises DuplicateDocumentError: on an id already stored, under ``DuplicatePolicy.NONE``/``FAIL``.
        """
        idx = self._index
        keep: dict[str, int] = {}  # id -> position in `documents` of the version written (the last one)
        for i, doc in enumerate(documents):
            if doc.id in idx.positions or doc.id in keep:
                if policy == DuplicatePolicy.SKIP:
                    continue
                if policy != DuplicatePolicy.OVERWRITE:
                    raise DuplicateDocumentError(f"document {doc.id!r} is already in index {self.index!r}")
            keep[doc.id] = i
        if not keep:
            return 0
        chosen = [documents[i] for i in sorted(keep.values())]
        rows = self._rows(chosen)
        idx.dim = rows.shape[1]
        # Kept without the embedding: the vectors live in the index once.
        stored = [copy_document(doc, "embedding", None) for doc in chosen]
        new = np.array([doc.id not in idx.positions for doc in chosen])
        if not new.all():  # an overwrite: the index is rebuilt from every row
            everything = np.array(idx.rows(), copy=True)
            for doc, copy, row in zip(chosen, stored, rows):
                pos = idx.positions.get(doc.id)
                if pos is not None:
                    idx.documents[pos] = copy
                    everything[pos] = row
            idx.faiss, idx.pending = None, [everything]
        for doc, copy in compress(zip(chosen, stored), new):
            idx.positions[doc.id] = len(idx.documents)
            idx.documents.append(copy)
        if new.any():
            idx.pending.append(rows[new])
        idx.prefetched = {}
        return len(chosen)

    def delete_documents(self, document_ids: list[str]) -> None:
        """Remove the documents with these ids."""
        idx = self._index
        drop = {idx.positions[d] for d in document_ids if d in idx.positions}
        if not drop:
            return
        keep = np.array([i for i in range(len(idx.documents)) if i not in drop], dtype=np.int64)
        rows = idx.rows()[keep]
        idx.documents = [idx.documents[i] for i in keep.tolist()]
        idx.positions = {d.id: i for i, d in enumerate(idx.documents)}
        idx.faiss, idx.pending, idx.prefetched = None, [rows] if len(rows) else [], {}

    def delete_all_documents(self) -> None:
        """Empty the store (and free its index)."""
        idx = self._index
        idx.documents, idx.positions, idx.pending, idx.faiss, idx.prefetched, idx.dim = [], {}, [], None, {}, None

    def build_index(self, progress: bool = False) -> None:
        """Move the written vectors into the FAISS index now; otherwise the first query does it.

        :param progress: unused (adding rows to a flat index takes no time worth a bar).
        """
        if self._index.documents:
            self._build()

    def _build(self) -> None:
        idx = self._index
        if idx.faiss is not None and not idx.pending:
            return
        require("faiss", purpose="the FAISS vector search (FaissDocumentStore)", extra="dense")
        import faiss

        if idx.faiss is None:
            idx.faiss = faiss.IndexFlatIP(idx.dim)
        for part in idx.pending:
            idx.faiss.add(np.ascontiguousarray(part, dtype=np.float32))
        idx.pending = []

    def _queries(self, query_embeddings: Sequence[Any]) -> np.ndarray:
        """The query embeddings as one float32 matrix (normalised for cosine), checked."""
        idx = self._index
        q = _matrix(query_embeddings)
        if q is None:
            raise PipelineError("FaissDocumentStore: a query embedding must be a list of numbers")
        if q.shape[1] != idx.dim:
            raise PipelineError(
                f"FaissDocumentStore: query embeddings of shape {q.shape[1:]} for an index of {idx.dim} dimensions"
            )
        if not np.isfinite(q).all():
            raise PipelineError("FaissDocumentStore: a query embedding has a NaN or infinite value")
        q = self._normalised(q)
        if not np.isfinite(q).all():
            raise PipelineError(
                "FaissDocumentStore: a query embedding has a value beyond float32's range (over 3.4e38)"
            )
        return q

    def _search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best positions and scores of each query, best first, ties by document position.

        FAISS leaves the order of tied scores, and which tied documents make the cut at ``k``, to its
        internals (threads, blocks, the number of queries searched together). Here they are fixed: more
        rows are fetched while a tie reaches past the cut, then each row is ordered by score and position.
        """
        import faiss

        index = self._index.faiss
        x = np.ascontiguousarray(queries, dtype=np.float32)
        if k < 1:
            return np.zeros((len(x), 0), dtype=np.int64), np.zeros((len(x), 0), dtype=np.float32)
        fetch = min(k + 1, index.ntotal)
        # One summation order for every search. FAISS scores fewer queries than its
        # `distance_compute_blas_threshold` with its own loop and more with BLAS, and the two can differ in
        # the last bits: BLAS for all keeps a query's scores the same alone or in any batch (a resumed
        # run equals an uninterrupted one), and a batch over a large corpus is one matrix product (15
        # times faster at 1,000,000 documents). The setting is FAISS's global one, restored after the call.
        before = faiss.cvar.distance_compute_blas_threshold
        faiss.cvar.distance_compute_blas_threshold = 1
        try:
            while True:
                scores, positions = index.search(x, fetch)
                if fetch >= index.ntotal or not (scores[:, k - 1] == scores[:, fetch - 1]).any():
                    break
                fetch = min(2 * fetch, index.ntotal)  # a tie runs past what was fetched
        finally:
            faiss.cvar.distance_compute_blas_threshold = before
        order = np.lexsort((positions, -scores), axis=-1)[:, :k]
        return np.take_along_axis(positions, order, -1), np.take_along_axis(scores, order, -1)

    def prefetch(self, query_embeddings: Sequence[Any], top_k: int) -> None:
        """Search ``query_embeddings`` in one FAISS call; the following :meth:`embedding_retrieval` calls
        for the same vectors read the results. A write forgets them."""
        idx = self._index
        check_top_k(top_k, "FaissDocumentStore")
        if not idx.documents or not len(query_embeddings):
            return
        self._build()
        k = min(top_k, len(idx.documents))
        queries = self._queries(query_embeddings)
        positions, scores = self._search(queries, k)
        idx.prefetched = {(q.tobytes(), k): (positions[i], scores[i]) for i, q in enumerate(queries)}

    def embedding_retrieval(
        self, query_embedding: list[float], top_k: int = 10, return_embedding: bool | None = None
    ) -> list[Document]:
        """The ``top_k`` documents most similar to ``query_embedding``, best first, with their scores.

        Tied scores are ordered by when the documents were written (and the first written make the cut
        at ``top_k``): the same for a query searched alone or in any :meth:`prefetch` batch.
        """
        idx = self._index
        check_top_k(top_k, "FaissDocumentStore")
        check_flag(return_embedding, "FaissDocumentStore", "return_embedding", optional=True)
        if not idx.documents:
            return []
        self._build()
        k = min(top_k, len(idx.documents))
        q = self._queries([query_embedding])
        hit = idx.prefetched.pop((q[0].tobytes(), k), None)
        if hit is None:
            positions, scores = self._search(q, k)
            hit = (positions[0], scores[0])
        with_vectors = self.return_embedding if return_embedding is None else return_embedding
        documents = idx.documents
        out = []
        for pos, score in zip(hit[0].tolist(), hit[1].tolist()):
            if pos < 0:  # FAISS pads with -1 when fewer than k rows exist
                break
            doc = copy_document(documents[pos], "score", score)
            if with_vectors:
                doc.__dict__["embedding"] = idx.faiss.reconstruct(pos).tolist()
            out.append(doc)
        return out


@component
class FaissEmbeddingRetriever:
    """Retrieves the documents of a :class:`FaissDocumentStore` most similar to a query embedding.

    :param document_store: the store to query.
    :param top_k: documents returned per query.
    :param return_embedding: return the documents' embeddings (default: the store's setting).
    :raises PipelineError: if ``document_store`` is not a :class:`FaissDocumentStore`, ``top_k`` is not a
        whole number >= 1 or ``return_embedding`` not a bool or None.
    """

    def __init__(
        self, document_store: FaissDocumentStore, top_k: int = 10, return_embedding: bool | None = None
    ) -> None:
        if not isinstance(document_store, FaissDocumentStore):
            raise PipelineError("FaissEmbeddingRetriever needs a FaissDocumentStore")
        self.document_store = document_store
        self.top_k = check_top_k(top_k, "FaissEmbeddingRetriever")
        self.return_embedding = check_flag(
            return_embedding, "FaissEmbeddingRetriever", "return_embedding", optional=True
        )

    def to_dict(self) -> dict[str, Any]:
        """Serialize the retriever and its store's parameters."""
        return default_to_dict(
            self, document_store=self.document_store.to_dict(), top_k=self.top_k, return_embedding=self.return_embedding
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaissEmbeddingRetriever:
        """Build a retriever (and its store) from :meth:`to_dict`'s output."""
        return retriever_from_dict(cls, FaissDocumentStore, data)

    def prefetch_embeddings(self, query_embeddings: Sequence[Any], top_k: int | None = None) -> None:
        """Search query embeddings in one batch before they are run one by one (:meth:`FaissDocumentStore.prefetch`)."""
        k = self.top_k if top_k is None else check_top_k(top_k, "FaissEmbeddingRetriever")
        self.document_store.prefetch(query_embeddings, k)

    @component.output_types(documents=list[Document])
    def run(self, query_embedding: list[float], top_k: int | None = None) -> dict[str, list[Document]]:
        """The best ``top_k`` documents for ``query_embedding``, best first."""
        k = self.top_k if top_k is None else check_top_k(top_k, "FaissEmbeddingRetriever")
        return {"documents": self.document_store.embedding_retrieval(query_embedding, k, self.return_embedding)}


def _length(embedding: Any) -> int:
    """How many values ``embedding`` holds (-1 for what has no length)."""
    try:
        return len(embedding)
    except TypeError:
        return -1


def _matrix(embeddings: Any) -> np.ndarray | None:
    """``embeddings`` as a 2-D float64 matrix (one row per vector), or None if they are ragged or not numbers."""
    try:
        rows = np.array(embeddings, dtype=np.float64, ndmin=2)
    except (TypeError, ValueError, OverflowError):
        return None
    return rows if rows.ndim == 2 else None


__all__ = ["SIMILARITIES", "FaissDocumentStore", "FaissEmbeddingRetriever"]
