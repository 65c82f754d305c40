"""``irmetrics fuse`` as one call: :class:`FusionSettings` in (the command's flags, one field each),
:class:`FusionResult` out. The command parses its flags into the settings, calls :func:`run_fusion` and prints
the result; every argument is checked here, before any file is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import FusionError
from .api import check_method, check_trained, fuse, with_rrf_k
from .arguments import argument
from .joiner import joiner_parameters, joiner_yaml
from .optimize import FusionSearch, FusionTuning, grid_from_values, optimize_fusion, search_grid
from .packed import pack_runs
from .registry import MAX_CONFIGURATIONS, norm_name


@dataclass(frozen=True)
class FusionSettings:
    """What to fuse, how, and what to write: ``irmetrics fuse``'s flags.

    :ivar runs: the TREC run files, ``[NAME=]PATH`` each (two or more); ``names`` names them instead.
    :ivar method: the fusion method (:data:`~.registry.METHODS`), ``norm`` the normalisation (``"none"`` or
        None: none), ``weights`` one per run, ``rrf_k`` RRF's constant, ``params`` the method's other
        parameters as ``(name, value)`` pairs, ``depth`` each run's top documents fused, ``qrels`` the
        judgments file (trained methods and ``optimize``).
    :ivar output: the fused run's file (TREC, tagged ``tag``); ``joiner_yaml``: the ``DocumentJoiner`` YAML.
    :ivar optimize: tune the weights or the parameter on ``qrels`` by cross-validation (``metric``, ``folds``,
        ``seed``, ``preset``, ``max_configurations``: :class:`~.optimize.FusionSearch`); ``grid``: the
        command line's ``--grid`` values (:func:`~.optimize.grid_from_values`).
    :ivar progress: a progress bar of the search (None: on a terminal).
    """

    runs: tuple[str, ...]
    method: str = "rrf"
    norm: str | None = "min-max"
    weights: tuple[float, ...] | None = None
    rrf_k: float | None = None
    params: tuple[tuple[str, float], ...] = ()
    depth: int | None = None
    qrels: str | None = None
    names: tuple[str, ...] | None = None
    output: str | None = None
    tag: str = "fused"
    optimize: bool = False
    metric: str = "NDCG@10"
    folds: int = 5
    grid: tuple[float, ...] | None = None
    seed: int = 0
    preset: str = "beir"
    max_configurations: int = MAX_CONFIGURATIONS
    progress: bool | None = None
    joiner_yaml: str | None = None

    def __post_init__(self) -> None:
        # Every argument checked when the settings are built (in the command's spelling within
        # command_line_names), before any file is read.
        _checked(self)
        norm_name(self.norm)
        if self.optimize:
            _search(self, None)

    def search(self, grid: Any) -> FusionSearch:
        """The tuning's search over ``grid`` (the configurations :func:`_checked` made)."""
        return _search(self, grid)


@dataclass(frozen=True)
class FusionResult:
    """What :func:`run_fusion` did.

    :ivar tuning: the tuning (``optimize``), else None.
    :ivar written: the queries of the fused run written to ``output``, else None.
    :ivar joiner: the ``DocumentJoiner`` init parameters written to ``joiner_yaml``, else None.
    :ivar joiner_refused: why no join mode reproduces the fusion, where ``joiner_yaml`` was asked for and none
        does (the fused run and the tuning stand: the caller reports them, then this).
    """

    tuning: FusionTuning | None = None
    written: int | None = None
    joiner: Mapping[str, Any] | None = None
    joiner_refused: FusionError | None = None


def _search(s: FusionSettings, grid: Any) -> FusionSearch:
    return FusionSearch(s.metric, s.folds, grid, seed=s.seed, preset=s.preset, max_configurations=s.max_configurations)


def _checked(settings: FusionSettings) -> tuple[dict[str, Any], Any]:
    """``(params, grid)``: the method's parameters and the search's configurations (None without ``optimize``),
    every argument checked before any file is read."""
    s = settings
    if len(s.runs) < 2:
        raise FusionError(f"fuse needs two runs or more, got {len(s.runs)}: {list(s.runs)}")
    if not (s.output or s.optimize or s.joiner_yaml):
        wanted = f"{argument('output')}, {argument('optimize')} or {argument('joiner_yaml')}"
        raise FusionError(f"nothing to do: give {wanted}")
    if s.optimize and not s.qrels:
        raise FusionError(f"{argument('optimize')} tunes on judgments: give {argument('give_qrels')}")
    params = with_rrf_k(s.method, dict(s.params), s.rrf_k)
    if not s.optimize:
        check_method(s.method, len(s.runs), s.weights, params)
        check_trained(s.method, s.qrels)
        return params, None
    search = grid_from_values(s.method, s.grid) if s.grid else {}
    return params, search_grid(s.method, len(s.runs), params=params, max_configurations=s.max_configurations, **search)


def run_fusion(settings: FusionSettings) -> FusionResult:
    """Fuse the runs, tune the fusion (``optimize``), write the fused run and the joiner, as ``settings`` say.

    :raises FusionError: as :func:`~.api.fuse` and :func:`~.optimize.optimize_fusion` do, and nothing to do,
        fewer than two runs, ``optimize`` without ``qrels``; all before any file is read.
    """
    from ..io.output import write_text
    from ..io.run_names import split_runs
    from ..io.trec import read_qrels, write_trec_run

    s = settings
    params, grid = _checked(s)  # the values again (checked when the settings were built)
    norm = norm_name(s.norm)
    qrels = read_qrels(s.qrels) if s.qrels else None
    packed = pack_runs(*split_runs(list(s.runs), s.names), depth=s.depth)
    weights, tuning = s.weights, None
    if s.optimize:
        search = s.search(grid)
        tuning = optimize_fusion(packed, qrels, search, method=s.method, norm=norm, params=params, progress=s.progress)
        params = dict(tuning.params)
        weights = params.pop("weights", weights)
    written = joiner = refused = None
    if s.output:
        fused = fuse(packed, s.method, norm=norm, weights=weights, qrels=qrels, params=params)
        write_trec_run(fused, Path(s.output), tag=s.tag)
        written = len(fused.qids)
    if s.joiner_yaml:
        try:
            joiner = joiner_parameters(s.method, norm=norm, weights=weights, params=params, n_runs=len(packed.runs))
        except FusionError as e:
            refused = e
        else:
            write_text(Path(s.joiner_yaml), joiner_yaml(joiner))
    return FusionResult(tuning, written, joiner, refused)


__all__ = ["FusionResult", "FusionSettings", "run_fusion"]
