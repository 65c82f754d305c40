"""The everyday BEIR path is fast and gives the same numbers: chain pipelines run their components
directly (byte-identical runs to ``Pipeline.run``), the built-in bm25 hands ids and scores on without a
Document per hit, full garbage collections skip the long-lived heap during retrieval, a run reads the
retrieved Documents in whole-list passes, run files are written a query at a time, and ``irmetrics beir``
imports Haystack without torch."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from haystack import Document, Pipeline, component

from haystack_irmetrics.beir import PipelineError, load_beir_pipelines, run_beir
from haystack_irmetrics.beir.pipelines import BeirPipelines
from haystack_irmetrics.beir.runner import _best_per_corpus_id
from haystack_irmetrics.integration.fastpath import DirectRun, in_trec_order, long_lived_objects_frozen
from haystack_irmetrics.integration.queries import QueryRunner

from .conftest import ROOT
from .test_beir_pipelines import needs_dense, small_sample

BM25S = "haystack_irmetrics.integration.stores.bm25s_store"
THIS = "tests.test_beir_fastpath"


@component
class CountingRescorer:
    """Changes the Documents it receives in place: each one's ``meta["seen"]`` counts the queries it was
    seen in, and its score is divided by that count. ``Pipeline.run`` hands it copies, so ``seen`` is
    always 1 and the scores stay; a path that handed it the retriever's own Documents (which share their
    meta with the store's) would lower the scores of documents seen before."""

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        for doc in documents:
            doc.meta["seen"] = doc.meta.get("seen", 0) + 1
        return {"documents": [replace(doc, score=doc.score / doc.meta["seen"]) for doc in documents]}


@component
class Gate:
    """Passes on the documents of queries with an odd number of hits, and drops the others (a router)."""

    @component.output_types(documents=list[Document], dropped=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        return {"documents": documents} if len(documents) % 2 else {"dropped": documents}


@component
class Passthrough:
    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document] | None = None) -> dict[str, list[Document]]:
        return {"documents": documents or []}


def chain_yaml(tmp_path: Path, *after: tuple[str, str]) -> Path:
    """A bm25s retriever followed by the components ``after`` (``(name, class name in this module)``)."""
    components = {
        "retriever": f"""
    type: {BM25S}.BM25sRetriever
    init_parameters:
      top_k: 100
      document_store:
        type: {BM25S}.BM25sDocumentStore
        init_parameters: {{index: beir, shared: true}}"""
    }
    connections = []
    previous = "retriever"
    for name, cls in after:
        components[name] = f"\n    type: {THIS}.{cls}\n    init_parameters: {{}}"
        connections.append(f"  - sender: {previous}.documents\n    receiver: {name}.documents")
        previous = name
    text = "components:\n" + "".join(f"  {n}:{body}\n" for n, body in components.items())
    text += "connections:\n" + ("\n".join(connections) if connections else "  []") + "\n"
    path = tmp_path / "chain.yaml"
    path.write_text(text)
    return path


def pipeline_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the ``Pipeline.run`` calls made from now on (indexing ones too)."""
    calls: list[int] = []
    original = Pipeline.run

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Pipeline, "run", counted)
    return calls


def both_paths(tmp_path, monkeypatch, dataset, retriever, **kwargs) -> tuple[dict[str, bytes], dict[str, bytes], int]:
    """The output files of ``run_beir`` with the direct run, then with every query through ``Pipeline.run``,
    and how many ``Pipeline.run`` calls the direct run made."""
    calls = pipeline_runs(monkeypatch)
    run_beir(dataset, retriever, progress=False, output_dir=tmp_path / "direct", **kwargs)
    direct_calls = len(calls)
    with monkeypatch.context() as m:
        m.setattr(QueryRunner, "_direct_plan", lambda self: None)
        run_beir(dataset, retriever, progress=False, output_dir=tmp_path / "pipeline", **kwargs)

    def files(folder: Path) -> dict[str, bytes]:
        return {name: (folder / name).read_bytes() for name in ("run.trec", "per_query.json", "metrics.json")}

    return files(tmp_path / "direct"), files(tmp_path / "pipeline"), direct_calls


@pytest.mark.parametrize("retriever", ["bm25", "haystack-bm25"])
def test_builtin_bm25_pipelines_run_queries_without_pipeline_run_and_write_the_same_bytes(
    tmp_path, monkeypatch, retriever
):
    direct, through_pipeline, calls = both_paths(tmp_path, monkeypatch, None, retriever)
    assert direct == through_pipeline
    assert calls == 0  # the writers are called directly too: no Pipeline.run at all


@needs_dense
def test_dense_chain_runs_directly_and_hybrid_falls_back_with_the_same_bytes(tmp_path, monkeypatch):
    ds = small_sample()
    direct, through_pipeline, calls = both_paths(tmp_path / "dense", monkeypatch, ds, "dense")
    assert direct == through_pipeline
    assert calls < len(ds.queries)  # the embedding pipeline only (one call per batch of documents)
    direct, through_pipeline, calls = both_paths(tmp_path / "hybrid", monkeypatch, ds, "hybrid")
    assert direct == through_pipeline
    assert calls >= len(ds.queries)  # a joiner (variadic input): every query through Pipeline.run
    hybrid = load_beir_pipelines("hybrid", progress=False)
    assert DirectRun.plan(hybrid.retrieval, hybrid.query_inputs, hybrid.output) is None


def test_chain_of_two_components_gets_copies_as_pipeline_run_gives_them(tmp_path, monkeypatch):
    path = chain_yaml(tmp_path, ("rescorer", "CountingRescorer"))
    direct, through_pipeline, calls = both_paths(tmp_path, monkeypatch, None, path, allowed_modules=["tests.*"])
    assert direct == through_pipeline
    assert calls == 0


def test_a_component_that_leaves_out_an_output_sends_the_query_through_pipeline_run(tmp_path):
    path = chain_yaml(tmp_path, ("gate", "Gate"), ("passthrough", "Passthrough"))
    pipes = load_beir_pipelines(path, progress=False, allowed_modules=["tests.*"])
    pipes.index([Document(id=c, content=c, meta={"beir_id": c}) for c in ("apple pie", "apple tart", "pear")])
    pipes.finish_indexing()
    assert isinstance(pipes.runner._direct_plan(), DirectRun)
    assert [d.id for d in pipes.retrieve("pear", 10)] == ["pear"]  # one hit: passed on
    # Two hits: Haystack does not run the passthrough, so there is no output (a default [] would be wrong).
    with pytest.raises(PipelineError, match=r"produced no passthrough\.documents"):
        pipes.retrieve("apple", 10)
    assert pipes.runner._direct is False
    assert [d.id for d in pipes.retrieve("pear", 10)] == ["pear"]


def test_with_tracing_enabled_every_query_goes_through_pipeline_run(monkeypatch):
    from haystack import tracing
    from haystack.tracing.tracer import NullSpan, Tracer

    operations: list[str] = []

    class Recorder(Tracer):
        def trace(self, operation_name, tags=None, parent_span=None):
            from contextlib import nullcontext

            operations.append(operation_name)
            return nullcontext(NullSpan())

        def current_span(self):
            return None

    monkeypatch.setattr(tracing.tracer, "actual_tracer", Recorder())
    run_beir(progress=False)
    assert operations.count("haystack.pipeline.run") >= 40  # the spans a user who enabled tracing expects


@component
class CachedVector:
    """Returns the same list of floats every time (as a cache would)."""

    def __init__(self) -> None:
        self.vector = [1.0, 2.0, 3.0]

    @component.output_types(embedding=list[float])
    def run(self, text: str) -> dict[str, list[float]]:
        return {"embedding": self.vector}


@component
class ScaleInPlace:
    """Doubles the vector it receives, in place, and returns its sum as one document's score."""

    @component.output_types(documents=list[Document])
    def run(self, embedding: list[float]) -> dict[str, list[Document]]:
        embedding[:] = [2 * x for x in embedding]
        return {"documents": [Document(id="d", content="x", meta={"beir_id": "d"}, score=sum(embedding))]}


def test_a_component_changing_a_received_vector_leaves_the_senders_list_alone():
    pipe = Pipeline()
    pipe.add_component("embedder", CachedVector())
    pipe.add_component("scorer", ScaleInPlace())
    pipe.connect("embedder.embedding", "scorer.embedding")
    plan = DirectRun.plan(pipe, [("embedder", "text")], ("scorer", "documents"))
    scores = [plan.run({"embedder": {"text": "q"}})["documents"][0].score for _ in range(3)]
    assert scores == [12.0, 12.0, 12.0]  # as Pipeline.run gives: the scorer doubles a copy each time
    assert pipe.get_component("embedder").vector == [1.0, 2.0, 3.0]
    assert [pipe.run({"embedder": {"text": "q"}})["scorer"]["documents"][0].score for _ in range(2)] == [12.0, 12.0]


def test_direct_run_needs_a_chain_ending_in_the_output():
    from haystack.components.joiners import DocumentJoiner

    pipes = load_beir_pipelines("bm25", progress=False)
    plan = DirectRun.plan(pipes.retrieval, pipes.query_inputs, pipes.output)
    assert plan is not None and [s.name for s in plan.steps] == ["retriever"]
    assert DirectRun.plan(pipes.retrieval, pipes.query_inputs, ("elsewhere", "documents")) is None
    joined = Pipeline()
    joined.add_component("joiner", DocumentJoiner())
    assert DirectRun.plan(joined, [], ("joiner", "documents")) is None


def test_direct_run_names_the_component_that_failed_and_the_query(tmp_path):
    pipes = load_beir_pipelines("bm25", progress=False)
    pipes.index([Document(id="d", content="text", meta={"beir_id": "d"})])
    with pytest.raises(PipelineError, match=r"failed on query 'text': component 'retriever' \(BM25sRetriever\)"):
        pipes.retrieve("text", 0)


def test_retrieval_keeps_full_collections_off_the_objects_made_before_it(monkeypatch):
    seen: list[int] = []
    original = BeirPipelines.retrieve_ids  # each query's call (the built-in bm25 answers with ids and scores)

    def retrieve_ids(self, query, top_k):
        seen.append(gc.get_freeze_count())
        return original(self, query, top_k)

    monkeypatch.setattr(BeirPipelines, "retrieve_ids", retrieve_ids)
    run_beir(progress=False)
    assert len(seen) == 40 and min(seen) > 1000
    assert gc.get_freeze_count() == 0  # collectable again afterwards


def test_objects_frozen_by_the_caller_stay_frozen_and_a_disabled_collector_stays_off():
    gc.freeze()
    try:
        with long_lived_objects_frozen():
            pass
        assert gc.get_freeze_count() > 0  # not unfrozen by the block
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with long_lived_objects_frozen():
            assert gc.get_freeze_count() == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_best_per_corpus_id_merges_chunks_of_non_string_ids_into_the_first():
    docs = [
        Document(id="7#1", content="x", meta={"beir_id": 7}, score=3.0),
        Document(id="8#0", content="x", meta={"beir_id": 8}, score=2.0),
        Document(id="7#0", content="x", meta={"beir_id": 7}, score=1.0),
    ]
    assert _best_per_corpus_id(docs, "p", "q1") == ({"7": 3.0, "8": 2.0}, 1, True)


@pytest.mark.parametrize(
    "score", ["1.0", float("nan"), float("inf"), 10**400, None], ids=["text", "nan", "inf", "huge-int", "none"]
)
def test_best_per_corpus_id_rejects_a_score_that_is_not_a_finite_number_naming_the_document(score):
    docs = [
        Document(id="a", content="x", meta={"beir_id": "a"}, score=2.0),
        Document(id="b", content="x", meta={"beir_id": "b"}, score=score),
    ]
    with pytest.raises(PipelineError, match=r"document 'b' for query 'q1' with score"):
        _best_per_corpus_id(docs, "p", "q1")


def test_best_per_corpus_id_reads_numpy_and_int_scores_as_floats():
    import numpy as np

    docs = [
        Document(id="a", content="x", meta={"beir_id": "a"}, score=np.float32(2.5)),
        Document(id="b", content="x", meta={"beir_id": "b"}, score=2),
    ]
    ranked, merged, is_sorted = _best_per_corpus_id(docs, "p", "q1")
    assert ranked == {"a": 2.5, "b": 2.0} and all(type(s) is float for s in ranked.values())
    assert (merged, is_sorted) == (0, True)


def test_in_trec_order_agrees_with_sorting_into_trec_order():
    import random

    from .oracles import trec_order

    rng = random.Random(7)
    seen = set()
    for _ in range(3000):
        n = rng.randrange(0, 8)
        # few distinct scores (float32 ties, also between float64 values one float32 apart) and ids
        values = [rng.choice([3.0, 2.5, 2.5000001, 1.0, 0.0, -0.0, -1.5]) for _ in range(n)]
        ids = rng.sample(["a", "b", "c", "d10", "d9", "e", "f", "g"], n)
        ranked = dict(zip(ids, sorted(values, reverse=True) if rng.random() < 0.7 else values))
        expected = trec_order(ranked) == list(ranked)
        assert in_trec_order(ranked) is expected, ranked
        seen.add(expected)
    assert seen == {True, False}


def test_trec_order_and_the_trec_run_writer_agree_with_sorting_every_query(tmp_path):
    """trec_order sorts only the runs of tied scores when the scores are in order already, and the writer
    builds each query's lines at once: both against a plain sort and a line-by-line writer."""
    import random

    from haystack_irmetrics.io.trec import trec_order, write_trec_run

    from .oracles import trec_order as sorted_order

    rng = random.Random(11)
    run = {}
    for q in range(400):
        n = rng.randrange(0, 12)
        values = [rng.choice([3.0, 2.5, 2.5000001, 1.0, 0.0, -0.0, -1.5, 1e39, 7]) for _ in range(n)]
        ids = rng.sample(["a", "b", "c", "d10", "d9", "e", "f", "g", "\u00e9", "z\U0001f600", "Z", "y"], n)
        ranked = dict(zip(ids, sorted(values, reverse=True) if rng.random() < 0.7 else values))
        assert trec_order(ranked) == sorted_order(ranked), ranked
        run[f"q{{{q}"] = ranked
    path = tmp_path / "run.trec"
    write_trec_run(run, path, tag="t")
    expected = "".join(
        f"{q} Q0 {d} {rank} {float(docs[d])!r} t\n"
        for q, docs in run.items()
        for rank, d in enumerate(sorted_order(docs), 1)
    )
    assert path.read_text(encoding="utf-8") == expected


def test_bm25_run_reads_ids_and_scores_from_the_store_without_a_document_per_hit(tmp_path, monkeypatch):
    """The built-in bm25 retrieves each query's corpus ids and scores from the store (no Document copied
    per hit), with the same outputs, bytes for bytes, as the Documents it would otherwise return."""
    from haystack_irmetrics.integration.stores import bm25s_store

    copies: list[int] = []
    original = bm25s_store.copy_document

    def counted(*args):
        copies.append(1)
        return original(*args)

    monkeypatch.setattr(bm25s_store, "copy_document", counted)
    run_beir(progress=False, output_dir=tmp_path / "ids")
    assert copies == []  # not one Document per hit
    with monkeypatch.context() as m:
        m.setattr(BeirPipelines, "retrieve_ids", lambda self, query, top_k: None)  # the Documents' path
        run_beir(progress=False, output_dir=tmp_path / "documents")
    assert len(copies) > 1000

    def files(folder: Path) -> dict[str, bytes]:
        return {name: (folder / name).read_bytes() for name in ("run.trec", "per_query.json", "metrics.json")}

    assert files(tmp_path / "ids") == files(tmp_path / "documents")


def test_ranked_meta_is_what_the_retrievers_documents_hold():
    from haystack_irmetrics.integration.stores.bm25s_store import BM25sDocumentStore, BM25sRetriever

    store = BM25sDocumentStore(cache=False)
    store.write_documents(
        [
            Document(id="a", content="apple pie apple", meta={"beir_id": "A"}),
            Document(id="b", content="apple tart", meta={"beir_id": "B", "chunk": 1}),
            Document(id="c", content="pear", meta={}),
            Document(id="d", content="apple", meta={"beir_id": 4}),
        ]
    )
    retriever = BM25sRetriever(store, top_k=10)
    for query, top_k in [("apple", None), ("apple pear", 2), ("pear", None), ("the", None), ("kiwi", 3)]:
        documents = retriever.run(query, top_k)["documents"]
        ids, scores = retriever.ranked_meta("beir_id", query, top_k)
        assert ids == [d.meta.get("beir_id") for d in documents]
        assert scores == [d.score for d in documents] and all(type(s) is float for s in scores)
    assert retriever.ranked_meta("chunk", "apple tart")[0][0] == 1
    store.write_documents([Document(id="e", content="apple", meta={"beir_id": "E"})])  # a write: read again
    assert "E" in retriever.ranked_meta("beir_id", "apple")[0]
    store.delete_documents(["e"])
    assert "E" not in retriever.ranked_meta("beir_id", "apple")[0]
    store.delete_all_documents()
    assert retriever.ranked_meta("beir_id", "apple") == ([], [])


def test_a_corpus_id_that_is_not_plain_goes_through_the_documents_and_is_named(tmp_path):
    """Ids read from the store that are not strings (a document without ``meta["beir_id"]``) are read again
    from the Documents, whose checks name the document."""
    pipes = load_beir_pipelines("bm25", progress=False)
    pipes.index([Document(id="d1", content="apple", meta={}), Document(id="d2", content="pear", meta={"beir_id": "2"})])
    assert pipes.retrieve_ids("apple", 5) == ([None], [pytest.approx(pipes.retrieve("apple", 5)[0].score)])
    from haystack_irmetrics.beir.dataset import BeirDataset
    from haystack_irmetrics.beir.runner import _retrieve

    ds = BeirDataset(corpus={}, queries={"q": "apple"}, qrels={"q": {"2": 1}})
    with pytest.raises(PipelineError, match=r"document 'd1' for query 'q' without meta\['beir_id'\]"):
        _retrieve(pipes, ds, {}, 5, False, None)


def python(code: str, timeout: int = 600) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


needs_torch = pytest.mark.skipif(not torch_installed(), reason="torch is not installed: nothing to defer")


@needs_torch
def test_irmetrics_beir_with_bm25_never_imports_torch(tmp_path):
    out = python(
        f"""
        import sys
        from haystack_irmetrics.cli import main
        code = main(["beir", "sample", "-o", {str(tmp_path / "out")!r}, "--format", "json"])
        print(code, "torch" in sys.modules, "haystack" in sys.modules)
        """
    )
    assert out.splitlines()[-1] == "0 False True"


@needs_torch
def test_haystack_imported_without_torch_reads_the_real_torch_at_first_use():
    out = python(
        """
        import sys
        from haystack_irmetrics.beir.lazy_torch import import_haystack_without_torch
        print(import_haystack_without_torch(), "torch" in sys.modules)
        import haystack.utils.device as device
        from haystack.utils import ComponentDevice
        chosen = ComponentDevice.resolve_device(None).to_torch()
        import torch
        print(type(chosen) is torch.device, device.torch.device is torch.device, type(torch).__name__)
        print(import_haystack_without_torch())  # Haystack is imported already: nothing to do
        """
    )
    assert out.splitlines() == ["True False", "True True module", "False"]


def test_haystack_that_cannot_be_imported_leaves_no_stand_in_behind():
    out = python(
        """
        import sys

        class NoHaystack:
            def find_spec(self, name, path=None, target=None):
                if name == "haystack":
                    raise ImportError("haystack is broken here")

        sys.meta_path.insert(0, NoHaystack())
        from haystack_irmetrics.beir.lazy_torch import import_haystack_without_torch
        print(import_haystack_without_torch(), "torch" in sys.modules, "haystack" in sys.modules)
        """
    )
    assert out.splitlines()[-1] == "False False False"


@needs_torch
@needs_dense
def test_dense_run_after_haystack_imported_without_torch_equals_the_usual_one():
    code = """
        import json, os, sys
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from haystack_irmetrics.beir.lazy_torch import import_haystack_without_torch
        deferred = import_haystack_without_torch()
        from haystack_irmetrics.beir import run_beir
        from tests.test_beir_pipelines import small_sample
        run = run_beir(small_sample(3, 5), "dense", progress=False, cache=False)
        print(json.dumps([deferred, run.results]))
        """
    deferred, results = json.loads(python(code).splitlines()[-1])
    assert deferred is True
    usual = run_beir(small_sample(3, 5), "dense", progress=False, cache=False)
    assert results == usual.results
