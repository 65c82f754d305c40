"""Runs packed once for fusion: every query's candidates (the union of the runs' documents) numbered,
and each run's documents as flat arrays in rank order.

The order a run ranks its documents in (what rank-based methods read) is **score descending, ties in
the run's own order** (a dict's insertion order, a file's line order): a stable sort, the order ranx
reads on lists short enough for its sort to be stable. A query's candidates are numbered in first
appearance over the runs in their order, each run in rank order; that numbering breaks ties in the
fused ranking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from ..core.inputs import ArrayRun, Run, as_run
from ..core.validation import shown
from ..errors import EmptyInputError, FusionError, InvalidIdError, InvalidScoreError

#: What :func:`pack_runs` takes for one run: ``{qid: {docid: score}}``, ranked lists ``{qid: [docid, ...]}``,
#: a :class:`~haystack_irmetrics.core.inputs.Run` or ``ArrayRun``, or the path of a TREC run file.
RunInput = Mapping[str, Any] | Run | ArrayRun | str | PathLike


@dataclass(frozen=True)
class RunRows:
    """One run's documents, query by query (``offsets``: query i owns rows ``offsets[i]:offsets[i+1]``),
    in rank order: ``candidate`` numbers the document among its query's candidates (an index into
    :attr:`PackedRuns.doc_ids`), ``score`` is the run's score, ``rank`` the 0-based position."""

    offsets: np.ndarray
    candidate: np.ndarray
    score: np.ndarray
    rank: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


@dataclass(frozen=True)
class PackedRuns:
    """Runs ready to fuse (:func:`pack_runs`); reusable across fusions (the tuner fuses one many times).

    :ivar qids: the queries, in first appearance over the runs.
    :ivar offsets: query i owns candidates ``offsets[i]:offsets[i+1]``.
    :ivar doc_ids: the candidates' document ids.
    :ivar names: one name per run.
    :ivar runs: one :class:`RunRows` per run.
    """

    qids: list[str]
    offsets: np.ndarray
    doc_ids: list[str]
    names: tuple[str, ...]
    runs: tuple[RunRows, ...]

    @property
    def n_candidates(self) -> int:
        return len(self.doc_ids)

    @property
    def candidate_query(self) -> np.ndarray:
        """The query index of every candidate."""
        return np.repeat(np.arange(len(self.qids), dtype=np.int64), np.diff(self.offsets))

    def row_query(self, r: int) -> np.ndarray:
        """The query index of every row of run ``r``."""
        return np.repeat(np.arange(len(self.qids), dtype=np.int64), self.runs[r].lengths)

    def select(self, names: Sequence[str]) -> PackedRuns:
        """The same packing restricted to some runs, by name (their candidates stay numbered as here)."""
        picked = [self.names.index(n) for n in names]
        return PackedRuns(self.qids, self.offsets, self.doc_ids, tuple(names), tuple(self.runs[i] for i in picked))


def _lists(run: RunInput, name: str) -> tuple[list[str], Any]:
    """``(qids, get)``: the run's queries, and ``get(qid) -> (doc ids, float64 scores) | None``."""
    if isinstance(run, str | PathLike):
        from ..io.trec import read_run

        run = read_run(Path(run))
    if isinstance(run, Mapping) and not run:
        raise EmptyInputError(f"run {name!r} is empty: it retrieved nothing for any query")
    run = as_run(run)
    if isinstance(run, ArrayRun):
        total = int(run.offsets[-1])
        ids = run.ids_at(np.arange(total))
        scores = np.asarray(run.scores, dtype=np.float64)
        bounds = run.offsets.tolist()
        where = {q: i for i, q in enumerate(run.qids)}

        def get_array(q: str) -> tuple[list[str], np.ndarray] | None:
            i = where.get(q)
            if i is None:
                return None
            a, b = bounds[i], bounds[i + 1]
            return ids[a:b], scores[a:b]

        return list(run.qids), get_array
    data = run.data

    def get_dict(q: str) -> tuple[list[str], np.ndarray] | None:
        docs = data.get(q)
        if docs is None:
            return None
        try:
            values = np.fromiter(docs.values(), dtype=np.float64, count=len(docs))
        except (TypeError, ValueError, OverflowError):
            bad = next(d for d, s in docs.items() if not _number(s))
            raise InvalidScoreError(
                f"run {name!r}: score {shown(docs[bad])} of document {bad!r} in query {q!r} is not a number"
            ) from None
        return list(docs), values

    return list(run.qids), get_dict


def _number(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return False
    return not isinstance(value, str | bytes)


def _rank_order(scores: np.ndarray) -> np.ndarray | None:
    """Positions in rank order (score descending, ties in given order), or None when already so."""
    if scores.size < 2 or bool((scores[:-1] >= scores[1:]).all()):
        return None
    return np.argsort(-scores, kind="stable")


def pack_runs(runs: Sequence[RunInput], names: Sequence[str] | None = None, depth: int | None = None) -> PackedRuns:
    """Pack runs for fusion; the inputs are read, never modified.

    :param runs: two or more runs (see :data:`RunInput`).
    :param names: one name per run (default ``run1``, ``run2``, ...; a file's name for a path).
    :param depth: keep each run's top ``depth`` documents of every query (Pyserini's ``--depth``).
    :raises FusionError: fewer than two runs, names that do not fit, a ``depth`` below 1.
    :raises EmptyInputError: a run with no document at all.
    :raises InvalidScoreError: a score that is not a finite number (query and document named).
    :raises InvalidIdError: a document id that is not a string.
    """
    runs = list(runs)
    if len(runs) < 2:
        raise FusionError(f"fusion needs at least two runs, got {len(runs)}")
    if names is None:
        names = [Path(r).name if isinstance(r, str | PathLike) else f"run{i + 1}" for i, r in enumerate(runs)]
    names = [str(n) for n in names]
    if len(names) != len(runs):
        raise FusionError(f"{len(names)} names for {len(runs)} runs")
    if len(set(names)) != len(names):
        names = [f"{n}#{i + 1}" for i, n in enumerate(names)]
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise FusionError(f"depth must be a positive integer, got {depth!r}")
    sources = [_lists(run, name) for run, name in zip(runs, names)]
    qids = list(dict.fromkeys(chain.from_iterable(q for q, _ in sources)))
    gets = [get for _, get in sources]
    n_runs = len(runs)
    doc_ids: list[str] = []
    q_offsets = [0]
    per_run: list[tuple[list[np.ndarray], list[np.ndarray], list[int]]] = [([], [], []) for _ in range(n_runs)]
    for q in qids:
        ranked = []
        for get in gets:
            found = get(q)
            if found is None or not found[0]:
                ranked.append(None)
                continue
            ids, scores = found
            order = _rank_order(scores)
            if order is not None:
                ids = [ids[i] for i in order.tolist()]
                scores = scores[order]
            if depth is not None and len(ids) > depth:
                ids, scores = ids[:depth], scores[:depth]
            ranked.append((ids, scores))
        union = dict.fromkeys(chain.from_iterable(found[0] for found in ranked if found is not None))
        if not set(map(type, union)) <= {str}:
            bad = next(d for d in union if not isinstance(d, str))
            raise InvalidIdError(f"document id {shown(bad)} of query {q!r} is not a string")
        base = len(doc_ids)
        index = dict(zip(union, range(base, base + len(union))))
        doc_ids.extend(union)
        q_offsets.append(len(doc_ids))
        for r, found in enumerate(ranked):
            cands, scores, sizes = per_run[r]
            if found is None:
                sizes.append(0)
                continue
            ids, values = found
            cands.append(np.fromiter(map(index.__getitem__, ids), dtype=np.int64, count=len(ids)))
            scores.append(values)
            sizes.append(len(ids))
    packed = []
    for r, (cands, scores, sizes) in enumerate(per_run):
        if not cands:
            raise EmptyInputError(f"run {names[r]!r} is empty: it retrieved nothing for any query")
        score = np.concatenate(scores)
        bad = np.flatnonzero(~np.isfinite(score))
        offsets = np.zeros(len(sizes) + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        candidate = np.concatenate(cands)
        if bad.size:
            row = int(bad[0])
            qi = int(np.searchsorted(offsets, row, side="right") - 1)
            raise InvalidScoreError(
                f"run {names[r]!r}: score {float(score[row])!r} of document {doc_ids[int(candidate[row])]!r} "
                f"in query {qids[qi]!r} is not a finite number"
            )
        rank = np.arange(score.size, dtype=np.int64) - np.repeat(offsets[:-1], sizes)
        packed.append(RunRows(offsets, candidate, score, rank))
    return PackedRuns(qids, np.asarray(q_offsets, dtype=np.int64), doc_ids, tuple(names), tuple(packed))
