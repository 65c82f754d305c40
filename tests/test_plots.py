"""Each plot renders a PNG of exactly figsize * dpi pixels, through the Agg canvas."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from haystack_irmetrics.plots import plot_delta_histogram, plot_metric_vs_k, plot_score_distribution

RNG = np.random.default_rng(3)
A, B = RNG.random(60), RNG.random(60)


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


def test_delta_histogram_writes_a_png_of_the_requested_pixel_size(tmp_path):
    out = plot_delta_histogram(A, B, tmp_path / "delta.png", metric="NDCG@10", figsize=(5, 3), dpi=80)
    assert out.stat().st_size > 1000
    assert png_size(out) == (400, 240)


def test_metric_vs_k_writes_a_png_of_the_requested_pixel_size(tmp_path):
    means = {"logged": {1: 0.4, 3: 0.5, 10: 0.6}, "bm25 (condensed)": {1: 0.45, 3: 0.55, 10: 0.7}}
    out = plot_metric_vs_k(
        means, tmp_path / "sub" / "k.png", family="NDCG", styles={"bm25 (condensed)": {"linestyle": "--"}}
    )
    assert out.stat().st_size > 1000
    assert png_size(out) == (640, 400)


def test_score_distribution_writes_a_png_of_the_requested_pixel_size(tmp_path):
    out = plot_score_distribution({"logged": A, "bm25": B}, tmp_path / "dist.png", metric="P@5", figsize=(4, 4), dpi=50)
    assert out.stat().st_size > 500
    assert png_size(out) == (200, 200)


def test_delta_histogram_refuses_unaligned_non_finite_or_non_numeric_per_query_values(tmp_path):
    from haystack_irmetrics.stats import StatsInputError

    with pytest.raises(StatsInputError, match="aligned"):
        plot_delta_histogram(A, B[:10], tmp_path / "x.png")
    with pytest.raises(StatsInputError, match=r"NaN or infinity \(query 0\)"):
        plot_delta_histogram([float("nan"), 0.5], [0.4, 0.1], tmp_path / "x.png")
    with pytest.raises(StatsInputError, match="real numbers"):
        plot_delta_histogram(["0.5", "0.1"], [0.4, 0.1], tmp_path / "x.png")


def test_plots_leave_pyplot_untouched(tmp_path):
    import sys

    plot_score_distribution({"a": A}, tmp_path / "d.png")
    assert "matplotlib.pyplot" not in sys.modules or not __import__("matplotlib.pyplot").pyplot.get_fignums()
