"""The everyday BEIR path (`irmetrics beir DATASET`, BM25) as a fresh process beside bm25s alone, in one run.

    python benchmarks/everyday_path.py [--data PATH] [--repeat N] [--before CHECKOUT] [--python-bare PY]
                                       [--out PATH] [--quick]

**Fresh processes** (the headline), interleaved, ``--repeat`` rounds (default 5), each round in this order:

- **bm25s alone**: ``python everyday_path.py --bm25s-alone DATA``, a process that imports bm25s and PyStemmer
  only, reads the dataset's files with ``json``, indexes the corpus and retrieves the top 1,000 of every test
  query, with our store's tokenizer (Lucene's ``\\w+`` tokens, its 33 English stop words, the Porter stemmer)
  and parameters (Lucene's BM25, k1 0.9, b 0.4) and the same bm25s threads; nothing written.
- **ours, cold**: ``python -m haystack_irmetrics.cli beir DATA -o OUT`` with an empty
  ``$IRMETRICS_CACHE_DIR`` (the bm25s index is built and cached), as a user runs it: load, index, retrieve,
  evaluate (BEIR's measures, Hole@k and its bounds), write ``run.trec``, ``metrics.json``, ``per_query.json``,
  ``summary.json``, ``metrics.md``, the leaderboard and the checkpoint every 100 queries.
- **ours, warm**: the same with that cache (the index loaded, not built).
- with ``--before CHECKOUT``: the same two from another checkout of the package (a ``git worktree`` of an
  earlier commit, its compiled scan built), for a before/after in the same run.

Each process's wall seconds and CPU seconds (user + sys, ``os.wait4``): the median, the min and max over the
rounds, and each round's ratio to that round's bm25s alone (the median and range of those ratios: the rounds
are interleaved so that other work on the machine weighs on both sides alike). Every fresh run of ours must
write the same ``run.trec``, ``metrics.json`` and ``per_query.json`` bytes (checked; with ``--before``, the
same bytes as the earlier checkout's). One more warm run under ``python -X importtime`` says what is imported,
grouped by top-level package.

**In one process**, best of ``--repeat``: bm25s alone (tokenize and score every query, the index built
beforehand), then with the ``{query: {document: score}}`` dict a bm25s user evaluates; ours, the retrieval
phase of ``run_beir`` (``runner._retrieve``): the default (ids and scores read from the store, no Document per
hit), with a Document per hit (the components called directly) and with every query through Haystack's
``Pipeline.run``. All three give the same documents and scores as bm25s alone (checked; which of several
documents tied at the 1,000th score make the cut is the engine's choice).

Writes a markdown report (``--out``, default ``benchmarks/everyday_path.md``; ``--quick``: the shipped sample,
one round, the report to a temporary file unless ``--out`` is given) and prints it. Ratios, no timed
assertions; the load average is printed with the tables.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

K = 1000
#: Our store's analysis and parameters (``BM25sDocumentStore``'s defaults), spelled out so that the bm25s-alone
#: process imports nothing of ours; ``in_process`` checks them against the store's.
TOKEN_PATTERN = r"(?u)\b\w+\b"
STEMMER, STOPWORDS, K1, B = "porter", "en", 0.9, 0.4
OUTPUTS = ("run.trec", "metrics.json", "per_query.json")


# --------------------------------------------------------------------------- bm25s alone, its own process


def read_dataset(data: Path, split: str = "test") -> tuple[list[str], list[str], list[str], list[str]]:
    """Corpus ids and texts (``title + " " + text``, stripped, as ``corpus_documents``), the split's query ids
    (in qrels order, as ``load_beir``) and their texts, read with ``json`` alone."""
    ids, texts = [], []
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                doc = json.loads(line)
                ids.append(doc["_id"])
                texts.append(f"{doc.get('title') or ''} {doc.get('text') or ''}".strip())
    judged: dict[str, None] = {}
    with open(data / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
        next(f)  # the header
        for line in f:
            if line.strip():
                judged.setdefault(line.split("\t", 1)[0], None)
    texts_of: dict[str, str] = {}
    with open(data / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                query = json.loads(line)
                texts_of[query["_id"]] = query["text"]
    return ids, texts, list(judged), [texts_of[q] for q in judged]


def bm25s_alone(data: Path, k: int, repeat: int = 0) -> Any:
    """Index ``data``'s corpus and retrieve the top ``k`` of every query with bm25s, as our store does.

    ``repeat`` 0: once, timed by the parent as a process; else also the search alone, best of ``repeat``
    (the index built once), returning the timings and the rows."""
    import bm25s
    import Stemmer

    ids, texts, qids, queries = read_dataset(data)
    tokenizer = bm25s.tokenization.Tokenizer(
        stemmer=Stemmer.Stemmer(STEMMER), stopwords=STOPWORDS, splitter=TOKEN_PATTERN
    )
    model = bm25s.BM25(method="lucene", k1=K1, b=B)
    model.index(tokenizer.tokenize(texts, return_as="tuple", show_progress=False), show_progress=False)
    k = min(k, len(texts))

    def search() -> list[tuple[Any, Any] | None]:
        # As BM25sDocumentStore searches: the token of empty texts ("") dropped, queries without a term skipped.
        terms = tokenizer.tokenize(queries, update_vocab=False, return_as="ids", show_progress=False)
        empty = tokenizer.word_to_id.get("")
        terms = [[t for t in row if t != empty] for row in terms]
        searched = [i for i, row in enumerate(terms) if row]
        threads = min(len(searched) // 64, os.cpu_count() or 1)
        found, scores = model.retrieve(
            [terms[i] for i in searched], k=k, show_progress=False, n_threads=threads if threads > 1 else 1
        )
        rows: list[tuple[Any, Any] | None] = [None] * len(queries)
        for row, i in enumerate(searched):
            rows[i] = (found[row], scores[row])
        return rows

    if not repeat:
        return search()

    def as_dicts() -> dict[str, dict[str, float]]:
        out = {}
        for qid, row in zip(qids, search()):
            pairs = zip(row[0].tolist(), row[1].tolist()) if row is not None else ()
            out[qid] = {ids[p]: s for p, s in pairs if s > 0}  # documents without a query term: not returned
        return out

    engine_s, _ = best_of(repeat, search)
    dicts_s, reference = best_of(repeat, as_dicts)
    return {"bm25s_s": engine_s, "bm25s_dict_s": dicts_s, "reference": reference, "documents": len(texts)}


# --------------------------------------------------------------------------- in one process


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


def same_ranking(ours: dict[str, float], reference: dict[str, float], k: int) -> bool:
    """The same documents with the same scores, best first; of documents tied at the k-th score, which make
    the cut is the engine's choice (a sort's), so only their number and score must agree."""
    scores = list(ours.values())
    if sorted(scores, reverse=True) != scores or sorted(reference.values(), reverse=True) != scores:
        return False
    cut = scores[-1] if len(scores) == k else None
    return {d: s for d, s in ours.items() if s != cut} == {d: s for d, s in reference.items() if s != cut}


def in_process(data: Path, repeat: int) -> dict[str, Any]:
    """bm25s alone and our retrieval phase on ``data``, in this process."""
    sys.path.insert(0, str(ROOT))
    from haystack_irmetrics.beir import corpus_documents, load_beir, load_beir_pipelines
    from haystack_irmetrics.beir.runner import _retrieve
    from haystack_irmetrics.integration.stores.bm25s_store import TOKEN_PATTERN as OURS
    from haystack_irmetrics.integration.stores.bm25s_store import BM25sDocumentStore

    store = BM25sDocumentStore()
    ours_parameters = (OURS, store.stemmer, store.stopwords, store.k1, store.b)
    if ours_parameters != (TOKEN_PATTERN, STEMMER, STOPWORDS, K1, B):
        raise SystemExit(f"our store's analysis and parameters changed: {ours_parameters}; update this benchmark")
    alone = bm25s_alone(data, K, repeat)
    ds = load_beir(data, "test")
    k = min(K, alone["documents"])
    pipes = load_beir_pipelines("bm25", progress=False)
    pipes.warm_up()
    pipes.index(corpus_documents(ds.corpus))
    pipes.finish_indexing()

    def retrieve() -> dict[str, dict[str, float]]:
        return _retrieve(pipes, ds, {}, k, False, None)[0]

    ours_s, ours = best_of(repeat, retrieve)
    ids_path = pipes.retrieve_ids
    pipes.retrieve_ids = lambda query, top_k: None  # type: ignore[method-assign] # a Document per hit
    documents_s, with_documents = best_of(repeat, retrieve)
    pipes.runner.direct_run = False
    pipeline_run_s, through_pipeline = best_of(repeat, retrieve)
    pipes.retrieve_ids = ids_path  # type: ignore[method-assign]
    pipes.close()
    reference = alone["reference"]
    same = all(
        same_ranking(run[q], reference[q], k) for run in (ours, with_documents, through_pipeline) for q in ds.queries
    )
    return {
        "dataset": ds.name,
        "queries": len(ds.queries),
        "documents": alone["documents"],
        "bm25s_s": alone["bm25s_s"],
        "bm25s_dict_s": alone["bm25s_dict_s"],
        "ours_s": ours_s,
        "documents_s": documents_s,
        "pipeline_run_s": pipeline_run_s,
        "identical": same,
    }


# --------------------------------------------------------------------------- fresh processes


def timed_process(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Run ``cmd``: its wall seconds, its CPU seconds (user + sys) and its stdout; stops the benchmark on failure."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read().decode(errors='replace')[-3000:]}")
        return wall, usage.ru_utime + usage.ru_stime, out.read().decode()


def ours_command(python: str, data: Path, out: Path, importtime: bool = False) -> list[str]:
    return [python, *(["-X", "importtime"] if importtime else []), "-m", "haystack_irmetrics.cli", "beir", str(data),
            "-o", str(out), "--format", "json", "--no-progress"]  # fmt: skip


def has_torch(python: str) -> bool:
    code = "import importlib.util; print(importlib.util.find_spec('torch') is not None)"
    return subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip() == "True"


def fresh_rounds(
    data: Path, repeat: int, tmp: Path, checkouts: dict[str, tuple[str, Path]]
) -> tuple[dict[str, list[tuple[float, float]]], dict[str, list[dict[str, bytes]]]]:
    """``repeat`` interleaved rounds: bm25s alone, then each checkout's cold and warm run. Returns each
    variant's ``(wall, cpu)`` per round and each checkout's output files per run."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # every process alike: the bytecode compiled beforehand
    times: dict[str, list[tuple[float, float]]] = {"bm25s alone": []}
    files: dict[str, list[dict[str, bytes]]] = {name: [] for name in checkouts}
    alone = [sys.executable, str(Path(__file__).resolve()), "--bm25s-alone", str(data)]
    for _ in range(repeat):
        wall, cpu, _ = timed_process(alone, ROOT, env)
        times["bm25s alone"].append((wall, cpu))
        for name, (python, checkout) in checkouts.items():
            cache = Path(tempfile.mkdtemp(dir=tmp, prefix="cache-"))
            for which in ("cold", "warm"):
                out = tmp / f"out-{len(os.listdir(tmp))}"
                wall, cpu, stdout = timed_process(
                    ours_command(python, data, out), checkout, {**env, "IRMETRICS_CACHE_DIR": str(cache)}
                )
                times.setdefault(f"{name}, {which}", []).append((wall, cpu))
                folder = out / json.loads(stdout)["dataset"]
                files[name].append({f: (folder / f).read_bytes() for f in OUTPUTS})
                shutil.rmtree(out)
            shutil.rmtree(cache)
    return times, files


def import_groups(python: str, checkout: Path, data: Path, tmp: Path) -> dict[str, float]:
    """One warm run under ``-X importtime``: milliseconds of imports by top-level package (cumulative times of
    the imports made at the top of a chain), and ``total``."""
    cache, out = tmp / "importtime-cache", tmp / "importtime-out"
    env = {**os.environ, "IRMETRICS_CACHE_DIR": str(cache)}
    for i in range(2):  # the first builds the cached index
        proc = subprocess.run(ours_command(python, data, out / str(i), importtime=i == 1), cwd=checkout, env=env,
                              capture_output=True, text=True, check=True)  # fmt: skip
    groups: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        if name[1:].startswith(" "):  # indented: imported by another module, counted in its importer's time
            continue
        top = name.strip().split(".")[0]
        groups[top] = groups.get(top, 0.0) + int(cumulative) / 1000
    groups["total"] = sum(groups.values())
    return groups


# --------------------------------------------------------------------------- report


def spread(values: list[float], digits: int = 2) -> str:
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}–{max(values):.{digits}f}]"


def report(
    measured: dict[str, Any],
    times: dict[str, list[tuple[float, float]]],
    files: dict[str, list[dict[str, bytes]]],
    imports: dict[str, float],
    repeat: int,
    load: tuple[float, ...],
) -> str:
    n = measured["queries"]
    alone = times["bm25s alone"]
    lines = [
        f"{measured['dataset']}: {n} queries, {measured['documents']} documents, top {K}; {os.cpu_count()} cores; "
        f"{repeat} rounds; load average {load[0]:.1f} before, {os.getloadavg()[0]:.1f} after. "
        "Every number from one run of benchmarks/everyday_path.py.",
        "",
        "Fresh processes, interleaved (median [min–max] over the rounds; × bm25s alone: each round's ratio to that "
        "round's bm25s alone):",
        "",
        "| process | wall s | CPU s (user + sys) | × bm25s alone, wall | × bm25s alone, CPU |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, rows in times.items():
        walls, cpus = [w for w, _ in rows], [c for _, c in rows]
        wall_ratio = [w / a for (w, _), (a, _) in zip(rows, alone)]
        cpu_ratio = [c / a for (_, c), (_, a) in zip(rows, alone)]
        lines.append(f"| {name} | {spread(walls)} | {spread(cpus)} | {spread(wall_ratio)} | {spread(cpu_ratio)} |")
    runs = [run for name in files for run in files[name]]
    lines += [
        "",
        "cold: an empty `$IRMETRICS_CACHE_DIR` (the bm25s index built and cached); warm: the cached index. "
        "bm25s alone builds its index every time and writes nothing.",
        f"Same {', '.join(OUTPUTS)} bytes from every fresh run{' of every checkout' if len(files) > 1 else ''}: "
        f"{'yes' if all(run == runs[0] for run in runs) else 'NO'}.",
        "",
        "Imports of a warm run (`python -X importtime`), ms by top-level package: "
        + ", ".join(f"{name} {ms:.0f}" for name, ms in sorted(imports.items(), key=lambda kv: -kv[1]) if ms >= 5)
        + ".",
        "",
        "In one process (best of the rounds):",
        "",
        "| in one process | seconds | ms / query | × bm25s alone | overhead ms / query |",
        "|---|---:|---:|---:|---:|",
    ]
    rows = [
        ("bm25s alone (tokenize + score all queries)", measured["bm25s_s"]),
        ("bm25s alone + the {query: {doc: score}} dict", measured["bm25s_dict_s"]),
        ("ours: retrieval phase (ids and scores from the store)", measured["ours_s"]),
        ("ours: retrieval phase, a Document per hit (components called directly)", measured["documents_s"]),
        ("ours: retrieval phase, every query through Pipeline.run", measured["pipeline_run_s"]),
    ]
    for label, seconds in rows:
        lines.append(
            f"| {label} | {seconds:.3f} | {1000 * seconds / n:.2f} | {seconds / measured['bm25s_s']:.1f} | "
            f"{1000 * (seconds - measured['bm25s_s']) / n:.2f} |"
        )
    lines += ["", f"Same documents and scores as bm25s alone: {'yes' if measured['identical'] else 'NO'}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="a BEIR dataset folder (default: $IRMETRICS_SHARED_DATA/scifact)")
    parser.add_argument("--repeat", type=int, help="rounds (default 5; --quick 1)")
    parser.add_argument("--before", type=Path, help="another checkout of the package, timed beside this one")
    parser.add_argument("--python-bare", help="a second interpreter for our fresh processes (e.g. without torch)")
    parser.add_argument("--out", type=Path, help="the markdown report (default: benchmarks/everyday_path.md)")
    parser.add_argument("--quick", action="store_true", help="the shipped sample, once (a smoke run)")
    parser.add_argument("--bm25s-alone", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bm25s_alone:
        bm25s_alone(args.bm25s_alone, K)
        return
    shared = Path(os.environ.get("IRMETRICS_SHARED_DATA", ROOT.parent / "shared" / "data"))
    data = args.data or (ROOT / "haystack_irmetrics" / "datasets" / "sample" if args.quick else shared / "scifact")
    repeat = args.repeat or (1 if args.quick else 5)
    tmp = Path(tempfile.mkdtemp(prefix="everyday_path_"))
    out = args.out or (tmp / "everyday_path.md" if args.quick else ROOT / "benchmarks" / "everyday_path.md")
    os.environ.setdefault("IRMETRICS_CACHE_DIR", str(tmp / "cache"))
    import compileall

    checkouts = {"ours": (sys.executable, ROOT)}
    if args.python_bare:
        checkouts[f"ours ({'with' if has_torch(args.python_bare) else 'without'} torch)"] = (args.python_bare, ROOT)
    if args.before:
        checkouts["before"] = (sys.executable, args.before.resolve())
    for _, checkout in checkouts.values():  # as pip leaves an installed package: compiled once, not per process
        compileall.compile_dir(str(checkout / "haystack_irmetrics"), quiet=2)
    load = os.getloadavg()
    measured = in_process(data, repeat)
    times, files = fresh_rounds(data, repeat, tmp, checkouts)
    imports = import_groups(sys.executable, ROOT, data, tmp)
    text = report(measured, times, files, imports, repeat, load)
    out.write_text(text, encoding="utf-8")
    print(text)
    print(f"written to {out}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
