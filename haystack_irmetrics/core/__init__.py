"""The pure-numpy metric core. Nothing here imports Haystack."""

from .evaluate import DEFAULT_K_VALUES, EvaluationResult, evaluate
from .inputs import Qrels, Run
from .measures import FAMILIES, Measure, parse_measure
from .presets import BEIR, PRESETS, TREC, Preset, resolve_preset

__all__ = [
    "BEIR",
    "DEFAULT_K_VALUES",
    "FAMILIES",
    "PRESETS",
    "TREC",
    "EvaluationResult",
    "Measure",
    "Preset",
    "Qrels",
    "Run",
    "evaluate",
    "parse_measure",
    "resolve_preset",
]
