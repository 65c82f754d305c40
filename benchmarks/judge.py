"""The judge's speed (issue 32, Speed): ``irmetrics judge``'s machinery against a local OpenAI-compatible server.

Three rows, each beside its bound:

1. **Throughput**: 10,000 pairs through Haystack's ``OpenAIChatGenerator`` over HTTP to the test server
   (tests/judge_server.py, in its own process) answering each request in 50 ms, ``--concurrency 16``: the wall
   time against the ideal ``10,000 x 50 ms / 16`` (bound: 1.2 x ideal).
2. **Our overhead per pair**: the same loop (prompt, parsing, cache commit, retries bookkeeping, the
   ``judgments.jsonl`` line of ``judge_runs``) with a chat generator that answers at once in this process, so
   neither HTTP nor a model is timed (bound: 1 ms a pair).
3. **A cached re-run**: ``judge_runs`` end to end (pooling the runs' top 10, the texts, the cache look-up, the
   output folder) over 100,000 pairs already in the cache (bound: 5 s).

    python benchmarks/judge.py [--quick] [--out benchmarks/judge.md]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from haystack import component  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402

from haystack_irmetrics.judges import judge_runs  # noqa: E402
from haystack_irmetrics.judges.batch import judge_texts  # noqa: E402
from haystack_irmetrics.judges.cache import JudgmentCache  # noqa: E402
from haystack_irmetrics.judges.judge import ChatJudge  # noqa: E402


@component
class Instant:
    """A chat generator that answers "2" at once (no HTTP, no model)."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], generation_kwargs: dict | None = None) -> dict:
        return {"replies": [ChatMessage.from_assistant("2")]}


def _texts(n: int) -> list[tuple[str, str]]:
    return [(f"query {i // 10} about things", f"T{i} passage {i} on the matter of things") for i in range(n)]


def throughput(n: int, delay: float, concurrency: int, folder: Path) -> dict:
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    texts = _texts(n)
    labels = folder / "labels.json"
    labels.write_text(json.dumps([[q, d, 2] for q, d in texts]))
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "judge_server.py"), "0", str(labels), str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        generator = OpenAIChatGenerator(
            api_key=Secret.from_token("x"), model="bench", api_base_url=url, timeout=30, max_retries=0
        )
        judge = ChatJudge(generator)
        judge.warm_up()
        started = time.perf_counter()
        counts = judge_texts(
            judge, texts, cache=JudgmentCache(enabled=False), on_verdict=lambda *a: None, concurrency=concurrency
        )
        wall = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait()
    ideal = n * delay / concurrency
    return {"pairs": n, "requests": counts.requests, "wall": wall, "ideal": ideal, "ratio": wall / ideal}


def overhead(n: int, folder: Path) -> dict:
    texts = _texts(n)
    judge = ChatJudge(Instant())
    cache = JudgmentCache(folder / "overhead.sqlite")
    with open(folder / "judgments.jsonl", "w") as log:
        from haystack_irmetrics.judges.batch import jsonl_line

        fingerprint = judge.fingerprint()

        def on_verdict(i, verdict, cached):
            log.write(jsonl_line("q", "d", verdict, fingerprint))
            log.flush()

        started = time.perf_counter()
        judge_texts(judge, texts, cache=cache, on_verdict=on_verdict, concurrency=1)
        wall = time.perf_counter() - started
    cache.close()
    return {"pairs": n, "wall": wall, "per_pair_ms": wall / n * 1000}


def cached_rerun(n_queries: int, depth: int, folder: Path) -> dict:
    runs = {"bm25": {}, "dense": {}}
    corpus, queries = {}, {}
    for q in range(n_queries):
        queries[f"q{q}"] = f"query {q} about things"
        for r, name in enumerate(runs):
            runs[name][f"q{q}"] = {f"d{q}_{r}_{k}": float(depth - k) for k in range(depth // 2)}
    for run in runs.values():
        for docs in run.values():
            for d in docs:
                corpus[d] = {"title": d, "text": f"passage {d} on the matter of things"}
    qrels = {f"q{q}": {f"judged{q}": 1} for q in range(n_queries)}  # judged, never retrieved: 100,000 holes
    judge = ChatJudge(Instant())
    cache_file = folder / "rerun.sqlite"
    first = time.perf_counter()
    result = judge_runs(
        judge, runs, qrels, queries, corpus, folder / "out", depth=depth, cache=JudgmentCache(cache_file)
    )
    first = time.perf_counter() - first
    started = time.perf_counter()
    again = judge_runs(
        judge, runs, qrels, queries, corpus, folder / "out", depth=depth, cache=JudgmentCache(cache_file)
    )
    wall = time.perf_counter() - started
    assert again.summary["requests"] == 0 and again.summary["cache_hits"] == result.summary["pairs"]
    return {"pairs": result.summary["pairs"], "first": first, "wall": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of each workload")
    parser.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t = throughput(10_000 // scale, 0.05, 16, folder)
        o = overhead(20_000 // scale, folder)
        c = cached_rerun(10_000 // scale, 10, folder)
    rows = [
        "| workload | measured | bound | ratio to bound |",
        "|---|---|---|---|",
        f"| {t['pairs']:,} pairs, server 50 ms, concurrency 16 | {t['wall']:.2f} s ({t['requests']:,} requests) | "
        f"1.2 x {t['ideal']:.2f} s = {1.2 * t['ideal']:.2f} s | {t['wall'] / (1.2 * t['ideal']):.2f} |",
        f"| our overhead, {o['pairs']:,} pairs, instant generator | {o['per_pair_ms']:.3f} ms a pair | 1 ms | "
        f"{o['per_pair_ms']:.2f} |",
        f"| cached re-run, {c['pairs']:,} pairs (first run {c['first']:.1f} s) | {c['wall']:.2f} s | 5 s | "
        f"{c['wall'] / 5:.2f} |",
    ]
    header = [
        "# The judge's speed",
        "",
        "`python benchmarks/judge.py` (issue 32's Speed targets; each row beside its bound, a ratio under 1 meets it).",
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} when it finished; the server is",
        "tests/judge_server.py in its own process (`http.server`, one thread per connection), the client Haystack's",
        "`OpenAIChatGenerator` (openai + httpx), one thread per request in flight.",
        "",
    ]
    text = "\n".join(header + rows) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
