"""Time windows over a click log: a week of traffic with a drop planted on day 5 flags day 5 and nothing else."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

from haystack_irmetrics.clicks import ClickLog
from haystack_irmetrics.clicks.windows import parse_window, per_impression, windows
from haystack_irmetrics.errors import ClickModelError, StatsInputError
from haystack_irmetrics.plots.windows import plot_windows


def week(drop_day: int | None = 5, per_day: int = 400, seed: int = 0):
    """Seven days of impressions (5 results each); on ``drop_day`` every click is half as likely."""
    rng = np.random.default_rng(seed)
    start = datetime.datetime(2026, 3, 1, tzinfo=datetime.timezone.utc)
    rows = []
    for day in range(1, 8):
        factor = 0.5 if day == drop_day else 1.0
        for n in range(per_day):
            when = start + datetime.timedelta(days=day - 1, seconds=int(rng.integers(86_400)))
            for r in range(5):
                click = rng.random() < factor * 0.5 / (r + 1)
                rows.append(
                    {
                        "session": f"d{day}-{n}",
                        "query_id": f"q{n % 20}",
                        "doc_id": f"doc{r}",
                        "position": r + 1,
                        "click": int(click),
                        "ts": when.isoformat(),
                    }
                )
    return ClickLog(rows, columns={"timestamp": "ts"}).sessions()


@pytest.mark.parametrize("measure", ["clicks", "mrr", "abandonment"])
def test_a_drop_planted_on_day_5_flags_day_5_and_nothing_else(measure):
    rows = windows(week(), width="1d", measure=measure, n_resamples=500)
    assert [r.start[:10] for r in rows] == [f"2026-03-0{d}" for d in range(1, 8)]
    assert [r.flagged for r in rows] == [False, False, False, False, True, False, False]
    assert rows[4].p_holm < 0.05 and rows[4].reference == rows[3].start
    assert all(r.size == 400 for r in rows)


def test_a_week_without_a_drop_flags_nothing_and_weekly_windows_hold_everything():
    assert not any(r.flagged for r in windows(week(drop_day=None), width="1d", n_resamples=200))
    weekly = windows(week(drop_day=None), width="1w", n_resamples=200)  # weeks from the epoch (a Thursday)
    assert len(weekly) == 2 and sum(r.size for r in weekly) == 2800


def test_every_window_against_a_named_baseline_and_the_trend_plot(tmp_path):
    rows = windows(week(), width="1d", baseline="2026-03-02", n_resamples=200)
    assert rows[1].reference is None and all(r.reference == rows[1].start for i, r in enumerate(rows) if i != 1)
    assert [r.flagged for r in rows] == [False, False, False, False, True, False, False]
    path = plot_windows(rows, tmp_path / "trend.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_per_impression_measures_on_a_hand_made_session():
    s = ClickLog(
        [
            {"session": "s", "query_id": "q", "doc_id": d, "position": r + 1, "click": int(r == 1), "ts": 1}
            for r, d in enumerate("abc")
        ],
        columns={"timestamp": "ts"},
    ).sessions()
    assert [per_impression(s, m).tolist() for m in ("clicks", "ctr@1", "mrr", "abandonment")] == [
        [1.0],
        [0.0],
        [0.5],
        [0.0],
    ]


def test_bad_windows_units_baselines_and_missing_timestamps_are_typed_errors():
    with pytest.raises(StatsInputError, match="positive whole number and a unit"):
        parse_window("1 fortnight")
    s = week(per_day=5)
    with pytest.raises(StatsInputError, match="no window starts at"):
        windows(s, baseline="1999-01-01")
    with pytest.raises(ClickModelError, match="no timestamp column"):
        windows(ClickLog([{"session": "s", "query_id": "q", "doc_id": "a", "position": 1, "click": 1}]).sessions())


def test_the_windows_command_flags_day_5_prints_json_and_writes_the_plot(tmp_path, capsys):
    import json

    import polars as pl

    from haystack_irmetrics.cli import main

    s = week()
    queries, docs = s.pair_names()
    rows = []
    for i in range(s.n_sessions):
        when = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
            microseconds=float(s.timestamp[i])
        )
        for r in range(int(s.length[i])):
            p = int(s.pairs[i, r])
            rows.append((f"s{i}", queries[p], docs[p], r + 1, int(s.clicks[i, r]), when.isoformat()))
    path = tmp_path / "week.csv"
    pl.DataFrame(rows, schema=["session", "query_id", "doc_id", "position", "click", "ts"], orient="row").write_csv(
        path
    )
    plot = tmp_path / "trend.png"
    args = ["clicks", "windows", str(path), "--timestamp-col", "ts", "--json", "--n-resamples", "300"]
    assert main([*args, "--plot", str(plot)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [w["flagged"] for w in data["windows"]] == [False, False, False, False, True, False, False]
    assert plot.exists()
    assert main(["clicks", "windows", str(path), "--timestamp-col", "ts", "--n-resamples", "300"]) == 0
    assert "| 2026-03-05T00:00:00Z | 400 |" in capsys.readouterr().out


def test_compare_windows_is_welchs_test_with_holm_across_the_windows():
    from scipy.stats import ttest_ind

    from haystack_irmetrics.stats.significance import holm
    from haystack_irmetrics.stats.windows import compare_windows, references

    rng = np.random.default_rng(1)
    groups = [rng.normal(m, 1.0, 50) for m in (1.0, 1.1, 0.2, 1.0)]
    changes = compare_windows(groups, references(4))
    raw = [ttest_ind(groups[i], groups[i - 1], equal_var=False).pvalue for i in (1, 2, 3)]
    assert [c.p_value for c in changes[1:]] == pytest.approx(raw)
    assert [c.p_holm for c in changes[1:]] == pytest.approx(holm(raw).tolist())
    assert [c.flagged for c in changes] == [False, False, True, False]  # window 3 rises back: no drop
    assert [c.flagged for c in compare_windows(groups, references(4), lower_is_better=True)] == [False] * 3 + [True]


def test_clicks_and_feedback_windows_are_one_type_and_one_plot_refuses_mixed_measures(tmp_path):
    from haystack_irmetrics.errors import InvalidArgumentError
    from haystack_irmetrics.feedback.windows import Window as FeedbackSideWindow
    from haystack_irmetrics.stats.windows import Window, window_series

    rows = windows(week(per_day=20), width="1d", measure="mrr", n_resamples=50)
    assert all(type(r) is Window for r in rows) and FeedbackSideWindow is Window
    assert list(rows[0].to_dict())[:4] == ["measure", "start", "end", "impressions"]
    ndcg = window_series([np.array([0.5, 0.7]), np.array([])], ["a", "b"], ["b", "c"], measure="NDCG@10")
    assert ndcg[0].to_dict()["queries"] == 2 and ndcg[1].size == 0 and np.isnan(ndcg[1].mean)
    with pytest.raises(InvalidArgumentError, match="one measure a trend plot"):
        plot_windows([*rows, *ndcg], tmp_path / "mixed.png")
    with pytest.raises(InvalidArgumentError, match="no windows"):
        plot_windows([], tmp_path / "none.png")
