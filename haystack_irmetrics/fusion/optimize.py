"""A fusion's parameters tuned on judgments, chosen by cross-validation over queries.

The grid is ranx 0.3.21's (``ranx.optimize_fusion``): weights from 0 to 1 in steps of ``step`` (0.1) whose
sum is 1 (as a float sum: ranx's test ``sum(seq) == 1.0``), RRF's k from 10 to 100 by 10, ``gamma``,
``phi`` and ``sigma`` from 0.01 to 1 by 0.01, probfuse's ``n_segments`` and slidefuse's ``w`` from 1 to 100; a
tie keeps the later configuration, as ranx's ``>=`` does. The queries judged and retrieved are shuffled
(``seed``) into ``folds`` folds; each fold's queries are scored by the configuration best on the other
folds (a trained method also learns from those only), so the held-out score is the score of a choice made
without them. The parameters reported for use are the best on all queries.

The search is bounded: a grid of more than ``max_configurations`` (:data:`MAX_CONFIGURATIONS`) configurations
is refused before any work, with the coarser step that fits (ranx's weight grid has ``C(1/step + n - 1,
n - 1)`` tuples: 19,448 for 8 runs at 0.1, 92,378 for 10). The weight tuples are made in ranx's order
without the ``(1/step + 1) ** n`` product ranx filters, and each configuration's scores are dropped once
compared, so time and memory grow with the configurations tried, not with the product.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..checks import choice, number, whole
from ..core.evaluation import evaluate
from ..core.inputs import Qrels
from ..core.measures import parse_measure
from ..core.presets import PRESETS
from ..errors import FusionError, FusionParameterError
from ..io.progress import bar
from ..stats.compare import Comparison
from ..stats.paired import compare_with_baseline
from ..stats.significance import check_seed
from .api import check_method, fuse
from .arguments import argument, hinted
from .packed import PackedRuns, RunInput, check_run_count, pack_runs
from .registry import MAX_CONFIGURATIONS, METHODS, Method, norm_name

_COARSER_STEPS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0)  # what a refusal suggests, the finest that fits first


def _digits(step: float) -> int:
    return str(step)[::-1].find(".")


def _check_step(step: float) -> None:
    hinted(
        lambda: number(step, "the weight step", 0, 1, closed="right", error=FusionParameterError),
        argument("step", value=step),
    )


def _units(step: float) -> int:
    """The steps that make 1, ``round(1 / step)`` (a step so small that ``1 / step`` overflows: 10**324)."""
    whole = 1 / step
    return round(whole) if math.isfinite(whole) else 10**324


def weight_grid_size(n_runs: int, step: float = 0.1, limit: int | None = None) -> int:
    """How many weight tuples :func:`weight_grid` makes at most, counted without making them: the
    ``n_runs``-tuples of whole numbers summing to ``round(1 / step)``, ``C(1 / step + n_runs - 1, n_runs - 1)``
    (ranx's float test can drop a few: 62 of 66 for 3 runs at 0.1). Counting stops past ``limit``.

        >>> weight_grid_size(8), weight_grid_size(10), weight_grid_size(2, 1e-9)
        (19448, 92378, 1000000001)
    """
    _check_step(step)
    units = _units(step)
    size = 1
    for i in range(1, n_runs):  # C(units + i, i) grows with i: stop once past the limit
        size = size * (units + i) // i
        if limit is not None and size > limit:
            return size
    return size


def _weight_tuples(n_runs: int, step: float) -> Iterator[tuple[float, ...]]:
    """ranx's weight tuples in ranx's order (``itertools.product`` over ``0, step, ..., 1``, then its test
    ``sum(seq) == 1.0``), made directly: only a tuple of whole steps summing to ``round(1 / step)`` can sum
    to 1, and those are made in lexicographic order, the product's."""
    digits = _digits(step)
    units = _units(step)
    values = [round(x, digits) if digits >= 0 else x for x in np.arange(0, 1 + step, step).tolist()]
    top = min(units, len(values) - 1)
    index = [0] * n_runs

    def fill(at: int, left: int) -> Iterator[tuple[float, ...]]:
        if at == n_runs - 1:
            if left <= top:
                index[at] = left
                seq = tuple(values[i] for i in index)
                if sum(seq) == 1.0:
                    yield seq
            return
        for i in range(max(0, left - top * (n_runs - 1 - at)), min(left, top) + 1):
            index[at] = i
            yield from fill(at + 1, left - i)

    yield from fill(0, units)


def weight_grid(
    n_runs: int, step: float = 0.1, max_configurations: int = MAX_CONFIGURATIONS
) -> list[tuple[float, ...]]:
    """ranx's weight configurations: every ``n_runs``-tuple of ``0, step, ..., 1`` (rounded as ranx does)
    whose float sum is exactly 1, in ranx's order.

    :raises FusionParameterError: a step outside (0, 1], or more than ``max_configurations`` tuples
        (:func:`check_grid_size`).
    """
    check_grid_size("wsum", n_runs, step, max_configurations)
    return list(_weight_tuples(n_runs, step))


def check_grid_size(method: str, n_runs: int, step: float, max_configurations: int, given: int | None = None) -> int:
    """The size of the grid to search (``given`` configurations, or the default grid of ``method`` over
    ``n_runs`` runs at ``step``), refused past ``max_configurations``.

    :raises FusionParameterError: a grid larger than ``max_configurations``, with the coarser step that fits.
    """
    hinted(
        lambda: whole(max_configurations, "max_configurations", least=1, error=FusionParameterError),
        argument("max_configurations", value=max_configurations),
    )
    if given is not None:
        size, what = given, f"the {argument('grid')} given"
    elif _weighted(method):
        size = weight_grid_size(n_runs, step, max_configurations)
        what = f"{method}'s weights over {n_runs} runs in steps of {step}"
    else:
        return len(_parameter_grid(method))
    if size <= max_configurations:
        return size
    fits = [
        s for s in _COARSER_STEPS if s > step and weight_grid_size(n_runs, s, max_configurations) <= max_configurations
    ]
    hint = ""
    if given is None and fits:
        coarser = fits[0]
        hint = f"a coarser step ({argument('step', value=coarser)}: {weight_grid_size(n_runs, coarser):,} configurations), "
    shown_size = f"{size:,}" if size <= 10**12 else "more than 10^12"
    raise FusionParameterError(
        f"{what} make {shown_size} configurations, more than the {max_configurations:,} a search tries: take "
        f"{hint}fewer runs, or {argument('max_configurations', value=size if size <= 10**12 else 'N')}"
    )


def _entry(method: str) -> Method | None:
    """The registry entry (None for an unknown name: :func:`~.api.check_method` refuses it, in its turn)."""
    return METHODS.get(method)


def _weighted(method: str) -> bool:
    entry = _entry(method)
    return entry is not None and entry.weighted


def _parameter_grid(method: str, inside: bool = False) -> list[dict[str, Any]]:
    """ranx's grid of the method's parameter (:attr:`~.registry.Parameter.grid`), ``inside`` its range only."""
    entry = _entry(method)
    tuned = entry.tuned if entry is not None else None
    if tuned is None:
        return [{}]
    first, last, by = tuned.grid
    if isinstance(by, int):
        values = list(range(int(first), int(last) + 1, by))
    else:
        values = [round(v, _digits(by)) for v in np.arange(first, last + by, by).tolist()]
    return [{tuned.name: v} for v in values if not inside or tuned.inside(v)]


def default_grid(method: str, n_runs: int, step: float = 0.1) -> list[dict[str, Any]]:
    """The configurations ranx's ``optimize_fusion`` tries for ``method`` (one empty one if it has no parameter).

    :raises FusionParameterError: a weight grid of more than :data:`MAX_CONFIGURATIONS` tuples.
    """
    if _weighted(method):
        return [{"weights": list(w)} for w in weight_grid(n_runs, step)]
    return _parameter_grid(method)


def search_grid(
    method: str,
    n_runs: int,
    *,
    grid: Sequence[Mapping[str, Any]] | None = None,
    step: float = 0.1,
    params: Mapping[str, Any] | None = None,
    max_configurations: int = MAX_CONFIGURATIONS,
) -> list[dict[str, Any]]:
    """The configurations :func:`optimize_fusion` tries, each checked (:func:`~.api.check_method`) before any
    work: ``grid``, or ranx's (:func:`default_grid`) less what is outside a parameter's range (ranx's rbc grid
    ends at ``phi = 1``, where every document scores 0).

    :raises FusionParameterError: a grid past ``max_configurations`` (:func:`check_grid_size`), a
        configuration out of range.
    :raises FusionError: an empty grid.
    """
    check_run_count(n_runs)
    if grid is None:
        _check_step(step)
    check_grid_size(method, n_runs, step, max_configurations, None if grid is None else len(grid))
    fixed = dict(params or {})
    if grid is not None:
        configs = [dict(c) for c in grid]
    elif _weighted(method):
        configs = [{"weights": list(w)} for w in _weight_tuples(n_runs, step)]
    else:
        configs = _parameter_grid(method, inside=True)
    if not configs:
        raise FusionError(f"the grid for {method} is empty")
    source = None if grid is None else argument("grid")
    for c in configs:
        extra = {k: v for k, v in c.items() if k != "weights"}
        check_method(method, n_runs, c.get("weights"), {**fixed, **extra}, source=source)
    return configs


def grid_from_values(method: str, values: Sequence[float]) -> dict[str, Any]:
    """The :func:`optimize_fusion` keywords of the command line's ``--grid``: for a weighted method one value,
    the weight step (``{"step": ...}``); else the values of the method's parameter (``{"grid": [...]}``,
    ``rrf``: k). Whole-number parameters keep a value that is not whole, for :func:`check_method` to refuse.

    :raises FusionParameterError: not one value for a weighted method; a method with no parameter to tune.
    """
    entry = _entry(method)
    if entry is not None and entry.weighted:
        if len(values) != 1:
            raise FusionParameterError(
                f"{method}'s {argument('grid')} is one value, the weight step (ranx's 0.1), got {list(values)}"
            )
        return {"step": float(values[0])}
    tuned = entry.tuned if entry is not None else None
    if tuned is None:
        raise FusionParameterError(f"{method} has no parameter to tune ({argument('grid')})")
    whole = isinstance(tuned.grid[2], int)  # ranx's grid of whole numbers (k, n_segments, w)
    return {"grid": [{tuned.name: int(v) if whole and float(v).is_integer() else float(v)} for v in values]}


@dataclass(frozen=True)
class FusionTuning:
    """What :func:`optimize_fusion` found.

    :ivar params: the configuration best on all queries (``weights`` and/or the method's parameter).
    :ivar held_out: the cross-validated score of the fused run (each query scored by the choice made on
        the other folds); ``inputs``: each input run's score on the same queries; ``best_input`` the best.
    :ivar folds: per fold, its configuration and its train and held-out scores.
    :ivar comparisons: ``{input: Comparison}`` of the held-out fused run against each input (``delta`` =
        fused − input; p-values Holm-adjusted over the inputs), from ``stats.compare_with_baseline``.
    :ivar per_query: ``{"fused": {qid: value}, input: {qid: value}, ...}``.
    """

    method: str
    norm: str | None
    metric: str
    params: dict[str, Any]
    held_out: float
    inputs: dict[str, float]
    best_input: str
    folds: list[dict[str, Any]]
    comparisons: dict[str, Comparison]
    per_query: dict[str, dict[str, float]] = field(repr=False)
    n_queries: int = 0
    n_configurations: int = 0

    def joiner_parameters(self, top_k: int | None = None) -> dict[str, Any]:
        """The Haystack ``DocumentJoiner`` init parameters reproducing the tuned fusion
        (:func:`~.joiner.joiner_parameters`; raises ``FusionError`` where no join mode can)."""
        from .joiner import joiner_parameters

        weights = self.params.get("weights")
        params = {k: v for k, v in self.params.items() if k != "weights"}
        return joiner_parameters(
            self.method, norm=self.norm, weights=weights, params=params, n_runs=len(self.inputs), top_k=top_k
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (no per-query values)."""
        return {
            "method": self.method,
            "norm": self.norm,
            "metric": self.metric,
            "params": self.params,
            "held_out": self.held_out,
            "inputs": self.inputs,
            "best_input": self.best_input,
            "queries": self.n_queries,
            "configurations": self.n_configurations,
            "folds": self.folds,
            "comparisons": {
                name: {
                    "delta": -c.delta,
                    "p_t_test": c.p_t,
                    "p_randomization": c.p_randomization,
                    "p_t_test_holm": c.p_t_holm,
                    "p_randomization_holm": c.p_randomization_holm,
                }
                for name, c in self.comparisons.items()
            },
        }


def _scores(run: Any, qrels: Qrels, metric: str, queries: list[str], preset: str, what: str) -> np.ndarray:
    """Per query of ``queries``, ``run``'s ``metric``.

    :raises FusionError: a value that is not a finite number (a gains table whose sums overflow): the
        configurations could not be compared on it.
    """
    values = evaluate(qrels, run, None, measures=[metric], preset=preset).per_query[metric]
    out = np.array([values.get(q, 0.0) for q in queries], dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        q = queries[int(bad[0])]
        raise FusionError(
            f"{metric} of {what} is {out[bad[0]]} for query {q!r}, not a finite number: nothing can be compared on it"
        )
    return out


def _search(
    configs: list[dict[str, Any]], score: Callable[[dict[str, Any]], np.ndarray], masks: list[np.ndarray], tick: Any
) -> list[tuple[int, np.ndarray]]:
    """Per mask, ``(index, values)`` of the configuration whose ``score`` has the highest mean over the mask,
    a tie keeping the later one (ranx's ``>=``). One pass; only the best scores so far are kept."""
    best: list[tuple[float, int, np.ndarray]] = [(-math.inf, -1, np.zeros(0))] * len(masks)
    for i, c in enumerate(configs):
        values = score(c)
        for j, mask in enumerate(masks):
            mean = float(values[mask].mean())
            if mean >= best[j][0]:
                best[j] = (mean, i, values)
        tick()
    return [(i, values) for _, i, values in best]


@dataclass(frozen=True)
class FusionSearch:
    """How :func:`optimize_fusion` searches: the measure it maximises and how, the folds, the grid.

    :ivar metric: the measure maximised, any name :func:`~haystack_irmetrics.evaluate` takes, scored with
        ``preset`` (``"beir"`` or ``"trec"``).
    :ivar folds: cross-validation folds over the judged queries (>= 2), shuffled by ``seed``.
    :ivar grid: the configurations to try (dicts of ``fuse`` keywords: ``weights`` and/or the method's
        parameter); default ranx's (:func:`default_grid`, weights in steps of ``step``).
    :ivar max_configurations: the largest grid searched (:data:`MAX_CONFIGURATIONS`); a larger one is refused
        before any work.
    :raises FusionParameterError: ``folds`` below 2, a preset that is none; an unknown metric or a seed that is
        none raise their own errors (checked when the search is built, before any run is read).
    """

    metric: str = "NDCG@10"
    folds: int = 5
    grid: Sequence[Mapping[str, Any]] | None = None
    step: float = 0.1
    seed: int = 0
    preset: str = "beir"
    max_configurations: int = MAX_CONFIGURATIONS

    def __post_init__(self) -> None:
        parse_measure(self.metric)
        check_seed(self.seed)
        hinted(lambda: whole(self.folds, "folds", least=2, error=FusionParameterError), argument("folds", value=2))
        choice(self.preset, "preset", tuple(PRESETS), error=FusionParameterError)


def optimize_fusion(
    runs: Sequence[RunInput] | PackedRuns,
    qrels: Mapping[str, Mapping[str, float]] | Qrels,
    search: FusionSearch | None = None,
    *,
    method: str = "wsum",
    norm: str | None = "min-max",
    params: Mapping[str, Any] | None = None,
    names: Sequence[str] | None = None,
    depth: int | None = None,
    progress: bool | None = None,
) -> FusionTuning:
    """Tune ``method``'s weights or parameter on ``qrels`` by cross-validation over queries, as ``search``
    says (:class:`FusionSearch`; default: NDCG@10, 5 folds, ranx's grid).

    :param params: fixed parameters of the method (not tuned).
    :param names: run names (:func:`~.packed.pack_runs`); ``depth``: each run's top ``depth`` documents fused.
    :param progress: a progress bar of the configurations tried (default: when stderr is a terminal).
    :raises FusionParameterError: ``folds`` below 2, a grid past ``max_configurations``, a configuration or
        parameter out of its range (all before any run is read).
    :raises FusionError: fewer judged queries than folds, an empty grid, a metric that is not finite.

    Usage::

        >>> from haystack_irmetrics.fusion import FusionSearch, optimize_fusion
        >>> qrels = {f"q{i}": {"good": 1} for i in range(6)}
        >>> a = {f"q{i}": {"good": 1.0, "bad": 2.0, "other": 0.0} for i in range(6)}
        >>> b = {f"q{i}": {"good": 3.0, "bad": 0.0, "other": 1.0} for i in range(6)}
        >>> tuned = optimize_fusion([a, b], qrels, FusionSearch(metric="P@1", folds=3), method="wsum")
        >>> tuned.params, tuned.held_out, tuned.inputs
        ({'weights': [0.6, 0.4]}, 1.0, {'run1': 0.0, 'run2': 1.0})
    """
    search = search if search is not None else FusionSearch()
    metric, folds, seed, preset = search.metric, search.folds, search.seed, search.preset
    metric = parse_measure(metric).name
    rng = check_seed(seed)  # the search checked its values when it was built
    runs = runs if isinstance(runs, PackedRuns) else list(runs)
    n_runs = len(runs.runs) if isinstance(runs, PackedRuns) else len(runs)
    fixed = dict(params or {})
    configs = search_grid(
        method, n_runs, grid=search.grid, step=search.step, params=fixed, max_configurations=search.max_configurations
    )
    norm_name(norm)
    packed = runs if isinstance(runs, PackedRuns) else pack_runs(runs, names=names, depth=depth)
    judged = qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)
    queries = sorted(q for q in packed.qids if judged.judged(q))
    if len(queries) < folds:
        raise FusionError(f"{len(queries)} judged queries cannot make {folds} folds")
    fold_of = np.empty(len(queries), dtype=np.int64)
    for f, part in enumerate(np.array_split(rng.permutation(len(queries)), folds)):
        fold_of[part] = f
    fusing = _Fusing(packed, judged, queries, method, norm, fixed, metric, preset)
    trains = [fold_of != f for f in range(folds)]
    picks = _picks(fusing, configs, trains, progress)
    held = np.zeros(len(queries))
    fold_report = []
    for train, (i, values) in zip(trains, picks):
        held[~train] = values[~train]
        fold_report.append(
            {"params": configs[i], "train": float(values[train].mean()), "test": float(values[~train].mean())}
        )
    inputs, per_query = fusing.inputs(held)
    table = {name: {metric: per_query[name]} for name in ["fused", *packed.names]}
    comparison = compare_with_baseline(table, "fused", measures=[metric], holm_scope="all", seed=seed)
    return FusionTuning(
        method=method,
        norm=norm,
        metric=metric,
        params={**fixed, **configs[picks[-1][0]]},
        held_out=float(held.mean()),
        inputs=inputs,
        best_input=max(inputs, key=lambda n: inputs[n]),
        folds=fold_report,
        comparisons={name: found[metric] for name, found in comparison.comparisons.items()},
        per_query=per_query,
        n_queries=len(queries),
        n_configurations=len(configs),
    )


@dataclass(frozen=True)
class _Fusing:
    """What :func:`optimize_fusion` fuses each configuration of and scores it with."""

    packed: PackedRuns
    judged: Qrels
    queries: list[str]
    method: str
    norm: str | None
    fixed: dict[str, Any]
    metric: str
    preset: str

    def scorer(self, train: Qrels | None) -> Callable[[dict[str, Any]], np.ndarray]:
        """A configuration's per-query values, the method trained on ``train`` (None: no training)."""

        def score(c: dict[str, Any]) -> np.ndarray:
            extra = {k: v for k, v in c.items() if k != "weights"}
            params = {**self.fixed, **extra}
            run = fuse(self.packed, self.method, norm=self.norm, weights=c.get("weights"), qrels=train, params=params)
            return _scores(run, self.judged, self.metric, self.queries, self.preset, f"the fusion {c}")

        return score

    def restricted(self, keep: np.ndarray) -> Qrels:
        """The judgments of the queries ``keep`` marks."""
        kept = np.asarray(self.queries, dtype=object)[keep].tolist()
        return Qrels.from_dict({q: self.judged.data[q] for q in kept})

    def inputs(self, held: np.ndarray) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
        """Each input run's mean, and the per-query values of the fusion (``held``) and of each input run."""
        inputs = {}
        per_query = {"fused": dict(zip(self.queries, held.tolist()))}
        for name, rows in zip(self.packed.names, self.packed.runs):
            run = _input_run(self.packed, rows)
            values = _scores(run, self.judged, self.metric, self.queries, self.preset, f"the run {name!r}")
            inputs[name] = float(values.mean())
            per_query[name] = dict(zip(self.queries, values.tolist()))
        return inputs, per_query


def _picks(
    fusing: _Fusing, configs: list[dict[str, Any]], trains: list[np.ndarray], progress: bool | None
) -> list[tuple[int, np.ndarray]]:
    """``(configuration, per-query values)`` that scores best on each fold's training queries, then on all."""
    everything = np.ones(len(fusing.queries), dtype=bool)
    trained = METHODS[fusing.method].training is not None
    passes = len(trains) + 1 if trained else 1
    with bar(len(configs) * passes, f"fuse --optimize {fusing.method}", "config", progress) as shown:
        if trained:  # each fold learns from its training queries only
            picks = [_search(configs, fusing.scorer(fusing.restricted(t)), [t], shown.update)[0] for t in trains]
            picks.append(_search(configs, fusing.scorer(fusing.judged), [everything], shown.update)[0])
        else:
            picks = _search(configs, fusing.scorer(None), [*trains, everything], shown.update)
    return picks


def _input_run(packed: PackedRuns, rows: Any) -> dict[str, dict[str, float]]:
    """One packed input back as ``{qid: {docid: score}}`` (its depth cut applied), for scoring it alone."""
    ids = packed.doc_ids
    bounds = rows.offsets.tolist()
    cands = rows.candidate.tolist()
    scores = rows.score.tolist()
    out = {}
    for q, a, b in zip(packed.qids, bounds[:-1], bounds[1:]):
        if a < b:
            out[q] = {ids[c]: s for c, s in zip(cands[a:b], scores[a:b])}
    return out
