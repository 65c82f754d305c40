"""polars and pyarrow for the feedback modules, imported on first use (the ``feedback`` extra).

Each module binds the names once, ``from ._deps import pl, pa``, and uses them as the modules
(``pl.col``, ``pa.schema``); the import happens at the first attribute read
(:class:`~haystack_irmetrics._extras.LazyModule`), so importing :mod:`haystack_irmetrics.feedback` stays
light. A missing package is a :class:`~haystack_irmetrics.errors.MissingDependencyError` naming the
``feedback`` extra. For type checkers the modules import the real packages under ``TYPE_CHECKING`` instead.
"""

from __future__ import annotations

from typing import Any

from .._extras import LazyModule

pl: Any = LazyModule("polars", purpose="feedback", extra="feedback")
pa: Any = LazyModule("pyarrow", purpose="feedback", extra="feedback")

__all__ = ["pa", "pl"]
