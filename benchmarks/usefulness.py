"""The cost of usefulness labels per labelled pair, in our own time (CPU of this process; a server's time is never
in it), beside eRAG (the ``erag`` package, the peer) on the same generator and answers.

Rows:

1. **The component, an instant generator**: ``UsefulnessEvaluator.run`` over questions x 10 documents with a chat
   generator that answers at once in this process (no HTTP, no model): what labelling, scoring and the judges'
   machinery cost a pair. Beside it, ``erag.eval`` with the same generator (one call per document, as eRAG
   calls it) and the same answer metric: the ratio is ours over eRAG's.
2. **The component over HTTP**: the same with Haystack's ``OpenAIChatGenerator`` reaching the stand-in server
   (``python -m haystack_irmetrics.usefulness.server``) in its own process: this process's CPU, so openai's and
   httpx's client work is in it and the server's is not.
3. **The command, an instant generator**: ``irmetrics usefulness``'s job (``run_usefulness``: the files read, the
   runs pooled, every text checked, each answer committed to the SQLite cache, the labels, the measures, the
   folder written) over two runs' top 10; and its re-run from the cache.
4. **The command over HTTP**: ``irmetrics usefulness --llm`` (in this process) against the stand-in server.

    python benchmarks/usefulness.py [--quick] [--out benchmarks/usefulness.md]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from haystack import Document, component  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402

from haystack_irmetrics.components import UsefulnessEvaluator  # noqa: E402
from haystack_irmetrics.usefulness.asker import AnswerAsker  # noqa: E402
from haystack_irmetrics.usefulness.metrics import answer_score  # noqa: E402

WORDS = ["bridge", "tower", "canal", "market", "garden", "castle", "museum", "dam", "library", "festival"]


@component
class Instant:
    """A chat generator that answers at once: the passage's last word."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage]) -> dict:
        passage = messages[-1].text.rsplit("Passage: ", 1)[-1].split("\n\nAnswer:")[0]
        return {"replies": [ChatMessage.from_assistant(passage.rstrip(".").split()[-1])]}


def _data(n_questions: int, depth: int, seed: int = 7) -> tuple[dict, dict, dict, dict]:
    """Questions, reference answers, passages and two runs' top ``depth``: a passage ends with its answer."""
    rng = random.Random(seed)
    queries, answers, corpus, runs = {}, {}, {}, {"a": {}, "b": {}}
    for q in range(n_questions):
        qid = f"q{q}"
        queries[qid] = f"In what year was the {WORDS[q % 10]} number {q} opened?"
        answers[qid] = [str(1800 + q % 200)]
        docs = []
        for j in range(depth + depth // 2):
            doc = f"d{q}_{j}"
            year = answers[qid][0] if j % 3 == 0 else str(1600 + j)
            corpus[doc] = {"title": f"{WORDS[q % 10]} {q}", "text": f"It was opened in {year}."}
            docs.append(doc)
        for name, run in runs.items():
            order = docs[:] if name == "a" else rng.sample(docs, len(docs))
            run[qid] = {d: float(len(order) - i) for i, d in enumerate(order[:depth])}
    return queries, answers, corpus, runs


def _cpu(fn) -> tuple[float, object]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def component_rows(n_questions: int, depth: int, url: str) -> dict:
    """Rows 1 and 2: the component with an instant generator and over HTTP; eRAG on the instant generator."""
    queries, answers, corpus, runs = _data(n_questions, depth)
    qids = list(queries)
    docs = [[Document(content=corpus[d]["text"]) for d in runs["a"][q]] for q in qids]
    args = ([queries[q] for q in qids], docs, [answers[q] for q in qids])
    pairs = n_questions * depth
    out = {"pairs": pairs}
    instant = UsefulnessEvaluator(Instant(), measures=["P@10", "Success@10"], k=depth)
    instant.run(*[a[:5] for a in args])  # warm: the judges' machinery, the core, tqdm imported
    out["instant_ms"] = min(_cpu(lambda: instant.run(*args))[0] for _ in range(3)) / pairs * 1000
    out["erag_ms"], out["erag_same"] = _erag(instant, args, depth, pairs)
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    generator = OpenAIChatGenerator(api_key=Secret.from_token("x"), model="bench", api_base_url=url, max_retries=0)
    http = UsefulnessEvaluator(generator, measures=["P@10", "Success@10"], k=depth)
    http.run(*[a[:5] for a in args])  # the client's connections made, its modules imported
    seconds, result = _cpu(lambda: http.run(*args))
    out["http_ms"] = seconds / pairs * 1000
    out["http_labels"] = sum(map(sum, result["labels"]))
    return out


def _erag(evaluator: UsefulnessEvaluator, args: tuple, depth: int, pairs: int) -> tuple[float, bool]:
    """eRAG's time a pair on the same generator (called as eRAG calls it, one document at a time) and answers,
    and whether its P and success equal ours."""
    import erag

    questions, docs, refs = args
    generator = Instant()

    def generate(batch: dict) -> dict:
        return {
            q: generator.run([ChatMessage.from_user(evaluator.asker.message(q, texts[0]))])["replies"][0].text
            for q, texts in batch.items()
        }

    def metric(generated: dict, expected: dict) -> dict:
        return {q: answer_score("exact_match", generated[q], expected[q]) for q in generated}

    retrieval = {q: [d.content for d in ds] for q, ds in zip(questions, docs)}
    expected = dict(zip(questions, refs))
    measures = {f"P_{depth}", f"success_{depth}"}
    runs = [_cpu(lambda: erag.eval(retrieval, expected, generate, metric, measures)) for _ in range(3)]
    seconds, result = min(runs, key=lambda r: r[0])
    ours = evaluator.run(*args)["scores"]
    same = abs(ours[f"P@{depth}"] - result["aggregated"][f"P_{depth}"]) < 1e-12
    same = same and abs(ours[f"Success@{depth}"] - result["aggregated"][f"success_{depth}"]) < 1e-12
    return seconds / pairs * 1000, same


def _files(folder: Path, n_questions: int, depth: int) -> dict:
    from haystack_irmetrics.io import write_trec_run
    from haystack_irmetrics.io.answers import write_answers
    from haystack_irmetrics.io.tables import json_text

    queries, answers, corpus, runs = _data(n_questions, depth)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queries.jsonl").write_text("".join(json_text({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    (folder / "corpus.jsonl").write_text("".join(json_text({"_id": d, **c}) + "\n" for d, c in corpus.items()))
    write_answers(answers, folder / "answers.jsonl")
    return {name: str(write_trec_run(run, folder / f"{name}.trec", name)) for name, run in runs.items()}


def command_rows(folder: Path, n_questions: int, depth: int, url: str) -> dict:
    """Rows 3 and 4: the command's job with an instant generator (and its cached re-run), and the command over
    HTTP."""
    from haystack_irmetrics.cli import main
    from haystack_irmetrics.usefulness.job import UsefulnessJob, run_usefulness
    from haystack_irmetrics.usefulness.settings import UsefulnessSettings

    data = folder / "data"
    runs = _files(data, n_questions, depth)
    os.environ["IRMETRICS_CACHE_DIR"] = str(folder / "cache-instant")
    settings = UsefulnessSettings(depth=depth)
    job = UsefulnessJob(list(runs.values()), data, data, data / "answers.jsonl", folder / "instant", settings)
    seconds, result = _cpu(lambda: run_usefulness(job, AnswerAsker(Instant())))
    pairs = result.summary["pairs"]
    again = _cpu(lambda: run_usefulness(job, AnswerAsker(Instant())))[0]
    os.environ["IRMETRICS_CACHE_DIR"] = str(folder / "cache-http")
    argv = ["usefulness", *runs.values(), "--queries", str(data), "--corpus", str(data), "--answers"]
    argv += [str(data / "answers.jsonl"), "--llm", "bench", "--api-base-url", url, "--depth", str(depth)]
    argv += ["-o", str(folder / "http"), "--no-progress"]
    http = _cpu(lambda: main(argv))[0]
    summary = json.loads((folder / "http" / "summary.json").read_text())
    return {
        "pairs": pairs,
        "instant_ms": seconds / pairs * 1000,
        "cached_ms": again / pairs * 1000,
        "http_ms": http / pairs * 1000,
        "http_requests": summary["requests"],
    }


def _server(data: Path):
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "haystack_irmetrics.usefulness.server",
            "--queries",
            str(data),
            "--answers",
            str(data / "answers.jsonl"),
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    return server, server.stdout.readline().split(" at ")[-1].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of each workload")
    parser.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    args = parser.parse_args()
    n = 50 if args.quick else 500
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _files(folder / "data", n, 10)
        server, url = _server(folder / "data")
        try:
            c = component_rows(n, 10, url)
            m = command_rows(folder, n, 10, url)
        finally:
            server.terminate()
            server.wait()
    print(_table(c, m))
    if args.out:
        args.out.write_text(_table(c, m))


def _table(c: dict, m: dict) -> str:
    rows = [
        "| workload | ours, ms of CPU a labelled pair | eRAG, same generator | ours / eRAG |",
        "|---|---:|---:|---:|",
        f"| component, instant generator, {c['pairs']:,} pairs | {c['instant_ms']:.3f} | {c['erag_ms']:.3f} | "
        f"{c['instant_ms'] / c['erag_ms']:.2f} |",
        f"| component, OpenAIChatGenerator over HTTP, {c['pairs']:,} pairs | {c['http_ms']:.3f} | | |",
        f"| command's job, instant generator, {m['pairs']:,} pairs (cache commits, files) | {m['instant_ms']:.3f} | | |",
        f"| command's job, its re-run from the cache | {m['cached_ms']:.3f} | | |",
        f"| command over HTTP (`--llm`), {m['pairs']:,} pairs, {m['http_requests']:,} requests | {m['http_ms']:.3f} | | |",
    ]
    header = [
        "# The cost of usefulness labels",
        "",
        "`python benchmarks/usefulness.py`: CPU time of this process per labelled pair (`time.process_time`, every",
        "thread), the stand-in server in its own process, so its time is never counted. "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} when it finished.",
        f"eRAG's P and success equal ours on the component's workload: {'yes' if c['erag_same'] else 'NO'}.",
        "",
    ]
    return "\n".join(header + rows) + "\n"


if __name__ == "__main__":
    main()
