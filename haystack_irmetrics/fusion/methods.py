"""The fusion methods' score functions, as ranx 0.3.21 computes them (``ranx.fusion``), on packed rows.

Each function turns the normalised runs (:func:`.api.normalize`), with the weights, parameters and what a
trained method learned, into one fused score per candidate of every query; :mod:`.registry` names them. A document a run did not retrieve counts as ranx counts it: 0 in the sums, ``-1e9`` in
``max``, ``1e9`` in ``min``, absent from ``mnz``'s count and ``med``'s median, the log-odds of a 0.1 %
precision in ``bayesfuse``, the mean of the remaining Borda points in ``bordafuse``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cmp_to_key
from typing import Any

import numpy as np

from ..errors import FusionError
from . import trained
from .arguments import argument
from .packed import PackedRuns, RunRows

_MIN_ODD = float(np.log(0.001 / 0.999))  # bayesfuse's log-odds of a document a run did not retrieve


def _flat(runs: Sequence[RunRows], values: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([r.candidate for r in runs]), np.concatenate(list(values))


def _sum(n: int, runs: Sequence[RunRows], values: Sequence[np.ndarray]) -> np.ndarray:
    cand, vals = _flat(runs, values)
    return np.bincount(cand, weights=vals, minlength=n)


def _count(n: int, runs: Sequence[RunRows], weights: Sequence[float] | None = None) -> np.ndarray:
    if weights is None:
        return np.bincount(np.concatenate([r.candidate for r in runs]), minlength=n).astype(np.float64)
    return _sum(n, runs, [np.full(r.candidate.size, w) for r, w in zip(runs, weights)])


def _extreme(n: int, runs: Sequence[RunRows], upper: bool) -> np.ndarray:
    pick = np.maximum if upper else np.minimum
    out = np.full(n, -np.inf if upper else np.inf)
    for r in runs:
        out[r.candidate] = pick(out[r.candidate], r.score)
    missing = _count(n, runs) < len(runs)
    out[missing] = pick(out[missing], -1e9 if upper else 1e9)
    return out


def _median(n: int, runs: Sequence[RunRows]) -> np.ndarray:
    table = np.full((n, len(runs)), np.nan)
    for i, r in enumerate(runs):
        table[r.candidate, i] = r.score
    return np.nanmedian(table, axis=1) if n else np.zeros(0)


def _borda_points(packed: PackedRuns, runs: Sequence[RunRows]) -> list[np.ndarray]:
    """Per run, every candidate's Borda points: ``n_candidates - rank`` if retrieved, else
    ``(n_candidates - n_retrieved + 1) / 2``."""
    n_cand = np.diff(packed.offsets).astype(np.float64)
    cand_query = packed.candidate_query
    out = []
    for r in runs:
        points = ((n_cand - r.lengths + 1) / 2)[cand_query]
        points[r.candidate] = n_cand[np.repeat(np.arange(n_cand.size), r.lengths)] - r.rank
        out.append(points)
    return out


def _condorcet(packed: PackedRuns, runs: Sequence[RunRows], weights: Sequence[float] | None) -> np.ndarray:
    """Condorcet by ranx's sort: candidates (in candidate order) sorted with a pairwise majority vote,
    ``max_score - position`` each. The vote is not transitive, so the result depends on that starting
    order; ranx starts from a Python set's order (it changes with the hash seed), this from the candidates'."""
    out = np.zeros(packed.n_candidates)
    missing = 1_000_000  # ranx's index of a document a run did not retrieve
    positions = []
    for r in runs:
        pos = np.full(packed.n_candidates, missing, dtype=np.int64)
        pos[r.candidate] = r.rank
        positions.append(pos)
    table = np.stack(positions, axis=1) if positions else np.zeros((0, 0), np.int64)
    w = list(weights) if weights is not None else None
    bounds = packed.offsets.tolist()
    for a, b in itertools.pairwise(bounds):
        if a == b:
            continue
        rows = table[a:b].tolist()

        if w is None:

            def compare(x: int, y: int, rows: list[list[int]] = rows) -> int:
                rx, ry = rows[x], rows[y]
                x_votes = sum(i < j for i, j in zip(rx, ry))
                return -1 if x_votes >= len(rx) - x_votes else 1

        else:

            def compare(x: int, y: int, rows: list[list[int]] = rows) -> int:
                x_votes = y_votes = 0.0
                for i, j, weight in zip(rows[x], rows[y], w):
                    if i < j:
                        x_votes += weight
                    else:
                        y_votes += weight
                return -1 if x_votes >= y_votes else 1

        order = sorted(range(b - a), key=cmp_to_key(compare))
        out[a + np.asarray(order, dtype=np.int64)] = np.arange(b - a, 0, -1, dtype=np.float64)
    return out


def _per_rank(h_values: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """``values[rank]``, 0 beyond the end."""
    inside = rank < h_values.size
    out = np.zeros(rank.size)
    out[inside] = h_values[rank[inside]]
    return out


@dataclass(frozen=True)
class Fusing:
    """What a method's score function reads: the packing, the normalised runs (one :class:`RunRows` each), the
    weights (weighted methods), the method's parameters, and what a trained method learned per run."""

    packed: PackedRuns
    runs: Sequence[RunRows]
    weights: Sequence[float] | None
    params: Mapping[str, Any]
    learned: Sequence[Any] = ()

    @property
    def n(self) -> int:
        return self.packed.n_candidates

    def total(self) -> np.ndarray:
        """CombSUM: each candidate's scores summed over the runs."""
        return _sum(self.n, self.runs, [r.score for r in self.runs])

    def count(self) -> np.ndarray:
        """How many runs retrieved each candidate."""
        return _count(self.n, self.runs)

    def weighted_total(self) -> np.ndarray:
        return _sum(self.n, self.runs, [w * r.score for r, w in zip(self.runs, self.weights)])

    def inverse_square_rank(self) -> np.ndarray:
        return _sum(self.n, self.runs, [1 / (r.rank + 1.0) ** 2 for r in self.runs])


def comb_sum(f: Fusing) -> np.ndarray:
    return f.total()


def comb_mnz(f: Fusing) -> np.ndarray:
    return f.total() * f.count()


def comb_anz(f: Fusing) -> np.ndarray:
    return f.total() / np.maximum(f.count(), 1)


def comb_gmnz(f: Fusing) -> np.ndarray:
    return f.total() * f.count() ** f.params["gamma"]


def comb_max(f: Fusing) -> np.ndarray:
    return _extreme(f.n, f.runs, True)


def comb_min(f: Fusing) -> np.ndarray:
    return _extreme(f.n, f.runs, False)


def comb_med(f: Fusing) -> np.ndarray:
    return _median(f.n, f.runs)


def weighted_sum(f: Fusing) -> np.ndarray:
    return f.weighted_total()


def weighted_mnz(f: Fusing) -> np.ndarray:
    return f.total() * _count(f.n, f.runs, f.weights)


def mixed(f: Fusing) -> np.ndarray:
    return f.weighted_total() * np.sqrt(f.count())


def reciprocal_rank(f: Fusing) -> np.ndarray:
    return _sum(f.n, f.runs, [1 / (f.params["k"] + r.rank + 1) for r in f.runs])


def inverse_square_rank(f: Fusing) -> np.ndarray:
    return f.inverse_square_rank() * f.count()  # ranx's isr is CombMNZ over the 1/rank^2 scores


def log_inverse_square_rank(f: Fusing) -> np.ndarray:
    return f.inverse_square_rank() * np.log(f.count())


def logn_inverse_square_rank(f: Fusing) -> np.ndarray:
    return f.inverse_square_rank() * np.log(f.count() + f.params["sigma"])


def rank_biased_centroid(f: Fusing) -> np.ndarray:
    phi = f.params["phi"]
    return _sum(f.n, f.runs, [(1 - phi) * phi ** r.rank.astype(np.float64) for r in f.runs])


def borda(f: Fusing) -> np.ndarray:
    points = _borda_points(f.packed, f.runs)
    return np.sum(points, axis=0) if points else np.zeros(f.n)


def weighted_borda(f: Fusing) -> np.ndarray:
    return np.sum([w * p for w, p in zip(f.weights, _borda_points(f.packed, f.runs))], axis=0)


def condorcet(f: Fusing) -> np.ndarray:
    return _condorcet(f.packed, f.runs, None)


def weighted_condorcet(f: Fusing) -> np.ndarray:
    return _condorcet(f.packed, f.runs, f.weights)


def posfuse(f: Fusing) -> np.ndarray:
    return _sum(f.n, f.runs, [_per_rank(p, r.rank) for r, p in zip(f.runs, f.learned)])


def mapfuse(f: Fusing) -> np.ndarray:
    return _sum(f.n, f.runs, [m / (r.rank + 1.0) for r, m in zip(f.runs, f.learned)])


def bayesfuse(f: Fusing) -> np.ndarray:
    """:raises FusionError: a run deeper than the ranks bayesfuse has log-odds for."""
    for r, name in zip(f.runs, f.packed.names):
        if r.rank.size and int(r.rank.max()) >= trained.BAYES_CUTOFFS[-1]:
            raise FusionError(
                f"bayesfuse estimates log-odds for the top {trained.BAYES_CUTOFFS[-1]} ranks only and run "
                f"{name!r} goes deeper: pass {argument('depth', value=trained.BAYES_CUTOFFS[-1])}"
            )
    total = _sum(f.n, f.runs, [odds[r.rank] for r, odds in zip(f.runs, f.learned)])
    return total + (len(f.runs) - f.count()) * _MIN_ODD


def probfuse(f: Fusing) -> np.ndarray:
    values = []
    for r, probs in zip(f.runs, f.learned):
        n_seg = probs.size
        size = np.repeat(np.maximum(-(-r.lengths // n_seg), 1), r.lengths)
        seg = r.rank // size
        values.append(probs[seg] / (seg + 1.0))
    return _sum(f.n, f.runs, values)


def segfuse(f: Fusing) -> np.ndarray:
    bounds = np.asarray(trained.SEG_BOUNDS)
    values = []
    for r, probs in zip(f.runs, f.learned):
        inside = r.rank < bounds[-1]
        p = np.zeros(r.rank.size)
        p[inside] = probs[np.searchsorted(bounds, r.rank[inside], side="right") - 1]
        values.append(p * (r.score + 1))
    return _sum(f.n, f.runs, values)


def slidefuse(f: Fusing) -> np.ndarray:
    values = []
    for r, probs in zip(f.runs, f.learned):
        w = min(f.params["w"], int(r.lengths.max(initial=0)))  # a window past the longest list reaches as far
        sums = np.concatenate([[0.0], np.cumsum(probs)])
        length = np.repeat(r.lengths, r.lengths)
        a = np.maximum(r.rank - w, 0)
        b = np.minimum(r.rank + w, length - 1)
        top = np.minimum(b + 1, probs.size)
        low = np.minimum(a, probs.size)
        values.append((sums[top] - sums[low]) / (b - a + 1))
    return _sum(f.n, f.runs, values)
