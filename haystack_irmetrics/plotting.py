"""Generic curve plots of retrieval runs (the ``plots`` extra: matplotlib, imported on first use).

Each function evaluates one or more runs against the same qrels with :mod:`haystack_irmetrics.core.curves`
and draws one figure, without pyplot's global state, at exactly ``figsize * dpi`` pixels:

* :func:`plot_pr_curves` -- interpolated precision-recall curves, one line per system (PNG/SVG/PDF);
* :func:`plot_gain_curves` -- mean CG, DCG and NDCG against the rank, with the ideal CG/DCG (PNG/SVG/PDF);
* :func:`plot_metric_vs_k` -- any measure with a cutoff against k, one line per system;
* :func:`plot_score_distribution` -- per-query values of one measure, one box per system.

The last two compute the numbers here and draw them with :mod:`haystack_irmetrics.plots` (the feedback
reports' plots), which writes PNG. ``irmetrics plot`` runs these from the command line (see
:func:`add_subcommand`).

Usage::

    >>> import tempfile, pathlib
    >>> from haystack_irmetrics.plotting import plot_pr_curves
    >>> qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 2}}
    >>> runs = {"bm25": {"q1": {"a": 0.9, "x": 0.8, "b": 0.7}, "q2": {"x": 0.9, "c": 0.3}},
    ...         "dense": {"q1": {"b": 0.9, "a": 0.8}, "q2": {"c": 0.9}}}
    >>> out = plot_pr_curves(qrels, runs, pathlib.Path(tempfile.mkdtemp()) / "pr.svg")
    >>> out.suffix, out.stat().st_size > 1000
    ('.svg', True)
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .cli import _ints
from .core.curves import gain_curves, interpolated_pr, measure_at_k
from .core.evaluate import evaluate
from .core.inputs import ColumnarRun, Qrels, QrelsDict, Run, RunDict
from .core.measures import STANDARD_LEVELS, Measure, parse_measure
from .errors import InvalidPolicyError

RunLike = RunDict | Run | ColumnarRun
DEFAULT_SIZE = (6.4, 4.0)
DEFAULT_DPI = 100
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
DEFAULT_KS = (1, 3, 5, 10, 20, 50, 100)


def _figure(figsize: tuple[float, float], dpi: int) -> Any:
    from .plots import _figure as plots_figure  # one place creates figures (Agg canvas, no pyplot)

    return plots_figure(figsize, dpi)


def _format(path: str | os.PathLike[str]) -> str:
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InvalidPolicyError(f"cannot tell the image format of {str(path)!r}: use a .png, .svg or .pdf path")
    return fmt


def _save(fig: Any, path: str | os.PathLike[str]) -> Path:
    fmt = _format(path)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format=fmt, dpi=fig.dpi)  # no tight bounding box: the size is figsize * dpi
    return out


def _png_only(path: str | os.PathLike[str], what: str) -> None:
    if _format(path) != "png":
        raise InvalidPolicyError(f"{what} is drawn by haystack_irmetrics.plots, which writes PNG: use a .png path")


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
    _format(path)
    fig = _figure(figsize, dpi)
    ax = fig.add_subplot()
    for name, run in runs.items():
        pr = interpolated_pr(qrels, run, levels, preset=preset, **policy)
        ax.plot(pr.levels, pr.mean, marker="o", markersize=3, label=f"{name} (area {pr.area():.3f})")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.05)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_title(title or "Interpolated precision-recall")
    ax.grid(alpha=0.3)
    if runs:
        ax.legend(loc="upper right")
    return _save(fig, path)


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
    _format(path)
    fig = _figure(figsize, dpi)
    axes = fig.subplots(1, 3)
    ideal_drawn = False
    for i, (name, run) in enumerate(runs.items()):
        c = gain_curves(qrels, run, depth, gain=gain, discount=discount, preset=preset, **policy)
        ranks = list(range(1, c.depth + 1))
        color = f"C{i % 10}"
        axes[0].plot(ranks, c.mean_cg, color=color, marker="o", markersize=3, label=name)
        axes[1].plot(ranks, c.mean_dcg, color=color, marker="o", markersize=3, label=name)
        axes[2].plot(ranks, c.mean_ndcg, color=color, marker="o", markersize=3, label=name)
        if not ideal_drawn:
            axes[0].plot(ranks, c.mean_icg, color="black", linestyle="--", label="ideal")
            axes[1].plot(ranks, c.mean_idcg, color="black", linestyle="--", label="ideal")
            ideal_drawn = True
    stem = Measure("NDCG", 1, gain=gain, discount=discount).stem
    for ax, label in zip(axes, ("CG", "DCG", stem)):
        ax.set_xlabel("rank")
        ax.set_ylabel(f"mean {label}")
        ax.set_ylim(bottom=0.0)
        ax.set_title(label if label != "DCG" or discount != "jk" else "DCG (J-K discount)")
        ax.grid(alpha=0.3)
        if runs:
            ax.legend(loc="best", fontsize="small")
    axes[2].set_ylim(0.0, 1.05)
    fig.subplots_adjust(wspace=0.3, left=0.06, right=0.98, bottom=0.13)
    return _save(fig, path)


def plot_metric_vs_k(
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

    Drawn by :func:`haystack_irmetrics.plots.plot_metric_vs_k` (PNG).
    """
    _png_only(path, "metric vs k")
    from .plots import plot_metric_vs_k as draw

    means: dict[str, dict[int, float]] = {}
    stem = measure
    for name, run in runs.items():
        curve = measure_at_k(qrels, run, measure, ks, preset=preset, **policy)
        means[name] = dict(zip((int(k) for k in curve.ks), curve.mean.tolist()))
        stem = curve.stem
    return draw(means, path, family=stem, figsize=figsize, dpi=dpi)


def plot_score_distribution(
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

    Drawn by :func:`haystack_irmetrics.plots.plot_score_distribution` (PNG).
    """
    _png_only(path, "the per-query distribution")
    from .plots import plot_score_distribution as draw

    name = parse_measure(measure).name
    per_query = {}
    for system, run in runs.items():
        res = evaluate(qrels, run, None, measures=[name], preset=preset, **policy)
        per_query[system] = list(res.per_query[name].values())
    return draw(per_query, path, metric=name, figsize=figsize, dpi=dpi)


KINDS = {
    "pr": "interpolated precision-recall curves",
    "gain": "mean CG/DCG (with ideal) and NDCG against the rank",
    "metric-vs-k": "a measure against its cutoff k",
    "distribution": "per-query values of one measure",
}


def _size(text: str) -> tuple[float, float]:
    try:
        w, h = (float(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in inches, e.g. 6.4x4, got {text!r}") from None
    return w, h


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def add_subcommand(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``plot`` to the ``irmetrics`` sub-commands."""
    p = sub.add_parser(
        "plot",
        help="draw P-R, gain, metric-vs-k or per-query plots of TREC runs (PNG/SVG)",
        description="Plot one or more TREC runs against the same qrels: "
        + "; ".join(f"'{k}': {v}" for k, v in KINDS.items())
        + ". Needs matplotlib (pip install 'haystack-irmetrics[plots]').",
    )
    p.add_argument("kind", choices=list(KINDS))
    p.add_argument("qrels", help="qrels file: TREC or BEIR TSV (gzip ok)")
    p.add_argument(
        "runs", nargs="+", metavar="[NAME=]RUN", help="TREC run files; NAME= labels a run (default: file name)"
    )
    p.add_argument("-o", "--output", required=True, help="image path: .png, .svg or .pdf (pr and gain)")
    p.add_argument(
        "-m", "--measure", default=None, help="metric-vs-k: e.g. NDCG, nDCG_exp, P; distribution: e.g. NDCG@10"
    )
    p.add_argument("-k", type=_ints, default=list(DEFAULT_KS), help="metric-vs-k cutoffs, e.g. 1,3,5,10,100")
    p.add_argument("--levels", type=_floats, default=list(STANDARD_LEVELS), help="pr recall levels")
    p.add_argument("--depth", type=int, default=10, help="gain: ranks 1..depth")
    p.add_argument("--gain", choices=["linear", "exp"], default=None, help="gain: NDCG gain form")
    p.add_argument("--discount", choices=["log2", "jk"], default=None, help="gain: NDCG discount")
    p.add_argument("--preset", choices=["beir", "trec"], default="beir")
    p.add_argument("--threshold", type=float, default=None, help="relevance threshold for binary measures")
    p.add_argument("--ties", choices=["trec", "stable"], default=None)
    p.add_argument("--size", type=_size, default=None, help="figure size in inches, WIDTHxHEIGHT")
    p.add_argument("--dpi", type=int, default=DEFAULT_DPI)
    p.set_defaults(func=_cmd_plot)
    return p


def _cmd_plot(args: argparse.Namespace) -> int:
    from .io import read_qrels, read_run

    qrels = read_qrels(args.qrels)
    runs: dict[str, RunLike] = {}
    for spec in args.runs:
        name, sep, file = spec.partition("=")
        if not sep:
            name, file = Path(spec).name, spec
        if name in runs:
            raise InvalidPolicyError(f"two runs are named {name!r}; label them NAME=RUN")
        runs[name] = read_run(file)
    policy: dict[str, Any] = {"preset": args.preset, "relevance_threshold": args.threshold, "ties": args.ties}
    size = {"figsize": args.size} if args.size else {}
    if args.kind == "pr":
        out = plot_pr_curves(qrels, runs, args.output, levels=args.levels, dpi=args.dpi, **size, **policy)
    elif args.kind == "gain":
        gain = None if args.gain in (None, "linear") else args.gain
        discount = None if args.discount in (None, "log2") else args.discount
        out = plot_gain_curves(
            qrels, runs, args.output, depth=args.depth, gain=gain, discount=discount, dpi=args.dpi, **size, **policy
        )
    elif args.kind == "metric-vs-k":
        out = plot_metric_vs_k(
            qrels, runs, args.output, measure=args.measure or "NDCG", ks=args.k, dpi=args.dpi, **size, **policy
        )
    else:
        out = plot_score_distribution(
            qrels, runs, args.output, measure=args.measure or "NDCG@10", dpi=args.dpi, **size, **policy
        )
    print(out)
    return 0


__all__ = ["add_subcommand", "plot_gain_curves", "plot_metric_vs_k", "plot_pr_curves", "plot_score_distribution"]
