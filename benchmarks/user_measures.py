"""The user-model and diversity measures beside their reference implementations: time and max |diff|.

Each row scores one workload with ``haystack_irmetrics.evaluate`` and with the tool the measure is
defined by (gdeval.pl run by perl, cwl_eval, pytrec_eval, ir_measures' Compat, pyndeval), both from the
same in-memory qrels and run (file writing for gdeval is timed: it is how that tool is run), and
reports the best of ``--repeat`` wall times, the ratio, and the largest per-query difference. The
reference tools get each ranking in trec_eval's order as strictly decreasing scores (their own tie
orders differ; see docs/measures.md).

    python benchmarks/user_measures.py [--quick] [--repeat 3] [--out benchmarks/user_measures.md]
"""

from __future__ import annotations

import argparse
import math
import os
import pkgutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from haystack_irmetrics import evaluate  # noqa: E402
from haystack_irmetrics.core.subtopics import SubtopicQrels  # noqa: E402
from haystack_irmetrics.io import read_qrels, read_run, trec  # noqa: E402


def _best(fn, repeat):
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _ordered(run):
    return {q: {d: float(len(docs) - i) for i, d in enumerate(trec.trec_order(docs))} for q, docs in run.items()}


def synthetic(n_queries, depth, seed=0, n_docs=20000, labels=4):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for qi in range(n_queries):
        q = str(qi + 1)
        docs = rng.choice(n_docs, size=depth, replace=False)
        run[q] = dict(zip((f"d{x}" for x in docs), (rng.integers(0, 50, size=depth) / 7.0).tolist()))
        judged = np.concatenate([docs[: depth // 4], rng.choice(n_docs, size=100, replace=False)])
        qrels[q] = {f"d{j}": int(rng.integers(-2, labels + 1)) for j in judged}
    return qrels, run


def gdeval(qrels, run, k):
    script = pkgutil.get_data("ir_measures", "bin/gdeval.pl").decode()
    script = script.replace('"$runid,$topicCurrent,%.5f,%.5f\\n"', '"$runid,$topicCurrent,%.17g,%.17g\\n"')
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, n) for n in ("g.pl", "qrels", "run")]
        Path(paths[0]).write_text(script)
        Path(paths[1]).write_text("".join(f"{q} 0 {d} {v}\n" for q, ds in qrels.items() for d, v in ds.items()))
        Path(paths[2]).write_text(
            "".join(f"{q} Q0 {d} 0 {float(np.float32(s))!r} r\n" for q, ds in run.items() for d, s in ds.items())
        )
        out = subprocess.check_output(["perl", *paths, str(k)]).decode().splitlines()[1:]
    return {row.split(",")[1]: float(row.split(",")[3]) for row in out if row}


def cwl_rbp(qrels, ordered, p, rel):
    from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
    from cwl.ruler.ranking import Ranking

    out = {}
    for q, docs in ordered.items():
        gains = [math.nan if d not in qrels[q] else float(qrels[q][d] >= rel) for d in docs]
        metric = RBPCWLMetric(p)
        metric.residuals = True
        metric.measure(Ranking(q, np.asarray(gains), np.full(len(gains), np.nan)))
        out[q] = (metric.expected_utility, metric.residual_expected_utility)
    return out


def _workload_rows(name, qrels, run, repeat):
    import pyndeval
    import pytrec_eval
    from ir_measures.providers.compat_provider import compatibility

    out = []
    ordered = _ordered(run)
    positive = {q: d for q, d in qrels.items() if d and max(d.values()) >= 0}
    clipped = {q: {d: min(v, 4) for d, v in ds.items()} for q, ds in qrels.items()}

    t_ours, res = _best(lambda: evaluate(clipped, run, [20], measures=["ERR"], preset="trec"), repeat)
    t_ref, ref = _best(lambda: gdeval(clipped, run, 20), repeat)
    diff = max(abs(res.per_query["ERR@20"][q] - v) for q, v in ref.items())
    out.append((name, "ERR@20", "gdeval.pl (perl, files)", t_ours, t_ref, diff))

    t_ours, res = _best(
        lambda: evaluate(qrels, run, None, measures=["RBP(rel=1)", "RBP_residual(rel=1)"], preset="trec"), repeat
    )
    t_ref, ref = _best(lambda: cwl_rbp(qrels, ordered, 0.8, 1), repeat)
    diff = max(max(abs(res.per_query["RBP(rel=1)"][q] - a), abs(res.per_query["RBP_residual(rel=1)"][q] - b))
               for q, (a, b) in ref.items())  # fmt: skip
    out.append((name, "RBP(rel=1) + residual", "cwl_eval RBPCWLMetric", t_ours, t_ref, diff))

    t_ours, res = _best(lambda: evaluate(qrels, run, None, measures=["infAP"], preset="trec"), repeat)
    t_ref, ref = _best(lambda: pytrec_eval.RelevanceEvaluator(positive, {"infAP"}).evaluate(run), repeat)
    diff = max(abs(res.per_query["infAP"][q] - v["infAP"]) for q, v in ref.items())
    out.append((name, "infAP", "pytrec_eval", t_ours, t_ref, diff))

    t_ours, res = _best(lambda: evaluate(qrels, run, None, measures=["Compat"], preset="trec"), repeat)
    t_ref, ref = _best(lambda: {q: compatibility(qrels[q], ordered[q], 0.95, True) for q in ordered}, repeat)
    diff = max(abs(res.per_query["Compat"][q] - v) for q, v in ref.items())
    out.append((name, "Compat", "ir_measures compat", t_ours, t_ref, diff))

    # Diversity: each query's judgments split over 4 subtopics.
    rng = np.random.default_rng(1)
    sub = {q: {} for q in qrels}
    for q, ds in qrels.items():
        for d, v in ds.items():
            sub[q].setdefault(str(int(rng.integers(1, 5))), {})[d] = max(v, 0)
    flat = [(q, s, d, v) for q, ss in sub.items() for s, ds in ss.items() for d, v in ds.items()]
    ranked = [(q, d, s) for q, ds in ordered.items() for d, s in ds.items()]
    measures = ["alpha-nDCG@20", "ERR-IA@20", "NRBP", "strec@20"]
    t_ours, res = _best(lambda: evaluate(SubtopicQrels.from_dict(sub), run, [20], preset="trec",
                                         measures=["alpha_nDCG", "ERR_IA", "NRBP", "StRecall"]), repeat)  # fmt: skip
    t_ref, ref = _best(lambda: pyndeval.RelevanceEvaluator(flat, measures).evaluate(ranked), repeat)
    names = dict(zip(measures, ["alpha_nDCG@20", "ERR_IA@20", "NRBP", "StRecall@20"], strict=True))
    diff = max(abs(res.per_query[names[m]][q] - v[m]) for q, v in ref.items() for m in measures)
    out.append((name, "alpha_nDCG@20, ERR_IA@20, NRBP, StRecall@20", "pyndeval", t_ours, t_ref, diff))
    return out


def rows(quick, repeat):
    data = Path(os.environ.get("IRMETRICS_SHARED_DATA", ROOT.parent / "shared" / "data")) / "robust03"
    workloads = {}
    if data.is_dir():
        q = read_qrels(data / "robust03_cs_qrels.txt")
        r = read_run(data / "input.uic0301")
        workloads["Robust03 uic0301 (100 q x 1,000)"] = (
            {k: dict(v) for k, v in q.data.items()},
            {k: dict(v) for k, v in r.data.items()},
        )
    n = 200 if quick else 2000
    workloads[f"synthetic ({n} q x 1,000, grades -2..4)"] = synthetic(n, 1000)
    out = []
    for name, (qrels, run) in workloads.items():
        out.extend(_workload_rows(name, qrels, run, repeat))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "user_measures.md"))
    args = ap.parse_args()
    lines = ["# User-model and diversity measures beside their reference tools", "",
             f"Best of {args.repeat}; ratio = reference time / ours (above 1: we are faster). "
             "Generated by `python benchmarks/user_measures.py`" + (" --quick" if args.quick else "") + ".", "",
             "| workload | measures | reference | ours (s) | reference (s) | ratio | max abs diff per query |",
             "|---|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for name, measure, ref, t_ours, t_ref, diff in rows(args.quick, args.repeat):
        lines.append(
            f"| {name} | {measure} | {ref} | {t_ours:.3f} | {t_ref:.3f} | {t_ref / t_ours:.1f}x | {diff:.1e} |"
        )
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
