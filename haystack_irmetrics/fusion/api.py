"""``fuse``: several runs into one, by any of ranx's fusion methods and normalisations (:mod:`.registry`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import repeat
from typing import Any

import numpy as np

from ..checks import number, shown
from ..core.inputs import ColumnarRun, Qrels
from ..errors import FusionError, FusionParameterError
from .arguments import argument, hinted
from .methods import Fusing
from .packed import PackedRuns, RunInput, RunRows, check_run_count, pack_runs
from .registry import METHODS, NORMALIZATIONS, WEIGHTED, Method, Parameter, fusion_method, norm_name
from .trained import Hits, training_labels


def _parameter(entry: Method, key: str, value: object = "...", source: str | None = None) -> str:
    if source is not None:
        return source
    found = entry.parameter(key)
    return argument(found.argument, value=value) if found and found.argument else argument("param", key, value)


def with_rrf_k(method: str, params: Mapping[str, Any] | None, rrf_k: float | None) -> dict[str, Any]:
    """``params`` with RRF's constant given by its own argument (``rrf_k=``, ``--rrf-k``) added.

    :raises FusionParameterError: ``rrf_k`` for a method without that parameter.
    """
    out = dict(params or {})
    if rrf_k is not None:
        entry = METHODS.get(method)
        own = [p.name for p in entry.params if p.argument == "k"] if entry else []
        if not own:
            raise FusionParameterError(f"{argument('rrf_k')} is RRF's constant; {method} does not take it")
        out[own[0]] = rrf_k
    return out


def check_method(
    method: str,
    n_runs: int,
    weights: Sequence[float] | None,
    params: Mapping[str, Any] | None,
    *,
    source: str | None = None,
) -> tuple[list[float] | None, dict[str, Any]]:
    """``(weights, params)`` checked and completed for ``method`` over ``n_runs`` runs: the one place every
    fusion argument is checked against its range (the method's :class:`~.registry.Parameter`). A message names
    the argument a parameter came from (``params=``, ``--param``; ``source`` where it came from elsewhere).

    :raises FusionError: an unknown method.
    :raises FusionParameterError: weights for a method that takes none, not one per run, not finite or all
        zero; a parameter the method does not take, missing, not a finite number or out of its range.
    """
    entry = fusion_method(method)
    if weights is not None:
        if not entry.weighted:
            raise FusionParameterError(
                f"{method} takes no weights ({argument('weights')}; the weighted methods: {', '.join(WEIGHTED)})"
            )
        try:
            weights = [float(w) for w in weights]
        except (TypeError, ValueError):
            raise FusionParameterError(f"weights must be numbers, got {shown(weights)}") from None
        if len(weights) != n_runs:
            raise FusionParameterError(f"{len(weights)} weights for {n_runs} runs: give one weight per run")
        if not all(map(math.isfinite, weights)):
            raise FusionParameterError(f"weights must be finite numbers, got {weights}")
        if not any(weights):
            raise FusionParameterError(f"weights must not all be zero (every document would score 0), got {weights}")
    elif entry.weighted:
        weights = [1.0 / n_runs] * n_runs
    wanted = entry.defaults
    given = dict(params or {})
    unknown = sorted(set(given) - set(wanted))
    if unknown:
        takes = ", ".join(wanted) or "none"
        raise FusionParameterError(
            f"{method} takes no parameter {', '.join(unknown)} ({_parameter(entry, unknown[0])}; its parameters: {takes})"
        )
    full = {**wanted, **given}
    for key, value in full.items():
        if value is None:
            raise FusionParameterError(f"{method} needs the parameter {key} ({_parameter(entry, key)})")
        name, hint = f"{method}'s parameter {key}", _parameter(entry, key, shown(value), source)
        full[key] = hinted(partial(_checked, entry.parameter(key), value, name), hint)
    return weights, full


def _checked(rule: Parameter, value: object, name: str) -> Any:
    """A finite number first (an infinity is said as such), then the parameter's own range; a whole one an int."""
    return rule.check(number(value, name, error=FusionParameterError), name=name)


def check_trained(method: str, qrels: object) -> None:
    """A trained method has judgments to learn from.

    :raises FusionError: ``qrels`` is None for a trained method (:data:`~.registry.TRAINED`).
    """
    entry = METHODS.get(method)
    if entry is not None and entry.training is not None and qrels is None:
        raise FusionError(f"{method} is trained on judgments: pass qrels ({argument('qrels')})")


def normalize(packed: PackedRuns, norm: str | None) -> list[RunRows]:
    """Every run of ``packed`` normalised by ``norm`` (a name of :data:`~.registry.NORMALIZATIONS` or None)."""
    name = norm_name(norm)
    if name is None:
        return list(packed.runs)
    apply = NORMALIZATIONS[name].apply
    return [apply(rows, packed) for rows in packed.runs]


def _rank_within(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per query (``offsets``), positions by score descending, ties in position order: two sorts (a global
    rank of the scores, then the query and that rank as one int64 key, stable), far faster than lexsort."""
    if scores.size == 0:
        return np.zeros(0, np.int64)
    by_score = np.argsort(-scores)
    ordered = -scores[by_score]
    dense = np.empty(scores.size, np.int64)
    dense[by_score] = np.cumsum(np.concatenate([[0], ordered[1:] != ordered[:-1]]))
    query = np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))
    return np.argsort(query * np.int64(scores.size) + dense, kind="stable")


def fused_run(packed: PackedRuns, scores: np.ndarray) -> ColumnarRun:
    """The fused run: per query, candidates by fused score descending, ties in candidate order; queries
    with no candidate left out. Document ids become strings only when asked for (``ids_at``, ``.data``)."""
    order = _rank_within(scores, packed.offsets)
    lengths = np.diff(packed.offsets)
    kept = [i for i, n in enumerate(lengths.tolist()) if n]
    qids = [packed.qids[i] for i in kept]
    offsets = np.zeros(len(kept) + 1, np.int64)
    np.cumsum(lengths[kept], out=offsets[1:])
    doc_ids = packed.doc_ids
    values = scores[order]

    def ids_at(rows: np.ndarray) -> list[str]:
        return list(map(doc_ids.__getitem__, order[np.asarray(rows, dtype=np.int64)].tolist()))

    def find(candidates: list[str]) -> tuple[np.ndarray, np.ndarray]:
        index = dict(zip(candidates, range(len(candidates))))
        which = np.fromiter(map(index.get, doc_ids, repeat(-1)), dtype=np.int64, count=len(doc_ids))
        hit = np.flatnonzero(which >= 0)
        position = np.empty(order.size, dtype=np.int64)
        position[order] = np.arange(order.size)
        rows = position[hit]
        by_row = np.argsort(rows)
        return rows[by_row], which[hit][by_row]

    return ColumnarRun(qids, offsets, values, ids_at, find, source="fused")


def fuse(
    runs: Sequence[RunInput] | PackedRuns,
    method: str = "rrf",
    *,
    norm: str | None = "min-max",
    weights: Sequence[float] | None = None,
    rrf_k: int | None = None,
    depth: int | None = None,
    qrels: Mapping[str, Mapping[str, float]] | Qrels | None = None,
    params: Mapping[str, Any] | None = None,
    names: Sequence[str] | None = None,
) -> ColumnarRun:
    """Fuse two or more runs into one, with ranx 0.3.21's method and normalisation (``ranx.fuse``).

    :param runs: ``{qid: {docid: score}}`` dicts, ranked lists, :class:`~haystack_irmetrics.core.inputs.Run`
        or ``ColumnarRun`` values, TREC run file paths, or a :class:`~.packed.PackedRuns` (packed once for
        many fusions). Never modified. A query a run lacks counts as retrieved nothing there.
    :param method: one of :data:`~.registry.METHODS` (ranx's names).
    :param norm: the score normalisation applied to every run first (ranx's default ``"min-max"``; see
        :data:`~.registry.NORMALIZATIONS`), or None.
    :param weights: one per run, for ``wsum``, ``wmnz``, ``mixed``, ``w_bordafuse``, ``w_condorcet``
        (default: equal weights).
    :param rrf_k: RRF's constant (default 60), ``params={"k": ...}`` for short.
    :param depth: each run's top ``depth`` documents per query are fused (default: all).
    :param qrels: judgments, for the trained methods (``bayesfuse``, ``posfuse``, ``probfuse``,
        ``segfuse``, ``slidefuse``, ``mapfuse``), which learn from the fused queries they judge.
    :param params: the method's other parameters (its :class:`~.registry.Parameter` values: ``gamma``,
        ``phi``, ``sigma``, ``n_segments``, ``w``).
    :param names: run names for messages (default ``run1``, ``run2``, ...).
    :returns: the fused run as a :class:`~haystack_irmetrics.core.inputs.ColumnarRun` (``.data`` is the
        ``{qid: {docid: score}}`` dict), each query's documents by fused score descending.
    :raises FusionError: unknown method or normalisation, a trained method without ``qrels``.
    :raises FusionParameterError: weights that do not fit, a missing parameter or one out of its range
        (:func:`check_method`); a ``FusionError`` and an ``InvalidArgumentError``.

    Each run ranks its documents as trec_eval (and this package's evaluation) does: score descending, ties
    by document id descending, whatever order the run lists them in; the fused ranking breaks ties by first
    appearance over the runs in their order. Usage::

        >>> from haystack_irmetrics.fusion import fuse
        >>> bm25 = {"q1": {"d1": 12.0, "d2": 9.5, "d3": 7.0}}
        >>> dense = {"q1": {"d3": 0.92, "d1": 0.80, "d4": 0.75}}
        >>> fuse([bm25, dense], "rrf").data
        {'q1': {'d1': 0.03252247488101534, 'd3': 0.032266458495966696, 'd2': 0.016129032258064516, 'd4': 0.015873015873015872}}
        >>> fuse([bm25, dense], "wsum", norm="min-max", weights=[0.3, 0.7]).data["q1"]["d3"]
        0.7
    """
    if isinstance(runs, PackedRuns) and depth is not None:
        raise FusionError("depth applies when packing: pass it to pack_runs")
    runs = runs if isinstance(runs, PackedRuns) else list(runs)
    all_params = with_rrf_k(method, params, rrf_k)
    n_runs = len(runs.runs) if isinstance(runs, PackedRuns) else len(runs)
    check_run_count(n_runs)
    # Every argument is checked before any run is read.
    weights, all_params = check_method(method, n_runs, weights, all_params)
    check_trained(method, qrels)
    norm_name(norm)
    entry = METHODS[method]
    packed = runs if isinstance(runs, PackedRuns) else pack_runs(runs, names=names, depth=depth)
    normed = normalize(packed, norm)
    learned: list[Any] = []
    if entry.training is not None:
        labels = training_labels(packed, qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels))
        if not any(lab is not None for lab in labels):
            raise FusionError(f"{method} is trained on judgments, but the qrels judge none of the fused queries")
        hits = [Hits(rows, packed, labels) for rows in normed]
        learned = [entry.training.estimate(h, all_params) for h in hits]
    return fused_run(packed, entry.scores(Fusing(packed, normed, weights, all_params, learned)))
