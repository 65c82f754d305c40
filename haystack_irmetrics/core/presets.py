"""Presets are data: which ranking, query set and relevance rule each metric family uses.

Every awkward case is a named policy:

``ties``
    ``"trec"``: scores are compared as float32 (trec_eval 9 stores them so) and ties are broken
    by document id descending, in byte order (``'9'`` before ``'10'``). ``"stable"``: scores are
    compared as float64 and ties keep the order in which the documents appear in the results
    (Python's stable ``sorted(..., reverse=True)``, what BEIR's MRR and R_cap do).
``missing_queries``
    Queries judged in the qrels but absent from the results. ``"skip"``: not averaged (trec_eval,
    BEIR's NDCG/MAP/Recall/P). ``"zero"``: averaged with value 0 (``trec_eval -c``, BEIR's MRR and
    R_cap, which divide by ``len(qrels)``).
``ignore_identical_ids``
    Drop every retrieved document whose id equals its query id before scoring (BEIR's default).
    The caller's results are never modified.
``relevance_threshold``
    A label counts as relevant for the binary metrics (MAP, P, Recall, R_cap, MRR) when it is
    ``>= relevance_threshold``. ``None`` in the BEIR preset means BEIR's own rule per family:
    ``>= 1`` along pytrec_eval's path, ``> 0`` for MRR and R_cap. NDCG always uses the label as
    gain (negative labels count as 0).
``no_relevant``
    A query with no relevant judged document. ``"zero"``: every measure is 0 for it (trec_eval;
    R_cap too, where BEIR raises ZeroDivisionError). ``"skip"``: it is left out of the means.

Results queries that have no qrels entry (or an empty one) are never scored: nobody judged them
(pytrec_eval and trec_eval ignore them; BEIR's MRR raises KeyError). One exception reproduces BEIR:
its ``Hole@k`` adds such queries' shares to its sum (it needs no judgment of the query itself) while
still dividing by ``len(qrels)`` (``unjudged_in_sum``, for the families marked ``Family.beir_sums_unjudged``).

Which path each family takes (``Family.beir_path`` in :mod:`.measures`):

* NDCG (every gain/discount form), MAP, Recall, P, Rprec, F, GMAP, bpref, iP, iP_avg, Judged: trec
  ties, missing queries skipped, relevant >= 1, in both presets;
* MRR, R_cap, Success (BEIR's ``top_k_acc``): in the BEIR preset stable ties, relevant > 0 and the mean
  over ``len(qrels)``; in the TREC preset as the first group;
* Hole: in the BEIR preset as MRR, and results queries nobody judged are summed too; in the TREC preset
  as the first group (scored queries only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from ..checks import choice, number
from ..errors import InvalidPolicyError
from .measures import FAMILIES

Ties = Literal["trec", "stable"]
MissingQueries = Literal["skip", "zero"]
NoRelevant = Literal["zero", "skip"]

TIES = ("trec", "stable")
MISSING = ("skip", "zero")
NO_RELEVANT = ("zero", "skip")


@dataclass(frozen=True)
class FamilyPolicy:
    """How one metric family ranks, which queries it averages, and what counts as relevant."""

    ties: Ties = "trec"
    missing_queries: MissingQueries = "skip"
    # BEIR's MRR/R_cap divide by len(qrels), which counts qrels entries whose dict is empty.
    count_empty_qrels: bool = False
    # None: use the preset's relevance_threshold; a float: compare with '>' instead (BEIR's '> 0').
    positive_above: float | None = None
    # BEIR's Hole: results queries without judgments add to the sum, not to the count.
    unjudged_in_sum: bool = False


@dataclass(frozen=True)
class Preset:
    """The evaluation policy, as one value: a named preset (:data:`BEIR`, :data:`TREC`) with any
    overrides applied by :func:`resolve_preset`, the one place that validates them. Entry points (the
    public functions' keyword arguments, the components' init parameters, the CLI's options) resolve
    their policies once into a ``Preset`` and pass it down as ``preset=``; nothing below restates them.
    """

    name: str
    families: Mapping[str, FamilyPolicy]
    ignore_identical_ids: bool
    relevance_threshold: float
    round_digits: int | None
    no_relevant: NoRelevant = "zero"
    description: str = field(default="", compare=False)

    def policy(self, family: str) -> FamilyPolicy:
        return self.families[family]


def relevant_labels(labels: np.ndarray, policy: FamilyPolicy, threshold: float) -> np.ndarray:
    """Which ``labels`` are relevant under a family's policy: ``> positive_above``, else ``>= threshold``."""
    if policy.positive_above is not None:
        return labels > policy.positive_above
    return labels >= threshold


_PYTREC = FamilyPolicy(ties="trec", missing_queries="skip")
_BEIR_CUSTOM = FamilyPolicy(ties="stable", missing_queries="zero", count_empty_qrels=True, positive_above=0.0)
_BEIR_HOLE = replace(_BEIR_CUSTOM, unjudged_in_sum=True)


def _beir_policy(family: str) -> FamilyPolicy:
    if FAMILIES[family].beir_path == "pytrec":
        return _PYTREC
    return _BEIR_HOLE if FAMILIES[family].beir_sums_unjudged else _BEIR_CUSTOM


BEIR = Preset(
    name="beir",
    families={f: _beir_policy(f) for f in FAMILIES},
    ignore_identical_ids=True,
    relevance_threshold=1.0,
    round_digits=5,
    description="beir 2.2.0 EvaluateRetrieval.evaluate + evaluate_custom('mrr'/'r_cap'/'top_k_acc'/'hole'), bit for bit",
)

TREC = Preset(
    name="trec",
    families={f: _PYTREC for f in FAMILIES},
    ignore_identical_ids=False,
    relevance_threshold=1.0,
    round_digits=None,
    description="trec_eval semantics for every family: float32 ties by doc id, MRR = recip_rank cut at k",
)

PRESETS: dict[str, Preset] = {p.name: p for p in (BEIR, TREC)}


def resolve_preset(
    preset: str | Preset = "beir",
    *,
    ties: Ties | None = None,
    missing_queries: MissingQueries | None = None,
    ignore_identical_ids: bool | None = None,
    relevance_threshold: float | None = None,
    no_relevant: NoRelevant | None = None,
) -> Preset:
    """A preset with the caller's overrides applied; an override applies to every family."""
    if isinstance(preset, Preset):
        base = preset
    else:
        try:
            base = PRESETS[preset]
        except (KeyError, TypeError):
            raise InvalidPolicyError(f"unknown preset {preset!r}; known: {sorted(PRESETS)}") from None
    families = dict(base.families)
    if ties is not None:
        choice(ties, "ties", TIES, error=InvalidPolicyError)
        families = {f: replace(p, ties=ties) for f, p in families.items()}
    if missing_queries is not None:
        choice(missing_queries, "missing_queries", MISSING, error=InvalidPolicyError)
        families = {
            f: replace(p, missing_queries=missing_queries, count_empty_qrels=False, unjudged_in_sum=False)
            for f, p in families.items()
        }
    threshold = base.relevance_threshold
    if relevance_threshold is not None:
        # labels <= 0 are never relevant
        number(relevance_threshold, "relevance_threshold", 0, closed="neither", finite=False, error=InvalidPolicyError)
        try:
            threshold = float(relevance_threshold)
        except OverflowError:  # an int beyond any float
            raise InvalidPolicyError(
                f"relevance_threshold, an int of {relevance_threshold.bit_length():,} bits, is beyond any float "
                "(no label could reach it)"
            ) from None
        # An explicit threshold is one rule for every binary family, BEIR's '> 0' included.
        families = {f: replace(p, positive_above=None) for f, p in families.items()}
    if no_relevant is not None:
        choice(no_relevant, "no_relevant", NO_RELEVANT, error=InvalidPolicyError)
    if ignore_identical_ids is not None and not isinstance(ignore_identical_ids, bool):
        raise InvalidPolicyError(f"ignore_identical_ids must be True or False, got {ignore_identical_ids!r}")
    return replace(
        base,
        families=families,
        relevance_threshold=threshold,
        ignore_identical_ids=base.ignore_identical_ids if ignore_identical_ids is None else ignore_identical_ids,
        no_relevant=base.no_relevant if no_relevant is None else no_relevant,
    )
