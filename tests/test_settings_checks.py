"""Every job's frozen settings check their own values when they are built (issue 50, item 4): a value a job could not
take is refused by the settings' constructor, before any file is named, read or written, with the one message shape
of :mod:`haystack_irmetrics.checks` (or the job's own sentence where no range says it)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re

import pytest

import haystack_irmetrics
from haystack_irmetrics.clicks.jobs import (
    BootstrapSettings,
    ClickCompareSettings,
    EstimateSettings,
    FitSettings,
    HeldOutSettings,
    InterleaveSettings,
    LogSettings,
    MeasureSettings,
    WindowsSettings,
)
from haystack_irmetrics.errors import (
    ClickModelError,
    FeedbackError,
    FusionError,
    FusionParameterError,
    InterleavingError,
    IRMetricsError,
    JudgeError,
    StatsInputError,
    UnknownStrategyError,
)
from haystack_irmetrics.feedback.job import ReplaySettings
from haystack_irmetrics.feedback.settings import FeedbackSettings, WindowSettings
from haystack_irmetrics.fusion.job import FusionSettings
from haystack_irmetrics.fusion.optimize import FusionSearch
from haystack_irmetrics.judges.settings import ChatSettings

# No file is read by a settings value: these paths exist nowhere.
LOG = LogSettings("no/such/clicks.csv")
RUNS = ("no/such/a.trec", "no/such/b.trec")

CASES = [
    # feedback
    (lambda: FeedbackSettings(test="z"), FeedbackError, "test must be one of randomization, t, got 'z'"),
    (lambda: FeedbackSettings(threshold=0), FeedbackError, "threshold must be a number > 0, got 0"),
    (lambda: FeedbackSettings(preset="ranx"), FeedbackError, "preset must be one of beir, trec, got 'ranx'"),
    (lambda: FeedbackSettings(strategy="median"), UnknownStrategyError, "median"),
    (lambda: FeedbackSettings(n_resamples=1), StatsInputError, "n_resamples must be a whole number >= 2, got 1"),
    (lambda: FeedbackSettings(confidence=1.0), StatsInputError, "confidence must be a number in (0, 1), got 1.0"),
    (
        lambda: FeedbackSettings(measures=["NDCG", "bpref"], k_values=[10]),
        FeedbackError,
        "feedback reports take measures with a cutoff (e.g. NDCG@10, P@5); got ['bpref']",
    ),
    (lambda: WindowSettings(unit="ns"), FeedbackError, "unit must be one of us, ms, s, got 'ns'"),
    (lambda: WindowSettings(alpha=1.0), FeedbackError, "alpha must be a number in (0, 1), got 1.0"),
    (lambda: WindowSettings(threshold=-1), FeedbackError, "threshold must be a number > 0, got -1"),
    (lambda: WindowSettings(seed=-1), haystack_irmetrics.errors.InvalidSeedError, "-1"),
    (lambda: ReplaySettings(top_k=0), FeedbackError, "top_k must be a whole number >= 1, got 0"),
    # fusion
    (lambda: FusionSettings(RUNS[:1], output="f.trec"), FusionError, "fuse needs two runs or more, got 1"),
    (lambda: FusionSettings(RUNS, output="f.trec", norm="zscore2"), FusionError, "unknown normalisation 'zscore2'"),
    (lambda: FusionSettings(RUNS, optimize=True, qrels="q.tsv", folds=1), FusionParameterError, "folds must be"),
    (lambda: FusionSettings(RUNS, optimize=True, qrels="q.tsv", preset="x"), FusionParameterError, "preset must be"),
    (lambda: FusionSearch(folds=1), FusionParameterError, "folds must be a whole number >= 2, got 1"),
    # clicks
    (lambda: LogSettings("x", on_error="ignore"), ClickModelError, "on_error must be one of raise, skip, got 'ignore'"),
    (lambda: LogSettings("x", position_base=2), ClickModelError, "position_base must be a whole number from 0 to 1"),
    (lambda: LogSettings("x", max_rank=0), ClickModelError, "max_rank must be a whole number >= 1, got 0"),
    (lambda: HeldOutSettings(test_fraction=1.0), ClickModelError, "the test fraction must be a number in (0, 1)"),
    (lambda: BootstrapSettings(n_resamples=1), StatsInputError, "n_resamples must be a whole number >= 2, got 1"),
    (lambda: FitSettings(LOG, "nope", "out"), ClickModelError, "unknown click model 'nope'"),
    (lambda: FitSettings(LOG, "pbm", "out", min_impressions=0), ClickModelError, "min_impressions must be"),
    (lambda: ClickCompareSettings(LOG, ()), ClickModelError, "name at least one model to compare"),
    (lambda: ClickCompareSettings(LOG, ("pbm", "nope")), ClickModelError, "unknown click model 'nope'"),
    (
        lambda: ClickCompareSettings(LOG, ("pbm",), held_out=HeldOutSettings()),
        ClickModelError,
        "comparing models needs held-out sessions: a test log or a test fraction",
    ),
    (lambda: EstimateSettings(LOG, "r.trec", k=0), ClickModelError, "k must be a whole number >= 1, got 0"),
    (lambda: EstimateSettings(LOG, "r.trec", clip=0), ClickModelError, "clip must be a number > 0, got 0"),
    (lambda: MeasureSettings(LOG, "r.trec", measure="ndcg"), ClickModelError, "measure must be one of dcg, clicks"),
    (lambda: MeasureSettings(LOG, "r.trec", clip=0.5), ClickModelError, "clip must be a number >= 1, got 0.5"),
    (lambda: MeasureSettings(LOG, "r.trec", propensities="ctr"), ClickModelError, "propensities must be"),
    (lambda: WindowsSettings(LOG, measure="ndcg"), ClickModelError, "measure must be one of clicks, ctr@1"),
    (lambda: WindowsSettings(LOG, unit="ns"), ClickModelError, "unit must be one of us, ms, s, got 'ns'"),
    (lambda: WindowsSettings(LOG, alpha=0), ClickModelError, "alpha must be a number in (0, 1), got 0"),
    (lambda: InterleaveSettings(LOG, method="zig"), InterleavingError, "unknown interleaving method 'zig'"),
    (lambda: InterleaveSettings(LOG, method="balanced"), InterleavingError, "needs the two original rankings"),
    # the judge's chat model
    (
        lambda: ChatSettings("m", timeout=0),
        JudgeError,
        "the request time-out (seconds) must be a finite number > 0, got 0",
    ),
    (lambda: ChatSettings("m", max_grade=10), JudgeError, "max_grade must be a whole number from 1 to 9, got 10"),
    (lambda: ChatSettings("m", max_chars=0), JudgeError, "max_chars must be a whole number >= 1, got 0"),
    (lambda: ChatSettings("m", reask=2), JudgeError, "must be a whole number from 0 to 1, got 2"),
]


@pytest.mark.parametrize(("build", "error", "message"), CASES)
def test_a_value_the_job_cannot_take_is_refused_when_its_settings_are_built(build, error, message):
    with pytest.raises(error, match=re.escape(message)) as caught:
        build()
    assert isinstance(caught.value, IRMetricsError)


def test_the_defaults_and_the_edges_of_each_range_are_taken():
    FeedbackSettings(threshold=1e-9, n_resamples=2, test="t", preset="trec", strategy="wilson")
    WindowSettings(unit="s", alpha=0.999)
    ReplaySettings(top_k=1)
    FusionSettings(RUNS, output="f.trec", norm="none")
    FusionSearch(folds=2)
    LogSettings("x", position_base=0, max_rank=1, on_error="skip")
    HeldOutSettings(test=LOG, test_fraction=0.2)  # a test log takes the fraction's place, which is still checked
    ClickCompareSettings(LOG, ["pbm", "ctr"])
    EstimateSettings(LOG, "r.trec", k=1, clip=1e-9)
    MeasureSettings(LOG, "r.trec", clip=1, propensities="log")
    WindowsSettings(LOG, measure="mrr", alpha=0.5)
    InterleaveSettings(LOG, method="balanced", rankings=RUNS)
    ChatSettings("m", max_grade=9, max_chars=1, reask=0)


def _settings_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(haystack_irmetrics.__path__, "haystack_irmetrics."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and value.__module__ == module.__name__
                and dataclasses.is_dataclass(value)
                and name.endswith(("Settings", "Job", "Search"))
            ):
                found.append(value)
    return found


def test_every_jobs_settings_are_frozen_and_check_themselves():
    classes = _settings_classes()
    assert len(classes) >= 20  # the walk found the jobs
    unchecked = [c.__qualname__ for c in classes if "__post_init__" not in vars(c)]
    mutable = [c.__qualname__ for c in classes if not c.__dataclass_params__.frozen]
    assert (unchecked, mutable) == ([], [])
