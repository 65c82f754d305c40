"""The registry of fusion methods and normalisations, as data (what :mod:`haystack_irmetrics.core.families`
is for measures): each method's score function, its parameters with their ranges, defaults and ranx's
tuning grid, whether it takes weights, what a trained one learns from judgments, and the Haystack
``DocumentJoiner`` mode that reproduces it; each normalisation's function and aliases.

:func:`~.api.fuse`, :func:`~.api.check_method`, :func:`~.optimize.optimize_fusion`,
:func:`~.joiner.joiner_parameters`, ``irmetrics fuse``'s choices and help and docs/fusion.md's tables read it;
no other module compares a method's or a normalisation's name (``tests/test_architecture.py``). A new method
is one entry here.

    >>> METHODS["rbc"].params[0].range, METHODS["wsum"].weighted, METHODS["probfuse"].training is not None
    ('in (0, 1)', True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..checks import Number, Param, Whole
from ..errors import FusionError, FusionParameterError
from . import methods as m
from . import norms, trained
from .packed import PackedRuns, RunRows


@dataclass(frozen=True)
class Parameter(Param):
    """A method's parameter (``params=`` of :func:`~.api.fuse`, ``--param NAME=VALUE``): a
    :class:`~haystack_irmetrics.checks.Param`, the one parameter type of every registry (``rule``: what a value
    must be, ``inside`` whether one is; a :class:`~haystack_irmetrics.checks.Whole` one is used as an int;
    ``default``: its value when not given, ``None``: required, as in ranx), with what tuning and the arguments
    read: ``grid``: ranx's ``optimize_fusion`` range (first, last, step; a whole step makes whole values);
    ``argument``: an argument of its own that gives it too (:func:`~.arguments.argument`'s name: rrf's ``k`` is
    ``rrf_k=``, ``--rrf-k``); ``words``: the range as ``irmetrics fuse --help`` and docs/fusion.md say it, where
    they say it shorter than the rule.
    """

    grid: tuple[float, float, float] = (1, 1, 1)
    argument: str | None = None
    words: str | None = None

    @property
    def range(self) -> str:
        return self.words or self.rule.describe()

    @property
    def whole(self) -> bool:
        """Whether a value is a whole number (used as an int)."""
        return isinstance(self.rule, Whole)


@dataclass(frozen=True)
class Training:
    """What a trained method learns per run from the judgments (:mod:`.trained`): ``learns`` says it,
    ``estimate(hits, params)`` computes it from one run's :class:`~.trained.Hits`."""

    learns: str
    estimate: Callable[[trained.Hits, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class JoinMode:
    """The Haystack ``DocumentJoiner`` join mode that reproduces a method (:mod:`.joiner` says what Haystack
    computes). ``raw_scores``: Haystack fuses the retrievers' scores as they are, so only ``norm=None`` is
    reproduced; ``weights``: the method's weights are the joiner's; ``fixed``: parameter values Haystack
    cannot change, and ``why``."""

    join_mode: str
    raw_scores: bool = False
    weights: bool = False
    fixed: Mapping[str, float] = field(default_factory=dict)
    why: str = ""


@dataclass(frozen=True)
class Method:
    """A fusion method by ranx's name.

    ``summary``: its fused score per document (ranx's definition); ``scores``: that score, per candidate,
    from a :class:`~.methods.Fusing`; ``params``: its parameters (at most one, the one ranx's grid tunes);
    ``weighted``: it takes one weight per run; ``reads_scores``: its result depends on the normalised
    scores' values, not only on the ranks; ``training``: what it learns from judgments (``None``: untrained);
    ``joiner``: the ``DocumentJoiner`` mode that reproduces it, if one does.
    """

    name: str
    summary: str
    scores: Callable[[m.Fusing], np.ndarray]
    params: tuple[Parameter, ...] = ()
    weighted: bool = False
    reads_scores: bool = False
    training: Training | None = None
    joiner: JoinMode | None = None

    @property
    def defaults(self) -> dict[str, float | None]:
        """``{parameter: default}`` (``None``: required)."""
        return {p.name: p.default for p in self.params}

    @property
    def tuned(self) -> Parameter | None:
        """The parameter ranx's ``optimize_fusion`` tunes (a weighted method tunes its weights)."""
        return self.params[0] if self.params else None

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.params if p.name == name), None)


@dataclass(frozen=True)
class Normalization:
    """A score normalisation by ranx's name: ``summary`` says what it makes of a run's scores per query,
    ``apply(rows, packed)`` does it for one run; ``aliases`` name it too (ranx's spellings with ``_``)."""

    name: str
    summary: str
    apply: Callable[[RunRows, PackedRuns], RunRows]
    aliases: tuple[str, ...] = ()


#: RRF's largest constant: up to it double precision orders the fused scores as exact arithmetic does (checked
#: with fractions, tests/test_fusion_arguments.py); at 1e10, 53 of 299 neighbouring documents of a 300-document
#: query come out misordered, and from 1e16 on every 1 / (k + rank) of a run is the same number.
RRF_K_MAX = 1e8
#: RRF's constant, also given as ``rrf_k=`` and ``--rrf-k``.
_E = FusionParameterError
RRF_K = Parameter("k", Number(0, RRF_K_MAX, "right"), 60, error=_E, grid=(10, 100, 10), argument="k")
_GAMMA = Parameter("gamma", Number(), None, error=_E, grid=(0.01, 1.0, 0.01), words="any finite number")
_SIGMA = Parameter("sigma", Number(0, 1), 0.01, error=_E, grid=(0.01, 1.0, 0.01), words="in [0, 1]")
_PHI = Parameter("phi", Number(0, 1, "neither"), None, error=_E, grid=(0.01, 1.0, 0.01), words="in (0, 1)")
_SEGMENTS = Parameter("n_segments", Whole(1, floats=True), None, error=_E, grid=(1, 100, 1))
_WINDOW = Parameter("w", Whole(0, floats=True), None, error=_E, grid=(1, 100, 1))
_BY_RANK = "per rank, the share of the judged queries' lists with a relevant document there"

#: Every method, by ranx's names, in ranx's order.
METHODS: dict[str, Method] = {
    method.name: method
    for method in (
        Method(
            "rrf",
            "`Σ 1 / (k + rank)`, rank from 1",
            m.reciprocal_rank,
            (RRF_K,),
            joiner=JoinMode(
                "reciprocal_rank_fusion",
                fixed={"k": 60},
                why="Haystack's reciprocal_rank_fusion fixes RRF's k at 60 (61 on 0-based ranks)",
            ),
        ),
        Method("sum", "CombSUM: `Σ score`", m.comb_sum, reads_scores=True, joiner=JoinMode("merge", raw_scores=True)),
        Method("mnz", "CombMNZ: `Σ score` × the number of runs that retrieved it", m.comb_mnz, reads_scores=True),
        Method("anz", "CombANZ: `Σ score` / the number of runs that retrieved it", m.comb_anz, reads_scores=True),
        Method(
            "gmnz",
            "`Σ score` × (the number of runs that retrieved it)^`gamma`",
            m.comb_gmnz,
            (_GAMMA,),
            reads_scores=True,
        ),
        Method(
            "max",
            "the highest score (a run that missed it: -1e9)",
            m.comb_max,
            reads_scores=True,
            joiner=JoinMode("concatenate", raw_scores=True),
        ),
        Method("min", "the lowest score (a run that missed it: 1e9)", m.comb_min, reads_scores=True),
        Method("med", "the median score of the runs that retrieved it", m.comb_med, reads_scores=True),
        Method(
            "wsum",
            "`Σ w_i score_i`",
            m.weighted_sum,
            weighted=True,
            reads_scores=True,
            joiner=JoinMode("merge", raw_scores=True, weights=True),
        ),
        Method(
            "wmnz",
            "`Σ score` × the weights of the runs that retrieved it, summed",
            m.weighted_mnz,
            weighted=True,
            reads_scores=True,
        ),
        Method("isr", "`Σ 1 / rank²` × the number of runs that retrieved it", m.inverse_square_rank),
        Method("log_isr", "`Σ 1 / rank²` × log(the number of runs that retrieved it)", m.log_inverse_square_rank),
        Method(
            "logn_isr",
            "`Σ 1 / rank²` × log(the number of runs that retrieved it + `sigma`)",
            m.logn_inverse_square_rank,
            (_SIGMA,),
        ),
        Method(
            "bordafuse",
            "Borda points `candidates - rank + 1`; a run that missed it gives the mean of its remaining points",
            m.borda,
        ),
        Method("w_bordafuse", "Borda points, weighted", m.weighted_borda, weighted=True),
        Method("condorcet", "the position after sorting by pairwise majority", m.condorcet),
        Method(
            "w_condorcet",
            "the position after sorting by weighted pairwise majority",
            m.weighted_condorcet,
            weighted=True,
        ),
        Method("rbc", "`Σ (1 - phi) phi^(rank - 1)`", m.rank_biased_centroid, (_PHI,)),
        Method(
            "mixed",
            "`Σ w_i score_i` × √(the number of runs that retrieved it)",
            m.mixed,
            weighted=True,
            reads_scores=True,
        ),
        Method(
            "bayesfuse",
            "`Σ` the log-odds of its rank segment (a run that missed it: log(0.001 / 0.999))",
            m.bayesfuse,
            training=Training(
                "per rank segment (cut at 5, 10, 15, 20, 30, 100, 200, 500, 1000), the log-odds of a relevant document",
                lambda hits, params: trained.bayes_log_odds(hits),
            ),
        ),
        Method(
            "posfuse",
            "`Σ` the probability of a relevant document at its rank",
            m.posfuse,
            training=Training(_BY_RANK, lambda hits, params: trained.positional_probs(hits)),
        ),
        Method(
            "probfuse",
            "`Σ` the probability of a relevant document in its segment / the segment's number",
            m.probfuse,
            (_SEGMENTS,),
            training=Training(
                "per segment of `n_segments`, the probability of a relevant document",
                lambda hits, params: trained.probfuse_probs(hits, params["n_segments"]),
            ),
        ),
        Method(
            "segfuse",
            "`Σ` the probability of a relevant document in its rank segment × (score + 1)",
            m.segfuse,
            reads_scores=True,
            training=Training(
                "per rank segment (10 × 2^(k-1) - 5), the probability of a relevant document",
                lambda hits, params: trained.segfuse_probs(hits),
            ),
        ),
        Method(
            "slidefuse",
            "`Σ` the mean probability of a relevant document over ranks `w` before to `w` after its own",
            m.slidefuse,
            (_WINDOW,),
            training=Training(_BY_RANK, lambda hits, params: trained.positional_probs(hits)),
        ),
        Method(
            "mapfuse",
            "`Σ` the run's MAP / rank",
            m.mapfuse,
            training=Training("each run's MAP", lambda hits, params: trained.mean_average_precision(hits)),
        ),
    )
}
#: Methods that take one weight per run (those that weight scores first, then those that weight ranks).
WEIGHTED = tuple(
    name
    for scores in (True, False)
    for name, method in METHODS.items()
    if method.weighted and method.reads_scores is scores
)
#: Methods trained on judgments (``qrels``).
TRAINED = tuple(name for name, method in METHODS.items() if method.training is not None)
#: What the join modes reproduce, for a message saying why no mode reproduces a method.
JOIN_MODES = {
    "reciprocal_rank_fusion": "ranx's rrf, k=60",
    "merge": "wsum or sum on raw scores",
    "concatenate": "max on raw scores",
}

#: The normalisations, by ranx's names.
NORMALIZATIONS: dict[str, Normalization] = {
    norm.name: norm
    for norm in (
        Normalization("min-max", "`(s - min) / (max - min)`", norms.min_max, ("min_max",)),
        Normalization(
            "min-max-inverted",
            "`(max - s) / (max - min)`, the run ranked again by it",
            norms.min_max_inverted,
            ("min_max_inverted",),
        ),
        Normalization("max", "`s / max`", norms.max_norm),
        Normalization("sum", "`(s - min) / (Σ s - n min)`", norms.sum_norm),
        Normalization("zmuv", "`(s - mean) / std` (z-score)", norms.zmuv),
        Normalization("rank", "`1 - (rank - 1) / n`, rank from 1", norms.rank_norm),
        Normalization(
            "borda",
            "`1 - (rank - 1) / candidates`; every candidate the run missed `0.5 - (retrieved - 1) / (2 candidates)`",
            norms.borda,
        ),
    )
}
#: How the command line (and ``norm=``) says "no normalisation".
NO_NORMALIZATION = "none"

#: The most configurations a search (:func:`~.optimize.optimize_fusion`) tries unless told otherwise
#: (``max_configurations=``, ``--max-configurations``): each is fused and scored (about 1 ms of CPU on the
#: shipped examples' 12 queries of 100 documents, 57 ms on 40 queries of 1,000), so about 10 s and 10 minutes
#: (docs/fusion.md).
MAX_CONFIGURATIONS = 10_000

_NORM_NAMES = {alias: norm.name for norm in NORMALIZATIONS.values() for alias in (norm.name, *norm.aliases)}


def fusion_method(name: str) -> Method:
    """The registry entry of ``name``; :raises FusionError: an unknown method (the known ones listed)."""
    if name not in METHODS:
        raise FusionError(f"unknown fusion method {name!r}; choose one of {', '.join(METHODS)}")
    return METHODS[name]


def norm_name(norm: str | None) -> str | None:
    """The canonical name of a normalisation (``None`` and ``"none"`` are no normalisation).

    :raises FusionError: an unknown normalisation.
    """
    if norm is None or norm == NO_NORMALIZATION:
        return None
    if norm not in _NORM_NAMES:
        raise FusionError(f"unknown normalisation {norm!r}; choose one of {', '.join(NORMALIZATIONS)} or none")
    return _NORM_NAMES[norm]


def parameter(name: str) -> Parameter | None:
    """The parameter called ``name`` (of whichever method takes it), or None."""
    return next((p for method in METHODS.values() for p in method.params if p.name == name), None)


__all__ = [
    "JOIN_MODES",
    "METHODS",
    "NORMALIZATIONS",
    "NO_NORMALIZATION",
    "RRF_K",
    "RRF_K_MAX",
    "TRAINED",
    "WEIGHTED",
    "JoinMode",
    "Method",
    "Normalization",
    "Parameter",
    "Training",
    "fusion_method",
    "norm_name",
    "parameter",
]
