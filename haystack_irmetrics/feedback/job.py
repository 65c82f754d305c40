"""``irmetrics feedback`` as one call: an open log and the job's settings in one frozen value
(:class:`FeedbackJob`); :func:`run_feedback` aggregates the log, replays the pipelines, scores every system
(:func:`~.evaluate.evaluate_feedback`), scores the logged rankings per time window when asked
(:func:`~.windows.feedback_windows`), writes the report files and answers with a frozen :class:`FeedbackRun`.

The report page (``report.html``) is :func:`haystack_irmetrics.report.feedback_report`'s, from the result:
``feedback/`` never imports ``report/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..checks import whole
from ..errors import FeedbackError, InvalidArgumentError
from .aggregate import aggregate_feedback
from .evaluate import evaluate_feedback
from .judgments import AggregatedFeedback
from .reading import FeedbackLog
from .report import FeedbackEvaluation
from .settings import FeedbackSettings, WindowSettings


@dataclass(frozen=True)
class ReplaySettings:
    """How the pipelines of a job are replayed (:func:`~.replay.replay_pipeline`): a BEIR ``corpus.jsonl``
    written into each pipeline's stores first, the pipeline input of the query text and output of the documents
    (``component.socket``), and the ``top_k`` given to every retriever (``None``: their own)."""

    corpus: str | None = None
    query_input: str | None = None
    output: str | None = None
    top_k: int | None = None

    def __post_init__(self) -> None:
        if self.top_k is not None:
            whole(self.top_k, "top_k", least=1, error=FeedbackError)


@dataclass(frozen=True)
class FeedbackJob:
    """What ``irmetrics feedback`` is asked.

    :ivar log: the open log (a :class:`~haystack_irmetrics.clicks.judged.JudgedLog` for click-derived votes).
    :ivar runs: ``[NAME=]RUN`` TREC run files to score; ``pipelines``: ``[NAME=]YAML`` pipelines to replay
        (``replay``: how), all named by every command's rule (:func:`~haystack_irmetrics.io.run_names.run_names`).
    :ivar settings: how to score (its ``strategy`` aggregates the log); ``windows``: the logged rankings per
        time window too, with these settings.
    :ivar write_qrels: write the judgments there as TREC qrels; ``report``: write the report files into this
        folder (``plots``: PNG plots, default when matplotlib is installed).
    """

    log: FeedbackLog
    runs: Sequence[str] = ()
    pipelines: Sequence[str] = ()
    replay: ReplaySettings = field(default_factory=ReplaySettings)
    settings: FeedbackSettings = field(default_factory=FeedbackSettings)
    windows: WindowSettings | None = None
    write_qrels: str | None = None
    report: str | None = None
    plots: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", tuple(self.runs))
        object.__setattr__(self, "pipelines", tuple(self.pipelines))


@dataclass(frozen=True)
class FeedbackRun:
    """What :func:`run_feedback` made: the evaluation (with its windows when asked for), the systems scored
    besides the logged rankings by name (a run file's path, a replayed pipeline's run) and the report files
    written."""

    evaluation: FeedbackEvaluation
    runs: dict[str, Any]
    written: tuple[Path, ...] = ()


def run_feedback(job: FeedbackJob) -> FeedbackRun:
    """Run ``job``: aggregate the log with ``job.settings.strategy`` (writing ``job.write_qrels``), replay the
    pipelines over the judged queries, score and compare every system, score the windows, write the report files.

    :raises InvalidArgumentError: two systems of one name.
    """
    feedback = aggregate_feedback(job.log, job.settings.strategy)
    if job.write_qrels:
        feedback.write_trec_qrels(job.write_qrels)
    runs = _systems(job, feedback)
    evaluation = evaluate_feedback(feedback, runs, job.settings)
    if job.windows is not None:
        windows = _windows(job)
        evaluation = replace(evaluation, windows=windows, window=job.windows.width, window_alpha=job.windows.alpha)
    written = evaluation.write_report(job.report, plots=job.plots) if job.report else []
    return FeedbackRun(evaluation, runs, tuple(written))


def _windows(job: FeedbackJob) -> list[Any]:
    from .windows import feedback_windows

    return feedback_windows(job.log, job.settings.strategy, job.windows)


def _systems(job: FeedbackJob, feedback: AggregatedFeedback) -> dict[str, Any]:
    """``{name: run}``: each run file's path, and each pipeline's run replayed over the judged queries (every
    pipeline's stores given the corpus first)."""
    from ..io.run_names import run_names, split_named

    runs: dict[str, Any] = {}
    named = [split_named(value) for value in (*job.runs, *job.pipelines)]
    labels = iter(run_names([p for _, p in named], [n for n, _ in named]))  # every command's rule, YAMLs too

    def add(name: str, value: Any) -> None:
        if name in runs:
            raise InvalidArgumentError(f"two systems are named {name!r}; label them NAME=RUN or NAME=YAML")
        runs[name] = value

    for value in job.runs:
        add(next(labels), split_named(value)[1])
    if not job.pipelines:
        return runs
    from ..integration.loading import load_pipeline
    from .replay import replay_pipeline

    replay = job.replay
    corpus = None
    if replay.corpus:
        from ..integration.corpus import corpus_documents, write_into_stores
        from ..io.beir_data import read_beir_corpus

        corpus = corpus_documents(read_beir_corpus(replay.corpus))
    for value in job.pipelines:
        path = split_named(value)[1]
        pipe = load_pipeline(path)
        if corpus is not None:
            write_into_stores(pipe, corpus, source=f"--corpus: the pipeline {path}")
        run = replay_pipeline(pipe, feedback, query_input=replay.query_input, output=replay.output, top_k=replay.top_k)
        add(next(labels), run)
    return runs


__all__ = ["FeedbackJob", "FeedbackRun", "ReplaySettings", "run_feedback"]
