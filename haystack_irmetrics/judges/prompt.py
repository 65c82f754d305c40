"""The judge's default graded prompt and the parsing of a model's answer into a grade.

The prompt asks for a grade from 0 (nothing to do with the query) to 3 (a passage that exists to answer it),
in the spirit of UMBRELA (Upadhyay et al., 2024) but in our own words. The user's template replaces it: any
text with the placeholders ``{query}`` and ``{document}`` (filled by plain replacement, so braces in the texts
are safe).

An answer is read by :func:`parse_grade`, in this order: a JSON object with a ``grade`` (or ``label``,
``relevance``, ``score``) field, a labelled grade (``Grade: 2``, ``final score: 2``, the last one counts), a bare
grade, a sentence ending in a grade. A grade outside ``0..max_grade``, a fraction, or no grade at all is
``None``: the pair stays unjudged, and is counted, never read as 0.

Usage::

    >>> parse_grade("2")
    2
    >>> parse_grade('```json\\n{"grade": 3}\\n```')
    3
    >>> parse_grade("The passage is on topic but does not answer it, so I give it 1.")
    1
    >>> parse_grade("Relevance: 2 out of 3"), parse_grade("Grade: 2/3"), parse_grade("score: 3/10")
    (2, 2, None)
    >>> parse_grade("I cannot tell."), parse_grade("7"), parse_grade("2.5")
    (None, None, None)
"""

from __future__ import annotations

import json
import re

#: The default system prompt: what the grades mean (0..3).
SYSTEM_PROMPT = (
    "You assess search results. You are shown a search query and one passage a search engine returned for it. "
    "Say how useful the passage is to the person who typed the query, on this scale:\n"
    "3 = the passage is about the query and holds the exact answer, or all the information asked for;\n"
    "2 = the passage holds an answer, but it is partial, unclear, or buried in unrelated text;\n"
    "1 = the passage is on the query's topic but does not answer it;\n"
    "0 = the passage has nothing to do with the query.\n"
    "Think of what the person searching wants, how much of the passage serves that, and whether it can be "
    "trusted. Answer with the grade alone: one digit, 0, 1, 2 or 3."
)
#: The default user message: ``{query}`` and ``{document}`` are replaced by the texts.
USER_TEMPLATE = "Query: {query}\n\nPassage: {document}\n\nGrade (0, 1, 2 or 3):"

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
_KEYS = ("grade", "label", "relevance", "score", "o")
_LABELLED = re.compile(
    r"(?:grade|label|relevance|score|rating)\s*(?:is|=|:)?\s*\**\s*(-?\d+(?:\.\d+)?)(?!\.\d)(?:\s*/\s*(\d+))?",
    re.I,
)
_BARE = re.compile(r"\s*[\"'*(\[]*\s*(-?\d+(?:\.\d+)?)\s*[\"'*)\].]*\s*")
_TRAILING = re.compile(r"(-?\d+(?:\.\d+)?)\s*[\"'*)\]]*\s*[.!]?\s*[\"'*)\]]*\s*\Z")


def fill(template: str, query: str, document: str) -> str:
    """``template`` with ``{query}`` and ``{document}`` replaced by the texts (in one pass: a query holding the
    text ``{document}`` stays as it is)."""
    parts = re.split(r"(\{query\}|\{document\})", template)
    return "".join(query if p == "{query}" else document if p == "{document}" else p for p in parts)


def _grade(value: object, max_grade: int, out_of: str | None = None) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, (int, float)) or value != value or value != int(value):
        return None
    if out_of is not None and int(out_of) != max_grade:
        return None
    grade = int(value)
    return grade if 0 <= grade <= max_grade else None


def _from_json(text: str, max_grade: int) -> tuple[bool, int | None]:
    """``(True, grade)`` when ``text`` is a JSON object or number, else ``(False, None)``."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False, None
    if isinstance(value, dict):
        for key in value:
            if isinstance(key, str) and key.strip().lower() in _KEYS:
                return True, _grade(value[key], max_grade)
        return True, None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True, _grade(value, max_grade)
    return False, None


def parse_grade(answer: str | None, max_grade: int = 3) -> int | None:
    """The grade a model's ``answer`` gives, or ``None`` when it gives none in ``0..max_grade`` (see the
    module's rules)."""
    if not answer or not isinstance(answer, str):
        return None
    text = answer.strip()
    fenced = _FENCE.search(text)
    for candidate in ([fenced.group(1).strip()] if fenced else []) + [text]:
        if candidate.startswith(("{", "[")) or candidate[:1].isdigit():
            found, grade = _from_json(candidate, max_grade)
            if found:
                return grade
        start, end = candidate.find("{"), candidate.rfind("}")
        if 0 <= start < end:
            found, grade = _from_json(candidate[start : end + 1], max_grade)
            if found and grade is not None:
                return grade
    labelled = list(_LABELLED.finditer(text))
    if labelled:
        last = labelled[-1]
        return _grade(last.group(1), max_grade, last.group(2))
    bare = _BARE.fullmatch(text)
    if bare:
        return _grade(bare.group(1), max_grade)
    trailing = _TRAILING.search(text)
    if trailing and len(text) > len(trailing.group(0)):
        return _grade(trailing.group(1), max_grade)
    return None


__all__ = ["SYSTEM_PROMPT", "USER_TEMPLATE", "fill", "parse_grade"]
