"""Rank fusion: several runs into one, with ranx's methods and normalisations (:func:`fuse`), the
fusion's parameters tuned on judgments by cross-validation (:func:`optimize_fusion`), and the Haystack
``DocumentJoiner`` that reproduces a fusion inside a pipeline (:func:`joiner_parameters`). Every method and
normalisation is an entry of the registry (:mod:`.registry`); ``irmetrics fuse`` is :func:`run_fusion`.

numpy only; above the core, ``io/`` and ``stats/``, beside ``compare/``.
"""

from .._lazy import lazy_names

_HOMES = {
    "check_method": ".api",
    "fuse": ".api",
    "FusionResult": ".job",
    "FusionSettings": ".job",
    "run_fusion": ".job",
    "joiner_component": ".joiner",
    "joiner_parameters": ".joiner",
    "joiner_yaml": ".joiner",
    "FusionSearch": ".optimize",
    "FusionTuning": ".optimize",
    "optimize_fusion": ".optimize",
    "PackedRuns": ".packed",
    "RunRows": ".packed",
    "pack_runs": ".packed",
    "METHODS": ".registry",
    "NORMALIZATIONS": ".registry",
    "TRAINED": ".registry",
    "WEIGHTED": ".registry",
    "Method": ".registry",
    "Normalization": ".registry",
    "Parameter": ".registry",
}
__getattr__, __dir__ = lazy_names(__name__, _HOMES)

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
