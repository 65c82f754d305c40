"""Each ``irmetrics clicks`` / ``irmetrics interleave`` command is one call of ``clicks/jobs.py``: frozen settings
in, a frozen result out, the same files and numbers from Python as from the command line."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest

from haystack_irmetrics.cli import main
from haystack_irmetrics.clicks import ClickLog, compare_models
from haystack_irmetrics.clicks.interleaving import outcome
from haystack_irmetrics.clicks.jobs import (
    ClickCompareSettings,
    FitSettings,
    HeldOutSettings,
    InterleaveSettings,
    LogSettings,
    compare_log,
    fit_log,
    interleave_log,
)
from haystack_irmetrics.errors import ClickModelError, SkippedRowsWarning
from tests.conftest import ROOT

DATA = ROOT / "examples" / "data"


@pytest.fixture()
def damaged(tmp_path):
    """The shipped click log with a row whose click is a word and a session missing its position 2."""
    lines = (DATA / "click_log.csv").read_text().splitlines()[:61]
    lines += ["sX,q01,doc0159,1,maybe", "sY,q01,doc0159,1,1", "sY,q01,doc0172,3,0"]
    path = tmp_path / "damaged.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fit_log_writes_what_irmetrics_clicks_fit_writes_and_says_what_it_skipped(damaged, tmp_path, capsys):
    argv = ["clicks", "fit", str(damaged), "--model", "dbn", "--on-error", "skip", "--test-fraction", "0.25"]
    assert main([*argv, "-o", str(tmp_path / "cli")]) == 0
    printed = capsys.readouterr()
    log = LogSettings(str(damaged), on_error="skip")
    settings = FitSettings(log, "dbn", str(tmp_path / "py"), held_out=HeldOutSettings(test_fraction=0.25))
    with pytest.warns(SkippedRowsWarning) as said:
        got = fit_log(settings)
    assert [f"irmetrics: warning: {w.message}" for w in said] == printed.err.splitlines()
    assert str(said[0].message).startswith(f"{damaged}: skipped 1 malformed rows and 1 sessions (first: 'sY': ")
    for name in ("qrels.tsv", "model.json", "skipped_rows.csv", "skipped_sessions.csv"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert printed.out.splitlines()[
        1
    ] == f"wrote {tmp_path / 'cli' / 'qrels.tsv'} ({got.judgments} judgments) and " + str(
        tmp_path / "cli" / "model.json"
    )
    assert got.fit.test is not None and got.fit.model.name == "dbn"


def test_the_settings_and_results_are_frozen(damaged):
    log = LogSettings(str(damaged), columns={"click": "click"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        log.path = "other.csv"  # type: ignore[misc]
    with pytest.raises(TypeError):
        log.columns["click"] = "clicked"  # type: ignore[index]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a log read whole says nothing
        got = compare_log(ClickCompareSettings(LogSettings(str(DATA / "click_log.csv")), ("ctr", "dbn")))
    with pytest.raises(TypeError):
        got.scores["pbm"] = got.scores["ctr"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.test_sessions = 0  # type: ignore[misc]


def test_compare_and_interleave_give_the_packages_numbers():
    sessions = ClickLog(DATA / "click_log.csv").sessions()
    got = compare_log(ClickCompareSettings(LogSettings(str(DATA / "click_log.csv")), ("pbm", "sdbn")))
    assert dict(got.scores) == compare_models(["pbm", "sdbn"], sessions, test_fraction=0.2, seed=0)
    path = DATA / "interleaved_clicks.csv"
    settings = InterleaveSettings(LogSettings(str(path), columns={"team": "team"}))
    result = interleave_log(settings)
    assert result.outcomes["all"] == outcome(ClickLog(path, team=True).sessions())
    assert json.dumps(result.to_dict()) == json.dumps(result.outcomes["all"].to_dict())


def test_a_model_without_per_document_labels_is_refused_before_the_log_is_read(tmp_path):
    settings = FitSettings(LogSettings(str(tmp_path / "absent.csv")), "rctr", str(tmp_path / "out"))
    with pytest.raises(ClickModelError, match="rctr has no per-document parameter"):
        fit_log(settings)
    assert not (tmp_path / "out").exists()
