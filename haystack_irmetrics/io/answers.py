"""Reference answers, one JSONL object per question: ``{"query_id": "q1", "answers": ["1887", "in 1887"]}``, the
file ``irmetrics usefulness --answers`` reads (:func:`read_answers`) and the sample's script writes
(:func:`write_answers`); what one writes, the other reads back to the same answers.

Usage::

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "answers.jsonl"
    >>> _ = write_answers({"q1": ["1887"], "q2": ["Hedda Marsh", "Marsh"]}, path)
    >>> read_answers(path)
    {'q1': ['1887'], 'q2': ['Hedda Marsh', 'Marsh']}
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import ParseError
from .beir_data import read_jsonl

PathLike = str | os.PathLike


def read_answers(path: PathLike) -> dict[str, list[str]]:
    """``{query_id: [answer, ...]}`` of an answers JSONL file, in file order.

    :raises ParseError: naming the file and line: as :func:`~.beir_data.read_jsonl`, a ``query_id`` that is not a
        string or appears twice, ``answers`` that are not a non-empty list of strings, or no line at all.
    """
    answers: dict[str, list[str]] = {}
    first: dict[str, int] = {}
    for lineno, obj in read_jsonl(path, ("query_id",)):
        qid, given = obj["query_id"], obj.get("answers")
        if not isinstance(qid, str):
            raise ParseError(
                f"'query_id' must be a string, found {type(qid).__name__} {qid!r}", path=str(path), line=lineno
            )
        if qid in first:
            raise ParseError(f"query {qid!r} appears twice (first on line {first[qid]})", path=str(path), line=lineno)
        if not isinstance(given, list) or not given or not all(isinstance(a, str) for a in given):
            raise ParseError(
                f"query {qid!r}: 'answers' must be a list of one or more strings, found {given!r:.80}",
                path=str(path),
                line=lineno,
            )
        first[qid] = lineno
        answers[qid] = list(given)
    if not answers:
        raise ParseError("no reference answers (empty file?)", path=str(path))
    return answers


def write_answers(answers: Mapping[str, Sequence[str]], path: PathLike) -> Path:
    """Write ``{query_id: [answer, ...]}`` as an answers JSONL file, whole or not at all
    (:func:`~haystack_irmetrics.io.output.write_text`); returns ``path``."""
    from .output import write_text
    from .tables import json_text

    lines = [
        json_text({"query_id": qid, "answers": list(given)}, ensure_ascii=False) + "\n"
        for qid, given in answers.items()
    ]
    return write_text(path, "".join(lines))


__all__ = ["read_answers", "write_answers"]
