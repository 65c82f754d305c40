"""What an evaluation returns: :class:`EvaluationResult` (means and per-query values) and the lazy
per-query mapping it holds (:class:`PerQuery`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from .measures import BEIR_FAMILIES, Measure
from .presets import Preset

#: Items a result's ``repr`` shows of each list (measures, means, systems) and its longest length.
REPR_ITEMS = 4
REPR_MAX = 400


def short_list(items: Sequence[str], n: int = REPR_ITEMS) -> str:
    """``[a, b, c, d, ... (+12)]``: the first ``n`` items and how many more (for short reprs)."""
    more = f", ... (+{len(items) - n})" if len(items) > n else ""
    return "[" + ", ".join(str(x) for x in items[:n]) + more + "]"


def bounded(text: str, limit: int = REPR_MAX) -> str:
    """``text`` cut to ``limit`` characters (long measure names or ids), marked with ``...)``."""
    return text if len(text) <= limit else text[: limit - 4] + "...)"


class PerQuery(Mapping):
    """``{measure: {qid: value}}``, each inner dict built on first access (most callers read means only)."""

    def __init__(self) -> None:
        # name -> (scored query ids, their values, queries averaged at the missing value, that value)
        self.parts: dict[str, tuple[list[str], np.ndarray, list[str], float]] = {}
        self._built: dict[str, dict[str, float]] = {}
        self._keys: tuple[list[str], dict[str, None]] | None = None

    def __getitem__(self, name: str) -> dict[str, float]:
        built = self._built.get(name)
        if built is None:
            names, values, extra, value = self.parts[name]
            # Measures usually share one list of query ids: a copy of its keys, sized already, only
            # has its values replaced (no insertion or resize per query).
            if self._keys is None or self._keys[0] is not names:
                self._keys = (names, dict.fromkeys(names))
            built = self._keys[1].copy()
            built.update(zip(names, values.tolist()))
            if extra:
                built.update(zip(extra, repeat(value)))
            self._built[name] = built
        return built

    def __iter__(self):
        return iter(self.parts)

    def __len__(self) -> int:
        return len(self.parts)

    def __repr__(self) -> str:
        return repr(dict(self.items()))


@dataclass(frozen=True)
class EvaluationResult:
    """Means and per-query values of an evaluation.

    ``means`` are rounded as the preset says (BEIR: Python ``round(x, 5)``), ``raw_means`` are
    not. ``per_query[measure][qid]`` holds unrounded values of exactly the queries averaged in
    that measure's mean (so the mean of ``per_query[m]`` is ``raw_means[m]``); ``n_queries[m]`` is
    their count. Three documented exceptions: GMAP's mean is geometric (``exp`` of the mean ``log``),
    trec_eval's counts (``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``) are summed, not averaged,
    and BEIR's ``Hole@k`` also lists results queries nobody judged, which it sums but does not count
    (it divides by ``len(qrels)``). A measure no query counts in (``no_relevant="skip"`` and no query
    has a relevant document) has the mean ``nan`` and ``n_queries`` 0.
    """

    means: dict[str, float]
    raw_means: dict[str, float]
    per_query: Mapping[str, dict[str, float]]
    n_queries: dict[str, int]
    measures: tuple[Measure, ...]
    preset: Preset = field(repr=False)

    def __repr__(self) -> str:
        """Short whatever the size: the preset, query count, first measures and means (``str`` is the same)."""
        names = [m.name for m in self.measures]
        means = ", ".join(f"{n!r}: {self.means[n]!r}" for n in names[:REPR_ITEMS])
        text = (
            f"EvaluationResult(preset={self.preset.name!r}, queries={max(self.n_queries.values(), default=0)}, "
            f"measures={short_list(names)}, means={{{means}{', ...' if len(names) > REPR_ITEMS else ''}}})"
        )
        return bounded(text)

    def to_dict(self, per_query: bool = False) -> dict:
        out: dict = dict(self.means)
        if per_query:
            out["per_query"] = dict(self.per_query.items())
        return out

    def to_json(self, per_query: bool = False, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(per_query), indent=indent)

    def as_beir(self) -> tuple[dict[str, float], ...]:
        """``(ndcg, _map, recall, precision, mrr, r_cap)`` dicts keyed like BEIR's return values."""
        groups: dict[str, dict[str, float]] = {f: {} for f in BEIR_FAMILIES}
        for m in self.measures:
            groups.setdefault(m.family, {})[m.name] = self.means[m.name]
        return tuple(groups.values())
