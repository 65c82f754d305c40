"""Plots render: files written, non-empty, of the requested size; the CLI and the example write them too."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import struct
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import InvalidPolicyError
from haystack_irmetrics.plotting import (
    plot_gain_curves,
    plot_metric_vs_k,
    plot_pr_curves,
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
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
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
        (plot_metric_vs_k, {"measure": "nDCG_exp", "ks": [1, 2, 3, 5]}, (640, 400)),
        (plot_score_distribution, {"measure": "Rprec", "dpi": 120}, (768, 480)),
    ],
    ids=["pr", "pr-small", "gain-jk", "gain-map", "metric-vs-k", "distribution"],
)
def test_every_plot_writes_a_png_of_the_requested_size(tmp_path, plot, kwargs, size):
    out = plot(QRELS, RUNS, tmp_path / "sub" / "figure.png", **kwargs)
    assert out == tmp_path / "sub" / "figure.png"
    assert out.stat().st_size > 5000
    assert png_size(out) == size


@pytest.mark.parametrize("plot,size", [(plot_pr_curves, (460.8, 288.0)), (plot_gain_curves, (864.0, 288.0))])
def test_curve_plots_write_svg_of_the_requested_size(tmp_path, plot, size):
    out = plot(QRELS, RUNS, tmp_path / "figure.svg")
    assert out.read_text().lstrip().startswith("<?xml") and out.stat().st_size > 5000
    assert svg_size(out) == size


def test_unknown_suffix_and_svg_for_the_png_only_plots_raise_before_any_work(tmp_path):
    with pytest.raises(InvalidPolicyError, match=r"\.png, \.svg or \.pdf"):
        plot_pr_curves(QRELS, RUNS, tmp_path / "figure.jpg")
    with pytest.raises(InvalidPolicyError, match="writes PNG"):
        plot_metric_vs_k(QRELS, RUNS, tmp_path / "figure.svg")
    assert not list(tmp_path.iterdir())


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


def test_cli_plot_errors_exit_2(files, tmp_path, capsys):
    qrels, (a, _) = files
    assert main(["plot", "metric-vs-k", str(qrels), str(a), "-o", str(tmp_path / "x.svg")]) == 2
    assert "writes PNG" in capsys.readouterr().err
    assert main(["plot", "pr", str(qrels), f"x={a}", f"x={a}", "-o", str(tmp_path / "x.png")]) == 2
    assert "two runs are named 'x'" in capsys.readouterr().err
    assert main(["plot", "distribution", str(qrels), str(a), "-m", "Rprec@3", "-o", str(tmp_path / "x.png")]) == 2
    assert "takes no cutoff" in capsys.readouterr().err
    for extra, message in [
        (["--dpi", "0"], "dpi must be a positive integer"),
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
