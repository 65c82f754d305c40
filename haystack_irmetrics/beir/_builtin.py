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
_EMBEDDING = "haystack.components.retrievers.in_memory.embedding_retriever.InMemoryEmbeddingRetriever"
_WRITER = "haystack.components.writers.document_writer.DocumentWriter"
_BM25S_STORE = "haystack_irmetrics.beir.bm25s_store.BM25sDocumentStore"
_BM25S = "haystack_irmetrics.beir.bm25s_store.BM25sRetriever"
_JOINER = "haystack.components.joiners.document_joiner.DocumentJoiner"
_ST = "haystack_integrations.components.embedders.sentence_transformers"
_TEXT_EMBEDDER = f"{_ST}.sentence_transformers_text_embedder.SentenceTransformersTextEmbedder"
_DOC_EMBEDDER = f"{_ST}.sentence_transformers_document_embedder.SentenceTransformersDocumentEmbedder"


def _store(bm25: bool, dense: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"index": "beir", "shared": True}
    if bm25:
        params.update(bm25_algorithm="BM25Plus", bm25_parameters=dict(BM25_PARAMETERS))
    if dense:
        params.update(embedding_similarity_function="cosine", return_embedding=False)
    return {"type": _STORE, "init_parameters": params}


def _retriever(kind: str, store: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": _BM25 if kind == "bm25" else _EMBEDDING,
        "init_parameters": {"top_k": 1000, "scale_score": False, "document_store": store},
    }


def _bm25s_store() -> dict[str, Any]:
    params = {"index": "beir", "shared": True, "k1": 0.9, "b": 0.4, "stemmer": "porter", "stopwords": "en"}
    return {"type": _BM25S_STORE, "init_parameters": params}


def _pipeline(components: dict, connections: list[tuple[str, str]], indexing: dict | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "components": components,
        "connections": [{"sender": s, "receiver": r} for s, r in connections],
    }
    if indexing is not None:
        out["max_runs_per_component"] = 100
        out["metadata"] = {"irmetrics": {"indexing": indexing}}
    return out


def _indexing(bm25: bool, dense: bool) -> dict[str, Any]:
    writer = {"type": _WRITER, "init_parameters": {"document_store": _store(bm25, dense)}}
    if not dense:
        return _pipeline({"writer": writer}, [])
    embedder = {"type": _DOC_EMBEDDER, "init_parameters": {"model": DEFAULT_MODEL, "batch_size": 32}}
    return _pipeline({"embedder": embedder, "writer": writer}, [("embedder.documents", "writer.documents")])


def _query_embedder() -> dict[str, Any]:
    return {"type": _TEXT_EMBEDDER, "init_parameters": {"model": DEFAULT_MODEL, "progress_bar": False}}


def builtin_pipeline(name: str) -> dict[str, Any]:
    """The retrieval pipeline dict (with ``metadata.irmetrics.indexing``) of a name of :data:`BUILTIN_PIPELINES`."""
    if name == "bm25":
        writer = {"type": _WRITER, "init_parameters": {"document_store": _bm25s_store()}}
        retriever = {"type": _BM25S, "init_parameters": {"top_k": 1000, "document_store": _bm25s_store()}}
        return _pipeline({"retriever": retriever}, [], _pipeline({"writer": writer}, []))
    if name == "haystack-bm25":
        return _pipeline({"retriever": _retriever("bm25", _store(True, False))}, [], _indexing(True, False))
    if name == "dense":
        return _pipeline(
            {"query_embedder": _query_embedder(), "retriever": _retriever("dense", _store(False, True))},
            [("query_embedder.embedding", "retriever.query_embedding")],
            _indexing(False, True),
        )
    if name == "hybrid":
        return _pipeline(
            {
                "bm25_retriever": _retriever("bm25", _store(True, True)),
                "query_embedder": _query_embedder(),
                "embedding_retriever": _retriever("dense", _store(True, True)),
                "joiner": {"type": _JOINER, "init_parameters": {"join_mode": "reciprocal_rank_fusion", "top_k": 1000}},
            },
            [
                ("query_embedder.embedding", "embedding_retriever.query_embedding"),
                ("bm25_retriever.documents", "joiner.documents"),
                ("embedding_retriever.documents", "joiner.documents"),
            ],
            _indexing(True, True),
        )
    raise KeyError(name)


#: ``bm25``: bm25s (Lucene's BM25 and English analysis); ``haystack-bm25``: Haystack's InMemoryBM25Retriever.
BUILTIN_PIPELINES = ("bm25", "haystack-bm25", "dense", "hybrid")
