"""What the trained fusion methods learn from judgments, as ranx 0.3.21 estimates it (its ``*_train``
functions), on packed rows.

Training reads each (normalised) run's hit list per query: 1 where the document at that rank is judged
relevant (label >= 1, ranx's ``rel_lvl``), else 0. The training queries are the fused queries that
have judgments (ranx demands that the runs and the qrels hold the same queries).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise, repeat

import numpy as np

from ..core.inputs import Qrels
from .packed import PackedRuns, RunRows

#: bayesfuse's rank segments (ranx's ``cut_offs``): log-odds exist for the top 1000 ranks only.
BAYES_CUTOFFS = (0, 5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: segfuse's segment bounds, ``10 * 2 ** (k - 1) - 5`` for k = 1..10.
SEG_BOUNDS = (0, *(10 * 2 ** (k - 1) - 5 for k in range(1, 11)))
_RELEVANT = 1  # ranx's rel_lvl


class Hits:
    """Per run, the training queries' hit lists: ``hits`` aligned with ``rank`` and ``query`` (the
    training query's index among :attr:`n_queries`); ``lengths`` per training query."""

    def __init__(self, rows: RunRows, packed: PackedRuns, labels: list[Mapping[str, float] | None]) -> None:
        trained = np.array([lab is not None for lab in labels], dtype=bool)
        self.n_queries = int(trained.sum())
        position = np.cumsum(trained) - 1
        row_query = np.repeat(np.arange(len(packed.qids)), rows.lengths)
        keep = trained[row_query]
        self.rank = rows.rank[keep]
        self.query = position[row_query[keep]]
        self.lengths = rows.lengths[trained]
        self.longest = int(rows.lengths.max(initial=0))  # of every fused query's list, judged or not
        hits = np.zeros(int(keep.sum()), dtype=np.float64)
        cand = rows.candidate[keep]
        at = 0
        docs = packed.doc_ids
        for n, lab in zip(self.lengths.tolist(), (lab for lab in labels if lab is not None)):
            if n and lab:
                got = map(lab.get, map(docs.__getitem__, cand[at : at + n].tolist()), repeat(0))
                hits[at : at + n] = np.fromiter(got, dtype=np.float64, count=n) >= _RELEVANT
            at += n
        self.hits = hits
        self.n_relevant = np.array(
            [sum(1 for v in lab.values() if v >= _RELEVANT) for lab in labels if lab is not None], dtype=np.float64
        )


def training_labels(packed: PackedRuns, qrels: Qrels) -> list[Mapping[str, float] | None]:
    """Per fused query, its judgments, or None when the qrels do not hold it."""
    return [qrels.data.get(q) for q in packed.qids]


def positional_probs(h: Hits) -> np.ndarray:
    """posfuse's and slidefuse's estimate: per rank, the share of training queries' lists that long whose
    document there is relevant (ranx's ``estimate_probs``)."""
    if h.rank.size == 0:
        return np.zeros(0)
    return np.bincount(h.rank, weights=h.hits) / np.bincount(h.rank)


def probfuse_probs(h: Hits, n_segments: int) -> np.ndarray:
    """probfuse's segment probabilities: each list cut into ``n_segments`` segments of ``ceil(len / n)``."""
    # Segments past the run's longest list are empty at any n: the probabilities stop there (no 8 * n * queries
    # bytes for n = 1e20), the same fusion (a list's segments are its ranks from n = its length on).
    n_segments = max(1, min(n_segments, h.longest))
    size = -(-h.lengths // n_segments)  # ceil
    seg = h.rank // np.maximum(size[h.query], 1)
    key = h.query * n_segments + seg
    count = np.bincount(key, minlength=h.n_queries * n_segments)
    found = np.bincount(key, weights=h.hits, minlength=h.n_queries * n_segments)
    mean = np.divide(found, count, out=np.zeros_like(found), where=count > 0)
    return mean.reshape(h.n_queries, n_segments).sum(axis=0) / max(h.n_queries, 1)


def segfuse_probs(h: Hits) -> np.ndarray:
    bounds = np.asarray(SEG_BOUNDS)
    inside = h.rank < bounds[-1]
    seg = np.searchsorted(bounds, h.rank[inside], side="right") - 1
    found = np.bincount(seg, weights=h.hits[inside], minlength=len(SEG_BOUNDS) - 1)
    return found / np.diff(bounds) / max(h.n_queries, 1)


def bayes_log_odds(h: Hits) -> np.ndarray:
    bounds = np.asarray(BAYES_CUTOFFS)
    odds = np.zeros(bounds[-1])
    inside = h.rank < bounds[-1]
    seg = np.searchsorted(bounds, h.rank[inside], side="right") - 1
    n_seg = len(BAYES_CUTOFFS) - 1
    # Per query and segment, as ranx accumulates them (query by query: the sum is compared with 0 and 1).
    found = np.bincount(h.query[inside] * n_seg + seg, weights=h.hits[inside], minlength=h.n_queries * n_seg)
    found = found.reshape(h.n_queries, n_seg)
    for k, (start, end) in enumerate(pairwise(BAYES_CUTOFFS)):
        shares = found[:, k] / (end - start) / max(h.n_queries, 1)
        precision = float(np.cumsum(shares)[-1]) if shares.size else 0.0
        if precision == 0:
            precision += 0.001
        negative = 1 - precision
        if negative == 0:
            negative += 0.001
        odds[start:end] = np.log(precision / negative)
    return odds


def mean_average_precision(h: Hits) -> float:
    """MAP over the training queries (ranx's ``map``: AP divided by the query's relevant judgments, 0
    for a query without any)."""
    if h.n_queries == 0:
        return 0.0
    order = np.lexsort((h.rank, h.query))
    hits, query = h.hits[order], h.query[order]
    starts = np.zeros(h.n_queries + 1, dtype=np.int64)
    np.cumsum(h.lengths, out=starts[1:])
    before = np.cumsum(hits)
    within = before - np.repeat(np.concatenate([[0.0], before])[starts[:-1]], h.lengths)
    precision = np.where(hits > 0, within / (h.rank[order] + 1), 0.0)
    ap = np.bincount(query, weights=precision, minlength=h.n_queries)
    ap = np.divide(ap, h.n_relevant, out=np.zeros_like(ap), where=h.n_relevant > 0)
    return float(ap.mean())
