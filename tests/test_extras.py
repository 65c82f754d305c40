"""Optional dependencies: a feature whose extra is not installed stops with a MissingDependencyError naming it.

Each test hides the package by putting ``None`` in ``sys.modules`` (Python's own way to make an import fail).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from haystack_irmetrics import IRMetricsError, MissingDependencyError
from haystack_irmetrics.cli import main
from haystack_irmetrics.io import write_trec_run

ROWS = [
    {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1},
    {"query_id": "q1", "doc_id": "d2", "position": 2, "vote": 0},
    {"query_id": "q2", "doc_id": "d3", "position": 1, "vote": 1},
]


def hide(monkeypatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def test_a_missing_dependency_is_an_irmetrics_error_and_an_import_error():
    assert issubclass(MissingDependencyError, IRMetricsError)
    assert issubclass(MissingDependencyError, ImportError)


@pytest.mark.parametrize("module", ["polars", "pyarrow"])
def test_feedback_without_polars_or_pyarrow_names_the_feedback_extra(monkeypatch, module):
    from haystack_irmetrics.feedback import FeedbackLog, aggregate_feedback, evaluate_feedback

    hide(monkeypatch, module)
    for call in (
        lambda: FeedbackLog(ROWS),
        lambda: aggregate_feedback(ROWS),
        lambda: evaluate_feedback(ROWS, n_resamples=10),
    ):
        with pytest.raises(MissingDependencyError, match=rf"{module} is not installed.*haystack-irmetrics\[feedback\]"):
            call()


def test_the_spark_functions_without_polars_name_the_feedback_extra(monkeypatch):
    from haystack_irmetrics.feedback import merge_partials, normalize_batches, partial_aggregate

    hide(monkeypatch, "polars")
    for name, call in (
        ("normalize_batches", lambda: next(normalize_batches(iter([])))),
        ("partial_aggregate", lambda: next(partial_aggregate(iter([])))),
        ("merge_partials", lambda: merge_partials([])),
    ):
        with pytest.raises(MissingDependencyError, match=rf"^{name}: polars is not installed"):
            call()


def test_irmetrics_feedback_without_polars_exits_2_naming_the_extra(tmp_path, monkeypatch, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    hide(monkeypatch, "polars")
    assert main(["feedback", str(log)]) == 2
    err = capsys.readouterr().err
    assert "haystack-irmetrics[feedback]" in err and "Traceback" not in err


def test_comparisons_without_scipy_name_the_stats_extra(tmp_path, monkeypatch, capsys):
    from haystack_irmetrics.stats import compare_paired, paired_t_test
    from haystack_irmetrics.stats.correlation import rank_correlation

    hide(monkeypatch, "scipy", "scipy.stats")
    with pytest.raises(MissingDependencyError, match=r"paired t-test: scipy is not installed.*\[stats\]"):
        paired_t_test([0.5, 0.7, 0.9], [0.3, 0.6, 0.5])
    with pytest.raises(MissingDependencyError, match=r"\[stats\]"):
        compare_paired({"P@1": [1.0, 0.0, 1.0]}, {"P@1": [0.0, 0.0, 1.0]})
    with pytest.raises(MissingDependencyError, match=r"rank correlations: scipy"):
        rank_correlation({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 1.0, "b": 3.0, "c": 2.0})


def test_plots_without_matplotlib_exit_2_naming_the_plots_extra(tmp_path, monkeypatch, capsys):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.trec"
    qrels.write_text("q1 0 d1 1\n")
    write_trec_run({"q1": {"d1": 1.0, "d2": 0.5}}, run)
    hide(monkeypatch, "matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg")
    assert main(["plot", "pr", str(qrels), str(run), "-o", str(tmp_path / "pr.png")]) == 2
    err = capsys.readouterr().err
    assert "plots: matplotlib is not installed" in err and "haystack-irmetrics[plots]" in err
    assert "Traceback" not in err and not (tmp_path / "pr.png").exists()


def test_downloading_a_beir_dataset_without_beir_says_what_to_install_and_how_to_do_without(tmp_path, monkeypatch):
    from haystack_irmetrics.beir import resolve_dataset

    hide(monkeypatch, "beir")
    with pytest.raises(MissingDependencyError, match=r"beir is not installed.*Without network access, download"):
        resolve_dataset("nfcorpus", data_dir=tmp_path)


def test_a_dense_pipeline_without_the_sentence_transformers_integration_names_the_dense_extra(monkeypatch):
    from haystack_irmetrics.beir import load_beir_pipelines

    hide(monkeypatch, "haystack_integrations.components.embedders.sentence_transformers")
    for name in ("dense", "hybrid"):
        with pytest.raises(MissingDependencyError, match=r"haystack-irmetrics\[dense\]"):
            load_beir_pipelines(name, progress=False)


def test_every_hint_says_how_to_install_from_pypi_and_from_a_clone(monkeypatch):
    from haystack_irmetrics.feedback import FeedbackLog

    hide(monkeypatch, "polars")
    with pytest.raises(MissingDependencyError) as err:
        FeedbackLog(ROWS)
    assert str(err.value) == (
        "feedback logs: polars is not installed (needed here); "
        "pip install 'haystack-irmetrics[feedback]' (from PyPI) or pip install -e \".[feedback]\" (in a clone)"
    )


def test_the_dense_hint_says_to_install_a_cpu_torch_first(monkeypatch):
    from haystack_irmetrics.beir import load_beir_pipelines

    hide(monkeypatch, "haystack_integrations.components.embedders.sentence_transformers")
    with pytest.raises(MissingDependencyError) as err:
        load_beir_pipelines("dense", progress=False)
    message = str(err.value)
    torch_first = message.index("install a CPU build of torch first, e.g. pip install torch==2.13.0")
    assert "(otherwise pip pulls a multi-GB CUDA build)" in message
    assert torch_first < message.index("then pip install 'haystack-irmetrics[dense]' (from PyPI)")
    assert message.rstrip(". ").endswith('or pip install -e ".[dense]" (in a clone)')


def test_the_beir_download_hint_also_says_torch_first_since_beir_pulls_it(tmp_path, monkeypatch):
    from haystack_irmetrics.beir import resolve_dataset

    hide(monkeypatch, "beir")
    with pytest.raises(MissingDependencyError, match=r"CPU build of torch first.*\[oracles\]") as err:
        resolve_dataset("nfcorpus", data_dir=tmp_path)
    assert "Without network access" in str(err.value)


def test_an_extra_without_torch_gives_no_torch_advice(monkeypatch):
    hide(monkeypatch, "scipy", "scipy.stats")
    from haystack_irmetrics.stats import paired_t_test

    with pytest.raises(MissingDependencyError) as err:
        paired_t_test([0.5, 0.7, 0.9], [0.3, 0.6, 0.5])
    assert "torch" not in str(err.value) and 'pip install -e ".[stats]" (in a clone)' in str(err.value)


def test_irmetrics_prints_both_install_commands_on_one_line(tmp_path, monkeypatch, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    hide(monkeypatch, "pyarrow")
    assert main(["feedback", str(log)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "pip install 'haystack-irmetrics[feedback]' (from PyPI) or pip install -e \".[feedback]\"" in line


def _pyproject() -> dict:
    from .conftest import ROOT

    tomllib = pytest.importorskip("tomllib", reason="Python 3.11's TOML reader")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_default_bm25_engine_is_a_base_dependency_and_the_bm25_extra_an_alias():
    project = _pyproject()["project"]
    base = {re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    assert {"bm25s", "pystemmer"} <= base  # pip install haystack-irmetrics, then irmetrics beir, runs
    assert project["optional-dependencies"]["bm25"]  # pip install 'haystack-irmetrics[bm25]' keeps working


def test_make_demo_and_the_readme_install_the_base_package_only():
    from .conftest import ROOT

    demo = (ROOT / "Makefile").read_text(encoding="utf-8").split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "pip install -q -e .\n" in demo + "\n" and "[bm25]" not in demo
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/pip install -e . && .venv/bin/irmetrics beir" in readme and '".[bm25]"' not in readme


def test_a_missing_bm25s_names_the_bm25_alias_that_reinstalls_it(monkeypatch):
    from haystack_irmetrics._extras import require

    hide(monkeypatch, "bm25s")
    with pytest.raises(MissingDependencyError, match=r"bm25s is not installed.*haystack-irmetrics\[bm25\]"):
        require("bm25s", purpose="the bm25s BM25 engine")


CLICK_DATA = Path(__file__).resolve().parent.parent / "examples" / "data"


@pytest.mark.parametrize("module", ["polars", "pyarrow"])
def test_irmetrics_clicks_and_interleave_without_polars_or_pyarrow_name_the_clicks_extra(
    tmp_path, monkeypatch, capsys, module
):
    hide(monkeypatch, module)
    log = str(CLICK_DATA / "click_log.csv")
    for argv in (
        ["clicks", "fit", log, "--model", "pbm", "-o", str(tmp_path / "out")],
        ["clicks", "compare", log, "--models", "ctr,pbm"],
        ["clicks", "windows", str(CLICK_DATA / "timed_clicks.csv")],
        ["interleave", str(CLICK_DATA / "interleaved_clicks.csv")],
    ):
        assert main(argv) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"irmetrics: error: click logs: {module} is not installed (needed here); "), line
        assert "pip install 'haystack-irmetrics[clicks]' (from PyPI)" in line and "[feedback]" not in line


def test_click_logs_and_their_statistics_in_python_name_the_clicks_extra(monkeypatch):
    from haystack_irmetrics.clicks import ClickLog
    from haystack_irmetrics.clicks.statistics import fit_statistics, session_statistics

    hide(monkeypatch, "polars")
    rows = [{"session": "s", "query_id": "q", "doc_id": "d", "position": 1, "click": 1}]
    with pytest.raises(MissingDependencyError, match=r"^click logs: polars is not installed.*\[clicks\]"):
        ClickLog(rows)
    with pytest.raises(MissingDependencyError, match=r"^session_statistics: polars is not installed.*\[clicks\]"):
        next(session_statistics(iter([]), model="pbm"))
    with pytest.raises(MissingDependencyError, match=r"^fit_statistics: polars is not installed.*\[clicks\]"):
        fit_statistics("pbm", [])


def test_irmetrics_feedback_on_a_click_log_with_click_qrels_names_the_feedback_extra(tmp_path, monkeypatch, capsys):
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("q01\t0\tdoc0159\t0.8\n")
    hide(monkeypatch, "polars")
    assert main(["feedback", str(CLICK_DATA / "click_log.csv"), "--qrels", str(qrels)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "feedback logs: polars is not installed" in line and "haystack-irmetrics[feedback]" in line


def test_the_clicks_extra_installs_what_click_logs_need():
    extras = _pyproject()["project"]["optional-dependencies"]
    names = {re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].lower() for d in extras["clicks"]}
    assert names == {"polars", "pyarrow", "scipy"}
    assert set(extras["clicks"]) <= set(extras["test"])


#: Makes ``haystack_integrations.components.embedders`` (the dense extra's package) fail to import in a
#: subprocess, as it does where the extra is not installed.
_NO_DENSE = """
import sys

class NoDense:
    def find_spec(self, name, path=None, target=None):
        if name == "haystack_integrations.components.embedders" or name.startswith(
            "haystack_integrations.components.embedders."
        ):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoDense())
"""


def test_irmetrics_judge_with_the_minilm_judge_without_the_dense_extra_is_one_line_naming_it(tmp_path):
    """Haystack logged an import traceback naming haystack_integrations and failed in its own words; the judge's
    YAML is now read for components of an extra first."""
    import os
    import subprocess

    from .conftest import ROOT

    (tmp_path / "block").mkdir()
    (tmp_path / "block" / "sitecustomize.py").write_text(_NO_DENSE)
    sample, data = ROOT / "haystack_irmetrics" / "datasets" / "sample", CLICK_DATA
    argv = [sys.executable, "-m", "haystack_irmetrics.cli", "judge", str(data / "good.trec"), str(data / "poor.trec")]
    argv += ["--qrels", str(data / "half_qrels.tsv"), "--queries", str(sample), "--corpus", str(sample)]
    argv += ["--judge", str(ROOT / "pipelines" / "judge_minilm.yaml"), "--fit", "80", "-o", str(tmp_path / "out")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "block"), str(ROOT)])}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("irmetrics: error: ") and "judge_minilm.yaml (SentenceTransformersDocumentEmbedder)" in line
    assert "pip install 'haystack-irmetrics[dense]'" in line and "torch==2.13.0" in line
    assert not done.stdout and not (tmp_path / "out").exists()


def test_loading_a_pipeline_whose_nested_component_needs_an_extra_names_the_extra(monkeypatch):
    from haystack_irmetrics.components.judge import load_judge
    from haystack_irmetrics.integration.loading import load_pipeline

    from .conftest import ROOT

    hide(monkeypatch, "haystack_integrations.components.embedders.sentence_transformers")
    yaml_path = str(ROOT / "pipelines" / "judge_minilm.yaml")
    for call in (lambda: load_judge(yaml_path), lambda: load_pipeline(yaml_path)):
        with pytest.raises(MissingDependencyError, match=r"\(SentenceTransformersDocumentEmbedder\): .*\[dense\]"):
            call()


def test_judge_agreement_without_scipy_stops_before_the_first_request_leaving_the_folder_as_it_was(
    tmp_path, monkeypatch, capsys
):
    """--agreement orders the systems by Kendall's tau (scipy): it once found out after judging, with
    judgments.jsonl rewritten."""
    from .judge_data import make_case
    from .judge_server import JudgeServer

    case = make_case(tmp_path / "data")
    out = tmp_path / "out"
    argv = ["judge", *map(str, case.runs), "--qrels", str(case.qrels), "--queries", str(case.folder)]
    argv += ["--corpus", str(case.folder), "--depth", "5", "--llm", "m", "-o", str(out), "--no-cache"]
    with JudgeServer(case.labels) as server:
        assert main([*argv, "--api-base-url", server.url]) == 0  # an earlier run's folder
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        asked = len(server.requests)
        capsys.readouterr()
        hide(monkeypatch, "scipy", "scipy.stats")
        assert main([*argv, "--api-base-url", server.url, "--agreement", "4"]) == 2
        assert len(server.requests) == asked
    (line,) = capsys.readouterr().err.splitlines()
    assert "Kendall's tau, --agreement): scipy is not installed" in line and "haystack-irmetrics[stats]" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def _readme_extras() -> list[str]:
    from .conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("| extra | adds | for |", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", table, re.M)


def test_the_readme_install_table_names_every_extra_of_pyproject_once():
    extras = _pyproject()["project"]["optional-dependencies"]
    named = _readme_extras()
    assert sorted(named) == sorted(extras), "README.md's install table and pyproject.toml's extras differ"
    assert {"assess", "clicks"} <= set(named)
