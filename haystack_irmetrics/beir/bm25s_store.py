"""The old import path of the bm25s document store and retriever, kept for pipeline YAMLs that name it.

They live in :mod:`haystack_irmetrics.integration.stores.bm25s_store`; a YAML ``type:
haystack_irmetrics.beir.bm25s_store.BM25sRetriever`` still loads.
"""

from __future__ import annotations

from ..integration.stores import register_old_path
from ..integration.stores.bm25s_store import TOKEN_PATTERN, BM25sDocumentStore, BM25sRetriever

register_old_path(__name__, BM25sRetriever)

__all__ = ["TOKEN_PATTERN", "BM25sDocumentStore", "BM25sRetriever"]
