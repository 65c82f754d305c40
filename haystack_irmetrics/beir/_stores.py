"""What the package's in-process document stores (bm25s, FAISS) share: indexes shared by name, counting
and listing the documents, shallow copies of stored documents, and rebuilding a retriever with its store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from haystack import Document, default_from_dict

from ..errors import PipelineError

T = TypeVar("T")


def copy_document(doc: Document, field: str, value: Any) -> Document:
    """A shallow copy of ``doc`` with one field replaced, as ``copy.copy`` makes it: Document's
    ``__init__`` costs 8 µs a copy, and a query returns up to a thousand of them."""
    copy = object.__new__(Document)
    copy.__dict__.update(doc.__dict__)
    copy.__dict__[field] = value
    return copy


class InProcessStore:
    """Base of a document store held in this process: its index (``self._index``, with a
    ``documents`` list) is private, or with ``shared`` the one every store of the same ``index`` name
    shares, as ``InMemoryDocumentStore`` shares its indexes. Filters are not supported."""

    #: The shared indexes by name; each subclass has its own.
    _shared: ClassVar[dict[str, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._shared = {}

    def _attach(self, index: str, shared: bool, new_index: Callable[[], Any]) -> None:
        self.index = index
        self.shared = shared
        self._index = self._shared.setdefault(index, new_index()) if shared else new_index()

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Build a store from its ``to_dict()`` output."""
        return default_from_dict(cls, data)

    def count_documents(self) -> int:
        """How many documents the store holds."""
        return len(self._index.documents)

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """Every document (filters are not supported)."""
        if filters:
            raise PipelineError(f"{type(self).__name__} does not support filters")
        return list(self._index.documents)


def retriever_from_dict(cls: type[T], store_class: type[InProcessStore], data: dict[str, Any]) -> T:
    """A retriever of ``cls`` from its ``to_dict()`` output, its ``document_store`` built as ``store_class``."""
    params = dict(data.get("init_parameters") or {})
    store = params.get("document_store")
    if isinstance(store, dict):
        params["document_store"] = store_class.from_dict(store)
    return default_from_dict(cls, {**data, "init_parameters": params})


__all__ = ["InProcessStore", "copy_document", "retriever_from_dict"]
