"""How a judge judges, as frozen values the CLI and the Python API build once (standard library only, so that
``irmetrics judge --help`` imports nothing more): :class:`JudgeSettings`, the settings of
:func:`~haystack_irmetrics.judges.judging.judge_runs`, and :class:`ChatSettings`, a chat model on an
OpenAI-compatible server (:func:`~haystack_irmetrics.judges.job.chat_judge`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._settings import settings_of

#: The environment variable the API key is read from by default (as Haystack's OpenAI generators read it).
API_KEY_ENV = "OPENAI_API_KEY"
#: What a local server that needs no key is sent as the key when the key's variable is unset.
NO_KEY = "no-key"


@dataclass(frozen=True)
class ChatSettings:
    """A chat model on an OpenAI-compatible server as a judge (``irmetrics judge --llm``).

    ``api_key_env`` names the environment variable holding the API key (never written anywhere; a server at
    ``api_base_url`` is sent :data:`NO_KEY` when it is unset); ``timeout`` bounds a whole request, last byte
    included; ``system_prompt`` and ``template`` are files replacing the default prompt's parts;
    ``max_chars`` cuts each document sent; ``response_format`` sends the answer form with each request,
    ``reask`` asks an answer outside it once more, ``lenient`` reads free text (opt-in: it can misread).
    """

    model: str
    api_base_url: str | None = None
    api_key_env: str = API_KEY_ENV
    timeout: float = 60.0
    max_grade: int = 3
    system_prompt: str | None = None
    template: str | None = None
    max_chars: int | None = None
    response_format: bool = True
    reask: int = 1
    lenient: bool = False

    def __post_init__(self) -> None:
        # The judge's own checks, run when the settings are built: before a server is asked or a file is read.
        from ..checks import whole
        from ..errors import JudgeError
        from .http import check_timeout
        from .judge import _check_grade_scale

        check_timeout(self.timeout)
        _check_grade_scale(self.max_grade)
        if self.max_chars is not None:
            whole(self.max_chars, "max_chars", least=1, error=JudgeError)
        whole(self.reask, "reask (the re-asks an answer outside the form gets)", least=0, most=1, error=JudgeError)


@dataclass(frozen=True)
class JudgeSettings:
    """How :func:`~haystack_irmetrics.judges.judging.judge_runs` judges (each field is its keyword of the same name;
    its docstring says what each does). Each value is checked when the settings are built; what depends on the
    judge (the threshold, a grade of its scale) before the first request."""

    depth: int = 10
    concurrency: int = 8
    retries: int = 4
    backoff: float = 0.5
    agreement: int = 0
    seed: int = 0
    threshold: int = 1
    measure: str | None = None
    fit: int = 0
    ppi: bool = False
    alpha: float = 0.05
    #: What to call the queries and the corpus in messages (their files).
    sources: tuple[str, str] = ("the queries", "the corpus")
    #: The human qrels' file, recorded in ``summary.json`` as ``qrels`` (its absolute path and SHA-256), so that a
    #: reader of the folder scores "human" on the qrels it was judged against (:meth:`~.folder.JudgedFolder.recorded_qrels`).
    qrels_file: str | None = None
    progress: bool | None = False
    strategy: str | None = None
    budget: int | None = None

    def __post_init__(self) -> None:
        from ..checks import number, whole
        from ..errors import InvalidSeedError, JudgeError

        for name, least in (("depth", 1), ("concurrency", 1), ("retries", 0), ("agreement", 0), ("fit", 0)):
            whole(
                getattr(self, name),
                "the agreement sample" if name == "agreement" else name,
                least=least,
                error=JudgeError,
            )
        whole(self.seed, "seed", least=0, most=2**32 - 1, error=InvalidSeedError)
        number(self.backoff, "backoff (seconds)", 0, None, error=JudgeError)
        number(self.alpha, "alpha (the intervals' level is 1 - alpha)", 0, 1, closed="neither", error=JudgeError)

    @classmethod
    def of(cls, settings: JudgeSettings | None, options: Mapping[str, Any]) -> JudgeSettings:
        """``settings`` (default: the defaults) with the keyword ``options`` in place of its fields.

        :raises TypeError: an option that is no field, as Python says of an unknown keyword.
        """
        return settings_of(cls, options, "judge_runs", base=settings)


__all__ = ["API_KEY_ENV", "NO_KEY", "ChatSettings", "JudgeSettings"]
