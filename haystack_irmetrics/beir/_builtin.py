"""The built-in BEIR pipelines as dicts: the same pipelines as ``pipelines/beir_*.yaml``.

The YAML files are what users read and edit in a source checkout, and what ``--retriever bm25``
loads there; an installed package without the repository's ``pipelines/`` folder builds the same
pipelines from these dicts. ``tests/test_beir_pipelines.py`` checks that both are equal.
"""

from __future__ import annotations

from typing import Any

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BM25_PARAMETERS = {"k1": 0.9, "b": 0.4, "delta": 0.0}

_STORE = "haystack.document_stores.in_memory.document_store.InMemoryDocumentStore"
_BM25 = "haystack.components.retrievers.in_memory.bm25_retriever.InMemoryBM25Retriever"
_WRITER = "haystack.components.writers.document_writer.DocumentWriter"
_JOINER = "haystack.components.joiners.document_joiner.DocumentJoiner"
_BM25S_STORE = "haystack_irmetrics.integration.stores.bm25s_store.BM25sDocumentStore"
_BM25S = "haystack_irmetrics.integration.stores.bm25s_store.BM25sRetriever"
_FAISS_STORE = "haystack_irmetrics.integration.stores.faiss_store.FaissDocumentStore"
_FAISS = "haystack_irmetrics.integration.stores.faiss_store.FaissEmbeddingRetriever"
_QDRANT_STORE = "haystack_integrations.document_stores.qdrant.document_store.QdrantDocumentStore"
_QDRANT = "haystack_integrations.components.retrievers.qdrant.retriever.QdrantEmbeddingRetriever"
_ST = "haystack_integrations.components.embedders.sentence_transformers"
_TEXT_EMBEDDER = f"{_ST}.sentence_transformers_text_embedder.SentenceTransformersTextEmbedder"
_DOC_EMBEDDER = f"{_ST}.sentence_transformers_document_embedder.SentenceTransformersDocumentEmbedder"


def _haystack_bm25_store() -> dict[str, Any]:
    params = {"index": "beir", "shared": True, "bm25_algorithm": "BM25Plus", "bm25_parameters": dict(BM25_PARAMETERS)}
    return {"type": _STORE, "init_parameters": params}


def _bm25s_store() -> dict[str, Any]:
    params = {"index": "beir", "shared": True, "k1": 0.9, "b": 0.4, "stemmer": "porter", "stopwords": "en"}
    return {"type": _BM25S_STORE, "init_parameters": params}


def _qdrant_store() -> dict[str, Any]:
    params = {
        "location": ":memory:",
        "index": "beir",
        "embedding_dim": 384,
        "similarity": "cosine",
        "return_embedding": False,
        "progress_bar": False,
    }
    return {"type": _QDRANT_STORE, "init_parameters": params}


def _faiss_store() -> dict[str, Any]:
    params = {"index": "beir", "shared": True, "similarity": "cosine", "return_embedding": False}
    return {"type": _FAISS_STORE, "init_parameters": params}


def _pipeline(components: dict, connections: list[tuple[str, str]], indexing: dict | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "components": components,
        "connections": [{"sender": s, "receiver": r} for s, r in connections],
    }
    if indexing is not None:
        out["max_runs_per_component"] = 100
        out["metadata"] = {"irmetrics": {"indexing": indexing}}
    return out


def _writer(store: dict[str, Any]) -> dict[str, Any]:
    return {"type": _WRITER, "init_parameters": {"document_store": store}}


def _embedding_indexing(*stores: dict[str, Any]) -> dict[str, Any]:
    """The document embedder, then one writer per store."""
    embedder = {"type": _DOC_EMBEDDER, "init_parameters": {"model": DEFAULT_MODEL}}
    writers = {f"writer{i or ''}": _writer(store) for i, store in enumerate(stores)}
    return _pipeline({"embedder": embedder, **writers}, [("embedder.documents", f"{w}.documents") for w in writers])


def _query_embedder() -> dict[str, Any]:
    return {"type": _TEXT_EMBEDDER, "init_parameters": {"model": DEFAULT_MODEL, "progress_bar": False}}


def _bm25s_retriever() -> dict[str, Any]:
    return {"type": _BM25S, "init_parameters": {"top_k": 1000, "document_store": _bm25s_store()}}


def _qdrant_retriever() -> dict[str, Any]:
    return {"type": _QDRANT, "init_parameters": {"top_k": 1000, "document_store": _qdrant_store()}}


def _faiss_retriever() -> dict[str, Any]:
    return {"type": _FAISS, "init_parameters": {"top_k": 1000, "document_store": _faiss_store()}}


def builtin_pipeline(name: str) -> dict[str, Any]:
    """The retrieval pipeline dict (with ``metadata.irmetrics.indexing``) of a name of :data:`BUILTIN_PIPELINES`."""
    if name == "bm25":
        return _pipeline({"retriever": _bm25s_retriever()}, [], _pipeline({"writer": _writer(_bm25s_store())}, []))
    if name == "haystack-bm25":
        retriever = {
            "type": _BM25,
            "init_parameters": {"top_k": 1000, "scale_score": False, "document_store": _haystack_bm25_store()},
        }
        return _pipeline({"retriever": retriever}, [], _pipeline({"writer": _writer(_haystack_bm25_store())}, []))
    if name in ("dense", "dense-qdrant"):
        faiss = name == "dense"
        return _pipeline(
            {"query_embedder": _query_embedder(), "retriever": _faiss_retriever() if faiss else _qdrant_retriever()},
            [("query_embedder.embedding", "retriever.query_embedding")],
            _embedding_indexing(_faiss_store() if faiss else _qdrant_store()),
        )
    if name == "hybrid":
        return _pipeline(
            {
                "bm25_retriever": _bm25s_retriever(),
                "query_embedder": _query_embedder(),
                "embedding_retriever": _faiss_retriever(),
                "joiner": {"type": _JOINER, "init_parameters": {"join_mode": "reciprocal_rank_fusion", "top_k": 1000}},
            },
            [
                ("query_embedder.embedding", "embedding_retriever.query_embedding"),
                ("bm25_retriever.documents", "joiner.documents"),
                ("embedding_retriever.documents", "joiner.documents"),
            ],
            _embedding_indexing(_faiss_store(), _bm25s_store()),
        )
    raise KeyError(name)


#: ``bm25``: bm25s (Lucene's BM25 and English analysis); ``haystack-bm25``: Haystack's InMemoryBM25Retriever;
#: ``dense``: all-MiniLM-L6-v2, exact search by FAISS; ``dense-qdrant``: the same model in Qdrant's local
#: in-memory mode (qdrant-haystack); ``hybrid``: bm25 and dense, fused by reciprocal rank.
BUILTIN_PIPELINES = ("bm25", "haystack-bm25", "dense", "dense-qdrant", "hybrid")
