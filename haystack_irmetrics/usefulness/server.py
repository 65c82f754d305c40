"""A local OpenAI-compatible chat server that answers the usefulness prompt by a rule: for trying ``irmetrics
usefulness`` end to end with no model (what it asks, what it costs, the files it writes), and the server the tests
label against.

Run it with what the package installs::

    python -m haystack_irmetrics.usefulness.server --queries QUERIES --answers ANSWERS.jsonl --port 8767

It answers ``POST /v1/chat/completions`` on 127.0.0.1 (the judges' server, :class:`~haystack_irmetrics.judges.
server.JudgeServer`, reading the asker's default prompt back: any other prompt is a 400) as a reader that knows
the reference answers would (:func:`rule_answer`): the reference answer the passage holds, the one that starts
first (any case, as whole words), written as the passage writes it, in one of three forms chosen by a hash of the
question and passage (the span alone, ``The answer is SPAN.``, or ``SPAN.`` in capitals); ``unknown`` when the
passage holds none. So every label is known before a request: exact match is 1 for the first and third forms,
F1 below 1 for the second, containment 1 for all three. It is a stand-in, not a model.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..judges.server import JudgeServer, stable_hash
from .asker import DEFAULT_PROMPT

#: The port it listens on by default: not the judging page's (8765) nor the judges' server's (8766).
DEFAULT_PORT = 8767
#: What the rule answers when the passage holds no reference answer.
UNKNOWN = "unknown"
#: The asker's default prompt, read back: the question and the passage.
USER = re.compile(re.escape(DEFAULT_PROMPT).replace(r"\{question\}", "(.*?)").replace(r"\{document\}", "(.*)"), re.S)


def first_span(passage: str, references: Sequence[str]) -> str | None:
    """The reference answer ``passage`` holds that starts first (the longest where two start together), as the
    passage writes it: any case, as whole words; ``None`` when it holds none."""
    best: re.Match[str] | None = None
    for reference in references:
        found = re.search(rf"(?<!\w){re.escape(reference)}(?!\w)", passage, re.I)
        if found and (best is None or (found.start(), -len(found.group())) < (best.start(), -len(best.group()))):
            best = found
    return None if best is None else best.group()


def rule_answer(question: str, passage: str, references: Sequence[str]) -> str:
    """What the server answers to ``question`` from ``passage`` (the module's rule)."""
    span = first_span(passage, references)
    if span is None:
        return UNKNOWN
    return (span, f"The answer is {span}.", f"{span.upper()}.")[stable_hash(question, passage) % 3]


class AnswerServer(JudgeServer):
    """The server of ``{question text: [reference answer, ...]}`` (a question it has none for is answered
    ``unknown``); ``options`` go to :class:`~haystack_irmetrics.judges.server.JudgeServer` (``port``, ``delay``,
    ``faults``, ``respond``)."""

    user = USER

    def __init__(self, references: Mapping[str, Sequence[str]], **options: Any) -> None:
        super().__init__({}, **options)
        self.references = references

    def answers(self, question: str, passage: str) -> str:  # type: ignore[override]
        """The rule's answer (:func:`rule_answer`)."""
        return rule_answer(question, passage, self.references.get(question, ()))


def references_from_files(queries: str, answers: str) -> dict[str, list[str]]:
    """``{question text: [reference answer, ...]}`` of BEIR's queries and an answers file (``--answers``)."""
    from ..io.answers import read_answers
    from ..io.beir_data import beir_file, read_beir_queries

    texts = read_beir_queries(beir_file(queries, "queries"))
    return {texts[qid] or "": given for qid, given in read_answers(answers).items() if texts.get(qid)}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m haystack_irmetrics.usefulness.server``: serve the rule's answers until stopped."""
    p = argparse.ArgumentParser(
        prog="python -m haystack_irmetrics.usefulness.server",
        description="A local OpenAI-compatible chat server answering the usefulness prompt by a known rule.",
    )
    p.add_argument("--queries", required=True, help="BEIR queries.jsonl, or a BEIR folder")
    p.add_argument("--answers", required=True, help="the reference answers (JSONL: query_id, answers)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port on 127.0.0.1 (0: any free port)")
    p.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = p.parse_args(argv)
    references = references_from_files(args.queries, args.answers)
    server = AnswerServer(references, delay=args.delay, port=args.port)
    print(f"answering {len(references)} questions at {server.url}", flush=True)
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "DEFAULT_PORT",
    "UNKNOWN",
    "USER",
    "AnswerServer",
    "first_span",
    "main",
    "references_from_files",
    "rule_answer",
]
