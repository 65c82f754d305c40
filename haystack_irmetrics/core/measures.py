"""Measures as values: a family, a cutoff and variant parameters, with a canonical name; each family carries its kernel.

A :class:`Measure` is what a user asks for (``NDCG@10``, ``nDCG_exp@10``, ``iP@0.3``, ``Rprec``); a
:class:`Family` says which kernel computes it, what its ``@`` part means (a cutoff k, a recall level,
or nothing), which variant parameters it takes, and which path it follows in the BEIR preset.

BEIR's six print as BEIR's result keys (``NDCG@10``, ``MAP@10``, ``Recall@10``, ``P@10``, ``MRR@10``,
``R_cap@100``), so a mean dictionary from :func:`haystack_irmetrics.evaluate` compares key for key
with ``EvaluateRetrieval.evaluate``. Names used by trec_eval, ir_measures and ranx are accepted as
aliases (``ndcg_cut_10``, ``nDCG@10``, ``map_cut.10``, ``RR@10``, ``recall_100``, ``precision@5``,
``iprec_at_recall_0.30``, ``gm_map``, ``set_F``, ``success_10``, ``top_k_acc@10``).

The name grammar, case-insensitive on the family part::

    name    := family ['(' param (',' param)* ')'] [('@' | '.' | '_') at]
    param   := key '=' (number | word | '{' grade ':' gain (',' grade ':' gain)* '}')
    at      := integer cutoff k | recall level in [0, 1] (iP only)

Every measure prints in one canonical form, and ``parse_measure(str(m)) == m``::

    >>> from haystack_irmetrics.core.measures import Measure, parse_measure
    >>> [str(parse_measure(x)) for x in ("ndcg_cut_10", "nDCG_exp@10", "iprec_at_recall_0.30", "gm_map", "set_F")]
    ['NDCG@10', 'nDCG_exp@10', 'iP@0.3', 'GMAP', 'F']
    >>> str(Measure("NDCG", 10, gain={0: 0, 1: 1, 2: 3})), str(Measure("F", 5, beta=0.5))
    ('nDCG(gains={0:0,1:1,2:3})@10', 'F(beta=0.5)@5')
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from ..checks import Number, Param, Whole, choice, is_number, number, refuse, whole
from ..errors import DuplicateCutoffError, InvalidCutoffError, UnknownMeasureError
from .families import BEIR_FAMILIES, FAMILIES, STANDARD_LEVELS, Family  # the registry, re-exported here
from .kernels import MIN_GEO_MEAN  # trec_eval's gm_map floor, kept importable here

__all__ = [
    "BEIR_FAMILIES",
    "FAMILIES",
    "MIN_GEO_MEAN",
    "STANDARD_LEVELS",
    "Family",
    "Measure",
    "check_cutoff",
    "check_k_values",
    "check_level",
    "family_of",
    "parse_measure",
    "resolve_measures",
]  # fmt: skip


_ALIASES: dict[str, tuple[str, Mapping[str, Any]]] = {}
for _family in FAMILIES.values():
    _ALIASES[_family.name.lower()] = (_family.name, {})
    for _alias in _family.aliases:
        _ALIASES[_alias.lower()] = (_family.name, {})
    for _alias, _params in _family.variant_aliases.items():
        _ALIASES[_alias.lower()] = (_family.name, _params)

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
# "NDCG@10", "ndcg_cut_10", "ndcg_cut.10", "P_5", "R_cap@100", "iP@0.3", "nDCG(gains={0:0,1:2})@5"
_NAME_RE = re.compile(
    r"^\s*(?P<family>[A-Za-z0-9][A-Za-z0-9_-]*?)\s*(?:\((?P<params>[^()]*)\))?"
    rf"(?:\s*(?:@|\.|_)\s*(?P<k>{_NUM}))?\s*$"
)
_GAIN_FORMS = {"linear": None, "lin": None, "exp": "exp", "exponential": "exp", "burges": "exp"}
_DISCOUNTS = {"log2": None, "trec": None, "jk": "jk", "jarvelin": "jk", "jarvelin_kekalainen": "jk"}
GainMap = tuple[tuple[float, float], ...]


def _num(x: float) -> str:
    """A number as the canonical name writes it: ``3``, ``0.5``, ``1e-06``."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


@dataclass(frozen=True)
class Measure:
    """A measure value; prints and parses round-trip.

    :param family: a registered family name (``"NDCG"``, ``"Rprec"``, ``"iP"``, ...; see :data:`FAMILIES`).
    :param cutoff: the cutoff k; for ``iP`` the recall level may be given here or as ``level``.
    :param gain: NDCG only: ``None`` (linear, trec/BEIR), ``"exp"`` (``2^rel - 1``, Burges) or a
        ``{grade: gain}`` map (trec_eval ``ndcg`` parameters; grades not in the map keep gain = grade).
    :param discount: NDCG only: ``None`` (``log2(rank + 1)``) or ``"jk"`` (Järvelin-Kekäläinen:
        ranks 1 and 2 undiscounted, then ``log2(rank)``).
    :param level: iP only: the recall level in [0, 1].
    :param beta: F only: weight of recall (``None`` = 1).
    :param p: RBP, RBP_residual and Compat: the persistence, in (0, 1) (``None``: 0.8; Compat 0.95).
    :param rel: RBP and RBP_residual: labels ``>= rel`` count as relevant, gain 1 (``None``: the label is the gain).
    :param max_rel: ERR and nERR: the top grade of the scale (``None``: gdeval's 4).
    :param alpha: alpha_nDCG and NRBP: ndeval's redundancy penalty in [0, 1] (``None``: 0.5); NRBP's
        ``beta`` is its patience in (0, 1) (``None``: 0.5). The diversity families' ``rel`` is their
        relevance level (``None``: 1).

    ``Measure("NDCG", 10)`` is ``NDCG@10``; ``Measure("NDCG", 10, gain="exp")`` is ``nDCG_exp@10``;
    ``Measure("iP", level=0.3)`` is ``iP@0.3``; ``Measure("Rprec")`` is ``Rprec``.
    """

    family: str
    cutoff: int | None = None
    gain: str | GainMap | None = None
    discount: str | None = None
    level: float | None = None
    beta: float | None = None
    p: float | None = None
    rel: float | None = None
    max_rel: float | None = None
    alpha: float | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise UnknownMeasureError(f"unknown measure family {self.family!r}; known: {sorted(FAMILIES)}")
        spec = FAMILIES[self.family]
        given = {p for p in ("gain", "discount", "beta", *PARAMS) if getattr(self, p) is not None}
        if given - spec.params:
            raise UnknownMeasureError(
                f"{self.family} takes no parameter {sorted(given - spec.params)}; "
                f"it takes {sorted(spec.params) or 'none'}"
            )
        set_ = object.__setattr__
        for name in PARAMS:
            value = getattr(self, name)
            if value is not None:
                value = _check_param(name, value)
                set_(self, name, None if value == spec.param_defaults.get(name) else value)
        if spec.at == "level":
            level = self.level
            if level is None and self.cutoff is not None:
                level, _ = self.cutoff, set_(self, "cutoff", None)
            elif self.cutoff is not None:
                raise InvalidCutoffError(f"{self.family} takes a recall level, not a cutoff ({self.cutoff!r})")
            set_(self, "level", check_level(level, self.family))
            return
        if self.level is not None:
            raise InvalidCutoffError(f"only iP takes a recall level; {self.family} got level={self.level!r}")
        if spec.at == "none":
            if self.cutoff is not None:
                raise InvalidCutoffError(f"{self.family} takes no cutoff (it is defined on the whole ranking)")
        elif spec.at == "required" or self.cutoff is not None:
            if self.cutoff is None:
                raise InvalidCutoffError(f"{self.family} needs a cutoff, e.g. {self.family}@10")
            set_(self, "cutoff", check_cutoff(self.cutoff))
        if self.gain is not None:
            set_(self, "gain", _check_gain(self.gain))
        if self.discount is not None:
            word = self.discount.lower() if isinstance(self.discount, str) else self.discount
            set_(self, "discount", _DISCOUNTS[choice(word, "discount", sorted(_DISCOUNTS), error=UnknownMeasureError)])
        if self.beta is not None:
            # beta**2 must stay a finite, non-zero float (F would be NaN); NRBP's beta is a patience, not F's weight
            beta = _BETA.check(self.beta, "beta", UnknownMeasureError)
            if "beta" in spec.param_defaults:
                beta = _check_param("p", beta, "beta")
            set_(self, "beta", None if beta == spec.param_defaults.get("beta", 1.0) else float(beta))

    @property
    def spec(self) -> Family:
        return FAMILIES[self.family]

    @cached_property
    def stem(self) -> str:
        """The name without its ``@`` part: ``NDCG``, ``nDCG_exp``, ``F(beta=2)``, ``Rprec``."""
        if self.gain is not None or self.discount is not None:  # NDCG's variants (only it takes these)
            out = "nDCG"
            if self.gain == "exp":
                out += "_exp"
            if self.discount == "jk":
                out += "_jk"
            if isinstance(self.gain, tuple):
                out += "(gains={" + ",".join(f"{_num(g)}:{_num(v)}" for g, v in self.gain) + "})"
            return out
        names = sorted((*PARAMS, "beta"))
        given = [f"{p}={_num(getattr(self, p))}" for p in names if getattr(self, p) is not None]
        return f"{self.family}({','.join(given)})" if given else self.family

    @cached_property
    def at(self) -> str | None:
        """What follows ``@`` in the name: the cutoff, the recall level, or ``None``."""
        if self.level is not None:
            return repr(float(self.level))
        return None if self.cutoff is None else str(self.cutoff)

    @cached_property
    def name(self) -> str:
        return self.stem if self.at is None else f"{self.stem}@{self.at}"

    @property
    def variant(self) -> tuple:
        """The parameters other than the cutoff/level: measures sharing it share one kernel call."""
        return (self.gain, self.discount, self.beta, self.p, self.rel, self.max_rel, self.alpha)

    @property
    def params(self) -> dict[str, float | None]:
        """The numeric parameters (``p``, ``rel``, ``max_rel``, ``alpha``, ``beta``) with the family's defaults filled in."""
        defaults = self.spec.param_defaults
        return {p: defaults.get(p) if getattr(self, p) is None else getattr(self, p) for p in (*PARAMS, "beta")}

    def _key(self) -> tuple:
        return (self.family, -1 if self.cutoff is None else self.cutoff, -1.0 if self.level is None else self.level,
                self.name)  # fmt: skip

    def __lt__(self, other: Measure) -> bool:
        if not isinstance(other, Measure):
            return NotImplemented
        return self._key() < other._key()

    def __str__(self) -> str:
        return self.name


#: The numeric parameters of the families that take them (:attr:`Family.params`), each declared once; a
#: family's default is in its :attr:`Family.param_defaults`.
PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("p", Number(0, 1, "neither"), doc="the persistence (RBP, RBP_residual, Compat)"),
        Param("rel", Number(), doc="the relevance level: labels >= rel count as relevant"),
        # 2**max_rel must stay a finite float
        Param("max_rel", Number(0, 1000, "right"), doc="the top grade of the scale (ERR, nERR)"),
        Param("alpha", Number(0, 1), doc="ndeval's redundancy penalty (alpha_nDCG, ERR-IA, NRBP)"),
    )
}
_BETA = Number(1e-150, 1e150, "neither")


def _check_param(param: str, value: object, name: str | None = None) -> float:
    """``value`` as a float, checked by the rule of :data:`PARAMS`' ``param`` (``name``: what the message calls it)."""
    return float(PARAMS[param].rule.check(value, name or param, UnknownMeasureError)) + 0.0  # -0.0 -> 0.0


def _check_gain(gain: object) -> str | GainMap:
    if isinstance(gain, str):
        form = _GAIN_FORMS.get(gain.lower(), "?")
        if form == "?":
            raise UnknownMeasureError(f"gain must be 'linear', 'exp' or a {{grade: gain}} map, got {gain!r}")
        return form
    items = gain.items() if isinstance(gain, Mapping) else gain
    try:
        pairs = sorted((float(g), float(v)) for g, v in items)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise UnknownMeasureError(f"a gain map is {{grade: gain}} with numbers, got {gain!r}") from None
    for g, v in pairs:
        if not (math.isfinite(g) and math.isfinite(v)) or g < 0 or v < 0:
            raise UnknownMeasureError(f"gain map entries must be finite and >= 0 (grade {g!r}: gain {v!r})")
    if len({g for g, _ in pairs}) != len(pairs):
        raise UnknownMeasureError(f"a grade appears twice in the gain map {gain!r}")
    if not pairs:
        raise UnknownMeasureError("the gain map is empty")
    return tuple(pairs)


def check_cutoff(k: object) -> int:
    """Return ``k`` if it is a positive integer, else raise :class:`InvalidCutoffError`."""
    k = whole(k, "cutoff k", least=1, error=InvalidCutoffError)
    if k > MAX_CUTOFF:  # ranks are int64: a larger k is no cutoff any ranking can reach
        raise InvalidCutoffError(f"cutoff k must be at most {MAX_CUTOFF:,} (2**31 - 1), got {k}")
    return k


def check_level(level: object, family: str = "iP") -> float:
    """Return ``level`` as a float if it is a recall level in [0, 1], else raise :class:`InvalidCutoffError`."""
    if not is_number(level):
        raise InvalidCutoffError(f"{family} needs a recall level in [0, 1], e.g. {family}@0.3; got {level!r}")
    return float(number(level, "recall level", 0, 1, error=InvalidCutoffError)) + 0.0  # -0.0 -> 0.0


MAX_CUTOFF = 2**31 - 1


def check_k_values(k_values: Iterable[object]) -> list[int]:
    """Validate a list of cutoffs: positive integers, no duplicates, at least one."""
    if isinstance(k_values, str | bytes) or not isinstance(k_values, Iterable):
        raise InvalidCutoffError(
            f"k_values must be a list of positive integers, e.g. [1, 10, 100]; got {k_values!r} ({type(k_values).__name__})"
        )
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
    return _lookup(name)[0]


@cache
def _spellings() -> dict[str, str]:
    """How a suggestion spells each accepted (lower-case) name: its family's or its variant's name (``nDCG_exp``)."""
    return {
        alias: Measure(family, 1 if FAMILIES[family].at == "required" else None, **params).stem if params else family
        for alias, (family, params) in _ALIASES.items()
    }


def _lookup(name: str, written: str | None = None, rest: str = "") -> tuple[str, Mapping[str, Any]]:
    """The family and fixed parameters of ``name``; an unknown name raises naming the close matches.

    ``written`` is the whole measure the user wrote (``"NDGC@10"``) and ``rest`` what follows the name
    in it (``"@10"``), so the suggestion is a whole measure (``'NDCG@10'``).
    """
    key = name.strip().lower()
    try:
        return _ALIASES[key]
    except KeyError:
        spelling = _spellings()
        close = list(dict.fromkeys(spelling[c] for c in difflib.get_close_matches(key, spelling, n=3)))
        hint = f"; did you mean {' or '.join(repr(c + rest) for c in close)}?" if close else ";"
        raise UnknownMeasureError(
            f"unknown measure {written if written is not None else name!r}{hint} known families: {sorted(FAMILIES)}"
        ) from None


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _parse_params(text: str | None, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in _split_top(text or ""):
        key, eq, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or not value:
            raise UnknownMeasureError(f"cannot parse parameter {part!r} in {where!r}; expected key=value")
        if {"gains": "gain", "max_grade": "max_rel"}.get(key, key) in out:  # gains={...} and gain=exp set one thing
            raise UnknownMeasureError(f"{where!r} sets {key!r} twice")
        if key in ("gains", "gain") and value.startswith("{"):
            if not value.endswith("}"):
                raise UnknownMeasureError(f"cannot parse gain map {value!r} in {where!r}")
            pairs = {}
            for item in _split_top(value[1:-1]):
                entry = re.fullmatch(r"([^:=]+)[:=]([^:=]+)", item)
                if entry is None:
                    raise UnknownMeasureError(f"cannot parse gain map entry {item!r} in {where!r}; use grade:gain")
                grade = _to_number(entry.group(1).strip(), where)
                if grade in pairs:
                    raise UnknownMeasureError(f"grade {entry.group(1).strip()} appears twice in {where!r}")
                pairs[grade] = _to_number(entry.group(2).strip(), where)
            out["gain"] = pairs
        elif key in ("gain", "discount"):
            out[key] = value
        elif key in ("beta", *PARAMS, "max_grade"):
            out["max_rel" if key == "max_grade" else key] = _to_number(value, where)
        else:
            raise UnknownMeasureError(
                f"unknown parameter {key!r} in {where!r}; known: gains, gain, discount, beta, p, rel, max_rel, alpha"
            )
    return out


def _to_number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UnknownMeasureError(f"{text!r} in {where!r} is not a number") from None


def _parse(text: str) -> tuple[str, dict[str, Any], str | None]:
    """``(family, params, at)`` of a measure name; ``at`` is the text after ``@`` or ``None``."""
    m = _NAME_RE.match(text)
    if m is None:
        raise UnknownMeasureError(f"cannot parse measure {text!r}; expected a name like 'NDCG@10'")
    rest = (f"({m.group('params')})" if m.group("params") is not None else "") + (
        f"@{m.group('k')}" if m.group("k") is not None else ""
    )
    family, fixed = _lookup(m.group("family"), text, rest)
    given = _parse_params(m.group("params"), text)
    clash = sorted(set(fixed) & set(given))
    if clash:  # nDCG_exp(gain=linear)@10: the name says one gain, the parameters another
        raise UnknownMeasureError(f"{text!r} sets {', '.join(clash)} twice: by its name and by a parameter")
    at = m.group("k")
    if at is not None and not at.isascii():
        raise InvalidCutoffError(f"the cutoff of {text!r} must be written in ASCII digits")
    return family, {**fixed, **given}, at


def _build(family: str, params: dict[str, Any], at: str | None) -> Measure:
    spec = FAMILIES[family]
    if at is None:
        return Measure(family, **params)
    if spec.at == "level":
        return Measure(family, level=float(at), **params)
    try:
        k = int(at)
    except ValueError:
        raise refuse(at, "cutoff k", Whole(1).describe(), InvalidCutoffError) from None
    return Measure(family, check_cutoff(k), **params)


def parse_measure(text: str | Measure) -> Measure:
    """Parse a name such as ``NDCG@10``, ``nDCG_exp@10``, ``iP@0.3``, ``Rprec`` or an alias into a :class:`Measure`.

    A family that needs a cutoff or a level must have one here (``resolve_measures`` is the place
    where a bare ``NDCG`` is crossed with ``k_values``).

    :raises UnknownMeasureError: unknown name or parameter. :raises InvalidCutoffError: bad cutoff/level.
    """
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise UnknownMeasureError(f"a measure is a name like 'NDCG@10', got {text!r}")
    family, params, at = _parse(text)
    if at is None and FAMILIES[family].at in ("required", "level"):
        raise UnknownMeasureError(
            f"cannot parse measure {text!r}: {family} needs "
            + ("a recall level, e.g. 'iP@0.3'" if FAMILIES[family].at == "level" else f"a cutoff, e.g. '{family}@10'")
        )
    return _build(family, params, at)


def resolve_measures(measures: Sequence[str | Measure] | None, k_values: Sequence[int] | None) -> list[Measure]:
    """Turn the user's ``measures`` and ``k_values`` into an ordered, duplicate-free list.

    ``measures`` may hold full names (``NDCG@10``) or bare names. A bare name of a family that needs a
    cutoff (``P``, ``Success``, ``Judged``, ...) or of BEIR's ``NDCG``, ``nDCG_exp``, ``MAP``, ``MRR`` is
    crossed with ``k_values``; trec_eval's own ``map``, ``ndcg`` and ``recip_rank`` (exactly so
    written) are the uncut measures, as trec_eval prints them (``MAP``, ``NDCG``, ``MRR``); a bare
    ``iP`` means the 11 standard recall levels; any other bare name is the measure on the whole ranking
    (``Rprec``, ``bpref``, ``GMAP``, ``F``, ``iP_avg``, ``num_ret``, ...). ``None`` means BEIR's six families.
    Order: crossed families first (as given), then the rest as given. A lone name (``"NDCG"``) is one measure.
    """
    if isinstance(measures, str | Measure):
        measures = [measures]
    crossed: list[tuple[str, dict[str, Any]]] = []
    explicit: list[Measure] = []
    for item in measures if measures is not None else list(BEIR_FAMILIES):
        if isinstance(item, Measure):
            explicit.append(item)
            continue
        if not isinstance(item, str):
            raise UnknownMeasureError(f"a measure is a name like 'NDCG@10', got {item!r}")
        family, params, at = _parse(item)
        spec = FAMILIES[family]
        kind = spec.at
        if at is not None:
            explicit.append(_build(family, params, at))
        elif spec.crossed and item.strip() not in spec.uncut_names:
            Measure(family, 1, **params)  # validate the parameters now
            if (family, params) not in crossed:
                crossed.append((family, params))
        elif kind == "level":
            explicit.extend(Measure(family, level=x, **params) for x in STANDARD_LEVELS)
        else:
            explicit.append(Measure(family, **params))
    out: list[Measure] = []
    seen: set[Measure] = set()
    if crossed:
        if k_values is None:
            raise InvalidCutoffError(f"measures {[f for f, _ in crossed]} need cutoffs: pass k_values")
        ks = check_k_values(k_values)
        out.extend(Measure(f, k, **p) for f, p in crossed for k in ks)
        seen.update(out)
    elif k_values is not None:
        check_k_values(k_values)
    for m in explicit:
        if m in seen:
            raise DuplicateCutoffError(f"measure {m} is requested twice")
        out.append(m)
        seen.add(m)
    if not out:
        raise UnknownMeasureError("no measure requested")
    return out
