"""``irmetrics feedback --window``: the logged system's measures per day; a drop planted on day 5 is flagged alone."""

from __future__ import annotations

import datetime
import json

import numpy as np
import pytest

from haystack_irmetrics.cli import main
from haystack_irmetrics.errors import FeedbackSchemaError
from haystack_irmetrics.feedback import FeedbackLog
from haystack_irmetrics.feedback.windows import feedback_windows


def week_rows(drop_day: int | None = 5, seed: int = 0):
    """Seven days; 40 queries with 8 candidates (the first 3 relevant); each impression shows 5 of them,
    relevant first with noise; on ``drop_day`` the ranker puts them last. A vote on 30 % of the rows."""
    rng = np.random.default_rng(seed)
    start = datetime.datetime(2026, 3, 1, tzinfo=datetime.timezone.utc)
    rows = []
    for day in range(1, 8):
        for q in range(40):
            for _ in range(3):
                noise = rng.normal(0, 1.0, 8)
                goodness = np.array([1.0] * 3 + [0.0] * 5) * (-1 if day == drop_day else 1)
                order = np.argsort(-(goodness * 2 + noise))[:5]
                when = start + datetime.timedelta(days=day - 1, seconds=int(rng.integers(86_400)))
                for r, d in enumerate(order.tolist()):
                    vote = (1 if d < 3 else 0) if rng.random() < 0.3 else None
                    rows.append(
                        {
                            "query_id": f"q{q}",
                            "doc_id": f"q{q}-d{d}",
                            "position": r + 1,
                            "vote": vote,
                            "ts": when.isoformat(),
                        }
                    )
    return rows


def test_a_drop_planted_on_day_5_flags_day_5_and_nothing_else():
    log = FeedbackLog(week_rows(), columns={"timestamp": "ts"})
    rows = feedback_windows(log, width="1d", k_values=[5], measures=["NDCG", "P"], n_resamples=300)
    for measure in ("NDCG@5", "P@5"):
        mine = [r for r in rows if r.measure == measure]
        assert [r.start[:10] for r in mine] == [f"2026-03-0{d}" for d in range(1, 8)]
        assert [r.flagged for r in mine] == [False, False, False, False, True, False, False], measure
        assert all(r.size == 40 for r in mine)


def test_a_week_without_a_drop_flags_nothing_and_a_log_without_timestamps_is_a_typed_error():
    log = FeedbackLog(week_rows(drop_day=None), columns={"timestamp": "ts"})
    assert not any(r.flagged for r in feedback_windows(log, k_values=[5], n_resamples=200))
    with pytest.raises(FeedbackSchemaError, match="timestamp column"):
        feedback_windows(FeedbackLog(week_rows()), k_values=[5])


def test_the_feedback_command_prints_the_windows_and_flags_day_5(tmp_path, capsys):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in week_rows()))
    args = ["feedback", str(path), "--timestamp-col", "ts", "--window", "1d", "-k", "5", "-m", "NDCG"]
    assert main([*args, "--n-resamples", "300", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    flagged = [w["start"][:10] for w in data["windows"] if w["flagged"]]
    assert flagged == ["2026-03-05"]
    assert main([*args, "--n-resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert "## Windows" in out and "| NDCG@5 | 2026-03-05T00:00:00Z |" in out


def test_the_html_report_has_a_windows_section_with_day_5_flagged_and_nothing_else(tmp_path, capsys):
    import base64
    import re

    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in week_rows()))
    out = tmp_path / "report"
    args = ["feedback", str(path), "--timestamp-col", "ts", "--window", "1d", "-k", "5", "-m", "NDCG,P"]
    assert main([*args, "--n-resamples", "300", "--report", str(out), "--no-condensed"]) == 0
    capsys.readouterr()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert '<a href="#windows">Windows</a></nav>' in page
    section = page[
        page.index('<section id="windows">') : page.index("</section>", page.index('<section id="windows">'))
    ]
    assert page.index('<section id="windows">') < page.index("</main>")
    for measure in ("NDCG@5", "P@5"):
        part = section[section.index(f"<h3>{measure}</h3>") :]
        table = part[part.index("<tbody>") : part.index("</tbody>")]
        rows = re.findall(r"<tr( class=\"flagged\")?><td class=\"name\">(\d{4}-\d\d-\d\d)", table)
        assert [day for _, day in rows] == [f"2026-03-0{d}" for d in range(1, 8)]
        assert [day for flagged, day in rows if flagged] == ["2026-03-05"], measure
    figures = re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', section)
    assert len(figures) == 2 and all(base64.b64decode(f).lstrip().startswith(b"<?xml") for f in figures)
    assert section.count("<td>drop</td>") == 2  # one flagged window per measure, nothing else
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Windows (1d, the logged rankings)" in report and report.count("| drop |") == 2
    csv = (out / "windows.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0].startswith("measure,start,end,queries,mean") and len(csv) == 15
    assert {p.name for p in (out / "plots").glob("windows_*.png")} == {"windows_NDCG_5.png", "windows_P_5.png"}


def test_the_trend_plot_draws_an_interval_that_misses_the_mean_by_a_bit(tmp_path):
    # Every value equal: the resampled means and numpy's mean differ in the last bit; the plot still draws.
    from haystack_irmetrics.plots.windows import plot_windows
    from haystack_irmetrics.stats.windows import Window

    rows = [
        Window("NDCG@5", "2026-03-01", "2026-03-02", 7, 0.7000000000000001, 0.7, 0.7, None, None, None, None, False),
        Window("NDCG@5", "2026-03-02", "2026-03-03", 7, 0.5, 0.4, 0.6, "2026-03-01", -0.2, 0.01, 0.01, True),
    ]
    path = plot_windows(rows, tmp_path / "trend.png")
    assert path.stat().st_size > 1000
