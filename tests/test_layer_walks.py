"""Each main job walks down the layers of docs/architecture.md and never comes back up.

The import rules (tests/test_architecture.py) say which package may import which; these tests watch the
calls. Each job runs under a profiler that records every call from a function of one part of the package
(``core``, ``io``, ``integration``, ``beir``...) straight into a function of another: each such call must go
down the layer order. A callback handed upwards (a lower layer calling back into a higher one) would show
here as a call going up. Calls that pass through another library (Haystack running our stores, an embedder
calling the embedding cache it was given) are not a direct call between two parts and are not counted;
nor is a generator resumed by the code it was handed to (``evaluate_chunks`` reading the chunks of a run
file that ``io`` streams: data flowing down, not control coming back).
"""

from __future__ import annotations

import csv
import inspect
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from haystack_irmetrics.cli.app import main
from tests.test_architecture import RANK

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "haystack_irmetrics" / "datasets" / "sample"
DATA = REPO / "examples" / "data"
BM25_YAML = """\
components:
  retriever:
    type: haystack.components.retrievers.in_memory.bm25_retriever.InMemoryBM25Retriever
    init_parameters:
      top_k: 10
      document_store:
        type: haystack.document_stores.in_memory.document_store.InMemoryDocumentStore
        init_parameters: {index: layer_walks}
connections: []
"""


GENERATOR = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR | inspect.CO_COROUTINE


def _part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "__init__"


def walk(job: Callable[[], object]) -> dict[tuple[str, str], str]:
    """``{(calling part, called part): an example "caller -> callee"}`` of the calls ``job`` makes between
    two parts of the package."""
    edges: dict[tuple[str, str], str] = {}

    def profile(frame, event, arg):
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        back = frame.f_back
        if back is None or not callee.startswith("haystack_irmetrics."):
            return
        if frame.f_code.co_flags & GENERATOR:  # an iterator handed down, read by its consumer: data, not a call
            return
        caller = back.f_globals.get("__name__", "")
        if not caller.startswith("haystack_irmetrics"):
            return
        a, b = _part(caller), _part(callee)
        if a != b and a in RANK and b in RANK:
            edges.setdefault((a, b), f"{caller}.{back.f_code.co_name} -> {callee}.{frame.f_code.co_name}")

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        job()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return edges


#: The calls up the layers the design has, each an interface a lower layer defines and a higher one implements
#: (the lower one never imports the higher): nothing else may go up.
INTERFACES = {
    # A ColumnarRun (core/inputs.py) reaches a file's doc ids through the accessors its reader gives it
    # (ids_at, find): the ids stay in the reader's string column instead of becoming millions of Python str.
    "haystack_irmetrics.core.inputs.find -> haystack_irmetrics.io._fast.find",
    "haystack_irmetrics.core.inputs.ids_at -> haystack_irmetrics.io._fast.ids_at",
    # The fused run of fusion/ is a ColumnarRun too, its doc ids in the packed runs' one array (fusion.api.fused_run).
    "haystack_irmetrics.core.inputs.find -> haystack_irmetrics.fusion.api.find",
    "haystack_irmetrics.core.inputs.ids_at -> haystack_irmetrics.fusion.api.ids_at",
    # A job's settings built from its keywords by the one builder of the base layer (_settings.settings_of): the
    # job hands its own frozen class down, which checks its values in its __post_init__.
    *(
        f"haystack_irmetrics._settings.settings_of -> haystack_irmetrics.{module}.__init__"
        for module in ("compare.runs", "feedback.settings", "judges.settings", "report.data")
    ),
}


def upward(edges: dict[tuple[str, str], str]) -> list[str]:
    return sorted(e for (a, b), e in edges.items() if RANK[b] >= RANK[a] and e not in INTERFACES)


def test_evaluating_a_run_file_goes_from_the_cli_through_io_to_the_core_and_never_back(capsys):
    edges = walk(lambda: main(["evaluate", str(SAMPLE / "qrels" / "test.tsv"), str(DATA / "sample_run.trec")]))
    assert upward(edges) == []
    assert {("cli", "io"), ("cli", "core"), ("io", "core")} <= set(edges)  # the walk was watched, not skipped
    assert "NDCG@10" in capsys.readouterr().out


def test_a_beir_dataset_through_a_pipeline_goes_down_from_beir_to_integration_and_never_back(tmp_path):
    edges = walk(lambda: main(["beir", "sample", "-o", str(tmp_path / "out"), "--no-progress"]))
    assert upward(edges) == []
    assert {("cli", "beir"), ("beir", "integration"), ("beir", "core")} <= set(edges)
    assert (tmp_path / "out" / "sample" / "run.trec").is_file()


@pytest.mark.parametrize("with_pipeline", [False, True])
def test_a_feedback_log_to_a_report_goes_down_the_layers_and_never_back(tmp_path, with_pipeline):
    pytest.importorskip("polars")
    args = ["feedback", str(DATA / "feedback_log.csv"), "--run", str(DATA / "new.trec"), "--report", str(tmp_path)]
    args += ["--user-col", "user_id", "--timestamp-col", "ts", "--plots" if with_pipeline else "--no-plots"]
    if with_pipeline:  # the replay: logged queries through a Haystack pipeline over a corpus
        corpus = tmp_path / "corpus.jsonl"
        with open(DATA / "feedback_log.csv", newline="") as fh:
            docs = sorted({row["doc_id"] for row in csv.DictReader(fh)})
        corpus.write_text("".join(f'{{"_id": "{d}", "text": "document {d}"}}\n' for d in docs))
        (tmp_path / "bm25.yaml").write_text(BM25_YAML)
        args += ["--pipeline", f"bm25={tmp_path / 'bm25.yaml'}", "--corpus", str(corpus)]
    edges = walk(lambda: main(args))
    assert upward(edges) == []
    assert {("cli", "feedback"), ("feedback", "core"), ("cli", "report")} <= set(edges)
    if with_pipeline:
        assert ("feedback", "integration") in edges
    assert (tmp_path / "report.html").is_file()


def test_a_click_model_fit_goes_down_from_clicks_to_io_and_the_core_and_never_back(tmp_path, capsys):
    """``irmetrics clicks fit``: the CLI calls one job of ``clicks/``, which reads the log through ``io/``'s one
    reader given the click roles and picks the model from its registry; nothing calls back up."""
    pytest.importorskip("polars")
    log = DATA / "click_log.csv"
    edges = walk(
        lambda: main(["clicks", "fit", str(log), "--model", "dbn", "--test-fraction", "0.2", "-o", str(tmp_path)])
    )
    assert upward(edges) == []
    assert {("cli", "clicks"), ("clicks", "io"), ("clicks", "stats")} <= set(edges)
    assert (tmp_path / "qrels.tsv").is_file() and "dbn:" in capsys.readouterr().out


def test_judging_the_holes_goes_down_from_judges_to_integration_and_the_core_and_never_back(tmp_path, capsys):
    """``irmetrics judge`` against the package's own OpenAI-compatible server on 127.0.0.1 (``judges/server.py``):
    the CLI calls ``judges.job.run_judge``, which pools the runs' holes, reads the corpus through ``integration/``,
    asks the server through Haystack's chat generator, and scores Judged@k and Hole@k in the core."""
    pytest.importorskip("haystack")
    from haystack_irmetrics.judges.server import JudgeServer
    from tests.judge_data import make_case

    case = make_case(tmp_path / "data")
    args = ["judge", *map(str, case.runs), "--qrels", str(case.qrels), "--queries", str(case.folder)]
    args += ["--corpus", str(case.folder / "corpus.jsonl"), "--depth", "5", "--llm", "judge-model"]
    with JudgeServer(case.labels) as server:
        args += ["--api-base-url", server.url, "-o", str(tmp_path / "out"), "--no-progress"]
        edges = walk(lambda: main(args))
        assert server.requests  # the model was asked
    assert upward(edges) == []
    assert {("cli", "judges"), ("judges", "integration"), ("judges", "io"), ("judges", "core")} <= set(edges)
    assert (tmp_path / "out" / "qrels.tsv").is_file() and "judged" in capsys.readouterr().out


def test_fusing_runs_goes_down_from_fusion_to_io_stats_and_the_core_and_never_back(tmp_path, capsys):
    """``irmetrics fuse --optimize``: the CLI calls ``fusion.job.run_fusion``, which reads the runs through
    ``io/``, packs and fuses them, tunes the weights by cross-validation scored by the core, compares the held-out
    fused run with each input through ``stats/`` and writes the fused run through ``io/``."""
    fused = tmp_path / "fused.trec"
    args = ["fuse", f"good={DATA / 'good.trec'}", f"poor={DATA / 'poor.trec'}", "--method", "wsum", "--optimize"]
    args += ["--qrels", str(SAMPLE / "qrels" / "test.tsv"), "--folds", "2", "-o", str(fused), "--no-progress"]
    edges = walk(lambda: main(args))
    assert upward(edges) == []
    assert {("cli", "fusion"), ("fusion", "io"), ("fusion", "stats"), ("fusion", "core")} <= set(edges)
    assert fused.is_file() and "wsum" in capsys.readouterr().out
