"""polars and pyarrow for the feedback modules, imported on first use (the ``feedback`` extra).

Each module binds the names once, ``from ._deps import pl, pa``, and uses them as the modules
(``pl.col``, ``pa.schema``); the import happens at the first attribute read, so importing
:mod:`haystack_irmetrics.feedback` stays light. A missing package is a
:class:`~haystack_irmetrics.errors.MissingDependencyError` naming the ``feedback`` extra. For type
checkers the modules import the real packages under ``TYPE_CHECKING`` instead.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

from .._extras import require


class _Lazy:
    """A stand-in for the module ``name`` that imports it when an attribute is first read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _module(self) -> ModuleType:
        module = sys.modules.get(self._name)
        if module is None:  # not imported yet, or hidden (``None``): require names the extra
            require(self._name, purpose="feedback", extra="feedback")
            module = importlib.import_module(self._name)
        return module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._module(), attr)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


pl: Any = _Lazy("polars")
pa: Any = _Lazy("pyarrow")
pq: Any = _Lazy("pyarrow.parquet")
pacsv: Any = _Lazy("pyarrow.csv")
pajson: Any = _Lazy("pyarrow.json")

__all__ = ["pa", "pacsv", "pajson", "pl", "pq"]
