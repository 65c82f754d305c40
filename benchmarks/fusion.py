"""Fusion: ``haystack_irmetrics.fusion.fuse`` against ``ranx.fuse`` (0.3.21), same method, same inputs, side
by side in one process, as ratios.

    python benchmarks/fusion.py                                  # 5 runs x 10,000 queries x 1,000 docs
    python benchmarks/fusion.py --queries 1000 --methods rrf     # smaller

Two timings per tool, each the minimum of ``--repeat`` calls:

* **fuse only**: each tool from its own prepared runs, conversion excluded: ``ranx.fuse(list of ranx.Run)``
  against ``fuse(PackedRuns)`` (``pack_runs`` done once beforehand, as ranx's ``Run`` is built beforehand).
  Each returns its own run type: ranx a ``Run`` of numba dicts, ours a ``ColumnarRun`` of arrays (document
  ids become strings when read, e.g. ``.data``; that conversion is timed separately, "to dict").
* **from dicts**: the ``{qid: {docid: score}}`` dicts in, the fused run out: ``ranx.Run(d)`` for each run plus
  ``ranx.fuse``, against ``pack_runs`` plus ``fuse`` plus ``.data`` (ours then a dict too).

The queries are fused ``--chunk`` at a time (default 2,000; each chunk its own seeded runs) and the times
summed: ranx's ``Run`` objects of all 5 x 10,000 x 1,000 documents need more than the 23 GB of the machine
these numbers come from (the process was killed), and both tools' times grow linearly with the queries.

Before any timing counts, the two fused runs are checked equal (scores within 1e-9) on every query.
ranx's numba functions are compiled (cached) by a warm-up call on a tiny input first.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def generate(n_runs: int, n_queries: int, depth: int, seed: int) -> list[dict]:
    """Seeded runs that overlap: per query a pool of 2 x depth documents (ids drawn from 9,000,000), each run
    retrieves ``depth`` of them, scores descending (each run its own scale: BM25-like, cosine-like)."""
    rng = np.random.default_rng(seed)
    id_space = 9_000_000
    names = {}

    def doc(i: int) -> str:
        s = names.get(i)
        if s is None:
            s = names[i] = f"D{i}"
        return s

    runs: list[dict] = [{} for _ in range(n_runs)]
    for q in range(n_queries):
        pool = rng.integers(0, id_space, 2 * depth)
        qid = f"q{q}"
        for r in range(n_runs):
            picked = rng.choice(pool, depth, replace=False)
            scale = 30.0 if r % 2 == 0 else 1.0
            scores = np.sort(rng.random(depth))[::-1] * scale
            runs[r][qid] = dict(zip(map(doc, picked.tolist()), scores.tolist()))
    return runs


def best(call, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        out = None
        gc.collect()
        t = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=1_000)
    ap.add_argument(
        "--chunk", type=int, default=2_000, help="queries fused per call (ranx needs > 23 GB for 10,000 at once)"
    )
    ap.add_argument("--methods", default="rrf,wsum", help="comma-separated: rrf, wsum (min-max), sum, mnz, ...")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="also write the numbers here")
    args = ap.parse_args()

    import ranx

    from haystack_irmetrics.fusion import fuse, pack_runs

    methods = args.methods.split(",")
    weights = [1.0 / args.runs] * args.runs
    tiny = [ranx.Run({"q": {"a": 1.0, "b": 0.5}}), ranx.Run({"q": {"b": 2.0, "c": 1.0}})]
    for method in methods:  # compile ranx's numba functions (cached) before timing
        ranx.fuse(tiny, norm="min-max", method=method, params={"weights": [0.5, 0.5]} if method == "wsum" else {})
    keys = ("ranx_convert", "ranx_fuse", "ours_pack", "ours_fuse", "ours_to_dict")
    totals = {m: dict.fromkeys(keys, 0.0) | {"max_abs_diff": 0.0} for m in methods}
    convert = {"ranx": 0.0, "ours": 0.0}
    done = 0
    chunk = 0
    while done < args.queries:
        n = min(args.chunk, args.queries - done)
        runs = generate(args.runs, n, args.depth, args.seed + chunk)
        t = time.perf_counter()
        ranx_runs = [ranx.Run(d) for d in runs]
        convert["ranx"] += time.perf_counter() - t
        t = time.perf_counter()
        packed = pack_runs(runs)
        convert["ours"] += time.perf_counter() - t
        for method in methods:
            params = {"weights": weights} if method in ("wsum", "wmnz", "mixed") else {}
            ranx_time, ranx_out = best(
                lambda params=params, method=method, rr=ranx_runs: ranx.fuse(
                    rr, norm="min-max", method=method, params=params
                ),
                args.repeat,
            )
            ours_time, ours_out = best(
                lambda params=params, method=method, p=packed: fuse(
                    p, method, norm="min-max", weights=params.get("weights")
                ),
                args.repeat,
            )
            to_dict, ours_dict = best(lambda ours_out=ours_out: ours_out.data, 1)
            worst = 0.0
            for q, docs in ranx_out.run.items():
                mine = ours_dict[q]
                assert len(mine) == len(docs), q
                worst = max(worst, max(abs(mine[d] - s) for d, s in docs.items()))
            assert worst <= 1e-9, worst
            row = totals[method]
            row["ranx_fuse"] += ranx_time
            row["ours_fuse"] += ours_time
            row["ours_to_dict"] += to_dict
            row["max_abs_diff"] = max(row["max_abs_diff"], worst)
            del ranx_out, ours_out, ours_dict
        del runs, ranx_runs, packed
        gc.collect()
        done += n
        chunk += 1
        print(f"{done:,} / {args.queries:,} queries", flush=True)
    rows = []
    for method in methods:
        row = totals[method] | {"method": f"{method} (min-max)"}
        row["ranx_convert"], row["ours_pack"] = convert["ranx"], convert["ours"]
        row["ranx_from_dicts"] = row["ranx_convert"] + row["ranx_fuse"]
        row["ours_from_dicts"] = row["ours_pack"] + row["ours_fuse"] + row["ours_to_dict"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    print()
    print(
        f"{args.runs} runs x {args.queries:,} queries x {args.depth:,} docs, fused {args.chunk:,} queries at a time "
        f"(times summed); min of {args.repeat} calls per chunk; {os.cpu_count()} CPUs; ranx.Run() of the runs: "
        f"{convert['ranx']:.1f} s, pack_runs: {convert['ours']:.1f} s"
    )
    print()
    print(
        "| method | ranx.fuse | fuse (packed) | ratio | ranx: Run() + fuse | pack + fuse + .data | ratio | max abs diff |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['method']} | {r['ranx_fuse']:.1f} s | {r['ours_fuse']:.1f} s | **{r['ours_fuse'] / r['ranx_fuse']:.3f}x** "
            f"| {r['ranx_from_dicts']:.1f} s | {r['ours_from_dicts']:.1f} s | "
            f"**{r['ours_from_dicts'] / r['ranx_from_dicts']:.2f}x** | {r['max_abs_diff']:.1e} |"
        )
    if args.json:
        meta = {
            "runs": args.runs,
            "queries": args.queries,
            "depth": args.depth,
            "chunk": args.chunk,
            "python": platform.python_version(),
        }
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
