"""The registry of click models: what each model is, as data (what ``core/families.py`` is for measures).

One :class:`ClickModelEntry` per model: its class (the name, the fit and the simulation are the class's:
``model.name``, :meth:`~.models.ClickModel.fit`, :meth:`~.models.ClickModel.simulate`), its other names, its
parameters with their ranges (what :meth:`ClickModelEntry.with_parameters` and the simulations take), how it
is fitted and what its click-derived qrels label is (the table of docs/clicks.md, :func:`models_table`), its
sufficient statistics for logs beyond one machine (:mod:`.sufficient`), and whether it labels documents at
all (``per_document``). ``irmetrics clicks``' choices and help, :func:`~.evaluation.make_model`,
:mod:`.simulate` and :mod:`.statistics` read it; no other module compares a model's name.

Usage::

    >>> from haystack_irmetrics.clicks.registry import entry
    >>> e = entry("DCTR")
    >>> e.name, e.aliases, [p.name for p in e.parameters], e.per_document
    ('ctr', ('dctr',), ['attractiveness'], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..checks import Number, Param
from ..errors import ClickModelError
from .cascade import DCM, SDBN, Cascade
from .dbn import DBN
from .log import Sessions
from .models import PBM, UBM, ClickModel, DocumentCTR, GlobalCTR, RankCTR
from .sufficient import EXAMINED, SLOTS, TAILS, Statistics

Over = Literal["pair", "rank", "rank, previous click", "one"]
#: How many values each kind of parameter holds: one per (query, document) pair, per rank, per (rank, rank of
#: the previous click), or one.
SHAPES: dict[str, int] = {"pair": 1, "rank": 1, "rank, previous click": 2, "one": 0}


#: A model's parameter is a :class:`~haystack_irmetrics.checks.Param` (the one parameter type of every
#: registry), under its old name here: its name (as :meth:`~.models.ClickModel.params` names it), its rule
#: (every value a probability), the value a simulation takes when it is not given (``None``: it must be given)
#: and what one value is per (``over``).
Parameter = Param


def probability(name: str, over: Over, default: float | None = None) -> Param:
    """A model's parameter: probabilities in [0, 1], one per ``over``."""
    doc = "a probability" if over == "one" else f"a probability per {over}"
    return Param(name, Number(0, 1), default, doc, ClickModelError, over)


def parameter_value(p: Param, model: str, given: Any, pairs: Sessions) -> Any:
    """``given`` (or ``p``'s default) as the model's array or number, its shape and range checked.

    A per-pair value may be a number or a function of (query, doc).
    :raises ClickModelError: a value missing, of the wrong shape, or outside the range.
    """
    if given is None:
        given = p.default
    if given is None:
        raise ClickModelError(f"{model} needs {p.name} probabilities")
    if p.over == "pair":
        queries, docs = pairs.pair_names()
        if callable(given):
            value = np.array([float(given(q, d)) for q, d in zip(queries, docs, strict=True)])
        else:
            value = np.full(pairs.n_pairs, float(given))
    else:
        value = np.asarray(given, dtype=float)
    if value.ndim != SHAPES[p.over]:
        raise ClickModelError(f"{model}: {p.name} is one value per {p.over}, got an array of {value.shape}")
    if not np.all((value >= p.low) & (value <= p.high)):  # NaN too; an array's range, checked at once
        raise ClickModelError(f"{model}: every {p.name} must be in [{p.low:g}, {p.high:g}]")
    return float(value) if p.over == "one" else value


@dataclass(frozen=True)
class ClickModelEntry:
    """A click model: its class (``model``: name, fit, probabilities, simulation), other names, parameters,
    the docs' words for what it holds (``summary``), how it is fitted (``fitted_by``) and what its qrels label
    is (``label``), and its sufficient statistics (``statistics``)."""

    model: type[ClickModel]
    parameters: tuple[Param, ...]
    summary: str
    fitted_by: str
    label: str
    statistics: Statistics
    aliases: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def per_document(self) -> bool:
        """Whether its labels tell documents apart (False: one value for every pair, no qrels)."""
        return self.model.per_document

    def make(self, **options: Any) -> ClickModel:
        """A new, unfitted model; ``options``: ``max_iter``, ``tol``, ``accelerate``."""
        return self.model(**options)

    def with_parameters(self, pairs: Sessions, **given: Any) -> ClickModel:
        """The model with known parameters over ``pairs``' pair table (a simulation's truth): each of
        :attr:`parameters` by its name, checked, its default where not given; others are refused.

        :raises ClickModelError: a parameter the model does not have, or one missing, misshapen or out of range.
        """
        names = {p.name for p in self.parameters}
        unknown = sorted(k for k, v in given.items() if k not in names and v is not None)
        if unknown:
            raise ClickModelError(f"{self.name} has no parameter {', '.join(unknown)}; its parameters: {sorted(names)}")
        values = {p.name: parameter_value(p, self.name, given.get(p.name), pairs) for p in self.parameters}
        return self.model.from_parameters(pairs, **values)


ATTRACTIVENESS = probability("attractiveness", "pair", default=0.5)
SATISFACTION = probability("satisfaction", "pair", default=0.5)

#: Every click model, in the order the docs list them (from one click rate to the DBN).
ENTRIES: tuple[ClickModelEntry, ...] = (
    ClickModelEntry(
        GlobalCTR,
        (probability("click_probability", "one"),),
        "one click rate",
        "clicks / impressions",
        "none: one value for every document",
        SLOTS,
    ),
    ClickModelEntry(
        RankCTR,
        (probability("click_probability", "rank"),),
        "a click rate per rank",
        "clicks / impressions per rank",
        "none: not per document",
        SLOTS,
    ),
    ClickModelEntry(
        DocumentCTR,
        (ATTRACTIVENESS,),
        "a click rate per (query, document)",
        "clicks / impressions",
        "the click rate",
        SLOTS,
        aliases=("dctr",),
    ),
    ClickModelEntry(
        PBM,
        (ATTRACTIVENESS, probability("examination", "rank")),
        "attractiveness per (query, document), examination per rank",
        "EM",
        "attractiveness",
        SLOTS,
    ),
    ClickModelEntry(
        UBM,
        (ATTRACTIVENESS, probability("examination", "rank, previous click")),
        "attractiveness; examination per (rank, rank of the previous click)",
        "EM",
        "attractiveness",
        SLOTS,
    ),
    ClickModelEntry(
        Cascade,
        (ATTRACTIVENESS,),
        "attractiveness",
        "closed form: the ranks up to the first click",
        "attractiveness",
        EXAMINED,
    ),
    ClickModelEntry(
        DCM,
        (ATTRACTIVENESS, probability("continuation", "rank")),
        "attractiveness; continuation after a click, per rank",
        "closed form: the ranks up to the last click",
        "attractiveness",
        EXAMINED,
    ),
    ClickModelEntry(
        SDBN,
        (ATTRACTIVENESS, SATISFACTION),
        "attractiveness, satisfaction",
        "closed form: the ranks up to the last click",
        "attractiveness x satisfaction",
        EXAMINED,
    ),
    ClickModelEntry(
        DBN,
        (ATTRACTIVENESS, SATISFACTION, probability("continuation", "one", default=1.0)),
        "attractiveness, satisfaction, one continuation gamma",
        "EM",
        "attractiveness x satisfaction",
        TAILS,
    ),
)

#: Every name a model answers to (its own, then its aliases), in :data:`ENTRIES`' order.
MODELS: tuple[str, ...] = tuple(n for e in ENTRIES for n in e.names)
_BY_NAME: dict[str, ClickModelEntry] = {n: e for e in ENTRIES for n in e.names}


def find(name: Any) -> ClickModelEntry | None:
    """The entry of ``name`` (any case, or an alias), or None."""
    return _BY_NAME.get(name.lower()) if isinstance(name, str) else None


def entry(name: Any) -> ClickModelEntry:
    """The entry of ``name`` (any case, or an alias).

    :raises ClickModelError: an unknown name.
    """
    found = find(name)
    if found is None:
        raise ClickModelError(f"unknown click model {name!r}; known: {', '.join(MODELS)}")
    return found


def models_table(names: Sequence[ClickModelEntry] = ENTRIES) -> str:
    """The markdown table of the models (docs/clicks.md's): ``--model``, parameters, fitted by, qrels label."""
    from ..io.tables import markdown_row

    lines = [markdown_row(["`--model`", "parameters", "fitted by", "qrels label"]), "|---|---|---|---|"]
    for e in names:
        called = f"`{e.name}`" + "".join(f" (= `{a}`)" for a in e.aliases)
        lines.append(markdown_row([called, e.summary, e.fitted_by, e.label]))
    return "\n".join(lines)


__all__ = ["ENTRIES", "MODELS", "ClickModelEntry", "Parameter", "entry", "find", "models_table"]
