"""``load_pipeline`` at its public import path; the code is :mod:`haystack_irmetrics.integration.loading`
(shared by ``irmetrics beir``, ``irmetrics feedback --pipeline`` and the components)."""

from __future__ import annotations

from ..integration.loading import (
    ALIAS_NODE_BUDGET,
    MAX_YAML_DEPTH,
    TRUSTED_MODULES,
    load_pipeline,
    read_pipeline_yaml,
)

__all__ = ["ALIAS_NODE_BUDGET", "MAX_YAML_DEPTH", "TRUSTED_MODULES", "load_pipeline", "read_pipeline_yaml"]
