"""Judgments per subtopic, for the diversity measures: ``{qid: {subtopic: {docid: label}}}``.

TREC's diversity qrels (Web 2009-2014) write ``query subtopic doc label``: the second column, which
ordinary qrels leave at 0, names the subtopic (ndeval's reading). A :class:`SubtopicQrels` is given to
:func:`haystack_irmetrics.evaluate` in place of the qrels: the diversity measures (``alpha_nDCG@k``,
``ERR_IA@k``, ``NRBP``, ``StRecall@k``) read each subtopic, every other measure reads its topical view
(:attr:`SubtopicQrels.topical`), each document with its highest label over the subtopics, as a
document relevant to any subtopic is relevant to the topic (ndeval's own MAP reads them so).

    >>> from haystack_irmetrics.core.subtopics import SubtopicQrels
    >>> sub = SubtopicQrels.from_dict({"q1": {"1": {"d1": 1, "d2": 0}, "2": {"d2": 1, "d3": 2}}})
    >>> sub.topical.data
    {'q1': {'d1': 1, 'd2': 1, 'd3': 2}}
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

import numpy as np

from ..checks import is_whole
from ..errors import EmptyInputError, InvalidIdError, InvalidLabelError
from .inputs import Qrels
from .validation import is_finite_number, is_mapping, shown

SubtopicQrelsDict = Mapping[str, Mapping[str, Mapping[str, float]]]


def _plain(docs: Mapping) -> bool:
    """Whether every id of ``docs`` is a str and every label a finite int or float (checked at C speed)."""
    if not set(map(type, docs)) <= {str} or not set(map(type, docs.values())) <= {int, float}:
        return False
    try:
        return bool(np.isfinite(np.fromiter(docs.values(), np.float64, count=len(docs))).all())
    except OverflowError:  # an int beyond any float: the slow check names it
        return False


class SubtopicQrels:
    """Validated, read-only judgments per subtopic; build with :meth:`from_dict` (or read a file with
    :func:`haystack_irmetrics.io.read_subtopic_qrels`). Subtopic ids are strings (``1`` and ``"1"`` are one)."""

    __slots__ = ("__dict__", "data")

    def __init__(self, data: dict[str, dict[str, dict[str, float]]]) -> None:
        self.data = data

    @classmethod
    def from_dict(cls, qrels: SubtopicQrelsDict | SubtopicQrels) -> SubtopicQrels:
        """Check every query id, subtopic id, document id and label; a bad one raises naming where it is.

        :raises InvalidIdError: a query, subtopic or document id that is not a string (subtopics may be ints).
        :raises InvalidLabelError: a label that is not a finite number, or a level that is not a dict.
        :raises EmptyInputError: no query at all.
        """
        if isinstance(qrels, SubtopicQrels):
            return qrels
        if not is_mapping(qrels):
            raise InvalidLabelError(
                f"subtopic qrels must be a dict {{qid: {{subtopic: {{docid: label}}}}}}, got {type(qrels).__name__}"
            )
        data: dict[str, dict[str, dict[str, float]]] = {}
        for qid, subtopics in qrels.items():
            if not isinstance(qid, str):
                raise InvalidIdError(f"query id {shown(qid)} in the subtopic qrels must be a string")
            if not is_mapping(subtopics):
                raise InvalidLabelError(
                    f"subtopic qrels[{qid!r}] must be a dict {{subtopic: {{docid: label}}}}, got {type(subtopics).__name__}"
                )
            inner: dict[str, dict[str, float]] = {}
            for sub, docs in subtopics.items():
                if not (isinstance(sub, str) or is_whole(sub)):
                    raise InvalidIdError(f"subtopic id {shown(sub)} of query {qid!r} must be a string or an integer")
                key = str(sub)
                if key in inner:
                    raise InvalidIdError(
                        f"subtopic {key!r} of query {qid!r} is given twice (as {sub!r} and as a string)"
                    )
                if not is_mapping(docs):
                    raise InvalidLabelError(
                        f"subtopic qrels[{qid!r}][{key!r}] must be a dict {{docid: label}}, got {type(docs).__name__}"
                    )
                if _plain(docs):
                    inner[key] = dict(docs)
                    continue
                for doc, label in docs.items():
                    if not isinstance(doc, str):
                        raise InvalidIdError(
                            f"document id {shown(doc)} in query {qid!r}, subtopic {key!r} must be a string"
                        )
                    if not is_finite_number(label):  # a bool is no number there
                        raise InvalidLabelError(
                            f"label {shown(label)} of document {doc!r} in query {qid!r}, subtopic {key!r} "
                            "is not a finite number"
                        )
                inner[key] = dict(docs)
            data[qid] = inner
        if not data:
            raise EmptyInputError("the subtopic qrels hold no query")
        return cls(data)

    @cached_property
    def topical(self) -> Qrels:
        """The judgments per query: each document with its highest label over the subtopics."""
        out: dict[str, dict[str, float]] = {}
        for qid, subtopics in self.data.items():
            docs: dict[str, float] = {}
            for judged in subtopics.values():
                for doc, label in judged.items():
                    docs[doc] = label if doc not in docs or label > docs[doc] else docs[doc]
            out[qid] = docs
        return Qrels.from_dict(out)

    def relevant_sets(self, qid: str, level: float) -> tuple[dict[str, list[int]], int, int]:
        """``(doc -> indices of the subtopics it is relevant to (label >= level), number of subtopics with a
        relevant document, number of documents judged for the query)``; subtopics numbered in first-seen order."""
        sets: dict[str, list[int]] = {}
        judged: set[str] = set()
        actual = 0
        for index, docs in enumerate(self.data.get(qid, {}).values()):
            judged.update(docs)
            relevant = [doc for doc, label in docs.items() if label >= level]
            if relevant:
                actual += 1
                for doc in relevant:
                    sets.setdefault(doc, []).append(index)
        return sets, actual, len(judged)

    def __repr__(self) -> str:
        n = sum(len(s) for s in self.data.values())
        return f"SubtopicQrels(queries={len(self.data)}, subtopics={n})"
