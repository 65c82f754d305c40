"""What a generation is scored by against a question's reference answers: SQuAD's exact match and token F1, as
SQuAD v1.1's official ``evaluate-v1.1.py`` computes them (both texts normalized: lowercased, ASCII punctuation
and the articles a, an, the removed, whitespace collapsed), and containment (a normalized reference stands in the
normalized generation as whole words); each the maximum over the references (:func:`answer_score`).

``exact_match`` and ``contains`` give 0 or 1; ``f1`` a number in [0, 1] (a float, 0.0 and 1.0 included): a graded
label (:data:`GRADED`).

Usage::

    >>> answer_score("exact_match", "The Corran Bridge.", ["corran bridge"])
    1
    >>> answer_score("f1", "It opened in 1887", ["1887", "in 1887"])
    0.6666666666666666
    >>> answer_score("contains", "It opened in 1887.", ["1887"]), answer_score("contains", "18870", ["1887"])
    (1, 0)
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Sequence

from ..errors import UsefulnessError

#: The answer metrics, in the order the CLI lists them.
ANSWER_METRICS = ("exact_match", "f1", "contains")
#: The metrics whose labels are graded (any number in [0, 1]), not 0 or 1.
GRADED = frozenset({"f1"})

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD's normalization: lowercase, no ASCII punctuation, no articles (a, an, the), single spaces.

    >>> normalize_answer("  The  Corran-Bridge, an arch! ")
    'corranbridge arch'
    """
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def exact_match(prediction: str, reference: str) -> int:
    """1 when the two texts are equal once normalized, else 0."""
    return int(normalize_answer(prediction) == normalize_answer(reference))


def token_f1(prediction: str, reference: str) -> float:
    """The F1 of the normalized texts' words (shared words counted with their multiplicity); 0.0 when none is
    shared (an empty generation included)."""
    predicted, wanted = normalize_answer(prediction).split(), normalize_answer(reference).split()
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return (2 * precision * recall) / (precision + recall)


def contains(prediction: str, reference: str) -> int:
    """1 when the normalized reference stands in the normalized generation as whole words (``1887`` is not in
    ``18870``), else 0."""
    return int(f" {normalize_answer(reference)} " in f" {normalize_answer(prediction)} ")


_METRICS: dict[str, Callable[[str, str], float]] = {"exact_match": exact_match, "f1": token_f1, "contains": contains}


def answer_score(metric: str, prediction: str, references: Sequence[str]) -> int | float:
    """The best score of ``prediction`` against any of ``references`` by ``metric`` (one of
    :data:`ANSWER_METRICS`)."""
    score = _METRICS[metric]
    return max(score(prediction, reference) for reference in references)


def check_references(references: object, where: str) -> list[str]:
    """``references`` (a question's reference answers) as a list: one or more strings, none empty once normalized
    (an answer such as ``"the"`` would match only an empty generation).

    :raises UsefulnessError: naming ``where`` (``query 'q1'``, ``question 3``).
    """
    if isinstance(references, str) or not isinstance(references, Sequence) or not references:
        raise UsefulnessError(f"{where} has no reference answers: give one or more (a list of strings)")
    for answer in references:
        if not isinstance(answer, str):
            raise UsefulnessError(f"{where}: a reference answer must be a string, got {type(answer).__name__}")
        if not normalize_answer(answer):
            raise UsefulnessError(
                f"{where}: reference answer {answer!r} is empty once normalized (SQuAD's rule: lowercase, no "
                "punctuation or articles): it would match only an empty generation"
            )
    return list(references)


__all__ = [
    "ANSWER_METRICS",
    "GRADED",
    "answer_score",
    "check_references",
    "contains",
    "exact_match",
    "normalize_answer",
    "token_f1",
]
