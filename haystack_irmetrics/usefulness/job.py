"""``irmetrics usefulness`` as one call: the files and settings of a labelling job in one frozen value
(:class:`UsefulnessJob`), read, labelled by :func:`~.labelling.label_usefulness` and written into its folder
(:func:`run_usefulness`); and the asker of a chat model on an OpenAI-compatible server (:func:`chat_asker`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import UsefulnessError
from .asker import AnswerAsker
from .labelling import UsefulnessResult
from .settings import UsefulnessSettings

#: The command, as its output folder's lock names it.
COMMAND = "irmetrics usefulness"


def chat_asker(
    model: str,
    api_base_url: str | None,
    api_key_env: str,
    timeout: float,
    prompt: str | None = None,
    max_chars: int | None = None,
) -> AnswerAsker:
    """The :class:`~.asker.AnswerAsker` of ``model`` on an OpenAI-compatible server: Haystack's
    ``OpenAIChatGenerator`` as ``irmetrics judge`` builds it
    (:func:`~haystack_irmetrics.judges.job.openai_generator`: no retries of its own, the time-out bounding whole
    requests), asked with ``prompt`` (a text with ``{question}`` and ``{document}``; default the asker's)."""
    from ..judges.job import openai_generator

    generator = openai_generator(model, api_base_url, api_key_env, timeout)
    return AnswerAsker(generator, prompt=prompt, max_chars=max_chars)


@dataclass(frozen=True)
class UsefulnessJob:
    """What ``irmetrics usefulness`` is asked: the runs (``[NAME=]RUN`` arguments, named by every command's rule),
    the queries and the corpus (BEIR files, or a BEIR folder holding them), the reference answers (JSONL), the
    output folder, how to label (:class:`~.settings.UsefulnessSettings`) and whether to use the cache."""

    runs: Sequence[str]
    queries: str | os.PathLike[str]
    corpus: str | os.PathLike[str]
    answers: str | os.PathLike[str]
    output: str | os.PathLike[str]
    settings: UsefulnessSettings = field(default_factory=UsefulnessSettings)
    cache: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", tuple(self.runs))


def run_usefulness(job: UsefulnessJob, asker: AnswerAsker) -> UsefulnessResult:
    """Run ``job`` with ``asker``: lock the output folder (another run writing there stops at once), read the runs,
    queries, corpus and answers, check that every answered query is in the queries, label
    (:func:`~.labelling.label_usefulness`, the messages naming the files) and write the folder
    (:func:`~.folder.write_folder`)."""
    from dataclasses import replace

    from ..io.answers import read_answers
    from ..io.beir_data import beir_file, read_beir_corpus, read_beir_queries
    from ..io.output import output_lock
    from ..io.run_names import read_named_runs
    from ..judges.cache import JudgmentCache
    from .folder import write_folder
    from .labelling import label_usefulness

    with output_lock(job.output, COMMAND):
        queries_path, corpus_path = beir_file(job.queries, "queries"), beir_file(job.corpus, "corpus")
        runs = {name: run.data for name, run in read_named_runs(job.runs).items()}
        queries = read_beir_queries(queries_path)
        answers = read_answers(job.answers)
        check_answered(answers, queries, str(job.answers), str(queries_path))
        corpus = read_beir_corpus(corpus_path)
        sources = (str(queries_path), str(corpus_path), str(job.answers))
        settings = replace(job.settings, sources=sources, answers_file=str(job.answers))
        cache = JudgmentCache(enabled=job.cache)
        try:
            result = label_usefulness(asker, runs, queries, corpus, answers, settings, cache=cache)
        finally:
            cache.close()
        write_folder(job.output, result)
    return result


def check_answered(answers: Mapping[str, object], queries: Mapping[str, object], where: str, queries_file: str) -> None:
    """Every query the answers name is in the queries (an answers file of another collection is said before any
    request).

    :raises UsefulnessError: naming the first query that is not, and both files.
    """
    missing = [qid for qid in answers if qid not in queries]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise UsefulnessError(
            f"the answers file {where} names query {missing[0]!r}{more}, which the queries file {queries_file} lacks"
        )


__all__ = ["COMMAND", "UsefulnessJob", "chat_asker", "check_answered", "run_usefulness"]
