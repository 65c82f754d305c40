"""One honest experiment with a model judge (docs/judging.md): SciFact, half of the queries' human qrels hidden,
the holes of three runs' top 10 filled by the MiniLM score judge, and everything compared with the full human
qrels.

    python examples/judge_experiment.py RUNS_FOLDER [--data SCIFACT] [--depth 10] [--seed 0]

RUNS_FOLDER holds ``bm25/scifact/run.trec``, ``dense/scifact/run.trec`` and ``hybrid/scifact/run.trec``
(``irmetrics beir scifact --retriever R -o RUNS_FOLDER/R``). SciFact's qrels list relevant pairs only; as BEIR
does, an unjudged document counts as non-relevant, so a query's human qrels judge its whole pool.

1. Half of the 300 test queries (seeded) keep their qrels (the labelled queries); the others' are hidden.
2. The MiniLM judge (all-MiniLM-L6-v2, cosine of the embeddings) learns its cut point on the labelled queries'
   pools (a cited abstract is relevant, any other pooled abstract not), then labels every pool pair.
3. Against the full human qrels it reports: Cohen's kappa on the hidden queries' pool pairs; each run's NDCG@10
   with the full qrels (the truth), with the labelled half alone, with the holes filled; Kendall's tau and tau_AP
   between the systems' orders; and PPI's interval of each run's NDCG@10 and of each difference (labelled set:
   the kept queries), with whether it covers the truth.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from haystack_irmetrics import evaluate  # noqa: E402
from haystack_irmetrics.io import read_run  # noqa: E402
from haystack_irmetrics.io.beir_data import read_beir_corpus, read_beir_qrels_tsv, read_beir_queries  # noqa: E402
from haystack_irmetrics.judges.agreement import label_agreement, system_agreement  # noqa: E402
from haystack_irmetrics.judges.judge import ScoreJudge, learn_cut_points  # noqa: E402
from haystack_irmetrics.judges.ppi import ppi_report  # noqa: E402
from haystack_irmetrics.pooling import pool_runs  # noqa: E402

MEASURE = "NDCG@10"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path)
    default = Path(os.environ.get("IRMETRICS_SHARED_DATA", ROOT.parent / "shared" / "data")) / "scifact"
    parser.add_argument("--data", type=Path, default=default)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from haystack_integrations.components.embedders.sentence_transformers import SentenceTransformersDocumentEmbedder

    from haystack_irmetrics.beir.models import resolve_model

    qrels = read_beir_qrels_tsv(args.data / "qrels" / "test.tsv")
    queries = read_beir_queries(args.data / "queries.jsonl")
    corpus = read_beir_corpus(args.data / "corpus.jsonl")
    runs = {r: read_run(args.runs / r / "scifact" / "run.trec").data for r in ("bm25", "dense", "hybrid")}
    runs = {r: {q: docs for q, docs in run.items() if q in qrels} for r, run in runs.items()}
    kept = set(random.Random(args.seed).sample(sorted(qrels), len(qrels) // 2))
    human = {q: docs for q, docs in qrels.items() if q in kept}

    pool = pool_runs(list(runs.values()), list(runs), args.depth).pairs()
    text = {d: f"{corpus[d]['title'] or ''} {corpus[d]['text'] or ''}".strip() for _, d in pool}
    judge = ScoreJudge(
        SentenceTransformersDocumentEmbedder(model=resolve_model("all-MiniLM-L6-v2"), progress_bar=False), max_grade=1
    )
    scores = judge.score_pairs([(queries[q] or "", text[d]) for q, d in pool])
    truth_label = {(q, d): int(qrels[q].get(d, 0) > 0) for q, d in pool}
    train = [i for i, (q, _) in enumerate(pool) if q in kept]
    cuts = learn_cut_points([scores[i] for i in train], [truth_label[pool[i]] for i in train], 1)
    model_label = {pair: int(s >= cuts[0]) for pair, s in zip(pool, scores)}

    model = {}
    for (q, d), label in model_label.items():
        model.setdefault(q, {})[d] = label
    filled = {q: dict(docs) for q, docs in human.items()}
    for (q, d), label in model_label.items():
        if q not in kept:
            filled.setdefault(q, {})[d] = label
    hidden_pairs = [p for p in pool if p[0] not in kept]
    kappa = label_agreement([truth_label[p] for p in hidden_pairs], [model_label[p] for p in hidden_pairs])

    def mean(qs, run):
        return sum(evaluate(qs, run, None, measures=[MEASURE]).per_query[MEASURE].values()) / len(run)

    truth = {r: mean(qrels, run) for r, run in runs.items()}
    half = {r: mean(human, {q: d for q, d in run.items() if q in kept}) for r, run in runs.items()}
    naive = {r: mean(filled, run) for r, run in runs.items()}
    ppi = ppi_report(runs, human, model, filled, sorted(kept), MEASURE, alpha=0.05)
    order = system_agreement(truth, naive)

    print(
        f"SciFact test, {len(qrels)} queries, {len(kept)} keep their qrels; pool of the top {args.depth}: "
        f"{len(pool)} pairs, {len(hidden_pairs)} of hidden queries"
    )
    print(
        f"MiniLM cut point {cuts[0]:.4f} (cosine); on the hidden queries' pool pairs: kappa "
        f"{kappa['kappa']:.3f}, confusion {kappa['confusion']}"
    )
    print()
    print(f"| run | {MEASURE}, full qrels | labelled half only | holes filled | PPI estimate [95% interval] | covers |")
    print("|---|---|---|---|---|---|")
    for r in runs:
        row = ppi.runs[r]
        covers = row["low"] <= truth[r] <= row["high"]
        print(
            f"| {r} | {truth[r]:.4f} | {half[r]:.4f} | {naive[r]:.4f} | {row['estimate']:.4f} "
            f"[{row['low']:.4f}, {row['high']:.4f}] | {'yes' if covers else 'no'} |"
        )
    print()
    print("| difference | full qrels | holes filled | PPI estimate [95% interval] | covers |")
    print("|---|---|---|---|---|")
    for name, row in ppi.differences.items():
        a, b = name.split(" - ")
        t, n = truth[a] - truth[b], naive[a] - naive[b]
        covers = row["low"] <= t <= row["high"]
        print(
            f"| {name} | {t:+.4f} | {n:+.4f} | {row['estimate']:+.4f} [{row['low']:+.4f}, {row['high']:+.4f}] | "
            f"{'yes' if covers else 'no'} |"
        )
    print()
    tau = "n/a" if order["tau"] is None else f"{order['tau']:.3f}"
    print(
        f"systems' order, full qrels vs holes filled: Kendall tau {tau}, tau_AP {order['tau_ap']:.3f}, "
        f"swaps {order['swaps'] or 'none'}"
    )


if __name__ == "__main__":
    main()
