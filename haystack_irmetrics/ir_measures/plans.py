"""Which ir_measures measures the core computes exactly as ir_measures' reference provider does, and how.

:func:`plan` reads one ir_measures measure (``nDCG@10``, ``AP(rel=2)``, ``SetF(beta=0.25)``) and answers
a :class:`Plan`: the core's :class:`~haystack_irmetrics.core.measures.Measure`, the relevance threshold, the
ranking order the reference uses, and which of its queries the reference counts; or ``None`` where the core
cannot give the reference's number (the provider then declines it and ir_measures asks the next provider).
The references are ir_measures' own: pytrec_eval (trec_eval's order: float32 scores, ties by doc id
descending), gdeval (float64 scores, ties by doc id descending), msmarco and judged (float64 scores, ties by
doc id ascending) and cwl_eval (float64 scores, ties in input order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from ..checks import is_number, is_whole
from ..core.measures import Measure

#: How a plan ranks: the core's trec_eval order, or an order the core is handed as ranked lists
#: (``id_desc``: float64 scores then doc id descending, gdeval's; ``id_asc``: ascending, msmarco's and
#: judged's), or the core's stable order (float64, ties in input order: cwl_eval's and BEIR's).
Order = Literal["trec", "stable", "id_desc", "id_asc"]
#: Measures made from the counts the core computes, with trec_eval's arithmetic (``m_set_*.c``).
Derived = Literal["SetP", "SetRelP", "SetR", "SetAP", "Judged", "NCG"]

#: cwl_eval's RBP weighs ranks up to 1,000 only: the core's RBP@1000 equals it where the weight past them,
#: p**1000, is below the last bit of any value (declined above).
_CWL_DEPTH = 1000


@dataclass(frozen=True)
class Plan:
    """How the core computes one ir_measures measure as its reference provider does.

    ``core``: the core's measure (for a derived one, ``None``: ``derived`` names it and ``counts`` are read);
    ``threshold``: labels at or above it are relevant; ``judged_only``: unjudged documents are removed from
    the ranking first (trec_eval's ``-J``); ``order``: the ranking; ``all_keys``: the reference counts a
    qrels query whose judgments are an empty dict (its conversion keeps dict keys) at the default value.
    """

    core: Measure | None
    threshold: float = 1.0
    judged_only: bool = False
    order: Order = "trec"
    all_keys: bool = True
    derived: Derived | None = None
    cutoff: int | None = None

    @property
    def needs(self) -> list[Measure]:
        """The core's measures this plan reads."""
        if self.derived is None:
            return [self.core]  # type: ignore[list-item]
        if self.derived == "NCG":  # read from the core's gain curves
            return []
        if self.derived == "Judged":
            return [Measure("Judged", self.cutoff or _MAX), Measure("num_ret")]
        return [Measure("num_ret"), Measure("num_rel_ret"), Measure("num_rel")]


_MAX = 2**31 - 1


def _param(measure: Any, name: str) -> Any:
    """A parameter of the measure, ``None`` where not given (ir_measures' NOT_PROVIDED)."""
    value = measure[name] if name in measure.SUPPORTED_PARAMS else None
    return None if value is _sentinel() else value


def _sentinel() -> Any:
    from ir_measures.providers.base import NOT_PROVIDED

    return NOT_PROVIDED


def _rel(measure: Any) -> float | None:
    """The relevance threshold ``rel``: an int of at least 1 (the core's thresholds are positive)."""
    rel = _param(measure, "rel")
    if rel is None:
        return 1.0
    if not is_whole(rel) or rel < 1:
        return None
    return float(rel)


def _gains(gains: Any) -> dict[int, int] | None:
    """ir_measures' ``gains`` as the core's gain map: int grades and gains, both at least 0 (trec_eval reads
    int labels; the core's map takes no negative grade or gain)."""
    if not isinstance(gains, dict) or not gains:
        return None
    for grade, gain in gains.items():
        for x in (grade, gain):
            if not is_whole(x) or x < 0:
                return None
    return gains


def _binary(measure: Any, family: str, cutoff: int | None, level: float | None = None) -> Plan | None:
    """P, R, AP, RR, Rprec, Success, IPrec: pytrec_eval at ``relevance_level=rel``, with ``judged_only``."""
    rel = _rel(measure)
    if rel is None:
        return None
    core = Measure(family, level=level) if level is not None else Measure(family, cutoff)
    return Plan(core, rel, bool(_param(measure, "judged_only")))


def _ndcg(measure: Any) -> Plan | None:
    cutoff, judged = _param(measure, "cutoff"), bool(_param(measure, "judged_only"))
    dcg, gains = _param(measure, "dcg"), _param(measure, "gains")
    if dcg == "exp-log2":  # gdeval's nDCG@k: 2^g - 1 gains, float64 order, ties by doc id descending
        if cutoff is None or gains is not None or judged:
            return None
        return Plan(Measure("NDCG", cutoff, gain="exp"), order="id_desc", all_keys=False)
    if gains is not None:
        gains = _gains(gains)
        if gains is None:
            return None
    return Plan(Measure("NDCG", cutoff, gain=gains), judged_only=judged)


def _setf(measure: Any) -> Plan | None:
    """trec_eval's set_F.x is (x + 1) P R / (x P + R) with x = beta; the core's F squares its beta, so only a
    beta whose square root squares back to it exactly is taken."""
    rel, beta = _rel(measure), _param(measure, "beta")
    beta = 1.0 if beta is None else beta
    if rel is None or not is_number(beta) or not beta > 0:
        return None
    root = math.sqrt(beta)
    if root * root != beta or not 1e-150 < root < 1e150:
        return None
    return Plan(Measure("F", beta=root), rel, bool(_param(measure, "judged_only")))


def _set(measure: Any, derived: Derived) -> Plan | None:
    rel = _rel(measure)
    if rel is None:
        return None
    judged = bool(_param(measure, "judged_only")) if "judged_only" in measure.SUPPORTED_PARAMS else False
    return Plan(None, rel, judged, derived=derived)


def _numret(measure: Any) -> Plan | None:
    if _param(measure, "rel") is None:
        return Plan(Measure("num_ret"))
    rel = _rel(measure)
    return None if rel is None else Plan(Measure("num_rel_ret"), rel)


def _rr(measure: Any) -> Plan | None:
    cutoff = _param(measure, "cutoff")
    if cutoff is None:
        return _binary(measure, "MRR", None)
    if _param(measure, "judged_only"):  # msmarco's RR@k takes no judged_only; nothing in ir_measures does
        return None
    rel = _rel(measure)
    # msmarco's RR@k: float64 scores, ties by doc id ascending; its queries come from qrels rows.
    return None if rel is None else Plan(Measure("MRR", cutoff), rel, order="id_asc", all_keys=False)


def _rbp(measure: Any) -> Plan | None:
    """cwl_eval's binary RBP (``rel`` given, no cutoff): float64 scores, ties in input order, ranks to 1,000."""
    p, rel = _param(measure, "p"), _param(measure, "rel")
    p = 0.8 if p is None else p
    if rel is None or _param(measure, "cutoff") is not None or _rel(measure) is None:
        return None
    if not is_number(p) or not 0 < p < 1 or p**_CWL_DEPTH > 2.0**-60:
        return None
    return Plan(Measure("RBP", _CWL_DEPTH, p=float(p), rel=float(rel)), order="stable", all_keys=False)


def _judged(measure: Any) -> Plan:
    """judged's Judged@k: float64 order, ties by doc id ascending, judged in the top k / min(k, retrieved)."""
    return Plan(None, order="id_asc", derived="Judged", cutoff=_param(measure, "cutoff"))


def _plan(measure: Any) -> Plan | None:
    name = measure.NAME
    cutoff = _param(measure, "cutoff")
    if name == "nDCG":
        return _ndcg(measure)
    if name in ("P", "R", "AP", "Success"):
        family = {"P": "P", "R": "Recall", "AP": "MAP", "Success": "Success"}[name]
        if cutoff is None and name in ("P", "R", "Success"):
            return None
        return _binary(measure, family, cutoff)
    if name == "RR":
        return _rr(measure)
    if name == "Rprec":
        return _binary(measure, "Rprec", None)
    if name == "IPrec":
        recall = _param(measure, "recall")
        if not is_number(recall) or not 0 <= recall <= 1:
            return None
        # pytrec_eval's provider names the level with two decimals (iprec_at_recall_0.33).
        return _binary(measure, "iP", None, float(f"{recall:.2f}"))
    simple = {"Bpref": "bpref", "infAP": "infAP"}
    if name in simple:
        rel = _rel(measure)
        return None if rel is None else Plan(Measure(simple[name]), rel)
    if name == "NumQ":
        return Plan(Measure("num_q"))
    if name == "NumRel":  # pytrec_eval's num_rel is supported at rel=1 only (its provider's note)
        return Plan(Measure("num_rel")) if _param(measure, "rel") in (None, 1) else None
    if name == "NumRet":
        return _numret(measure)
    if name == "SetF":
        return _setf(measure)
    if name == "SetP":
        return _set(measure, "SetRelP" if _param(measure, "relative") else "SetP")
    if name in ("SetR", "SetAP"):
        return _set(measure, name)
    if name == "ERR":  # gdeval's ERR@k
        return None if cutoff is None else Plan(Measure("ERR", cutoff), order="id_desc", all_keys=False)
    if name == "RBP":
        return _rbp(measure)
    if name == "Judged":
        return _judged(measure)
    if name == "NCG":  # this package's measure (.extras): CG@k over the ideal's, linear gains, trec_eval's order
        return Plan(None, derived="NCG", cutoff=cutoff)
    return None


def plan(measure: Any) -> Plan | None:
    """The plan of one ir_measures measure, or ``None`` where the core does not give its reference's value."""
    try:
        measure.validate_params()
    except AssertionError:
        return None
    from ..errors import IRMetricsError

    try:
        return _plan(measure)
    except IRMetricsError:  # a parameter the core refuses (a cutoff beyond 2**31 - 1, ...): not ours
        return None
