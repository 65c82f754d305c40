"""Plots of arrays: per-query values and means already computed, one figure per call.

Inputs are plain per-query arrays and means, so these serve :mod:`haystack_irmetrics.feedback`
reports and any other comparison alike (:mod:`haystack_irmetrics.plots.runs` computes them from runs
and qrels first). Each figure is written by :func:`~haystack_irmetrics.plots.figure.save`: exactly
``figsize * dpi`` pixels, PNG, SVG or PDF by the path's suffix.

* :func:`plot_delta_histogram` -- per-query differences of one metric between two systems.
* :func:`plot_sorted_differences` -- per-query differences to a baseline, sorted, one line per system.
* :func:`plot_metric_vs_k` -- a metric family's mean against the cutoff k, one line per series.
* :func:`plot_score_distribution` -- per-query values of one metric, one box (and points) per system.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..stats.significance import seed_value
from .figure import DEFAULT_DPI, DEFAULT_SIZE, figure, label, save


def plot_delta_histogram(
    system: Sequence[float] | np.ndarray,
    baseline: Sequence[float] | np.ndarray,
    path: str | os.PathLike[str],
    *,
    metric: str = "metric",
    names: tuple[str, str] = ("system", "baseline"),
    bins: int | None = None,
    figsize: tuple[float, float] = DEFAULT_SIZE,
    dpi: int = DEFAULT_DPI,
) -> Path:
    """Histogram of per-query ``system - baseline`` for one metric, with the mean and zero marked."""
    from ..stats.significance import StatsInputError, per_query_values  # on use: stats is not needed to draw

    a, b = per_query_values(system), per_query_values(baseline)
    if a.shape != b.shape or a.ndim != 1:
        raise StatsInputError(f"per-query values must be two aligned 1-D arrays, got {a.shape} and {b.shape}")
    delta = a - b
    if not np.isfinite(delta).all():
        raise StatsInputError(
            f"per-query values of {metric} contain NaN or infinity (query {int(np.flatnonzero(~np.isfinite(delta))[0])})"
        )
    fig = figure(path, figsize, dpi)
    ax = fig.add_subplot()
    lo, hi = (float(delta.min()), float(delta.max())) if delta.size else (-1.0, 1.0)
    span = max(hi - lo, 1e-9)
    ax.hist(delta, bins=bins or min(40, max(5, int(np.sqrt(max(delta.size, 1))))), range=(lo - 0.01 * span, hi + 0.01 * span),
            color="#4c72b0", edgecolor="white")  # fmt: skip
    ax.axvline(0.0, color="black", linewidth=1)
    if delta.size:
        ax.axvline(float(delta.mean()), color="#c44e52", linestyle="--", label=f"mean {delta.mean():+.4f}")
        better, worse = int((delta > 0).sum()), int((delta < 0).sum())
        ax.set_title(
            label(
                f"{metric}: {names[0]} - {names[1]} ({better} better, {worse} worse, {delta.size - better - worse} tied)"
            )
        )
        ax.legend(loc="upper right")
    ax.set_xlabel(label(f"per-query difference in {metric}"))
    ax.set_ylabel("queries")
    return save(fig, path)


def plot_sorted_differences(
    differences: Mapping[str, Sequence[float] | np.ndarray],
    path: str | os.PathLike[str],
    *,
    metric: str = "metric",
    baseline: str = "baseline",
    figsize: tuple[float, float] = DEFAULT_SIZE,
    dpi: int = DEFAULT_DPI,
) -> Path:
    """Each system's per-query differences to the baseline (``{system: values}``), sorted from the
    largest gain to the largest loss: one line per system, so any number of systems share one
    figure; where a line crosses zero splits its wins from its losses."""
    from ..stats.significance import StatsInputError, per_query_values  # on use: stats is not needed to draw

    sorted_values = {}
    for name, values in differences.items():
        d = per_query_values(values, f"differences of {name}")
        if not np.isfinite(d).all():
            raise StatsInputError(
                f"differences of {name} in {metric} contain NaN or infinity (query {int(np.flatnonzero(~np.isfinite(d))[0])})"
            )
        sorted_values[name] = np.sort(d)[::-1]
    fig = figure(path, figsize, dpi)
    ax = fig.add_subplot()
    for name, d in sorted_values.items():
        if d.size:
            x = np.linspace(0.0, 100.0, d.size) if d.size > 1 else np.zeros(1)
            ax.plot(x, d, label=label(f"{name} (mean {d.mean():+.4f})"), linewidth=1.5)
    ax.axhline(0.0, color="black", linewidth=1)
    ax.set_xlabel("queries, sorted by difference (%)")
    ax.set_ylabel(label(f"{metric}: system - {baseline}"))
    ax.set_title(label(f"{metric}: per-query difference to {baseline}"))
    ax.grid(alpha=0.3)
    if differences:
        ax.legend(loc="upper right")
    return save(fig, path)


def plot_metric_vs_k(
    means: Mapping[str, Mapping[int, float]],
    path: str | os.PathLike[str],
    *,
    family: str = "metric",
    styles: Mapping[str, Mapping[str, Any]] | None = None,
    figsize: tuple[float, float] = DEFAULT_SIZE,
    dpi: int = DEFAULT_DPI,
) -> Path:
    """One line per series (``{name: {k: mean}}``) of a metric family against the cutoff k.

    ``styles`` maps a series name to keyword arguments of ``Axes.plot`` (e.g. ``{"color": "C0",
    "linestyle": "--"}`` for a system's condensed-list curve).
    """
    fig = figure(path, figsize, dpi)
    ax = fig.add_subplot()
    for name, series in means.items():
        ks = sorted(series)
        style = {"marker": "o", **dict((styles or {}).get(name, {}))}
        ax.plot(ks, [series[k] for k in ks], label=label(name), **style)
    all_k = sorted({k for s in means.values() for k in s})
    if all_k and all_k[-1] / max(all_k[0], 1) > 20:
        ax.set_xscale("log")
    ax.set_xticks(all_k, [str(k) for k in all_k])
    ax.set_xlabel("cutoff k")
    ax.set_ylabel(label(f"mean {family}@k"))
    ax.set_ylim(bottom=0)
    ax.set_title(label(f"{family}@k"))
    ax.grid(alpha=0.3)
    if means:
        ax.legend(loc="best")
    return save(fig, path)


def plot_score_distribution(
    per_query: Mapping[str, Sequence[float] | np.ndarray],
    path: str | os.PathLike[str],
    *,
    metric: str = "metric",
    figsize: tuple[float, float] = DEFAULT_SIZE,
    dpi: int = DEFAULT_DPI,
    seed: int = 0,
) -> Path:
    """Per-query values of one metric: a box per system with the queries jittered over it (``seed``: the jitter's)."""
    seed = seed_value(seed)
    fig = figure(path, figsize, dpi)
    ax = fig.add_subplot()
    names = list(per_query)
    data = [np.asarray(per_query[n], dtype=np.float64) for n in names]
    if names:
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(range(1, len(names) + 1), [label(n) for n in names])
        for i, values in enumerate(data, 1):
            rng = np.random.default_rng([seed, i])
            ax.scatter(i + rng.uniform(-0.15, 0.15, values.size), values, s=6, alpha=0.35, color="#4c72b0")
    ax.set_ylabel(label(f"per-query {metric}"))
    ax.set_title(label(f"{metric} per query" + (f" ({data[0].size} queries)" if data else "")))
    ax.grid(axis="y", alpha=0.3)
    return save(fig, path)


__all__ = ["plot_delta_histogram", "plot_metric_vs_k", "plot_score_distribution"]
