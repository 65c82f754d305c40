"""TREC diversity qrels (Web track 2009-2014): ``query subtopic doc label``, read as ndeval reads them.

The second column, which ordinary qrels leave at 0 (trec_eval ignores it), names the subtopic a
document is judged for; a document judged for several subtopics has one line for each.
:func:`read_subtopic_qrels` returns a :class:`~haystack_irmetrics.core.subtopics.SubtopicQrels`, which
:func:`~haystack_irmetrics.evaluate` takes in place of the qrels (the diversity measures read each
subtopic; the others each document's highest label).
"""

from __future__ import annotations

import math
import os

from ..core.subtopics import SubtopicQrels
from ..errors import ParseError
from .text import text_lines

PathLike = str | os.PathLike[str]


def read_subtopic_qrels(path: PathLike) -> SubtopicQrels:
    """Read ``query subtopic doc label`` lines (whitespace-separated; gzip read as it is).

    :raises ParseError: a line without four fields, a label that is not a finite number, a document judged
        twice for one subtopic of a query, or a file without a judgment; the message names the file and line.
    """
    data: dict[str, dict[str, dict[str, float]]] = {}
    for lineno, line in text_lines(path, decompress=True):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise ParseError(
                f"expected 4 fields 'query subtopic doc label' (TREC diversity qrels), got {len(fields)}",
                path=str(path), line=lineno,
            )  # fmt: skip
        qid, sub, doc, text = fields
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ParseError(f"label {text!r} is not a finite number", path=str(path), line=lineno)
        docs = data.setdefault(qid, {}).setdefault(sub, {})
        if doc in docs:
            raise ParseError(
                f"document {doc!r} is judged twice for subtopic {sub!r} of query {qid!r}", path=str(path), line=lineno
            )
        docs[doc] = int(value) if value.is_integer() and abs(value) < 2**53 else value
    if not data:
        raise ParseError("no judgment in the file", path=str(path))
    return SubtopicQrels.from_dict(data)


__all__ = ["read_subtopic_qrels"]
