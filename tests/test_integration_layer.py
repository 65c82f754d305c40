"""The Haystack integration layer: one set of socket rules, one query loop, one corpus -> Documents, the stores'
home with their old YAML paths kept; and the one reader of BEIR qrels, the Holm scope as data, files written in
the caller's block."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from haystack import Document, Pipeline, component
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_irmetrics.errors import OutputError, ParseError, PipelineError, StatsInputError
from haystack_irmetrics.feedback import aggregate_feedback, replay_pipeline
from haystack_irmetrics.integration.corpus import corpus_documents, write_into_stores
from haystack_irmetrics.integration.documents import DocumentPath
from haystack_irmetrics.integration.queries import QueryRunner
from haystack_irmetrics.integration.sockets import BEIR_NAMING, REPLAY_NAMING, find_sockets
from haystack_irmetrics.io import read_qrels
from haystack_irmetrics.io.beir_data import read_beir_qrels_tsv
from haystack_irmetrics.io.output import replacing_file
from haystack_irmetrics.stats.paired import compare_with_baseline

REPO = Path(__file__).resolve().parents[1]
ROWS = [
    {"query_id": "q1", "doc_id": "doc1", "position": 1, "vote": "up"},
    {"query_id": "q2", "doc_id": "doc2", "position": 1, "vote": "up"},
]


@component
class Filtered:
    """A retriever-like component with a mandatory ``filters`` input besides the query."""

    @component.output_types(documents=list[Document])
    def run(self, query: str, filters: dict) -> dict:
        return {"documents": [Document(id="doc1", score=1.0)]}


@component
class Prefetching:
    """Records the batches it is handed and returns one document per query."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def prefetch(self, queries: list[str], top_k: int | None) -> None:
        self.batches.append(list(queries))

    @component.output_types(documents=list[Document])
    def run(self, query: str, top_k: int = 10) -> dict:
        return {"documents": [Document(id=f"hit-{query}", score=1.0)]}


def one(component_instance: object, name: str = "r") -> Pipeline:
    pipe = Pipeline()
    pipe.add_component(name, component_instance)
    return pipe


def test_the_replay_and_a_beir_run_refuse_an_unfilled_mandatory_input_with_the_same_reason():
    pipe = one(Filtered())
    with pytest.raises(PipelineError, match=r"mandatory inputs that a BEIR run does not fill: r\.filters"):
        find_sockets(pipe, source="x.yaml", naming=BEIR_NAMING)
    feedback = aggregate_feedback(ROWS)
    with pytest.raises(PipelineError, match=r"mandatory inputs that the replay does not fill: r\.filters"):
        replay_pipeline(pipe, feedback)
    # Filled by the caller's own inputs, it runs.
    run = replay_pipeline(pipe, feedback, run_kwargs={"r": {"filters": {}}})
    assert run == {"q1": {"doc1": 1.0}, "q2": {"doc1": 1.0}}


def test_messages_name_the_option_of_the_caller():
    pipe = Pipeline()
    pipe.add_component("a", InMemoryBM25Retriever(InMemoryDocumentStore()))
    pipe.add_component("b", InMemoryBM25Retriever(InMemoryDocumentStore()))
    with pytest.raises(
        PipelineError, match=r"found: a\.documents, b\.documents\); name it with output='component\.socket'"
    ):
        find_sockets(pipe, naming=REPLAY_NAMING)
    with pytest.raises(PipelineError, match=r"name it with metadata\.irmetrics\.output: 'component\.socket'"):
        find_sockets(pipe, naming=BEIR_NAMING)
    with pytest.raises(PipelineError, match=r"query_input of the pipeline: expected 'component\.socket', got 'a'"):
        find_sockets(pipe, query="a", output="a.documents")
    with pytest.raises(PipelineError, match=r"output of the pipeline names unknown component 'c'"):
        find_sockets(pipe, output="c.documents")


def test_the_query_loop_hands_each_batch_to_prefetch_then_runs_every_query_in_order():
    retriever = Prefetching()
    pipe = one(retriever)
    runner = QueryRunner(pipe, find_sockets(pipe))
    queries = [f"q{i}" for i in range(5)]
    ranked = list(runner.rankings(queries, top_k=3, batch_size=2))
    assert retriever.batches == [["q0", "q1"], ["q2", "q3"], ["q4"]]
    assert [docs[0].id for docs in ranked] == [f"hit-{q}" for q in queries]


def test_a_failing_pipeline_is_named_with_the_query():
    @component
    class Broken:
        @component.output_types(documents=list[Document])
        def run(self, query: str) -> dict:
            raise RuntimeError("index is gone")

    pipe = one(Broken())
    runner = QueryRunner(pipe, find_sockets(pipe), source="mine.yaml")
    with pytest.raises(PipelineError, match=r"pipeline of mine.yaml failed on query 'cats'.*index is gone"):
        runner.run("cats")


@pytest.mark.parametrize("rank_by", ["order", "score"])
def test_document_path_rankings_are_the_rankings_convert_gives(rank_by):
    rng = np.random.default_rng(7)
    retrieved = [
        [Document(id=f"d{rng.integers(6)}", score=float(rng.integers(3))) for _ in range(int(rng.integers(1, 8)))]
        for _ in range(20)
    ]
    gold = [[Document(id="d1", score=1.0)] for _ in retrieved]
    qids = [f"q{i}" for i in range(20)]
    path = DocumentPath(rank_by=rank_by)
    alone, paired = path.rankings(retrieved, qids), path.convert(gold, retrieved, qids).results
    as_dict = alone if isinstance(alone, dict) else alone.data
    assert as_dict == (paired if isinstance(paired, dict) else paired.data)


def test_a_corpus_becomes_documents_once_and_is_written_into_each_index_once():
    docs = corpus_documents({"d1": {"title": "Cats", "text": "purr"}, "d2": {"title": None, "text": "bark"}})
    assert [(d.id, d.content, d.meta["beir_id"]) for d in docs] == [("d1", "Cats purr", "d1"), ("d2", "bark", "d2")]
    store = InMemoryDocumentStore(index="integration-layer-test")
    pipe = Pipeline()
    pipe.add_component("a", InMemoryBM25Retriever(store))
    pipe.add_component("b", InMemoryBM25Retriever(store))  # the same store twice: written once
    assert write_into_stores(pipe, docs) == 1
    assert store.count_documents() == 2
    with pytest.raises(PipelineError, match="has no component with a document_store"):
        write_into_stores(one(Prefetching()), docs)


def test_pipeline_yamls_naming_the_stores_old_paths_still_load_in_a_fresh_process():
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from haystack_irmetrics.integration.loading import load_pipeline
        old = {{"bm25s": "haystack_irmetrics.beir.bm25s_store", "faiss": "haystack_irmetrics.beir.faiss_store"}}
        for name in ("beir_bm25", "beir_dense"):
            text = Path({str(REPO)!r}, "pipelines", name + ".yaml").read_text()
            for new in ("bm25s", "faiss"):
                text = text.replace(f"haystack_irmetrics.integration.stores.{{new}}_store", old[new])
            assert "beir." in text
            pipe = load_pipeline(text)
            print(sorted({{type(c).__module__ for _, c in pipe.walk() if "irmetrics" in type(c).__module__}}))
            types = [c["type"] for c in pipe.to_dict()["components"].values()]  # written under the new path
            assert not any(".beir." in t for t in types) and any(".integration.stores." in t for t in types)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split("\n")[:2] == [
        "['haystack_irmetrics.integration.stores.bm25s_store']",
        "['haystack_irmetrics.integration.stores.faiss_store']",
    ]


def test_importing_the_integration_layer_imports_no_haystack():
    code = "import sys, haystack_irmetrics.integration as i; print('haystack' in sys.modules, i.QueryRunner.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split() == ["False", "QueryRunner"]  # the name loads (and imports Haystack) on first use


def test_beir_qrels_are_read_by_one_reader_tabs_only_and_gzip_for_evaluate(tmp_path):
    text = "query-id\tcorpus-id\tscore\nq 1\tdoc a\t1.0\nq 1\tdoc b\t0\n"
    plain = tmp_path / "test.tsv"
    plain.write_text(text)
    packed = tmp_path / "test.tsv.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    expected = {"q 1": {"doc a": 1, "doc b": 0}}  # ids with spaces, as BEIR's tab-separated loader reads them
    assert read_beir_qrels_tsv(plain) == expected
    assert read_qrels(plain).data == expected == read_qrels(packed).data
    with pytest.raises(ParseError, match="not UTF-8"):
        read_beir_qrels_tsv(packed)  # BEIR's loader reads plain text only


def test_holm_over_each_system_and_group_is_named_data_not_a_callback():
    values = {
        "base": {("full", "P@1"): [0.0, 1.0, 0.0, 1.0], ("first", "P@1"): [0.0, 0.0, 1.0, 1.0]},
        "new": {("full", "P@1"): [1.0, 1.0, 1.0, 1.0], ("first", "P@1"): [1.0, 1.0, 1.0, 0.0]},
    }
    named = compare_with_baseline(values, "base", holm_scope="system_group", n_resamples=200)
    called = compare_with_baseline(values, "base", holm_scope=lambda s, m: (s, m[0]), n_resamples=200)
    assert named.comparisons == called.comparisons
    with pytest.raises(StatsInputError, match="system_group"):
        compare_with_baseline({"a": {"P@1": [1.0, 0.0]}, "b": {"P@1": [0.0, 1.0]}}, "a", holm_scope="system_group")


def test_a_file_written_in_the_callers_block_is_whole_or_not_there(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), replacing_file(target) as f:
        f.write(b"half")
        raise RuntimeError("stopped")
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]
    with replacing_file(target) as f:
        f.write(b"new")
    assert target.read_bytes() == b"new"
    with pytest.raises(OutputError, match="cannot write"), replacing_file(tmp_path) as f:
        f.write(b"a folder is no file")
