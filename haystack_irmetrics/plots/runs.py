"""Plots of runs: each function evaluates one or more runs against the same qrels with
:mod:`haystack_irmetrics.core.curves` (or :func:`~haystack_irmetrics.evaluate`) and draws one figure,
exactly ``figsize * dpi`` pixels, PNG, SVG or PDF by the path's suffix:

* :func:`plot_pr_curves` -- interpolated precision-recall curves, one line per system;
* :func:`plot_gain_curves` -- mean CG, DCG and NDCG against the rank, with the ideal CG/DCG;
* :func:`plot_runs_metric_vs_k` -- any measure with a cutoff against k, one line per system;
* :func:`plot_runs_score_distribution` -- per-query values of one measure, one box per system.

The last two compute the numbers here and draw them with :mod:`haystack_irmetrics.plots.arrays`
(:func:`~haystack_irmetrics.plots.arrays.plot_metric_vs_k`,
:func:`~haystack_irmetrics.plots.arrays.plot_score_distribution`), which the feedback reports use too.
``irmetrics plot`` runs these from the command line.

Usage::

    >>> import tempfile, pathlib
    >>> from haystack_irmetrics.plots import plot_pr_curves
    >>> qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 2}}
    >>> runs = {"bm25": {"q1": {"a": 0.9, "x": 0.8, "b": 0.7}, "q2": {"x": 0.9, "c": 0.3}},
    ...         "dense": {"q1": {"b": 0.9, "a": 0.8}, "q2": {"c": 0.9}}}
    >>> out = plot_pr_curves(qrels, runs, pathlib.Path(tempfile.mkdtemp()) / "pr.svg")
    >>> out.suffix, out.stat().st_size > 1000
    ('.svg', True)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import STANDARD_LEVELS, Measure, evaluate, gain_curves, interpolated_pr, measure_at_k, parse_measure
from .arrays import plot_metric_vs_k, plot_score_distribution
from .figure import DEFAULT_DPI, DEFAULT_SIZE, figure, image_format, label, save

if TYPE_CHECKING:
    from ..core.inputs import ColumnarRun, Qrels, QrelsDict, Run, RunDict

    RunLike = RunDict | Run | ColumnarRun
#: Cutoffs of :func:`plot_runs_metric_vs_k` (and ``irmetrics plot metric-vs-k``) by default.
DEFAULT_KS = (1, 3, 5, 10, 20, 50, 100)


def plot_pr_curves(
    qrels: QrelsDict | Qrels,
    runs: Mapping[str, RunLike],
    path: str | os.PathLike[str],
    *,
    levels: Sequence[float] = STANDARD_LEVELS,
    preset: str = "beir",
    title: str | None = None,
    figsize: tuple[float, float] = DEFAULT_SIZE,
    dpi: int = DEFAULT_DPI,
    **policy: Any,
) -> Path:
    """Interpolated precision against recall, averaged over queries, one line per system.

    :param runs: ``{system name: run}`` evaluated against the same ``qrels``.
    :param levels: recall levels (default trec_eval's 0.0, 0.1, ..., 1.0).
    :param preset: and ``policy`` as for :func:`~haystack_irmetrics.evaluate`.
    :returns: the path written; the format follows its suffix (``.png``, ``.svg``, ``.pdf``).
    """
    fig = figure(path, figsize, dpi)
    ax = fig.add_subplot()
    for name, run in runs.items():
        pr = interpolated_pr(qrels, run, levels, preset=preset, **policy)
        ax.plot(pr.levels, pr.mean, marker="o", markersize=3, label=label(f"{name} (area {pr.area():.3f})"))
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.05)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_title(label(title or "Interpolated precision-recall"))
    ax.grid(alpha=0.3)
    if runs:
        ax.legend(loc="upper right")
    return save(fig, path)


def plot_gain_curves(
    qrels: QrelsDict | Qrels,
    runs: Mapping[str, RunLike],
    path: str | os.PathLike[str],
    *,
    depth: int = 10,
    gain: str | Mapping[float, float] | None = None,
    discount: str | None = None,
    preset: str = "beir",
    figsize: tuple[float, float] = (12.0, 4.0),
    dpi: int = DEFAULT_DPI,
    **policy: Any,
) -> Path:
    """Mean CG and DCG against the rank with their ideal curves, and mean NDCG, one line per system.

    :param depth: ranks 1..depth on the x axis.
    :param gain: and ``discount``: the NDCG form (see :class:`~haystack_irmetrics.core.measures.Measure`).
    :returns: the path written (``.png``, ``.svg`` or ``.pdf``).
    """
    fig = figure(path, figsize, dpi)
    axes = fig.subplots(1, 3)
    ideal_drawn = False
    for i, (name, run) in enumerate(runs.items()):
        c = gain_curves(qrels, run, depth, gain=gain, discount=discount, preset=preset, **policy)
        ranks = list(range(1, c.depth + 1))
        color = f"C{i % 10}"
        axes[0].plot(ranks, c.mean_cg, color=color, marker="o", markersize=3, label=label(name))
        axes[1].plot(ranks, c.mean_dcg, color=color, marker="o", markersize=3, label=label(name))
        axes[2].plot(ranks, c.mean_ndcg, color=color, marker="o", markersize=3, label=label(name))
        if not ideal_drawn:
            axes[0].plot(ranks, c.mean_icg, color="black", linestyle="--", label="ideal")
            axes[1].plot(ranks, c.mean_idcg, color="black", linestyle="--", label="ideal")
            ideal_drawn = True
    stem = Measure("NDCG", 1, gain=gain, discount=discount).stem
    for ax, kind in zip(axes, ("CG", "DCG", stem)):
        ax.set_xlabel("rank")
        ax.set_ylabel(label(f"mean {kind}"))
        ax.set_ylim(bottom=0.0)
        ax.set_title(label(kind if kind != "DCG" or discount != "jk" else "DCG (J-K discount)"))
        ax.grid(alpha=0.3)
        if runs:
            ax.legend(loc="best", fontsize="small")
    axes[2].set_ylim(0.0, 1.05)
    fig.subplots_adjust(wspace=0.3, left=0.06, right=0.98, bottom=0.13)
    return save(fig, path)


def plot_runs_metric_vs_k(
    qrels: QrelsDict | Qrels,
    runs: Mapping[str, RunLike],
    path: str | os.PathLike[str],
    *,
    measure: str = "NDCG",
    ks: Sequence[int] = DEFAULT_KS,
    preset: str = "beir",
    figsize: tuple[float, float] = DEFAULT_SIZE,
    dpi: int = DEFAULT_DPI,
    **policy: Any,
) -> Path:
    """A measure with a cutoff (``NDCG``, ``nDCG_exp``, ``P``, ``F(beta=2)``, ...) against k, one line per system.

    Drawn by :func:`~haystack_irmetrics.plots.arrays.plot_metric_vs_k`; the path's suffix is checked first.
    """
    image_format(path)
    means: dict[str, dict[int, float]] = {}
    stem = measure
    for name, run in runs.items():
        curve = measure_at_k(qrels, run, measure, ks, preset=preset, **policy)
        means[name] = dict(zip((int(k) for k in curve.ks), curve.mean.tolist()))
        stem = curve.stem
    return plot_metric_vs_k(means, path, family=stem, figsize=figsize, dpi=dpi)


def plot_runs_score_distribution(
    qrels: QrelsDict | Qrels,
    runs: Mapping[str, RunLike],
    path: str | os.PathLike[str],
    *,
    measure: str = "NDCG@10",
    preset: str = "beir",
    figsize: tuple[float, float] = DEFAULT_SIZE,
    dpi: int = DEFAULT_DPI,
    **policy: Any,
) -> Path:
    """Per-query values of one measure (e.g. ``NDCG@10``, ``Rprec``), one box per system.

    Drawn by :func:`~haystack_irmetrics.plots.arrays.plot_score_distribution`; the path's suffix is checked first.
    """
    image_format(path)
    name = parse_measure(measure).name
    per_query = {}
    for system, run in runs.items():
        res = evaluate(qrels, run, None, measures=[name], preset=preset, **policy)
        per_query[system] = list(res.per_query[name].values())
    return plot_score_distribution(per_query, path, metric=name, figsize=figsize, dpi=dpi)


__all__ = ["DEFAULT_KS", "plot_gain_curves", "plot_pr_curves", "plot_runs_metric_vs_k", "plot_runs_score_distribution"]
