"""Pooling strategies under several tie-break seeds, and the order the runs are listed in.

Issue 47.3: ties between runs go by a draw seeded by ``--seed`` (``PoolRuns.tie_orders``), so one seed's
figures are one draw. For each workload this replays every strategy that orders the pool under the seeds
0..N-1 (``simulate(..., seed=range(N))``, the command's ``--repeats N``) and writes the relevant documents found at two budgets as the mean
and ``[min, max]``; then it replays ``mtf`` and ``maxmean`` with the runs listed worst first and best first
(by the measure under the complete judgments), which must give one pool whatever the listing. Run it on an
older checkout (``PYTHONPATH``) to see the listing decide: only ``simulate``'s long-standing arguments are
used there.

Workloads: the shipped sample (``examples/data/good.trec``, ``poor.trec``, the sample's test qrels), and a
generated set: 8 systems of graded quality over 200 queries, each ranking its top 100 of 300 candidates
(a shared pool, so runs share documents at equal ranks), graded qrels 0-3, numpy seed 47.

    python benchmarks/pool_seeds.py [--seeds 10] [--out benchmarks/pool_seeds.md] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from haystack_irmetrics.io.trec import read_qrels, read_run  # noqa: E402
from haystack_irmetrics.pooling import simulate  # noqa: E402
from haystack_irmetrics.pooling.runs import pool_runs  # noqa: E402
from haystack_irmetrics.pooling.simulate import DEFAULT_STRATEGIES, system_scores  # noqa: E402

#: The heading of the section that records ``--listing-only`` on an older checkout: kept when the file is rewritten.
BEFORE = "## Before the tie-break was drawn"


def shipped():
    runs = [read_run(ROOT / "examples" / "data" / f"{n}.trec").data for n in ("good", "poor")]
    qrels = read_qrels(ROOT / "haystack_irmetrics" / "datasets" / "sample" / "qrels" / "test.tsv").data
    return {"good.trec": runs[0], "poor.trec": runs[1]}, qrels, [24, 48]


def generated(n_systems=8, n_queries=200, depth=100, candidates=300, seed=47):
    """Systems that score each candidate by its grade times their skill plus noise, scores rounded to a tenth
    (ties within a run too); grades 0-3, about one candidate in eight relevant."""
    rng = np.random.default_rng(seed)
    grades = rng.choice(4, size=(n_queries, candidates), p=[0.87, 0.07, 0.04, 0.02])
    skills = np.linspace(0.2, 2.0, n_systems)
    runs, qrels = {}, {}
    for q in range(n_queries):
        qrels[f"q{q}"] = {f"d{q}-{j}": int(g) for j, g in enumerate(grades[q]) if g}
    for s, skill in enumerate(skills):
        run = {}
        for q in range(n_queries):
            score = np.round(skill * grades[q] + rng.normal(0, 1.0, candidates), 1)
            top = np.argsort(-score, kind="stable")[:depth]
            run[f"q{q}"] = {f"d{q}-{j}": float(score[j]) for j in top}
        runs[f"system{s}"] = run
    return runs, qrels, [1000, 4000]


def seeds_table(name, runs, qrels, budgets, n):
    """Rows ``| workload | strategy | budget | mean [min, max] |`` over seeds 0..n-1."""
    pooled = pool_runs(list(runs.values()), list(runs))
    start = time.perf_counter()
    out = simulate(pooled, qrels, budgets, DEFAULT_STRATEGIES, seed=range(n))["strategies"]
    took = time.perf_counter() - start
    rows = []
    for strategy, by_budget in out.items():
        cells = []
        for b in budgets:
            row = by_budget[str(b)]
            low, high = row["relevant_found_range"]
            cells.append(f"{row['relevant_found']:.1f} [{low}, {high}]")
        rows.append(f"| {name} | {strategy} | {' | '.join(cells)} |")
    return rows, took


def listing_table(name, runs, qrels, budgets):
    """``mtf`` and ``maxmean`` with the runs listed worst first and best first (seed 0)."""
    queries = [q for q in qrels if any(v >= 1 for v in qrels[q].values())]
    truth = system_scores(pool_runs(list(runs.values()), list(runs)), qrels, "NDCG@10", queries)
    worst_first = sorted(runs, key=lambda r: truth[r])
    rows = []
    for label, order in (("worst first", worst_first), ("best first", worst_first[::-1])):
        out = simulate(pool_runs([runs[r] for r in order], order), qrels, budgets, ["mtf", "maxmean"], seed=0)
        for strategy, by_budget in out["strategies"].items():
            found = " | ".join(str(by_budget[str(b)]["relevant_found"]) for b in budgets)
            rows.append(f"| {name} | {label} | {strategy} | {found} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "pool_seeds.md"))
    parser.add_argument("--quick", action="store_true", help="the shipped sample only")
    parser.add_argument("--listing-only", action="store_true", help="only the listing table (any checkout)")
    args = parser.parse_args()
    workloads = [("shipped sample (2 runs x 12 queries)", *shipped())]
    if not args.quick:
        workloads.append(("generated (8 runs x 200 queries x 100)", *generated()))
    lines = []
    if not args.listing_only:
        lines += [
            f"Relevant documents found over tie-break seeds 0 to {args.seeds - 1}: mean [min, max].",
            "",
            "| workload | strategy | budget 1 | budget 2 |",
            "|---|---|---:|---:|",
        ]
        for name, runs, qrels, budgets in workloads:
            rows, took = seeds_table(f"{name}, budgets {budgets[0]} / {budgets[1]}", runs, qrels, budgets, args.seeds)
            lines += rows
            print(f"{name}: {took:.1f} s for {args.seeds} seeds", file=sys.stderr)
        lines.append("")
    lines += ["The runs listed worst first and best first (seed 0): relevant documents found.", ""]
    lines += ["| workload | listing | strategy | budget 1 | budget 2 |", "|---|---|---|---:|---:|"]
    for name, runs, qrels, budgets in workloads:
        lines += listing_table(f"{name}, budgets {budgets[0]} / {budgets[1]}", runs, qrels, budgets)
    text = "# Pooling under tie-break seeds\n\n`python benchmarks/pool_seeds.py`\n\n" + "\n".join(lines) + "\n"
    print(text)
    if not args.listing_only:
        out = Path(args.out)
        old = out.read_text() if out.is_file() else ""
        kept = old[old.index(BEFORE) :] if BEFORE in old else ""  # a measurement of an older checkout, by hand
        out.write_text(text + ("\n" + kept if kept else ""))


if __name__ == "__main__":
    main()
