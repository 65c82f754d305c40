"""Seeded synthetic IR evaluation workloads for the benchmark harness.

Every workload is a pair ``(qrels, results)`` in the shapes of BEIR's
``EvaluateRetrieval.evaluate``: ``qrels = {qid: {docid: int}}`` and
``results = {qid: {docid: float}}``.  Ids are strings, doc ids look like
``"D1234567"`` and are drawn from a 9,000,000-id space so the same doc id
turns up in many queries, and scores are rounded to 3 decimals so realistic
score ties occur (a few percent of adjacent pairs on the BM25-like
workloads, more on the dense-like ones).  Each results dict is inserted in
rank order (as a run file or a retriever hands it over).

Workloads (full size; ``quick=True`` shrinks the query count ~20x):

=========  =======  =====  ==================================================
name       queries  depth  judgments per query
=========  =======  =====  ==================================================
msmarco      6,980  1,000  ~1.07 relevant (binary), ~85% of them retrieved
trecdl          43  1,000  ~215 graded 0-3, ~55% of them retrieved
beir         5,000    100  ~2 relevant graded 1-2, ~75% of them retrieved
large      200,000    100  ~1.03 relevant (binary), ~80% of them retrieved
trecfile     7,000  1,000  msmarco-like, written as TREC qrels + run files
=========  =======  =====  ==================================================

Generated workloads are cached as pickles in the cache dir (default
``benchmarks/.cache/``), keyed by workload, seed and size.

Command line: ``python benchmarks/generate.py WORKLOAD [--seed N] [--quick]
[--write-trec DIR]``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import pickle
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Qrels = dict[str, dict[str, int]]
Results = dict[str, dict[str, float]]

DEFAULT_CACHE_DIR = Path(__file__).resolve().parent / ".cache"
CACHE_ENV = "IRMETRICS_BENCH_CACHE"
QUICK_FACTOR = 20
MIN_QUICK_QUERIES = 3
ID_LOW, ID_HIGH = 1_000_000, 10_000_000  # "D" + 7 digits
# Bump when the generators change so stale pickles are not reused.
GENERATOR_VERSION = 1


@dataclass(frozen=True)
class Spec:
    name: str
    n_queries: int
    depth: int
    kind: str  # "sparse" (BM25-like scores) or "dense" (cosine-like scores)
    description: str


WORKLOADS: dict[str, Spec] = {
    "msmarco": Spec("msmarco", 6_980, 1_000, "sparse", "MS MARCO dev-like: 6,980 q x 1,000 docs, ~1.07 binary rel/q"),
    "trecdl": Spec("trecdl", 43, 1_000, "sparse", "TREC DL-like: 43 q x 1,000 docs, ~215 graded (0-3) judgments/q"),
    "beir": Spec("beir", 5_000, 100, "dense", "BEIR-like: 5,000 q x 100 docs, ~2 graded (1-2) rel/q"),
    "large": Spec("large", 200_000, 100, "dense", "large: 200,000 q x 100 docs, ~1 binary rel/q"),
    "trecfile": Spec("trecfile", 7_000, 1_000, "sparse", "TREC files: 7,000 q x 1,000 docs = 7,000,000 run lines"),
}

_SEED_OFFSET = {"msmarco": 11, "trecdl": 23, "beir": 37, "large": 41, "trecfile": 53}


def cache_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The cache dir: the argument, else $IRMETRICS_BENCH_CACHE, else benchmarks/.cache."""
    d = Path(path) if path else Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR)
    d.mkdir(parents=True, exist_ok=True)
    return d


def n_queries(name: str, quick: bool = False) -> int:
    n = WORKLOADS[name].n_queries
    return max(MIN_QUICK_QUERIES, n // QUICK_FACTOR) if quick else n


def depth(name: str) -> int:
    return WORKLOADS[name].depth


# --------------------------------------------------------------------------- numpy parts


def _rng(name: str, seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, _SEED_OFFSET[name], GENERATOR_VERSION])


def _scores(rng: np.random.Generator, nq: int, dep: int, kind: str) -> np.ndarray:
    """Descending scores per row, rounded to 3 decimals (so neighbours tie)."""
    if kind == "sparse":  # BM25-like: top ~22, spread ~8 over 1,000 docs
        top = rng.normal(22.0, 3.0, size=(nq, 1))
        gaps = rng.exponential(8.0 / dep, size=(nq, dep))
    else:  # dense cosine-like: top ~0.75, spread ~0.2 over 100 docs
        top = rng.normal(0.75, 0.05, size=(nq, 1))
        gaps = rng.exponential(0.2 / dep, size=(nq, dep))
    gaps[:, 0] = 0.0
    return np.round(top - np.cumsum(gaps, axis=1), 3)


def _log_uniform_ranks(rng: np.random.Generator, n: int, dep: int) -> np.ndarray:
    """0-based ranks with P(rank < r) ~ log(r + 1) / log(dep + 1): top-heavy, long tail."""
    return np.minimum(np.exp(rng.random(n) * np.log(dep + 1)).astype(np.int64) - 1, dep - 1)


def _fix_row_duplicates(rng: np.random.Generator, ids: np.ndarray, protected: np.ndarray) -> None:
    """Make doc ids unique within each row, replacing non-protected duplicates in place."""
    srt = np.sort(ids, axis=1)
    bad_rows = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
    for r in bad_rows:
        row = ids[r]
        seen: set[int] = set(row[protected[r]].tolist())
        for j in range(row.shape[0]):
            if protected[r, j]:
                continue
            v = int(row[j])
            while v in seen:
                v = int(rng.integers(ID_LOW, ID_HIGH))
            row[j] = v
            seen.add(v)


def _id_strings(ids: np.ndarray) -> list:
    """int ids -> nested Python lists of "D1234567" strings (fast, via numpy)."""
    return np.strings.add("D", ids.astype("U7")).tolist()


def _query_ids(nq: int, prefix: str) -> list[str]:
    width = len(str(nq))
    return [f"{prefix}{i:0{width}d}" for i in range(nq)]


# --------------------------------------------------------------------------- generators


def _sparse_relevance(
    rng: np.random.Generator,
    nq: int,
    dep: int,
    ids: np.ndarray,
    extra_mean: float,
    p_retrieved: float,
    grades: tuple[list[int], list[float]],
) -> tuple[list[list[int]], list[list[int]]]:
    """~(1 + extra_mean) relevant docs per query; place the retrieved ones at log-uniform ranks.

    Returns, per query, the relevant doc ids (ints) and their grades.  ``ids`` is updated in place.
    """
    n_rel = 1 + rng.poisson(extra_mean, size=nq)
    total = int(n_rel.sum())
    q_of = np.repeat(np.arange(nq), n_rel)
    rel_ids = rng.integers(ID_LOW, ID_HIGH, size=total)
    rel_grade = rng.choice(grades[0], p=grades[1], size=total)
    retrieved = rng.random(total) < p_retrieved
    rank = _log_uniform_ranks(rng, total, dep)
    # two relevant docs of one query must not share a rank: later ones stay unretrieved
    slot = q_of * dep + rank
    _, first = np.unique(np.where(retrieved, slot, -1 - np.arange(total)), return_index=True)
    keep = np.zeros(total, dtype=bool)
    keep[first] = True
    retrieved &= keep
    ids[q_of[retrieved], rank[retrieved]] = rel_ids[retrieved]
    protected = np.zeros(ids.shape, dtype=bool)
    protected[q_of[retrieved], rank[retrieved]] = True
    _fix_row_duplicates(rng, ids, protected)
    bounds = np.concatenate([[0], np.cumsum(n_rel)])
    rel_list, grade_list = rel_ids.tolist(), rel_grade.tolist()
    return (
        [rel_list[bounds[q] : bounds[q + 1]] for q in range(nq)],
        [grade_list[bounds[q] : bounds[q + 1]] for q in range(nq)],
    )


def _simple(name: str, seed: int, quick: bool) -> tuple[Qrels, Results]:
    spec = WORKLOADS[name]
    nq, dep = n_queries(name, quick), spec.depth
    rng = _rng(name, seed)
    ids = rng.integers(ID_LOW, ID_HIGH, size=(nq, dep))
    scores = _scores(rng, nq, dep, spec.kind)
    params = {
        "msmarco": (0.07, 0.85, ([1], [1.0])),
        "trecfile": (0.07, 0.85, ([1], [1.0])),
        "beir": (1.0, 0.75, ([1, 2], [0.6, 0.4])),
        "large": (0.03, 0.80, ([1], [1.0])),
    }[name]
    rel_ids, rel_grades = _sparse_relevance(rng, nq, dep, ids, *params)
    qids = _query_ids(nq, "Q")
    id_rows = _id_strings(ids)
    score_rows = scores.tolist()
    results = {q: dict(zip(d, s, strict=True)) for q, d, s in zip(qids, id_rows, score_rows, strict=True)}
    rel_strs = [[f"D{x}" for x in row] for row in rel_ids]
    qrels = {q: dict(zip(d, g, strict=True)) for q, d, g in zip(qids, rel_strs, rel_grades, strict=True)}
    return qrels, results


def _trecdl(seed: int, quick: bool) -> tuple[Qrels, Results]:
    spec = WORKLOADS["trecdl"]
    nq, dep = n_queries("trecdl", quick), spec.depth
    rng = _rng("trecdl", seed)
    ids = rng.integers(ID_LOW, ID_HIGH, size=(nq, dep))
    _fix_row_duplicates(rng, ids, np.zeros(ids.shape, dtype=bool))
    scores = _scores(rng, nq, dep, spec.kind)
    ranks = np.arange(dep)
    pick_w = 1.0 / (ranks + 20.0)
    pick_w /= pick_w.sum()
    grade_values, grade_p = [1, 2, 3], [0.5, 0.3, 0.2]
    qids = _query_ids(nq, "T")
    id_rows = _id_strings(ids)
    score_rows = scores.tolist()
    results: Results = {}
    qrels: Qrels = {}
    for q, qid in enumerate(qids):
        n_judged = int(rng.poisson(215))
        n_in = min(dep, round(n_judged * 0.55))
        judged_ranks = np.sort(rng.choice(dep, size=n_in, replace=False, p=pick_w))
        p_rel = 0.15 + 0.6 * np.exp(-judged_ranks / 150.0)
        rel = rng.random(n_in) < p_rel
        g_in = np.where(rel, rng.choice(grade_values, p=grade_p, size=n_in), 0)
        n_out = n_judged - n_in
        out_ids = rng.integers(ID_LOW, ID_HIGH, size=n_out)
        rel_out = rng.random(n_out) < 0.2
        g_out = np.where(rel_out, rng.choice(grade_values, p=grade_p, size=n_out), 0)
        row = id_rows[q]
        judged = {row[r]: g for r, g in zip(judged_ranks.tolist(), g_in.tolist(), strict=True)}
        for d, g in zip(out_ids.tolist(), g_out.tolist(), strict=True):
            judged.setdefault(f"D{d}", g)
        qrels[qid] = judged
        results[qid] = dict(zip(row, score_rows[q], strict=True))
    return qrels, results


def generate(name: str, seed: int = 0, quick: bool = False) -> tuple[Qrels, Results]:
    """Generate a workload (no caching)."""
    if name not in WORKLOADS:
        raise KeyError(f"unknown workload {name!r}; choose from {', '.join(WORKLOADS)}")
    if name == "trecdl":
        return _trecdl(seed, quick)
    return _simple(name, seed, quick)


def _tag(name: str, seed: int, quick: bool) -> str:
    return f"{name}-s{seed}-v{GENERATOR_VERSION}{'-quick' if quick else ''}"


def load(
    name: str, seed: int = 0, quick: bool = False, cache: str | os.PathLike[str] | None = None
) -> tuple[Qrels, Results]:
    """Load a workload from the pickle cache, generating and caching it on a miss."""
    path = cache_dir(cache) / f"{_tag(name, seed, quick)}.pkl"
    if path.exists():
        with path.open("rb") as f:
            return pickle.load(f)
    data = generate(name, seed, quick)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    with tmp.open("wb") as f:
        pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)
    return data


# --------------------------------------------------------------------------- TREC files


def write_trec(
    qrels: Qrels,
    results: Results,
    qrels_path: str | os.PathLike[str],
    run_path: str | os.PathLike[str],
    tag: str = "synthetic",
) -> None:
    """Write TREC qrels (``qid 0 docid rel``) and run (``qid Q0 docid rank score tag``) files.

    Run lines are in descending score order (stable for ties), ranks from 1.
    """
    with open(qrels_path, "w", encoding="utf-8") as f:
        for qid, docs in qrels.items():
            f.write("".join(f"{qid} 0 {d} {r}\n" for d, r in docs.items()))
    with open(run_path, "w", encoding="utf-8", buffering=1 << 22) as f:
        for qid, docs in results.items():
            ranked = sorted(docs.items(), key=lambda x: -x[1])
            f.write("".join(f"{qid} Q0 {d} {i} {s} {tag}\n" for i, (d, s) in enumerate(ranked, 1)))


def trec_files(seed: int = 0, quick: bool = False, cache: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
    """Paths of the ``trecfile`` workload's qrels and run files, written once into the cache dir."""
    d = cache_dir(cache)
    tag = _tag("trecfile", seed, quick)
    qrels_path, run_path = d / f"{tag}.qrels", d / f"{tag}.run"
    if not (qrels_path.exists() and run_path.exists()):
        qrels, results = generate("trecfile", seed, quick)
        tq, tr = qrels_path.with_suffix(f".qtmp{os.getpid()}"), run_path.with_suffix(f".rtmp{os.getpid()}")
        write_trec(qrels, results, tq, tr)
        tq.replace(qrels_path)
        tr.replace(run_path)
    return qrels_path, run_path


def ensure(name: str, seed: int = 0, quick: bool = False, cache: str | os.PathLike[str] | None = None) -> None:
    """Make sure a workload is in the cache (pickle, or TREC files for ``trecfile``)."""
    if name == "trecfile":
        trec_files(seed, quick, cache)
    else:
        path = cache_dir(cache) / f"{_tag(name, seed, quick)}.pkl"
        if not path.exists():
            load(name, seed, quick, cache)


def describe(qrels: Qrels, results: Results) -> dict[str, float]:
    """Summary statistics of a workload (for sanity checks and the README)."""
    n_res = sum(len(d) for d in results.values())
    n_judged = sum(len(d) for d in qrels.values())
    n_rel = sum(1 for d in qrels.values() for r in d.values() if r > 0)
    n_rel_retrieved = sum(1 for q, d in qrels.items() for doc, r in d.items() if r > 0 and doc in results.get(q, ()))
    n_ties = 0
    for docs in results.values():
        s = sorted(docs.values())
        n_ties += sum(1 for a, b in itertools.pairwise(s) if a == b)
    distinct = len({d for docs in results.values() for d in docs})
    return {
        "queries": len(results),
        "retrieved": n_res,
        "judged_per_query": n_judged / len(qrels),
        "relevant_per_query": n_rel / len(qrels),
        "relevant_retrieved_fraction": n_rel_retrieved / max(n_rel, 1),
        "tied_adjacent_fraction": n_ties / n_res,
        "distinct_doc_ids": distinct,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload", choices=list(WORKLOADS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="~20x fewer queries")
    p.add_argument("--cache-dir", default=None)
    p.add_argument("--write-trec", metavar="DIR", help="also write DIR/WORKLOAD.qrels and DIR/WORKLOAD.run")
    p.add_argument("--describe", action="store_true", help="print summary statistics")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    if args.workload == "trecfile":
        qp, rp = trec_files(args.seed, args.quick, args.cache_dir)
        print(f"trecfile: {qp} {rp} ({time.perf_counter() - t0:.1f} s)")
        if not (args.write_trec or args.describe):
            return 0
        qrels, results = generate("trecfile", args.seed, args.quick)
    else:
        qrels, results = load(args.workload, args.seed, args.quick, args.cache_dir)
        print(f"{args.workload}: {len(results)} queries ({time.perf_counter() - t0:.1f} s)")
    if args.write_trec:
        out = Path(args.write_trec)
        out.mkdir(parents=True, exist_ok=True)
        write_trec(qrels, results, out / f"{args.workload}.qrels", out / f"{args.workload}.run")
    if args.describe:
        for k, v in describe(qrels, results).items():
            print(f"  {k}: {v:.4g}" if isinstance(v, float) else f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
