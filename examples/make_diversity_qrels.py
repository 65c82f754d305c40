"""Write examples/data/diversity_qrels.txt, the TREC diversity qrels the docs' diversity commands read.

TREC's diversity qrels write ``query subtopic doc label`` (the Web track's layout, which ndeval reads). These
are a seeded assignment over the shipped sample's test qrels, for the 12 queries of ``good.trec`` and
``poor.trec`` (examples/make_click_data.py): each query has three subtopics; a document the sample judges
relevant keeps its label on one subtopic, or on two for label 2, drawn at random; a document judged 0 is
judged 0 on subtopic 1. So ``irmetrics evaluate examples/data/diversity_qrels.txt RUN -m alpha_nDCG@10,...``
scores the two rankers' coverage of the subtopics.

    python examples/make_diversity_qrels.py [FOLDER]     # default: examples/data

The same seed gives the same bytes (tests/test_clicks_cli.py checks the committed file against a fresh run).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import haystack_irmetrics
from haystack_irmetrics.io import read_qrels

QRELS_PATH = Path(haystack_irmetrics.__file__).parent / "datasets" / "sample" / "qrels" / "test.tsv"
SUBTOPICS = 3
QUERIES = 12  # the queries of good.trec and poor.trec


def main(folder: Path, seed: int = 40) -> None:
    judged = read_qrels(QRELS_PATH).data
    rng = np.random.default_rng(seed)
    lines = []
    for q in sorted(judged)[:QUERIES]:
        for d in sorted(judged[q]):
            label = int(judged[q][d])
            if label <= 0:
                lines.append(f"{q} 1 {d} 0\n")
                continue
            picked = rng.choice(SUBTOPICS, size=min(label, 2), replace=False)
            lines += [f"{q} {s + 1} {d} {label}\n" for s in sorted(picked.tolist())]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "diversity_qrels.txt").write_text("".join(lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "data")
