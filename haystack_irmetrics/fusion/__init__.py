"""Rank fusion: several runs into one, with ranx's methods and normalisations (:func:`fuse`), the
fusion's parameters tuned on judgments by cross-validation (:func:`optimize_fusion`), and the Haystack
``DocumentJoiner`` that reproduces a fusion inside a pipeline (:func:`joiner_parameters`). Every method and
normalisation is an entry of the registry (:mod:`.registry`); ``irmetrics fuse`` is :func:`run_fusion`.

numpy only; above the core, ``io/`` and ``stats/``, beside ``compare/``.
"""

from .api import check_method, fuse
from .job import FusionResult, FusionSettings, run_fusion
from .joiner import joiner_component, joiner_parameters, joiner_yaml
from .optimize import FusionSearch, FusionTuning, optimize_fusion
from .packed import PackedRuns, RunRows, pack_runs
from .registry import METHODS, NORMALIZATIONS, TRAINED, WEIGHTED, Method, Normalization, Parameter

__all__ = [
    "METHODS",
    "NORMALIZATIONS",
    "TRAINED",
    "WEIGHTED",
    "FusionResult",
    "FusionSearch",
    "FusionSettings",
    "FusionTuning",
    "Method",
    "Normalization",
    "PackedRuns",
    "Parameter",
    "RunRows",
    "check_method",
    "fuse",
    "joiner_component",
    "joiner_parameters",
    "joiner_yaml",
    "optimize_fusion",
    "pack_runs",
    "run_fusion",
]
