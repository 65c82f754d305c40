"""Time and peak memory of ``irmetrics feedback`` on a 10-million-row Parquet feedback log.

    python benchmarks/feedback_10m.py                      # generate (cached) + measure 10M rows
    python benchmarks/feedback_10m.py --rows 2500000       # another size (memory should not grow with rows)
    python benchmarks/feedback_10m.py --n-resamples 10000  # significance with more resamples

The log is seeded and synthetic, written with numpy/pyarrow in row groups (never held whole): 100,000
queries with Zipf-like popularity, 15 candidate documents each, 10 shown per impression; a vote on
~15 % of the rows (more at the top), 1.0/0.0 or graded; 2,000,000 users; three device segments;
timestamps. A new system's TREC run ranks 20 documents per query. Each phase runs in a fresh
subprocess so its peak RSS (``ru_maxrss``) is its own:

* ``aggregate`` -- read the Parquet in batches, validate, aggregate votes (Wilson, per-user dedup by
  timestamp, per segment): the columnar path.
* ``full`` -- the whole ``irmetrics feedback`` job: aggregate, score the logged rankings and the run
  (full and condensed lists, Judged@k, six metrics at 1/3/5/10), bootstrap intervals, randomization
  and t-tests with Holm, per-segment breakdown, report files (no plots).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = Path(os.environ.get("IRMETRICS_BENCH_CACHE", HERE / ".cache"))


def generate(path: Path, rows: int, queries: int, seed: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    pool, shown = 15, 10
    impressions = rows // shown
    weights = 1.0 / (np.arange(queries) + 10.0) ** 0.9
    weights /= weights.sum()
    schema = pa.schema(
        [
            ("query_id", pa.string()),
            ("doc_id", pa.string()),
            ("position", pa.int32()),
            ("vote", pa.float64()),
            ("user_id", pa.string()),
            ("ts", pa.int64()),
            ("device", pa.string()),
        ]
    )
    devices = pa.array(["mobile", "desktop", "tablet"])
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for start in range(0, impressions, 100_000):
            n = min(100_000, impressions - start)
            q = rng.choice(queries, size=n, p=weights)
            j = np.arange(pool)
            quality = np.modf(np.abs(np.sin(q[:, None] * 12.9898 + j[None, :] * 78.233)) * 43758.5453)[0] ** 2
            order = np.argsort(-quality + rng.normal(0, 0.3, (n, pool)), axis=1)[:, :shown]
            doc = order.ravel()
            qq = np.repeat(q, shown)
            pos = np.tile(np.arange(1, shown + 1, dtype=np.int32), n)
            qual = quality[np.repeat(np.arange(n), shown), doc]
            voted = rng.random(n * shown) < 0.3 / np.sqrt(pos)
            graded = rng.random(n * shown) < 0.1
            vote = np.where(graded, np.round(qual, 1), (rng.random(n * shown) < qual).astype(np.float64))
            vote_arr = pa.array(vote, mask=~voted)
            user = pa.array(np.repeat(rng.integers(0, 2_000_000, n), shown)).cast(pa.string())
            ts = np.repeat(np.arange(start, start + n, dtype=np.int64) * 1000, shown) + pos
            q_str = pc.binary_join_element_wise("q", pa.array(qq).cast(pa.string()), "")
            d_str = pc.binary_join_element_wise(q_str, pa.array(doc).cast(pa.string()), "-d")
            dev = pc.take(devices, pa.array(np.repeat(rng.integers(0, 3, n), shown)))
            writer.write_table(
                pa.table(
                    [
                        q_str,
                        d_str,
                        pa.array(pos),
                        vote_arr,
                        pc.binary_join_element_wise("u", user, ""),
                        pa.array(ts),
                        dev,
                    ],
                    schema=schema,
                )
            )


def generate_run(path: Path, queries: int, seed: int) -> None:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed + 1)
    depth, pool = 20, 15
    q = np.repeat(np.arange(queries), depth)
    j = np.tile(np.arange(depth), queries)
    quality = np.modf(np.abs(np.sin(q * 12.9898 + j * 78.233)) * 43758.5453)[0] ** 2
    score = np.where(j < pool, quality, rng.random(q.size) * 0.5) + rng.normal(0, 0.1, q.size)
    frame = pl.DataFrame({"q": q, "j": j, "score": score}).with_columns(
        pl.col("score").rank("ordinal", descending=True).over("q").alias("rank")
    )
    frame.select(
        pl.format("q{}", "q").alias("qid"),
        pl.lit("Q0").alias("iter"),
        pl.format("q{}-d{}", "q", "j").alias("doc"),
        "rank",
        pl.col("score").round(6),
        pl.lit("new").alias("tag"),
    ).write_csv(path, separator=" ", include_header=False)


def phase(name: str, log: Path, run: Path, out: Path, n_resamples: int, dedup: str = "last") -> dict:
    """Run one phase in this process and return its numbers (called in a subprocess)."""
    from haystack_irmetrics.feedback import FeedbackLog, Strategy, aggregate_feedback

    cols = {"user": "user_id", "timestamp": "ts", "segment": "device"}
    start = time.perf_counter()
    log_obj = FeedbackLog(log, columns=cols)
    agg = aggregate_feedback(log_obj, Strategy("wilson", dedup=dedup))
    t_agg = time.perf_counter() - start
    result = {
        "phase": name,
        "aggregate_s": round(t_agg, 2),
        **{k: v for k, v in agg.summary(0.5).items() if k != "strategy"},
    }
    if name == "full":
        from haystack_irmetrics.feedback import evaluate_feedback

        t0 = time.perf_counter()
        ev = evaluate_feedback(agg, {"new": run}, k_values=[1, 3, 5, 10], n_resamples=n_resamples, seed=0)
        t_eval = time.perf_counter() - t0
        t0 = time.perf_counter()
        ev.write_report(out, plots=False, per_query=True)
        t_write = time.perf_counter() - t0
        result.update(
            evaluate_s=round(t_eval, 2),
            report_s=round(t_write, 2),
            queries_scored=len(ev.overall.queries),
            segments=len(ev.segments),
            ndcg10={s: round(v, 4) for s, v in ((s, ev.means()[s]["NDCG@10"]) for s in ev.systems)},
        )
    result["total_s"] = round(time.perf_counter() - start, 2)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--queries", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-resamples", type=int, default=10_000)
    p.add_argument("--phases", default="aggregate,full")
    p.add_argument("--dedup", choices=["none", "last", "first"], default="last", help="per-user de-duplication")
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--phase", help=argparse.SUPPRESS)  # internal: run one phase, print JSON
    args = p.parse_args(argv)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    log = args.cache_dir / f"feedback-{args.rows}-{args.queries}-s{args.seed}.parquet"
    run = args.cache_dir / f"feedback-run-{args.queries}-s{args.seed}.trec"
    out = args.cache_dir / f"feedback-report-{args.rows}"
    if args.phase:
        print(json.dumps(phase(args.phase, log, run, out, args.n_resamples, args.dedup)))
        return 0
    if not log.exists():
        t0 = time.perf_counter()
        generate(log, args.rows, args.queries, args.seed)
        print(
            f"generated {log.name} ({log.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
        )
    if not run.exists():
        generate_run(run, args.queries, args.seed)
    results = []
    for name in args.phases.split(","):
        cmd = [
            sys.executable,
            __file__,
            "--phase",
            name,
            "--rows",
            str(args.rows),
            "--queries",
            str(args.queries),
            "--seed",
            str(args.seed),
            "--n-resamples",
            str(args.n_resamples),
            "--cache-dir",
            str(args.cache_dir),
            "--dedup",
            args.dedup,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), flush=True)
    machine = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "load_avg": os.getloadavg(),
    }
    print(json.dumps({"rows": args.rows, "log_mib": round(log.stat().st_size / 2**20, 1), "machine": machine}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
