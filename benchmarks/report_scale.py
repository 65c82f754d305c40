"""The report at scale: two runs over 20,000 queries (``irmetrics report``'s size target).

Generates seeded TREC files (BEIR-like: 20,000 queries, 1-4 graded judgments each, 100 retrieved
documents per query and run, scores rounded so ties occur), writes the report and measures the time to
build it, the HTML file's size, and in Chromium (Debian's ``chromium`` through Playwright) the time until
the page is ready, and to sort the per-query table and open a drill-down. A benchmark, not a test:

    python benchmarks/report_scale.py [--queries 20000] [--depth 100] [--runs 2] [--out DIR]

The issue's bounds: at most 30 MB, loaded in Chromium within 15 s.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import numpy as np


def generate(folder: Path, n_queries: int, depth: int, n_runs: int, seed: int = 0) -> tuple[Path, list[Path]]:
    """Write ``qrels.txt`` and ``run{i}.trec``; run i finds each relevant document with probability 0.4 + 0.2 i."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    qids = [f"q{i}" for i in range(n_queries)]
    judged = {q: rng.choice(5_000_000, size=rng.integers(1, 5), replace=False) for q in qids}
    labels = {q: rng.integers(0, 3, size=len(judged[q])) for q in qids}
    qrels = folder / "qrels.txt"
    with open(qrels, "w") as f:
        for q in qids:
            f.writelines(f"{q} 0 D{d} {g}\n" for d, g in zip(judged[q].tolist(), labels[q].tolist()))
    runs = []
    for r in range(n_runs):
        path = folder / f"run{r}.trec"
        with open(path, "w") as f:
            for q in qids:
                docs = rng.choice(5_000_000, size=depth, replace=False)
                found = judged[q][rng.random(len(judged[q])) < 0.4 + 0.2 * r]
                docs[rng.choice(depth, size=len(found), replace=False)] = found
                docs = list(dict.fromkeys(docs.tolist()))
                scores = np.round(np.sort(rng.random(len(docs)))[::-1] * 20, 2)
                f.writelines(f"{q} Q0 D{d} {i + 1} {s} run{r}\n" for i, (d, s) in enumerate(zip(docs, scores.tolist())))
        runs.append(path)
    return qrels, runs


def browser_times(path: Path) -> dict[str, float]:
    """Seconds until the page is ready, to sort by a run's column, and to open the first row's drill-down."""
    from haystack_irmetrics.report.browser import open_report

    out = {}
    start = time.perf_counter()
    with open_report(path, timeout_s=120) as opened:
        page = opened.page
        out["load_s"] = time.perf_counter() - start
        start = time.perf_counter()
        page.click("#pq th[data-sort=v1]")
        page.wait_for_selector("#pq th[aria-sort]")
        out["sort_s"] = time.perf_counter() - start
        start = time.perf_counter()
        page.click("#pq tbody tr.row >> nth=0")
        page.wait_for_selector("[data-drilldown]")
        out["drilldown_s"] = time.perf_counter() - start
        if opened.errors:
            raise SystemExit(f"page errors: {opened.errors}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--depth", type=int, default=100, help="documents retrieved per query and run")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / ".cache" / "report_scale")
    args = parser.parse_args()

    from haystack_irmetrics.report import build_report, write_report

    start = time.perf_counter()
    qrels, runs = generate(args.out, args.queries, args.depth, args.runs)
    print(
        f"generated {args.runs} runs x {args.queries:,} queries x {args.depth} documents in {time.perf_counter() - start:.1f} s"
    )
    start = time.perf_counter()
    data = build_report(runs, qrels, k_values=[10, 100])
    built = time.perf_counter() - start
    start = time.perf_counter()
    page = write_report(data, args.out / "report.html")
    rendered = time.perf_counter() - start
    size = page.stat().st_size
    print(f"build_report {built:.1f} s (evaluation, statistics, ranked lists); render and write {rendered:.1f} s")
    print(f"report.html: {size / 1e6:.1f} MB ({len(data.qids):,} queries, {len(data.measures)} measures)")
    if shutil.which("chromium") is None:
        print("no chromium on PATH: browser times not measured")
        return
    times = browser_times(page)
    print(
        f"chromium: launched and page ready in {times['load_s']:.1f} s; sort {times['sort_s']:.2f} s; drill-down {times['drilldown_s']:.2f} s"
    )
    ok = size <= 30e6 and times["load_s"] <= 15
    print("within the bounds (<= 30 MB, <= 15 s)" if ok else "OUTSIDE the bounds (<= 30 MB, <= 15 s)")


if __name__ == "__main__":
    main()
