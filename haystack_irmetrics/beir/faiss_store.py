"""The old import path of the FAISS document store and retriever, kept for pipeline YAMLs that name it.

They live in :mod:`haystack_irmetrics.integration.stores.faiss_store`; a YAML ``type:
haystack_irmetrics.beir.faiss_store.FaissEmbeddingRetriever`` still loads.
"""

from __future__ import annotations

from ..integration.stores import register_old_path
from ..integration.stores.faiss_store import SIMILARITIES, FaissDocumentStore, FaissEmbeddingRetriever

register_old_path(__name__, FaissEmbeddingRetriever)

__all__ = ["SIMILARITIES", "FaissDocumentStore", "FaissEmbeddingRetriever"]
