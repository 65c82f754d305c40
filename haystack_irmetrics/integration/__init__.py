"""The Haystack integration layer: what every part of the package that runs Haystack shares.

``DocumentPath`` (:mod:`.documents`) turns lists of Haystack ``Document`` objects into judgments and runs,
once, for the evaluator components and for the feedback replay; ``load_pipeline`` (:mod:`.loading`)
loads a pipeline YAML with the allowlist of trusted modules and a bounded YAML reader, for
``irmetrics beir``, ``irmetrics feedback --pipeline`` and users. It sits below ``components/``,
``beir/`` and ``feedback/`` and imports none of them.
"""

from __future__ import annotations

from .documents import DocumentPath
from .loading import load_pipeline

__all__ = ["DocumentPath", "load_pipeline"]
