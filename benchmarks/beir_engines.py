"""Retrieval engines for `irmetrics beir`, measured side by side on one BEIR dataset (default SciFact).

    python benchmarks/beir_engines.py [--data PATH] [--out benchmarks/beir_engines.md] [--engines a,b]

BM25: the CLI end to end in a fresh process (wall time, as a user sees it) for the bm25s engine
(``--retriever bm25``, twice: the second run loads the cached index) and Haystack's in-memory BM25
(``--retriever haystack-bm25``).

Dense (all-MiniLM-L6-v2): first what ``SentenceTransformer.encode`` alone takes for the corpus (batch 32)
and the queries (batch 64), the model's own cost on this CPU; then the built-in dense pipeline (FAISS)
with an empty embedding cache (first run) and again (from the cache), and ``dense-qdrant`` from the
cache; then the same pipeline with each embedded vector store through its Haystack integration
(Qdrant local mode, Chroma, faiss-haystack, Milvus Lite), Haystack's InMemoryDocumentStore and
haystack_irmetrics' FaissDocumentStore (faiss-cpu), corpus and query embeddings from the cache (filled
by an untimed run first), so the rows compare the stores.
A store whose integration is not installed, or fails, gets a row that says so. The in-memory store
copies every returned document with its embedding (``Document.to_dict``), seconds per query at
top_k 1000: it runs on the first ``--inmemory-queries`` queries and its retrieval time is scaled to all.

Writes a markdown table (``--out``) and prints it. Every number comes from this run on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_ST = "haystack_integrations.components.embedders.sentence_transformers"
TEXT_EMBEDDER = f"{_ST}.sentence_transformers_text_embedder.SentenceTransformersTextEmbedder"
DOC_EMBEDDER = f"{_ST}.sentence_transformers_document_embedder.SentenceTransformersDocumentEmbedder"
WRITER = "haystack.components.writers.document_writer.DocumentWriter"

#: name -> (pip package, store type, store init, retriever type, retriever init)
STORES = {
    "in-memory": (
        "haystack-ai",
        "haystack.document_stores.in_memory.document_store.InMemoryDocumentStore",
        {"index": "beir", "shared": True, "embedding_similarity_function": "cosine", "return_embedding": False},
        "haystack.components.retrievers.in_memory.embedding_retriever.InMemoryEmbeddingRetriever",
        {"scale_score": False},
    ),
    "qdrant": (
        "qdrant-haystack",
        "haystack_integrations.document_stores.qdrant.document_store.QdrantDocumentStore",
        {"location": ":memory:", "index": "beir", "embedding_dim": 384, "similarity": "cosine", "progress_bar": False},
        "haystack_integrations.components.retrievers.qdrant.retriever.QdrantEmbeddingRetriever",
        {},
    ),
    "chroma": (
        "chroma-haystack",
        "haystack_integrations.document_stores.chroma.document_store.ChromaDocumentStore",
        {"collection_name": "beir", "distance_function": "cosine"},
        "haystack_integrations.components.retrievers.chroma.retriever.ChromaEmbeddingRetriever",
        {},
    ),
    "faiss": (
        "faiss-haystack",
        "haystack_integrations.document_stores.faiss.document_store.FAISSDocumentStore",
        {"index_string": "Flat", "embedding_dim": 384},
        "haystack_integrations.components.retrievers.faiss.embedding_retriever.FAISSEmbeddingRetriever",
        {},
    ),
    "faiss-cpu": (
        "haystack-irmetrics",
        "haystack_irmetrics.integration.stores.faiss_store.FaissDocumentStore",
        {"index": "beir", "shared": True, "similarity": "cosine"},
        "haystack_irmetrics.integration.stores.faiss_store.FaissEmbeddingRetriever",
        {},
    ),
    "milvus-lite": (
        "milvus-haystack",
        "milvus_haystack.document_store.MilvusDocumentStore",
        {"collection_name": "beir", "connection_args": {"uri": "@TMP@/milvus.db"}, "drop_old": True},
        "milvus_haystack.milvus_embedding_retriever.MilvusEmbeddingRetriever",
        {},
    ),
}


def dense_pipeline(name: str, tmp: Path) -> dict:
    """The dense BEIR pipeline dict of pipelines/beir_dense.yaml with the store ``name``."""
    _, store_type, store_init, retriever_type, retriever_init = STORES[name]
    init = json.loads(json.dumps(store_init).replace("@TMP@", str(tmp)))
    store = {"type": store_type, "init_parameters": init}
    return {
        "components": {
            "query_embedder": {"type": TEXT_EMBEDDER, "init_parameters": {"model": MODEL, "progress_bar": False}},
            "retriever": {
                "type": retriever_type,
                "init_parameters": {"top_k": 1000, **retriever_init, "document_store": store},
            },
        },
        "connections": [{"sender": "query_embedder.embedding", "receiver": "retriever.query_embedding"}],
        "max_runs_per_component": 100,
        "metadata": {
            "irmetrics": {
                "indexing": {
                    "components": {
                        "embedder": {"type": DOC_EMBEDDER, "init_parameters": {"model": MODEL, "batch_size": 32}},
                        "writer": {
                            "type": WRITER,
                            "init_parameters": {"document_store": json.loads(json.dumps(store))},
                        },
                    },
                    "connections": [{"sender": "embedder.documents", "receiver": "writer.documents"}],
                }
            }
        },
    }


def cli_run(args: list[str], env: dict[str, str]) -> dict:
    """``irmetrics beir ARGS --format json`` in a fresh process: its summary, wall seconds and peak RSS (MB)."""
    started = time.perf_counter()
    cpu_before = _children_cpu()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "MAXRSS %M", sys.executable, "-m", "haystack_irmetrics.cli", "beir", *args,
         "--format", "json", "--no-progress"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    summary = json.loads(proc.stdout)
    # The run resets the kernel's RSS high-water mark at each phase (its per-phase peaks), which also lowers
    # what /usr/bin/time reads at exit when the peak came in an earlier phase: take the higher of the two.
    rss = [int(line.split()[1]) / 1024 for line in proc.stderr.splitlines() if line.startswith("MAXRSS")]
    peak = max([*rss, *(summary.get("peak_rss_mb") or {}).values()], default=None)
    return {**summary, "wall_s": wall, "cpu_s": cpu, "max_rss_mb": peak}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_rows(lines: list[str], runs, data: Path, env: dict[str, str], cells) -> None:
    """One table row per ``(label, retriever, which)`` run of the CLI; ``cells(summary)`` gives the numbers."""
    for label, retriever, which in runs:
        r = cli_run([str(data), "-r", retriever], env)
        lines.append(f"| {label} | {which} | " + (f"failed: {r['error']} |" if "error" in r else cells(r)))
        print(lines[-1], flush=True)


def _bm25_cells(r: dict) -> str:
    t, m = r["timings_s"], r["metrics"]
    return (
        f"{m['NDCG@10']:.5f} | {m['Recall@100']:.5f} | {t['indexing']:.2f} | {t['retrieval']:.2f} | {t['total']:.2f} | "
        f"{r['wall_s']:.2f} | {r['max_rss_mb']:.0f} |"
    )


def _dense_cells(r: dict, encode_cpu: float) -> str:
    t = r["timings_s"]
    return (
        f"{r['metrics']['NDCG@10']:.5f} | {t['indexing']:.1f} | {t['retrieval']:.1f} | {t['total']:.1f} | "
        f"{r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['cpu_s'] / encode_cpu:.2f} |"
    )


def encode_baseline(data: Path) -> dict:
    """Seconds (wall and CPU, all threads) SentenceTransformer.encode takes for the corpus (batch 32) and the
    queries (batch 64). CPU seconds compare fairly when other jobs share the cores."""
    from sentence_transformers import SentenceTransformer

    from haystack_irmetrics.beir import load_beir, resolve_model

    ds = load_beir(data)
    model = SentenceTransformer(resolve_model(MODEL), device="cpu")
    texts = [f"{d.get('title') or ''} {d.get('text') or ''}".strip() for d in ds.corpus.values()]
    started, cpu = time.perf_counter(), time.process_time()
    model.encode(texts, batch_size=32)
    model.encode(list(ds.queries.values()), batch_size=64)
    return {"wall_s": time.perf_counter() - started, "cpu_s": time.process_time() - cpu}


def dense_row(name: str, data: Path, tmp: Path, queries: int | None) -> dict:
    import yaml

    from haystack_irmetrics.beir import load_beir, run_beir

    ds = load_beir(data)
    if queries is not None:
        ds = ds.subset(list(ds.queries)[:queries])
    path = tmp / f"dense_{name}.yaml"
    path.write_text(yaml.safe_dump(dense_pipeline(name, tmp)), encoding="utf-8")
    try:
        run = run_beir(ds, path, progress=False, allowed_modules=["milvus_haystack.*"])
    except Exception as e:  # the row says what went wrong
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    return {
        "ndcg10": run.means["NDCG@10"],
        "recall100": run.means["Recall@100"],
        "indexing_s": run.timings["indexing"],
        "retrieval_s": run.timings["retrieval"],
        "n_queries": len(ds.queries),
        "peak_rss_mb": max(run.peak_rss_mb.values()),
        "unsorted": run.info["queries_not_sorted_by_score"],
    }


def warm_cache(data: Path, queries: int) -> None:
    """Fill the embedding cache (corpus, all queries, the in-memory row's first ``queries``), untimed."""
    from haystack_irmetrics.beir import load_beir, run_beir

    ds = load_beir(data)
    run_beir(ds, "dense", progress=False)
    run_beir(ds.subset(list(ds.queries)[:queries]), "dense", progress=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "beir_engines.md")
    parser.add_argument("--engines", default="bm25,dense,stores")
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument("--inmemory-queries", type=int, default=30)
    parser.add_argument("--cache-dir", type=Path, help="IRMETRICS_CACHE_DIR (default: a new temporary folder)")
    args = parser.parse_args()
    parts = set(args.engines.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="beir_engines_"))
    env = {**os.environ, "IRMETRICS_CACHE_DIR": str(args.cache_dir or tmp / "cache"), "HF_HUB_OFFLINE": "1"}
    os.environ.update(env)
    lines = [
        f"Dataset {args.data.name}; {os.cpu_count()} cores; every number from one run of benchmarks/beir_engines.py.",
        "",
    ]
    if "bm25" in parts:
        lines += ["| BM25 engine | run | nDCG@10 | Recall@100 | indexing s | retrieval s | total s (in process) | wall s (process) | peak RSS MB |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        runs = (
            ("bm25s (`bm25`)", "bm25", "first"),
            ("bm25s (`bm25`)", "bm25", "again (index from the cache)"),
            ("Haystack in-memory (`haystack-bm25`)", "haystack-bm25", "first"),
        )
        cli_rows(lines, runs, args.data, env, _bm25_cells)
        lines.append("")
    if "dense" in parts:
        base = encode_baseline(args.data)
        lines += [
            f"SentenceTransformer.encode alone, corpus (batch 32) and queries (batch 64): {base['wall_s']:.1f} s wall, "
            f"{base['cpu_s']:.1f} CPU s (the model's own cost).",
            "",
            "| dense (built-in pipeline) | run | nDCG@10 | indexing s | retrieval s | total s (in process) | wall s (process) | CPU s (process) | CPU / encode's CPU |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        runs = [
            ("dense (FAISS)", "dense", "first (empty cache)"),
            ("dense (FAISS)", "dense", "again (embeddings from the cache)"),
            ("dense-qdrant (Qdrant local mode)", "dense-qdrant", "again (embeddings from the cache)"),
        ]
        cli_rows(lines, runs, args.data, env, lambda r: _dense_cells(r, base["cpu_s"]))
        lines.append("")
    if "stores" in parts:
        lines += [
            "| vector store (Haystack integration) | nDCG@10 | Recall@100 | indexing s (from cached embeddings) | retrieval s | ms / query | peak RSS MB | note |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        warm_cache(args.data, args.inmemory_queries)
        for name in args.stores.split(","):
            n = args.inmemory_queries if name == "in-memory" else None
            r = dense_row(name, args.data, tmp, n)
            if "error" in r:
                lines.append(f"| {name} ({STORES[name][0]}) | — | — | — | — | — | — | {r['error']} |")
            else:
                note = f"first {n} queries" if n else ""
                if r["unsorted"]:
                    note += f" output not sorted by score on {r['unsorted']} queries"
                lines.append(
                    f"| {name} ({STORES[name][0]}) | {r['ndcg10']:.5f} | {r['recall100']:.5f} | {r['indexing_s']:.1f} | "
                    f"{r['retrieval_s']:.1f} | {1000 * r['retrieval_s'] / r['n_queries']:.1f} | {r['peak_rss_mb']:.0f} | {note} |"
                )
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
