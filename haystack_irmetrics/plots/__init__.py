"""Plots of evaluation results with matplotlib (the ``plots`` extra, imported on the first figure).

Every function draws one figure without pyplot's global state and writes it to ``path``, exactly
``figsize * dpi`` pixels, as PNG, SVG or PDF by the path's suffix (:mod:`.figure`).

From arrays (per-query values and means already computed; :mod:`.arrays`):

* :func:`plot_delta_histogram` -- per-query differences of one metric between two systems;
* :func:`plot_sorted_differences` -- ``{system: differences to a baseline}``, sorted, one line per system;
* :func:`plot_metric_vs_k` -- ``{series: {k: mean}}`` against the cutoff k;
* :func:`plot_score_distribution` -- ``{system: per-query values}``, one box per system.

From runs and qrels (evaluated here; :mod:`.runs`):

* :func:`plot_pr_curves` -- interpolated precision-recall curves, one line per system;
* :func:`plot_gain_curves` -- mean CG, DCG and NDCG against the rank, with the ideal CG/DCG;
* :func:`plot_runs_metric_vs_k` -- a measure with a cutoff against k, one line per system;
* :func:`plot_runs_score_distribution` -- per-query values of one measure, one box per system.

Over time windows (:mod:`.windows`): :func:`plot_windows` -- a measure's mean per window with its interval,
the flagged drops circled.
"""

from .arrays import plot_delta_histogram, plot_metric_vs_k, plot_score_distribution, plot_sorted_differences
from .figure import DEFAULT_DPI, DEFAULT_SIZE
from .runs import DEFAULT_KS, plot_gain_curves, plot_pr_curves, plot_runs_metric_vs_k, plot_runs_score_distribution
from .windows import plot_windows

__all__ = [
    "DEFAULT_DPI",
    "DEFAULT_KS",
    "DEFAULT_SIZE",
    "plot_delta_histogram",
    "plot_gain_curves",
    "plot_metric_vs_k",
    "plot_pr_curves",
    "plot_runs_metric_vs_k",
    "plot_runs_score_distribution",
    "plot_score_distribution",
    "plot_sorted_differences",
    "plot_windows",
]
