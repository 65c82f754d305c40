"""``irmetrics judge`` as one call: the files and settings of a judging job in one frozen value
(:class:`JudgeJob`), read, judged by :func:`~.judging.judge_runs` and answered with its frozen
:class:`~.judging.JudgeResult` (:func:`run_judge`); and a chat judge on an OpenAI-compatible server from its
settings (:class:`~.settings.ChatSettings`, :func:`chat_judge`). The judge of a pipeline YAML is
:func:`haystack_irmetrics.components.judge.load_judge`'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import JudgeError
from .judge import ChatJudge, ScoreJudge
from .judging import JudgeResult
from .settings import NO_KEY, ChatSettings, JudgeSettings


def _read_text(path: str | None) -> str | None:
    return None if path is None else Path(path).read_text(encoding="utf-8")


def openai_generator(model: str, api_base_url: str | None, api_key_env: str, timeout: float) -> Any:
    """Haystack's ``OpenAIChatGenerator`` of ``model`` at ``api_base_url``, its key read from the variable
    ``api_key_env`` (:data:`~.settings.NO_KEY` to a server when it is unset), with no retries of its own (the
    asker retries, counted and bounded) and a client whose ``timeout`` bounds the whole request.

    :raises JudgeError: no API key and no server that needs none, or a time-out that is not a positive number.
    """
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    from .http import check_timeout, deadline_client_kwargs

    if not os.environ.get(api_key_env) and not api_base_url:
        raise JudgeError(f"no API key: set {api_key_env} (or point --api-base-url at a server that needs none)")
    check_timeout(timeout)
    key = Secret.from_env_var(api_key_env) if os.environ.get(api_key_env) else Secret.from_token(NO_KEY)
    return OpenAIChatGenerator(
        api_key=key,
        model=model,
        api_base_url=api_base_url,
        timeout=timeout,
        max_retries=0,  # the asker retries, counted and bounded
        http_client_kwargs=deadline_client_kwargs(timeout),  # the time-out bounds the whole request
    )


def load_yaml(path: str, what: str, error: type[Exception] = JudgeError) -> Any:
    """The pipeline of the YAML ``path`` (through :func:`~haystack_irmetrics.integration.loading.load_pipeline`);
    a YAML that cannot be loaded is ``error`` on one line, ``cannot load {what} {path}: ...`` (the component's own
    error, which Haystack wraps), a missing extra's error as it is.

    :raises MissingDependencyError: a component of an extra that is not installed.
    """
    from ..errors import IRMetricsError, MissingDependencyError
    from ..integration.loading import load_pipeline

    try:
        return load_pipeline(path)
    except MissingDependencyError:  # a component of an extra, not installed: the error names the extra
        raise
    except Exception as e:  # Haystack wraps a component's own error; the CLI says it on one line
        if isinstance(e, OSError):
            raise
        cause: BaseException = e
        while cause.__cause__ is not None and not isinstance(cause, IRMetricsError):
            cause = cause.__cause__
        raise error(f"cannot load {what} {path}: {' '.join(str(cause).split())}") from None


def chat_judge(settings: ChatSettings) -> ChatJudge:
    """The :class:`~.judge.ChatJudge` of ``settings``: Haystack's ``OpenAIChatGenerator`` (:func:`openai_generator`).

    :raises JudgeError: no API key and no server that needs none, or a time-out that is not a positive number.
    """
    generator = openai_generator(settings.model, settings.api_base_url, settings.api_key_env, settings.timeout)
    return ChatJudge(
        generator,
        system_prompt=_read_text(settings.system_prompt),
        user_template=_read_text(settings.template),
        max_grade=settings.max_grade,
        max_document_chars=settings.max_chars,
        response_format=settings.response_format,
        reask=settings.reask,
        lenient=settings.lenient,
    )


@dataclass(frozen=True)
class JudgeJob:
    """What ``irmetrics judge`` is asked: the runs (``[NAME=]RUN`` arguments, named by every command's rule), the
    human qrels (``None``: a corpus no person judged yet), the queries and the corpus (BEIR files, or a BEIR folder
    holding them), the output folder, how to judge (:class:`~.settings.JudgeSettings`), whether to use the
    judgment cache, and a pairs file (``pairs``: judge exactly its pairs, as ``irmetrics pool`` writes them)."""

    runs: Sequence[str]
    qrels: str | os.PathLike[str] | None
    queries: str | os.PathLike[str]
    corpus: str | os.PathLike[str]
    output: str | os.PathLike[str]
    settings: JudgeSettings = field(default_factory=JudgeSettings)
    cache: bool = True
    pairs: str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", tuple(self.runs))


def run_judge(job: JudgeJob, judge: ChatJudge | ScoreJudge) -> JudgeResult:
    """Run ``job`` with ``judge``: lock the output folder (a second judge writing there stops at once, before any
    work, as ``irmetrics beir`` locks its own), read the runs, qrels, queries and corpus, judge
    (:func:`~.judging.judge_runs`, the messages naming the queries' and corpus' files) and return the result."""
    from dataclasses import replace

    from ..io import read_qrels
    from ..io.beir_data import beir_file, read_beir_corpus, read_beir_queries
    from ..io.output import output_lock
    from ..io.run_names import read_named_runs
    from ..pooling.pairs import read_pairs
    from .cache import JudgmentCache
    from .judging import judge_runs

    with output_lock(job.output, "irmetrics judge"):
        queries_path, corpus_path = beir_file(job.queries, "queries"), beir_file(job.corpus, "corpus")
        qrels = read_qrels(job.qrels).data if job.qrels is not None else {}
        runs = {name: run.data for name, run in read_named_runs(job.runs).items()} if job.runs else {}
        pairs = [(p.query, p.doc) for p in read_pairs(job.pairs)] if job.pairs is not None else None
        queries = read_beir_queries(queries_path)
        corpus = read_beir_corpus(corpus_path)
        recorded = None if job.qrels is None else str(job.qrels)
        settings = replace(job.settings, sources=(str(queries_path), str(corpus_path)), qrels_file=recorded)
        cache = JudgmentCache(enabled=job.cache)
        try:
            return judge_runs(judge, runs, qrels, queries, corpus, job.output, settings, cache=cache, pairs=pairs)
        finally:
            cache.close()


__all__ = ["JudgeJob", "chat_judge", "load_yaml", "openai_generator", "run_judge"]
