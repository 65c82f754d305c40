"""The irmetrics ir_measures provider beside ir_measures' pytrec_eval and ranx providers, end to end through ir_measures.

Each row times ``ir_measures.calc_aggregate(measures, qrels, run)`` on one workload of ``generate.py`` (its
first ``--queries`` queries), with the run given in three forms: the dict of dicts every provider reads
directly (no conversion), a list of ``ir_measures.ScoredDoc`` namedtuples and a pandas DataFrame (what
``read_trec_run`` and PyTerrier hand over: each provider's conversion is timed too). "ours" is the default
pipeline after ``haystack_irmetrics.ir_measures.prefer()``; "pytrec_eval" is the default pipeline as installed
(every measure here goes to pytrec_eval); "ranx" is ``ir_measures.ranx`` (its first call, numba's compile or
cache load, is made before the timer; pandas' string inference off, which ranx 0.3.21's ``from_df`` needs). Best of ``--repeat`` wall times; ratios are to pytrec_eval's time in the
same run. The means of every tool are checked against pytrec_eval's (1e-12; ranx's own ones are reported).

    python benchmarks/ir_measures_provider.py [--workloads msmarco,large] [--queries 3000,30000] [--repeat 3]
                                              [--quick] [--tools ours,ranx] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import generate  # noqa: E402


def _measures():
    from ir_measures import AP, RR, P, R, nDCG

    return [nDCG @ 10, AP @ 100, P @ 10, R @ 100, RR]


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _inputs(qrels: dict, run: dict) -> dict[str, object]:
    import ir_measures
    import pandas as pd

    rows = list(ir_measures.util.RunConverter(run).as_namedtuple_iter())
    return {"dict": run, "namedtuples": rows, "DataFrame": pd.DataFrame(rows)}


def _tools():
    import ir_measures

    from haystack_irmetrics import ir_measures as ours

    def pipeline(preferred: bool):
        def call(measures, qrels, run):
            ours.prefer(preferred)
            return ir_measures.calc_aggregate(measures, qrels, run)

        return call

    def ranx(measures, qrels, run):
        import pandas as pd

        # ranx 0.3.21's from_df asserts object columns; pandas 3 infers its string dtype unless told not to
        with pd.option_context("future.infer_string", False):
            return ir_measures.ranx.calc_aggregate(measures, qrels, run)

    return {"ours": pipeline(True), "pytrec_eval": pipeline(False), "ranx": ranx}


def run_workload(name: str, n_queries: int, repeat: int, quick: bool = False, only: str = "") -> list[dict]:
    qrels, run = generate.load(name, quick=quick)
    qids = list(run)[:n_queries]
    run = {q: run[q] for q in qids}
    qrels = {q: qrels[q] for q in qids if q in qrels}
    measures = _measures()
    tools = {t: call for t, call in _tools().items() if not only or t in only.split(",") or t == "pytrec_eval"}
    rows = []
    for form, given in _inputs(qrels, run).items():
        times = dict.fromkeys(("ours", "pytrec_eval", "ranx"), math.nan)
        means = {t: {m: math.nan for m in measures} for t in times}
        for tool, call in tools.items():
            try:
                if tool == "ranx":
                    call(measures, qrels, given)  # numba's compile (or its cache) before the timer
                times[tool], means[tool] = _best(lambda call=call, given=given: call(measures, qrels, given), repeat)
            except AssertionError as e:  # ranx 0.3.21 refuses a DataFrame of pandas 3's string columns
                print(f"{tool} failed on the {form}: {e}", file=sys.stderr)
                times[tool], means[tool] = math.nan, {m: math.nan for m in measures}
        ref = means["pytrec_eval"]
        diff = max(abs(means["ours"][m] - ref[m]) for m in measures)
        ranx_diff = max(abs(means["ranx"][m] - ref[m]) for m in measures)
        rows.append(
            {"workload": name, "queries": len(qids), "docs": sum(map(len, run.values())), "form": form,
             **{f"{t}_s": v for t, v in times.items()}, "max_diff": diff, "ranx_diff": ranx_diff}
        )  # fmt: skip
        print(_row(rows[-1]), flush=True)
    return rows


def _row(r: dict) -> str:
    p = r["pytrec_eval_s"]
    return (
        f"| {r['workload']} | {r['queries']:,} x {r['docs'] // r['queries']:,} | {r['form']} | {r['ours_s']:.3f} | "
        f"{p:.3f} | {r['ranx_s']:.3f} | {r['ours_s'] / p:.3f}x | {r['ranx_s'] / p:.3f}x | {r['max_diff']:.1e} | "
        f"{r['ranx_diff']:.1e} |"
    )


HEADER = (
    "| workload | queries x depth | run given as | ours (s) | pytrec_eval (s) | ranx (s) | ours / pytrec_eval | "
    "ranx / pytrec_eval | ours: max diff | ranx: max diff |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default="msmarco,large")
    parser.add_argument("--queries", default="3000,30000", help="queries of each workload (its first ones)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=None, help="write the table as markdown here")
    parser.add_argument("--quick", action="store_true", help="generate.py's quick workloads (a smoke run)")
    parser.add_argument("--tools", default="", help="ours,ranx (default both; pytrec_eval always runs)")
    args = parser.parse_args(argv)
    names = args.workloads.split(",")
    counts = [int(x) for x in args.queries.split(",")]
    print(HEADER)
    rows = [r for name, n in zip(names, counts) for r in run_workload(name, n, args.repeat, args.quick, args.tools)]
    if args.out:
        Path(args.out).write_text(HEADER + "\n" + "\n".join(map(_row, rows)) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
