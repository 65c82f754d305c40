"""The everyday BEIR path (`irmetrics beir DATASET`, BM25), measured side by side in one run.

    python benchmarks/everyday_path.py [--data PATH] [--repeat N] [--python-bare PY] [--out PATH] [--quick]

In this process, on one dataset (default SciFact), best of ``--repeat``:

- **bm25s alone**: all queries tokenized and scored by the bm25s library directly, with our store's
  tokenizer, stemmer, stop words and parameters (Lucene's BM25, k1 0.9, b 0.4, top 1000), the index
  built beforehand; then the same plus the ``{query: {document: score}}`` dict a bm25s user evaluates.
- **ours**: the retrieval phase of ``run_beir`` (``runner._retrieve``: the batch scoring, then each query
  through the pipeline into its ranked dict), with the components called directly (the default) and
  with every query through Haystack's ``Pipeline.run``. Per-query overhead = (ours - bm25s alone) / queries.
  Both give the same documents, scores and order as bm25s alone (checked).

In fresh processes, ``python -m haystack_irmetrics.cli beir DATA -o OUT`` as a user runs it: **cold** (an
empty ``$IRMETRICS_CACHE_DIR``: the bm25s index is built and cached) and **warm** (the cached index), with
this interpreter and, with ``--python-bare``, a second one (e.g. a venv without torch); wall seconds and
the process's CPU seconds (user + sys), best of ``--repeat``, and the retrieval phase the run reports.
Every fresh run must write the same ``run.trec`` and ``metrics.json`` bytes (checked).

Writes a markdown table (``--out``, default ``benchmarks/everyday_path.md``; ``--quick``: the shipped
sample, one repetition, the table to a temporary file unless ``--out`` is given) and prints it. Ratios
and overheads, no timed assertions. Other work on the machine inflates wall times: the load average is
printed with the table, and CPU seconds are less sensitive to it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

K = 1000


def best_of(repeat: int, call: Callable[[], Any]) -> tuple[float, Any]:
    """The shortest wall time of ``repeat`` calls, and the last call's result."""
    times = []
    result = None
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return min(times), result


def in_process(data: Path, repeat: int) -> dict[str, Any]:
    """bm25s alone and our retrieval phase on ``data``, in this process."""
    import bm25s
    import Stemmer

    from haystack_irmetrics.beir import corpus_documents, load_beir, load_beir_pipelines
    from haystack_irmetrics.beir.runner import _retrieve
    from haystack_irmetrics.integration.stores.bm25s_store import TOKEN_PATTERN

    ds = load_beir(data, "test")
    doc_ids = list(ds.corpus)
    texts = [f"{d.get('title') or ''} {d.get('text') or ''}".strip() for d in ds.corpus.values()]  # corpus_documents'
    tokenizer = bm25s.tokenization.Tokenizer(stemmer=Stemmer.Stemmer("porter"), stopwords="en", splitter=TOKEN_PATTERN)
    model = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    model.index(tokenizer.tokenize(texts, return_as="tuple", show_progress=False), show_progress=False)
    qids, queries = list(ds.queries), list(ds.queries.values())
    k = min(K, len(texts))

    def bm25s_search() -> list[tuple[Any, Any] | None]:
        # As BM25sDocumentStore searches: the token of empty texts ("") dropped, queries without a term skipped.
        ids = tokenizer.tokenize(queries, update_vocab=False, return_as="ids", show_progress=False)
        empty = tokenizer.word_to_id.get("")
        ids = [[t for t in terms if t != empty] for terms in ids]
        searched = [i for i, terms in enumerate(ids) if terms]
        threads = min(len(searched) // 64, os.cpu_count() or 1)
        found, scores = model.retrieve(
            [ids[i] for i in searched], k=k, show_progress=False, n_threads=threads if threads > 1 else 1
        )
        rows: list[tuple[Any, Any] | None] = [None] * len(queries)
        for row, i in enumerate(searched):
            rows[i] = (found[row], scores[row])
        return rows

    def bm25s_results() -> dict[str, dict[str, float]]:
        out = {}
        for qid, row in zip(qids, bm25s_search()):
            pairs = zip(row[0].tolist(), row[1].tolist()) if row is not None else ()
            out[qid] = {doc_ids[p]: s for p, s in pairs if s > 0}  # documents without a query term: not returned
        return out

    engine_s, _ = best_of(repeat, bm25s_search)
    engine_dict_s, reference = best_of(repeat, bm25s_results)

    pipes = load_beir_pipelines("bm25", progress=False)
    pipes.warm_up()
    pipes.index(corpus_documents(ds.corpus))
    pipes.finish_indexing()
    ours_s, (ours, _) = best_of(repeat, lambda: _retrieve(pipes, ds, {}, k, False, None))
    pipes.direct_run = False
    pipeline_run_s, (through_pipeline, _) = best_of(repeat, lambda: _retrieve(pipes, ds, {}, k, False, None))
    pipes.close()
    same = all(list(ours[q].items()) == list(reference[q].items()) for q in qids) and through_pipeline == ours
    return {
        "dataset": ds.name,
        "queries": len(qids),
        "documents": len(texts),
        "bm25s_s": engine_s,
        "bm25s_dict_s": engine_dict_s,
        "ours_s": ours_s,
        "pipeline_run_s": pipeline_run_s,
        "identical": same,
    }


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def fresh_run(python: str, data: Path, cache: Path, out: Path) -> dict[str, Any]:
    """``irmetrics beir DATA -o OUT`` in a new process: wall and CPU seconds, its summary and its files."""
    cmd = [python, "-m", "haystack_irmetrics.cli", "beir", str(data), "-o", str(out), "--format", "json",
           "--no-progress"]  # fmt: skip
    env = {**os.environ, "IRMETRICS_CACHE_DIR": str(cache)}
    cpu = children_cpu()
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    cpu = children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    summary = json.loads(proc.stdout)
    folder = out / summary["dataset"]
    files = {name: (folder / name).read_bytes() for name in ("run.trec", "metrics.json")}
    return {"wall_s": wall, "cpu_s": cpu, "retrieval_s": summary["timings_s"]["retrieval"], "files": files}


def has_torch(python: str) -> bool:
    code = "import importlib.util; print(importlib.util.find_spec('torch') is not None)"
    return subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip() == "True"


def fresh_processes(python: str, data: Path, repeat: int, tmp: Path) -> dict[str, Any]:
    """Best of ``repeat`` cold (empty cache) and warm (cached index) runs of one interpreter."""
    runs: dict[str, list[dict[str, Any]]] = {"cold": [], "warm": []}
    for i in range(repeat):
        cache = Path(tempfile.mkdtemp(dir=tmp, prefix="cache-"))
        for which in ("cold", "warm"):
            runs[which].append(fresh_run(python, data, cache, tmp / f"out-{len(os.listdir(tmp))}-{which}-{i}"))
    return {
        which: {key: min(r[key] for r in rs) for key in ("wall_s", "cpu_s", "retrieval_s")} | {"files": rs[0]["files"]}
        for which, rs in runs.items()
    } | {"all_files": [r["files"] for rs in runs.values() for r in rs]}


def report(measured: dict[str, Any], installs: dict[str, dict[str, Any]], repeat: int, load: tuple) -> str:
    n = measured["queries"]

    def overhead(seconds: float) -> str:
        return f"{1000 * (seconds - measured['bm25s_s']) / n:.2f}"

    files = [f for install in installs.values() for f in install["all_files"]]
    same_files = all(f == files[0] for f in files)
    lines = [
        f"{measured['dataset']}: {n} queries, {measured['documents']} documents, top {K}; {os.cpu_count()} cores; "
        f"best of {repeat}; load average {load[0]:.1f} before, {os.getloadavg()[0]:.1f} after. "
        "Every number from one run of benchmarks/everyday_path.py.",
        "",
        "| in one process | seconds | ms / query | × bm25s alone | overhead ms / query |",
        "|---|---:|---:|---:|---:|",
    ]
    rows = [
        ("bm25s alone (tokenize + score all queries)", measured["bm25s_s"]),
        ("bm25s alone + the {query: {doc: score}} dict", measured["bm25s_dict_s"]),
        ("ours: retrieval phase (components called directly)", measured["ours_s"]),
        ("ours: retrieval phase, every query through Pipeline.run", measured["pipeline_run_s"]),
    ]
    for label, seconds in rows:
        lines.append(
            f"| {label} | {seconds:.3f} | {1000 * seconds / n:.2f} | {seconds / measured['bm25s_s']:.1f} | "
            f"{overhead(seconds)} |"
        )
    lines += [
        "",
        f"Same documents, scores and order as bm25s alone: {'yes' if measured['identical'] else 'NO'}.",
        "",
        "| fresh `irmetrics beir` process | install | wall s | CPU s (user + sys) | retrieval phase s | overhead ms / query |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, install in installs.items():
        for which in ("cold", "warm"):
            r = install[which]
            lines.append(
                f"| {which} | {name} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['retrieval_s']:.3f} | "
                f"{overhead(r['retrieval_s'])} |"
            )
    lines += [
        "",
        "cold: empty `$IRMETRICS_CACHE_DIR` (the bm25s index is built and cached); warm: the cached index. "
        "The retrieval phase of a fresh run includes the checkpoint `-o` writes (every 100 queries).",
        f"Same run.trec and metrics.json bytes from every fresh run: {'yes' if same_files else 'NO'}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="a BEIR dataset folder (default: ../shared/data/scifact)")
    parser.add_argument("--repeat", type=int, help="repetitions of everything (default 5; --quick 1)")
    parser.add_argument("--python-bare", help="a second interpreter for the fresh processes (e.g. without torch)")
    parser.add_argument("--out", type=Path, help="the markdown table (default: benchmarks/everyday_path.md)")
    parser.add_argument("--quick", action="store_true", help="the shipped sample, once (a smoke run)")
    args = parser.parse_args()
    shared = Path(os.environ.get("IRMETRICS_SHARED_DATA", ROOT.parent / "shared" / "data"))
    data = args.data or (ROOT / "haystack_irmetrics" / "datasets" / "sample" if args.quick else shared / "scifact")
    repeat = args.repeat or (1 if args.quick else 5)
    tmp = Path(tempfile.mkdtemp(prefix="everyday_path_"))
    out = args.out or (tmp / "everyday_path.md" if args.quick else ROOT / "benchmarks" / "everyday_path.md")
    os.environ.setdefault("IRMETRICS_CACHE_DIR", str(tmp / "cache"))
    load = os.getloadavg()
    measured = in_process(data, repeat)
    pythons = {sys.executable: None, **({args.python_bare: None} if args.python_bare else {})}
    installs = {}
    for python in pythons:
        name = "with torch" if has_torch(python) else "without torch"
        if name in installs:
            name = f"{name} ({python})"
        installs[name] = fresh_processes(python, data, repeat, tmp)
    text = report(measured, installs, repeat, load)
    out.write_text(text, encoding="utf-8")
    print(text)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
