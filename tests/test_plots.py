"""Plots render: files written, non-empty, of the requested size (figsize * dpi pixels, through the Agg
canvas), in the format of the path's suffix; the CLI and the example write them too."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from haystack_irmetrics import InvalidArgumentError
from haystack_irmetrics.cli import main
from haystack_irmetrics.plots import (
    plot_delta_histogram,
    plot_gain_curves,
    plot_metric_vs_k,
    plot_pr_curves,
    plot_runs_metric_vs_k,
    plot_runs_score_distribution,
    plot_score_distribution,
)

ROOT = Path(__file__).resolve().parent.parent
QRELS = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 1, "e": 3}, "q3": {"f": 1}}
RUNS = {
    "bm25": {"q1": {"a": 0.9, "x": 0.8, "b": 0.7, "c": 0.6}, "q2": {"y": 0.9, "e": 0.8, "d": 0.1}, "q3": {"f": 1.0}},
    "dense": {"q1": {"b": 0.9, "a": 0.8}, "q2": {"e": 0.9, "d": 0.8}, "q3": {"z": 1.0, "f": 0.5}},
}


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def svg_size(path: Path) -> tuple[float, float]:
    head = path.read_text()[:2000]
    w = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', head)
    h = re.search(r'<svg[^>]*\sheight="([\d.]+)pt"', head)
    assert w and h, head[:300]
    return float(w.group(1)), float(h.group(1))


@pytest.mark.parametrize(
    "plot,kwargs,size",
    [
        (plot_pr_curves, {}, (640, 400)),
        (plot_pr_curves, {"figsize": (5.0, 5.0), "dpi": 80, "levels": [0.0, 0.5, 1.0], "preset": "trec"}, (400, 400)),
        (plot_gain_curves, {"depth": 5, "discount": "jk"}, (1200, 400)),
        (plot_gain_curves, {"depth": 4, "gain": {1: 1, 2: 3, 3: 7}, "figsize": (9.0, 3.0), "dpi": 50}, (450, 150)),
        (plot_runs_metric_vs_k, {"measure": "nDCG_exp", "ks": [1, 2, 3, 5]}, (640, 400)),
        (plot_runs_score_distribution, {"measure": "Rprec", "dpi": 120}, (768, 480)),
    ],
    ids=["pr", "pr-small", "gain-jk", "gain-map", "metric-vs-k", "distribution"],
)
def test_every_plot_writes_a_png_of_the_requested_size(tmp_path, plot, kwargs, size):
    out = plot(QRELS, RUNS, tmp_path / "sub" / "figure.png", **kwargs)
    assert out == tmp_path / "sub" / "figure.png"
    assert out.stat().st_size > 5000
    assert png_size(out) == size


@pytest.mark.parametrize(
    "plot,size",
    [
        (plot_pr_curves, (460.8, 288.0)),
        (plot_gain_curves, (864.0, 288.0)),
        (plot_runs_metric_vs_k, (460.8, 288.0)),
        (plot_runs_score_distribution, (460.8, 288.0)),
    ],
)
def test_every_plot_of_runs_writes_svg_of_the_requested_size(tmp_path, plot, size):
    out = plot(QRELS, RUNS, tmp_path / "figure.svg")
    assert out.read_text().lstrip().startswith("<?xml") and out.stat().st_size > 5000
    assert svg_size(out) == size


def test_pdf_by_its_suffix(tmp_path):
    out = plot_runs_score_distribution(QRELS, RUNS, tmp_path / "figure.PDF")
    assert out.read_bytes()[:5] == b"%PDF-"


ALL_PLOTS = {
    "pr": lambda path, **kw: plot_pr_curves(QRELS, RUNS, path, **kw),
    "gain": lambda path, **kw: plot_gain_curves(QRELS, RUNS, path, **kw),
    "runs-metric-vs-k": lambda path, **kw: plot_runs_metric_vs_k(QRELS, RUNS, path, **kw),
    "runs-distribution": lambda path, **kw: plot_runs_score_distribution(QRELS, RUNS, path, **kw),
    "delta": lambda path, **kw: plot_delta_histogram([0.1, 0.5], [0.2, 0.3], path, **kw),
    "metric-vs-k": lambda path, **kw: plot_metric_vs_k({"a": {1: 0.5, 3: 0.6}}, path, **kw),
    "distribution": lambda path, **kw: plot_score_distribution({"a": [0.1, 0.5]}, path, **kw),
}


@pytest.mark.parametrize("name", list(ALL_PLOTS))
def test_an_unknown_suffix_raises_before_any_work(tmp_path, name):
    with pytest.raises(InvalidArgumentError, match=r"image format of .*figure\.jpg.*\.png, \.svg or \.pdf"):
        ALL_PLOTS[name](tmp_path / "sub" / "figure.jpg")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", list(ALL_PLOTS))
@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"dpi": 0}, "dpi must be a whole number >= 1"),
        ({"dpi": 2.5}, "dpi must be a whole number >= 1"),
        ({"figsize": (0, 4)}, "figsize must be positive finite inches"),
        ({"figsize": "big"}, r"figsize must be \(width, height\) in inches"),
        ({"figsize": (1000, 1000)}, "each side must be 1 to 32,768"),
    ],
)
def test_a_bad_figure_size_or_dpi_is_an_invalid_argument_not_a_policy(tmp_path, name, kwargs, message):
    from haystack_irmetrics import InvalidPolicyError

    with pytest.raises(InvalidArgumentError, match=message) as caught:
        ALL_PLOTS[name](tmp_path / "figure.png", **kwargs)
    assert not isinstance(caught.value, InvalidPolicyError)
    assert isinstance(caught.value, ValueError)


# --- plots of arrays (the feedback reports' plots) ---

RNG = np.random.default_rng(3)
A, B = RNG.random(60), RNG.random(60)


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


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {lab}\n" for q, docs in QRELS.items() for d, lab in docs.items()))
    paths = []
    for name, run in RUNS.items():
        p = tmp_path / f"{name}.run"
        p.write_text(
            "".join(
                f"{q} Q0 {d} {i + 1} {s} {name}\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())
            )
        )
        paths.append(p)
    return qrels, paths


@pytest.mark.parametrize(
    "kind,extra,size",
    [
        ("pr", ["--preset", "trec", "--levels", "0,0.25,0.5,0.75,1"], (640, 400)),
        ("gain", ["--depth", "5", "--gain", "exp", "--discount", "jk"], (1200, 400)),
        ("metric-vs-k", ["-m", "P", "-k", "1,2,3"], (640, 400)),
        ("distribution", ["-m", "NDCG@3", "--size", "4x3", "--dpi", "50"], (200, 150)),
    ],
)
def test_cli_plot_subcommand(files, tmp_path, capsys, kind, extra, size):
    qrels, (a, b) = files
    out = tmp_path / f"{kind}.png"
    assert main(["plot", kind, str(qrels), f"first={a}", str(b), "-o", str(out), *extra]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert png_size(out) == size


@pytest.mark.parametrize("kind", ["pr", "gain", "metric-vs-k", "distribution"])
def test_cli_plot_writes_every_kind_as_svg_by_the_suffix(files, tmp_path, capsys, kind):
    qrels, (a, b) = files
    out = tmp_path / f"{kind}.svg"
    assert main(["plot", kind, str(qrels), str(a), str(b), "-o", str(out), "--size", "5x3"]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert svg_size(out) == (360.0, 216.0)


def test_cli_plot_errors_exit_2(files, tmp_path, capsys):
    qrels, (a, _) = files
    assert main(["plot", "metric-vs-k", str(qrels), str(a), "-o", str(tmp_path / "x.gif")]) == 2
    assert "use a .png, .svg or .pdf path" in capsys.readouterr().err
    assert main(["plot", "pr", str(qrels), f"x={a}", f"x={a}", "-o", str(tmp_path / "x.png")]) == 2
    assert "two runs are named 'x'" in capsys.readouterr().err
    assert main(["plot", "distribution", str(qrels), str(a), "-m", "Rprec@3", "-o", str(tmp_path / "x.png")]) == 2
    assert "takes no cutoff" in capsys.readouterr().err
    for extra, message in [
        (["--dpi", "0"], "dpi must be a whole number >= 1"),
        (["--size", "0x0"], "figsize must be positive finite inches"),
        (["--size", "nanx4"], "figsize must be positive finite inches"),
        (["--size", "1000x1000"], "each side must be 1 to 32,768"),
    ]:
        assert main(["plot", "pr", str(qrels), str(a), "-o", str(tmp_path / "x.png"), *extra]) == 2
        assert message in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["plot", "pr", str(qrels), str(a), "-o", str(tmp_path / "file" / "x.png")]) == 2
    assert "irmetrics: error:" in capsys.readouterr().err  # the OS's words: not a directory


def test_example_writes_its_figures_and_prints_the_numbers_behind_them(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["plot_curves.py", str(tmp_path)])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(ROOT / "examples" / "plot_curves.py"), run_name="__main__")
    text = out.getvalue()
    assert re.search(r"^bm25 +NDCG@10 0\.\d{4}  nDCG_exp@10 0\.\d{4}  P@10 0\.\d{4}  iP_avg", text, re.M)
    assert "Kendall tau of per-query NDCG@10 between the systems" in text
    names = ["pr_curves.png", "pr_curves.svg", "gain_curves.png", "ndcg_vs_k.png", "ndcg10_per_query.png"]
    for name in names:
        assert f"wrote {tmp_path / name}" in text
        assert (tmp_path / name).stat().st_size > 5000
    assert png_size(tmp_path / "gain_curves.png") == (1200, 400)
    assert png_size(tmp_path / "pr_curves.png") == (640, 400)


def test_sorted_differences_draw_one_line_per_system_in_svg_or_png(tmp_path):
    from haystack_irmetrics.plots import plot_sorted_differences
    from haystack_irmetrics.stats import StatsInputError

    diffs = {"dense": [0.5, -0.25, 0.0, 0.125], "hybrid": np.array([0.75, 0.0, 0.25, 0.5])}
    svg = plot_sorted_differences(diffs, tmp_path / "d.svg", metric="NDCG@10", baseline="bm25")
    text = svg.read_text(encoding="utf-8")
    assert "dense (mean +0.0938)" in text and "hybrid (mean +0.3750)" in text
    assert png_size(plot_sorted_differences(diffs, tmp_path / "d.png", dpi=50)) == (320, 200)
    with pytest.raises(StatsInputError, match="differences of dense"):
        plot_sorted_differences({"dense": [0.5, float("nan")]}, tmp_path / "bad.png")
