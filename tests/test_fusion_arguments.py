"""Fusion's arguments have stated ranges checked in one place (``check_method``) before any work: from
Python an ``InvalidArgumentError`` (a ``FusionError`` too) naming Python's keywords, through ``irmetrics
fuse`` exit 2 with one line naming its flags. ``--optimize`` searches a bounded grid (a larger one is
refused before any run is read, with the coarser step that fits), shows its progress on a terminal only,
and never prints a bare NaN."""

from __future__ import annotations

import fcntl
import itertools
import json
import math
import os
import pty
import select
import struct
import subprocess
import sys
import termios

import numpy as np
import pytest

from haystack_irmetrics.cli.app import main
from haystack_irmetrics.errors import FusionError, InvalidArgumentError, IRMetricsError
from haystack_irmetrics.fusion import FusionSearch, fuse, optimize_fusion
from haystack_irmetrics.fusion.optimize import weight_grid
from haystack_irmetrics.io.trec import write_trec_run

A = {f"q{i}": {"good": 1.0 + i, "bad": 2.0 + i, "other": 0.5, f"x{i}": 0.25} for i in range(8)}
B = {f"q{i}": {"good": 3.0, "bad": 0.0, "other": 1.0} for i in range(8)}
QRELS = {f"q{i}": {"good": 1, "other": int(i % 3 == 0)} for i in range(8)}


@pytest.fixture
def files(tmp_path):
    write_trec_run(A, tmp_path / "a.trec")
    write_trec_run(B, tmp_path / "b.trec")
    with (tmp_path / "qrels.txt").open("w") as f:
        for q, docs in QRELS.items():
            for d, label in docs.items():
                f.write(f"{q} 0 {d} {label}\n")
    return tmp_path


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("irmetrics: error: ") and err.count("\n") == 1, err
    return err


# (fuse keywords, what the message says, how it names the argument from Python)
PYTHON_CASES = [
    ({"method": "rrf", "rrf_k": 0}, "k must be a number in (0, 1e8]", "rrf_k=0"),
    ({"method": "rrf", "rrf_k": -5}, "k must be a number in (0, 1e8]", "rrf_k=-5"),
    ({"method": "rrf", "rrf_k": math.inf}, "finite", "rrf_k="),
    ({"method": "rrf", "rrf_k": 1e20}, "k must be a number in (0, 1e8], got 1e+20", "rrf_k=1e+20"),
    ({"method": "rrf", "rrf_k": 10**20}, "k must be a number in (0, 1e8]", "rrf_k=100000000000000000000"),
    ({"method": "rrf", "rrf_k": 100_000_001}, "k must be a number in (0, 1e8]", "rrf_k=100000001"),
    ({"method": "rrf", "rrf_k": math.nan}, "finite", "rrf_k="),
    ({"method": "rrf", "params": {"k": 0}}, "k must be a number in (0, 1e8]", "rrf_k=0"),
    ({"method": "rbc", "params": {"phi": 0.0}}, "phi must be a number in (0, 1)", "params={'phi': 0.0}"),
    ({"method": "rbc", "params": {"phi": 1.0}}, "phi must be a number in (0, 1)", "params={'phi': 1.0}"),
    ({"method": "rbc", "params": {"phi": 1.5}}, "phi must be a number in (0, 1)", "params={'phi': 1.5}"),
    ({"method": "logn_isr", "params": {"sigma": -0.5}}, "sigma must be a number in [0, 1]", "params={'sigma': -0.5}"),
    ({"method": "gmnz", "params": {"gamma": math.inf}}, "finite", "params={'gamma'"),
    ({"method": "probfuse", "params": {"n_segments": 0}, "qrels": QRELS}, "whole number >= 1", "n_segments"),
    ({"method": "probfuse", "params": {"n_segments": 2.5}, "qrels": QRELS}, "whole number >= 1", "n_segments"),
    ({"method": "slidefuse", "params": {"w": -1}, "qrels": QRELS}, "whole number >= 0", "params={'w': -1}"),
    ({"method": "slidefuse", "params": {"w": 1.5}, "qrels": QRELS}, "whole number >= 0", "params={'w': 1.5}"),
    ({"method": "wsum", "weights": [0.0, 0.0]}, "not all be zero", ""),
    ({"method": "wsum", "weights": [1.0, math.inf]}, "finite", ""),
    ({"method": "probfuse", "qrels": QRELS}, "needs the parameter n_segments", "params={'n_segments': ...}"),
    ({"method": "rrf", "depth": 0}, "depth must be a whole number >= 1", "depth=0"),
]


@pytest.mark.parametrize(("kwargs", "says", "named"), PYTHON_CASES)
def test_a_parameter_out_of_range_is_an_invalid_argument_naming_pythons_keyword(kwargs, says, named):
    with pytest.raises(InvalidArgumentError) as raised:
        fuse([A, B], **kwargs)
    assert isinstance(raised.value, FusionError)
    assert says in str(raised.value) and named in str(raised.value)
    assert "--" not in str(raised.value)  # no command-line flag from Python


def test_rrf_up_to_its_largest_k_orders_the_fused_scores_as_exact_arithmetic_does():
    """RRF_K_MAX is where double precision still orders sum(1 / (k + rank)) as fractions do (at 1e10 it
    misorders 53 neighbouring documents of these 300)."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    ranks = [rng.permutation(300) for _ in range(2)]
    runs = [{"q": {f"d{i:03d}": float(300 - r[i]) for i in range(300)}} for r in ranks]
    k = 100_000_000
    exact = {f"d{i:03d}": sum(Fraction(1, k + int(r[i]) + 1) for r in ranks) for i in range(300)}
    fused = list(fuse(runs, "rrf", norm=None, rrf_k=k).data["q"])
    assert len(fused) == 300
    for a, b in itertools.pairwise(fused):
        assert exact[a] >= exact[b], (a, b)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"method": "rbc", "grid": [{"phi": 0.5}, {"phi": 1.5}]}, "phi must be a number in (0, 1)"),
        ({"method": "rrf", "grid": [{"k": 0}]}, "k must be a number in (0, 1e8]"),
        ({"method": "wsum", "step": 0}, "step must be a number in (0, 1]"),
        ({"method": "wsum", "step": 1.5}, "step must be a number in (0, 1]"),
        ({"method": "wsum", "step": math.nan}, "step must be a number in (0, 1]"),
        ({"method": "wsum", "folds": 1}, "folds must be a whole number >= 2"),
        ({"method": "wsum", "max_configurations": 0}, "max_configurations must be a whole number >= 1"),
    ],
)
def test_a_search_out_of_range_is_refused_before_any_run_is_read(kwargs, says):
    missing = ["/nonexistent/a.trec", "/nonexistent/b.trec"]  # read, they would raise another error
    with pytest.raises(InvalidArgumentError) as raised:
        search = FusionSearch(metric="P@1", **{k: v for k, v in kwargs.items() if k != "method"})
        optimize_fusion(missing, QRELS, search, method=kwargs["method"])
    assert says in str(raised.value)


CLI_CASES = [
    (["--method", "rrf", "--rrf-k", "0"], "--rrf-k 0"),
    (["--method", "rrf", "--rrf-k", "-1"], "--rrf-k -1"),
    (["--method", "rrf", "--rrf-k", "inf"], "--rrf-k"),
    (["--method", "rrf", "--rrf-k", "1e20"], "--rrf-k 1e+20"),
    (["--method", "rrf", "--rrf-k", "nan"], "--rrf-k"),
    (["--method", "rbc", "--param", "phi=1"], "--param phi="),
    (["--method", "rbc", "--param", "phi=0"], "--param phi="),
    (["--method", "logn_isr", "--param", "sigma=2"], "--param sigma="),
    (["--method", "gmnz", "--param", "gamma=inf"], "--param gamma="),
    (["--method", "slidefuse", "--param", "w=-1", "--qrels", "Q"], "--param w="),
    (["--method", "probfuse", "--param", "n_segments=0", "--qrels", "Q"], "--param n_segments="),
    (["--method", "wsum", "--weights", "0,0"], "not all be zero"),
    (["--method", "rrf", "--depth", "0"], "--depth 0"),
    (["--method", "rbc", "--optimize", "--qrels", "Q", "--grid", "0.5,1.5"], "--grid"),
    (["--method", "rrf", "--optimize", "--qrels", "Q", "--grid", "0,60"], "--grid"),
    (["--method", "probfuse", "--optimize", "--qrels", "Q", "--grid", "2.5"], "--grid"),
    (["--method", "wsum", "--optimize", "--qrels", "Q", "--grid", "0"], "--grid 0"),
    (["--method", "wsum", "--optimize", "--qrels", "Q", "--grid", "nan"], "--grid nan"),
    (["--method", "wsum", "--optimize", "--qrels", "Q", "--folds", "1"], "--folds"),
    (["--method", "wsum", "--optimize", "--qrels", "Q", "--max-configurations", "0"], "--max-configurations"),
]


@pytest.mark.parametrize(("extra", "named"), CLI_CASES)
def test_a_parameter_out_of_range_exits_2_with_one_line_naming_the_flag(files, capsys, extra, named):
    extra = [str(files / "qrels.txt") if e == "Q" else e for e in extra]
    out = files / "fused.trec"
    assert main(["fuse", str(files / "a.trec"), str(files / "b.trec"), *extra, "-o", str(out)]) == 2
    err = one_line_error(capsys)
    assert named in err and "params=" not in err
    assert not out.exists()


def test_trained_methods_name_the_commands_flags_there_and_pythons_keywords_in_python(files, capsys):
    runs = [str(files / "a.trec"), str(files / "b.trec")]
    qrels = ["--qrels", str(files / "qrels.txt")]
    assert main(["fuse", *runs, "--method", "probfuse", *qrels, "-o", str(files / "x")]) == 2
    err = one_line_error(capsys)
    assert "--param n_segments=" in err and "params=" not in err
    assert main(["fuse", *runs, "--method", "posfuse", "-o", str(files / "x")]) == 2
    assert "--qrels" in one_line_error(capsys)
    assert main(["fuse", *runs, "--method", "slidefuse", "--optimize", *qrels, "--grid", "-1"]) == 2
    assert "--grid" in one_line_error(capsys)
    with pytest.raises(InvalidArgumentError, match=r"params=\{'n_segments': \.\.\.\}") as raised:
        fuse([A, B], "probfuse", qrels=QRELS)
    assert "--" not in str(raised.value)
    with pytest.raises(FusionError, match=r"qrels=\)$"):
        fuse([A, B], "posfuse")


def test_bayesfuse_past_its_depth_names_the_depth_flag(tmp_path, capsys):
    deep = {"q1": {f"d{i:04d}": float(2000 - i) for i in range(1001)}}
    write_trec_run(deep, tmp_path / "a.trec")
    write_trec_run(deep, tmp_path / "b.trec")
    (tmp_path / "q.txt").write_text("q1 0 d0001 1\n")
    args = ["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--method", "bayesfuse"]
    assert main([*args, "--qrels", str(tmp_path / "q.txt"), "-o", str(tmp_path / "x")]) == 2
    assert "--depth 1000" in one_line_error(capsys)
    with pytest.raises(FusionError, match="depth=1000"):
        fuse([deep, deep], "bayesfuse", qrels={"q1": {"d0001": 1}})


def test_the_help_names_the_flags_trained_methods_need(capsys):
    with pytest.raises(SystemExit):
        main(["fuse", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    method_help = text[text.index("--method METHOD fusion method") : text.index("--norm NORM score")]
    assert "--qrels" in method_help and "--param n_segments=" in method_help
    assert "params=" not in text
    assert "phi (rbc: in (0, 1))" in text


def test_a_grid_past_the_limit_is_refused_before_any_run_is_read_with_the_step_that_fits(tmp_path, capsys):
    missing = [str(tmp_path / f"r{i}.trec") for i in range(8)]  # never read: refused first
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\n")
    assert main(["fuse", *missing, "--method", "wsum", "--optimize", "--qrels", str(qrels)]) == 2
    err = one_line_error(capsys)
    assert "19,448 configurations" in err and "--grid 0.2" in err and "--max-configurations 19448" in err
    with pytest.raises(InvalidArgumentError, match=r"step=0\.2.*max_configurations=19448"):
        optimize_fusion(missing, {"q1": {"d1": 1}}, method="wsum")


def test_a_tiny_weight_step_is_refused_at_once(files, capsys):
    # ranx's grid at 1e-9 is 10^9 values per run (7.5 GiB as numpy floats) before its 10^18-tuple product.
    args = ["fuse", str(files / "a.trec"), str(files / "b.trec"), "--method", "wsum", "--optimize"]
    assert main([*args, "--qrels", str(files / "qrels.txt"), "--grid", "1e-9"]) == 2
    assert "1,000,000,001 configurations" in one_line_error(capsys)


def test_a_larger_limit_searches_ranx_grid_in_ranx_order():
    from ranx.fusion_optimization.optimize_weights import get_possible_weights, get_trial_configs

    assert weight_grid(5, 0.1, max_configurations=1001) == get_trial_configs(get_possible_weights(0.1), 5)
    with pytest.raises(InvalidArgumentError, match="1,001 configurations"):
        weight_grid(5, 0.1, max_configurations=1000)


def test_optimize_shows_a_progress_bar_of_the_configurations_when_asked(capfd):
    optimize_fusion([A, B], QRELS, FusionSearch(metric="P@1", folds=2), method="wsum", progress=True)
    assert "11/11" in capfd.readouterr().err
    optimize_fusion([A, B], QRELS, FusionSearch(metric="P@1", folds=2), method="posfuse", progress=True)
    assert "3/3" in capfd.readouterr().err  # one configuration, fused for each fold and for all queries
    optimize_fusion([A, B], QRELS, FusionSearch(metric="P@1", folds=2), method="wsum")
    assert capfd.readouterr().err == ""  # stderr is no terminal here


def _on_a_terminal(args: list[str]) -> str:
    """stderr of ``irmetrics args`` run with its stderr on a pseudo-terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a terminal 120 columns wide
    proc = subprocess.Popen(
        [sys.executable, "-m", "haystack_irmetrics.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=slave,
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: the command is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(master)
    assert proc.returncode == 0
    return b"".join(chunks).decode("utf-8", "replace")


def test_the_command_shows_its_progress_on_a_terminal_only(files):
    args = ["fuse", str(files / "a.trec"), str(files / "b.trec"), "--method", "wsum", "--optimize"]
    args += ["--qrels", str(files / "qrels.txt"), "--metric", "P@1", "--folds", "2"]
    assert "11/11" in _on_a_terminal(args)
    assert "11/11" not in _on_a_terminal([*args, "--no-progress"])
    done = subprocess.run([sys.executable, "-m", "haystack_irmetrics.cli", *args], capture_output=True, text=True)
    assert done.returncode == 0 and "11/11" not in done.stderr  # not a terminal


def test_a_metric_that_is_not_finite_is_a_typed_error_never_a_bare_nan(files, capsys):
    # Gains this large make every DCG sum overflow: inf / inf is NaN for every configuration.
    metric = "nDCG(gains={0:0,1:1.7e308})@10"
    args = ["fuse", str(files / "a.trec"), str(files / "b.trec"), "--method", "wsum", "--optimize"]
    assert main([*args, "--qrels", str(files / "qrels.txt"), "--metric", metric, "--folds", "2", "--json"]) == 2
    captured = capsys.readouterr()
    assert "NaN" not in captured.out and "Infinity" not in captured.out
    assert captured.err.startswith("irmetrics: error: ") and captured.err.count("\n") == 1
    with pytest.raises(IRMetricsError):  # named where it is found: the gains (core) or the metric (fusion)
        optimize_fusion([A, B], QRELS, FusionSearch(metric=metric, folds=2), method="wsum")


def test_the_json_report_is_strict_json(files, capsys):
    args = ["fuse", str(files / "a.trec"), str(files / "b.trec"), "--method", "rbc", "--optimize", "--json"]
    assert main([*args, "--qrels", str(files / "qrels.txt"), "--metric", "P@1", "--folds", "2"]) == 0

    def refuse(name: str) -> None:
        raise AssertionError(f"bare {name} in the report")

    report = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert report["configurations"] == 99  # ranx's rbc grid less phi = 1, where every document scores 0
    assert 0 < report["params"]["phi"] < 1
