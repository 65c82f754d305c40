"""Hole bounds (``haystack_irmetrics.hole_bounds``) beside the same bounds computed with pytrec_eval.

No other tool computes these intervals, so the peer is the obvious way to get them with the reference
evaluator: for every query, judge its top-k holes the way the bounds need (for nDCG and MAP the s first
and the s last holes, for every s; for P and Recall none and all), score every judging with pytrec_eval,
and take each query's minimum and maximum. Both sides use trec_eval's conventions (``preset="trec"``),
so the per-query intervals must agree (the max abs difference is reported). Also shown: the time of one
plain ``evaluate`` of the same measures, the price of today's number alone.

    python benchmarks/hole_bounds.py [--quick] [--repeat 3] [--out benchmarks/hole_bounds.md]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from haystack_irmetrics import evaluate, hole_bounds  # noqa: E402
from haystack_irmetrics.core.families import FAMILIES  # noqa: E402
from haystack_irmetrics.core.measures import parse_measure  # noqa: E402
from haystack_irmetrics.io import read_qrels, read_run, trec  # noqa: E402

PYTREC = {"NDCG": "ndcg_cut", "MAP": "map_cut", "P": "P", "Recall": "recall"}


def _best(fn, repeat):
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def synthetic(n_queries, depth, seed=0, n_docs=20000):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for qi in range(n_queries):
        q = str(qi + 1)
        docs = rng.choice(n_docs, size=depth, replace=False)
        run[q] = dict(zip((f"d{x}" for x in docs), (rng.integers(0, 50, size=depth) / 7.0).tolist()))
        # Shallow judgments: a third of the top of each ranking and some unretrieved documents.
        judged = np.concatenate([docs[: depth // 3 : 2], rng.choice(n_docs, size=30, replace=False)])
        qrels[q] = {f"d{j}": int(rng.integers(0, 3)) for j in judged}
    return qrels, run


def pytrec_bounds(qrels, run, names, grade):
    """``{measure: {qid: (low, high)}}`` by scoring every needed judging of the holes with pytrec_eval."""
    import pytrec_eval

    out = {n: {} for n in names}
    by_k: dict[int, list[str]] = {}
    for n in names:
        by_k.setdefault(parse_measure(n).cutoff, []).append(n)
    for k, group in by_k.items():
        scan = any(FAMILIES[parse_measure(n).family].hole_bounds == "scan" for n in group)
        keys = {n: f"{PYTREC[parse_measure(n).family]}_{k}" for n in group}
        vq, vr, owner = {}, {}, {}
        for q, docs in run.items():
            if q not in qrels:
                continue
            top = trec.trec_order(docs)[:k]
            holes = [d for d in top if d not in qrels[q]]
            h = len(holes)
            labellings = [holes[:s] for s in range(h + 1)]
            if scan:
                labellings += [holes[h - s :] for s in range(1, h)]
            else:
                labellings = [labellings[0], labellings[-1]]
            for j, rel in enumerate(labellings):
                name = f"{q}#{j}"
                vq[name] = {**qrels[q], **dict.fromkeys(rel, grade)}
                vr[name] = docs
                owner[name] = q
        measures = {f"{PYTREC[parse_measure(n).family]}.{k}" for n in group}
        scored = pytrec_eval.RelevanceEvaluator(vq, measures).evaluate(vr)
        for n in group:
            rows = out[n]
            for name, values in scored.items():
                v = values[keys[n]]
                lo, hi = rows.get(owner[name], (v, v))
                rows[owner[name]] = (min(lo, v), max(hi, v))
    return out


def run_case(label, qrels, run, names, repeat, peer):
    t_eval, _ = _best(lambda: evaluate(qrels, run, measures=names, preset="trec"), repeat)
    t_ours, ours = _best(lambda: hole_bounds(qrels, run, measures=names, preset="trec"), repeat)
    row = {"workload": label, "measures": ", ".join(names), "evaluate": t_eval, "ours": t_ours}
    if peer:
        t_peer, theirs = _best(lambda: pytrec_bounds(qrels, run, names, 1), max(1, repeat - 1))
        diff = max(
            abs(a - b) for n in names for q, pair in theirs[n].items() for a, b in zip(ours.per_query[n][q], pair)
        )
        row.update(peer=t_peer, diff=diff)
    holes = ", ".join(f"{ours.holes[n]:.1f}" for n in names[:1])
    row["holes"] = holes
    print(row, flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the Robust03 run only, one repeat")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    repeat = 1 if args.quick else args.repeat
    data = Path(os.environ.get("IRMETRICS_SHARED_DATA", ROOT.parent / "shared" / "data"))
    cases = []
    robust = data / "robust03"
    if robust.is_dir():
        qrels = read_qrels(robust / "robust03_cs_qrels.txt").data
        run = read_run(robust / "input.uic0301").data
        cases.append(("Robust03 uic0301 (100 q x 1,000)", qrels, run))
    if not args.quick:
        cases.append(("synthetic shallow qrels (300 q x 1,000)", *synthetic(300, 1000)))
    sets = [(["NDCG@10", "P@10"], True), (["NDCG@100", "MAP@100", "Recall@100"], True), (["MAP@1000"], False)]
    rows = [run_case(label, q, r, names, repeat, peer) for label, q, r in cases for names, peer in sets]
    lines = [
        "# Hole bounds beside pytrec_eval scoring the same judgings",
        "",
        f"Best of {repeat}; `python benchmarks/hole_bounds.py`. *evaluate*: one plain evaluation of the same "
        "measures (today's number only). *pytrec_eval*: every judging of the holes the bounds need, scored by "
        "pytrec_eval (not run at k = 1000: 2h + 1 judgings of 1,000 documents per query). Ratio = pytrec_eval "
        "time / ours. Holes: mean per query in the first measure's top k.",
        "",
        "| workload | measures | holes | evaluate (s) | hole_bounds (s) | pytrec_eval (s) | ratio | max abs diff per query |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        peer = f"{r['peer']:.3f} | {r['peer'] / r['ours']:.1f}x | {r['diff']:.1e}" if "peer" in r else "— | — | —"
        lines.append(
            f"| {r['workload']} | {r['measures']} | {r['holes']} | {r['evaluate']:.3f} | {r['ours']:.3f} | {peer} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
