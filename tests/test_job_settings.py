"""One way to build a job's settings from its function's keywords (``haystack_irmetrics._settings``): a keyword
that is no field is refused as Python refuses an unexpected keyword argument of the function, never handed on;
each settings class checks its values when built."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from haystack_irmetrics._settings import keywords_of, settings_of
from haystack_irmetrics.errors import InvalidArgumentError, PipelineError, StatsInputError


@dataclass(frozen=True)
class Knobs:
    depth: int = 10
    name: str = "x"

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ValueError(f"depth must be >= 1, got {self.depth}")


def job(*, depth: int = 10, name: str = "x") -> None:
    """A function whose keywords are Knobs' fields: Python's own refusal is the wording to match."""


def test_an_unknown_keyword_is_refused_in_pythons_own_words():
    with pytest.raises(TypeError) as python:
        job(deph=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError) as ours:
        settings_of(Knobs, {"deph": 3, "name": "y"}, "job")
    assert str(ours.value) == str(python.value) == "job() got an unexpected keyword argument 'deph'"
    # the first unknown name in sorted order, whatever order the keywords came in
    with pytest.raises(TypeError, match=r"argument 'aa'$"):
        keywords_of(Knobs, {"zz": 1, "aa": 2}, "job")


def test_keywords_replace_the_base_and_the_class_checks_the_result():
    base = Knobs(depth=3, name="b")
    assert settings_of(Knobs, {"name": "c"}, "job", base=base) == Knobs(3, "c")
    assert settings_of(Knobs, {}, "job", base=base) is base
    assert settings_of(Knobs, {"depth": 2}, "job") == Knobs(2, "x")
    with pytest.raises(ValueError, match="depth must be >= 1, got 0"):
        settings_of(Knobs, {"depth": 0}, "job", base=base)
    with pytest.raises(TypeError, match=r"^job\(\) takes a Knobs as settings, got dict$"):
        settings_of(Knobs, {}, "job", base={"depth": 3})  # type: ignore[arg-type]


def test_a_field_the_function_takes_as_its_own_parameter_is_no_keyword():
    assert keywords_of(Knobs, {"depth": 1}, "job", taken=("name",)) == {"depth": 1}
    with pytest.raises(TypeError, match=r"job\(\) got an unexpected keyword argument 'name'"):
        keywords_of(Knobs, {"name": "y"}, "job", taken=("name",))
    options = {"depth": 4}
    assert keywords_of(Knobs, options, "job") is not options  # a copy: the caller's mapping is never changed


def test_compare_settings_are_checked_when_built_whether_or_not_a_test_runs():
    from haystack_irmetrics.compare import CompareSettings, compare_runs

    with pytest.raises(StatsInputError, match="n_resamples must be a whole number >= 2, got 1"):
        CompareSettings(n_resamples=1)
    with pytest.raises(StatsInputError, match="confidence must be a number in"):
        CompareSettings(confidence=1.0)
    with pytest.raises(InvalidArgumentError, match="significance must be True, False or None, got 'no'"):
        CompareSettings(significance="no")  # type: ignore[arg-type]
    run, qrels = {"q1": {"d1": 1.0}}, {"q1": {"d1": 1}}
    with pytest.raises(StatsInputError, match="n_resamples"):
        compare_runs(run, run, qrels, [1], significance=False, n_resamples=0)
    with pytest.raises(TypeError, match=r"^compare_runs\(\) got an unexpected keyword argument 'resamples'$"):
        compare_runs(run, run, qrels, [1], resamples=10)


def test_compare_suites_refuses_an_unknown_keyword_itself_before_reading_a_folder(tmp_path):
    from haystack_irmetrics.compare import compare_suites

    with pytest.raises(TypeError, match=r"^compare_suites\(\) got an unexpected keyword argument 'sed'$"):
        compare_suites(tmp_path / "none", tmp_path / "neither", sed=1)
    with pytest.raises(TypeError, match=r"compare_suites\(\) takes a CompareSettings as settings, got dict"):
        compare_suites(tmp_path / "none", tmp_path / "neither", settings={"seed": 1})


def test_beir_settings_read_a_joiner_yaml_given_by_its_path(tmp_path):
    from haystack_irmetrics.beir.settings import BeirSettings

    path = tmp_path / "joiner.yaml"
    path.write_text(
        "type: haystack.components.joiners.document_joiner.DocumentJoiner\n"
        "init_parameters:\n  join_mode: reciprocal_rank_fusion\n  weights: [0.3, 0.7]\n",
        encoding="utf-8",
    )
    parameters = {"join_mode": "reciprocal_rank_fusion", "weights": [0.3, 0.7]}
    assert BeirSettings(joiner=path).joiner == BeirSettings(joiner=str(path)).joiner == parameters
    with pytest.raises(PipelineError, match="joiner: expected DocumentJoiner init parameters"):
        BeirSettings(joiner=5)  # type: ignore[arg-type]


def test_feedback_windows_refuses_an_unknown_keyword_before_reading_the_log():
    from haystack_irmetrics.feedback.windows import feedback_windows

    with pytest.raises(TypeError, match=r"^feedback_windows\(\) got an unexpected keyword argument 'widht'$"):
        feedback_windows(None, widht="1d")  # type: ignore[arg-type]
