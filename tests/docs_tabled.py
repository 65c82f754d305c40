"""The commands of README.md and docs/*.md that tests/test_docs_commands.py does not run (installs, builds,
servers, downloads, minutes of embedding): for each, why it is not run here and the test that covers it
(:class:`Covered`), with a check that what it names exists; and the outputs the runner checks besides a page's
shown text (:data:`SHOWN_TABLES`, :data:`WRITES`)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from .conftest import ROOT

# ---------------------------------------------------------------------------------------------------
# The commands not run here: why, the test that covers each, and a check that what it names exists.


def _makefile_target(name: str, *recipe: str) -> Callable[[], None]:
    def check() -> None:
        text = (ROOT / "Makefile").read_text(encoding="utf-8")
        match = re.search(rf"^{re.escape(name)}:[^\n]*\n((?:\t[^\n]*\n)*)", text, re.M)
        assert match, f"the Makefile has no target {name}"
        lines = match.group(0)
        for part in recipe:
            assert part in lines, f"make {name} does not run {part!r}"

    return check


def _pyproject_section(name: str) -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return text.split(f"\n[{name}]\n", 1)[1].split("\n[", 1)[0]


def _extras(*names: str) -> Callable[[], None]:
    def check() -> None:
        extras = _pyproject_section("project.optional-dependencies")
        for name in names:
            assert re.search(rf"^{re.escape(name)} = \[", extras, re.M), f"pyproject.toml has no extra {name!r}"

    return check


def _torch_pin() -> None:
    assert "torch==2.13.0" in (ROOT / "Makefile").read_text(encoding="utf-8"), "the Makefile pins another torch"


def _script_options(script: str, *options: str) -> Callable[[], None]:
    def check() -> None:
        done = subprocess.run([sys.executable, str(ROOT / script), "--help"], capture_output=True, text=True, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        for option in options:
            assert option in done.stdout, f"{script} --help has no {option}"

    return check


def _files(*paths: str) -> Callable[[], None]:
    def check() -> None:
        for path in paths:
            assert (ROOT / path).exists(), f"{path} does not exist"

    return check


def _slow_marker() -> None:
    options = _pyproject_section("tool.pytest.ini_options")
    assert '"slow: ' in options and '-m \\"not slow\\"' in options, "the slow marker is not registered and left out"


def _test_pythons() -> None:
    _makefile_target("test-pythons", "scripts/test_pythons.sh")()
    assert "tests/test_native_scan.py" in (ROOT / "scripts" / "test_pythons.sh").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Covered:
    reason: str
    test: str  # "tests/test_x.py::test_name"
    check: Callable[[], None] = lambda: None


FRESH_INSTALL = "tests/test_packaging.py::test_the_wheel_alone_runs_the_sample_benchmark_and_evaluates_files"
SDIST = "tests/test_packaging.py::test_the_sdist_installs_without_a_c_compiler_and_gives_the_same_numbers"
DEMO = Covered(
    "installs into ./.venv", FRESH_INSTALL, _makefile_target("demo", "pip install -q -e .", "irmetrics beir")
)
TEST = Covered(
    "installs into ./.venv and runs this suite",
    FRESH_INSTALL,
    _makefile_target("test-install", "torch==2.13.0", '".[test]"'),
)
VENV_DEMO = Covered("creates ./.venv and installs into it", FRESH_INSTALL, _files("pyproject.toml", "setup.py"))
VENV_TEST = Covered("creates ./.venv, installs torch and the test extra", FRESH_INSTALL, _extras("test"))
PYTEST = Covered("runs the suite this test is part of", "tests/test_docs.py::test_the_readme_is_a_short_front_page")
PYTEST_SLOW = Covered(
    "runs the slow tests (minutes)",
    "tests/test_docs_commands.py::test_the_commands_of_each_page_run_and_print_what_it_shows",
    _slow_marker,
)
PIP_TORCH = Covered("downloads torch", FRESH_INSTALL, _torch_pin)
PIP_TORCH_INDEX = Covered("downloads torch from PyTorch's index", FRESH_INSTALL, _torch_pin)
PIP_DENSE = Covered(
    "downloads the dense extra's packages",
    "tests/test_beir_run.py::test_scifact_dense_minilm_runs_end_to_end_offline",
    _extras("dense"),
)
PIP_DOCS = Covered("downloads the docs extra", "tests/test_docs.py::test_the_site_builds_strictly", _extras("docs"))
PIP_BASE = Covered("installs the package", FRESH_INSTALL, _files("pyproject.toml"))
PIP_FEEDBACK = Covered("installs the package with extras", FRESH_INSTALL, _extras("feedback", "columnar", "stats"))
MKDOCS_BUILD = Covered(
    "builds the site (a minute)", "tests/test_docs.py::test_the_site_builds_strictly", _makefile_target("docs")
)
MKDOCS_SERVE = Covered(
    "a server that runs until stopped", "tests/test_docs.py::test_the_site_builds_strictly", _files("mkdocs.yml")
)
PYTHONS = Covered(
    "installs a venv per other CPython and runs the interpreter-dependent modules there (scripts/test_pythons.sh)",
    "tests/test_native_scan.py::test_the_compiled_scan_is_built_where_the_suite_runs",
    _test_pythons,
)
CI = Covered(
    "installs (make test) and runs every suite",
    FRESH_INSTALL,
    lambda: (_files(".ci/run")(), _makefile_target("test-run", "pytest")()),
)
BENCH_ALL = Covered(
    "20-30 minutes, ~8 GB",
    "tests/test_benchmarks_smoke.py::test_benchmark_quick_run_writes_results_and_checks_exactness",
    _script_options("benchmarks/run.py", "--workloads", "--tools", "--quick"),
)
EVERYDAY = Covered(
    "times SciFact five times in fresh processes (minutes)",
    "tests/test_benchmarks_smoke.py::test_everyday_path_benchmark_quick_run_compares_bm25s_alone_and_fresh_processes",
    _script_options("benchmarks/everyday_path.py", "--python-bare", "--quick", "--data", "--out"),
)
IR_MEASURES_BENCH = Covered(
    "minutes: runs of 3,000,000 rows through three ir_measures providers, in three forms",
    "tests/test_ir_measures.py::test_the_benchmark_quick_run_times_ours_beside_pytrec_eval_and_checks_the_means",
    _script_options("benchmarks/ir_measures_provider.py", "--workloads", "--queries", "--quick", "--tools", "--out"),
)
GPU_DENSE = Covered(
    "times dense retrieval in fresh processes: minutes of embedding (on a GPU, the six minutes it is sized for)",
    "tests/test_benchmarks_smoke.py::test_gpu_dense_benchmark_quick_run_compares_encode_alone_and_fresh_processes",
    _script_options(
        "benchmarks/gpu_dense.py", "--quick", "--proxy", "--filler", "--batch-size", "--precision", "--out"
    ),
)
ON_A_GPU = Covered(
    "needs a CUDA GPU; the flags run on the CPU in the test",
    "tests/test_beir_dense_path.py::test_batch_size_precision_and_device_through_the_cli",
)
NO_INDEX = Covered(
    "needs an Elasticsearch server holding SciFact; --no-index is run against a store filled beforehand",
    "tests/test_beir_cache.py::test_no_index_evaluates_an_embedded_qdrant_folder_filled_by_another_pipeline",
)
CACHE_STATE = Covered(
    "a transcript of a made-up cache (a damaged entry, a stray file, a home folder): the listing and clearing "
    "of such a cache are tested",
    "tests/test_cache_safety.py::test_clear_deletes_only_entries_this_package_wrote_and_says_what_it_left_alone",
)

JUDGE_SERVER = Covered(
    "needs a model server (Ollama, vLLM, llama.cpp, OpenAI); the same path runs against a real OpenAI-compatible "
    "server the test starts on 127.0.0.1",
    "tests/test_judge_cli.py::test_judge_fills_exactly_the_holes_of_the_top_k_and_keeps_the_human_labels",
)
_JUDGE = (
    "irmetrics judge bm25.trec dense.trec --qrels scifact/qrels/test.tsv --queries scifact --corpus scifact --depth 10"
)
JUDGE_COMMANDS = {
    "irmetrics judge examples/data/good.trec examples/data/poor.trec --qrels examples/data/half_qrels.tsv "
    "--queries haystack_irmetrics/datasets/sample --corpus haystack_irmetrics/datasets/sample --depth 10 "
    "--judge pipelines/judge_minilm.yaml --fit 80 --agreement 40 -o judged": Covered(
        "loads MiniLM and embeds ~400 pairs (a minute); run as written, its printed lines compared with the page",
        "tests/test_judge_model.py::test_the_documented_minilm_judge_command_learns_cut_points_fills_the_holes_and_"
        "measures_agreement",
        _files("pipelines/judge_minilm.yaml", "examples/data/half_qrels.tsv"),
    ),
    "python examples/judge_experiment.py runs": Covered(
        "embeds SciFact's pools with MiniLM (minutes); its parts are tested: PPI against ppi_py on judged runs, the "
        "agreement figures against scikit-learn, scipy and krippendorff",
        "tests/test_judge_ppi.py::test_irmetrics_judge_ppi_equals_ppi_python_on_the_per_query_values",
        _files("examples/judge_experiment.py"),
    ),
    "ollama pull qwen2.5:7b-instruct": JUDGE_SERVER,
    "vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000": JUDGE_SERVER,
    "llama-server -m qwen2.5-7b-instruct-q4_k_m.gguf --port 8080 --parallel 4": JUDGE_SERVER,
    f"{_JUDGE} --llm qwen2.5:7b-instruct --api-base-url http://localhost:11434/v1 --concurrency 4 -o judged": JUDGE_SERVER,
    f"{_JUDGE} --llm Qwen/Qwen2.5-7B-Instruct --api-base-url http://localhost:8000/v1 --concurrency 32 -o judged": (
        JUDGE_SERVER
    ),
    f"{_JUDGE} --llm qwen2.5-7b-instruct --api-base-url http://localhost:8080/v1 --concurrency 4 -o judged": JUDGE_SERVER,
    f"{_JUDGE} --llm gpt-4o-mini --concurrency 16 -o judged": JUDGE_SERVER,
}

_SAMPLE = "haystack_irmetrics/datasets/sample"
ASSESS = Covered(
    "a server that runs until stopped",
    "tests/test_assess_browser.py::test_judging_by_keyboard_survives_kill_9_and_exports",
)
TABLED: dict[tuple[str, str], Covered] = {
    ("README.md", "make demo"): DEMO,
    ("README.md", "make test"): TEST,
    ("README.md", "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/irmetrics beir"): VENV_DEMO,
    (
        "README.md",
        "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 && "
        '.venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest -q',
    ): VENV_TEST,
    ("docs/getting-started.md", "make demo"): DEMO,
    ("docs/getting-started.md", "make test"): TEST,
    ("docs/getting-started.md", "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/irmetrics beir"): (
        VENV_DEMO
    ),
    (
        "docs/getting-started.md",
        "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 && "
        '.venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest -q',
    ): VENV_TEST,
    ("docs/getting-started.md", "pip install -e ."): PIP_BASE,
    ("docs/getting-started.md", 'pip install -e ".[feedback]"'): PIP_FEEDBACK,
    ("docs/development.md", "make test"): TEST,
    ("docs/development.md", ".venv/bin/python -m pytest -q"): PYTEST,
    ("docs/development.md", ".venv/bin/python -m pytest -m slow"): PYTEST_SLOW,
    ("docs/development.md", "make test-pythons"): PYTHONS,
    ("docs/development.md", "bash .ci/run"): CI,
    ("docs/development.md", 'pip install -e ".[docs]"'): PIP_DOCS,
    ("docs/development.md", "mkdocs build --strict"): MKDOCS_BUILD,
    ("docs/development.md", "mkdocs serve"): MKDOCS_SERVE,
    ("docs/troubleshooting.md", "pip install torch==2.13.0"): PIP_TORCH,
    ("docs/troubleshooting.md", "pip install torch --index-url https://download.pytorch.org/whl/cpu"): PIP_TORCH_INDEX,
    ("docs/troubleshooting.md", 'pip install -e ".[dense]"'): PIP_DENSE,
    ("docs/performance.md", "python3 -m venv .venvs/base && .venvs/base/bin/pip install -e ."): Covered(
        "creates a second venv and installs into it", SDIST, _files("pyproject.toml")
    ),
    ("docs/performance.md", "python benchmarks/everyday_path.py --python-bare .venvs/base/bin/python"): EVERYDAY,
    ("docs/performance.md", "python benchmarks/everyday_path.py --quick"): Covered(
        "runs the benchmark's fresh processes (a minute)", EVERYDAY.test, EVERYDAY.check
    ),
    ("docs/performance.md", "python benchmarks/run.py"): BENCH_ALL,
    ("docs/ir_measures.md", "pip install 'haystack-irmetrics[ir-measures]'"): Covered(
        "installs the package with an extra", FRESH_INSTALL, _extras("ir-measures")
    ),
    ("docs/ir_measures.md", "python benchmarks/ir_measures_provider.py --out benchmarks/ir_measures_provider.md"): (
        IR_MEASURES_BENCH
    ),
    ("docs/performance.md", "python benchmarks/gpu_dense.py"): GPU_DENSE,
    ("docs/performance.md", "python benchmarks/gpu_dense.py --proxy"): GPU_DENSE,
    ("docs/beir.md", "irmetrics beir scifact --retriever dense --device cuda --precision bfloat16"): ON_A_GPU,
    ("docs/beir.md", "irmetrics beir scifact --retriever dense --device cuda:0,cuda:1 --batch-size 512"): ON_A_GPU,
    ("docs/performance.md", "python benchmarks/run.py --workloads msmarco,trecfile --tools ours,pytrec_eval,beir"): (
        Covered("minutes on the full workloads", BENCH_ALL.test, BENCH_ALL.check)
    ),
    ("docs/performance.md", "python benchmarks/run.py --quick"): Covered(
        "a minute; the smoke test runs it with fewer tools", BENCH_ALL.test, BENCH_ALL.check
    ),
    ("docs/beir.md", "irmetrics beir scifact --retriever elasticsearch.yaml --no-index -o runs/elasticsearch"): (
        NO_INDEX
    ),
    ("docs/cli.md", "irmetrics cache list"): CACHE_STATE,
    ("docs/cli.md", "irmetrics cache clear --kind bm25s"): CACHE_STATE,
    **{("docs/judging.md", command): covered for command, covered in JUDGE_COMMANDS.items()},
    (
        "docs/assess.md",
        f"irmetrics assess pairs.tsv --queries {_SAMPLE} --corpus {_SAMPLE} -o judged --assessor ann",
    ): ASSESS,
    (
        "docs/workflow.md",
        f"irmetrics assess sampled.tsv --queries {_SAMPLE} --corpus {_SAMPLE} -o judged --assessor ann",
    ): ASSESS,
}

# Markdown tables of a page that are the printed table of one of its commands (what it prints up to
# the first blank line).
SHOWN_TABLES = {
    ("README.md", "irmetrics compare bm25/sample bm25_top3/sample --names bm25,bm25_top3 -k 3,10 -m NDCG,Recall,MRR"),
}

# Files a command is said to write, checked after it ran.
WRITES = {
    (
        "docs/feedback.md",
        "irmetrics feedback examples/data/feedback_log.csv --run examples/data/new.trec --strategy wilson "
        "--dedup last --user-col user_id --timestamp-col ts --threshold 0.5 --segment device --report out/",
    ): [
        *(f"out/{name}" for name in ("report.md", "report.json", "scores.csv", "comparisons.csv", "per_query.csv")),
        *(f"out/{name}" for name in ("skipped_rows.csv", "qrels.txt", "report.html", "plots/delta_new_NDCG_10.png")),
    ],
    (
        "README.md",
        "irmetrics feedback examples/data/feedback_log.csv --run examples/data/new.trec --strategy wilson --report out/",
    ): ["out/report.html", "out/report.md"],
    (
        "docs/feedback.md",
        "irmetrics feedback examples/data/feedback_log.csv --timestamp-col ts --window 7d -k 5 -m NDCG "
        "--report feedback-windows",
    ): ["feedback-windows/report.html", "feedback-windows/windows.csv", "feedback-windows/plots/windows_NDCG_5.png"],
    ("README.md", "irmetrics report bm25 bm25_top3 -o report.html"): ["report.html"],
    ("README.md", "irmetrics report runs/bm25/scifact runs/haystack/scifact runs/dense/scifact -o scifact.html"): [
        "scifact.html"
    ],
    (
        "docs/report.md",
        "irmetrics report runs/bm25 runs/dense runs/hybrid -k 10,100 -m NDCG,Recall,MRR -o report.html "
        "--latex table.tex --csv summary.csv --markdown summary.md",
    ): ["report.html", "table.tex", "summary.csv", "summary.md"],
}
