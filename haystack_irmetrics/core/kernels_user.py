"""Kernels of the user-model measures: ERR and nERR (gdeval), RBP and its residual (rbp_eval, cwl_eval),
infAP (trec_eval) and Compat (Clarke et al. 2020, as ir_measures computes it).

Each reads a :class:`JudgedRanking`: every judged retrieved document of each query in rank order, with
its label and 0-based rank among *all* retrieved documents, and every judgment of the query. A
document nobody judged adds nothing to any of these measures except through its rank (it pushes the
judged ones down) and, for the RBP residual, through the weight it leaves open; so the judged ones
are all a kernel needs.

A family's value (``Family.user`` in :mod:`.families`, kernel kind ``"user"``) is ``value(ranking, cutoffs, params)``: one row
per cutoff (``None``: the whole ranking), one column per query; ``params`` holds the family's
parameters with their defaults filled in. Sums run in rank order, one addition at a time
(:func:`.kernels.segmented_cumsum`), as the reference tools' loops add.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .kernels import _at_cutoff, counts_below, segmented_cumsum

Params = Mapping[str, float | None]
#: trec_eval's infAP smoothing constant (trec_eval.h ``INFAP_EPSILON``).
INFAP_EPSILON = 0.00001


class JudgedRanking:
    """Each query's judged retrieved documents sorted by rank, and each query's judgments.

    ``owner``/``ranks``/``labels``/``offsets``: the judged retrieved documents (CSR over queries,
    ascending rank within a query; ``ranks`` count every retrieved document above, judged or not).
    ``judged_owner``/``judged_labels``/``judged_offsets``: every judgment of each query, retrieved or not.
    ``n_retrieved``: each query's ranking length. ``relevant(labels)``: the preset's relevance rule
    (label ``>= relevance_threshold``) for the families that follow it (infAP).
    """

    def __init__(
        self,
        owner: np.ndarray,
        ranks: np.ndarray,
        labels: np.ndarray,
        offsets: np.ndarray,
        judged_owner: np.ndarray,
        judged_labels: np.ndarray,
        judged_offsets: np.ndarray,
        n_retrieved: np.ndarray,
        relevant: Callable[[np.ndarray], np.ndarray],
    ) -> None:
        self.owner, self.ranks, self.labels, self.offsets = owner, ranks, labels, offsets
        self.judged_owner, self.judged_labels, self.judged_offsets = judged_owner, judged_labels, judged_offsets
        self.n_retrieved = n_retrieved
        self.relevant = relevant
        self.n = offsets.size - 1

    def counts(self, cutoffs: Sequence[int | None]) -> np.ndarray:
        """Per cutoff (rows) and query, the judged retrieved documents ranked above the cutoff."""
        return counts_below(self.ranks, self.owner, self.n, cutoffs)


#: A family's per-query values: ``value(ranking, cutoffs, params)``, one row per cutoff.
UserValue = Callable[[JudgedRanking, Sequence[int | None], Params], np.ndarray]
#: Which labels a family counts as relevant: ``positive(labels, params, relevant)``; a query without
#: one is a query "without a relevant document" (``no_relevant``).
PositiveRule = Callable[[np.ndarray, Params, Callable[[np.ndarray], np.ndarray]], np.ndarray]
#: ``check(labels, params)``: the flat index of the first judgment the family cannot score and why, or None.
LabelCheck = Callable[[np.ndarray, Params], tuple[int, str] | None]


def segmented_cumprod(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Left-to-right running products restarting at each segment (one multiplication at a time)."""
    out = values.astype(np.float64, copy=True)
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
        if b - a > 1:
            np.cumprod(out[a:b], out=out[a:b])
    return out


def _product_before(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per element, the product of the values before it in its segment (1.0 for a segment's first)."""
    cum = segmented_cumprod(values, offsets)
    out = np.ones_like(cum)
    out[1:] = cum[:-1]
    out[offsets[:-1][np.diff(offsets) > 0]] = 1.0
    return out


def _table(cum: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Rows of ``cum`` read at each query's ``counts[row]``-th element (0.0 where none)."""
    out = np.zeros(counts.shape, np.float64)
    for row in range(counts.shape[0]):
        out[row] = _at_cutoff(cum, offsets, counts[row])
    return out


# --- ERR and nERR: gdeval.pl (TREC Web 2010-2014) -------------------------------------------------------


def positive_label(labels: np.ndarray, params: Params, relevant: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """gdeval, cwl_eval's graded RBP and ir_measures' Compat: a label above 0 gains something."""
    return labels > 0


def check_max_rel(labels: np.ndarray, params: Params) -> tuple[int, str] | None:
    """ERR's stopping probability ``(2^g - 1) / 2^max_rel`` must stay within [0, 1]: no label above ``max_rel``."""
    top = float(params["max_rel"])  # type: ignore[arg-type]
    over = np.flatnonzero(labels > top)
    if over.size == 0:
        return None
    return int(over[0]), (
        f"is above the maximum grade {top:g} of ERR (gdeval's is 4); give the scale's top grade, "
        f"e.g. ERR(max_rel={float(labels[over].max()):g})@20"
    )


def _stop_probability(labels: np.ndarray, max_rel: float) -> np.ndarray:
    """gdeval's ``(2**g - 1) / (2**MAX_JUDGMENT)``; labels <= 0 (and unjudged documents) stop nobody."""
    return np.where(labels > 0, (np.power(2.0, np.maximum(labels, 0.0)) - 1.0) / np.power(2.0, max_rel), 0.0)


def _err_cumulative(r: np.ndarray, ranks: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running ERR in rank order: ``score += r * decay / (i + 1); decay *= (1 - r)`` as gdeval's loop."""
    decay = _product_before(1.0 - r, offsets)
    return segmented_cumsum(r * decay / (ranks + 1).astype(np.float64), offsets)


def err(b: JudgedRanking, cutoffs: Sequence[int | None], params: Params) -> np.ndarray:
    """ERR@k: ``sum_{i<k} r_i / (i + 1) * prod_{j<i} (1 - r_j)``, ``r = (2^g - 1) / 2^max_rel``."""
    r = _stop_probability(b.labels, float(params["max_rel"]))  # type: ignore[arg-type]
    return _table(_err_cumulative(r, b.ranks, b.offsets), b.offsets, b.counts(cutoffs))


def normalized_err(b: JudgedRanking, cutoffs: Sequence[int | None], params: Params) -> np.ndarray:
    """nERR@k: ERR@k over the ERR@k of the ideal ranking (every judged grade, highest first)."""
    values = err(b, cutoffs, params)
    keep = b.judged_labels > 0
    owner = b.judged_owner[keep]
    grades = b.judged_labels[keep]
    order = np.lexsort((-grades, owner))
    owner, grades = owner[order], grades[order]
    offsets = np.zeros(b.n + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=b.n), out=offsets[1:])
    ranks = np.arange(owner.size) - offsets[:-1][owner]
    r = _stop_probability(grades, float(params["max_rel"]))  # type: ignore[arg-type]
    ideal = _table(_err_cumulative(r, ranks, offsets), offsets, counts_below(ranks, owner, b.n, cutoffs))
    out = np.zeros_like(values)
    np.divide(values, ideal, out=out, where=ideal > 0)
    return out


# --- RBP and its residual: rbp_eval / cwl_eval ----------------------------------------------------------


def rbp_positive(labels: np.ndarray, params: Params, relevant: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """RBP: ``label >= rel`` when ``rel`` is given (binary), else any label above 0 (graded)."""
    rel = params.get("rel")
    return labels > 0 if rel is None else labels >= rel


def _rbp_weights(b: JudgedRanking, p: float) -> np.ndarray:
    """``(1 - p) * p^i`` at each judged retrieved document's 0-based rank i."""
    return (1.0 - p) * np.power(p, b.ranks.astype(np.float64))


def rbp(b: JudgedRanking, cutoffs: Sequence[int | None], params: Params) -> np.ndarray:
    """RBP: ``(1 - p) sum_{i<k} p^i g_i``; ``g`` = 1 if ``label >= rel``, else the label itself (clipped at 0)."""
    p = float(params["p"])  # type: ignore[arg-type]
    rel = params.get("rel")
    gains = np.maximum(b.labels, 0.0) if rel is None else (b.labels >= rel).astype(np.float64)
    cum = segmented_cumsum(gains * _rbp_weights(b, p), b.offsets)
    return _table(cum, b.offsets, b.counts(cutoffs))


def rbp_residual(b: JudgedRanking, cutoffs: Sequence[int | None], params: Params) -> np.ndarray:
    """RBP's residual: the weight no judgment fixes, ``sum_{unjudged i<d} (1 - p) p^i + p^d``, d = min(k, ranked).

    It equals ``1 - sum_{judged i<d} (1 - p) p^i``: the weights of every rank sum to 1. An unjudged
    document counts as gain 1 (relevant, or cwl_eval's default ``--max_gain 1``).
    """
    p = float(params["p"])  # type: ignore[arg-type]
    cum = segmented_cumsum(_rbp_weights(b, p), b.offsets)
    return 1.0 - _table(cum, b.offsets, b.counts(cutoffs))


# --- infAP: trec_eval m_infAP.c ----------------------------------------------------------------------


def infap_positive(labels: np.ndarray, params: Params, relevant: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """infAP's R: the judgments at or above the relevance threshold (trec_eval num_rel)."""
    return relevant(labels)


def infap(b: JudgedRanking, cutoffs: Sequence[int | None], params: Params) -> np.ndarray:
    """trec_eval's infAP (Yilmaz & Aslam 2006) per query, in its loop's order of operations.

    Walking the ranking: a document the qrels do not list is outside the pool and only takes its rank;
    a negative label (TREC's ``-1``, ``-2``) is in the pool but was not judged (sampled out);
    ``0 <= label < threshold`` is nonrelevant and ``label >= threshold`` relevant: at rank j (0-based) a
    relevant one adds 1 if j is 0, else
    ``1/(j+1) + j/(j+1) * ((rel + nonrel + unjudged) / j) * ((rel + eps) / (rel + nonrel + 2 eps))``
    with the counts of the documents above it. The sum is divided by R (judgments >= threshold).
    """
    labels = b.labels
    unjudged = labels < 0
    rel = ~unjudged & b.relevant(labels)
    nonrel = ~unjudged & ~rel
    before = {}
    for name, flag in (("rel", rel), ("nonrel", nonrel), ("unjudged", unjudged)):
        cum = segmented_cumsum(flag.astype(np.float64), b.offsets)
        before[name] = cum - flag  # counts above (whole numbers: exact in float64)
    j = b.ranks[rel].astype(np.float64)
    r, n, u = before["rel"][rel], before["nonrel"][rel], before["unjudged"][rel]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r + n + u) / j) * (
            (r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)
        )
    term = np.where(j == 0, 1.0, term)
    owner = b.owner[rel]
    r_offsets = np.zeros(b.n + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=b.n), out=r_offsets[1:])
    total = _at_cutoff(segmented_cumsum(term, r_offsets), r_offsets, np.diff(r_offsets))
    n_rel = np.bincount(b.judged_owner[b.relevant(b.judged_labels)], minlength=b.n).astype(np.float64)
    out = np.zeros(b.n, np.float64)
    np.divide(total, n_rel, out=out, where=n_rel > 0)
    return np.tile(out, (len(cutoffs), 1))


# --- Compat: Clarke, Vtyurina & Smucker 2020, as ir_measures' compat provider ------------------------------


def compat(b: JudgedRanking, cutoffs: Sequence[int | None], params: Params) -> np.ndarray:
    """Compatibility: RBO (persistence p) of the ranking with the ideal one, over that of the ideal with itself.

    The ideal ranking lists the documents judged above 0, highest label first; among equal labels the
    retrieved ones come first in ranking order (ir_measures orders them by their run score). Both
    rankings are compared to depth ``max(ranked, ideal length)``:
    ``RBO = sum_{i<D} p^i |top_i(run) & top_i(ideal)| / (i + 1) / sum_{i<D} p^i``.
    """
    p = float(params["p"])  # type: ignore[arg-type]
    out = np.zeros(b.n, np.float64)
    pos = b.labels > 0
    grades_all = b.judged_labels
    for q in range(b.n):
        a, z = int(b.offsets[q]), int(b.offsets[q + 1])
        keep = pos[a:z]
        ranks, labels = b.ranks[a:z][keep], b.labels[a:z][keep]
        judged = grades_all[int(b.judged_offsets[q]) : int(b.judged_offsets[q + 1])]
        ideal_labels = judged[judged > 0]
        n_ideal = ideal_labels.size
        if n_ideal == 0:
            continue
        depth = max(int(b.n_retrieved[q]), n_ideal)
        # Ideal position: documents with a higher label, then retrieved ones of this label ranked above.
        higher = np.array([np.count_nonzero(ideal_labels > g) for g in labels.tolist()], np.int64)
        order = np.lexsort((ranks, -labels))
        same_before = np.zeros(ranks.size, np.int64)
        sorted_labels = labels[order]
        for i in range(1, order.size):
            same_before[order[i]] = same_before[order[i - 1]] + 1 if sorted_labels[i] == sorted_labels[i - 1] else 0
        both = np.maximum(ranks, higher + same_before)
        overlap = np.cumsum(np.bincount(both[both < depth], minlength=depth))
        weights = np.cumprod(np.concatenate(([1.0], np.full(depth - 1, p))))
        at = np.arange(1, depth + 1, dtype=np.float64)
        normalizer = float(np.cumsum(weights)[-1])
        score = float(np.cumsum(weights * overlap / at)[-1]) / normalizer
        best = float(np.cumsum(weights * np.minimum(at, n_ideal) / at)[-1]) / normalizer
        out[q] = score / best if best > 0.0 else score
    return np.tile(out, (len(cutoffs), 1))
