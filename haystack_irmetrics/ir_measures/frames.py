"""Qrels and runs in every form ir_measures takes, read into the core's ``{qid: {docid: value}}`` dicts.

ir_measures takes a dict of dicts, a pandas DataFrame (columns ``query_id``, ``doc_id`` and ``relevance`` or
``score``) or an iterable of namedtuples with those fields (``ir_measures.Qrel``, ``ScoredDoc``, what
``ir_measures.read_trec_qrels`` and ``read_trec_run`` yield from TREC files). A dict is taken as it is; the
rows of the other two are grouped query by query at C level (a DataFrame's query column factorized by
pandas, namedtuples by ``itertools.groupby``), with no Python statement per row. A (query, document) pair
given twice is a :class:`~haystack_irmetrics.errors.DuplicateDocumentError` naming both rows, where
ir_measures' own conversion keeps the last row's value silently. The caller's input is never modified.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain, groupby
from operator import itemgetter
from typing import Any

import numpy as np

from ..checks import is_number
from ..errors import DuplicateDocumentError, InvalidArgumentError, InvalidIdError, InvalidScoreError

_FORMS = (
    "a dict {{qid: {{docid: value}}}}, a pandas DataFrame or an iterable of namedtuples (ir_measures.{}); a TREC file"
    " is read with ir_measures.read_trec_{}(path)"
)


@dataclass(frozen=True)
class Judgments:
    """Qrels as the core reads them, and the query sets ir_measures' references count: ``all_qids`` (a dict's
    keys, an empty judgment dict included) and ``judged`` (queries with at least one judgment)."""

    data: dict[str, dict[str, Any]]
    all_qids: list[str]
    judged: list[str]


def read_qrels(qrels: Any) -> Judgments:
    """Judgments from any form ir_measures takes (an ``iteration`` column or field is read as no subtopic)."""
    data = qrels if isinstance(qrels, dict) else _rows(qrels, ("query_id", "doc_id", "relevance"), "qrels", "Qrel")
    return Judgments(data, list(data), [q for q, docs in data.items() if docs])


def read_run(run: Any) -> dict[str, dict[str, Any]]:
    """A run from any form ir_measures takes, as ``{qid: {docid: score}}``."""
    return run if isinstance(run, dict) else _rows(run, ("query_id", "doc_id", "score"), "run", "ScoredDoc")


def _rows(table: Any, fields: tuple[str, str, str], source: str, kind: str) -> dict[str, dict[str, Any]]:
    if hasattr(table, "itertuples") and hasattr(table, "columns"):
        return _frame(table, fields, source)
    if isinstance(table, str | bytes) or not isinstance(table, Iterable):
        raise InvalidArgumentError(f"{source} must be {_FORMS.format(kind, source)}, got {type(table).__name__}")
    rows = table if isinstance(table, list) else list(table)
    if not rows:
        return {}
    first = rows[0]
    names = getattr(first, "_fields", None)
    if not isinstance(first, tuple) or names is None or not set(fields) <= set(names):
        raise InvalidArgumentError(
            f"{source} row 1 must be a namedtuple with fields {list(fields)} (ir_measures.{kind}), got {first!r:.80}"
        )
    q, d, v = (names.index(f) for f in fields)
    out: dict[str, dict[str, Any]] = {}
    pair = itemgetter(d, v)
    if set(map(type, rows)) != {type(first)}:  # at C level: fields are read by position
        raise InvalidArgumentError(f"{source}: every row must be a {type(first).__name__}, as the first is")
    for qid, group in groupby(rows, itemgetter(q)):
        _add(out, qid, dict(map(pair, group)))
    if sum(map(len, out.values())) != len(rows):
        _duplicate(rows, q, d, source)
    return out


def _frame(frame: Any, fields: tuple[str, str, str], source: str) -> dict[str, dict[str, Any]]:
    missing = [f for f in fields if f not in frame.columns]
    if missing:
        raise InvalidArgumentError(f"{source}: the DataFrame has no column {missing} (columns: {list(frame.columns)})")
    import pandas as pd

    codes, uniques = pd.factorize(frame[fields[0]], sort=False)
    if (codes < 0).any():  # a missing query id (NaN, None): factorize gives it no code
        row = int(np.flatnonzero(codes < 0)[0])
        raise InvalidIdError(f"{source} row {row + 1}: the query id is missing ({frame[fields[0]].iloc[row]!r})")
    qids, docs = list(uniques), frame[fields[1]].tolist()
    values = frame[fields[2]].tolist()
    n = len(docs)
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1]))) if n else np.zeros(0, np.int64)
    ends = [*starts[1:].tolist(), n]
    out: dict[str, dict[str, Any]] = {}
    for code, start, end in zip(codes[starts].tolist(), starts.tolist(), ends):
        _add(out, qids[code], dict(zip(docs[start:end], values[start:end])))
    if sum(map(len, out.values())) != n:
        _duplicate(list(zip(frame[fields[0]].tolist(), docs)), 0, 1, source)
    return out


def _add(out: dict[str, dict[str, Any]], qid: Any, block: dict[str, Any]) -> None:
    """One query's block of rows; a query whose rows come in several blocks is joined (a pair twice is counted
    by the caller's size check)."""
    held = out.get(qid)
    if held is None:
        out[qid] = block
    else:
        held.update((d, v) for d, v in block.items() if d not in held)


def _duplicate(rows: list, q: int, d: int, source: str) -> None:
    first: dict[tuple, int] = {}
    for i, row in enumerate(rows):
        key = (row[q], row[d])
        if key in first:
            raise DuplicateDocumentError(
                f"{source}: document {key[1]!r} appears twice for query {key[0]!r} (rows {first[key] + 1} and {i + 1});"
                " ir_measures' own conversion would keep the last one silently"
            )
        first[key] = i
    raise DuplicateDocumentError(f"{source}: a document appears twice for a query")  # pragma: no cover


def judged_only(run: dict[str, dict[str, Any]], qrels: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The run without the documents its query's qrels do not judge (trec_eval's ``-J``: the ranking of the judged
    documents alone; a negative label, TREC's "pooled, not judged", is not judged), for the queries that have
    judgments; a new dict, the run is not modified."""
    out = {}
    for qid, docs in run.items():
        labels = qrels.get(qid)
        if labels:
            judged = {d for d, v in labels.items() if v >= 0}
            out[qid] = {d: s for d, s in docs.items() if d in judged}
    return out


def ranked_lists(run: dict[str, dict[str, Any]], ascending_ids: bool) -> tuple[list[str], list[str], np.ndarray]:
    """``(qids, doc ids in rank order, lengths)``: each query ranked by float64 score descending, ties by doc id
    (ascending: msmarco's and judged's order; descending: gdeval's). Queries sorted by score in one numpy
    lexsort; only the documents of a tie are compared as strings."""
    qids = list(run)
    lengths = np.fromiter(map(len, run.values()), np.int64, count=len(qids))
    total = int(lengths.sum())
    ids = list(chain.from_iterable(run.values()))
    try:
        scores = np.fromiter(chain.from_iterable(map(dict.values, run.values())), np.float64, count=total)
    except (TypeError, ValueError, OverflowError):
        scores = np.full(total, np.nan)
    if not np.isfinite(scores).all():
        _bad_score(run)
    owner = np.repeat(np.arange(len(qids)), lengths)
    order = np.lexsort((-scores, owner))
    s, o = scores[order], owner[order]
    tied = np.flatnonzero((s[1:] == s[:-1]) & (o[1:] == o[:-1]))
    ranked = [ids[i] for i in order.tolist()]
    if tied.size:
        # Runs of tied neighbours: each run's ids sorted as strings, the rest stay where the scores put them.
        breaks = np.flatnonzero(np.diff(tied) != 1)
        starts = np.concatenate(([tied[0]], tied[breaks + 1])).tolist()
        ends = (np.concatenate((tied[breaks], [tied[-1]])) + 2).tolist()
        for a, b in zip(starts, ends):
            ranked[a:b] = sorted(ranked[a:b], reverse=not ascending_ids)
    return qids, ranked, lengths


def _bad_score(run: dict[str, dict[str, Any]]) -> None:
    for qid, docs in run.items():
        for doc, score in docs.items():
            if not is_number(score, finite=True):
                raise InvalidScoreError(
                    f"run: score {score!r} of document {doc!r} in query {qid!r} is not a finite number"
                )
    raise InvalidScoreError("run: a score is not a finite number")  # pragma: no cover
