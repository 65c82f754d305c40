"""polars and pyarrow for the click modules, imported on first use; a missing one names the ``clicks`` extra.

Each module binds the names once, ``from ._deps import pl, pa``, and uses them as the modules
(:class:`~haystack_irmetrics._extras.LazyModule`), so importing :mod:`haystack_irmetrics.clicks` loads numpy
only. For type checkers the modules import the real packages under ``TYPE_CHECKING`` instead.
"""

from __future__ import annotations

from typing import Any

from .._extras import LazyModule, require

#: The pip extra every click-log job needs (polars and pyarrow read the log, scipy runs the tests).
EXTRA = "clicks"

pl: Any = LazyModule("polars", purpose="click logs", extra=EXTRA)
pa: Any = LazyModule("pyarrow", purpose="click logs", extra=EXTRA)


def require_clicks(purpose: str) -> None:
    """polars and pyarrow, which every click-log reader and statistics pass uses (the ``clicks`` extra)."""
    require("polars", "pyarrow", purpose=purpose, extra=EXTRA)


__all__ = ["EXTRA", "pa", "pl", "require_clicks"]
