"""What each operation of the compiled scan earns: end-to-end time with the scan on, with one operation
switched off at a time (its caller takes the Python path), and with all of them off.

    python benchmarks/native_ops.py [--workloads msmarco,beir,large,trecdl] [--repeat 5]

Three callers per workload: ``evaluate`` on the dict run (every per-query dict read too), on the
same run as ranked lists ``{qid: [doc, ...]}``, and the Haystack Document path
(``IRMetricsEvaluator``'s core, on the same Documents as the ``ours_documents`` tool of ``run.py``,
where they fit in memory). Results (markdown) go to stdout and
``benchmarks/native_ops.md``. Every variant's means must equal the all-on means: the run stops
otherwise. A ratio above 1 is what switching that operation off costs.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import generate  # noqa: E402
import runners  # noqa: E402

from haystack_irmetrics import evaluate  # noqa: E402
from haystack_irmetrics.core import native  # noqa: E402

DOCUMENTS_MAX = 1_000_000  # retrieved Documents built for the Document path (each ~1 KB)

# The seam's functions and what each answers when switched off (the caller's Python path then runs).
OPS: dict[str, object] = {
    "read_labels": False,
    "prepare_dicts": None,
    "index_lists": None,
    "index_judged": None,
    "find_ranked": None,
}


# Operations that stand in for each other (the Document path falls back from index_judged to
# index_lists, and find_ranked reads index_lists' table): switched off together too.
COMBOS: list[tuple[str, ...]] = [("index_judged", "index_lists"), ("index_lists", "find_ranked")]
VARIANTS: list[tuple[str, ...]] = [*((op,) for op in OPS), *COMBOS, tuple(OPS)]


def _label(variant: tuple[str, ...]) -> str:
    return "all off" if variant == tuple(OPS) else " + ".join(variant) + " off"


def _best(call: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - t)
    return best, out


def _callers(name: str, ks: list[int]) -> dict[str, Callable[[], dict[str, float]]]:
    qrels, results = generate.load(name)

    def dicts() -> dict[str, float]:
        res = evaluate(qrels, results, ks)
        for m in res.per_query:  # every per-query dict built
            res.per_query[m]
        return dict(res.means)

    lists = {q: sorted(d, key=d.get, reverse=True) for q, d in results.items()}  # best first

    def ranked() -> dict[str, float]:
        return dict(evaluate(qrels, lists, ks).means)

    callers = {"dict run": dicts, "ranked lists": ranked}
    if sum(map(len, results.values())) > DOCUMENTS_MAX:
        return callers  # as run.py: the Document path on the workloads whose Documents fit in memory

    documents, _ = runners._documents_api(ks)
    _, gt, ret = runners._haystack_docs(qrels, results)

    def docs() -> dict[str, float]:
        out = documents(gt, ret)
        return dict(out["means"] if isinstance(out, dict) else out.means)

    callers["Documents"] = docs
    return callers


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default="msmarco,beir,large,trecdl")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    if native.scan() is None:
        print("the compiled scan is not built (or IRMETRICS_PURE_PYTHON is set): nothing to compare")
        return 1
    ks = [1, 3, 5, 10, 100, 1000]
    originals = {op: getattr(native, op) for op in OPS}
    lines = [
        "# What each compiled-scan operation earns",
        "",
        "End-to-end time with the scan on, and the ratio when one operation is off (its caller's",
        f"Python path runs instead). Best of {args.repeat}; produced by `python benchmarks/native_ops.py`.",
        "",
        "| workload | caller | all on (s) | " + " | ".join(map(_label, VARIANTS)) + " |",
        "|---|---|---:|" + "---:|" * len(VARIANTS),
    ]
    print("\n".join(lines), flush=True)
    for name in args.workloads.split(","):
        for caller, call in _callers(name, ks).items():
            base, want = _best(call, args.repeat)
            row = [name, caller, f"{base:.3f}"]
            for off in VARIANTS:
                for op in off:
                    setattr(native, op, lambda *a, _v=OPS[op], **k: _v)
                try:
                    t, got = _best(call, args.repeat)
                finally:
                    for op in off:
                        setattr(native, op, originals[op])
                if got != want:
                    raise SystemExit(f"{name} {caller}: means differ with {off} off")
                row.append(f"{t / base:.2f}x")
            lines.append("| " + " | ".join(row) + " |")
            print(lines[-1], flush=True)
    (HERE / "native_ops.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
