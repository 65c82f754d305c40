"""Runs packed once for fusion: every query's candidates (the union of the runs' documents) numbered,
and each run's documents as flat arrays in rank order.

The order a run ranks its documents in (what rank-based methods read) is **trec_eval's**, the one the
package's evaluation gives the same run: score descending (as float32), ties by document id descending
(:func:`~haystack_irmetrics.core.ranking.trec_order`), whatever order a dict or a file lists them in. ranx
reads that order when given it (its sort keeps a tie's order on lists of up to 15 documents, and scrambles
it beyond). A query's candidates are numbered in first appearance over the runs in their order, each run
in rank order; that numbering breaks ties in the fused ranking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from ..checks import whole
from ..core.inputs import ArrayRun, Run, as_run
from ..core.ranking import out_of_trec_order, trec_sorted
from ..core.validation import shown
from ..errors import EmptyInputError, FusionError, FusionParameterError, InvalidIdError, InvalidScoreError
from .arguments import argument, hinted

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


def _source(run: RunInput, name: str) -> tuple[list[str], Any]:
    """``(qids, flat)``: the run's queries, and ``flat(qids) -> (doc ids, float64 scores, sizes)`` over the
    given queries in that order (a query the run lacks: size 0)."""
    if isinstance(run, str | PathLike):
        from ..io.trec import read_run

        run = read_run(Path(run))
    if isinstance(run, Mapping) and not run:
        raise EmptyInputError(f"run {name!r} is empty: it retrieved nothing for any query")
    run = as_run(run)
    if isinstance(run, ArrayRun):
        array_run = run

        def flat_array(qids: list[str]) -> tuple[list[str], np.ndarray, list[int]]:
            where = {q: i for i, q in enumerate(array_run.qids)}
            bounds = array_run.offsets
            picked = [where.get(q) for q in qids]
            sizes = [0 if i is None else int(bounds[i + 1] - bounds[i]) for i in picked]
            parts = [np.arange(bounds[i], bounds[i + 1]) for i in picked if i is not None]
            rows = np.concatenate(parts) if parts else np.zeros(0, np.int64)
            return array_run.ids_at(rows), np.asarray(array_run.scores, dtype=np.float64)[rows], sizes

        return list(run.qids), flat_array
    data = run.data

    def flat_dict(qids: list[str]) -> tuple[list[str], np.ndarray, list[int]]:
        empty: dict[str, float] = {}
        dicts = [data.get(q, empty) for q in qids]
        sizes = list(map(len, dicts))
        try:
            values = np.fromiter(chain.from_iterable(map(dict.values, dicts)), dtype=np.float64, count=sum(sizes))
        except (TypeError, ValueError, OverflowError):
            q, bad = next((q, d) for q, docs in zip(qids, dicts) for d, v in docs.items() if not _number(v))
            raise InvalidScoreError(
                f"run {name!r}: score {shown(data[q][bad])} of document {bad!r} in query {q!r} is not a number"
            ) from None
        return list(chain.from_iterable(dicts)), values, sizes

    return list(run.qids), flat_dict


def _number(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return False
    return not isinstance(value, str | bytes)


def _rank_order(ids: list[str], scores: np.ndarray, offsets: np.ndarray) -> np.ndarray | None:
    """Rows in rank order (per query trec_eval's: :func:`~haystack_irmetrics.core.ranking.trec_sorted`), or None
    when already so. Only the queries out of that order are sorted (:func:`~haystack_irmetrics.core.ranking.
    out_of_trec_order`: a row scored above the one before it, as float32, or a tie whose ids do not descend)."""
    rows = out_of_trec_order(ids, scores, offsets)
    if rows.size == 0:
        return None
    order = np.arange(scores.size)
    for qi in np.unique(np.searchsorted(offsets, rows, side="right") - 1).tolist():
        a, b = int(offsets[qi]), int(offsets[qi + 1])
        row_of = dict(zip(ids[a:b], range(a, b)))
        order[a:b] = list(map(row_of.__getitem__, trec_sorted(ids[a:b], scores[a:b])))
    return order


def check_run_count(n_runs: int) -> None:
    """:raises FusionError: fewer than two runs."""
    if n_runs < 2:
        raise FusionError(f"fusion needs at least two runs, got {n_runs}")


def pack_runs(runs: Sequence[RunInput], names: Sequence[str] | None = None, depth: int | None = None) -> PackedRuns:
    """Pack runs for fusion; the inputs are read, never modified.

    :param runs: two or more runs (see :data:`RunInput`).
    :param names: one name per run (default ``run1``, ``run2``, ...; for a path, its name by
        :func:`~haystack_irmetrics.io.run_names.run_names`: ``a.trec`` is ``a``).
    :param depth: keep each run's top ``depth`` documents of every query (Pyserini's ``--depth``).
    :raises FusionError: fewer than two runs, names that do not fit, a ``depth`` below 1.
    :raises EmptyInputError: a run with no document at all.
    :raises InvalidScoreError: a score that is not a finite number (query and document named).
    :raises InvalidIdError: a document id that is not a string.
    """
    runs = list(runs)
    check_run_count(len(runs))
    if names is None:
        from ..io.run_names import run_names  # every command's naming rule

        names = [f"run{i + 1}" if n is None else n for i, n in enumerate(run_names(runs))]
    names = [str(n) for n in names]
    if len(names) != len(runs):
        raise FusionError(f"{len(names)} names for {len(runs)} runs")
    if len(set(names)) != len(names):
        names = [f"{n}#{i + 1}" for i, n in enumerate(names)]
    if depth is not None:
        hinted(lambda: whole(depth, "depth", least=1, error=FusionParameterError), argument("depth", value=depth))
    sources = [_source(run, name) for run, name in zip(runs, names)]
    qids = list(dict.fromkeys(chain.from_iterable(q for q, _ in sources)))
    flats = []
    for (_, flat), name in zip(sources, names):
        ids, scores, sizes = flat(qids)
        if not ids:
            raise EmptyInputError(f"run {name!r} is empty: it retrieved nothing for any query")
        offsets = np.zeros(len(sizes) + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        bad = np.flatnonzero(~np.isfinite(scores))
        if bad.size:
            row = int(bad[0])
            qi = int(np.searchsorted(offsets, row, side="right") - 1)
            raise InvalidScoreError(
                f"run {name!r}: score {float(scores[row])!r} of document {ids[row]!r} in query {qids[qi]!r} "
                "is not a finite number"
            )
        if not set(map(type, ids)) <= {str}:  # before the ids order ties
            row = next(i for i, d in enumerate(ids) if not isinstance(d, str))
            qi = int(np.searchsorted(offsets, row, side="right") - 1)
            raise InvalidIdError(f"document id {shown(ids[row])} of query {qids[qi]!r} is not a string")
        order = _rank_order(ids, scores, offsets)
        if order is not None:
            ids = list(map(ids.__getitem__, order.tolist()))
            scores = scores[order]
        if depth is not None:
            rank = np.arange(scores.size) - np.repeat(offsets[:-1], sizes)
            keep = rank < depth
            if not keep.all():
                ids = list(compress(ids, keep.tolist()))
                scores = scores[keep]
                sizes = np.minimum(np.asarray(sizes), depth).tolist()
                offsets = np.zeros(len(sizes) + 1, np.int64)
                np.cumsum(sizes, out=offsets[1:])
        flats.append((ids, scores, offsets))
    doc_ids: list[str] = []
    q_offsets = [0]
    codes: list[list[int]] = [[] for _ in runs]
    bounds = [f[2].tolist() for f in flats]
    for qi in range(len(qids)):
        pieces = [ids[b[qi] : b[qi + 1]] for (ids, _, _), b in zip(flats, bounds)]
        union = dict.fromkeys(chain.from_iterable(pieces))
        base = len(doc_ids)
        index = dict(zip(union, range(base, base + len(union))))
        doc_ids.extend(union)
        q_offsets.append(len(doc_ids))
        for out, piece in zip(codes, pieces):
            out.extend(map(index.__getitem__, piece))
    packed = []
    for (_, scores, offsets), cands in zip(flats, codes):
        rank = np.arange(scores.size, dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))
        packed.append(RunRows(offsets, np.fromiter(cands, dtype=np.int64, count=len(cands)), scores, rank))
    return PackedRuns(qids, np.asarray(q_offsets, dtype=np.int64), doc_ids, tuple(names), tuple(packed))
