"""Hostile input to the in-process document stores (bm25s, FAISS) and to the pipeline YAML that builds them:
every bad parameter is one PipelineError naming the component and the parameter, an alias bomb is refused
before it is expanded, and `irmetrics beir --retriever BAD.yaml` exits 2 with one line, no traceback."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("bm25s")
pytest.importorskip("Stemmer")

from haystack import Document

from haystack_irmetrics.beir.pipelines import pipelines_dir
from haystack_irmetrics.errors import PipelineError
from haystack_irmetrics.integration.stores.bm25s_store import BM25sDocumentStore, BM25sRetriever

BAD_TOP_K = [None, "3", math.nan, math.inf, True, 1.5, 0, -3, [5]]
DOCS = [Document(id=f"d{i}", content=text, meta={"beir_id": f"d{i}"}) for i, text in enumerate(["cats", "dogs"])]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))


def _faiss():
    pytest.importorskip("faiss")
    from haystack_irmetrics.integration.stores.faiss_store import FaissDocumentStore, FaissEmbeddingRetriever

    return FaissDocumentStore, FaissEmbeddingRetriever


def _stores(kind: str):
    """(store, retriever class, query) of one engine, the store holding two documents."""
    if kind == "bm25s":
        store = BM25sDocumentStore(cache=False)
        store.write_documents(DOCS)
        return store, BM25sRetriever, "cats"
    store_class, retriever_class = _faiss()
    store = store_class()
    store.write_documents([Document(id=d.id, content=d.content, embedding=[1.0, float(i)]) for i, d in enumerate(DOCS)])
    return store, retriever_class, [1.0, 0.0]


def _retrieve(store, query, top_k):
    if isinstance(query, str):
        return store.bm25_retrieval(query, top_k=top_k)
    return store.embedding_retrieval(query, top_k=top_k)


@pytest.mark.parametrize("kind", ["bm25s", "faiss"])
@pytest.mark.parametrize("top_k", BAD_TOP_K, ids=repr)
def test_a_bad_top_k_is_refused_the_same_way_by_both_engines_wherever_it_is_given(kind, top_k):
    store, retriever_class, query = _stores(kind)
    name = retriever_class.__name__
    with pytest.raises(PipelineError, match=rf"^{name}: top_k must be a whole number >= 1, got "):
        retriever_class(store, top_k=top_k)
    retriever = retriever_class(store, top_k=2)
    run = retriever.run(query=query) if isinstance(query, str) else retriever.run(query_embedding=query)
    assert len(run["documents"]) == (1 if isinstance(query, str) else 2)
    if top_k is None:  # at run time None means the retriever's own top_k
        return
    with pytest.raises(PipelineError, match=rf"^{name}: top_k must be a whole number >= 1"):
        retriever.run(query, top_k=top_k)  # the first input: query (bm25s) or query_embedding (FAISS)
    store_name = type(store).__name__
    with pytest.raises(PipelineError, match=rf"^{store_name}: top_k must be a whole number >= 1"):
        _retrieve(store, query, top_k)
    with pytest.raises(PipelineError, match=rf"^{store_name}: top_k must be a whole number >= 1"):
        store.prefetch([query], top_k)


def test_a_numpy_integer_top_k_is_taken_as_the_whole_number_it_is():
    import numpy as np

    store, _, _ = _stores("bm25s")
    assert BM25sRetriever(store, top_k=np.int64(1)).top_k == 1
    assert [d.id for d in store.bm25_retrieval("cats", top_k=np.int32(5))] == ["d0"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"k1": "abc"}, r"k1 must be a finite number >= 0, got 'abc'"),
        ({"k1": -0.1}, r"k1 must be a finite number >= 0"),
        ({"k1": math.inf}, r"k1 must be a finite number >= 0, got inf"),
        ({"k1": True}, r"k1 must be a finite number"),
        ({"k1": 10**400}, r"k1 must be a finite number"),
        ({"b": 1.5}, r"b must be a number in \[0, 1\], got 1.5"),
        ({"b": math.nan}, r"b must be a number in \[0, 1\], got nan"),
        ({"b": None}, r"b must be a number in \[0, 1\], got None"),
        ({"stemmer": "klingon"}, r"stemmer 'klingon' is not a PyStemmer algorithm \(arabic, "),
        ({"stemmer": 3}, r"stemmer must be a PyStemmer algorithm name or null, got 3"),
        ({"stopwords": 5}, r"stopwords must be a language such as 'en', a list of words or null, got 5"),
        ({"stopwords": ["a", 1]}, r"stopwords must be"),
        ({"cache": "no"}, r"cache must be true or false, got 'no'"),
        ({"shared": "false"}, r"shared must be true or false, got 'false'"),
        ({"index": None}, r"index must be a non-empty string, got None"),
        ({"index": ""}, r"index must be a non-empty string"),
    ],
)
def test_a_bad_bm25s_store_parameter_is_named_at_init(params, message):
    with pytest.raises(PipelineError, match=rf"^BM25sDocumentStore: {message}"):
        BM25sDocumentStore(**params)


def test_an_unknown_stop_word_language_is_named_when_the_index_is_built():
    store = BM25sDocumentStore(stopwords="klingon", cache=False)
    store.write_documents(DOCS)
    with pytest.raises(PipelineError, match=r"^BM25sDocumentStore: stopwords 'klingon': .*not recognized"):
        store.bm25_retrieval("cats")


def test_good_bm25s_parameters_are_kept_and_the_callers_stop_word_list_is_not_shared():
    words = ["cats"]
    store = BM25sDocumentStore(k1=1, b=0, stopwords=words, stemmer=None, cache=False)
    assert (store.k1, store.b, store.stopwords) == (1.0, 0.0, ["cats"]) and store.stopwords is not words
    store.write_documents(DOCS)
    assert store.bm25_retrieval("cats dogs", top_k=5)[0].id == "d1"  # "cats" is a stop word here
    assert words == ["cats"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"similarity": "l2"}, r"similarity must be one of cosine, dot_product, got 'l2'"),
        ({"similarity": ["cosine"]}, r"similarity must be one of"),
        ({"return_embedding": "yes"}, r"return_embedding must be true or false, got 'yes'"),
        ({"shared": 1}, r"shared must be true or false, got 1"),
        ({"index": 7}, r"index must be a non-empty string, got 7"),
    ],
)
def test_a_bad_faiss_store_parameter_is_named_at_init(params, message):
    store_class, _ = _faiss()
    with pytest.raises(PipelineError, match=rf"^FaissDocumentStore: {message}"):
        store_class(**params)


def test_a_bad_faiss_retriever_return_embedding_is_named():
    store_class, retriever_class = _faiss()
    with pytest.raises(PipelineError, match=r"^FaissEmbeddingRetriever: return_embedding must be true, false or null"):
        retriever_class(store_class(), return_embedding="no")


# -- the CLI: `irmetrics beir --retriever BAD.yaml` on the shipped sample ----------------------------------------


def _irmetrics(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "IRMETRICS_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "haystack_irmetrics.cli", *args, "--no-progress"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,  # a guard for the test run only: what is asserted is the refusal
    )


def _bm25_yaml(old: str, new: str) -> str:
    text = (pipelines_dir() / "beir_bm25.yaml").read_text(encoding="utf-8")
    assert old in text
    return text.replace(old, new)


def _bomb(levels: int = 9) -> str:
    """Nine aliases of the level before, nine levels deep: 387 million strings from about 600 bytes."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


BAD_YAML = {
    "top_k_null": (
        _bm25_yaml("top_k: 1000", "top_k: null"),
        r"BM25sRetriever: top_k must be a whole number >= 1, got None",
    ),
    "top_k_string": (_bm25_yaml("top_k: 1000", 'top_k: "3"'), r"top_k must be a whole number >= 1, got '3'"),
    "top_k_nan": (_bm25_yaml("top_k: 1000", "top_k: .nan"), r"top_k must be a whole number >= 1, got nan"),
    "top_k_true": (_bm25_yaml("top_k: 1000", "top_k: true"), r"top_k must be a whole number >= 1, got True"),
    "top_k_float": (_bm25_yaml("top_k: 1000", "top_k: 1.5"), r"top_k must be a whole number >= 1, got 1.5"),
    "top_k_negative": (_bm25_yaml("top_k: 1000", "top_k: -3"), r"top_k must be a whole number >= 1, got -3"),
    "k1_string": (_bm25_yaml("k1: 0.9", "k1: abc"), r"BM25sDocumentStore: k1 must be a finite number >= 0, got 'abc'"),
    "b_out_of_range": (_bm25_yaml("b: 0.4", "b: 4"), r"BM25sDocumentStore: b must be a number in \[0, 1\]"),
    "stemmer_unknown": (_bm25_yaml("stemmer: porter", "stemmer: klingon"), r"stemmer 'klingon' is not a PyStemmer"),
    "cache_string": (
        _bm25_yaml("stopwords: en}", "stopwords: en, cache: 'no'}"),
        r"BM25sDocumentStore: cache must be true or false, got 'no'",
    ),
    "alias_bomb": (_bomb() + _bm25_yaml("top_k: 1000", "top_k: 10"), r"aliases expand .* refused as an alias bomb"),
    "self_alias": (
        "x: &x [1, *x]\n" + _bm25_yaml("top_k: 1000", "top_k: 10"),
        r"a YAML alias refers to a node that contains it",
    ),
    "deep": (
        "x: " + "[" * 3000 + "]" * 3000 + "\n" + _bm25_yaml("top_k: 1000", "top_k: 10"),
        r"nests deeper than 100 levels",
    ),
    "malformed": ("components: [1, 2\n", r"cannot read pipeline YAML .*BAD.yaml: it is not readable YAML \(.*line 2"),
}


@pytest.mark.parametrize("case", sorted(BAD_YAML))
def test_irmetrics_beir_with_a_bad_pipeline_yaml_exits_2_with_one_line(case, tmp_path):
    text, message = BAD_YAML[case]
    (tmp_path / "BAD.yaml").write_text(text, encoding="utf-8")
    top_k = ["--top-k", "0"] if case == "top_k_null" else []  # 0: the pipeline's own top_k, which is null
    done = _irmetrics("beir", "--retriever", "BAD.yaml", *top_k, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("irmetrics: error: ")
    assert re.search(message, line), line


def test_irmetrics_beir_refuses_an_alias_bomb_in_the_indexing_yaml_it_names(tmp_path):
    (tmp_path / "index.yaml").write_text(_bomb() + "components: {}\nconnections: []\n", encoding="utf-8")
    main = (
        _bm25_yaml("top_k: 1000", "top_k: 10").split("metadata:")[0] + "metadata: {irmetrics: {indexing: index.yaml}}\n"
    )
    (tmp_path / "BAD.yaml").write_text(main, encoding="utf-8")
    done = _irmetrics("beir", "--retriever", "BAD.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert "index.yaml (metadata.irmetrics.indexing of" in line and "alias bomb" in line


def test_a_query_of_stop_words_only_retrieves_nothing_and_is_counted_in_the_summary(tmp_path):
    data = tmp_path / "tiny"
    (data / "qrels").mkdir(parents=True)
    corpus = [("d1", "Fix a flat tyre"), ("d2", "Prune roses in spring"), ("d3", "The and of"), ("d4", "of the")]
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in corpus))
    queries = [("q1", "flat tyre"), ("q2", "the of and"), ("q3", "zebra")]
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries))
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\nq3\td2\t1\n")
    done = _irmetrics("beir", str(data), "-o", "out", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "tiny" / "summary.json").read_text())
    assert summary["queries_without_results"] == 2
    run = (tmp_path / "out" / "tiny" / "run.trec").read_text().splitlines()
    assert [line.split()[:3] for line in run] == [["q1", "Q0", "d1"]]
    assert "2 of 3 queries retrieved no document" in done.stderr
