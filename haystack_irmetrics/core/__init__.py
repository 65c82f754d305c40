"""The pure-numpy metric core: inputs, ranking, kernels, aggregation. Imports numpy and the standard library only.

Of the package it imports :mod:`haystack_irmetrics.errors` and :mod:`haystack_irmetrics.checks` only.

What a measure is, and the policies, as data:

- :mod:`.families`: the registry of measure families: each family's kernel, parameters, formula and reference
  tool; the core reads a family's entry, never its name;
- :mod:`.measures`: a measure as a value with a canonical name (:class:`Measure`, :func:`parse_measure`), and the
  checks of cutoffs and levels;
- :mod:`.presets`: the policies (ties, missing queries, queries without a relevant document, relevance
  threshold) as data, resolved once into a :class:`Preset`.

The inputs, validated once:

- :mod:`.validation`: what a score, a label and an id may be, in one place, and the messages naming the offender;
- :mod:`.inputs`: the read-only containers: :class:`Qrels`, :class:`Run`, and the array runs ``ColumnarRun`` and
  ``RankedRun``;
- :mod:`.subtopics`: judgments per subtopic for the diversity measures (:class:`SubtopicQrels`), and their
  topical view;
- :mod:`.columns`: inputs given as three columns, validated row by row into dicts;
- :mod:`.packing`: flat arrays from dicts, every value read in one C-level pass;
- :mod:`.plausibility`: inputs that evaluate but look wrong (qrels of another collection, the arguments swapped,
  no label reaching the threshold), said as a warning.

Ranking and scoring:

- :mod:`.prepare`: a run flattened against the qrels, every judged retrieved document found with its score, one
  function per run kind;
- :mod:`.ranking`: the judged documents' ranks counted without sorting the runs, and the one trec_eval order of a
  whole ranking (``trec_order``, ``trec_sorted``);
- :mod:`.kernels`: one kernel per family kind, with trec_eval's double operations in its order;
- :mod:`.kernels_user`: the user-model measures' kernels: ERR, RBP and its residual, infAP, Compat;
- :mod:`.kernels_diversity`: the diversity measures' kernels, query by query as ndeval computes them;
- :mod:`.scoring`: the kernels of one prepared run called kind by kind, each ranking and relevance rule computed
  once and shared (``Scorer``);
- :mod:`.native`: the one seam to the optional compiled scan (``_rank.c``): each function a faster form of one
  step of the Python path, or None and the Python path runs.

Results:

- :mod:`.evaluation`: :class:`Evaluation`, one run entered once, every measure read from it; :func:`evaluate`,
  :func:`evaluate_chunks` (a run in pieces) and the aggregation of per-query values;
- :mod:`.results`: what an evaluation returns (:class:`EvaluationResult`: means and per-query values);
- :mod:`.curves`: the same numbers per rank and per recall level: gain curves, interpolated precision-recall, any
  measure against k;
- :mod:`.bounds`: the interval a measure's value must lie in once a run's holes are judged (:func:`hole_bounds`,
  :func:`evaluation_bounds`).
"""

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
