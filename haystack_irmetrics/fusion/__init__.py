"""Rank fusion: several runs into one, with ranx's methods and normalisations (:func:`fuse`), the
fusion's parameters tuned on judgments by cross-validation (:func:`optimize_fusion`), and the Haystack
``DocumentJoiner`` that reproduces a fusion inside a pipeline (:func:`joiner_parameters`). Every method and
normalisation is an entry of the registry (:mod:`.registry`); ``irmetrics fuse`` is :func:`run_fusion`.

- :mod:`.registry`: the methods and normalisations as data: each method's score function, its parameters with
  their ranges, defaults and ranx's grid, weights, training and ``DocumentJoiner`` mode; no other module
  compares a name;
- :mod:`.packed`: the runs packed once into flat arrays, each query's candidates numbered, each run in trec_eval's
  order (:func:`pack_runs`);
- :mod:`.norms`: the normalisations, per run and query, as ranx 0.3.21 computes them;
- :mod:`.methods`: the methods' score functions, as ranx 0.3.21 computes them, on packed rows;
- :mod:`.trained`: what the trained methods learn from judgments, as ranx estimates it;
- :mod:`.api`: :func:`fuse`, the fused run as a ``ColumnarRun``, and :func:`check_method`, the one check of every
  argument;
- :mod:`.arguments`: how a message names an argument: as Python passes it (``params=``) or as ``irmetrics fuse``
  does (``--param``);
- :mod:`.optimize`: the weights or parameter tuned by cross-validation over queries on ranx's grid, bounded in
  size, the held-out run compared with its inputs (:func:`optimize_fusion`, :class:`FusionSearch`);
- :mod:`.joiner`: the Haystack ``DocumentJoiner`` that reproduces a fusion where a join mode can
  (:func:`joiner_parameters`; Haystack imported only to build one);
- :mod:`.job`: ``irmetrics fuse`` as one call, a frozen :class:`FusionSettings` in, a frozen :class:`FusionResult`
  out, every argument checked before any file is read.

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
