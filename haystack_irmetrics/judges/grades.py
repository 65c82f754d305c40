"""How a judge's answer is read: the answer form the judge was asked for (the *contract*), and nothing else.

The default prompt asks for one form, a JSON object ``{"grade": N}``, and the request carries it as
``response_format`` (:func:`response_format`: a JSON schema whose one required property ``grade`` is an integer
from 0 to the top grade), which OpenAI, vLLM, llama.cpp's server and Ollama enforce. An answer is read only in
these forms, after one leading ``<think>...</think>`` block (reasoning models send one) and one code fence
around the whole answer are taken off:

1. **a JSON object** whose ``grade`` is a whole number from 0 to the top grade (``2``, ``2.0``); other keys are
   ignored, but a duplicate key, a second grade-like key (``score``, ``relevance``, ``final_grade``, ...) that
   does not hold the same grade, or any text outside the object (or its fence) is not read;
2. **a bare whole number** in range, alone (``2``, ``2.``, ``**2**``);
3. **a final line** ``Grade: N`` (any case, ``**`` markup aside) when no other line states a grade (a line
   with a grade-like word and a number after it, a ``"grade"`` key, or a bare number).

Everything else is ``None``: the pair stays unjudged and is counted, and the judge asks once more with a
reminder of the form (:data:`REMINDER`). Reading is linear in the answer's first :data:`MAX_ANSWER_CHARS`
characters. A reader that guesses grades from free text is kept apart, opt-in (:mod:`.lenient`).

Usage::

    >>> read_contract('{"grade": 2, "reason": "on topic"}'), read_contract("2"), read_contract("Why...\\nGrade: 3")
    (2, 2, 3)
    >>> read_contract("<think>maybe 1</think>\\n```json\\n{\\"grade\\": 0}\\n```")
    0
    >>> read_contract("This deserves a 2, not a 3."), read_contract('{"grade": 2, "grade": 3}')
    (None, None)
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The most characters of an answer that are read (and kept): a longer answer is cut to this length first.
MAX_ANSWER_CHARS = 8192
#: The property of the contract's JSON object that holds the grade.
GRADE_KEY = "grade"
#: The words whose key or label names a grade (the last word of a key: ``final_grade``, ``relevance score``).
GRADE_WORDS = frozenset({"grade", "label", "relevance", "score", "rating"})
#: Words that make such a key name something else (``confidence_score``, ``certainty score``).
NOT_GRADES = frozenset({"confidence", "certainty", "probability", "uncertainty"})


def answer_form(max_grade: int) -> str:
    """The answer form a prompt asks for, in words (the default system prompt ends with it, and :data:`REMINDER`
    repeats it).

    >>> answer_form(3)
    'Answer with a JSON object and nothing else: {"grade": N}, where N is 0, 1, 2 or 3.'
    """
    grades = ", ".join(str(g) for g in range(max_grade)) + f" or {max_grade}"
    return f'Answer with a JSON object and nothing else: {{"grade": N}}, where N is {grades}.'


#: The follow-up message after an answer outside the contract (``{form}``: :func:`answer_form`).
REMINDER = "Your answer was not in the form asked for. {form}"


def response_format(max_grade: int) -> dict[str, Any]:
    """The ``response_format`` of a request: a JSON schema whose one required property ``grade`` is an integer
    from 0 to ``max_grade`` (as an ``enum``, the constraint every OpenAI-compatible server's structured output
    supports), nothing else allowed."""
    schema = {
        "type": "object",
        "properties": {GRADE_KEY: {"type": "integer", "enum": list(range(max_grade + 1))}},
        "required": [GRADE_KEY],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "relevance_grade", "strict": True, "schema": schema}}


_THINK = re.compile(r"\A\s*<think>.*?</think>", re.S | re.I)
_INFO = re.compile(r"[A-Za-z]*[ \t]*\n")  # a fence's info string (json) and its line's end
_BARE = re.compile(r"\A(\*\*|\*|`|)([0-9]{1,3})\1\.?\Z")
_FINAL = re.compile(r"\A\s*grade\s*:\s*([0-9]{1,3})\s*\.?\s*\Z", re.I)
# A line that states a grade: a grade word (not one of NOT_GRADES) and, after markup, quotes and a link, a number.
_STATED = re.compile(r"\b(?:grade|label|relevance|score|rating)s?\W{0,4}(?:is\s+|of\s+)?\W{0,3}[0-9]", re.I)
_WHOLE = re.compile(r"[0-9]{1,3}(?:\.0+)?\Z")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of JSON, refused when a key stands twice (``{"grade": 2, "grade": 3}`` says two things)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


class _Number(str):
    """A JSON number as written (``2``, ``2.0``, ``1e400``): read as a grade only when it is a whole number."""


def _refuse(name: str) -> Any:
    raise ValueError(name)  # NaN, Infinity: no grade


def _grade_of(value: Any, max_grade: int) -> int | None:
    if not isinstance(value, _Number) or not _WHOLE.match(value):
        return None
    grade = int(value.split(".")[0])
    return grade if grade <= max_grade else None


def _grade_like(key: str) -> bool:
    words = re.split(r"[\s_\-]+", key.strip().lower())
    return words[-1] in GRADE_WORDS and not NOT_GRADES.intersection(words)


def _from_json(text: str, max_grade: int) -> int | None:
    try:
        value = json.loads(
            text, object_pairs_hook=_pairs, parse_int=_Number, parse_float=_Number, parse_constant=_refuse
        )
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or GRADE_KEY not in value:
        return None
    grade = _grade_of(value[GRADE_KEY], max_grade)
    if grade is None:
        return None
    for key, other in value.items():
        if key != GRADE_KEY and _grade_like(key) and _grade_of(other, max_grade) != grade:
            return None  # two grade-like keys that say different things
    return grade


def _final_line(text: str, max_grade: int) -> int | None:
    lines = [line for line in text.replace("*", "").splitlines() if line.strip()]
    m = _FINAL.match(lines[-1]) if lines else None
    if m is None or any(_STATED.search(line) or _BARE.match(line.strip()) for line in lines[:-1]):
        return None
    grade = int(m.group(1))
    return grade if grade <= max_grade else None


def unwrap(answer: str) -> str:
    """``answer`` without one leading ``<think>...</think>`` block and one code fence around the rest (an
    unclosed ``<think>`` is left, so that nothing is read from it)."""
    text = _THINK.sub("", answer[:MAX_ANSWER_CHARS], count=1).strip()
    if len(text) >= 6 and text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        info = _INFO.match(inner)
        inner = inner[info.end() :] if info else inner
        if "```" not in inner:
            return inner.strip()
    return text


def read_contract(answer: Any, max_grade: int = 3) -> int | None:
    """The grade ``answer`` gives in one of the contract's three forms (the module's docstring), or ``None``."""
    if not isinstance(answer, str):
        return None
    text = unwrap(answer)
    if not text:
        return None
    if text.startswith("{"):
        return _from_json(text, max_grade)
    m = _BARE.match(text)
    if m is not None:
        grade = int(m.group(2))
        return grade if grade <= max_grade else None
    return _final_line(text, max_grade)


__all__ = [
    "GRADE_KEY",
    "MAX_ANSWER_CHARS",
    "REMINDER",
    "answer_form",
    "read_contract",
    "response_format",
    "unwrap",
]
