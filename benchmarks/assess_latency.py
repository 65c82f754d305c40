"""The judging page's time from a key to the next pair drawn, with 0, 500 and 5,000 labels already in the folder,
the history panel closed and open (``irmetrics assess`` in a subprocess, Debian's chromium driven by Playwright,
as tests/test_assess_workday_browser.py does), and the server's own time per key (the session called directly).

    python benchmarks/assess_latency.py                 # 0, 500 and 5,000 labels; ~2 min on 2 cores
    python benchmarks/assess_latency.py --labels 0,500 --keys 30

Writes ``benchmarks/assess_latency.json`` (``--out``) and prints one line per folder size and panel: median and
p95 in ms. Run on a quiet machine: wall times include whatever else uses the cores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.assess_fixtures import CORPUS, QUERIES, write_dataset, write_pairs  # noqa: E402
from tests.test_assess_workday_browser import PROBE, keyed  # noqa: E402 - the tests' own probe and wait

#: Pairs per query (depth order: the first pair of every query, then the second ...).
DEPTH = 20


def dataset(folder: Path, labels: int, keys: int) -> tuple[Path, list[tuple[str, str]]]:
    """A BEIR folder with enough pairs for ``labels`` saved labels and ``2 * keys`` more (at least 600)."""
    data = write_dataset(folder)
    n_queries = max(600, labels + 2 * keys + 10) // DEPTH + 1
    queries = {f"t{i:03d}": f"{QUERIES['q1']} {i}" for i in range(n_queries)}
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    pairs = [(q, f"p{(i * DEPTH + j):05d}") for j in range(DEPTH) for i, q in enumerate(queries)]
    docs = {d: CORPUS[f"d{k % 5 + 1}"] for k, (_, d) in enumerate(pairs)}
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, **doc}) + "\n" for d, doc in docs.items()))
    write_pairs(data / "pairs.tsv", pairs)
    return data, pairs


def saved(out: Path, pairs: list[tuple[str, str]], labels: int) -> None:
    """``labels`` labels of ann's in the folder's store, as a day of judging before left them."""
    import sqlite3

    db = sqlite3.connect(out / "assess.sqlite")
    db.executemany(
        "INSERT INTO events (assessor, query_id, doc_id, kind, label, time, seconds) VALUES (?, ?, ?, 'label', ?, ?, ?)",
        [("ann", q, d, i % 4, "2026-01-01T00:00:00.000Z", 20.0) for i, (q, d) in enumerate(pairs[:labels])],
    )
    db.commit()
    db.close()


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "max_ms": round(ordered[-1], 2),
    }


def press(w, key: str, wait: str) -> None:
    """A key on the page, then its answer awaited (``wait``: ``xpath``, as the latency test does; ``css``, as the
    other tests' ``Watched.press``, whose every poll walks the whole DOM: with a history of thousands of rows that
    costs more than the page's own work)."""
    if wait == "css":
        w.press(key)
    else:
        keyed(w, key)


def browser_latency(chromium_browser, labels: int, keys: int, wait: str = "xpath") -> dict[str, dict[str, float]]:
    """The page's key-to-pair times, ``keys`` keys with the history closed, then ``keys`` with it open."""
    import signal

    from tests.assess_fixtures import Server
    from tests.test_assess_browser import Watched

    tmp = Path(tempfile.mkdtemp(prefix="assess-latency-"))
    data, pairs = dataset(tmp / "data", labels, keys)
    out = tmp / "judged"
    server = Server(data, "-o", str(out), "--assessor", "ann", "--order", "file")
    server.stop(signal.SIGTERM)
    saved(out, pairs, labels)
    server = Server(data, "-o", str(out), "--assessor", "ann")
    w = Watched(chromium_browser)
    figures = {}
    try:
        w.page.goto(server.url)
        w.page.wait_for_selector("body[data-ready=true]")
        w.page.evaluate(PROBE)
        for i in range(keys):
            press(w, str(i % 4), wait)
        figures["closed"] = summary(w.page.evaluate("window.__latency.splice(0)"))
        w.press("h")
        w.page.evaluate("window.__latency.splice(0)")
        for i in range(keys):
            press(w, str(i % 4), wait)
        figures["open"] = summary(w.page.evaluate("window.__latency.splice(0)"))
        shown = w.page.eval_on_selector_all("#history-list button", "b => b.length")
        assert shown == labels + 2 * keys, (shown, labels, keys)
        assert w.errors == [], w.errors
    finally:
        server.stop(signal.SIGTERM)
        w.context.close()
    return figures


def server_time(labels: int, keys: int) -> dict[str, dict[str, float]]:
    """The session's own time per label (the store and the state sent back), history not asked and asked."""
    from haystack_irmetrics.assess.session import JudgingSession, PageOptions
    from haystack_irmetrics.assess.store import AssessStore

    tmp = Path(tempfile.mkdtemp(prefix="assess-server-"))
    _, pairs = dataset(tmp / "data", labels, keys)
    store = AssessStore.create(tmp / "judged", max_grade=3)
    store.add_pairs([(q, d, 1.0) for q, d in pairs])
    saved(tmp / "judged", pairs, labels)
    texts = {d: CORPUS[f"d{k % 5 + 1}"] for k, (_, d) in enumerate(pairs)}
    queries = {q: QUERIES["q1"] for q, _ in pairs}
    scale = {0: "no", 1: "some", 2: "much", 3: "all"}
    figures = {}
    with store:
        session = JudgingSession(store, queries, texts, "ann", scale, options=PageOptions(order="file"))
        for name, history in (("closed", False), ("open", True)):
            # the page holds the version of the history it was sent last (code before versions: the whole list)
            held = session.state(history=history).get("history_version", history) if history else False
            times = []
            for i in range(keys):
                pair = session.state()["pair"]
                started = time.perf_counter()
                answer = session.label(pair["query_id"], pair["doc_id"], i % 4, history=held)
                times.append((time.perf_counter() - started) * 1000)
                held = answer.get("history_version", held) if history else False
            figures[name] = summary(times)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", default="0,500,5000", help="labels saved before, comma-separated")
    parser.add_argument("--keys", type=int, default=50, help="keys pressed with the history closed, then open")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("assess_latency.json"))
    parser.add_argument("--no-browser", action="store_true", help="the server's time only")
    parser.add_argument(
        "--wait", choices=("xpath", "css"), default="xpath", help="how the answer is awaited (css: as the tests do)"
    )
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.labels.split(",")]
    results: dict[str, object] = {"keys": args.keys, "wait": args.wait, "server": {}, "page": {}}
    for n in sizes:
        results["server"][str(n)] = server_time(n, args.keys)  # type: ignore[index]
        for panel, f in results["server"][str(n)].items():  # type: ignore[index]
            print(f"server {n:>5} labels, history {panel:<6}: median {f['median_ms']:.2f} ms, p95 {f['p95_ms']:.2f} ms")
    if not args.no_browser:
        from playwright.sync_api import sync_playwright

        from haystack_irmetrics.report.browser import CHROMIUM_FLAGS, chromium

        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=chromium(), args=list(CHROMIUM_FLAGS))
            try:
                for n in sizes:
                    results["page"][str(n)] = browser_latency(b, n, args.keys, args.wait)  # type: ignore[index]
                    for panel, f in results["page"][str(n)].items():  # type: ignore[index]
                        print(
                            f"page   {n:>5} labels, history {panel:<6}: median {f['median_ms']:.1f} ms, "
                            f"p95 {f['p95_ms']:.1f} ms"
                        )
            finally:
                b.close()
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
