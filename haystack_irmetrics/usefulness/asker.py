"""The asker of a RAG pipeline's generator: one request per (question, document), the generator asked for a short
answer from that document alone (:class:`AnswerAsker`), and the generator of a pipeline YAML
(:func:`load_generator`).

The asker speaks the judges' protocol (:class:`~haystack_irmetrics.judges.batch.Asker`), so that
:func:`~haystack_irmetrics.judges.batch.judge_texts` drives it: concurrency, bounded retries, the SQLite cache,
kill and resume, the progress bar, the server's credentials never written. What the cache keeps is the raw
answer, keyed by the asker's fingerprint (the generator's settings, the prompt, ``max_chars``) and the exact
question and document texts; the reference answers are not in the key: a label is computed from the cached
answer and the references each time (:func:`~.metrics.answer_score`), so a changed answers file or answer metric
labels again from the cache with no request. The "label" the cache records for a row is only whether the answer
was empty (0) or not (1), read from the raw answer alone (:meth:`AnswerAsker.read_answers`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..checks import whole
from ..errors import UsefulnessError
from ..judges.judge import ChatAsker, Verdict, fingerprint_of

#: The default prompt, one user message: ``{question}`` and ``{document}`` are replaced by the texts (one pass,
#: so braces in the texts stay as they are).
DEFAULT_PROMPT = (
    "Answer the question using only the passage. Reply with the answer alone, in as few words as possible (a "
    "name, a number, a date or a short phrase), with no explanation. If the passage does not hold the answer, "
    "reply: unknown\n\nQuestion: {question}\n\nPassage: {document}\n\nAnswer:"
)
PLACEHOLDERS = ("{question}", "{document}")


_PLACEHOLDER = re.compile(r"(\{question\}|\{document\})")


def fill(prompt: str | list[str], question: str, document: str) -> str:
    """``prompt`` with ``{question}`` and ``{document}`` replaced by the texts, in one pass (a question holding the
    text ``{document}`` stays as it is); ``prompt`` may be given split already (:func:`split_prompt`)."""
    texts = dict(zip(PLACEHOLDERS, (question, document)))
    parts = split_prompt(prompt) if isinstance(prompt, str) else prompt
    return "".join(texts.get(part, part) for part in parts)


def split_prompt(prompt: str) -> list[str]:
    """``prompt`` in parts, each placeholder a part of its own."""
    return _PLACEHOLDER.split(prompt)


def joined(documents: Sequence[str]) -> str:
    """The texts of several documents as one passage (``--end-to-end``): one blank line between two."""
    return "\n\n".join(documents)


class AnswerAsker(ChatAsker):
    """Ask a chat generator for a short answer to a question from one document (one request per pair; an answer
    is never asked again).

    :param generator: any Haystack chat generator, as the RAG pipeline holds it (its own ``generation_kwargs``,
        temperature included, are what it is asked with).
    :param prompt: the one user message, with ``{question}`` and ``{document}`` (default :data:`DEFAULT_PROMPT`).
    :param max_chars: a longer document is cut to its first this many characters before it is sent.
    :raises UsefulnessError: a generator that is not a chat generator, a prompt without its placeholders, a
        ``max_chars`` that is not a whole number >= 1.
    """

    kind = "usefulness"
    role = "generator"
    reask_count = 0
    #: The version of :meth:`read_answers` (whether an answer is empty).
    parser_version = 1

    def __init__(self, generator: Any, *, prompt: str | None = None, max_chars: int | None = None) -> None:
        super().__init__(generator, UsefulnessError)
        self.prompt = DEFAULT_PROMPT if prompt is None else prompt
        if not isinstance(self.prompt, str) or any(p not in self.prompt for p in PLACEHOLDERS):
            raise UsefulnessError(f"the prompt must be a text holding {' and '.join(PLACEHOLDERS)}, got {prompt!r:.80}")
        if max_chars is not None:
            whole(max_chars, "max_chars", least=1, error=UsefulnessError)
        self.max_chars = max_chars
        self._parts = split_prompt(self.prompt)

    def settings(self) -> dict[str, Any]:
        """What the fingerprint is made of (no API key): the generator, its server, the prompt, ``max_chars``."""
        return {**self.generator_settings(), "kind": self.kind, "prompt": self.prompt, "max_chars": self.max_chars}

    def fingerprint(self) -> str:
        """The SHA-256 of :meth:`settings`."""
        return fingerprint_of(self.settings())

    def legacy_fingerprints(self) -> list[str]:
        """None: the asker's fingerprint has had one form."""
        return []

    def read_answers(self, raw: str | None, reask_raw: str | None) -> tuple[int | None, bool]:
        """What the cache records of an answer: 1 when it holds text, 0 when it is empty (never re-asked)."""
        return int(bool(raw and raw.strip())), False

    def message(self, question: str, document: str) -> str:
        """The user message of a pair: the prompt filled, the document cut to ``max_chars``."""
        return fill(self._parts, question, document[: self.max_chars])

    def ask(self, query: str, document: str) -> Verdict:
        """One request: the generator's answer to ``query`` from ``document`` (an empty answer is an answer:
        ``""``; a reply with no choices is a failed request, retried). The generator's errors are raised as they
        come; :func:`~haystack_irmetrics.judges.batch.judge_texts` retries them."""
        self.warm_up()
        text, tokens = self._answer(self._run([_user(self.message(query, document))], {}), empty=True)
        return Verdict(self.read_answers(text, None)[0], text, tokens)

    def reask(self, query: str, document: str, first: Verdict) -> Verdict:
        """Never called (``reask_count`` is 0): every answer is read as it is."""
        raise UsefulnessError("a generator's answer is never asked again")


def _user(text: str) -> Any:
    """A user message (Haystack's ``ChatMessage``, imported on the first)."""
    from haystack.dataclasses import ChatMessage

    return ChatMessage.from_user(text)


def load_generator(path: str) -> Any:
    """The chat generator of the pipeline YAML ``path`` (a RAG pipeline's own, say): its one component that takes
    ``messages`` and answers ``replies``. An OpenAI generator with no client settings of its own has its time-out
    bound whole requests (:func:`~haystack_irmetrics.judges.http.bound_requests`), as ``irmetrics judge`` does.

    :raises UsefulnessError: a YAML that cannot be loaded (one line), or that holds no chat generator or several.
    """
    import inspect

    from ..judges.http import bound_requests
    from ..judges.job import load_yaml

    pipeline = load_yaml(path, "the generator", UsefulnessError)
    found = [
        (name, c)
        for name, c in pipeline.walk()
        if callable(getattr(c, "run", None)) and "messages" in inspect.signature(c.run).parameters
    ]
    if len(found) != 1:
        names = ", ".join(name for name, _ in found) or "none"
        raise UsefulnessError(
            f"the generator YAML {path} must hold one chat generator, it holds {len(found)} ({names})"
        )
    bound_requests(found[0][1])
    return found[0][1]


__all__ = ["DEFAULT_PROMPT", "AnswerAsker", "fill", "joined", "load_generator", "split_prompt"]
