"""The fusion methods, as ranx 0.3.21 computes them (``ranx.fusion``), on packed rows.

Each method turns the normalised runs (:func:`.norms.normalize`) into one fused score per candidate of
every query. A document a run did not retrieve counts as ranx counts it: 0 in the sums, ``-1e9`` in
``max``, ``1e9`` in ``min``, absent from ``mnz``'s count and ``med``'s median, the log-odds of a 0.1 %
precision in ``bayesfuse``, the mean of the remaining Borda points in ``bordafuse``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from functools import cmp_to_key
from typing import Any

import numpy as np

from ..errors import FusionError
from . import trained
from .arguments import argument
from .packed import PackedRuns, RunRows

#: Methods that take one weight per run.
WEIGHTED = ("wsum", "wmnz", "mixed", "w_bordafuse", "w_condorcet")
#: Methods trained on judgments (``qrels``).
TRAINED = ("bayesfuse", "posfuse", "probfuse", "segfuse", "slidefuse", "mapfuse")
#: Every method, by ranx's names.
METHODS = (
    "rrf",
    "sum",
    "mnz",
    "anz",
    "gmnz",
    "max",
    "min",
    "med",
    "wsum",
    "wmnz",
    "isr",
    "log_isr",
    "logn_isr",
    "bordafuse",
    "w_bordafuse",
    "condorcet",
    "w_condorcet",
    "rbc",
    "mixed",
    *TRAINED,
)
#: The other parameters each method takes (``params`` of :func:`~haystack_irmetrics.fusion.fuse`), with
#: their defaults (``None``: required, as in ranx).
PARAMETERS: dict[str, dict[str, Any]] = {
    "rrf": {"k": 60},
    "gmnz": {"gamma": None},
    "logn_isr": {"sigma": 0.01},
    "rbc": {"phi": None},
    "probfuse": {"n_segments": None},
    "slidefuse": {"w": None},
}
#: The range of every parameter (checked in one place, :func:`~haystack_irmetrics.fusion.check_method`): what
#: it says and whether a (finite) value is in it.
PARAMETER_RANGES: dict[str, tuple[str, Callable[[float], bool]]] = {
    "k": ("a number > 0", lambda v: v > 0),
    "gamma": ("any finite number", lambda v: True),
    "sigma": ("in [0, 1]", lambda v: 0 <= v <= 1),
    "phi": ("in (0, 1)", lambda v: 0 < v < 1),
    "n_segments": ("a whole number >= 1", lambda v: v >= 1 and float(v).is_integer()),
    "w": ("a whole number >= 0", lambda v: v >= 0 and float(v).is_integer()),
}
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


def fused_scores(
    packed: PackedRuns,
    runs: Sequence[RunRows],
    method: str,
    weights: Sequence[float] | None,
    params: dict[str, Any],
    learned: Sequence[Any] | None = None,
) -> np.ndarray:
    """One fused score per candidate of ``packed``, from the normalised ``runs``; ``learned`` holds what a
    trained method learned per run (:func:`learn`)."""
    n = packed.n_candidates
    ranks = [r.rank for r in runs]
    if method in ("sum", "mnz", "anz", "gmnz"):
        total = _sum(n, runs, [r.score for r in runs])
        count = _count(n, runs)
        if method == "sum":
            return total
        if method == "mnz":
            return total * count
        if method == "anz":
            return total / np.maximum(count, 1)
        return total * count ** params["gamma"]
    if method in ("max", "min"):
        return _extreme(n, runs, method == "max")
    if method == "med":
        return _median(n, runs)
    if method == "wsum":
        return _sum(n, runs, [w * r.score for r, w in zip(runs, weights)])
    if method == "wmnz":
        return _sum(n, runs, [r.score for r in runs]) * _count(n, runs, weights)
    if method == "mixed":
        return _sum(n, runs, [w * r.score for r, w in zip(runs, weights)]) * np.sqrt(_count(n, runs))
    if method == "rrf":
        return _sum(n, runs, [1 / (params["k"] + rank + 1) for rank in ranks])
    if method in ("isr", "log_isr", "logn_isr"):
        total = _sum(n, runs, [1 / (rank + 1.0) ** 2 for rank in ranks])
        count = _count(n, runs)
        if method == "isr":
            return total * count  # ranx's isr is CombMNZ over the 1/rank^2 scores
        return total * np.log(count if method == "log_isr" else count + params["sigma"])
    if method == "rbc":
        phi = params["phi"]
        return _sum(n, runs, [(1 - phi) * phi ** rank.astype(np.float64) for rank in ranks])
    if method in ("bordafuse", "w_bordafuse"):
        points = _borda_points(packed, runs)
        if method == "bordafuse":
            return np.sum(points, axis=0) if points else np.zeros(n)
        return np.sum([w * p for w, p in zip(weights, points)], axis=0)
    if method in ("condorcet", "w_condorcet"):
        return _condorcet(packed, runs, weights if method == "w_condorcet" else None)
    return _trained_scores(packed, runs, method, params, learned)


def _trained_scores(
    packed: PackedRuns, runs: Sequence[RunRows], method: str, params: dict[str, Any], learned: Sequence[Any] | None
) -> np.ndarray:
    n = packed.n_candidates
    learned = list(learned or [])
    if method == "posfuse":
        return _sum(n, runs, [_per_rank(p, r.rank) for r, p in zip(runs, learned)])
    if method == "mapfuse":
        return _sum(n, runs, [m / (r.rank + 1.0) for r, m in zip(runs, learned)])
    if method == "bayesfuse":
        for r, name in zip(runs, packed.names):
            if r.rank.size and int(r.rank.max()) >= trained.BAYES_CUTOFFS[-1]:
                raise FusionError(
                    f"bayesfuse estimates log-odds for the top {trained.BAYES_CUTOFFS[-1]} ranks only and run "
                    f"{name!r} goes deeper: pass {argument('depth', value=trained.BAYES_CUTOFFS[-1])}"
                )
        total = _sum(n, runs, [odds[r.rank] for r, odds in zip(runs, learned)])
        return total + (len(runs) - _count(n, runs)) * _MIN_ODD
    if method == "probfuse":
        values = []
        for r, probs in zip(runs, learned):
            n_seg = probs.size
            size = np.repeat(np.maximum(-(-r.lengths // n_seg), 1), r.lengths)
            seg = r.rank // size
            values.append(probs[seg] / (seg + 1.0))
        return _sum(n, runs, values)
    if method == "segfuse":
        bounds = np.asarray(trained.SEG_BOUNDS)
        values = []
        for r, probs in zip(runs, learned):
            inside = r.rank < bounds[-1]
            p = np.zeros(r.rank.size)
            p[inside] = probs[np.searchsorted(bounds, r.rank[inside], side="right") - 1]
            values.append(p * (r.score + 1))
        return _sum(n, runs, values)
    if method == "slidefuse":
        w = params["w"]
        values = []
        for r, probs in zip(runs, learned):
            sums = np.concatenate([[0.0], np.cumsum(probs)])
            length = np.repeat(r.lengths, r.lengths)
            a = np.maximum(r.rank - w, 0)
            b = np.minimum(r.rank + w, length - 1)
            top = np.minimum(b + 1, probs.size)
            low = np.minimum(a, probs.size)
            values.append((sums[top] - sums[low]) / (b - a + 1))
        return _sum(n, runs, values)
    raise FusionError(f"unknown fusion method {method!r}")


def learn(packed: PackedRuns, runs: Sequence[RunRows], method: str, labels: list, params: dict[str, Any]) -> list:
    """What a trained method learns per run from the judgments ``labels`` (one per fused query or None)."""
    hits = [trained.Hits(r, packed, labels) for r in runs]
    if method in ("posfuse", "slidefuse"):
        return [trained.positional_probs(h) for h in hits]
    if method == "mapfuse":
        return [trained.mean_average_precision(h) for h in hits]
    if method == "bayesfuse":
        return [trained.bayes_log_odds(h) for h in hits]
    if method == "probfuse":
        return [trained.probfuse_probs(h, params["n_segments"]) for h in hits]
    return [trained.segfuse_probs(h) for h in hits]
