"""Runs over the packaged sample dataset for the report tests (page and browser): three systems of
increasing quality, written as TREC run files."""

from __future__ import annotations

import json
import random
from pathlib import Path

from haystack_irmetrics.io import read_qrels, write_trec_run

SAMPLE = Path(__file__).resolve().parent.parent / "haystack_irmetrics" / "datasets" / "sample"
QRELS = SAMPLE / "qrels" / "test.tsv"
NAMES = ("bm25", "dense", "hybrid")


def sample_runs(folder: Path) -> dict[str, Path]:
    """``{name: TREC run path}``: 30 random documents per query plus some of its judged ones, the judged
    ones boosted more the better the system (ties included: every tenth score is rounded)."""
    docs = [json.loads(line)["_id"] for line in (SAMPLE / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    qrels = read_qrels(QRELS)
    paths = {}
    for seed, name in enumerate(NAMES, 1):
        rng = random.Random(seed)
        run = {}
        for qid in qrels.qids:
            judged = sorted(qrels.data[qid])
            chosen = set(rng.sample(docs, 30)) | set(rng.sample(judged, min(len(judged), seed + 1)))
            run[qid] = {}
            for i, d in enumerate(sorted(chosen)):
                score = rng.random() + (0.5 * seed / 3 if qrels.data[qid].get(d, 0) > 0 else 0.0)
                run[qid][d] = round(score, 1) if i % 10 == 0 else score
        paths[name] = folder / f"{name}.trec"
        write_trec_run(run, paths[name], tag=name)
    return paths
