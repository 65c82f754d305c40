"""Documents -> judgments and runs for the components: kept at this path (its public import path);
the code is :mod:`haystack_irmetrics.integration.documents`, shared with the feedback replay."""

from __future__ import annotations

from ..integration.documents import RANK_BY, Converted, DocumentPath

__all__ = ["RANK_BY", "Converted", "DocumentPath"]
