"""What the package's in-process document stores (bm25s, FAISS) share: indexes shared by name, counting
and listing the documents, shallow copies of stored documents, rebuilding a retriever with its store, and
the checks of their parameters (one place, so both stores refuse the same values with the same words)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from haystack import Document, default_from_dict

from ...checks import number, whole
from ...errors import PipelineError, shorten

T = TypeVar("T")


def check_top_k(value: Any, owner: str) -> int:
    """``value`` as a ``top_k``: a whole number >= 1 (not a bool, a float or a string, as a YAML may give).

    :raises PipelineError: naming ``owner`` (the component) and the value.
    """
    return whole(value, f"{owner}: top_k", least=1, error=PipelineError)


def check_number(value: Any, owner: str, name: str, low: float, high: float | None = None) -> float:
    """``value`` as a finite number in ``[low, high]`` (a BM25 parameter such as ``k1`` or ``b``).

    :raises PipelineError: naming ``owner``, the parameter and the value.
    """
    return float(number(value, f"{owner}: {name}", low, high, error=PipelineError))


def check_flag(value: Any, owner: str, name: str, *, optional: bool = False) -> bool | None:
    """``value`` as a bool (``None`` too when ``optional``): a YAML string such as ``"false"`` is refused,
    not read as true.

    :raises PipelineError: naming ``owner``, the parameter and the value.
    """
    if isinstance(value, bool) or (optional and value is None):
        return value
    expected = "true, false or null" if optional else "true or false"
    raise PipelineError(f"{owner}: {name} must be {expected}, got {shorten(repr(value))}")


def check_name(value: Any, owner: str, name: str = "index") -> str:
    """``value`` as a non-empty string (an index name).

    :raises PipelineError: naming ``owner``, the parameter and the value.
    """
    if not isinstance(value, str) or not value:
        raise PipelineError(f"{owner}: {name} must be a non-empty string, got {shorten(repr(value))}")
    return value


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
        owner = type(self).__name__
        self.index = check_name(index, owner)
        self.shared = check_flag(shared, owner, "shared")
        self._index = self._shared.setdefault(index, new_index()) if shared else new_index()

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Build a store from its ``to_dict()`` output (written under its module path, now or before the move)."""
        return default_from_dict(cls, current_type(cls, data))

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
    return default_from_dict(cls, current_type(cls, {**data, "init_parameters": params}))


#: Where the stores were defined before they moved here (pipeline YAMLs written then name these).
OLD_MODULES = {
    "haystack_irmetrics.integration.stores.bm25s_store": "haystack_irmetrics.beir.bm25s_store",
    "haystack_irmetrics.integration.stores.faiss_store": "haystack_irmetrics.beir.faiss_store",
}


def current_type(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its ``type`` the class's own qualified name when it names the class's old path
    (Haystack's ``default_from_dict`` accepts only the current one); a copy, never the caller's dict."""
    old = OLD_MODULES.get(cls.__module__)
    if old is not None and data.get("type") == f"{old}.{cls.__name__}":
        return {**data, "type": f"{cls.__module__}.{cls.__qualname__}"}
    return data


__all__ = [
    "InProcessStore",
    "check_flag",
    "check_name",
    "check_number",
    "check_top_k",
    "copy_document",
    "retriever_from_dict",
]
