"""Write examples/data/ppi_qrels.tsv: human qrels of the shipped sample with which `irmetrics judge --ppi` can be
tried (docs/judging.md runs it).

Prediction-powered intervals need queries whose pool people judged in full (the labelled set) and queries with
holes. The sample's test qrels judge every relevant document of each query (a document's label is written
together with its text, see haystack_irmetrics/datasets/sample/README.md), so a document they do not judge for
a query answers none of its question. examples/data/good.trec and poor.trec retrieve for 12 of the test queries;
this script picks half of them at random (seeded): their pool, the two runs' top 10, is judged in full (each pool
document the qrels leave out gets the 0 the sample's construction gives it). The other half keep a random half of
their judgments, so their pools have holes. The queries no run retrieves for keep their judgments.

    python examples/make_ppi_qrels.py [FOLDER]     # default: examples/data

The same seed gives the same bytes (tests/test_judge_trust.py checks the committed file against a fresh run).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from haystack_irmetrics.io.trec import write_qrels

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_QRELS = ROOT / "haystack_irmetrics" / "datasets" / "sample" / "qrels" / "test.tsv"
RUNS = (ROOT / "examples" / "data" / "good.trec", ROOT / "examples" / "data" / "poor.trec")
DEPTH = 10


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        q, d, label = line.split("\t")
        out.setdefault(q, {})[d] = int(label)
    return out


def _pool(paths: tuple[Path, ...], depth: int) -> dict[str, set[str]]:
    """Each query's top ``depth`` documents of each run, in trec_eval's order (score, then doc id, descending)."""
    pool: dict[str, set[str]] = {}
    for path in paths:
        run: dict[str, list[tuple[float, str]]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            q, _, d, _, score, _ = line.split()
            run.setdefault(q, []).append((float(score), d))
        for q, docs in run.items():
            pool.setdefault(q, set()).update(d for _, d in sorted(docs, reverse=True)[:depth])
    return pool


def make(seed: int = 42) -> dict[str, dict[str, int]]:
    """The qrels: ``{query: {doc: label}}``."""
    rng = random.Random(seed)
    qrels = _qrels(SAMPLE_QRELS)
    pool = _pool(RUNS, DEPTH)
    pooled = sorted(q for q in pool if q in qrels)
    full = set(rng.sample(pooled, len(pooled) // 2))
    out: dict[str, dict[str, int]] = {}
    for q in sorted(qrels):
        if q not in pool:  # a query no run retrieves for: its judgments as they are
            out[q] = dict(qrels[q])
        elif q in full:
            out[q] = dict(qrels[q])
            for d in sorted(pool.get(q, set()) - set(qrels[q])):
                out[q][d] = 0
        else:
            kept = rng.sample(sorted(qrels[q]), len(qrels[q]) // 2)
            out[q] = {d: qrels[q][d] for d in sorted(kept)}
    return out


def main(folder: Path) -> list[Path]:
    """Write FOLDER/ppi_qrels.tsv; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    return [write_qrels(make(), folder / "ppi_qrels.tsv", layout="beir")]


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "examples" / "data")
