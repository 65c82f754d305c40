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

FAISS only proposes the candidates: the last bits of its scores depend on how many queries one BLAS call
holds (and on the CPU's kernel), so each candidate's score is computed again from its (query, document)
pair alone (:func:`_pair_scores`), the ranking cut at ``top_k`` from those scores, and the candidates
fetched again, more of them, while a document FAISS left out could still reach the cut
(:meth:`FaissDocumentStore._search`). A query gets the same ids and scores, bit for bit, alone or in
any batch.

Stored Documents are kept without their embedding (the vectors live in the FAISS index once);
``return_embedding=True`` returns them (the normalised vectors for ``"cosine"``). Filters are not supported.
faiss-cpu (the ``dense`` extra) is imported when the first index is built.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import replace
from itertools import compress
from typing import Any

import numpy as np
from haystack import Document, component, default_to_dict
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy

from ..._extras import require
from ...checks import choice
from ...errors import PipelineError
from .common import InProcessStore, check_flag, check_top_k, copy_document, retriever_from_dict

#: The similarities :class:`FaissDocumentStore` supports (Haystack's names).
SIMILARITIES = ("cosine", "dot_product")
#: Embeddings read (as float64) per step when documents are written: bounds the float64 copy's memory.
_CHUNK = 8192
#: Candidates FAISS proposes beyond ``top_k``: ``_MARGIN + top_k // 32`` (more are fetched when needed).
_MARGIN = 16
#: Float64 products held per step of :func:`_pair_scores` (2 MB): bounds its memory.
_PRODUCTS = 1 << 18
#: Float32's unit roundoff.
_U32 = 2.0**-24


class _Stored(Sequence[Document]):
    """The documents of a store in writing order, as parts: lists of stored Documents, or tables that make
    each Document when it is read (:class:`~haystack_irmetrics.integration.corpus.CorpusTable`, written by
    :meth:`FaissDocumentStore.write_vectors`). A Document replaced in place is kept beside them."""

    def __init__(self, documents: Sequence[Document] = ()) -> None:
        self.parts: list[Sequence[Document]] = [list(documents)] if len(documents) else []
        self.ends: list[int] = [len(documents)] if len(documents) else []
        self.replaced: dict[int, Document] = {}
        self._columns: dict[str, list[Any]] = {}

    def __len__(self) -> int:
        return self.ends[-1] if self.ends else 0

    def __getitem__(self, pos: Any) -> Any:
        if isinstance(pos, slice):
            return [self[i] for i in range(*pos.indices(len(self)))]
        if pos < 0:
            pos += len(self)
        if pos in self.replaced:
            return self.replaced[pos]
        part = bisect_right(self.ends, pos)
        if part == len(self.ends):
            raise IndexError(pos)
        return self.parts[part][pos - (self.ends[part - 1] if part else 0)]

    def __iter__(self) -> Iterator[Document]:
        for pos in range(len(self)):
            yield self[pos]

    def extend(self, documents: Sequence[Document]) -> None:
        if len(documents):
            self.parts.append(documents)
            self.ends.append(len(self) + len(documents))
            self._columns = {}

    def replace(self, pos: int, document: Document) -> None:
        self.replaced[pos] = document
        self._columns = {}

    def meta_column(self, field: str) -> list[Any]:
        """Each document's ``meta[field]`` (None where there is none), in writing order: a table's own column
        where it has one (``meta_column``), read once per write."""
        column = self._columns.get(field)
        if column is None:
            column = []
            for part in self.parts:
                own = getattr(part, "meta_column", None)
                column.extend(own(field) if own is not None else [(d.meta or {}).get(field) for d in part])
            for pos, doc in self.replaced.items():
                column[pos] = (doc.meta or {}).get(field)
            self._columns[field] = column
        return column


class _Index:
    """The documents of one store, their vectors, and once built, the FAISS index."""

    def __init__(self) -> None:
        self.documents = _Stored()
        self.positions: dict[str, int] = {}
        #: Rows written since the index was last built, in document order (float32, normalised for cosine).
        self.pending: list[np.ndarray] = []
        self.dim: int | None = None
        #: The ``IndexFlatIP`` holding the rows written before :attr:`pending`.
        self.faiss: Any = None
        #: The largest L2 norm of a row in :attr:`faiss` (bounds FAISS's rounding error, see ``_search``).
        self.max_norm = 0.0
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
        choice(similarity, "FaissDocumentStore: similarity", SIMILARITIES, error=PipelineError)
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
                    idx.documents.replace(pos, copy)
                    everything[pos] = row
            idx.faiss, idx.pending = None, [everything]
        added = list(compress(stored, new))
        idx.positions.update(zip((doc.id for doc in added), range(len(idx.documents), len(idx.documents) + len(added))))
        idx.documents.extend(added)
        if new.any():
            idx.pending.append(rows[new])
        idx.prefetched = {}
        return len(chosen)

    def write_vectors(
        self,
        documents: Sequence[Document],
        vectors: np.ndarray,
        policy: DuplicatePolicy = DuplicatePolicy.NONE,
    ) -> int:
        """Add ``documents`` with their embeddings given apart, as one float32 matrix (row ``i`` is document
        ``i``'s): what :meth:`write_documents` does for the same documents carrying these vectors, without a
        list of floats per document. ``documents`` may make each Document when it is read (a
        :class:`~haystack_irmetrics.integration.corpus.CorpusTable`, whose ``ids`` are read as a column): it
        is kept as it is, and read per hit.

        :raises PipelineError: on a matrix of another shape or dimension, or a NaN or infinite value (naming
            the document).
        :raises DuplicateDocumentError: on an id already stored, under ``DuplicatePolicy.NONE``/``FAIL``.
        """
        idx = self._index
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or len(vectors) != len(documents) or vectors.dtype.kind not in "fiu":
            raise PipelineError(
                f"FaissDocumentStore: expected one row of numbers per document ({len(documents)} documents), "
                f"got an array of shape {vectors.shape} and dtype {vectors.dtype}"
            )
        ids = getattr(documents, "ids", None)
        ids = list(ids) if ids is not None else [doc.id for doc in documents]
        if len(set(ids)) < len(ids) or not idx.positions.keys().isdisjoint(ids):
            # duplicates: the policy decides document by document, as write_documents does
            with_vectors = [replace(doc, embedding=row) for doc, row in zip(documents, vectors.tolist())]
            return self.write_documents(with_vectors, policy)
        if not len(ids):
            return 0
        want = idx.dim if idx.dim is not None else vectors.shape[1]
        if vectors.shape[1] != want or want <= 0:
            raise PipelineError(
                f"FaissDocumentStore: document {ids[0]!r} has an embedding of {vectors.shape[1]} dimensions where "
                f"the index {self.index!r} holds {want}"
            )
        rows = np.empty(vectors.shape, dtype=np.float32)
        for start in range(0, len(vectors), _CHUNK):
            part = vectors[start : start + _CHUNK].astype(np.float64)
            chunk = self._normalised(part) if np.isfinite(part).all() else None
            fits = np.isfinite(chunk).all(axis=1) if chunk is not None else np.isfinite(part).all(axis=1)
            if chunk is None or not fits.all():
                bad = ids[start + int(np.argmin(fits))]
                what = "an embedding value beyond float32's range (over 3.4e38), which FAISS stores"
                raise PipelineError(
                    f"FaissDocumentStore: document {bad!r} has "
                    f"{'a NaN or infinite embedding value' if chunk is None else what}"
                )
            rows[start : start + len(part)] = chunk
        idx.dim = want
        idx.positions.update(zip(ids, range(len(idx.documents), len(idx.documents) + len(ids))))
        idx.documents.extend(documents)
        idx.pending.append(rows)
        idx.prefetched = {}
        return len(ids)

    def delete_documents(self, document_ids: list[str]) -> None:
        """Remove the documents with these ids."""
        idx = self._index
        drop = {idx.positions[d] for d in document_ids if d in idx.positions}
        if not drop:
            return
        keep = np.array([i for i in range(len(idx.documents)) if i not in drop], dtype=np.int64)
        rows = idx.rows()[keep]
        idx.documents = _Stored([idx.documents[i] for i in keep.tolist()])
        idx.positions = {d.id: i for i, d in enumerate(idx.documents)}
        idx.faiss, idx.pending, idx.prefetched = None, [rows] if len(rows) else [], {}

    def delete_all_documents(self) -> None:
        """Empty the store (and free its index)."""
        idx = self._index
        idx.documents, idx.positions, idx.pending, idx.faiss, idx.prefetched = _Stored(), {}, [], None, {}
        idx.dim = None

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
            idx.faiss, idx.max_norm = faiss.IndexFlatIP(idx.dim), 0.0
        for part in idx.pending:
            part = np.ascontiguousarray(part, dtype=np.float32)
            for start in range(0, len(part), _CHUNK):
                rows = part[start : start + _CHUNK].astype(np.float64)
                idx.max_norm = max(idx.max_norm, float(np.sqrt(np.einsum("ij,ij->i", rows, rows).max())))
            idx.faiss.add(part)
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

        FAISS proposes the ``k + _MARGIN + k // 32`` best candidates of each query by its own scores, whose
        last bits depend on the batch (how many queries one BLAS call holds, the CPU's kernel). Each
        candidate is scored again by :func:`_pair_scores`, a function of the query and the document
        alone; the candidates are ordered by that score, then by position (writing order), and cut at
        ``k``. The cut is certain when the lowest FAISS score of the candidates, plus a bound on the
        rounding error of both scores, is below the ``k``-th final score: every document FAISS left out
        scored at most that lowest score, so its final score is below the cut (not even tied). Queries
        for which it is not (ties or near-ties at the cut, e.g. duplicated documents) are searched again
        with four times more candidates, up to every document (then FAISS is not needed).

        The bound: an inner product of ``d`` float32 terms summed in any order, with or without FMA,
        is off by at most ``gamma_d * sum(|q_i x_i|) <= gamma_d * |q| * |x|`` (``gamma_d = d u / (1 - d u)``,
        ``u = 2**-24``; Higham, *Accuracy and Stability of Numerical Algorithms*, (3.5)); the final score
        by at most ``u * |q| * |x|`` and a float64 error far below it. ``|x|`` is bounded by the largest
        row norm, the tolerance is twice the sum (plus ``d * 2**-120`` for underflow). A query whose
        scores could overflow float32 inside FAISS is scored against every document.
        """
        import faiss

        idx = self._index
        index = idx.faiss
        x = np.ascontiguousarray(queries, dtype=np.float32)
        n, d = index.ntotal, index.d
        positions = np.zeros((len(x), k), dtype=np.int64)
        scores = np.zeros((len(x), k), dtype=np.float32)
        if k < 1 or not len(x):
            return positions, scores
        # The stored rows, read in place (no copy; valid until the index changes, i.e. during this call).
        rows = faiss.rev_swig_ptr(index.get_xb(), n * d).reshape(n, d)
        norms = np.sqrt(np.einsum("ij,ij->i", x.astype(np.float64), x.astype(np.float64)))
        gamma = d * _U32 / (1 - d * _U32) if d * _U32 < 0.5 else np.inf
        tolerance = 2 * (gamma + _U32) * norms * idx.max_norm + d * 2.0**-120
        # FAISS's partial sums stay below |q| * max|x| (1 + gamma): beyond 1e37 they could overflow float32.
        everything = list(np.flatnonzero(~(norms * idx.max_norm < 1e37)))
        todo = np.flatnonzero(norms * idx.max_norm < 1e37)
        fetch = k + _MARGIN + k // 32
        while len(todo) and fetch < n:
            # FAISS's BLAS path for any batch: a batch over a large corpus is one matrix product, 15 times
            # faster than its per-query loop at 1,000,000 documents (which faiss-cpu 1.15 uses below
            # 128,000 queries). The setting is FAISS's global one, restored after the call.
            before = faiss.cvar.distance_compute_blas_threshold
            faiss.cvar.distance_compute_blas_threshold = 1
            try:
                proposed, candidates = index.search(x[todo], fetch)
            finally:
                faiss.cvar.distance_compute_blas_threshold = before
            final = _scores(rows, x[todo], candidates)
            order = np.lexsort((candidates, -final), axis=-1)[:, :k]
            best, best_scores = np.take_along_axis(candidates, order, -1), np.take_along_axis(final, order, -1)
            certain = proposed.min(axis=1).astype(np.float64) + tolerance[todo] < best_scores[:, -1]
            certain &= (candidates >= 0).all(axis=1)  # FAISS pads with -1 (it should not here)
            positions[todo[certain]], scores[todo[certain]] = best[certain], best_scores[certain]
            todo, fetch = todo[~certain], 4 * fetch
        everything.extend(todo)
        for i in everything:  # every document a candidate: the exact ranking without FAISS
            final = _scores(rows, x[i : i + 1], np.arange(n)[None, :])[0]
            top = np.lexsort((np.arange(n), -final))[:k]
            positions[i], scores[i] = top, final[top]
        return positions, scores

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

    def search(self, query_embeddings: Any, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        """The best ``top_k`` documents of each query, searched in one batch, as two ``(queries, k)`` arrays
        (``k = min(top_k, documents)``): their positions in writing order and their float32 scores, best
        first; for each query exactly what :meth:`embedding_retrieval` returns as Documents.

        :param query_embeddings: one vector per query (a float matrix, or lists of numbers).
        """
        idx = self._index
        check_top_k(top_k, "FaissDocumentStore")
        if not idx.documents:
            n = len(query_embeddings)
            return np.zeros((n, 0), dtype=np.int64), np.zeros((n, 0), dtype=np.float32)
        self._build()
        return self._search(self._queries(query_embeddings), min(top_k, len(idx.documents)))

    def meta_column(self, field: str) -> list[Any]:
        """Every stored document's ``meta[field]`` in writing order (None where absent): read with
        :meth:`search`'s positions, the hits' fields without a Document per hit."""
        return self._index.documents.meta_column(field)

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


def _scores(rows: np.ndarray, queries: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The float32 score of each ``queries[i]`` against each ``rows[positions[i, j]]`` (:func:`_pair_scores`),
    in steps of at most :data:`_PRODUCTS` products."""
    out = np.empty(positions.shape, dtype=np.float32)
    pairs = max(1, _PRODUCTS // max(rows.shape[1], 1))  # (query, row) pairs per step
    m = positions.shape[1]
    if m <= pairs:
        step = pairs // m
        for s in range(0, len(queries), step):
            out[s : s + step] = _pair_scores(rows[positions[s : s + step]], queries[s : s + step, None, :])
    else:
        for i, query in enumerate(queries):
            for s in range(0, m, pairs):
                out[i, s : s + pairs] = _pair_scores(rows[positions[i, s : s + pairs]], query)
    return out


def _pair_scores(rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``sum(rows[..., j] * queries[..., j])`` over the last axis, as float32: each value a function of its
    two vectors alone, bit for bit, whatever else the arrays hold and however they are shaped.

    Each product is exact in float64 (two 24-bit significands make at most 48 bits); the ``d`` products
    are added by one fixed tree of elementwise float64 additions (the second half of the terms onto the
    first, an odd last term carried, down to one), and the sum is rounded once to float32: the float32
    nearest the exact inner product (but when that lies within about ``d * 2**-53`` of the sum's magnitude
    from a float32 tie). Elementwise numpy additions and multiplications are IEEE operations per element
    (no BLAS, no reduction whose order depends on the array's length or alignment).
    """
    p = np.multiply(rows, queries, dtype=np.float64)  # dtype: a float32 product would be rounded
    w = p.shape[-1]
    while w > 1:
        h = w // 2
        np.add(p[..., :h], p[..., h : 2 * h], out=p[..., :h])
        if w % 2:
            p[..., h] = p[..., w - 1]
            h += 1
        w = h
    with np.errstate(over="ignore"):  # dot_product beyond float32's range: +-inf, as FAISS gives
        return p[..., 0].astype(np.float32)


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
