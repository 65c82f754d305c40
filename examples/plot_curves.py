"""Plot two BM25 systems on the shipped sample dataset: P-R curves, gain curves, NDCG@k and per-query spread.

System "bm25" indexes title and text; "bm25-title" indexes titles only. Both retrieve the top 100 of the
360-document sample (``haystack_irmetrics/datasets/sample``) for its test queries. The example prints the
numbers behind the figures and writes four PNGs (and the P-R curves as SVG too).

Run: python examples/plot_curves.py [OUTPUT_DIR]   (default: ./irmetrics_plots; needs matplotlib)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_irmetrics import evaluate
from haystack_irmetrics.core.curves import interpolated_pr
from haystack_irmetrics.io import read_qrels
from haystack_irmetrics.plots import (
    plot_gain_curves,
    plot_pr_curves,
    plot_runs_metric_vs_k,
    plot_runs_score_distribution,
)
from haystack_irmetrics.stats.correlation import per_query_correlation

SAMPLE = Path(__file__).resolve().parent.parent / "haystack_irmetrics" / "datasets" / "sample"


def bm25_run(queries: dict[str, str], docs: list[dict], field: str) -> dict[str, dict[str, float]]:
    store = InMemoryDocumentStore()
    text = (lambda d: d["title"]) if field == "title" else (lambda d: f"{d['title']} {d['text']}")
    store.write_documents([Document(id=d["_id"], content=text(d)) for d in docs])
    retriever = InMemoryBM25Retriever(store, top_k=100)
    return {q: {d.id: d.score for d in retriever.run(query=t)["documents"]} for q, t in queries.items()}


def main(out_dir: Path) -> None:
    qrels = read_qrels(SAMPLE / "qrels" / "test.tsv")
    queries = {}
    for line in (SAMPLE / "queries.jsonl").read_text().splitlines():
        row = json.loads(line)
        if qrels.judged(row["_id"]):
            queries[row["_id"]] = row["text"]
    docs = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    runs = {"bm25": bm25_run(queries, docs, "all"), "bm25-title": bm25_run(queries, docs, "title")}

    results = {}
    for name, run in runs.items():
        res = results[name] = evaluate(qrels, run, [10], measures=["NDCG", "nDCG_exp", "P", "iP_avg", "Rprec"])
        pr = interpolated_pr(qrels, run)
        print(f"{name:10} " + "  ".join(f"{m} {v:.4f}" for m, v in res.means.items()) + f"  P-R area {pr.area():.4f}")
    tau = per_query_correlation(results["bm25"], results["bm25-title"], "NDCG@10", "kendall")
    print(f"Kendall tau of per-query NDCG@10 between the systems: {tau.statistic:.4f} over {tau.n} queries")

    written = [
        plot_pr_curves(qrels, runs, out_dir / "pr_curves.png"),
        plot_pr_curves(qrels, runs, out_dir / "pr_curves.svg"),
        plot_gain_curves(qrels, runs, out_dir / "gain_curves.png", depth=10),
        plot_runs_metric_vs_k(qrels, runs, out_dir / "ndcg_vs_k.png", measure="NDCG", ks=[1, 3, 5, 10, 20, 50, 100]),
        plot_runs_score_distribution(qrels, runs, out_dir / "ndcg10_per_query.png", measure="NDCG@10"),
    ]
    for path in written:
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("irmetrics_plots"))
