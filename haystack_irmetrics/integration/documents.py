"""The document path: Haystack ``Document`` lists -> ``(qrels, results)`` for :func:`haystack_irmetrics.evaluate`.

Every evaluator in :mod:`haystack_irmetrics.components` converts its inputs here, once, and then
calls the metric core; nothing else turns Documents into judgments or rankings.

The rules (also in each evaluator's docstring):

* **Queries.** Query ``i`` is ``ground_truth_documents[i]`` against ``retrieved_documents[i]``, with
  id ``query_ids[i]`` or, without ``query_ids``, ``str(i)``.
* **Matching** (``document_comparison_field``): a retrieved document matches a ground-truth document
  when their keys are equal. The key is ``doc.id`` (``"id"``, the default), ``doc.content``
  (``"content"``) or a meta value (``"meta.<key>"``: the literal key ``<key>`` if present, else the
  dotted path ``a.b`` into nested dicts, e.g. ``"meta.corpus_id"`` for chunks of a BEIR corpus).
  Keys must be ``str`` or ``int`` (an int is compared as its ``str``); a document without one raises
  :class:`~haystack_irmetrics.errors.InvalidIdError` naming its position.
* **Relevance** (``relevance_field``): the ground-truth document's ``score`` (default) or a meta value.
  A query whose ground-truth documents all lack it is binary (every one has relevance 1); a list that
  mixes documents with and without it raises :class:`~haystack_irmetrics.errors.InvalidLabelError`.
  Labels may be int or float; ``<= 0`` is not relevant. A key given twice keeps its highest label.
* **Ranking** (``rank_by``): ``"order"`` ranks by list position (what the pipeline returned); the core
  gets the keys as ranked lists (:class:`~haystack_irmetrics.core.inputs.RankedRun`: no scores, so
  nothing can reorder them, whatever the ties policy). ``"score"`` ranks by ``Document.score`` (what
  BEIR would rank), ties as the preset says; a retrieved document without a score raises
  :class:`~haystack_irmetrics.errors.InvalidScoreError`.
* **Chunks.** Retrieved documents sharing a key count once, at the rank of the first (with
  ``rank_by="score"``: at the highest score of the key); later ones are removed from the ranking, so
  the documents after them move up and ``k`` counts distinct keys. (Haystack's built-ins keep the
  later copies as non-relevant slots.)
* **Queries without ground truth.** An empty ground-truth list becomes an empty qrels entry: the
  query is unjudged and left to the core's policies (see the evaluators' docstrings).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain
from operator import attrgetter
from typing import Any

import numpy as np
from haystack import Document

from ..checks import is_whole
from ..core.inputs import Qrels, RankedRun
from ..core.validation import is_finite_number, shown
from ..errors import (
    EmptyInputError,
    InvalidDocumentsError,
    InvalidIdError,
    InvalidLabelError,
    InvalidPolicyError,
    InvalidScoreError,
    LengthMismatchError,
)

logger = logging.getLogger(__name__)

RANK_BY = ("order", "score")


@dataclass(frozen=True)
class Converted:
    """One batch of queries in the core's shapes: ``qrels[qid]``, the rankings (``{qid: {key: score}}``, or a
    :class:`~haystack_irmetrics.core.inputs.RankedRun` for ``rank_by="order"``), ``query_ids`` in input order;
    ``judgments``: the same qrels as a core ``Qrels`` when the compiled pass read them (else None)."""

    query_ids: list[str]
    qrels: dict[str, dict[str, float]]
    results: dict[str, dict[str, float]] | RankedRun
    judgments: Qrels | None = None  # ``qrels`` read already (by the compiled pass), for the core


def _field_path(name: object, what: str, allow_score: bool) -> tuple[str, ...]:
    """Validate a field name; return ``("id",)``, ``("content",)``, ``("score",)`` or ``("meta", key)``."""
    names = "'id', 'content' or 'meta.<key>'" if not allow_score else "'score' or 'meta.<key>'"
    if not isinstance(name, str):
        raise InvalidPolicyError(f"{what} must be {names}, got {name!r}")
    if name.startswith("meta."):
        key = name[len("meta.") :]
        if not key or key.startswith(".") or key.endswith("."):
            raise InvalidPolicyError(f"{what} {name!r} names no meta key; use e.g. 'meta.corpus_id'")
        return ("meta", key)
    if (allow_score and name == "score") or (not allow_score and name in ("id", "content")):
        return (name,)
    raise InvalidPolicyError(f"unknown {what} {name!r}; use {names}")


_MISSING = object()


def _meta_value(meta: dict[str, Any], key: str) -> Any:
    """``meta[key]`` if that literal key exists, else the dotted path ``a.b.c`` into nested dicts."""
    if key in meta:
        return meta[key]
    value: Any = meta
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


@dataclass(frozen=True)
class DocumentPath:
    """How Documents become judgments and rankings; validated when an evaluator is created."""

    document_comparison_field: str = "id"
    relevance_field: str = "score"
    rank_by: str = "order"
    _key_path: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _label_path: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        key_path = _field_path(self.document_comparison_field, "document_comparison_field", allow_score=False)
        label_path = _field_path(self.relevance_field, "relevance_field", allow_score=True)
        if self.rank_by not in RANK_BY:
            raise InvalidPolicyError(
                f"rank_by must be 'order' (list position) or 'score' (Document.score), got {self.rank_by!r}"
            )
        object.__setattr__(self, "_key_path", key_path)
        object.__setattr__(self, "_label_path", label_path)

    # -- one document ------------------------------------------------------------------------

    def _key(self, doc: object, side: str, i: int, j: int, qid: str) -> str:
        """The comparison key of ``{side}[i][j]``; errors name that position, the query and the document."""
        if not isinstance(doc, Document):
            raise InvalidDocumentsError(f"{side}[{i}][{j}] (query {qid!r}) is {type(doc).__name__}, not a Document")
        kind = self._key_path[0]
        if kind == "id":
            value: Any = doc.id
        elif kind == "content":
            value = doc.content
        else:
            value = _meta_value(doc.meta, self._key_path[1])
        if isinstance(value, str):
            return value
        where = f"{side}[{i}][{j}] (query {qid!r}, id {doc.id!r})"
        name = self.document_comparison_field
        if is_whole(value):
            try:
                return str(value)
            except ValueError:  # beyond Python's digit limit for str()
                raise InvalidIdError(
                    f"{where}: {name} is an int of {value.bit_length():,} bits, too long to print"
                ) from None
        if value is _MISSING or value is None:
            raise InvalidIdError(
                f"{where} has no {name!r} to match on; every document needs one "
                "(or choose another document_comparison_field)"
            )
        raise InvalidIdError(f"{where}: {name} {value!r} is {type(value).__name__}; use str or int")

    def _label(self, doc: Document) -> Any:
        value = doc.score if self._label_path[0] == "score" else _meta_value(doc.meta, self._label_path[1])
        return None if value is _MISSING else value

    # -- a batch -----------------------------------------------------------------------------

    def convert(
        self,
        ground_truth_documents: Sequence[Sequence[Document]],
        retrieved_documents: Sequence[Sequence[Document]],
        query_ids: Sequence[str] | None = None,
    ) -> Converted:
        """Validate the inputs and build ``{qid: {key: label}}`` and the rankings.

        With ``rank_by="order"`` the rankings are a :class:`~haystack_irmetrics.core.inputs.RankedRun`
        (the keys in list order: no scores, so nothing can reorder them; a repeated key keeps its
        first position); with ``"score"``, ``{qid: {key: score}}``. In the usual case (keys from
        ``id`` or ``content``, relevance from ``score``, ``rank_by="order"``) one compiled pass reads
        both sides and finds each judgment's rank (``judgments`` then holds the qrels as the core's
        ``Qrels``); else the batch goes through C-level passes (no Python frame per document), and
        anything those do not take goes document by document, which applies the same rules and names
        any offending document.
        """
        n = _check_batch(ground_truth_documents, retrieved_documents, query_ids)
        qids = list(map(str, range(n))) if query_ids is None else list(query_ids)
        results: dict[str, dict[str, float]] | RankedRun
        both = self._compiled_batch(ground_truth_documents, retrieved_documents, qids)
        if both is not None:
            judgments, results = both
            located = results.judged_positions(judgments.data)
            return self._checked(Converted(qids, judgments.data, results, judgments), bool((located >= 0).any()))
        qrels = self._fast_judgments(ground_truth_documents, qids)
        if qrels is None:
            qrels = {
                qid: self._judgments(i, qid, docs) for i, (qid, docs) in enumerate(zip(qids, ground_truth_documents))
            }
        if self.rank_by == "order":
            results = self._ranked(retrieved_documents, qids)
            matched = _any_located(results, list(qrels.values()))
        else:
            scored = self._fast_scored(retrieved_documents, qids)
            if scored is None:
                scored = {
                    qid: self._ranking(i, qid, docs) for i, (qid, docs) in enumerate(zip(qids, retrieved_documents))
                }
            results = scored
            matched = any(map(_overlaps, qrels.values(), scored.values()))
        return self._checked(Converted(qids, qrels, results), matched)

    def rankings(
        self, retrieved_documents: Sequence[Sequence[Document]], query_ids: Sequence[str] | None = None
    ) -> RankedRun | dict[str, dict[str, float]]:
        """The rankings alone, by the same rules as :meth:`convert` (matching key, ``rank_by``, a repeated key
        once), for a caller that has no ground truth to pair them with (the feedback replay).

        :returns: a :class:`~haystack_irmetrics.core.inputs.RankedRun` with ``rank_by="order"``, else
            ``{qid: {key: score}}``.
        """
        _check_lists("retrieved_documents", retrieved_documents)
        _check_query_ids(query_ids, len(retrieved_documents))
        qids = list(map(str, range(len(retrieved_documents)))) if query_ids is None else list(query_ids)
        if self.rank_by == "order":
            return self._ranked(retrieved_documents, qids)
        scored = self._fast_scored(retrieved_documents, qids)
        if scored is None:
            scored = {qid: self._ranking(i, qid, docs) for i, (qid, docs) in enumerate(zip(qids, retrieved_documents))}
        return scored

    def _checked(self, batch: Converted, matched: bool) -> Converted:
        """The batch, once it has a judgment; with a warning when no retrieved document ``matched`` one."""
        n = len(batch.query_ids)
        if not any(batch.qrels.values()):
            raise EmptyInputError(
                f"none of the {n} queries has a ground-truth document: there is nothing to evaluate against"
            )
        if not matched:
            hint = (
                ""
                if self.document_comparison_field == "content"
                else " (Haystack's built-in evaluators compare 'content')"
            )
            logger.warning(
                "No retrieved document matched any ground-truth document by %r in %d queries; every score is 0. "
                "Check document_comparison_field%s.",
                self.document_comparison_field,
                n,
                hint,
            )
        return batch

    def _compiled_batch(
        self, ground_truth: Sequence[Sequence[Document]], retrieved: Sequence[Sequence[Document]], qids: list[str]
    ) -> tuple[Qrels, RankedRun] | None:
        """Judgments and rankings by list position in one compiled pass (``core/_rank.c``), keeping no
        retrieved key: ``Document.id`` or ``content`` as keys, ``Document.score`` as relevance. None
        where it is not built, for other fields, or on anything it does not take (the passes below
        then read the documents and name the offender)."""
        kind = self._key_path[0]
        if self.rank_by != "order" or kind not in ("id", "content") or self._label_path[0] != "score":
            return None
        return RankedRun.from_judged_items(
            qids, list(ground_truth), list(retrieved), kind, Document, "score", source="retrieved_documents"
        )

    def _ranked(self, retrieved: Sequence[Sequence[Document]], qids: list[str]) -> RankedRun:
        """The rankings by list position: one compiled pass reads and indexes the keys where it can,
        else every key is read here (document by document where one needs naming)."""
        run = self._compiled_ranking(retrieved, qids)
        if run is not None:
            return run
        keys = self._fast_keys_batch(retrieved)
        if keys is None:
            keys = [
                self._key(doc, "retrieved_documents", i, j, qid)
                for i, (qid, docs) in enumerate(zip(qids, retrieved))
                for j, doc in enumerate(docs)
            ]
        return RankedRun(qids, keys, list(map(len, retrieved)), source="retrieved_documents")

    def _compiled_ranking(self, retrieved: Sequence[Sequence[Document]], qids: list[str]) -> RankedRun | None:
        """The compiled pass (``core/_rank.c``): every retrieved ``Document``'s ``id`` or ``content``
        read, checked to be a str, and indexed by list; None where it is not built or meets anything
        else (the Python passes then read the documents and name the offender)."""
        kind = self._key_path[0]
        if kind not in ("id", "content"):
            return None
        return RankedRun.from_items(qids, list(retrieved), kind, Document, source="retrieved_documents")

    def _fast_keys_batch(self, lists: Sequence[Sequence[Document]]) -> list[str] | None:
        """The keys of every document of ``lists``, concatenated, in C-level passes; or None.

        None (the per-document path decides) unless every item is a ``Document`` keyed by ``id``
        or ``content`` with a ``str`` key.
        """
        kind = self._key_path[0]
        if kind not in ("id", "content") or not set(map(type, chain.from_iterable(lists))) <= {Document}:
            return None
        keys = list(map(attrgetter(kind), chain.from_iterable(lists)))
        return keys if set(map(type, keys)) <= {str} else None

    def _fast_judgments(
        self, ground_truth: Sequence[Sequence[Document]], qids: list[str]
    ) -> dict[str, dict[str, float]] | None:
        """``{qid: {key: label}}`` in C-level passes, or None for the per-query path.

        Covers relevance from ``score`` with every ground-truth document of the batch graded with
        finite numbers, or none (binary), and no key twice in one list.
        """
        if self._label_path[0] != "score":
            return None
        keys = self._fast_keys_batch(ground_truth)
        if keys is None:
            return None
        labels: list[Any] = list(map(_SCORE, chain.from_iterable(ground_truth)))
        label_types = set(map(type, labels))
        if label_types <= {type(None)}:
            labels = [1] * len(labels)  # binary: every ground-truth document has relevance 1
        elif not (label_types <= {int, float} and _all_finite(labels)):
            return None
        slices = list(map(slice, *_bounds(ground_truth)))
        qrels = dict(zip(qids, map(dict, map(zip, map(keys.__getitem__, slices), map(labels.__getitem__, slices)))))
        if sum(map(len, qrels.values())) != len(keys):
            return None  # a key twice in one ground-truth list: the highest label wins (per-query path)
        return qrels

    def _fast_scored(
        self, retrieved: Sequence[Sequence[Document]], qids: list[str]
    ) -> dict[str, dict[str, float]] | None:
        """``{qid: {key: Document.score}}`` in C-level passes, or None for the per-query path.

        Covers finite int/float scores and no key twice in one ranking.
        """
        keys = self._fast_keys_batch(retrieved)
        if keys is None:
            return None
        scores: list[Any] = list(map(_SCORE, chain.from_iterable(retrieved)))
        if not (set(map(type, scores)) <= {int, float} and _all_finite(scores)):
            return None
        slices = list(map(slice, *_bounds(retrieved)))
        results = dict(zip(qids, map(dict, map(zip, map(keys.__getitem__, slices), map(scores.__getitem__, slices)))))
        if sum(map(len, results.values())) != len(keys):
            return None  # a key twice in one ranking: its highest score counts (per-query path)
        return results

    def _judgments(self, i: int, qid: str, docs: Sequence[Document]) -> dict[str, float]:
        keys = [self._key(doc, "ground_truth_documents", i, j, qid) for j, doc in enumerate(docs)]
        labels = [self._label(doc) for doc in docs]
        graded = [v is not None for v in labels]
        if any(graded) and not all(graded):
            with_, without = graded.index(True), graded.index(False)
            raise InvalidLabelError(
                f"ground_truth_documents[{i}] (query {qid!r}) mixes documents with and without a relevance "
                f"{self.relevance_field!r}: [{i}][{with_}] (id {docs[with_].id!r}) has {labels[with_]!r}, "
                f"[{i}][{without}] (id {docs[without].id!r}) has none; give all of them one, or none (binary)"
            )
        out: dict[str, float] = {}
        for j, (key, label) in enumerate(zip(keys, labels, strict=True)):
            if label is None:
                label = 1
            elif not is_finite_number(label):
                raise InvalidLabelError(
                    f"ground_truth_documents[{i}][{j}] (query {qid!r}, id {docs[j].id!r}): relevance "
                    f"{self.relevance_field} {shown(label)} is not a finite number"
                )
            previous = out.get(key)
            if previous is None or label > previous:
                out[key] = label
        return out

    def _ranking(self, i: int, qid: str, docs: Sequence[Document]) -> dict[str, float]:
        """``{key: score}`` of one query by ``Document.score``; a repeated key keeps its highest score."""
        out: dict[str, float] = {}
        for j, doc in enumerate(docs):
            key = self._key(doc, "retrieved_documents", i, j, qid)
            score = doc.score
            if not is_finite_number(score):
                raise InvalidScoreError(
                    f"retrieved_documents[{i}][{j}] (query {qid!r}, id {doc.id!r}) has score {shown(score)}, not a finite "
                    "number; rank_by='score' needs every retrieved document scored (or use rank_by='order')"
                )
            previous = out.get(key)
            if previous is None or score > previous:
                out[key] = score  # as given, like the fast path: the core reads it as BEIR does
        return out


_SCORE = attrgetter("score")


def _bounds(lists: Sequence[Sequence[Any]]) -> tuple[list[int], list[int]]:
    """Start and end of each list in the concatenation of ``lists``."""
    ends = list(accumulate(map(len, lists)))
    return [0, *ends[:-1]], ends


def _any_located(run: RankedRun, judged: list[dict[str, Any]]) -> bool:
    """Whether any query's ranking holds one of its judged keys: blocks of queries, growing, so a
    match among the first queries (the usual case) ends the search early."""
    start, size = 0, 8
    while start < len(judged):
        block = judged[start : start + size]
        sizes = np.fromiter(map(len, block), np.int64, count=len(block))
        rows = np.repeat(np.arange(start, start + len(block)), sizes)
        if (run.locate(rows, list(chain.from_iterable(block))) >= 0).any():
            return True
        start, size = start + size, size * 8
    return False


def _overlaps(judged: dict[str, Any], ranked: dict[str, Any]) -> bool:
    return not judged.keys().isdisjoint(ranked)


# Sequences of characters or bytes, never lists of queries or documents.
_NOT_LISTS = (str, bytes, bytearray)


def _check_batch(
    ground_truth_documents: Sequence[Sequence[Document]],
    retrieved_documents: Sequence[Sequence[Document]],
    query_ids: Sequence[str] | None,
) -> int:
    _check_lists("ground_truth_documents", ground_truth_documents)
    _check_lists("retrieved_documents", retrieved_documents)
    n = len(ground_truth_documents)
    if len(retrieved_documents) != n:
        raise LengthMismatchError(
            f"ground_truth_documents has {n} queries but retrieved_documents has {len(retrieved_documents)}; "
            "they must have one list per query each, in the same order"
        )
    _check_query_ids(query_ids, n)
    return n


def _check_lists(name: str, value: Sequence[Sequence[Document]]) -> None:
    """``value`` is a non-empty list of Document lists, one per query."""
    if not isinstance(value, Sequence) or isinstance(value, _NOT_LISTS):
        raise InvalidDocumentsError(
            f"{name} must be a list of Document lists (one per query), got {type(value).__name__}"
        )
    if len(value) == 0:
        raise EmptyInputError(f"{name} is empty: give one list of Documents per query")
    if set(map(type, value)) <= {list}:
        return  # lists of lists (what pipelines pass): nothing to name
    for i, docs in enumerate(value):
        if isinstance(docs, Document) or not isinstance(docs, Sequence) or isinstance(docs, _NOT_LISTS):
            raise InvalidDocumentsError(
                f"{name}[{i}] is {type(docs).__name__}, not a list of Documents; "
                f"{name} holds one list per query (wrap a single query's documents as [docs])"
            )


def _check_query_ids(query_ids: Sequence[str] | None, n: int) -> None:
    """``query_ids`` is None or ``n`` distinct str."""
    if query_ids is None:
        return
    if isinstance(query_ids, _NOT_LISTS) or not isinstance(query_ids, Sequence):
        raise InvalidIdError(f"query_ids must be a list of str, got {type(query_ids).__name__}")
    if len(query_ids) != n:
        raise LengthMismatchError(f"query_ids has {len(query_ids)} ids for {n} queries; give one id per query")
    seen: dict[str, int] = {}
    for i, qid in enumerate(query_ids):
        if not isinstance(qid, str):
            raise InvalidIdError(f"query_ids[{i}] {qid!r} is {type(qid).__name__}; ids must be str")
        if qid in seen:
            raise InvalidIdError(f"query_ids[{i}] {qid!r} repeats query_ids[{seen[qid]}]; query ids must be unique")
        seen[qid] = i


def _all_finite(values: list[int | float]) -> bool:
    """Every value (int or float) is finite as a float; an int beyond any float is not."""
    try:
        return bool(np.isfinite(np.asarray(values, dtype=np.float64)).all())
    except OverflowError:
        return False
