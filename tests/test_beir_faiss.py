"""The FAISS vector engine (FaissDocumentStore, FaissEmbeddingRetriever): a Haystack store and component,
exact cosine and dot-product search checked against numpy, batched searches equal to one-query ones,
duplicate policies, bad embeddings named, and BEIR's numbers on its own run."""

from __future__ import annotations

import importlib.util
from itertools import pairwise

import numpy as np
import pytest

pytest.importorskip("faiss")

from haystack import Document, Pipeline
from haystack.components.writers import DocumentWriter
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy

from haystack_irmetrics.errors import MissingDependencyError, PipelineError
from haystack_irmetrics.integration.loading import load_pipeline
from haystack_irmetrics.integration.stores.faiss_store import FaissDocumentStore, FaissEmbeddingRetriever


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing (the other interpreters' minimal installs)
        return False


DENSE = _installed("haystack_integrations.components.embedders.sentence_transformers")


def _docs(vectors: np.ndarray, prefix: str = "d") -> list[Document]:
    return [
        Document(id=f"{prefix}{i}", content=f"text {i}", meta={"beir_id": f"{prefix}{i}"}, embedding=v.tolist())
        for i, v in enumerate(vectors)
    ]


def _oracle(vectors: np.ndarray, query: np.ndarray, similarity: str) -> np.ndarray:
    """Every document's score by numpy in float64 (the reference the FAISS scores must match)."""
    v, q = vectors.astype(np.float64), query.astype(np.float64)
    if similarity == "cosine":
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
        q = q / np.linalg.norm(q)
    return v @ q


@pytest.mark.parametrize("similarity", ["cosine", "dot_product"])
def test_hits_are_every_document_ranked_by_the_exact_similarity(similarity):
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((200, 16)).astype(np.float32)
    store = FaissDocumentStore(similarity=similarity)
    store.write_documents(_docs(vectors))
    retriever = FaissEmbeddingRetriever(store, top_k=500)
    for query in rng.standard_normal((5, 16)).astype(np.float32):
        hits = retriever.run(query_embedding=query.tolist())["documents"]
        assert len(hits) == 200  # top_k beyond the corpus: every document once
        expected = _oracle(vectors, query, similarity)
        scores = np.array([d.score for d in hits])
        got = expected[[int(d.id[1:]) for d in hits]]
        np.testing.assert_allclose(scores, got, rtol=1e-5, atol=1e-5)
        assert (np.diff(scores) <= 0).all()  # best first
        assert [d.id for d in hits[:10]] == [f"d{i}" for i in np.argsort(-expected, kind="stable")[:10]]


@pytest.mark.parametrize("threshold", [20, 128_000])  # FAISS's classic default and faiss-cpu 1.15's
def test_a_batch_of_queries_gives_exactly_what_each_query_alone_gives_ties_included(threshold, monkeypatch):
    import faiss

    # FAISS scores fewer queries than this threshold with its own loop and more with BLAS (other last
    # bits); the store must give one answer whatever the batch, or a resumed dense run would differ
    # from an uninterrupted one. FAISS's own setting is left as it was.
    monkeypatch.setattr(faiss.cvar, "distance_compute_blas_threshold", threshold)
    rng = np.random.default_rng(3)
    base = rng.standard_normal((3400, 128)).astype(np.float32)
    vectors = np.concatenate([base, base, 2 * base])  # every score tied three times (cosine)
    store = FaissDocumentStore(index="batch")
    store.write_documents(_docs(vectors))
    queries = [q.tolist() for q in rng.standard_normal((64, 128)).astype(np.float32)]
    alone = [[(d.id, d.score) for d in store.embedding_retrieval(q, top_k=50)] for q in queries]
    store.prefetch(queries, top_k=50)
    assert len(store._index.prefetched) == 64
    batched = [[(d.id, d.score) for d in store.embedding_retrieval(q, top_k=50)] for q in queries]
    assert batched == alone
    assert store._index.prefetched == {}  # each prefetched result is read once
    store.prefetch(queries[10:15], top_k=50)  # a smaller batch (what a resumed run's last one may be)
    assert [[(d.id, d.score) for d in store.embedding_retrieval(q, top_k=50)] for q in queries[10:15]] == alone[10:15]
    assert faiss.cvar.distance_compute_blas_threshold == threshold


def _ranked(store, queries, top_k, batch):
    """Each query's ``(id, score bits)`` hits, the queries prefetched ``batch`` at a time (0: each alone)."""
    out = []
    for start in range(0, len(queries), batch or 1):
        part = queries[start : start + (batch or 1)]
        if batch:
            store.prefetch(part, top_k=top_k)
            assert len(store._index.prefetched) == len(part)  # read from the batch, not searched again
        out.extend([(d.id, d.score.hex()) for d in store.embedding_retrieval(q, top_k=top_k)] for q in part)
    assert store._index.prefetched == {}
    return out


@pytest.mark.parametrize("similarity", ["cosine", "dot_product"])
def test_scores_are_the_same_bits_alone_and_in_batches_of_1_7_64_and_1000_ties_in_writing_order(similarity):
    import faiss

    # On this corpus FAISS's own scores (sgemm) differ in their last bits between a query searched alone
    # and in a batch of 64 or 1,000 on some CPUs/BLAS kernels (OpenBLAS's Haswell kernel on an AMD EPYC:
    # 609 of 1,000 queries in batches of 64); the store's scores may not.
    rng = np.random.default_rng(3)
    base = rng.standard_normal((3400, 128)).astype(np.float32)
    vectors = np.concatenate([base, base, 2 * base])  # duplicates: every score tied 3 times (cosine) or 2
    store = FaissDocumentStore(index=f"batches-{similarity}", similarity=similarity)
    store.write_documents(_docs(vectors))
    queries = rng.standard_normal((1000, 128)).astype(np.float32).tolist()
    before = faiss.cvar.distance_compute_blas_threshold
    alone = _ranked(store, queries, 50, 0)
    for batch in (1, 7, 64, 1000):
        assert _ranked(store, queries, 50, batch) == alone, f"batches of {batch}"
    assert faiss.cvar.distance_compute_blas_threshold == before
    # The scores are the float32 inner products of the stored (normalised) vectors, nearest to float64's.
    rows = store._index.rows().astype(np.float64)
    q = store._queries(queries[:20]).astype(np.float64)
    for hits, query in zip(alone, q):
        exact = (rows[[int(i[1:]) for i, _ in hits]] @ query).astype(np.float32)
        np.testing.assert_allclose([float.fromhex(b) for _, b in hits], exact, rtol=0, atol=1e-6)

    def vector(doc_id):  # documents holding the same (normalised) vector have the same number
        i = int(doc_id[1:])
        return i % 3400 if similarity == "cosine" or i < 6800 else i

    ties = 0
    for hits in alone:
        for (a, sa), (b, sb) in pairwise(hits):
            assert float.fromhex(sa) >= float.fromhex(sb)  # best first
            if sa == sb:  # a tie: in writing order
                assert int(a[1:]) < int(b[1:])
                ties += 1
        bits = {}
        for i, score in hits:
            bits.setdefault(vector(i), set()).add(score)
        assert all(len(scores) == 1 for scores in bits.values())  # copies of a vector score the same bits
    assert ties > (1000 if similarity == "cosine" else 10)  # dot_product: 2 * base outscores the copies of base


def test_a_tie_longer_than_the_candidates_faiss_proposes_is_cut_in_writing_order(monkeypatch):
    from haystack_irmetrics.integration.stores import faiss_store

    # 100 copies of one vector among 5,000 others: the cut at top_k=10 falls inside the tie, beyond the
    # 26 candidates FAISS proposes first; the store fetches more until no left-out copy can reach the cut.
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((5100, 64)).astype(np.float32)
    tied = rng.permutation(5100)[:100]
    vectors[tied] = vectors[tied[0]]
    store = FaissDocumentStore()
    store.write_documents(_docs(vectors))
    fetched = []
    original = faiss_store._scores
    monkeypatch.setattr(
        faiss_store, "_scores", lambda rows, q, pos: fetched.append(pos.shape[1]) or original(rows, q, pos)
    )
    query = vectors[tied[0]].tolist()
    hits = store.embedding_retrieval(query, top_k=10)
    assert [d.id for d in hits] == [f"d{i}" for i in sorted(tied)[:10]]
    assert len({d.score for d in hits}) == 1 and fetched == [26, 104]
    store.prefetch([query, *rng.standard_normal((30, 64)).tolist()], top_k=10)
    assert [(d.id, d.score) for d in store.embedding_retrieval(query, top_k=10)] == [(d.id, d.score) for d in hits]


def test_the_exact_scan_of_every_document_and_the_faiss_candidates_rank_alike():
    # top_k near the corpus size scores every document without FAISS; a smaller top_k goes through
    # FAISS's candidates: the same ranking, so one is the other's beginning.
    rng = np.random.default_rng(13)
    base = rng.standard_normal((400, 32)).astype(np.float32)
    store = FaissDocumentStore(similarity="dot_product")
    store.write_documents(_docs(np.concatenate([base, base, -base])))
    for query in rng.standard_normal((5, 32)).tolist():
        every = [(d.id, d.score) for d in store.embedding_retrieval(query, top_k=1200)]
        assert [(d.id, d.score) for d in store.embedding_retrieval(query, top_k=40)] == every[:40]
        assert len(every) == 1200
        for (a, sa), (b, sb) in pairwise(every):
            assert sa > sb or (sa == sb and int(a[1:]) < int(b[1:]))  # the copies tie, in writing order


def test_dot_product_scores_that_could_overflow_inside_faiss_are_ranked_exactly():
    # |q| * |x| beyond 1e37: FAISS's float32 sums could overflow, so every document is scored exactly.
    rng = np.random.default_rng(17)
    vectors = np.concatenate([rng.standard_normal((60, 2)), [[1e19, 1e19], [1e19, -1e19], [-1e19, -1e19]]])
    store = FaissDocumentStore(similarity="dot_product")
    store.write_documents(_docs(vectors))
    query = np.array([1e19, 1e19])
    exact = (vectors.astype(np.float32).astype(np.float64) @ query.astype(np.float32)).astype(np.float32)
    hits = store.embedding_retrieval(query.tolist(), top_k=5)
    assert [(d.id, d.score) for d in hits] == [
        (f"d{i}", float(exact[i])) for i in np.argsort(-exact, kind="stable")[:5]
    ]
    assert hits[0].id == "d60" and hits[0].score == float(np.float32(2e38))


def test_tied_documents_come_in_writing_order_and_the_first_written_make_the_cut():
    rng = np.random.default_rng(5)
    same = np.ones((1, 16), dtype=np.float32)
    vectors = np.concatenate([rng.standard_normal((30, 16)).astype(np.float32), np.repeat(same, 6, axis=0)])
    order = rng.permutation(len(vectors))  # the six tied documents written in a shuffled order
    docs = [_docs(vectors)[i] for i in order]
    store = FaissDocumentStore()
    store.write_documents(docs)
    tied_in_writing_order = [d.id for d in docs if int(d.id[1:]) >= 30]
    query = same[0].tolist()
    for top_k in (1, 4, 6):
        assert [d.id for d in store.embedding_retrieval(query, top_k=top_k)] == tied_in_writing_order[:top_k]
        store.prefetch([query, (-same[0]).tolist(), *rng.standard_normal((25, 16)).tolist()], top_k=top_k)
        assert [d.id for d in store.embedding_retrieval(query, top_k=top_k)] == tied_in_writing_order[:top_k]
    with pytest.raises(PipelineError, match="top_k must be a whole number >= 1, got 0"):
        store.embedding_retrieval(query, top_k=0)


def test_stored_documents_keep_no_embedding_and_the_callers_documents_are_not_changed():
    vectors = np.eye(3, dtype=np.float32)
    docs = _docs(vectors)
    before = [d.to_dict() for d in docs]
    store = FaissDocumentStore(return_embedding=False)
    assert store.write_documents(docs) == 3
    assert [d.to_dict() for d in docs] == before
    assert all(d.embedding is None for d in store.filter_documents())
    [hit] = store.embedding_retrieval([0.0, 2.0, 0.0], top_k=1)
    assert (hit.id, hit.score, hit.embedding, hit.meta) == ("d1", 1.0, None, {"beir_id": "d1"})
    assert all(d.score is None for d in store.filter_documents())  # a hit is a copy
    [with_vector] = FaissEmbeddingRetriever(store, top_k=1, return_embedding=True).run(query_embedding=[0, 0, 3])[
        "documents"
    ]
    assert with_vector.embedding == [0.0, 0.0, 1.0]  # the stored (normalised) vector


def test_duplicates_follow_the_policy_and_an_overwrite_replaces_the_vector():
    store = FaissDocumentStore(index="dups", shared=True)
    reader = FaissDocumentStore(index="dups", shared=True)
    pipe = Pipeline()
    pipe.add_component("writer", DocumentWriter(document_store=store))
    pipe.run({"writer": {"documents": _docs(np.eye(3, dtype=np.float32))}})
    assert reader.count_documents() == 3
    assert [d.id for d in reader.embedding_retrieval([1, 0, 0], top_k=1)] == ["d0"]
    moved = Document(id="d0", content="moved", meta={"beir_id": "d0"}, embedding=[0.0, 0.1, 5.0])
    with pytest.raises(DuplicateDocumentError, match="d0"):
        reader.write_documents([moved])
    assert reader.write_documents([moved], policy=DuplicatePolicy.SKIP) == 0
    assert reader.write_documents([moved, *_docs(np.ones((1, 3), np.float32), "n")], DuplicatePolicy.OVERWRITE) == 2
    hits = reader.embedding_retrieval([0, 0.1, 5], top_k=2)
    assert [(d.id, d.content) for d in hits] == [("d0", "moved"), ("d2", "text 2")]
    assert hits[0].score == pytest.approx(1.0) and reader.count_documents() == 4
    reader.delete_documents(["d2", "not-there"])
    assert [d.id for d in reader.embedding_retrieval([0, 0, 1], top_k=4)] == ["d0", "n0", "d1"]
    store.delete_all_documents()
    assert reader.count_documents() == 0 and reader.embedding_retrieval([0, 0, 1]) == []


@pytest.mark.parametrize(
    ("embedding", "message"),
    [
        (None, "document 'bad' has no embedding"),
        ([1.0, 2.0], "document 'bad' has an embedding of 2 dimensions where the index 'default' holds 3"),
        ([1.0, float("nan"), 0.0], "document 'bad' has a NaN or infinite embedding value"),
    ],
)
def test_a_bad_embedding_is_named_and_nothing_of_its_batch_is_written(embedding, message):
    store = FaissDocumentStore()
    store.write_documents(_docs(np.eye(3, dtype=np.float32)))
    bad = Document(id="bad", content="x", embedding=embedding)
    with pytest.raises(PipelineError, match=message):
        store.write_documents([*_docs(np.ones((1, 3), np.float32), "ok"), bad])
    assert store.count_documents() == 3


def test_bad_queries_filters_and_stores_are_refused_with_a_message():
    store = FaissDocumentStore()
    store.write_documents(_docs(np.eye(3, dtype=np.float32)))
    with pytest.raises(PipelineError, match="shape"):
        store.embedding_retrieval([1.0, 0.0])
    with pytest.raises(PipelineError, match="NaN"):
        store.embedding_retrieval([1.0, float("inf"), 0.0])
    with pytest.raises(PipelineError, match="list of numbers"):
        store.embedding_retrieval(["a", "b", "c"])
    with pytest.raises(PipelineError, match="filters"):
        store.filter_documents({"field": "meta.x", "operator": "==", "value": 1})
    with pytest.raises(PipelineError, match="similarity"):
        FaissDocumentStore(similarity="l2")
    with pytest.raises(PipelineError, match="FaissDocumentStore"):
        FaissEmbeddingRetriever(document_store=object())


def test_a_zero_vector_scores_zero_under_cosine_instead_of_nan():
    store = FaissDocumentStore()
    store.write_documents(_docs(np.array([[0, 0, 0], [1, 0, 0]], dtype=np.float32)))
    hits = store.embedding_retrieval([1, 0, 0], top_k=2)
    assert [(d.id, d.score) for d in hits] == [("d1", 1.0), ("d0", 0.0)]


@pytest.mark.parametrize("vector", [[1e30, 1e30], [1e-25, 0.0], [3e38, -3e38], [1e-45, 1e-45], [1e200, 1e200]])
def test_cosine_scores_a_vector_one_against_itself_whatever_its_scale(vector):
    # Normalised in float32, the squares of [1e30, 1e30] overflow and those of [1e-25, 0] underflow: both scored
    # 0 against themselves. 1e200 does not even fit float32, but cosine only needs its direction.
    store = FaissDocumentStore()
    store.write_documents([Document(id="v", content="x", embedding=vector), *_docs(np.array([[0.0, 1.0]]), "y")])
    [hit] = store.embedding_retrieval(vector, top_k=1)
    unit = store.embedding_retrieval(np.sign(vector).tolist(), top_k=1)[0]
    assert hit.id == "v" and hit.score == pytest.approx(1.0, abs=1e-6)
    assert hit.score == unit.score  # the same float32 bits as the vector of that direction at scale 1


def test_a_zero_vector_still_scores_zero_and_dot_product_refuses_values_beyond_float32():
    store = FaissDocumentStore()
    store.write_documents([Document(id="z", content="x", embedding=[0.0, 0.0]), *_docs(np.array([[1e30, 0.0]]))])
    assert [(d.id, d.score) for d in store.embedding_retrieval([1e-30, 0.0], top_k=2)] == [("d0", 1.0), ("z", 0.0)]
    raw = FaissDocumentStore(similarity="dot_product")
    with pytest.raises(PipelineError, match="document 'big' has an embedding value beyond float32's range"):
        raw.write_documents([Document(id="big", content="x", embedding=[1e39, 0.0])])
    raw.write_documents(_docs(np.eye(2)))
    with pytest.raises(PipelineError, match="query embedding has a value beyond float32's range"):
        raw.embedding_retrieval([1e39, 0.0])


def test_an_embedding_of_strings_is_named_as_non_numeric_not_as_a_wrong_dimension():
    store = FaissDocumentStore()
    with pytest.raises(PipelineError, match="document 'bad' has a non-numeric embedding value"):
        store.write_documents([*_docs(np.eye(2)), Document(id="bad", content="x", embedding=["a", "b"])])
    assert store.count_documents() == 0


def test_retriever_round_trips_through_to_dict_yaml_and_load_pipeline():
    retriever = FaissEmbeddingRetriever(FaissDocumentStore(index="x", similarity="dot_product"), top_k=7)
    again = FaissEmbeddingRetriever.from_dict(retriever.to_dict())
    assert again.to_dict() == retriever.to_dict() and again.top_k == 7
    assert again.document_store.similarity == "dot_product"
    pipe = Pipeline()
    pipe.add_component("retriever", retriever)
    loaded = load_pipeline(pipe.dumps())
    assert loaded.get_component("retriever").to_dict() == retriever.to_dict()


def test_without_faiss_the_store_names_the_dense_extra(monkeypatch):
    import sys

    store = FaissDocumentStore()
    store.write_documents(_docs(np.eye(3, dtype=np.float32)))
    monkeypatch.setitem(sys.modules, "faiss", None)
    with pytest.raises(MissingDependencyError, match=r"haystack-irmetrics\[dense\]"):
        store.embedding_retrieval([1, 0, 0])


@pytest.mark.skipif(not DENSE, reason="the dense extra (sentence-transformers-haystack)")
@pytest.mark.parametrize("retriever", ["dense", "dense-qdrant", "hybrid"])
def test_each_dense_engine_gives_beirs_numbers_on_its_own_run(retriever):
    if retriever == "dense-qdrant":
        pytest.importorskip("haystack_integrations.document_stores.qdrant")
    from haystack_irmetrics.beir import load_beir, run_beir, sample_path

    from .test_beir_run import beir_reference

    # The session's cache (conftest.py): the sample is embedded once for every dense test of the run.
    run = run_beir(retriever=retriever, progress=False)
    qrels = load_beir(sample_path()).qrels
    assert run.means == beir_reference(qrels, run.results, [1, 3, 5, 10, 100, 1000])
    if retriever != "hybrid":  # FAISS and Qdrant rank the same vectors by the same cosine
        other = run_beir(retriever="dense-qdrant" if retriever == "dense" else "dense", progress=False)
        assert other.means == run.means
