"""Haystack components: exact BEIR / trec_eval retrieval metrics at a cutoff k.

Importing this package imports Haystack; ``import haystack_irmetrics`` alone does not.
"""

from ..errors import InvalidDocumentsError
from ..integration.loading import load_pipeline
from .evaluators import (
    IRMetricsEvaluator,
    MAPEvaluator,
    MRREvaluator,
    NDCGEvaluator,
    PrecisionEvaluator,
    RCapEvaluator,
    RecallEvaluator,
    to_evaluation_run_result,
)
from .interleaving import InterleavingJoiner
from .judge import RelevanceJudge

__all__ = [
    "IRMetricsEvaluator",
    "InterleavingJoiner",
    "InvalidDocumentsError",
    "MAPEvaluator",
    "MRREvaluator",
    "NDCGEvaluator",
    "PrecisionEvaluator",
    "RCapEvaluator",
    "RecallEvaluator",
    "RelevanceJudge",
    "load_pipeline",
    "to_evaluation_run_result",
]
