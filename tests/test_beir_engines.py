"""The bm25s BM25 engine (BM25sDocumentStore, BM25sRetriever): a Haystack component, Lucene's analysis,
BEIR's numbers on its own run, its cached index, and a clear error when bm25s is missing."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("bm25s")
pytest.importorskip("Stemmer")

from haystack import Document, Pipeline
from haystack.components.writers import DocumentWriter

from haystack_irmetrics.beir import load_beir, run_beir, sample_path
from haystack_irmetrics.beir.cache import cache_entries, clear_cache
from haystack_irmetrics.beir.pipelines import pipelines_dir
from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import MissingDependencyError
from haystack_irmetrics.integration.loading import load_pipeline
from haystack_irmetrics.integration.stores.bm25s_store import BM25sDocumentStore, BM25sRetriever

from .test_beir_run import beir_reference

DOCS = [
    Document(id="a", content="Running shoes for the marathon runner", meta={"beir_id": "a"}),
    Document(id="b", content="The history of the marathon", meta={"beir_id": "b"}),
    Document(id="c", content="Cooking pasta at home", meta={"beir_id": "c"}),
]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(folder))
    return folder


def _store(**kw) -> BM25sDocumentStore:
    store = BM25sDocumentStore(**kw)
    store.write_documents([Document(id=d.id, content=d.content, meta=d.meta) for d in DOCS])
    return store


def test_lucene_analysis_stems_drops_stop_words_and_returns_only_matching_documents():
    retriever = BM25sRetriever(_store(), top_k=10)
    hits = retriever.run(query="runs")["documents"]  # Porter: runs, running -> run; "runner" stays
    assert [d.id for d in hits] == ["a"]
    assert retriever.run(query="the of for")["documents"] == []  # stop words only
    ranked = retriever.run(query="marathon history", top_k=1)["documents"]
    assert [d.id for d in ranked] == ["b"] and ranked[0].score > 0 and ranked[0].meta == {"beir_id": "b"}
    # The stored documents are not changed by a query (each hit is a copy with its score).
    assert all(d.score is None for d in retriever.document_store.filter_documents())


@pytest.mark.parametrize("batched", [False, True])
def test_a_query_without_any_indexed_term_matches_no_document_not_even_empty_ones(batched):
    # bm25s gives such a query the token it gives empty documents (""): every empty or stop-word-only document
    # matched it with a positive score. Lucene returns only documents holding a query term.
    store = _store()
    store.write_documents([Document(id="empty", content=""), Document(id="stop", content="The and of")])
    retriever = BM25sRetriever(store, top_k=10)
    queries = ["zebra quagga", "the of for", "", "   ", "marathon zebra"]
    if batched:
        retriever.prefetch(queries)
    hits = [[d.id for d in retriever.run(query=q)["documents"]] for q in queries]
    assert hits == [[], [], [], [], ["b", "a"]]
    assert store.queries_without_terms == 4
    assert all(d.score > 0 for d in retriever.run(query="marathon zebra")["documents"])


def test_documents_are_stored_without_their_embedding_and_the_callers_keep_theirs():
    docs = [Document(id=d.id, content=d.content, meta=d.meta, embedding=[0.5, 0.25]) for d in DOCS]
    store = BM25sDocumentStore()
    assert store.write_documents(docs) == 3
    assert all(d.embedding == [0.5, 0.25] for d in docs)
    assert all(d.embedding is None for d in store.filter_documents())
    [hit] = store.bm25_retrieval("pasta")
    assert (hit.id, hit.embedding, hit.content) == ("c", None, "Cooking pasta at home")


def test_retriever_round_trips_through_to_dict_yaml_and_load_pipeline():
    retriever = BM25sRetriever(BM25sDocumentStore(index="x", k1=1.2, b=0.75, stemmer=None), top_k=7)
    again = BM25sRetriever.from_dict(retriever.to_dict())
    assert again.to_dict() == retriever.to_dict() and again.top_k == 7 and again.document_store.k1 == 1.2
    pipe = Pipeline()
    pipe.add_component("retriever", retriever)
    loaded = load_pipeline(pipe.dumps())
    assert loaded.get_component("retriever").to_dict() == retriever.to_dict()


def test_shared_stores_of_one_name_see_the_same_documents_and_duplicates_follow_the_policy():
    from haystack.document_stores.errors import DuplicateDocumentError
    from haystack.document_stores.types import DuplicatePolicy

    writer_store = BM25sDocumentStore(index="shared-test", shared=True)
    reader_store = BM25sDocumentStore(index="shared-test", shared=True)
    pipe = Pipeline()
    pipe.add_component("writer", DocumentWriter(document_store=writer_store))
    pipe.run({"writer": {"documents": list(DOCS)}})
    assert reader_store.count_documents() == 3
    with pytest.raises(DuplicateDocumentError):
        reader_store.write_documents([DOCS[0]])
    assert reader_store.write_documents([DOCS[0]], policy=DuplicatePolicy.SKIP) == 0
    assert reader_store.write_documents([DOCS[0]], policy=DuplicatePolicy.OVERWRITE) == 1
    reader_store.delete_documents(["a"])
    assert writer_store.count_documents() == 2
    writer_store.delete_all_documents()
    assert reader_store.count_documents() == 0


@pytest.mark.parametrize("retriever", ["bm25", "haystack-bm25"])
def test_each_bm25_engine_gives_beirs_numbers_on_its_own_run(retriever):
    run = run_beir(retriever=retriever, progress=False)
    qrels = load_beir(sample_path()).qrels
    assert run.means == beir_reference(qrels, run.results, [1, 3, 5, 10, 100, 1000])
    assert run.means["NDCG@10"] == {"bm25": 0.76977, "haystack-bm25": 0.74698}[retriever]


def test_the_bm25_yaml_runs_as_a_user_pipeline_with_the_builtins_numbers(tmp_path, capsys):
    path = tmp_path / "mine.yaml"
    shutil.copy(pipelines_dir() / "beir_bm25.yaml", path)
    assert main(["beir", "-r", str(path), "--format", "json", "--no-progress"]) == 0
    assert '"NDCG@10": 0.76977' in capsys.readouterr().out


def test_the_built_index_is_cached_and_a_changed_corpus_misses(cache_dir):
    first = _store()
    first.bm25_retrieval("marathon")
    assert not first.built_from_cache
    [entry] = cache_entries(cache_dir)
    assert entry.kind == "bm25s" and entry.items == 3
    second = _store()
    assert second.bm25_retrieval("marathon") == first.bm25_retrieval("marathon")
    assert second.built_from_cache
    changed = _store()
    changed.write_documents([Document(id="d", content="marathon training plan")])
    changed.bm25_retrieval("marathon")
    assert not changed.built_from_cache and len(cache_entries(cache_dir)) == 2
    other_params = _store(k1=1.5)
    other_params.bm25_retrieval("marathon")
    assert not other_params.built_from_cache
    uncached = _store(cache=False)
    uncached.bm25_retrieval("marathon")
    assert len(clear_cache(root=cache_dir)) == 3 and cache_entries(cache_dir) == []


def test_without_bm25s_the_default_retriever_names_the_bm25_extra(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(MissingDependencyError, match=r"haystack-irmetrics\[bm25\]"):
        _store().bm25_retrieval("marathon")
    assert main(["beir", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "bm25s" in err and "[bm25]" in err and "haystack-bm25" in err


def test_no_cache_neither_reads_nor_writes_the_bm25s_index(cache_dir):
    run_beir(progress=False, cache=False)
    assert cache_entries(cache_dir) == []
    run_beir(progress=False)
    assert [e.kind for e in cache_entries(cache_dir)] == ["bm25s"]


def test_scifact_bm25s_gives_beirs_numbers_and_anserinis_range(data_dir):
    path = data_dir / "scifact"
    if not path.is_dir():
        pytest.skip(f"{path} is absent")
    scifact = load_beir(path)
    run = run_beir(scifact, "bm25", progress=False)
    assert run.means == beir_reference(scifact.qrels, run.results)
    assert run.means["NDCG@10"] == 0.67689 >= 0.665  # BEIR paper 0.665, Anserini flat 0.6789
    assert run.means["Recall@100"] == 0.92867
