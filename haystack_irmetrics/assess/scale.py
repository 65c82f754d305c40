"""The grade scale a person judges on, read from the same text the model judge is prompted with, and the
query's terms found in a document, for the judging page.

**One source for the scale.** The definitions shown beside the grade keys are the lines ``N = definition`` of a
judge's system prompt: by default :data:`~haystack_irmetrics.judges.prompt.SYSTEM_PROMPT` (0..3), or the file
given to ``irmetrics judge --system-prompt``, so people and the model judge on one scale, worded once.

**Highlighting.** A document's words are matched to the query's as the BM25 engine analyses text
(:mod:`haystack_irmetrics.integration.stores.bm25s_store`): lowercased ``\\w+`` tokens, Lucene's 33 English stop
words left out, Porter stems compared. The document comes back as plain-text segments, each marked as a match or
not: the page shows them as text, never as markup.

Usage::

    >>> scale = grade_definitions(SYSTEM_PROMPT, 3)
    >>> sorted(scale), scale[0]
    ([0, 1, 2, 3], 'the passage has nothing to do with the query')
    >>> highlight("Shoes for running a marathon", "the marathon runs, in good shoes")
    [['Shoes', True], [' for ', False], ['running', True], [' a ', False], ['marathon', True]]
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..checks import whole
from ..errors import AssessError
from ..judges.prompt import SYSTEM_PROMPT

#: A definition line of a prompt: ``3 = the passage is about the query ...;`` (the ending ``;`` or ``.`` dropped).
_DEFINITION = re.compile(r"^\s*(\d+)\s*=\s*(.+?)\s*[;.]?\s*$", re.M)
#: Word tokens as the BM25 engine reads them (Lucene's ``\w+``).
_WORD = re.compile(r"\w+")


def grade_definitions(prompt: str, max_grade: int, source: str = "the default prompt") -> dict[int, str]:
    """``{grade: definition}`` for ``0..max_grade``, from the lines ``N = definition`` of ``prompt``.

    :param source: what to call the prompt in messages (a file's path).
    :raises AssessError: ``max_grade`` below 1, a grade the prompt does not define (naming it), or one
        it defines twice.
    """
    whole(max_grade, "--max-grade", least=1, error=AssessError)
    found: dict[int, str] = {}
    for match in _DEFINITION.finditer(prompt):
        grade = int(match.group(1))
        if grade in found:
            raise AssessError(f"{source} defines grade {grade} twice")
        found[grade] = match.group(2)
    missing = [g for g in range(max_grade + 1) if g not in found]
    if missing:
        hint = (
            " (the default scale is 0..3: give --scale FILE, a prompt with a line 'N = definition' per grade)"
            if source == "the default prompt"
            else ""
        )
        raise AssessError(f"{source} defines no grade {', '.join(map(str, missing))} of the scale 0..{max_grade}{hint}")
    return {g: found[g] for g in range(max_grade + 1)}


def default_definitions(max_grade: int = 3) -> dict[int, str]:
    """The judge's default scale (:data:`~haystack_irmetrics.judges.prompt.SYSTEM_PROMPT`) up to ``max_grade``."""
    return grade_definitions(SYSTEM_PROMPT, max_grade)


@lru_cache(maxsize=1)
def _analysis() -> tuple[frozenset[str], object]:
    """Lucene's English stop words (bm25s) and a Porter stemmer (PyStemmer): the BM25 engine's analysis."""
    import Stemmer
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN), Stemmer.Stemmer("porter")


def query_stems(query: str) -> frozenset[str]:
    """The Porter stems of the query's words that are not stop words."""
    stop, stemmer = _analysis()
    words = [w.lower() for w in _WORD.findall(query)]
    return frozenset(stemmer.stemWords([w for w in words if w not in stop]))  # type: ignore[attr-defined]


def highlight(text: str, query: str) -> list[list[str | bool]]:
    """``text`` as ``[segment, matches]`` pairs, in order, which join back to ``text``: each word that is not a
    stop word and whose stem is one of the query's (:func:`query_stems`) is a segment marked ``True``."""
    stems = query_stems(query)
    if not text:
        return []
    stop, stemmer = _analysis()
    spans = [m.span() for m in _WORD.finditer(text)]
    lowered = [text[a:b].lower() for a, b in spans]
    words = stemmer.stemWords(lowered)  # type: ignore[attr-defined]
    out: list[list[str | bool]] = []
    last = 0
    for (start, end), word, stem in zip(spans, lowered, words):
        if stem in stems and word not in stop:  # a stop word is no match ("is" stems to the query's "I")
            if start > last:
                out.append([text[last:start], False])
            out.append([text[start:end], True])
            last = end
    if last < len(text):
        out.append([text[last:], False])
    return out


#: The top grade the judging page takes: one key per grade, ``0`` .. ``9`` (a two-key grade such as 10 would
#: label two pairs, 1 then 0).
PAGE_TOP_GRADE = 9


def check_page_scale(max_grade: int) -> None:
    """The page labels with one key per grade: a scale above :data:`PAGE_TOP_GRADE` is refused.

    :raises AssessError: naming the top grade and what to do.
    """
    if isinstance(max_grade, int) and max_grade > PAGE_TOP_GRADE:
        raise AssessError(
            f"--max-grade {max_grade}: the judging page takes one key per grade, 0 to {PAGE_TOP_GRADE}; judge on a "
            f"scale of at most 0..{PAGE_TOP_GRADE} (labels judged elsewhere come in with irmetrics assess import)"
        )


def scale_of(path: str | None, max_grade: int) -> dict[int, str]:
    """The grade scale the page shows: read from the judge's prompt file ``path`` (``--scale``), else the
    default prompt's.

    :raises AssessError: a scale the page cannot take (:func:`check_page_scale`), or one the prompt does not
        define.
    """
    check_page_scale(max_grade)
    if path is None:
        return default_definitions(max_grade)
    from pathlib import Path

    return grade_definitions(Path(path).read_text(encoding="utf-8"), max_grade, path)


__all__ = [
    "PAGE_TOP_GRADE",
    "check_page_scale",
    "default_definitions",
    "grade_definitions",
    "highlight",
    "query_stems",
    "scale_of",
]
