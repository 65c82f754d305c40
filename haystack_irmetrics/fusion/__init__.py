"""Rank fusion: several runs into one, with ranx's methods and normalisations (:func:`fuse`), the
fusion's parameters tuned on judgments by cross-validation (:func:`optimize_fusion`), and the Haystack
``DocumentJoiner`` that reproduces a fusion inside a pipeline (:func:`joiner_parameters`).

numpy only; above the core, ``io/`` and ``stats/``, beside ``compare/``.
"""

from .api import check_method, fuse
from .joiner import joiner_component, joiner_parameters, joiner_yaml
from .methods import METHODS, PARAMETERS, TRAINED, WEIGHTED
from .norms import NORMALIZATIONS
from .optimize import FusionTuning, optimize_fusion
from .packed import PackedRuns, RunRows, pack_runs

__all__ = [
    "METHODS",
    "NORMALIZATIONS",
    "PARAMETERS",
    "TRAINED",
    "WEIGHTED",
    "FusionTuning",
    "PackedRuns",
    "RunRows",
    "check_method",
    "fuse",
    "joiner_component",
    "joiner_parameters",
    "joiner_yaml",
    "optimize_fusion",
    "pack_runs",
]
