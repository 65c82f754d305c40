"""The lenient reader (``--lenient``, opt-in): a grade guessed out of a model's free text, by a grammar, in linear
time. It can misread: a free-text grammar grows a rule per phrasing and never closes ("This deserves a 2, not a
3." reads 3). The default reader reads only the answer forms the judge asked for (:mod:`.grades`); this one is
kept for answers cached from models that were never asked for a form, and is recorded in the judge's
fingerprint and ``summary.json`` when used (docs/judging.md).

A grade is the number an answer gives *as its grade*, and nothing else: a number the answer mentions (a scale, a
year, a count in an explanation) is not a grade, and an answer that gives no grade, an unclear one or two
different ones is unparseable (``None``), never a number picked from the text.

1. **Length.** Only the first :data:`MAX_ANSWER_CHARS` characters are read (and kept in the cache).
2. **JSON.** An answer that is JSON (whole, in a code fence, or one ``{...}`` object inside the text) gives its
   grade in a field named ``grade``, ``label``, ``relevance``, ``score``, ``rating`` or ``o`` (any case; also
   ``final_score``, ``relevance grade``: the last word counts). The field holds a whole number (``2``, ``2.0``,
   ``"2"``); several such fields must agree. A JSON answer without such a field, a list, ``true`` or ``null`` is
   unparseable.
3. **Numbers.** A number is plain decimal digits, with an optional fraction (``2``, ``2.0``). ``0x2``, ``1e3``,
   ``1_000``, ``inf``, ``NaN``, ``-1``, ``+1``, ``2.5`` and digits of other scripts are numbers that are no grade:
   where the grade stands, they make the answer unparseable. A grade is a whole number from 0 to ``max_grade``.
4. **Scales are not grades.** A range (``0-3``, ``0 to 3``, ``between 0 and 3``) and a list of three or more
   numbers (``0, 1, 2 or 3``) are mentions of the scale and are skipped.
5. **Stated grades.** A label followed by a number (``Grade: 2``, ``relevance = 2``, ``**Score:** 2``,
   ``Grade (0-3): 2``), and ``N out of M`` or ``N/M`` with ``M`` the top grade (``0 out of 3``, ``2/3``), give
   ``N``. After a label, ``N/M`` or ``N out of M`` with another ``M`` (``score: 7/10``), a range (``Grade: 2-3``)
   or a choice (``Grade: 1 or 2``) is unparseable; without a label, ``N/M`` with another ``M`` is not a grade
   (a date, a fraction of something). Every stated grade of an answer must be the same grade.
6. **Otherwise, where it stands.** When nothing states a grade: an answer whose first line is a number alone
   (``2``, ``**1**``, ``"3".``), or a number followed by ``:``, ``-``, ``,``, ``;`` or a parenthesis
   (``0 (scale 0 to 3)``, ``2 - partly relevant``) gives that number; else an answer ending in a number after a
   word (``... so I grade it 2.``) gives it. A number after ``of``, ``to``, ``/``, ``-`` or another number is not
   such an ending.

Usage::

    >>> parse_free_text("Not relevant: 0 out of 3."), parse_free_text("0\\n\\nExplanation: it mentions 3")
    (0, 0)
    >>> parse_free_text("Grade: 1e999"), parse_free_text("0x2"), parse_free_text("Grade: 1. Final grade: 2.")
    (None, None, None)
"""

from __future__ import annotations

import json
import re
from typing import Any

from .grades import MAX_ANSWER_CHARS

#: The words that label a grade (the last word of a JSON key, or the word before a stated number).
LABELS = frozenset({"grade", "label", "relevance", "score", "rating", "o"})
#: Words that make a label name something else than the grade ("confidence score: 0.9", ``certainty_score``).
NOT_GRADES = frozenset({"confidence", "certainty", "probability", "uncertainty"})

# One pass over the text: a word (letters, digits, joined by "." or "_" between alphanumerics), a run of
# whitespace, or any other single character. No nested quantifiers: linear time.
_TOKEN = re.compile(r"[^\W_]+(?:[._][^\W_]+)*|\s+|.", re.S)
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?\Z")
_WHOLE = re.compile(r"[0-9]+(?:\.0+)?\Z")
_NON_NUMBERS = frozenset({"inf", "infinity", "nan"})
# Characters of markdown and quoting that decorate a grade ("**2**", "`2`", "'2'", "[2]", "> 2", "# 2").
_DECORATION = frozenset("*_`\"'[]>#~")
# What may stand between a label and its number ("Grade is 2", "relevance = 2", "score of 2", "Grade (0-3): 2").
_LINKS = frozenset({":", "=", "is", "of", "was", "would", "be", "a", "an", "final", "(", ")", "-", "→", "scale"})
_RANGE = frozenset({"-", "–", "—", "to", "through"})
_CHOICE = frozenset({",", "or", "and", "/"})
# A number after one of these is not an answer's closing grade ("... out of 3", "... 0 to 3").
_NOT_BEFORE_END = frozenset({"of", "to", "/", "-", "–", "—", "than", "from", "between", "and", "or", ",", "scale"})
_LEADING_STOPS = frozenset({":", "-", "–", "—", ",", ";", "(", "."})

_BAD = "bad"  # a number where a grade stands that is no grade: the answer is unparseable


class _Token:
    __slots__ = ("kind", "spaced", "text", "value")

    def __init__(self, text: str, kind: str, spaced: bool) -> None:
        self.text = text
        self.kind = kind  # "num" (plain decimal), "odd" (a number that is no grade), "word", "punct", "nl", "scale"
        self.spaced = spaced  # whitespace right before it
        self.value: Any = None


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    spaced = True
    for m in _TOKEN.finditer(text):
        t = m.group()
        if t.isspace():
            if "\n" in t:
                out.append(_Token("\n", "nl", True))
            spaced = True
            continue
        if t[0].isalnum() or t[0] == "_":
            lower = t.lower()
            if _NUMBER.match(t):
                kind = "num"
            elif any(c.isdigit() for c in t) or lower in _NON_NUMBERS:
                kind = "odd"
            else:
                kind = "word"
            out.append(_Token(lower if kind == "word" else t, kind, spaced))
        elif t in _DECORATION:  # "**2**": decoration neither joins nor separates
            continue
        else:
            out.append(_Token(t, "punct", spaced))
        spaced = False
    return out


def _value(token: _Token, max_grade: int) -> int | str:
    """The grade a number token gives, or :data:`_BAD`."""
    if token.kind != "num" or not _WHOLE.match(token.text):
        return _BAD
    digits = token.text.split(".")[0].lstrip("0") or "0"
    if len(digits) > 2:
        return _BAD
    grade = int(digits)
    return grade if grade <= max_grade else _BAD


def _is_number(tokens: list[_Token], i: int) -> bool:
    return 0 <= i < len(tokens) and tokens[i].kind in ("num", "odd")


def _signed(tokens: list[_Token], i: int) -> bool:
    """Whether ``tokens[i]`` is a sign glued to the number after it ("-1", "+2" where a grade stands)."""
    return (
        i + 1 < len(tokens)
        and tokens[i].text in ("-", "+", "−")
        and _is_number(tokens, i + 1)
        and not tokens[i + 1].spaced
        and not _is_number(tokens, i - 1)
    )


def _mark_scales(tokens: list[_Token]) -> list[_Token]:
    """The tokens with each range (``0-3``, ``0 to 3``, ``between 0 and 3``) and each list of three or more
    numbers (``0, 1, 2 or 3``) replaced by one ``scale`` token."""
    out: list[_Token] = []
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        if _is_number(tokens, i):
            # A list: number (sep number){2,}
            j, count = i, 1
            while (
                j + 2 < n and tokens[j + 1].text in _CHOICE and tokens[j + 1].text != "/" and _is_number(tokens, j + 2)
            ):
                j += 2
                count += 1
            if count >= 3:
                out.append(_Token("", "scale", t.spaced))
                i = j + 1
                continue
            if i + 2 < n and tokens[i + 1].text in _RANGE and _is_number(tokens, i + 2):
                if out and out[-1].text == "from":
                    out.pop()
                out.append(_Token("", "scale", t.spaced))
                i += 3
                continue
            if (
                out
                and out[-1].text == "between"
                and i + 2 < n
                and tokens[i + 1].text == "and"
                and _is_number(tokens, i + 2)
            ):
                out[-1] = _Token("", "scale", out[-1].spaced)
                i += 3
                continue
        out.append(t)
        i += 1
    return out


def _stated_at(tokens: list[_Token], i: int, max_grade: int) -> tuple[int | str | None, int]:
    """The grade stated by the number at ``tokens[i]`` (a sign before it makes it :data:`_BAD`) with what
    follows it: ``N/M`` and ``N out of M`` need ``M == max_grade`` (else :data:`_BAD`), a choice (``1 or 2``)
    is :data:`_BAD`. Returns ``(grade, index after)``."""
    if _signed(tokens, i):
        return _BAD, i + 2
    grade = _value(tokens[i], max_grade)
    j = i + 1
    n = len(tokens)
    if j < n and tokens[j].text == "/" and _is_number(tokens, j + 1):
        return (grade if _value(tokens[j + 1], 9) == max_grade else _BAD), j + 2
    if j + 1 < n and tokens[j].text == "out" and tokens[j + 1].text == "of" and _is_number(tokens, j + 2):
        return (grade if _value(tokens[j + 2], 9) == max_grade else _BAD), j + 3
    if j < n and tokens[j].text in _CHOICE and (_is_number(tokens, j + 1) or _signed(tokens, j + 1)):
        return _BAD, j + 2
    return grade, j


def _out_of(tokens: list[_Token], i: int, max_grade: int) -> bool:
    """Whether the number at ``i`` is followed by ``/M`` or ``out of M`` with ``M`` the top grade."""
    n = len(tokens)
    if i + 2 < n and tokens[i + 1].text == "/" and _is_number(tokens, i + 2):
        return _value(tokens[i + 2], 9) == max_grade
    if i + 3 < n and tokens[i + 1].text == "out" and tokens[i + 2].text == "of" and _is_number(tokens, i + 3):
        return _value(tokens[i + 3], 9) == max_grade
    return False


def _stated(tokens: list[_Token], max_grade: int) -> list[int | str]:
    """Every stated grade: a label and its number, ``N out of M``, ``N/M`` (rule 5)."""
    found: list[int | str] = []
    used: set[int] = set()
    n = len(tokens)
    for i, t in enumerate(tokens):
        if t.kind == "word" and t.text in LABELS and not (i and tokens[i - 1].text in NOT_GRADES):
            j, links = i + 1, 0
            while (
                j < n
                and links < 8
                and (tokens[j].kind == "scale" or tokens[j].text in _LINKS)
                and not _signed(tokens, j)
            ):
                j += 1
                links += 1
            if _is_number(tokens, j) or _signed(tokens, j):
                grade, _ = _stated_at(tokens, j, max_grade)
                found.append(grade)
                used.add(j + (1 if _signed(tokens, j) else 0))
    for i in range(n):
        if i not in used and _is_number(tokens, i) and _out_of(tokens, i, max_grade):
            found.append(_stated_at(tokens, i, max_grade)[0])
    return found


def _first_line(tokens: list[_Token], max_grade: int) -> int | str | None:
    """Rule 6's first form: the first line is a number alone, or a number and a stop (``:``, ``-``, ``(``...)."""
    if not tokens:
        return None
    i = 0
    if _signed(tokens, 0):
        return _BAD if (len(tokens) == 2 or tokens[2].kind == "nl" or tokens[2].text in _LEADING_STOPS) else None
    if not _is_number(tokens, 0):
        return None
    grade = _value(tokens[i], max_grade)
    rest = tokens[1:]
    if not rest or rest[0].kind == "nl":
        return grade
    stop = rest[0]
    if stop.text in (".", "!") and (len(rest) == 1 or rest[1].kind == "nl"):
        return grade
    if stop.text in _CHOICE and len(rest) > 1 and (_is_number(rest, 1) or _signed(rest, 1)):
        return _BAD
    if stop.text in _LEADING_STOPS - {"."}:
        return grade
    return None


def _last_number(tokens: list[_Token], max_grade: int) -> int | str | None:
    """Rule 6's second form: the answer ends in a number after a word (``... I grade it 2.``)."""
    end = len(tokens)
    while end and (tokens[end - 1].kind == "nl" or tokens[end - 1].text in (".", "!", ")")):
        end -= 1
    i = end - 1
    if i < 0 or not _is_number(tokens, i):
        return None
    if _signed(tokens, i - 1):
        before = tokens[i - 2] if i >= 2 else None
        return _BAD if before is not None and before.kind == "word" else None
    before = tokens[i - 1] if i >= 1 else None
    if before is None or before.text in _NOT_BEFORE_END or (before.kind != "word" and before.text not in (":", "=")):
        return None
    return _value(tokens[i], max_grade)


def _one(grades: list[int | str]) -> int | None:
    """The grade when every one of ``grades`` is the same whole grade, else ``None``."""
    if not grades or _BAD in grades or len(set(grades)) != 1:
        return None
    grade = grades[0]
    return grade if isinstance(grade, int) else None


def read_text(text: str, max_grade: int) -> int | None:
    """The grade a plain-text answer gives (rules 3-6)."""
    tokens = _mark_scales(_tokens(text))
    stated = _stated(tokens, max_grade)
    if stated:
        return _one(stated)
    for form in (_first_line, _last_number):
        grade = form(tokens, max_grade)
        if grade is not None:
            return _one([grade])
    return None


class _Literal(str):
    """A JSON number as written (``parse_float``/``parse_int``), so ``1e400`` is seen as written, never ``inf``."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _json(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is JSON (numbers kept as written, ``NaN``/``Infinity`` refused)."""
    try:
        return True, json.loads(text, parse_float=_Literal, parse_int=_Literal, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return False, None


def _json_grade(value: Any, max_grade: int) -> int | str:
    if isinstance(value, _Literal):
        return _value(_Token(value, "num" if _NUMBER.match(value) else "odd", False), max_grade)
    if isinstance(value, str):
        grade = read_text(value, max_grade)
        return _BAD if grade is None else grade
    return _BAD  # true, null, a list, an object


def _from_object(value: dict, max_grade: int) -> int | None:
    grades = []
    for key, v in value.items():
        words = re.split(r"[\s_\-]+", key.strip().lower()) if isinstance(key, str) else [""]
        if words[-1] in LABELS and not NOT_GRADES.intersection(words):
            grades.append(_json_grade(v, max_grade))
    return _one(grades)


def parse_free_text(answer: Any, max_grade: int = 3) -> int | None:
    """The grade ``answer`` gives under the grammar above, or ``None``."""
    if not isinstance(answer, str) or not answer.strip():
        return None
    text = answer[:MAX_ANSWER_CHARS].strip()
    # The whole answer, or the first code fence's content, as JSON.
    candidates = [text]
    start = text.find("```")
    if start >= 0:
        end = text.find("```", start + 3)
        if end > start:
            inner = text[start + 3 : end]
            if inner[:4].lower() == "json":
                inner = inner[4:]
            candidates.insert(0, inner.strip())
    for candidate in candidates:
        if candidate[:1] in '{["' or candidate[:1].isdigit() or candidate[:1] == "-":
            ok, value = _json(candidate)
            if ok:
                if isinstance(value, dict):
                    return _from_object(value, max_grade)
                if isinstance(value, (_Literal, str)):
                    return _one([_json_grade(value, max_grade)])
                return None
    # One JSON object inside the text: its grade, with the text around it read too (they must agree).
    left, right = text.find("{"), text.rfind("}")
    if 0 <= left < right:
        ok, value = _json(text[left : right + 1])
        if ok and isinstance(value, dict):
            inside = _from_object(value, max_grade)
            if inside is not None:
                around = _stated(_mark_scales(_tokens(text[:left] + "\n" + text[right + 1 :])), max_grade)
                return _one([inside, *around])
    return read_text(text, max_grade)


__all__ = ["LABELS", "parse_free_text", "read_text"]
