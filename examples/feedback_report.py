"""A production-style feedback log -> judgments -> the logged system vs a new one, with a full report.

A seeded simulation of a search team's log: 400 queries, each shown several times to different users
on mobile or desktop, thumbs up / down on some results, a user sometimes changing a vote, and a few
broken rows. The new system ranks better but also surfaces documents nobody has voted on, which is
why full-list scores, condensed-list scores and Judged@k are reported side by side.

Run: python examples/feedback_report.py [REPORT_DIR]
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

import polars as pl

from haystack_irmetrics.feedback import Strategy, evaluate_feedback
from haystack_irmetrics.io import write_trec_run


def simulate(folder: Path, seed: int = 7) -> tuple[Path, Path]:
    """Write log.parquet (one row per shown document) and new_system.trec; return both paths."""
    rng = random.Random(seed)
    rows, run = [], {}
    for q in range(400):
        docs = [f"doc{q}-{i}" for i in range(30)]
        quality = {d: rng.random() ** 2 for d in docs}  # the chance a user finds the document relevant
        for session in range(rng.randrange(2, 6)):
            user = f"user{rng.randrange(300)}"
            device = rng.choice(["mobile", "desktop"])
            shown = sorted(docs[:12], key=lambda d: -quality[d] + rng.gauss(0, 0.5))[:10]
            for position, d in enumerate(shown, 1):
                vote = None
                if rng.random() < 0.35 / position**0.5:  # users vote less further down
                    vote = "up" if rng.random() < quality[d] else "down"
                ts = session * 100 + position
                rows.append(
                    {
                        "query_id": f"q{q}",
                        "doc_id": d,
                        "position": position,
                        "vote": vote,
                        "user_id": user,
                        "ts": ts,
                        "device": device,
                    }
                )
                if vote and rng.random() < 0.05:  # the same user changes their mind later
                    rows.append({**rows[-1], "vote": "down" if vote == "up" else "up", "ts": ts + 50})
        # The new system sees all 30 documents: closer to the true order, but 18 of them were never shown.
        run[f"q{q}"] = {d: quality[d] + rng.gauss(0, 0.1) for d in docs}
    for i in range(3):  # broken rows: a missing document id, a vote nobody can read
        rows.insert(1000 * (i + 1), {**rows[0], "doc_id": None if i < 2 else "doc0-1", "vote": "up" if i < 2 else "??"})
    log = folder / "log.parquet"
    pl.DataFrame(rows).write_parquet(log)
    write_trec_run(run, folder / "new_system.trec", tag="new")
    return log, folder / "new_system.trec"


def main(report_dir: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log, run = simulate(Path(tmp))
        ev = evaluate_feedback(
            log,
            {"new": run},
            strategy=Strategy("wilson", dedup="last", min_votes=1),
            threshold=0.2,
            k_values=[1, 3, 5, 10],
            measures=["NDCG", "P", "MRR"],
            columns={"user": "user_id", "timestamp": "ts", "segment": "device"},
            on_error="skip",
            n_resamples=5000,
            seed=0,
        )
        s = ev.feedback.summary(0.2)
        print(f"rows {s['rows']}, skipped {s['skipped_rows']}: {ev.feedback.skipped['reason'].to_list()}")
        print(
            f"votes {s['votes']}, judged pairs {s['judged_pairs']} of {s['shown_pairs']} shown, relevant {s['relevant_pairs']}"
        )
        print(f"queries scored {len(ev.overall.queries)}, segments {[seg.label for seg in ev.segments]}")
        logged, new = ev.overall.systems["logged"], ev.overall.systems["new"]
        print(f"Judged@10: logged {logged.judged['Judged@10'].mean():.4f}, new {new.judged['Judged@10'].mean():.4f}")
        for variant in ("full", "condensed"):
            for c in ev.overall.comparisons["new"][variant]:
                if c.metric[2] in ("NDCG@10", "P@5", "MRR@10"):
                    print(
                        f"{variant:9} {c.metric[2]:7} logged {c.mean_b:.4f}  new {c.mean_a:.4f}  "
                        f"delta {c.delta:+.4f} [{c.ci_low:+.4f}, {c.ci_high:+.4f}]  "
                        f"p Holm {c.p_randomization_holm:.4f} {c.marker()}"
                    )
        out = Path(report_dir) if report_dir else Path(tmp) / "report"
        written = ev.write_report(out)
        print("report files:", sorted(str(p.relative_to(out)) for p in written))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
