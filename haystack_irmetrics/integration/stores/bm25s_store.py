"""Lucene's BM25 through bm25s, as a Haystack document store and retriever component.

:class:`BM25sDocumentStore` keeps Haystack :class:`~haystack.Document` objects (without their
embeddings), as ``InMemoryDocumentStore`` does, and scores them with `bm25s <https://github.com/xhluca/bm25s>`_
(sparse matrices, ``method="lucene"``), analysed as Lucene's ``EnglishAnalyzer`` (Anserini's BEIR
runs): lowercased word tokens (``\\w+``), Lucene's 33 English stop words, the Porter stemmer
(PyStemmer). Defaults are Anserini's BEIR parameters, ``k1 = 0.9``, ``b = 0.4``. On SciFact this
gives nDCG@10 0.67689 (Anserini's BM25 flat: 0.6789).

:class:`BM25sRetriever` is the Haystack component that queries it (``to_dict``/``from_dict`` like
every Haystack retriever; ``pipelines/beir_bm25.yaml`` uses both with Haystack's ``DocumentWriter``).

The index is built on the first query after a write. With ``cache=True`` (the default) a built index
is saved under ``$IRMETRICS_CACHE_DIR/bm25s/<key>/`` (default ``~/.cache/haystack_irmetrics``), keyed
by the documents' ids and contents and the analysis and BM25 parameters, and loaded instead of built
the next time the same documents are indexed (:mod:`haystack_irmetrics.integration.cache_entry`).
bm25s and PyStemmer (the ``bm25`` extra) are imported when the first index is built.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from haystack import Document, component, default_to_dict
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy

from ..._extras import require
from ...errors import PipelineError, shorten
from ..cache_entry import add_text, cache_root, load_bm25s_index, read_entry, write_entry
from . import BM25S_HINT
from .common import InProcessStore, check_flag, check_number, check_top_k, copy_document, retriever_from_dict

#: Lucene's ``\w+`` word tokens (bm25s' default, ``\w\w+``, drops one-character tokens).
TOKEN_PATTERN = r"(?u)\b\w+\b"


class _Index:
    """The documents of one store and, once built, their bm25s index."""

    def __init__(self) -> None:
        self.documents: list[Document] = []
        self.positions: dict[str, int] = {}
        self.model: Any = None
        self.tokenizer: Any = None
        self.from_cache = False
        #: ``{(query, k): (positions, scores)}`` (numpy rows) retrieved in one batch by :meth:`BM25sDocumentStore.prefetch`.
        self.prefetched: dict[tuple[str, int], tuple[Any, Any]] = {}
        #: Queries answered with no document because none of their terms is in the index (unknown words or
        #: stop words only), counted per :meth:`BM25sDocumentStore.bm25_retrieval` call.
        self.queries_without_terms = 0
        #: ``{key: [document.meta.get(key) for each stored document]}``, read once per set of documents.
        self.meta_columns: dict[str, list[Any]] = {}


class BM25sDocumentStore(InProcessStore):
    """A Haystack document store scored by bm25s with Lucene's BM25 and English analysis.

    :param index: name of the index; with ``shared``, stores of the same name share documents.
    :param shared: share the index with every store of the same name in this process.
    :param k1: BM25's term-frequency saturation.
    :param b: BM25's length normalisation.
    :param stemmer: a PyStemmer algorithm (``"porter"``, Lucene's; ``"english"``, Snowball), or ``None``.
    :param stopwords: ``"en"`` (Lucene's 33 English stop words), a list of words, or ``None``.
    :param cache: save built indexes under ``$IRMETRICS_CACHE_DIR/bm25s`` and reuse them.
    :raises PipelineError: on a parameter of the wrong type or out of range (``k1`` >= 0, ``b`` in [0, 1],
        finite), naming it.

    Only documents that contain at least one query term are returned, as Lucene does: a query whose
    every word is unknown to the index or a stop word returns no document
    (:attr:`queries_without_terms` counts them).
    """

    def __init__(
        self,
        index: str = "default",
        shared: bool = False,
        k1: float = 0.9,
        b: float = 0.4,
        stemmer: str | None = "porter",
        stopwords: str | list[str] | None = "en",
        cache: bool = True,
    ) -> None:
        self._attach(index, shared, _Index)
        self.k1 = check_number(k1, "BM25sDocumentStore", "k1", 0)
        self.b = check_number(b, "BM25sDocumentStore", "b", 0, 1)
        self.stemmer = _check_stemmer(stemmer)
        self.stopwords = _check_stopwords(stopwords)
        self.cache = check_flag(cache, "BM25sDocumentStore", "cache")

    def to_dict(self) -> dict[str, Any]:
        """Serialize the store's parameters (not its documents)."""
        return default_to_dict(
            self,
            index=self.index,
            shared=self.shared,
            k1=self.k1,
            b=self.b,
            stemmer=self.stemmer,
            stopwords=self.stopwords,
            cache=self.cache,
        )

    def write_documents(self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE) -> int:
        """Add ``documents``; the index is rebuilt on the next query. Returns how many were written.

        Documents are kept without their embedding (BM25 reads the text only); the caller's are not changed.
        """
        idx = self._index
        written = 0
        for doc in documents:
            if doc.embedding is not None:  # BM25 reads text only: a copy without the vector (memory, and
                doc = copy_document(doc, "embedding", None)  # a hybrid pipeline deep-copies each hit)
            pos = idx.positions.get(doc.id)
            if pos is not None:
                if policy == DuplicatePolicy.SKIP:
                    continue
                if policy != DuplicatePolicy.OVERWRITE:
                    raise DuplicateDocumentError(f"document {doc.id!r} is already in index {self.index!r}")
                idx.documents[pos] = doc
            else:
                idx.positions[doc.id] = len(idx.documents)
                idx.documents.append(doc)
            written += 1
        if written:
            idx.model = None
            idx.prefetched, idx.meta_columns = {}, {}
        return written

    def delete_documents(self, document_ids: list[str]) -> None:
        """Remove the documents with these ids."""
        drop = set(document_ids)
        idx = self._index
        idx.documents = [d for d in idx.documents if d.id not in drop]
        idx.positions = {d.id: i for i, d in enumerate(idx.documents)}
        idx.model, idx.prefetched, idx.meta_columns = None, {}, {}

    def delete_all_documents(self) -> None:
        """Empty the store (and free its index)."""
        idx = self._index
        idx.documents, idx.positions, idx.model, idx.prefetched, idx.meta_columns = [], {}, None, {}, {}

    @property
    def queries_without_terms(self) -> int:
        """How many queries got no document because none of their terms is in the index (unknown words or
        stop words only); shared by the stores of a shared index."""
        return self._index.queries_without_terms

    @property
    def built_from_cache(self) -> bool:
        """Whether the current index was loaded from the cache rather than built."""
        return self._index.model is not None and self._index.from_cache

    def _parameters(self) -> dict[str, Any]:
        return {
            "k1": self.k1,
            "b": self.b,
            "method": "lucene",
            "stemmer": self.stemmer,
            "stopwords": self.stopwords,
            "token_pattern": TOKEN_PATTERN,
        }

    def _tokenizer(self) -> Any:
        import bm25s
        import Stemmer

        # Checked again: at init PyStemmer may have been missing.
        stem = Stemmer.Stemmer(_check_stemmer(self.stemmer)) if self.stemmer else None
        try:
            return bm25s.tokenization.Tokenizer(stemmer=stem, stopwords=self.stopwords or [], splitter=TOKEN_PATTERN)
        except ValueError as e:  # a stop-word language bm25s does not know
            raise PipelineError(f"BM25sDocumentStore: stopwords {shorten(repr(self.stopwords))}: {e}") from None

    def build_index(self, progress: bool = False) -> None:
        """Build (or load from the cache) the bm25s index now; otherwise the first query builds it.

        :param progress: show bm25s' own bars (tokenizing, indexing) while it builds.
        """
        if self._index.documents:
            self._build(progress)

    def _build(self, progress: bool = False) -> None:
        idx = self._index
        if idx.model is not None:
            return
        require("bm25s", "Stemmer", purpose="the bm25s BM25 engine (BM25sDocumentStore)", extra="bm25", hint=BM25S_HINT)
        import bm25s

        texts = [d.content or "" for d in idx.documents]
        key = _index_key(self._parameters(), idx.documents) if self.cache else None
        folder = cache_root() / "bm25s" / key if key else None
        if folder is not None:  # checked (checksum, posting bounds); a damaged entry warns and is rebuilt
            cached = read_entry(folder, lambda path: load_bm25s_index(path / "index", self._tokenizer(), len(texts)))
            if cached is not None:
                idx.model, idx.tokenizer = cached
                idx.from_cache = True
                return
        tokenizer = self._tokenizer()
        tokens = tokenizer.tokenize(texts, return_as="tuple", show_progress=progress)
        model = bm25s.BM25(method="lucene", k1=self.k1, b=self.b)
        model.index(tokens, show_progress=progress)
        idx.model, idx.tokenizer, idx.from_cache = model, tokenizer, False
        if folder is not None:

            def save(tmp):
                model.save(str(tmp / "index"))
                tokenizer.save_vocab(str(tmp / "index"))

            write_entry(folder, save, {"kind": "bm25s", "n_documents": len(texts), **self._parameters()})

    def _search(self, queries: list[str], k: int) -> list[tuple[Any, Any] | None]:
        """Each query's ``k`` best (positions, scores) rows, or None for a query with no indexed term."""
        idx = self._index
        ids = idx.tokenizer.tokenize(queries, update_vocab=False, return_as="ids", show_progress=False)
        # bm25s gives a query without any indexed term the token of empty documents (""), which matches every
        # empty or stop-word-only document: it is dropped (a query word is never "": the tokens are \w+).
        empty = idx.tokenizer.word_to_id.get("")
        ids = [[t for t in terms if t != empty] for terms in ids]
        searched = [i for i, terms in enumerate(ids) if terms]
        out: list[tuple[Any, Any] | None] = [None] * len(queries)
        if searched:
            threads = min(len(searched) // 64, os.cpu_count() or 1)
            # One more than asked: a tie across the cut shows as the (k+1)-th score equal to the k-th.
            wide = min(k + 1, len(idx.documents))
            found, scores = idx.model.retrieve(
                [ids[i] for i in searched], k=wide, show_progress=False, n_threads=threads if threads > 1 else 1
            )
            for row, i in enumerate(searched):
                out[i] = _in_order(idx.model, ids[i], found[row], scores[row], k)
        return out

    def prefetch(self, queries: list[str], top_k: int) -> None:
        """Score ``queries`` in one bm25s call (on every core for large batches); the following
        :meth:`bm25_retrieval` calls for them read the results. A write forgets them."""
        idx = self._index
        check_top_k(top_k, "BM25sDocumentStore")
        if not idx.documents or not queries:
            return
        self._build()
        k = min(top_k, len(idx.documents))
        unique = list(dict.fromkeys(queries))
        idx.prefetched = dict(zip(((q, k) for q in unique), self._search(unique, k)))

    def bm25_retrieval(self, query: str, top_k: int = 10) -> list[Document]:
        """The ``top_k`` best documents for ``query``, best first, with their BM25 scores."""
        positions, scores = self._ranked(query, top_k)
        documents = self._index.documents
        return [copy_document(documents[pos], "score", score) for pos, score in zip(positions, scores)]

    def bm25_ranked_meta(self, key: str, query: str, top_k: int = 10) -> tuple[list[Any], list[float]]:
        """:meth:`bm25_retrieval`'s answer as two lists, without a Document per hit: each document's
        ``meta.get(key)`` (None where its meta has no such key) and its BM25 score."""
        positions, scores = self._ranked(query, top_k)
        idx = self._index
        column = idx.meta_columns.get(key)
        if column is None:
            column = idx.meta_columns[key] = [
                d.meta.get(key) if isinstance(d.meta, dict) else None for d in idx.documents
            ]
        return list(map(column.__getitem__, positions)), scores

    def _ranked(self, query: str, top_k: int) -> tuple[list[int], list[float]]:
        """The store positions and scores of the ``top_k`` best documents for ``query``, best first."""
        idx = self._index
        check_top_k(top_k, "BM25sDocumentStore")
        if not idx.documents:
            return [], []
        self._build()
        k = min(top_k, len(idx.documents))
        key = (query, k)
        hit = idx.prefetched.pop(key) if key in idx.prefetched else self._search([query], k)[0]
        if hit is None:
            idx.queries_without_terms += 1
            return [], []
        # The rows are best first: the first score <= 0 starts the documents without a query term (every BM25
        # term weight is > 0), which Lucene skips.
        without = hit[1] <= 0
        kept = int(without.argmax()) if without.any() else len(without)
        return hit[0][:kept].tolist(), hit[1][:kept].tolist()


def _in_order(model: Any, terms: list[int], found: Any, scores: Any, k: int) -> tuple[Any, Any]:
    """The ``k`` best of bm25s's rows in one order on every machine: score descending, then the document's
    position in the store.

    bm25s orders its top k with numpy's unstable sort, whose SIMD kernels differ between CPUs (AVX-512 or
    AVX2 only) and numpy versions: documents of equal score came back in another order on another machine,
    and BEIR's Hole@k, which keeps the run's order at ties, changed with it. When the rows tie across the cut
    (the (k+1)-th score equals the k-th, and is above 0: documents scored 0 are dropped), which of the tied
    documents make the top k is the sort's choice too, so that query's scores are read whole.
    """
    import numpy as np

    if found.size > k and scores[k] > 0 and scores[k] == scores[k - 1]:
        scores = model.get_scores_from_ids(terms)
        found = np.arange(scores.size)
    order = np.lexsort((found, -scores.astype(np.float64)))[:k]
    return found[order], scores[order]


@component
class BM25sRetriever:
    """Retrieves documents from a :class:`BM25sDocumentStore` by Lucene's BM25 (bm25s).

    :param document_store: the store to query.
    :param top_k: documents returned per query (a whole number >= 1).
    :raises PipelineError: if ``document_store`` is not a :class:`BM25sDocumentStore` or ``top_k`` is not
        a whole number >= 1.
    """

    def __init__(self, document_store: BM25sDocumentStore, top_k: int = 10) -> None:
        if not isinstance(document_store, BM25sDocumentStore):
            raise PipelineError("BM25sRetriever needs a BM25sDocumentStore")
        self.document_store = document_store
        self.top_k = check_top_k(top_k, "BM25sRetriever")

    def to_dict(self) -> dict[str, Any]:
        """Serialize the retriever and its store's parameters."""
        return default_to_dict(self, document_store=self.document_store.to_dict(), top_k=self.top_k)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BM25sRetriever:
        """Build a retriever (and its store) from :meth:`to_dict`'s output."""
        return retriever_from_dict(cls, BM25sDocumentStore, data)

    def prefetch(self, queries: list[str], top_k: int | None = None) -> None:
        """Score ``queries`` in one batch before they are run one by one (:meth:`BM25sDocumentStore.prefetch`)."""
        self.document_store.prefetch(queries, self.top_k if top_k is None else check_top_k(top_k, "BM25sRetriever"))

    @component.output_types(documents=list[Document])
    def run(self, query: str, top_k: int | None = None) -> dict[str, list[Document]]:
        """The best ``top_k`` documents for ``query``, best first."""
        k = self.top_k if top_k is None else check_top_k(top_k, "BM25sRetriever")
        return {"documents": self.document_store.bm25_retrieval(query, k)}

    def ranked_meta(self, key: str, query: str, top_k: int | None = None) -> tuple[list[Any], list[float]]:
        """What :meth:`run` returns, as two lists and without a Document per hit: each document's
        ``meta.get(key)`` and its score, best first (the evaluation reads the ids, not the Documents)."""
        k = self.top_k if top_k is None else check_top_k(top_k, "BM25sRetriever")
        return self.document_store.bm25_ranked_meta(key, query, k)


def _check_stemmer(value: Any) -> str | None:
    """A PyStemmer algorithm name or None; the name is checked against PyStemmer's list when it is installed
    (otherwise the first index build asks for the bm25 extra)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise PipelineError(
            f"BM25sDocumentStore: stemmer must be a PyStemmer algorithm name or null, got {shorten(repr(value))}"
        )
    try:
        import Stemmer
    except ImportError:
        return value
    if value not in Stemmer.algorithms():
        raise PipelineError(
            f"BM25sDocumentStore: stemmer {shorten(repr(value))} is not a PyStemmer algorithm "
            f"({', '.join(Stemmer.algorithms())})"
        )
    return value


def _check_stopwords(value: Any) -> str | list[str] | None:
    """``None``, a language name bm25s knows (checked when the index is built) or a list of words."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(w, str) for w in value):
        return list(value)
    raise PipelineError(
        "BM25sDocumentStore: stopwords must be a language such as 'en', a list of words or null, "
        f"got {shorten(repr(value))}"
    )


def _index_key(parameters: dict[str, Any], documents: list[Document]) -> str:
    digest = hashlib.sha256(json.dumps(parameters, sort_keys=True).encode("utf-8"))
    for doc in documents:
        add_text(digest, doc.id)
        add_text(digest, doc.content or "")
    return digest.hexdigest()[:32]


__all__ = ["BM25sDocumentStore", "BM25sRetriever"]
