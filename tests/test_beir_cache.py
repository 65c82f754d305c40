"""The corpus-embedding cache (hits, misses, invalidation by corpus, chunking and model), `irmetrics cache`,
queries embedded in batches, and `--no-index` against a store filled beforehand."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from haystack_irmetrics.beir import corpus_documents, load_beir, run_beir, sample_path
from haystack_irmetrics.beir.cache import (
    CacheWarning,
    CachingEmbeddingBackend,
    cache_entries,
    clear_cache,
    embed_queries_in_batches,
    embedding_cache_folder,
    embedding_model_meta,
)
from haystack_irmetrics.cli import main

from .test_beir_run import beir_reference

DENSE = importlib.util.find_spec("haystack_integrations.components.embedders.sentence_transformers") is not None
QDRANT = importlib.util.find_spec("haystack_integrations.document_stores.qdrant") is not None
FAISS = importlib.util.find_spec("faiss") is not None


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return folder


class FakeBackend:
    """Embeds a text as [len(text), number of spaces, 1/(1+len)] and counts its calls."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.model = "fake"

    def embed(self, data, **kwargs):
        self.calls.append(list(data))
        scale = 2.0 if kwargs.get("normalize_embeddings") else 1.0
        return [[scale * len(t), float(t.count(" ")), 1 / (1 + len(t))] for t in data]


def test_an_embed_call_is_read_back_when_its_texts_and_settings_were_embedded_before(cache_dir):
    inner = FakeBackend()
    first = CachingEmbeddingBackend(inner, cache_dir / "embeddings" / "m")
    texts = ["a cat", "two dogs here", ""]
    vectors = first.embed(texts, batch_size=32, show_progress_bar=True)
    again = CachingEmbeddingBackend(inner, cache_dir / "embeddings" / "m")
    assert again.embed(texts, batch_size=32, show_progress_bar=False) == vectors  # the bar is not a setting
    assert (again.hits, again.misses, len(inner.calls)) == (1, 0, 1)
    assert vectors == np.asarray(inner.embed(texts), dtype=np.float32).tolist()  # float32, as the model gives
    again.embed(["a cat", "two dogs here", "changed"], batch_size=32)  # another corpus (or chunking)
    again.embed(texts, batch_size=32, normalize_embeddings=True)  # another setting
    assert again.misses == 2 and len(inner.calls) == 4  # (one call above was ours)
    assert again.model == "fake"  # everything else is the model's backend


def test_a_damaged_entry_is_embedded_again(cache_dir):
    inner = FakeBackend()
    backend = CachingEmbeddingBackend(inner, cache_dir / "m")
    backend.embed(["x y"])
    [npy] = (cache_dir / "m").glob("*.npy")
    npy.write_bytes(b"not numpy")
    with pytest.warns(CacheWarning, match=f"the cache entry {npy} is damaged"):
        assert backend.embed(["x y"]) == [[3.0, 1.0, 0.25]] and backend.misses == 2
    assert not list((cache_dir / "m").glob(".*.tmp"))  # written through a temporary name


def test_queries_embedded_in_a_batch_are_read_back_and_an_unexpected_text_is_embedded_but_not_cached(cache_dir):
    class Embedder:  # what embed_queries_in_batches reads of a SentenceTransformersTextEmbedder
        prefix, suffix, batch_size, normalize_embeddings, precision, encode_kwargs = (
            "q: ",
            "",
            32,
            False,
            "float32",
            None,
        )

    inner = FakeBackend()
    embedder = Embedder()
    embedder.embedding_backend = CachingEmbeddingBackend(inner, cache_dir / "m")
    vectors = embed_queries_in_batches(embedder, ["a b", "c", "a b"])
    assert inner.calls == [["q: a b", "q: c"]]  # one call, each text once
    first, second = np.asarray(FakeBackend().embed(["q: a b", "q: c"]), dtype=np.float32).tolist()
    assert vectors == [first, second, first]  # in query order, float32 as stored
    assert embedder.embedding_backend.embed(["q: c"]) == [vectors[1]] and len(inner.calls) == 1
    embedder.embedding_backend.embed(["q: rewritten by the pipeline"])
    assert len(inner.calls) == 2 and len(list((cache_dir / "m").glob("*.npy"))) == 1
    again = Embedder()  # a second run: the batch comes from the cache
    again.embedding_backend = CachingEmbeddingBackend(inner, cache_dir / "m")
    assert embed_queries_in_batches(again, ["a b", "c", "a b"]) == vectors and len(inner.calls) == 2


def test_the_model_folder_is_keyed_by_model_and_settings_not_by_the_progress_bar_and_written_with_its_first_batch():
    class Embedder:
        def __init__(self, **params):
            self.params = params

        def to_dict(self):
            return {"type": "x", "init_parameters": self.params}

    embedder = Embedder(model="m1", batch_size=32, progress_bar=True)
    base = embedding_cache_folder(embedder)
    assert embedding_cache_folder(Embedder(model="m1", batch_size=32, progress_bar=False)) == base
    assert embedding_cache_folder(Embedder(model="m2", batch_size=32)) != base
    assert embedding_cache_folder(Embedder(model="m1", batch_size=32, prefix="query: ")) != base
    assert not base.exists()  # nothing is written before a batch is
    CachingEmbeddingBackend(FakeBackend(), base, embedding_model_meta(embedder)).embed(["a b"])
    meta = json.loads((base / "model.json").read_text())
    assert (meta["model"], meta["parameters"], meta["dim"]) == ("m1", {"model": "m1", "batch_size": 32}, 3)


def _tiny(folder: Path, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    docs = {
        "d1": "Cats sleep most of the day and hunt at night",
        "d2": "Dogs need daily walks and training" + extra,
        "d3": "Photosynthesis turns light into chemical energy in plants",
    }
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in docs.items())
    )
    queries = {"q1": "when do cats hunt", "q2": "how do plants use light"}
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items()))
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t2\n")
    return folder


@pytest.mark.skipif(not (DENSE and FAISS), reason="the dense extra (sentence-transformers-haystack, faiss-cpu)")
def test_a_second_dense_run_embeds_nothing_loads_no_model_and_gives_the_same_numbers_while_changes_miss(
    tmp_path, monkeypatch
):
    from haystack_integrations.components.embedders.sentence_transformers.embedding_backend.backend import (
        _SentenceTransformersEmbeddingBackendFactory as Factory,
    )

    from haystack_irmetrics.beir import cache as cache_module

    batches: list[int] = []
    real = cache_module.embed_queries_in_batches
    monkeypatch.setattr(
        cache_module, "embed_queries_in_batches", lambda e, q, **kw: (batches.append(len(q)), real(e, q, **kw))[1]
    )
    data = _tiny(tmp_path / "tiny")
    first = run_beir(data, "dense", progress=False)
    assert first.info["embedding_cache"] == {"hits": 0, "misses": 1}
    assert first.info["query_embedding_cache"] == {"hits": 0, "misses": 1}
    assert batches == [2]  # both queries embedded in one batch before they ran
    with monkeypatch.context() as m:  # every vector is cached: loading a model now would fail the run

        def no_model(*args, **kwargs):
            raise AssertionError("a run from the cache loaded the model")

        m.setattr(Factory, "get_embedding_backend", staticmethod(no_model))
        second = run_beir(data, "dense", progress=False)
    assert second.info["embedding_cache"] == {"hits": 1, "misses": 0}
    assert second.info["query_embedding_cache"] == {"hits": 1, "misses": 0}
    assert second.results == first.results and second.means == first.means
    assert first.means == beir_reference(load_beir(data).qrels, first.results, [1, 3, 5, 10, 100, 1000])
    assert run_beir(data, "dense", progress=False, chunk_words=4).info["embedding_cache"]["misses"] == 1
    n_chunks = len(corpus_documents(load_beir(data).corpus, chunk_words=4))
    changed = run_beir(_tiny(tmp_path / "tiny", extra=" every morning"), "dense", progress=False)
    assert changed.info["embedding_cache"] == {"hits": 0, "misses": 1}
    assert changed.info["query_embedding_cache"] == {"hits": 1, "misses": 0}  # the queries did not change
    uncached = run_beir(data, "dense", progress=False, cache=False)
    assert uncached.info["embedding_cache"] is None and uncached.info["query_embedding_cache"] is None
    assert uncached.means == first.means
    corpus, queries = sorted((e for e in cache_entries() if e.kind == "embeddings"), key=lambda e: -e.items)
    assert corpus.items == 3 + n_chunks + 3  # the corpus, its chunks of 4 words, the changed corpus
    assert queries.items == 2  # one batch of the two queries


def test_a_model_that_cannot_load_is_named_when_the_cache_first_needs_it(tmp_path):
    if not DENSE:
        pytest.skip("the dense extra (sentence-transformers-haystack)")
    from haystack_irmetrics.errors import PipelineError

    missing = tmp_path / "no-such-model"
    missing.mkdir()
    with pytest.raises(PipelineError, match="no-such-model"):
        run_beir(_tiny(tmp_path / "tiny"), "dense", model=str(missing), progress=False)


def test_irmetrics_cache_lists_and_clears(cache_dir, capsys):
    run_beir(progress=False)  # bm25: its index is cached
    assert main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert f"cache: {cache_dir} (1 entries" in out and "| bm25s |" in out and "| 360 |" in out
    assert main(["cache", "list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["root"] == str(cache_dir) and [e["kind"] for e in listed["entries"]] == ["bm25s"]
    (cache_dir / "beir").mkdir()  # named datasets live here by default: never a cache entry
    assert (
        main(["cache", "clear", "--kind", "embeddings"]) == 0 and "removed 0 cache entries" in capsys.readouterr().out
    )
    assert main(["cache", "clear"]) == 0 and "removed 1 cache entries" in capsys.readouterr().out
    assert cache_entries() == [] and (cache_dir / "beir").is_dir()
    assert clear_cache() == []


PREFILLED = """
components:
  retriever:
    type: haystack.components.retrievers.in_memory.bm25_retriever.InMemoryBM25Retriever
    init_parameters:
      top_k: 1000
      document_store:
        type: haystack.document_stores.in_memory.document_store.InMemoryDocumentStore
        init_parameters: {index: prefilled-store, shared: true, bm25_algorithm: BM25Plus,
                          bm25_parameters: {k1: 0.9, b: 0.4, delta: 0.0}}
connections: []
"""


def test_no_index_evaluates_a_store_filled_beforehand_and_leaves_it_as_it_was(tmp_path, capsys):
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore(
        index="prefilled-store",
        shared=True,
        bm25_algorithm="BM25Plus",
        bm25_parameters={"k1": 0.9, "b": 0.4, "delta": 0.0},
    )
    store.write_documents(corpus_documents(load_beir(sample_path()).corpus))
    path = tmp_path / "prefilled.yaml"
    path.write_text(PREFILLED)
    try:
        assert main(["beir", "-r", str(path), "--no-index", "--format", "json", "--no-progress"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert store.count_documents() == 360  # neither written to nor emptied
    finally:
        store.delete_all_documents()
    reference = run_beir(retriever="haystack-bm25", progress=False)
    assert summary["metrics"] == reference.means and summary["n_indexed"] == 360
    assert summary["configuration"]["engine"] == "external-store"


def test_no_index_with_an_empty_store_or_without_a_store_exits_2(tmp_path, capsys):
    path = tmp_path / "empty.yaml"
    path.write_text(PREFILLED.replace("prefilled-store", "never-filled"))
    assert main(["beir", "-r", str(path), "--no-index", "--no-progress"]) == 2
    assert "--no-index: the document store of" in capsys.readouterr().err
    no_store = tmp_path / "no_store.yaml"
    no_store.write_text(
        "components:\n  echo:\n    type: haystack.components.joiners.document_joiner.DocumentJoiner\n"
        "    init_parameters: {}\nconnections: []\nmetadata:\n  irmetrics:\n    query_inputs: []\n"
    )
    assert main(["beir", "-r", str(no_store), "--no-index", "--no-progress"]) == 2
    assert "irmetrics: error:" in capsys.readouterr().err


QDRANT_ON_DISK = """
components:
  query_embedder:
    type: haystack_integrations.components.embedders.sentence_transformers.sentence_transformers_text_embedder.SentenceTransformersTextEmbedder
    init_parameters: {model: sentence-transformers/all-MiniLM-L6-v2}
  retriever:
    type: haystack_integrations.components.retrievers.qdrant.retriever.QdrantEmbeddingRetriever
    init_parameters:
      top_k: 1000
      document_store:
        type: haystack_integrations.document_stores.qdrant.document_store.QdrantDocumentStore
        init_parameters: {path: PATH, index: tiny, embedding_dim: 384, similarity: cosine, progress_bar: false}
connections:
  - {sender: query_embedder.embedding, receiver: retriever.query_embedding}
"""


@pytest.mark.skipif(not (DENSE and QDRANT), reason="the dense extra (sentence-transformers-haystack, qdrant-haystack)")
def test_no_index_evaluates_an_embedded_qdrant_folder_filled_by_another_pipeline(tmp_path, capsys):
    from haystack.components.writers import DocumentWriter
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
    )
    from haystack_integrations.document_stores.qdrant import QdrantDocumentStore

    from haystack_irmetrics.beir import resolve_model

    data = _tiny(tmp_path / "tiny")
    folder = tmp_path / "qdrant"
    store = QdrantDocumentStore(
        path=str(folder), index="tiny", embedding_dim=384, similarity="cosine", progress_bar=False
    )
    embedder = SentenceTransformersDocumentEmbedder(model=resolve_model("all-MiniLM-L6-v2"), progress_bar=False)
    embedder.warm_up()
    documents = embedder.run(documents=corpus_documents(load_beir(data).corpus))["documents"]
    DocumentWriter(document_store=store).run(documents=documents)
    store._client.close()  # a local Qdrant folder is opened by one client at a time
    path = tmp_path / "qdrant.yaml"
    path.write_text(QDRANT_ON_DISK.replace("PATH", str(folder)))
    assert main(["beir", str(data), "-r", str(path), "--no-index", "--format", "json", "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    reference = run_beir(data, "dense", progress=False)
    assert summary["n_indexed"] == 3 and summary["metrics"] == reference.means
