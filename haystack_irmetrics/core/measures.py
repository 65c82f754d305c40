"""Measures as values: a family plus a cutoff, with a canonical name, kept apart from kernels.

A :class:`Measure` is what a user asks for (``NDCG@10``); a :class:`Family` says which kernel
computes it and how BEIR computes it. The canonical names are BEIR's result keys, so a mean
dictionary from :func:`haystack_irmetrics.evaluate` can be compared key for key with
``EvaluateRetrieval.evaluate``. Names used by trec_eval, ir_measures and ranx are accepted as
aliases (``ndcg_cut_10``, ``nDCG@10``, ``map_cut.10``, ``RR@10``, ``recall_100``, ``precision@5``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..errors import DuplicateCutoffError, InvalidCutoffError, UnknownMeasureError

KernelKind = Literal["gain", "binary"]
BeirPath = Literal["pytrec", "custom"]


@dataclass(frozen=True)
class Family:
    """A metric family: one kernel, with the cutoff (and later other variants) as parameters."""

    name: str
    kernel: KernelKind
    beir_path: BeirPath
    formula: str
    aliases: tuple[str, ...] = ()


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("NDCG", "gain", "pytrec", "DCG@k / IDCG@k, DCG = sum_{i<k} gain_i / log2(i+2)", ("ndcg", "ndcg_cut")),
        Family("MAP", "binary", "pytrec", "sum_{i<k, rel} hits_i/(i+1) / R", ("map", "map_cut", "ap", "ap_cut")),
        Family("Recall", "binary", "pytrec", "hits@k / R", ("recall", "r")),
        Family("P", "binary", "pytrec", "hits@k / k", ("p", "precision", "prec")),
        Family(
            "MRR",
            "binary",
            "custom",
            "1/(i+1) for the first relevant i < k",
            ("mrr", "rr", "recip_rank", "mrr_cut", "mrr@k"),
        ),
        Family("R_cap", "binary", "custom", "hits@k / min(R, k)", ("r_cap", "recall_cap", "rcap", "capped_recall")),
    )
}

_ALIASES: dict[str, str] = {}
for _family in FAMILIES.values():
    _ALIASES[_family.name.lower()] = _family.name
    for _alias in _family.aliases:
        _ALIASES[_alias.lower()] = _family.name

# "NDCG@10", "ndcg_cut_10", "ndcg_cut.10", "P_5", "R_cap@100"
_NAME_RE = re.compile(r"^\s*(?P<family>[A-Za-z][A-Za-z_]*?)(?:\s*(?:@|\.|_)\s*(?P<k>[-+]?\d+))?\s*$")


@dataclass(frozen=True, order=True)
class Measure:
    """A measure value: ``Measure("NDCG", 10)`` prints and parses as ``NDCG@10``."""

    family: str
    cutoff: int

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise UnknownMeasureError(f"unknown measure family {self.family!r}; known: {sorted(FAMILIES)}")
        check_cutoff(self.cutoff)

    @property
    def name(self) -> str:
        return f"{self.family}@{self.cutoff}"

    @property
    def spec(self) -> Family:
        return FAMILIES[self.family]

    def __str__(self) -> str:
        return self.name


def check_cutoff(k: object) -> int:
    """Return ``k`` if it is a positive integer, else raise :class:`InvalidCutoffError`."""
    if isinstance(k, bool) or not isinstance(k, int | _np_integer()):
        raise InvalidCutoffError(f"cutoff k must be a positive integer, got {k!r} ({type(k).__name__})")
    if k <= 0:
        raise InvalidCutoffError(f"cutoff k must be a positive integer, got {k}")
    return int(k)


def _np_integer() -> type:
    import numpy as np

    return np.integer


def check_k_values(k_values: Iterable[object]) -> list[int]:
    """Validate a list of cutoffs: positive integers, no duplicates, at least one."""
    ks = [check_cutoff(k) for k in k_values]
    if not ks:
        raise InvalidCutoffError("k_values is empty; give at least one cutoff")
    seen: set[int] = set()
    for k in ks:
        if k in seen:
            raise DuplicateCutoffError(
                f"cutoff {k} is given twice in k_values {ks}; BEIR would silently double its value"
            )
        seen.add(k)
    return ks


def family_of(name: str) -> str:
    """Canonical family name for any accepted alias (case-insensitive)."""
    try:
        return _ALIASES[name.strip().lower()]
    except KeyError:
        raise UnknownMeasureError(f"unknown measure {name!r}; known families: {sorted(FAMILIES)}") from None


def parse_measure(text: str | Measure) -> Measure:
    """Parse ``NDCG@10`` (or an alias such as ``ndcg_cut_10``, ``RR@10``) into a :class:`Measure`."""
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise UnknownMeasureError(f"a measure is a name like 'NDCG@10', got {text!r}")
    m = _NAME_RE.match(text)
    if m is None or m.group("k") is None:
        raise UnknownMeasureError(f"cannot parse measure {text!r}; expected a name like 'NDCG@10'")
    return Measure(family_of(m.group("family")), check_cutoff(int(m.group("k"))))


def resolve_measures(measures: Sequence[str | Measure] | None, k_values: Sequence[int] | None) -> list[Measure]:
    """Turn the user's ``measures`` and ``k_values`` into an ordered, duplicate-free list.

    ``measures`` may hold full names (``NDCG@10``) or bare families (``NDCG``), which are crossed
    with ``k_values``. ``None`` means BEIR's six families. Order: as given, families first.
    """
    families: list[str] = []
    explicit: list[Measure] = []
    for item in measures if measures is not None else list(FAMILIES):
        if isinstance(item, Measure):
            explicit.append(item)
        elif isinstance(item, str) and _NAME_RE.match(item) and _NAME_RE.match(item).group("k") is None:
            families.append(family_of(item))
        else:
            explicit.append(parse_measure(item))
    out: list[Measure] = []
    if families:
        if k_values is None:
            raise InvalidCutoffError(f"measures {families} need cutoffs: pass k_values")
        ks = check_k_values(k_values)
        out.extend(Measure(f, k) for f in dict.fromkeys(families) for k in ks)
    elif k_values is not None:
        check_k_values(k_values)
    for m in explicit:
        if m in out:
            raise DuplicateCutoffError(f"measure {m} is requested twice")
        out.append(m)
    if not out:
        raise UnknownMeasureError("no measure requested")
    return out
