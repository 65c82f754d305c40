"""Write the click logs and runs of examples/data/ that the docs' `irmetrics clicks` and `interleave` commands read.

A seeded simulation over the shipped sample dataset (its test qrels as the true relevance): two rankers
of the judged documents, ``good`` (label + a little noise) and ``poor`` (label + much noise), each a TREC
run of 10 documents a query.

* ``click_log.csv``: 1,500 impressions of the first 12 test queries, each a query and one of the two rankers drawn at random; clicks
  drawn from a DBN (attractiveness 0.1 / 0.5 / 0.85 and satisfaction 0.1 / 0.4 / 0.8 by label 0 / 1 / 2,
  continuation 0.9);
* ``randomized_clicks.csv``: 1,000 impressions of ``good``'s top 5 in a uniformly random order (so every
  document's propensity at every position is 0.2, the ``propensity`` column), clicks from a PBM;
* ``interleaved_clicks.csv``: 600 impressions (the same queries) of the two rankers team-draft interleaved (``good`` is
  team a), clicks from the same DBN, each row with its team;
* ``timed_clicks.csv``: a week of traffic (2026-03-02 to 03-08, 60 impressions a day at random times, each row with
  its ``timestamp``) showing ``good``'s top 5, except on 2026-03-06, a bad deploy, ``poor``'s; clicks from the same
  DBN (``irmetrics clicks windows`` flags that day).

    python examples/make_click_data.py [FOLDER]     # default: examples/data

The same seed gives the same bytes (tests/test_clicks_cli.py checks the committed files against a fresh run).
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import numpy as np

import haystack_irmetrics
from haystack_irmetrics.clicks.interleaving import interleave, query_rng
from haystack_irmetrics.clicks.simulate import model_with, sessions_from_rankings, simulate

QRELS_PATH = Path(haystack_irmetrics.__file__).parent / "datasets" / "sample" / "qrels" / "test.tsv"
ATTRACT = {0: 0.1, 1: 0.5, 2: 0.85}
SATISFY = {0: 0.1, 1: 0.4, 2: 0.8}


def qrels() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in QRELS_PATH.read_text().splitlines()[1:]:
        q, d, label = line.split("\t")
        out.setdefault(q, {})[d] = int(label)
    return out


def rankers(judged: dict[str, dict[str, int]], seed: int = 33) -> dict[str, dict[str, list[str]]]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, noise in (("good", 0.4), ("poor", 2.5)):
        run = {}
        for q in sorted(judged):
            scores = {d: judged[q][d] + noise * rng.standard_normal() for d in sorted(judged[q])}
            run[q] = sorted(scores, key=lambda d: -scores[d])[:10]
        out[name] = run
    return out


def clicks(judged, shown, seed: int):
    model = model_with(
        "dbn",
        shown,
        attractiveness=lambda q, d: ATTRACT[judged[q][d]],
        satisfaction=lambda q, d: SATISFY[judged[q][d]],
        continuation=0.9,
    )
    return simulate(model, shown, seed).clicks


def main(folder: Path) -> None:
    judged = qrels()
    runs = rankers(judged)
    queries = sorted(judged)[:12]
    rng = np.random.default_rng(34)
    folder.mkdir(parents=True, exist_ok=True)
    for name, run in runs.items():
        lines = [f"{q} Q0 {d} {r + 1} {10 - r} {name}\n" for q in queries for r, d in enumerate(run[q])]
        (folder / f"{name}.trec").write_text("".join(lines))

    picks = [(queries[rng.integers(len(queries))], ("good", "poor")[rng.integers(2)]) for _ in range(1500)]
    shown = sessions_from_rankings([(q, runs[k][q]) for q, k in picks])
    drawn = clicks(judged, shown, 35)
    rows = ["session,query_id,doc_id,position,click\n"]
    for s, (q, k) in enumerate(picks):
        rows += [f"s{s:03d},{q},{d},{r + 1},{int(drawn[s, r])}\n" for r, d in enumerate(runs[k][q])]
    (folder / "click_log.csv").write_text("".join(rows))

    impressions = []
    for s in range(600):
        q = queries[rng.integers(len(queries))]
        impressions.append((q, interleave(runs["good"][q], runs["poor"][q], rng=query_rng(s, q), length=10)))
    shown = sessions_from_rankings([(q, [d for d, _, _ in merged]) for q, merged in impressions])
    drawn = clicks(judged, shown, 36)
    rows = ["session,query_id,doc_id,position,click,team\n"]
    for s, (q, merged) in enumerate(impressions):
        rows += [f"i{s:03d},{q},{d},{r + 1},{int(drawn[s, r])},{t}\n" for r, (d, t, _) in enumerate(merged)]
    (folder / "interleaved_clicks.csv").write_text("".join(rows))

    picks = [queries[rng.integers(len(queries))] for _ in range(1000)]
    orders = [[runs["good"][q][i] for i in rng.permutation(5)] for q in picks]
    shown = sessions_from_rankings(list(zip(picks, orders, strict=True)))
    pbm = model_with(
        "pbm", shown, attractiveness=lambda q, d: ATTRACT[judged[q][d]], examination=[1.0, 0.7, 0.5, 0.35, 0.25]
    )
    drawn = simulate(pbm, shown, 37).clicks
    rows = ["session,query_id,doc_id,position,click,propensity\n"]
    for s, (q, docs) in enumerate(zip(picks, orders, strict=True)):
        rows += [f"r{s:03d},{q},{d},{r + 1},{int(drawn[s, r])},0.2\n" for r, d in enumerate(docs)]
    (folder / "randomized_clicks.csv").write_text("".join(rows))

    rng = np.random.default_rng(38)  # its own generator: the files above keep their bytes
    start = datetime.datetime(2026, 3, 2, tzinfo=datetime.timezone.utc)
    timed = []
    for day in range(7):
        for _ in range(60):
            q = queries[rng.integers(len(queries))]
            when = start + datetime.timedelta(days=day, seconds=int(rng.integers(86_400)))
            timed.append((q, runs["poor" if day == 4 else "good"][q][:5], when))
    drawn = clicks(judged, sessions_from_rankings([(q, docs) for q, docs, _ in timed]), 39)
    rows = ["session,query_id,doc_id,position,click,timestamp\n"]
    for s, (q, docs, when) in enumerate(timed):
        at = f"{when:%Y-%m-%dT%H:%M:%SZ}"
        rows += [f"t{s:03d},{q},{d},{r + 1},{int(drawn[s, r])},{at}\n" for r, d in enumerate(docs)]
    (folder / "timed_clicks.csv").write_text("".join(rows))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "data")
