"""The runs a pool is drawn from: each run's ranking of each query in trec_eval's order (score descending,
ties by document id descending: :func:`haystack_irmetrics.core.ranking.trec_order`, the one ordering function),
cut at the pool depth, and the judgments a pool starts from.

Every strategy reads :class:`PoolRuns`; :func:`pool_runs` builds it from run dicts, run objects or TREC
run files, and :func:`judged_labels` checks the judgments (``{qid: {docid: label}}``) a pool starts from.

A pool must not depend on the order the runs are listed in (a user's alphabetical file names would decide
it): the queries come in an order their contents decide, and wherever runs tie a strategy reads them in
:meth:`PoolRuns.tie_orders`, a seeded draw per query over the runs' contents.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import Any

from ..checks import whole
from ..core.inputs import ArrayRun, Qrels, Run, as_run
from ..core.ranking import trec_order
from ..core.validation import is_finite_number, shown
from ..errors import EmptyInputError, InvalidIdError, InvalidLabelError, PoolingError
from ..stats.significance import seed_value

#: What :func:`pool_runs` takes for one run: ``{qid: {docid: score}}``, ranked lists ``{qid: [docid, ...]}``,
#: a :class:`~haystack_irmetrics.core.inputs.Run` or ``ArrayRun``, or the path of a TREC run file.
RunInput = Mapping[str, Any] | Run | ArrayRun | str | PathLike
#: Labels by query and document: ``{qid: {docid: label}}``.
Labels = dict[str, dict[str, float]]


@dataclass(frozen=True)
class PoolRuns:
    """Runs ready to pool.

    :ivar names: one name per run.
    :ivar qids: the queries, in first appearance over the runs taken in the order of their contents (see
        :func:`pool_runs`).
    :ivar rankings: ``rankings[r][i]``: run ``r``'s documents for query ``qids[i]``, best first, at most
        ``depth`` of them (an empty tuple where the run has no document for the query).
    :ivar depth: the pool depth (``None``: whole runs).
    """

    names: tuple[str, ...]
    qids: tuple[str, ...]
    rankings: tuple[tuple[tuple[str, ...], ...], ...]
    depth: int | None

    @cached_property
    def digests(self) -> tuple[bytes, ...]:
        """Each run's contents, its :attr:`rankings` (at the pool depth), as a SHA-256 digest
        (:func:`contents_digest`): what its listing leaves out."""
        return tuple(contents_digest(zip(self.qids, run)) for run in self.rankings)

    def tie_orders(self, seed: int = 0) -> list[list[int]]:
        """Per query (``qids[i]``), the runs' indices in the order a tie between them goes by: run ``r``'s key
        for the query is a SHA-256 of the seed, its :attr:`digests` and the query id, so each query's order is a
        seeded draw, the same for any listing of the runs, and no run is first on every query. Names are not
        read: they would tell apart only runs of equal contents, which are interchangeable (they keep their
        listing order), and a renamed file, or runs given as dicts rather than files, must not move a pool.

        :raises InvalidSeedError: a seed that is not a whole number from 0 to 2**32 - 1.
        """
        salt = seed_value(seed).to_bytes(4, "big")
        runs = [hashlib.sha256(salt + digest) for digest in self.digests]
        out = []
        for q in self.qids:
            keys = []
            for h in runs:
                h = h.copy()
                h.update(_prefixed(q))
                keys.append(h.digest())
            out.append(sorted(range(len(keys)), key=keys.__getitem__))
        return out

    def cut(self, depth: int | None) -> PoolRuns:
        """These runs cut at ``depth`` (``None``: as they are)."""
        if depth is None:
            return self
        return replace(self, rankings=tuple(tuple(r[:depth] for r in run) for run in self.rankings), depth=depth)

    def query_rankings(self, i: int, order: Sequence[int] | None = None) -> list[tuple[str, ...]]:
        """Every run's ranking of query ``qids[i]``, in run order (or the runs' indices ``order``: the query's
        :meth:`tie_orders`)."""
        return [self.rankings[r][i] for r in (range(len(self.rankings)) if order is None else order)]

    def layered(self, i: int, order: Sequence[int] | None = None) -> list[str]:
        """Query ``qids[i]``'s pool: its distinct documents by their best rank over the runs, a rank's documents
        in run order, or in ``order`` (the order a depth-k pool grows in)."""
        seen: dict[str, None] = {}
        lists = self.query_rankings(i, order)
        for rank in range(max(map(len, lists), default=0)):
            for ranking in lists:
                if rank < len(ranking):
                    seen.setdefault(ranking[rank])
        return list(seen)

    @property
    def n_pairs(self) -> int:
        """The pool's size: distinct (query, document) pairs over all runs."""
        return sum(len({d for run in self.rankings for d in run[i]}) for i in range(len(self.qids)))

    def mean_pool_size(self) -> float:
        """The mean number of distinct documents in a query's pool (every run's top :attr:`depth`), over the
        queries some run ranks documents for (0.0 when none does): what judging one more query costs."""
        sizes = [len({d for run in self.rankings for d in run[i]}) for i in range(len(self.qids))]
        sizes = [n for n in sizes if n]
        return sum(sizes) / len(sizes) if sizes else 0.0

    def pairs(self, judged: Mapping[str, Mapping[str, Any]] | None = None) -> list[tuple[str, str]]:
        """Every ``(query id, doc id)`` of the pool, each once, in the order first met (runs in order, queries in
        :attr:`qids` order, ranks in order); with ``judged``, only the pairs it does not judge (the holes)."""
        seen: set[tuple[str, str]] = set()
        out: list[tuple[str, str]] = []
        for run in self.rankings:
            for qid, ranking in zip(self.qids, run):
                done = (judged.get(qid) or {}) if judged is not None else {}
                for doc in ranking:
                    if doc not in done and (qid, doc) not in seen:
                        seen.add((qid, doc))
                        out.append((qid, doc))
        return out

    def unjudged_share(self, r: int, judged: Mapping[str, Mapping[str, Any]]) -> float | None:
        """The mean share of run ``r``'s ranking (its top :attr:`depth`) with no judgment in ``judged`` for its
        query, over the queries it retrieved something for (``None`` when there is none): what a judge fills.
        Not BEIR's hole, which counts a document judged for any query as judged (the core's ``Hole@k``)."""
        shares = [
            sum(doc not in (judged.get(qid) or {}) for doc in ranking) / len(ranking)
            for qid, ranking in zip(self.qids, self.rankings[r])
            if ranking
        ]
        return sum(shares) / len(shares) if shares else None


def _prefixed(text: str) -> bytes:
    """``text`` as UTF-8 after its length: one way to read a concatenation of them."""
    data = text.encode("utf-8", "surrogatepass")
    return len(data).to_bytes(8, "big") + data


def contents_digest(rankings: Any) -> bytes:
    """A run's ``(qid, ranking)`` pairs as a SHA-256 digest, queries by id and empty rankings left out: a
    canonical serialization (a line per query, the JSON array of its id and documents, ASCII: quoted and
    escaped, so no two contents write one text), so equal contents give one digest in any order."""
    h = hashlib.sha256()
    for qid, ranking in sorted((q, r) for q, r in rankings if r):
        h.update(json.dumps([qid, *ranking]).encode("ascii") + b"\n")  # C-speed: 5x a loop over the ids
    return h.digest()


def check_depth(depth: Any) -> int | None:
    """``depth`` checked: ``None`` (whole runs) or a whole number >= 1."""
    return None if depth is None else whole(depth, "the pool depth", least=1, error=PoolingError)


def _ranked(run: RunInput, name: str) -> dict[str, list[str]]:
    if isinstance(run, str | PathLike):
        from ..io.trec import read_run

        run = read_run(Path(run))
    if isinstance(run, Mapping) and not run:
        raise EmptyInputError(f"run {name!r} is empty: it retrieved nothing for any query")
    data = as_run(run).data
    out = {}
    for q, docs in data.items():
        if not all(map(is_finite_number, docs.values())):
            d, s = next((d, s) for d, s in docs.items() if not is_finite_number(s))
            raise PoolingError(
                f"run {name!r}: score {shown(s)} of document {d!r} in query {q!r} is not a finite number"
            )
        out[q] = trec_order(docs)
    return out


def pool_runs(
    runs: Sequence[RunInput] | PoolRuns, names: Sequence[str] | None = None, depth: int | None = None
) -> PoolRuns:
    """Read runs for pooling; the inputs are never modified.

    :param runs: one run or more (see :data:`RunInput`); a :class:`PoolRuns` is returned as it is (``depth``
        and ``names`` must then be left out).
    :param names: one name per run (default: a file's name, else ``run1``, ``run2``, ...).
    :param depth: keep each run's top ``depth`` documents per query (``None``: whole runs).

    The queries come in first appearance over the runs taken in the order of their contents' digests
    (:func:`contents_digest`), so any listing of the same runs gives the same order; where every run lists the
    queries in one order, it is that order.
    :raises PoolingError: no run, names that do not fit, a depth below 1, a score that is not a finite number.
    :raises EmptyInputError: a run with no document.
    """
    if isinstance(runs, PoolRuns):
        if names is not None or depth is not None:
            raise PoolingError("runs already pooled: give names and depth when pooling them, not again")
        return runs
    if isinstance(runs, str | PathLike | Mapping | Run | ArrayRun):
        raise PoolingError("give the runs as a list (one run is [run])")
    runs = list(runs)
    depth = check_depth(depth)
    if not runs:
        raise PoolingError("a pool needs at least one run")
    if names is None:
        names = [Path(r).name if isinstance(r, str | PathLike) else f"run{i + 1}" for i, r in enumerate(runs)]
    names = [str(n) for n in names]
    if len(names) != len(runs):
        raise PoolingError(f"{len(names)} names for {len(runs)} runs")
    if len(set(names)) != len(names):
        names = [f"{n}#{i + 1}" for i, n in enumerate(names)]
    ranked = [_ranked(run, name) for run, name in zip(runs, names)]
    cut = [{q: tuple(docs[:depth]) for q, docs in r.items()} for r in ranked]
    digests = [contents_digest(r.items()) for r in cut]
    by_contents = sorted(range(len(cut)), key=lambda r: (digests[r], tuple(cut[r])))  # the same for any listing
    qids = tuple(dict.fromkeys(q for r in by_contents for q in cut[r]))
    rankings = tuple(tuple(r.get(q, ()) for q in qids) for r in cut)
    pooled = PoolRuns(tuple(names), qids, rankings, depth)
    vars(pooled)["digests"] = tuple(digests)  # the cached property's value, already computed: not hashed twice
    return pooled


def judged_labels(qrels: Mapping[str, Mapping[str, Any]] | Qrels | None) -> Labels:
    """A copy of ``qrels`` as ``{qid: {docid: float label}}``, each id and label checked (``None``: empty).

    :raises InvalidIdError: an id that is not a string. :raises InvalidLabelError: a label that is not a finite number.
    """
    if qrels is None:
        return {}
    if isinstance(qrels, Qrels):
        qrels = qrels.data
    out: Labels = {}
    for q, docs in qrels.items():
        if not isinstance(q, str):
            raise InvalidIdError(f"query id {shown(q)} of the judgments is not a string")
        if not isinstance(docs, Mapping):
            raise InvalidLabelError(f"judgments of query {q!r} must be {{docid: label}}, got {type(docs).__name__}")
        inner = out.setdefault(q, {})
        for d, label in docs.items():
            check_label(q, d, label)
            inner[d] = float(label)
    return out


def check_label(query: Any, doc: Any, label: Any) -> float:
    """``label`` as a float, checked: ids are strings, the label a finite number (no bool, no string)."""
    if not isinstance(query, str) or not isinstance(doc, str):
        bad = query if not isinstance(query, str) else doc
        raise InvalidIdError(f"ids are strings: got {shown(bad)} in the pair ({shown(query)}, {shown(doc)})")
    if not is_finite_number(label) or not math.isfinite(float(label)):
        raise InvalidLabelError(f"label {shown(label)} of document {doc!r} in query {query!r} is not a finite number")
    return float(label)


__all__ = [
    "Labels",
    "PoolRuns",
    "RunInput",
    "check_depth",
    "check_label",
    "contents_digest",
    "judged_labels",
    "pool_runs",
]
