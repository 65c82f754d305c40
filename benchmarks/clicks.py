"""Click models at log scale: PBM and DBN on a 10-million-row click log, and beside a per-session EM.

    python benchmarks/clicks.py                       # generate (cached) + measure; writes clicks.md
    python benchmarks/clicks.py --sessions 100000     # a smaller log for the big runs
    python benchmarks/clicks.py --quick               # tiny sizes (a smoke run)

The log is seeded and synthetic, written with numpy/pyarrow in row groups: 5,000 queries with
Zipf-like popularity, 20 candidate documents each and three rankings of 10 per query (three rankers);
each session shows one of them and draws its clicks from a DBN with known parameters. Ids are
integers (the reader takes them as text).

* **scale**: for PBM and DBN, in a fresh subprocess each (its peak RSS, ``ru_maxrss``, is its own): read
  the Parquet log through the click-log reader (validated in batches, sessions checked) and fit with the
  defaults (SQUAREM-accelerated EM until a step moves no parameter more than 1e-6; "EM iterations" counts steps).
* **peer**: PyClick cannot be installed (Python 2 era, unmaintained), so the peer is a plain per-session
  EM written from the book's generative stories (``tests/click_oracle.py``: a Python loop over sessions,
  and for the DBN an enumeration of each session's hidden states). Both fit the same sessions for the
  same number of plain EM iterations (``tol=0, accelerate=False``); the ratio is peer time / ours, and the
  largest difference of any fitted parameter is reported.
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
ROOT = HERE.parent
DEFAULT_CACHE = Path(os.environ.get("IRMETRICS_BENCH_CACHE", HERE / ".cache"))
RANKS = 10
QUERIES = 5_000


def generate(path: Path, sessions: int, queries: int, seed: int) -> None:
    """Write a click log of ``sessions`` x 10 rows to ``path`` (Parquet), clicks drawn from a DBN."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from haystack_irmetrics.clicks.cascade import cascade_simulate

    rng = np.random.default_rng(seed)
    candidates = 20
    # per query: three rankings of 10 of its 20 candidates; attractiveness and satisfaction per document
    rankings = np.stack([np.stack([rng.permutation(candidates)[:RANKS] for _ in range(3)]) for _ in range(queries)])
    alpha = rng.beta(1.0, 3.0, size=(queries, candidates))
    sigma = rng.beta(2.0, 2.0, size=(queries, candidates))
    popularity = 1.0 / np.arange(1, queries + 1) ** 0.8
    popularity /= popularity.sum()
    gamma = 0.9
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    schema = pa.schema(
        [
            ("session", pa.int64()),
            ("query_id", pa.int64()),
            ("doc_id", pa.int64()),
            ("position", pa.int8()),
            ("click", pa.bool_()),
        ]
    )
    with pq.ParquetWriter(tmp, schema) as writer:
        step = 100_000
        for start in range(0, sessions, step):
            n = min(step, sessions - start)
            q = rng.choice(queries, size=n, p=popularity)
            shown = rankings[q, rng.integers(3, size=n)]  # (n, 10) candidate numbers
            a = alpha[q[:, None], shown]
            after_click = gamma * (1.0 - sigma[q[:, None], shown])
            clicks = cascade_simulate(a, after_click, gamma, np.ones((n, RANKS), dtype=bool), rng)
            doc = q[:, None] * candidates + shown
            table = pa.table(
                {
                    "session": np.repeat(np.arange(start, start + n), RANKS),
                    "query_id": np.repeat(q, RANKS),
                    "doc_id": doc.ravel(),
                    "position": np.tile(np.arange(1, RANKS + 1, dtype=np.int8), n),
                    "click": clicks.ravel(),
                },
                schema=schema,
            )
            writer.write_table(table, row_group_size=1_000_000)
    tmp.replace(path)


def log_path(cache: Path, sessions: int, seed: int) -> Path:
    path = cache / f"clicks_{sessions}_{QUERIES}_{seed}.parquet"
    if not path.exists():
        t = time.perf_counter()
        generate(path, sessions, queries=QUERIES, seed=seed)
        print(f"generated {path} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return path


def _child_scale(path: str, model: str) -> dict:
    from haystack_irmetrics.clicks import ClickLog, make_model

    t0 = time.perf_counter()
    sessions = ClickLog(path).sessions()
    t1 = time.perf_counter()
    fitted = make_model(model).fit(sessions)
    t2 = time.perf_counter()
    return {
        "model": model,
        "rows": int(sessions.shown.sum()),
        "sessions": sessions.n_sessions,
        "pairs": sessions.n_pairs,
        "read_s": t1 - t0,
        "fit_s": t2 - t1,
        "total_s": t2 - t0,
        "iterations": fitted.iterations,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _child_peer(path: str, model: str, iterations: int) -> dict:
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from haystack_irmetrics.clicks import ClickLog, make_model
    from tests.click_oracle import dbn_em, pbm_em

    sessions = ClickLog(path).sessions()
    queries, docs = sessions.pair_names()
    plain = [
        (
            queries[int(row[0])],
            [docs[int(p)] for p in row[:n]],
            [bool(c) for c in clicks[:n]],
        )
        for row, clicks, n in zip(sessions.pairs, sessions.clicks, sessions.length, strict=True)
    ]
    t0 = time.perf_counter()
    ours = make_model(model, max_iter=iterations, tol=0, accelerate=False).fit(sessions)  # step for step
    t1 = time.perf_counter()
    if model == "pbm":
        alpha, gamma = pbm_em(plain, iterations)
        t2 = time.perf_counter()
        diff = max(
            max(abs(ours.alpha[i] - alpha[q, d]) for i, (q, d) in enumerate(zip(queries, docs, strict=True))),
            float(np.abs(ours.gamma - np.array([gamma[r] for r in range(len(gamma))])).max()),
        )
    else:
        alpha, sigma, gamma = dbn_em(plain, iterations)
        t2 = time.perf_counter()
        diff = max(
            max(abs(ours.alpha[i] - alpha[q, d]) for i, (q, d) in enumerate(zip(queries, docs, strict=True))),
            max(abs(ours.sigma[i] - sigma[q, d]) for i, (q, d) in enumerate(zip(queries, docs, strict=True))),
            abs(ours.gamma - gamma),
        )
    return {
        "model": model,
        "sessions": sessions.n_sessions,
        "iterations": iterations,
        "ours_s": t1 - t0,
        "peer_s": t2 - t1,
        "ratio": (t2 - t1) / (t1 - t0),
        "max_abs_diff": float(diff),
    }


def _in_child(kind: str, *args: str) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1_000_000, help="sessions of the scale log (x 10 rows)")
    parser.add_argument("--peer-sessions", type=int, default=100_000, help="sessions of the peer comparison")
    parser.add_argument("--peer-iterations", type=int, default=5, help="EM iterations of both sides")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, a smoke run")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=HERE / "clicks.md")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = _child_scale(*rest) if kind == "scale" else _child_peer(rest[0], rest[1], int(rest[2]))
        print(json.dumps(result))
        return
    if args.quick:
        args.sessions, args.peer_sessions = 5_000, 500
    big = log_path(args.cache, args.sessions, args.seed)
    small = log_path(args.cache, args.peer_sessions, args.seed + 1)
    scale = [_in_child("scale", str(big), m) for m in ("pbm", "dbn")]
    peer = [_in_child("peer", str(small), m, str(args.peer_iterations)) for m in ("pbm", "dbn")]
    lines = [
        "# Click models at log scale",
        "",
        f"Generated by `python benchmarks/clicks.py`; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}.",
        "",
        "## PBM and DBN on a generated log (read + validate + fit, fresh process each)",
        "",
        "| model | rows | sessions | (query, doc) pairs | read (s) | fit (s) | total (s) | EM iterations | peak RSS (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in scale:
        lines.append(
            f"| {r['model']} | {r['rows']:,} | {r['sessions']:,} | {r['pairs']:,} | {r['read_s']:.1f} | "
            f"{r['fit_s']:.1f} | {r['total_s']:.1f} | {r['iterations']} | {r['peak_mb']:,.0f} |"
        )
    lines += [
        "",
        "## Beside a plain per-session EM (the same sessions, the same iterations)",
        "",
        "| model | sessions | iterations | ours (s) | per-session EM (s) | ratio | max abs diff of a parameter |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in peer:
        lines.append(
            f"| {r['model']} | {r['sessions']:,} | {r['iterations']} | {r['ours_s']:.3f} | {r['peer_s']:.2f} | "
            f"{r['ratio']:.0f}x | {r['max_abs_diff']:.1e} |"
        )
    text = "\n".join(lines) + "\n"
    if not args.quick:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
