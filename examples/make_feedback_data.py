"""Write the small feedback log and run of examples/data/ that the docs' `irmetrics feedback` commands read.

A seeded simulation written for this project: 16 queries, each shown to 7 users (on mobile or desktop)
with its top 5 documents; some users vote a document up or down, a few change their vote later (the
later vote has a later timestamp), an empty vote is a document shown without feedback. The new
system's run ranks each query's 10 candidate documents, 5 of which nobody was ever shown.

    python examples/make_feedback_data.py [FOLDER]     # default: examples/data

writes FOLDER/feedback_log.csv (query_id, doc_id, position, vote, user_id, ts, device) and
FOLDER/new.trec. The same seed gives the same bytes (tests/test_docs_commands.py checks the
committed files against a fresh run).
"""

from __future__ import annotations

import csv
import random
import sys
from pathlib import Path

COLUMNS = ("query_id", "doc_id", "position", "vote", "user_id", "ts", "device")


def simulate(seed: int = 30) -> tuple[list[dict[str, object]], dict[str, dict[str, float]]]:
    """The log rows and the new system's run ``{qid: {doc: score}}``."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    run: dict[str, dict[str, float]] = {}
    for q in range(1, 17):
        qid = f"q{q:02d}"
        docs = [f"{qid}-d{i:02d}" for i in range(1, 11)]
        quality = {d: round(rng.random() ** 1.5, 3) for d in docs}  # the chance a user finds it relevant
        shown = docs[:5]  # the logged system always showed these five, in an order that varies a little
        for session in range(7):
            user = f"u{rng.randrange(1, 41):02d}"
            device = rng.choice(("mobile", "desktop"))
            order = sorted(shown, key=lambda d: -quality[d] + rng.gauss(0, 0.3))
            hour = 9 + session
            for position, doc in enumerate(order, 1):
                vote = ""
                if rng.random() < 0.8 / position**0.5:  # users vote less further down
                    vote = "up" if rng.random() < quality[doc] else "down"
                ts = f"2026-03-{q:02d}T{hour:02d}:{position:02d}:00Z"
                rows.append(dict(zip(COLUMNS, (qid, doc, position, vote, user, ts, device), strict=True)))
                if vote and rng.random() < 0.08:  # the same user changes their mind later
                    changed = "down" if vote == "up" else "up"
                    later = f"2026-03-{q:02d}T{hour:02d}:{position + 10:02d}:30Z"
                    rows.append(dict(zip(COLUMNS, (qid, doc, position, changed, user, later, device), strict=True)))
        # The new system sees all ten candidates: closer to the true order, but five were never shown.
        run[qid] = {d: round(quality[d] + rng.gauss(0, 0.15), 4) for d in docs}
    return rows, run


def main(folder: str | Path | None = None) -> list[Path]:
    """Write ``feedback_log.csv`` and ``new.trec`` into ``folder`` (default: ``examples/data``); return both."""
    out = Path(folder) if folder is not None else Path(__file__).resolve().parent / "data"
    out.mkdir(parents=True, exist_ok=True)
    rows, run = simulate()
    log = out / "feedback_log.csv"
    with open(log, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    trec = out / "new.trec"
    lines = []
    for qid, scores in run.items():
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        lines += [f"{qid} Q0 {doc} {rank} {score:.4f} new" for rank, (doc, score) in enumerate(ranked, 1)]
    trec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [log, trec]


if __name__ == "__main__":
    for path in main(sys.argv[1] if len(sys.argv) > 1 else None):
        print(path)
