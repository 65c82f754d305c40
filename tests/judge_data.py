"""A small judging case for the judge's tests and benchmark: a BEIR folder (corpus, queries, human qrels) and
TREC runs whose top k leave holes, with the "true" grade of every (query, document) pair the test server
answers from."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Case:
    folder: Path
    qrels: Path
    runs: list[Path]
    labels: dict[tuple[str, str], int]  # (query text, document text as the judge sends it) -> grade
    truth: dict[str, dict[str, int]]  # qid -> doc -> grade, every pair


def make_case(
    folder: Path,
    *,
    n_docs: int = 40,
    n_queries: int = 5,
    judged: int = 3,
    runs: int = 2,
    per_run: int = 12,
    seed: int = 1,
) -> Case:
    """Write the case into ``folder``: ``corpus.jsonl``, ``queries.jsonl``, ``qrels.tsv`` (``judged`` human
    labels per query, taken from the truth) and ``run{i}.trec``."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    docs = {f"d{i}": {"title": f"T{i}", "text": f"text of document {i} about topic {i % 7}"} for i in range(n_docs)}
    queries = {f"q{j}": f"what is topic {j % 7} number {j}" for j in range(n_queries)}
    truth = {q: {d: rng.randrange(4) for d in docs} for q in queries}
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, **v}) + "\n" for k, v in docs.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items()))
    qrels = folder / "qrels.tsv"
    lines = ["query-id\tcorpus-id\tscore"]
    for q in queries:
        for d in rng.sample(sorted(docs), judged):
            lines.append(f"{q}\t{d}\t{truth[q][d]}")
    qrels.write_text("\n".join(lines) + "\n")
    paths = []
    for r in range(runs):
        path = folder / f"run{r}.trec"
        with open(path, "w") as f:
            for q in queries:
                for rank, i in enumerate(rng.sample(range(n_docs), per_run)):
                    f.write(f"{q} Q0 d{i} {rank + 1} {per_run - rank} run{r}\n")
        paths.append(path)
    labels = {(queries[q], f"{docs[d]['title']} {docs[d]['text']}"): truth[q][d] for q in queries for d in docs}
    return Case(folder, qrels, paths, labels, truth)
