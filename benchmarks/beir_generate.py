"""Generate a BEIR-format dataset of any size: Zipfian vocabulary, queries drawn from their relevant
documents, graded qrels. For the scale runs of ``irmetrics beir`` (docs/beir.md, "Scale").

    python benchmarks/beir_generate.py OUT_DIR [--docs 1000000] [--queries 10000] [--seed 0]

Writes ``OUT_DIR/corpus.jsonl``, ``OUT_DIR/queries.jsonl`` and ``OUT_DIR/qrels/test.tsv``, as BEIR does.

- Vocabulary: ``--vocab`` pseudo-words (letters, 3 to 10 long); word ``r`` (by rank) is drawn with
  probability proportional to ``1 / r ** --zipf`` (natural text: about 1.07).
- Documents: a title of 3 to 10 words and a text of 20 to 200 words (uniform), each word drawn Zipfian;
  written in blocks of 50,000, so memory stays small whatever ``--docs``.
- Queries: each has 1 to 5 relevant documents (grade 2 for the first, then 1 or 2); its text is 3 to 8
  words taken from its first relevant document's text, half of them replaced by Zipfian noise words,
  so BM25 ranks the relevant document high but not always first. Relevant documents are distinct
  across queries.

The same arguments give the same files (numpy's PCG64 with ``--seed``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

BLOCK = 50_000


def vocabulary(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` distinct pseudo-words of 3 to 10 lowercase letters."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words: dict[str, None] = {}
    while len(words) < n:
        lengths = rng.integers(3, 11, size=n)
        for length in lengths:
            words.setdefault("".join(rng.choice(letters, size=length)), None)
            if len(words) == n:
                break
    return np.array(list(words))


def zipf_sampler(n: int, s: float, rng: np.random.Generator):
    """A function drawing ``size`` word ranks with probability proportional to ``1 / rank ** s``."""
    cdf = np.cumsum(1.0 / np.arange(1, n + 1) ** s)
    cdf /= cdf[-1]
    return lambda size: np.minimum(np.searchsorted(cdf, rng.random(size)), n - 1)


def generate(out: Path, n_docs: int, n_queries: int, seed: int = 0, vocab: int = 200_000, zipf: float = 1.07) -> None:
    """Write the three files of a BEIR dataset to ``out``."""
    rng = np.random.default_rng(seed)
    words = vocabulary(vocab, rng)
    draw = zipf_sampler(vocab, zipf, rng)
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    n_rel = rng.integers(1, 6, size=n_queries)
    relevant = rng.choice(n_docs, size=int(n_rel.sum()), replace=False)
    first_of_query = dict(zip(relevant[np.cumsum(n_rel) - n_rel].tolist(), range(n_queries)))
    query_text: dict[int, str] = {}
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as corpus:
        for start in range(0, n_docs, BLOCK):
            count = min(BLOCK, n_docs - start)
            title_len = rng.integers(3, 11, size=count)
            text_len = rng.integers(20, 201, size=count)
            tokens = words[draw(int(title_len.sum() + text_len.sum()))]
            pos = 0
            lines = []
            for i in range(count):
                title = " ".join(tokens[pos : pos + title_len[i]])
                pos += title_len[i]
                text_words = tokens[pos : pos + text_len[i]]
                pos += text_len[i]
                doc = start + i
                lines.append(json.dumps({"_id": f"d{doc}", "title": title, "text": " ".join(text_words)}) + "\n")
                if doc in first_of_query:
                    length = int(rng.integers(3, 9))
                    picked = list(rng.choice(text_words, size=min(length, len(text_words)), replace=False))
                    noise = words[draw(len(picked))]
                    keep = rng.random(len(picked)) < 0.5
                    query_text[first_of_query[doc]] = " ".join(
                        p if k else str(w) for p, k, w in zip(picked, keep, noise)
                    )
            corpus.writelines(lines)
    with (out / "queries.jsonl").open("w", encoding="utf-8") as queries:
        for q in range(n_queries):
            queries.write(json.dumps({"_id": f"q{q}", "text": query_text[q]}) + "\n")
    with (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        pos = 0
        for q in range(n_queries):
            for j in range(n_rel[q]):
                grade = 2 if j == 0 else int(rng.integers(1, 3))
                qrels.write(f"q{q}\td{relevant[pos]}\t{grade}\n")
                pos += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocab", type=int, default=200_000)
    parser.add_argument("--zipf", type=float, default=1.07)
    args = parser.parse_args()
    generate(args.out, args.docs, args.queries, args.seed, args.vocab, args.zipf)


if __name__ == "__main__":
    main()
