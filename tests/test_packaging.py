"""The package as users install it: the built wheel alone in a fresh venv, and the sdist without a C compiler.

``python -m build`` makes a wheel and an sdist from the tracked files. The wheel is installed into a
new virtual environment with no source tree on its path, and the CLI runs from a folder outside the
repository: this catches package data, entry points and imports that only work from a checkout. Then
the sdist is installed over it with ``CC=false`` (no working C compiler): the install must succeed,
leave the compiled scan out, and give the same numbers through the pure-Python path.

Needs ``build`` (part of the test extra) and a package index for the build and runtime dependencies.
Set ``IRMETRICS_SKIP_PACKAGING=1`` to skip it where no index is reachable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from haystack_irmetrics import evaluate
from haystack_irmetrics.io import read_qrels, read_run

from .conftest import ROOT

pytest.importorskip("build", reason="the test extra's 'build' package")
if os.environ.get("IRMETRICS_SKIP_PACKAGING", "") not in ("", "0"):
    pytest.skip("IRMETRICS_SKIP_PACKAGING is set", allow_module_level=True)

QRELS = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d4 1\nq2 0 d5 1\nq3 0 d9 1\n"
RUN = (
    "q1 Q0 d3 1 2.5 sys\nq1 Q0 d1 2 2.5 sys\nq1 Q0 d7 3 1.0 sys\nq1 Q0 d2 4 0.5 sys\n"
    "q2 Q0 d5 1 0.9 sys\nq2 Q0 d6 2 0.8 sys\nq3 Q0 d8 1 0.3 sys\n"
)


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        pytest.fail(
            f"{' '.join(cmd)} exited {out.returncode}\nstdout:\n{out.stdout[-4000:]}\nstderr:\n{out.stderr[-4000:]}"
        )
    return out


def _source_copy(dest: Path) -> Path:
    """The tracked files only (as a clean clone has them), so nothing built in the checkout leaks in."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if files.returncode != 0:
        pytest.skip("not a git checkout: the tracked files are unknown")
    for name in filter(None, files.stdout.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that would put our checkout or venv on the new interpreter's path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("dist")
    src = _source_copy(work / "src")
    out = work / "out"
    _run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(src)],
        cwd=work,
        env=_clean_env(),
    )
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0], "work": work}


def _pip(python: Path, *args: str) -> list[str]:
    """A pip command installing into (or listing) the environment of ``python``: this interpreter's pip run
    with ``--python`` (the new venv needs no pip of its own, whose install takes longer than the rest), and
    no ``.pyc`` compiled ahead (Python compiles what it imports)."""
    command = [sys.executable, "-m", "pip", "--python", str(python), *args]
    return [*command, "--no-compile"] if args[0] == "install" else command


@pytest.fixture(scope="module")
def fresh_venv(dist) -> Path:
    """A new venv holding the wheel alone, without any extra (a bare ``pip install haystack-irmetrics``:
    `irmetrics beir`'s default BM25, bm25s, must come with it), and its dependencies, nothing of the checkout."""
    env_dir = dist["work"] / "venv"
    venv.create(env_dir, with_pip=False, clear=True)
    python = env_dir / "bin" / "python"
    _run(_pip(python, "install", "-q", str(dist["wheel"])), cwd=dist["work"], env=_clean_env())
    return python


@pytest.fixture(scope="module")
def files(dist) -> dict[str, Path]:
    folder = dist["work"] / "inputs"
    folder.mkdir()
    (folder / "qrels.txt").write_text(QRELS)
    (folder / "run.txt").write_text(RUN)
    return {"qrels": folder / "qrels.txt", "run": folder / "run.txt"}


def _where(python: Path, cwd: Path) -> dict[str, object]:
    code = (
        "import json, haystack_irmetrics as h, haystack_irmetrics.core.native as i;"
        "print(json.dumps({'file': h.__file__, 'native': i.scan() is not None}))"
    )
    return json.loads(_run([str(python), "-c", code], cwd=cwd, env=_clean_env()).stdout)


def _evaluate_cli(python: Path, files: dict[str, Path], cwd: Path) -> dict[str, float]:
    irmetrics = python.parent / "irmetrics"
    out = _run(
        [str(irmetrics), "evaluate", str(files["qrels"]), str(files["run"]), "-k", "1,3,10", "--format", "json"],
        cwd=cwd,
        env=_clean_env(),
    )
    return json.loads(out.stdout)


def _expected(files: dict[str, Path]) -> dict[str, float]:
    return evaluate(read_qrels(files["qrels"]), read_run(files["run"]), k_values=[1, 3, 10]).means


def test_the_wheel_alone_runs_the_sample_benchmark_and_evaluates_files(dist, fresh_venv, files):
    cwd = dist["work"]
    installed = _run(_pip(fresh_venv, "list", "--format", "json"), cwd=cwd, env=_clean_env()).stdout
    names = {p["name"].lower() for p in json.loads(installed)}
    assert {"bm25s", "pystemmer"} <= names and "torch" not in names  # the default engine, and nothing heavy
    where = _where(fresh_venv, cwd)
    assert not str(where["file"]).startswith(str(ROOT)), where  # the installed copy, not the checkout
    assert where["native"] is True  # the wheel carries the compiled scan

    assert _evaluate_cli(fresh_venv, files, cwd) == _expected(files)

    out_dir = cwd / "beir-out"
    _run([str(fresh_venv.parent / "irmetrics"), "beir", "-o", str(out_dir)], cwd=cwd, env=_clean_env())
    metrics = json.loads((out_dir / "sample" / "metrics.json").read_text())
    per_query = json.loads((out_dir / "sample" / "per_query.json").read_text())
    assert json.loads((out_dir / "leaderboard.json").read_text())["datasets"]["sample"] == metrics
    # The published references are package data (the leaderboard's BM25 columns).
    code = "from haystack_irmetrics.beir.leaderboard import load_references as r; print(len(r()['sources']))"
    assert int(_run([str(fresh_venv), "-c", code], cwd=cwd, env=_clean_env()).stdout) >= 3
    assert set(metrics) >= {"NDCG@10", "MAP@100", "Recall@100", "P@10", "MRR@10", "R_cap@100"}
    assert len(per_query["NDCG@10"]) == 40 and 0.0 < metrics["NDCG@10"] <= 1.0  # the sample's 40 test queries
    # The checkout's own run of the same command gives the same numbers.
    from haystack_irmetrics.cli import main

    here = cwd / "beir-here"
    assert main(["beir", "-o", str(here)]) == 0
    assert json.loads((here / "sample" / "metrics.json").read_text()) == metrics


def test_the_sdist_installs_without_a_c_compiler_and_gives_the_same_numbers(dist, fresh_venv, files):
    cwd = dist["work"]
    with_native = _evaluate_cli(fresh_venv, files, cwd)
    _run(
        _pip(fresh_venv, "install", "-q", "--force-reinstall", "--no-deps", str(dist["sdist"])),
        cwd=cwd,
        env=_clean_env(CC="false", CXX="false"),
    )
    where = _where(fresh_venv, cwd)
    assert where["native"] is False  # the optional extension was left out, not a failed install
    assert _evaluate_cli(fresh_venv, files, cwd) == with_native == _expected(files)
