"""The document stores and retrievers this package ships, as Haystack components.

- :mod:`.bm25s_store`: ``BM25sDocumentStore`` and ``BM25sRetriever``, Lucene's BM25 through bm25s (the
  default BEIR engine, ``pipelines/beir_bm25.yaml``);
- :mod:`.faiss_store`: ``FaissDocumentStore`` and ``FaissEmbeddingRetriever``, exact vector search
  through FAISS (``pipelines/beir_dense.yaml``, ``pipelines/beir_hybrid.yaml``);
- :mod:`.common`: what the two share, and the one place their parameters are checked.

Nothing is imported here (each module imports Haystack, and its engine on first use). Pipelines written
before the stores moved name them ``haystack_irmetrics.beir.bm25s_store`` and
``haystack_irmetrics.beir.faiss_store``: those paths stay importable and loadable
(:func:`register_old_path`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: The modules that define the stores (pipeline YAML ``type:`` prefixes), now and before the move.
BM25S_MODULES = ("haystack_irmetrics.integration.stores.bm25s_store", "haystack_irmetrics.beir.bm25s_store")
FAISS_MODULES = ("haystack_irmetrics.integration.stores.faiss_store", "haystack_irmetrics.beir.faiss_store")
#: Where to go without bm25s.
BM25S_HINT = "Without it, --retriever haystack-bm25 (Haystack's InMemoryBM25Retriever) needs no extra"


def register_old_path(module: str, *classes: Any) -> None:
    """Make ``module.<Class>`` load from a pipeline YAML as ``<Class>`` does.

    Haystack looks a component's ``type`` up in its component registry, which holds each class under the
    module that defines it; a YAML written with the old module path would import the old module and
    still not find the class there. Document stores (not components) are imported by path, which the
    old module's re-export already answers.
    """
    from haystack.core.component import component

    registered = list(component.registry.values())
    for cls in classes:
        if any(c is cls for c in registered):
            component.registry.setdefault(f"{module}.{cls.__name__}", cls)


def store_attribute(component: Any) -> str | None:
    """The attribute holding a component's document store (Haystack's ``document_store``; some integrations,
    Qdrant's, keep it as ``_document_store``)."""
    for name in ("document_store", "_document_store"):
        if getattr(component, name, None) is not None:
            return name
    return None


def stores_of(pipeline: Any) -> list[Any]:
    """The document stores of a pipeline's components, each once (by index name, else by identity)."""
    return unique_stores(
        getattr(component, attr) for _, component in pipeline.walk() if (attr := store_attribute(component))
    )


def unique_stores(stores: Iterable[Any]) -> list[Any]:
    """``stores`` without repeats (one per index name, else per object) and without non-stores."""
    seen: dict[Any, Any] = {}
    for store in stores:
        if store is None or not hasattr(store, "count_documents"):
            continue
        key = getattr(store, "index", id(store))
        seen.setdefault(key, store)
    return list(seen.values())


__all__ = [
    "BM25S_HINT",
    "BM25S_MODULES",
    "FAISS_MODULES",
    "register_old_path",
    "store_attribute",
    "stores_of",
    "unique_stores",
]
