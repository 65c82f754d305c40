"""Curves: CG/DCG/ideal/NDCG vectors per rank, interpolated precision-recall, and any measure against k.

Each curve is computed by the same ranking and kernels as :func:`~haystack_irmetrics.evaluate`, under
the same presets, so a curve's points are the measures' values: ``gain_curves(...).ndcg[:, k - 1]``
is ``NDCG@k`` per query and ``mean_ndcg[k - 1]`` is ``raw_means["NDCG@k"]``, bit for bit; the PR
curve's points are ``iP@level``.

* :func:`gain_curves` -- the lecture tables: CG, DCG, ideal CG, ideal DCG and NDCG at ranks
  1..depth, per query and averaged (both the mean of per-query NDCG and the ratio of mean DCG to
  mean ideal DCG, as Baeza-Yates & Ribeiro-Neto average them).
* :func:`gain_vectors` -- the same vectors for one ranked list of labels, no qrels needed.
* :func:`interpolated_pr` -- interpolated precision at recall levels (trec_eval's 11 by default),
  per query and averaged, with the area under the averaged curve.
* :func:`measure_at_k` -- one measure family's values at each cutoff in ``ks``.

Usage (the lecture's query q1, Järvelin-Kekäläinen discount)::

    >>> from haystack_irmetrics.core.curves import gain_vectors
    >>> v = gain_vectors([1, 0, 1, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 3], discount="jk",
    ...                  ideal=[3, 3, 3, 2, 2, 2, 1, 1, 1, 1])
    >>> [round(x, 1) for x in v.dcg[[0, 2, 5, 9, 14]].tolist()], round(float(v.ndcg[9]), 4)
    ([1.0, 1.6, 2.8, 3.4, 4.2], 0.2868)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from ..errors import InvalidCutoffError, InvalidLabelError
from .evaluation import Evaluation, EvaluationResult, evaluate, unscored
from .inputs import ArrayRun, Qrels, QrelsDict, Run, RunDict
from .kernels import discount as log2_discount
from .kernels import jk_discount
from .measures import STANDARD_LEVELS, Measure, check_cutoff, check_k_values, check_level, parse_measure
from .presets import resolve_preset
from .scoring import gain_values
from .validation import is_finite_number, shown


@dataclass(frozen=True)
class GainVectors:
    """CG, DCG, ideal CG/DCG and NDCG at ranks 1..depth for one ranked list (index i is rank i + 1)."""

    cg: np.ndarray
    dcg: np.ndarray
    icg: np.ndarray
    idcg: np.ndarray
    ndcg: np.ndarray


@dataclass(frozen=True)
class GainCurves:
    """Per-query gain vectors (rows = ``qids``, columns = ranks 1..depth) and their averages.

    ``mean_*`` average the rows sequentially over ``n_queries`` (queries the preset averages at 0
    are counted, as in :func:`~haystack_irmetrics.evaluate`), so ``mean_ndcg[k - 1]`` equals
    ``raw_means["NDCG@k"]``. ``ncg_of_means`` and ``ndcg_of_means`` are the lecture's normalised
    averages, ``mean CG / mean ideal CG`` and ``mean DCG / mean ideal DCG``.
    """

    qids: list[str]
    cg: np.ndarray
    dcg: np.ndarray
    icg: np.ndarray
    idcg: np.ndarray
    ndcg: np.ndarray
    n_queries: int
    measure: Measure

    @property
    def depth(self) -> int:
        return self.cg.shape[1]

    def _mean(self, rows: np.ndarray) -> np.ndarray:
        if not self.n_queries:  # a mean over no query, as evaluate() reports it
            return np.full(self.depth, np.nan)
        if not rows.shape[0]:
            return np.zeros(self.depth)
        return np.cumsum(rows, axis=0)[-1] / float(self.n_queries)

    @property
    def mean_cg(self) -> np.ndarray:
        return self._mean(self.cg)

    @property
    def mean_dcg(self) -> np.ndarray:
        return self._mean(self.dcg)

    @property
    def mean_icg(self) -> np.ndarray:
        return self._mean(self.icg)

    @property
    def mean_idcg(self) -> np.ndarray:
        return self._mean(self.idcg)

    @property
    def mean_ndcg(self) -> np.ndarray:
        """Mean of the per-query NDCG vectors: ``NDCG@k`` as every library reports it."""
        return self._mean(self.ndcg)

    @property
    def ncg_of_means(self) -> np.ndarray:
        return _ratio(self.mean_cg, self.mean_icg)

    @property
    def ndcg_of_means(self) -> np.ndarray:
        return _ratio(self.mean_dcg, self.mean_idcg)


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.where(np.isnan(b), np.nan, 0.0)
    ok = b > 0
    out[ok] = a[ok] / b[ok]
    return out


def _discount(depth: int, jk: bool) -> np.ndarray:
    ranks = np.arange(depth)
    return jk_discount(ranks) if jk else log2_discount(ranks)


def _ideal_rows(ideal: list[np.ndarray], depth: int, jk: bool) -> tuple[np.ndarray, np.ndarray]:
    gains = np.zeros((len(ideal), depth))
    for row, g in enumerate(ideal):
        top = np.sort(g[g > 0])[::-1][:depth]
        gains[row, : top.size] = top
    return np.cumsum(gains, axis=1), np.cumsum(gains / _discount(depth, jk), axis=1)


def gain_vectors(
    labels: Sequence[float],
    *,
    ideal: Sequence[float] | None = None,
    depth: int | None = None,
    gain: str | Mapping[float, float] | None = None,
    discount: str | None = None,
) -> GainVectors:
    """Gain vectors of one ranked list of relevance labels (best first).

    :param labels: the label of the document at each rank (0 for unjudged).
    :param ideal: every judged label of the query (retrieved or not); default: ``labels`` itself.
    :param depth: number of ranks; default ``len(labels)`` (missing ranks count as gain 0).
    :param gain: ``None`` (linear), ``"exp"`` or a ``{grade: gain}`` map, as in :class:`Measure`.
    :param discount: ``None`` (``log2(rank + 1)``) or ``"jk"`` (Järvelin-Kekäläinen).
    :returns: :class:`GainVectors`; ``ndcg[k - 1]`` is the measure's NDCG@k for this ranking.

    Usage::

        >>> v = gain_vectors([3, 2, 3, 0, 1, 2], ideal=[3, 2, 3, 0, 1, 2, 3, 2])
        >>> round(float(v.dcg[5]), 4), round(float(v.idcg[5]), 4), round(float(v.ndcg[5]), 4)
        (6.8611, 8.7403, 0.785)
    """
    m = Measure("NDCG", 1, gain=gain, discount=discount)
    labels = _label_array(labels, "labels")
    depth = len(labels) if depth is None else check_cutoff(depth)
    ranked = np.zeros(depth)
    head = labels[:depth]
    ranked[: head.size] = head
    g = gain_values(ranked, m.gain)
    g = np.where(g > 0, g, 0.0)
    jk = m.discount == "jk"
    pool = gain_values(labels if ideal is None else _label_array(ideal, "ideal"), m.gain)
    if not np.isfinite(pool).all():
        raise InvalidLabelError(
            f"a label's gain in {m.stem} is beyond any float (exponential gains take labels below 1024)"
        )
    icg, idcg = _ideal_rows([pool], depth, jk)
    dcg = np.cumsum(g / _discount(depth, jk))
    return GainVectors(np.cumsum(g), dcg, icg[0], idcg[0], _ratio(dcg, idcg[0]))


def _label_array(values: Sequence[float], what: str) -> np.ndarray:
    """Graded labels as float64; anything but finite real numbers (a numeric string too) raises."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise InvalidLabelError(f"{what} must be a sequence of graded labels, got {values!r}"[:200])
    for i, v in enumerate(values):
        if not is_finite_number(v):
            raise InvalidLabelError(f"{what}[{i}] = {shown(v)} is not a finite number")
    return np.asarray(values, dtype=np.float64)


def gain_curves(
    qrels: QrelsDict | Qrels,
    results: RunDict | Run | ArrayRun,
    depth: int = 10,
    *,
    gain: str | Mapping[float, float] | None = None,
    discount: str | None = None,
    preset: str = "beir",
    **policy: object,
) -> GainCurves:
    """CG, DCG, ideal CG/DCG and NDCG vectors at ranks 1..depth for every query of a run.

    :param depth: number of ranks (columns).
    :param gain: NDCG gain form (``None`` linear, ``"exp"``, or a ``{grade: gain}`` map).
    :param discount: ``None`` or ``"jk"``.
    :param preset: and ``policy`` (``ties``, ``missing_queries``, ``ignore_identical_ids``,
        ``relevance_threshold``, ``no_relevant``) as for :func:`~haystack_irmetrics.evaluate`;
        the rows are the queries NDCG averages under them (missing queries averaged at 0 get a row
        with zero CG/DCG and their ideal vectors).
    :returns: :class:`GainCurves`.

    Usage::

        >>> qrels = {"q1": {"a": 3, "b": 2, "c": 1}, "q2": {"d": 1}}
        >>> results = {"q1": {"b": 0.9, "x": 0.8, "a": 0.7}, "q2": {"d": 0.5}}
        >>> c = gain_curves(qrels, results, depth=3, preset="trec")
        >>> [round(float(x), 4) for x in c.mean_ndcg]
        [0.8333, 0.7346, 0.8675]
    """
    depth = check_cutoff(depth)
    m = Measure("NDCG", depth, gain=gain, discount=discount)
    resolved = resolve_preset(preset, **policy)  # type: ignore[arg-type]
    ev = Evaluation(qrels, results, resolved).scorer
    fam_policy = resolved.policy("NDCG")
    owner, ranks, gains, _, ideal_gain, ideal_offsets = ev.ranked_gains(fam_policy, m)
    n = len(ev.prep.qids)
    jk = m.discount == "jk"
    top = ranks < depth
    g = np.zeros((n, depth))
    g[owner[top], ranks[top]] = np.where(gains[top] > 0, gains[top], 0.0)
    cg = np.cumsum(g, axis=1)
    dcg = np.cumsum(g / _discount(depth, jk), axis=1)
    icg, idcg = _ideal_rows(np.split(ideal_gain, ideal_offsets[1:-1]) if n else [], depth, jk)
    qids = list(ev.prep.qids)
    rel_any = np.diff(ideal_offsets) > 0
    skip = resolved.no_relevant == "skip"
    keep = rel_any if skip else np.ones(n, bool)
    cg, dcg, icg, idcg = cg[keep], dcg[keep], icg[keep], idcg[keep]
    qids = [q for q, k in zip(qids, keep.tolist()) if k]
    extra: list[str] = []
    if fam_policy.missing_queries == "zero":
        missing, empty = unscored(ev.qrels, ev.prep.qids)
        extra = missing + ([] if skip or not fam_policy.count_empty_qrels else empty)
        pools = [gain_values(np.fromiter(ev.qrels.data[q].values(), np.float64), m.gain) for q in extra]
        if skip:
            keep_extra = [bool((p > 0).any()) for p in pools]
            extra = [q for q, k in zip(extra, keep_extra) if k]
            pools = [p for p, k in zip(pools, keep_extra) if k]
        if extra:
            e_icg, e_idcg = _ideal_rows(pools, depth, jk)
            zeros = np.zeros((len(extra), depth))
            cg, dcg = np.vstack([cg, zeros]), np.vstack([dcg, zeros])
            icg, idcg = np.vstack([icg, e_icg]), np.vstack([idcg, e_idcg])
    ndcg = np.zeros_like(dcg)
    ok = idcg > 0
    ndcg[ok] = dcg[ok] / idcg[ok]
    return GainCurves(qids + extra, cg, dcg, icg, idcg, ndcg, len(qids) + len(extra), m)


@dataclass(frozen=True)
class PRCurve:
    """Interpolated precision at recall ``levels``: one row per query, and the averaged curve.

    ``precision[:, j]`` is ``iP@levels[j]`` per query and ``mean[j]`` its ``raw_means`` value.
    """

    levels: np.ndarray
    qids: list[str]
    precision: np.ndarray
    mean: np.ndarray

    def area(self) -> float:
        """Area under the averaged curve by the trapezoid rule over the levels."""
        if self.levels.size < 2:
            return 0.0
        x, y = self.levels, self.mean
        return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0))

    def average(self) -> float:
        """Mean of the averaged curve's points; over the 11 standard levels this is trec_eval's 11pt_avg."""
        return float(np.mean(self.mean)) if self.mean.size else 0.0


def _columns(res: EvaluationResult, names: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    qids = list(res.per_query[names[0]])
    table = np.array([[res.per_query[n][q] for n in names] for q in qids]).reshape(len(qids), len(names))
    return qids, table, np.array([res.raw_means[n] for n in names])


def interpolated_pr(
    qrels: QrelsDict | Qrels,
    results: RunDict | Run | ArrayRun,
    levels: Sequence[float] = STANDARD_LEVELS,
    *,
    preset: str = "beir",
    **policy: object,
) -> PRCurve:
    """Interpolated precision at each recall level, per query and averaged (trec_eval's ``iprec_at_recall``).

    :param levels: recall levels in [0, 1], ascending; default trec_eval's 0.0, 0.1, ..., 1.0.
    :param preset: and ``policy`` as for :func:`~haystack_irmetrics.evaluate`.

    Usage::

        >>> qrels = {"q": {"a": 1, "b": 1, "c": 1}}
        >>> results = {"q": {"a": 0.9, "x": 0.8, "b": 0.7, "y": 0.6, "c": 0.5}}
        >>> pr = interpolated_pr(qrels, results, [0.0, 0.5, 1.0], preset="trec")
        >>> pr.mean.tolist(), pr.area()
        ([1.0, 0.6666666666666666, 0.6], 0.7333333333333333)
    """
    lv = [check_level(x) for x in levels]
    if not lv or any(b <= a for a, b in pairwise(lv)):
        raise InvalidCutoffError(f"levels must be a non-empty ascending list of distinct recall levels, got {levels!r}")
    ms = [Measure("iP", level=x) for x in lv]
    res = evaluate(qrels, results, None, measures=ms, preset=preset, **policy)  # type: ignore[arg-type]
    qids, table, mean = _columns(res, [m.name for m in ms])
    return PRCurve(np.array(lv), qids, table, mean)


@dataclass(frozen=True)
class MeasureCurve:
    """One measure family at each cutoff: ``values[:, j]`` per query at ``ks[j]``, ``mean[j]`` averaged."""

    stem: str
    ks: np.ndarray
    qids: list[str]
    values: np.ndarray
    mean: np.ndarray


def measure_at_k(
    qrels: QrelsDict | Qrels,
    results: RunDict | Run | ArrayRun,
    measure: str = "NDCG",
    ks: Sequence[int] = tuple(range(1, 11)),
    *,
    preset: str = "beir",
    **policy: object,
) -> MeasureCurve:
    """A measure that takes a cutoff (``NDCG``, ``nDCG_exp``, ``P``, ``F(beta=2)``, ...) at every k in ``ks``.

    Usage::

        >>> measure_at_k({"q": {"a": 1}}, {"q": {"x": 0.9, "a": 0.8}}, "P", [1, 2, 4]).mean.tolist()
        [0.0, 0.5, 0.25]
    """
    probe = parse_measure(f"{measure}@1") if "@" not in measure else parse_measure(measure)
    if probe.cutoff is None:
        raise InvalidCutoffError(f"{measure} does not take a cutoff; measure_at_k needs one that does")
    ks = check_k_values(ks)  # a list (a one-shot iterator is read once), of distinct positive ints
    names = [m.name for m in (Measure(probe.family, k, **_params(probe)) for k in ks)]
    res = evaluate(qrels, results, None, measures=names, preset=preset, **policy)  # type: ignore[arg-type]
    qids, table, mean = _columns(res, names)
    return MeasureCurve(probe.stem, np.array(ks), qids, table, mean)


def _params(m: Measure) -> dict[str, object]:
    gain = dict(m.gain) if isinstance(m.gain, tuple) else m.gain
    return {k: v for k, v in (("gain", gain), ("discount", m.discount), ("beta", m.beta)) if v is not None}


__all__ = [
    "GainCurves",
    "GainVectors",
    "MeasureCurve",
    "PRCurve",
    "gain_curves",
    "gain_vectors",
    "interpolated_pr",
    "measure_at_k",
]
