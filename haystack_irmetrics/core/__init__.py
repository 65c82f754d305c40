"""The pure-numpy metric core: inputs, ranking, kernels, aggregation. Imports numpy and the standard library only."""

from .bounds import HoleBounds, bounded_families, evaluation_bounds, hole_bounds
from .curves import (
    GainCurves,
    GainVectors,
    MeasureCurve,
    PRCurve,
    gain_curves,
    gain_vectors,
    interpolated_pr,
    measure_at_k,
)
from .evaluation import DEFAULT_K_VALUES, Evaluation, EvaluationResult, evaluate, evaluate_chunks
from .inputs import Qrels, Run
from .measures import BEIR_FAMILIES, FAMILIES, STANDARD_LEVELS, Measure, parse_measure, resolve_measures
from .presets import BEIR, PRESETS, TREC, Preset, resolve_preset
from .subtopics import SubtopicQrels

__all__ = [
    "BEIR",
    "BEIR_FAMILIES",
    "DEFAULT_K_VALUES",
    "FAMILIES",
    "PRESETS",
    "STANDARD_LEVELS",
    "TREC",
    "Evaluation",
    "EvaluationResult",
    "GainCurves",
    "GainVectors",
    "HoleBounds",
    "Measure",
    "MeasureCurve",
    "PRCurve",
    "Preset",
    "Qrels",
    "Run",
    "SubtopicQrels",
    "bounded_families",
    "evaluate",
    "evaluate_chunks",
    "evaluation_bounds",
    "gain_curves",
    "gain_vectors",
    "hole_bounds",
    "interpolated_pr",
    "measure_at_k",
    "parse_measure",
    "resolve_measures",
    "resolve_preset",
]
