"""One runner per tool, each computing BEIR's six measures (or the tool's nearest set).

``prepare(tool, qrels, results, ks)`` does everything that must stay OUTSIDE the timed region
(imports, building Haystack Document lists, ...) and returns a :class:`Prepared`:

* ``setup()`` (optional) runs before each timed call, outside the timer, and its return value is
  passed to ``call`` (BEIR gets a fresh copy of ``results`` this way, because it pops identical
  query/doc ids from ``results`` in place);
* ``call(arg)`` is the timed region.

Also here: :func:`pytrec_reference` (the per-query oracle ``ours`` is checked against),
:func:`compare_with_pytrec`, and the ``trecfile`` peer ``python benchmarks/runners.py pytrec-files
QRELS RUN -k ...`` (``pytrec_eval.parse_qrel`` + ``parse_run`` + ``RelevanceEvaluator.evaluate``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Qrels = dict[str, dict[str, int]]
Results = dict[str, dict[str, float]]

ALL_KS = [1, 3, 5, 10, 100, 1000]
# the four measures whose per-query values ``ours`` must reproduce from pytrec_eval (1e-12)
CHECKED = {"NDCG": "ndcg_cut_{k}", "MAP": "map_cut_{k}", "Recall": "recall_{k}", "P": "P_{k}"}
TOLERANCE = 1e-12


class Unavailable(RuntimeError):
    """The tool cannot run here (not installed, no such API, not applicable to the workload)."""


@dataclass
class Prepared:
    call: Callable[[Any], Any]
    setup: Callable[[], Any] | None = None
    # turns call's output into {"NDCG@10": mean, ...} (BEIR names), outside the timer
    means: Callable[[Any], dict[str, float]] | None = None
    info: dict[str, Any] = field(default_factory=dict)


def ks_for_depth(depth: int, ks: list[int] | None = None) -> list[int]:
    """The BEIR k values, dropping those deeper than the workload's ranking depth."""
    return [k for k in (ks or ALL_KS) if k <= depth]


def pytrec_measures(ks: list[int], recip_rank: bool = True) -> set[str]:
    kk = ",".join(map(str, ks))
    m = {f"map_cut.{kk}", f"ndcg_cut.{kk}", f"recall.{kk}", f"P.{kk}"}
    if recip_rank:
        m.add("recip_rank")
    return m


# --------------------------------------------------------------------------- tools


def _ours(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    try:
        from haystack_irmetrics import evaluate
    except ImportError as e:
        raise Unavailable(f"haystack_irmetrics is not importable ({e})") from e

    def call(_: Any) -> Any:
        return evaluate(qrels, results, k_values=ks, preset="beir")

    return Prepared(call, means=lambda res: dict(res.means))


def _pytrec_eval(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    import pytrec_eval

    measures = pytrec_measures(ks)

    def call(_: Any) -> Any:
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
        return evaluator.evaluate(results)

    def means(scores: dict[str, dict[str, float]]) -> dict[str, float]:
        n = len(scores)
        out = {
            f"{name}@{k}": sum(v[trec.format(k=k)] for v in scores.values()) / n
            for name, trec in CHECKED.items()
            for k in ks
        }
        out["RR (no cutoff)"] = sum(v["recip_rank"] for v in scores.values()) / n
        return out

    return Prepared(call, means=means)


def _beir(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    import logging

    from beir.retrieval.evaluation import EvaluateRetrieval

    logging.getLogger("beir").setLevel(logging.WARNING)

    def setup() -> Results:  # BEIR pops identical ids in place: give it its own copy
        return {q: dict(d) for q, d in results.items()}

    def call(res: Results) -> Any:
        ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(qrels, res, ks)
        mrr = EvaluateRetrieval.evaluate_custom(qrels, res, ks, "mrr")
        r_cap = EvaluateRetrieval.evaluate_custom(qrels, res, ks, "r_cap")
        return ndcg, _map, recall, precision, mrr, r_cap

    def means(out: tuple[dict[str, float], ...]) -> dict[str, float]:
        return {key: v for part in out for key, v in part.items()}

    return Prepared(call, setup, means)


def _ranx(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    from ranx import Qrels as RQrels
    from ranx import Run, evaluate

    names = {"ndcg": "NDCG", "map": "MAP", "recall": "Recall", "precision": "P", "mrr": "MRR"}
    metrics = [f"{m}@{k}" for k in ks for m in names]

    def call(_: Any) -> Any:
        rq = RQrels(qrels)
        run = Run(results)
        return evaluate(rq, run, metrics)

    def means(out: dict[str, float]) -> dict[str, float]:
        return {f"{names[m]}@{k}": float(v) for m, k, v in ((*key.split("@"), v) for key, v in out.items())}

    return Prepared(call, means=means, info={"cold_call": True, "numba_cache_files": _numba_cache_files()})


def _numba_cache_files() -> int:
    """How many numba cache index files ranx has on disk (0: its first call JIT-compiles everything)."""
    import os
    from pathlib import Path

    import ranx

    dirs = [Path(ranx.__file__).parent]
    if os.environ.get("NUMBA_CACHE_DIR"):
        dirs.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    return sum(1 for d in dirs for _ in d.rglob("*.nbi"))


def _ir_measures(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    import ir_measures
    from ir_measures import AP, RR, P, R, nDCG

    names = {"nDCG": "NDCG", "AP": "MAP", "R": "Recall", "P": "P", "RR": "MRR"}
    measures = [m @ k for k in ks for m in (nDCG, AP, R, P, RR)]

    def call(_: Any) -> Any:
        return ir_measures.calc_aggregate(measures, qrels, results)

    def means(out: dict[Any, float]) -> dict[str, float]:
        return {f"{names[m.NAME]}@{m['cutoff']}": float(v) for m, v in out.items()}

    return Prepared(call, means=means)


def _haystack_docs(qrels: Qrels, results: Results) -> tuple[list[str], list[list[Any]], list[list[Any]]]:
    """Haystack Document lists: ground truth = relevant docs (score = grade), retrieved in rank order."""
    from haystack import Document

    qids = [q for q in results if q in qrels]
    gt = [[Document(id=d, score=float(r)) for d, r in qrels[q].items() if r > 0] for q in qids]
    ret = [[Document(id=d, score=s) for d, s in sorted(results[q].items(), key=lambda x: -x[1])] for q in qids]
    return qids, gt, ret


def _haystack_evaluators() -> list[Any]:
    from haystack.components.evaluators import (
        DocumentMAPEvaluator,
        DocumentMRREvaluator,
        DocumentNDCGEvaluator,
        DocumentRecallEvaluator,
    )
    from haystack.components.evaluators.document_recall import RecallMode

    return [
        DocumentNDCGEvaluator(document_comparison_field="id"),
        DocumentMAPEvaluator(document_comparison_field="id"),
        DocumentMRREvaluator(document_comparison_field="id"),
        DocumentRecallEvaluator(mode=RecallMode.MULTI_HIT, document_comparison_field="id"),
    ]


_HAYSTACK_NAMES = {
    "DocumentNDCGEvaluator": "NDCG",
    "DocumentMAPEvaluator": "MAP",
    "DocumentMRREvaluator": "MRR",
    "DocumentRecallEvaluator": "Recall",
}


def _haystack(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    """Haystack 3.x's four built-in evaluators, each once on the whole rankings (no cutoff).

    This is the issue's yardstick: the four built-ins computing theirs at no cutoff. Matching is
    on ``Document.id``; recall in multi-hit mode (BEIR's Recall), not the default hit rate. Their
    values are reported at the ranking depth (``NDCG@100`` for 100 retrieved documents).
    """
    _, gt, ret = _haystack_docs(qrels, results)
    evaluators = _haystack_evaluators()
    depth = max(map(len, ret))

    def call(_: Any) -> Any:
        return {
            type(ev).__name__: ev.run(ground_truth_documents=gt, retrieved_documents=ret)["score"] for ev in evaluators
        }

    def means(out: dict[str, float]) -> dict[str, float]:
        return {f"{_HAYSTACK_NAMES[ev]}@{depth}": v for ev, v in out.items()}

    return Prepared(call, means=means, info={"queries": len(gt)})


def _haystack_per_k(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    """The four built-ins once per k on the top-k slice of each ranking (they have no k).

    What a Haystack user runs to get the same cutoffs as ours; reported beside the target, which
    uses :func:`_haystack`. The slices are built outside the timer.
    """
    _, gt, ret = _haystack_docs(qrels, results)
    sliced = {k: [r[:k] for r in ret] for k in ks}
    evaluators = _haystack_evaluators()

    def call(_: Any) -> Any:
        return {
            (type(ev).__name__, k): ev.run(ground_truth_documents=gt, retrieved_documents=sliced[k])["score"]
            for k in ks
            for ev in evaluators
        }

    def means(out: dict[tuple[str, int], float]) -> dict[str, float]:
        return {f"{_HAYSTACK_NAMES[ev]}@{k}": v for (ev, k), v in out.items()}

    return Prepared(call, means=means, info={"queries": len(gt)})


def _documents_api(ks: list[int]) -> tuple[Callable[[list, list], Any], str]:
    """Find our Haystack-Document entry point.

    Tried in order: ``haystack_irmetrics.evaluate_documents(gt, retrieved, k_values=...)``; then a
    component in ``haystack_irmetrics.components`` whose ``run`` takes ``ground_truth_documents`` and
    ``retrieved_documents`` (built with ``k_values`` and ``document_comparison_field="id"`` where its
    ``__init__`` accepts them).
    """
    import importlib
    import inspect

    try:
        pkg = importlib.import_module("haystack_irmetrics")
    except ImportError as e:
        raise Unavailable(f"haystack_irmetrics is not importable ({e})") from e
    fn = getattr(pkg, "evaluate_documents", None)
    if fn is not None:
        return (lambda gt, ret: fn(gt, ret, k_values=ks)), "haystack_irmetrics.evaluate_documents"
    try:
        comps = importlib.import_module("haystack_irmetrics.components")
    except ImportError as e:
        raise Unavailable(f"haystack_irmetrics has no documents API (no evaluate_documents, no components: {e})") from e
    found = [
        (name, cls)
        for name, cls in sorted(vars(comps).items(), key=lambda kv: (kv[0] != "IRMetricsEvaluator", kv[0]))
        if inspect.isclass(cls)
        and name.endswith("Evaluator")
        and callable(getattr(cls, "run", None))
        and {"ground_truth_documents", "retrieved_documents"} <= inspect.signature(cls.run).parameters.keys()
    ]
    if found:
        name, cls = found[0]
        init = inspect.signature(cls.__init__).parameters
        kwargs: dict[str, Any] = {}
        if "k_values" in init:
            kwargs["k_values"] = ks
        if "document_comparison_field" in init:
            kwargs["document_comparison_field"] = "id"
        run = cls(**kwargs).run
        shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        return (
            lambda gt, ret: run(ground_truth_documents=gt, retrieved_documents=ret)
        ), f"haystack_irmetrics.components.{name}({shown})"
    raise Unavailable("haystack_irmetrics.components has no evaluator taking ground_truth/retrieved documents")


def _ours_documents(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    """Our Haystack-Document path (see :func:`_documents_api`), on the same Document lists as ``haystack``."""
    fn, api = _documents_api(ks)
    _, gt, ret = _haystack_docs(qrels, results)

    def call(_: Any) -> Any:
        return fn(gt, ret)

    def means(out: Any) -> dict[str, float]:
        m = out.get("means") if isinstance(out, dict) else getattr(out, "means", None)
        return dict(m) if isinstance(m, dict) else {}

    return Prepared(call, means=means, info={"queries": len(gt), "api": api})


def _floor(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    """The issue's floor: every (doc id, value) pair of the inputs visited once at C level, nothing
    computed (``deque(maxlen=0)`` drains the iterator without keeping anything)."""
    from collections import deque
    from itertools import chain

    def call(_: Any) -> None:
        deque(chain.from_iterable(map(dict.items, results.values())), maxlen=0)
        deque(chain.from_iterable(map(dict.items, qrels.values())), maxlen=0)

    return Prepared(call)


def _floor_documents(qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    """The Document path's floor: every Document's id read once at C level (``attrgetter``), nothing
    computed. Any evaluator that matches on ids reads them at least once."""
    from collections import deque
    from itertools import chain
    from operator import attrgetter

    _, gt, ret = _haystack_docs(qrels, results)
    key = attrgetter("id")

    def call(_: Any) -> None:
        deque(map(key, chain.from_iterable(ret)), maxlen=0)
        deque(map(key, chain.from_iterable(gt)), maxlen=0)

    return Prepared(call)


RUNNERS: dict[str, Callable[[Qrels, Results, list[int]], Prepared]] = {
    "ours": _ours,
    "pytrec_eval": _pytrec_eval,
    "beir": _beir,
    "ranx": _ranx,
    "ir_measures": _ir_measures,
    "haystack": _haystack,
    "haystack_per_k": _haystack_per_k,
    "ours_documents": _ours_documents,
    "floor": _floor,
    "floor_documents": _floor_documents,
}


def prepare(tool: str, qrels: Qrels, results: Results, ks: list[int]) -> Prepared:
    if tool not in RUNNERS:
        raise KeyError(f"unknown tool {tool!r}; choose from {', '.join(RUNNERS)}")
    try:
        return RUNNERS[tool](qrels, results, ks)
    except ImportError as e:
        raise Unavailable(f"{tool} is not installed ({e})") from e


# --------------------------------------------------------------------------- exactness check


def pytrec_reference(qrels: Qrels, results: Results, ks: list[int]) -> dict[str, dict[str, float]]:
    import pytrec_eval

    return pytrec_eval.RelevanceEvaluator(qrels, pytrec_measures(ks, recip_rank=False)).evaluate(results)


def compare_with_pytrec(
    per_query: dict[str, dict[str, float]], ref: dict[str, dict[str, float]], ks: list[int]
) -> dict:
    """Compare ``ours``' per-query values with pytrec_eval's for NDCG/MAP/Recall/P at every k.

    Returns ``{"ok": bool, "compared": n, "max_abs_diff": x, "mismatches": [...]}`` (at most 5 listed).
    """
    worst = 0.0
    compared = 0
    bad: list[str] = []
    for name, trec in CHECKED.items():
        for k in ks:
            key, tkey = f"{name}@{k}", trec.format(k=k)
            ours = per_query.get(key)
            if ours is None:
                bad.append(f"{key}: missing from per_query")
                continue
            for qid, vals in ref.items():
                want = vals[tkey]
                got = ours.get(qid)
                if got is None:
                    bad.append(f"{key} {qid}: missing")
                    continue
                diff = abs(float(got) - want)
                compared += 1
                if diff > worst:
                    worst = diff
                if diff > TOLERANCE and len(bad) < 5:
                    bad.append(f"{key} {qid}: ours {got!r} vs pytrec_eval {want!r}")
    return {"ok": not bad, "compared": compared, "max_abs_diff": worst, "mismatches": bad[:5]}


# --------------------------------------------------------------------------- trecfile peer


def pytrec_files(qrels_path: str, run_path: str, ks: list[int]) -> dict[str, float]:
    """``pytrec_eval.parse_qrel`` + ``parse_run`` + ``RelevanceEvaluator.evaluate``; BEIR-style means."""
    import pytrec_eval

    with open(qrels_path, encoding="utf-8") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path, encoding="utf-8") as f:
        run = pytrec_eval.parse_run(f)
    scores = pytrec_eval.RelevanceEvaluator(qrels, pytrec_measures(ks)).evaluate(run)
    n = len(scores)
    means = {}
    for name, trec in CHECKED.items():
        for k in ks:
            t = trec.format(k=k)
            means[f"{name}@{k}"] = round(sum(v[t] for v in scores.values()) / n, 5)
    return means


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="trecfile peer: pytrec_eval parse + evaluate")
    sub = p.add_subparsers(dest="cmd", required=True)
    pf = sub.add_parser("pytrec-files")
    pf.add_argument("qrels")
    pf.add_argument("run")
    pf.add_argument("-k", default=",".join(map(str, ALL_KS)))
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    means = pytrec_files(args.qrels, args.run, [int(k) for k in args.k.split(",")])
    json.dump({"means": means, "inner_seconds": time.perf_counter() - t0}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
