"""Bounds from the holes of a run: the interval a measure's value must lie in once its holes are judged.

A hole of a measure at cutoff k is a document of the run's top k that the query has no judgment for
(the whole ranking for a measure without a cutoff). Today's value counts every hole non-relevant. Once
the holes are judged, each 0 or ``grade``, the value is one of ``2^h`` numbers; :func:`hole_bounds`
returns their minimum and maximum per query (and the means of both), and the value with every hole
relevant. That last one is *not* an upper bound for every measure: a hole judged relevant raises the
ideal DCG of nDCG and the R of AP, so a run with its only relevant document at rank 1 and a hole at
rank 10 scores nDCG@10 = 1 today and 0.906 with the hole relevant. Hence the scan below.

How the extremes are found is the family's registry entry (``Family.hole_bounds``): for a monotone
family two labellings suffice; for a ``"scan"`` family the s first and the s last holes, for every s
(2h + 1 labellings). Each labelling is scored by the core itself, as a ranked list of the top k in the
measure's own order (judged documents where they rank, a stand-in id for each hole) against the query's
judgments plus the holes judged relevant: the same kernels, the same policy, so the labelling with no
hole relevant gives today's value exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..checks import number
from ..errors import InvalidArgumentError, UnknownMeasureError
from .evaluation import DEFAULT_K_VALUES, Evaluation, Results
from .families import FAMILIES
from .inputs import Qrels, QrelsDict
from .measures import Measure, resolve_measures
from .packing import csr
from .prepare import Prepared
from .presets import Preset, resolve_preset
from .scoring import Scorer

# Judged pairs the labellings of one evaluation pass hold at most (bounded memory on deep runs).
_CHUNK_PAIRS = 4_000_000


@dataclass(frozen=True)
class HoleBounds:
    """What :func:`hole_bounds` returns.

    ``value``: today's means (every hole non-relevant), as :func:`~.evaluation.evaluate` reports them.
    ``low`` / ``high``: the means of each query's smallest and largest value over every judging of its
    holes (each 0 or ``grade``): the fully-judged mean lies in ``[low, high]``. ``holes_relevant``: the
    mean with every hole judged ``grade``. All rounded as the preset rounds (BEIR: ``round(x, 5)``);
    ``per_query[measure][qid]`` is the unrounded ``(low, high)`` of each query the mean averages.
    ``holes[measure]``: the mean number of holes in a query's top k.
    """

    grade: float
    measures: tuple[Measure, ...]
    value: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    holes_relevant: dict[str, float]
    holes: dict[str, float]
    per_query: Mapping[str, dict[str, tuple[float, float]]]

    def to_dict(self) -> dict:
        """``{measure: {"value", "low", "high", "holes_relevant", "holes"}}`` and the grade."""
        return {
            "grade": self.grade,
            "measures": {
                m.name: {
                    "value": self.value[m.name],
                    "low": self.low[m.name],
                    "high": self.high[m.name],
                    "holes_relevant": self.holes_relevant[m.name],
                    "holes": self.holes[m.name],
                }
                for m in self.measures
            },
        }


def bounded_families() -> list[str]:
    """The families :func:`hole_bounds` can bound."""
    return [f.name for f in FAMILIES.values() if f.hole_bounds is not None]


def hole_bounds(
    qrels: QrelsDict | Qrels,
    results: Results,
    k_values: Sequence[int] | None = DEFAULT_K_VALUES,
    *,
    measures: Sequence[str | Measure] | None = None,
    grade: float = 1.0,
    preset: str | Preset = "beir",
    **overrides: Any,
) -> HoleBounds:
    """The interval each measure's value lies in once the run's holes are judged (each 0 or ``grade``).

    Parameters as :func:`~.evaluation.evaluate` (``overrides``: the preset's overrides, ``relevance_threshold``,
    ``ties``, ``missing_queries``, ``ignore_identical_ids``, ``no_relevant``, as
    :func:`~.presets.resolve_preset` takes them), and ``grade``, the label a hole judged relevant gets
    (``> 0``; at or above ``relevance_threshold`` for the binary measures to count it). Every measure
    must belong to a family with bounds (:func:`bounded_families`: nDCG, MAP, P, Recall, R_cap, MRR,
    Success, Rprec, F, ERR, nERR, RBP); the others raise
    :class:`~haystack_irmetrics.errors.UnknownMeasureError`. Cost: one extra evaluation per cutoff
    for the monotone families, and ``2h + 1`` rankings of length k per query for the scan families
    (h holes), so deep uncut nDCG or MAP on long runs is the expensive case. The bounds of a run already
    evaluated: :func:`evaluation_bounds`.

    Usage::

        >>> from haystack_irmetrics.core.bounds import hole_bounds
        >>> qrels = {"q1": {"d1": 1, "d3": 0}}
        >>> run = {"q1": {"d1": 0.9, "d3": 0.8, "d2": 0.7}}
        >>> b = hole_bounds(qrels, run, measures=["NDCG@3", "P@3"])
        >>> b.value["NDCG@3"], b.low["NDCG@3"], b.high["NDCG@3"], b.holes_relevant["NDCG@3"]
        (1.0, 0.91972, 1.0, 0.91972)
        >>> b.value["P@3"], b.low["P@3"], b.high["P@3"]
        (0.33333, 0.33333, 0.66667)
    """
    _check_grade(grade)
    policy = resolve_preset(preset, **overrides)
    wanted = _bounded(measures, k_values, grade)
    return _bounds(Evaluation(qrels, results, policy), wanted, float(grade))


def evaluation_bounds(
    evaluation: Evaluation,
    measures: Sequence[str | Measure] | None = None,
    k_values: Sequence[int] | None = DEFAULT_K_VALUES,
    *,
    grade: float = 1.0,
) -> HoleBounds:
    """:func:`hole_bounds` of a run already evaluated (:class:`~.evaluation.Evaluation`, whose preset the bounds
    follow): its prepared run and rankings are read again, not made again.

    Usage::

        >>> from haystack_irmetrics import Evaluation
        >>> from haystack_irmetrics.core.bounds import evaluation_bounds
        >>> ev = Evaluation({"q1": {"d1": 1, "d3": 0}}, {"q1": {"d1": 0.9, "d3": 0.8, "d2": 0.7}})
        >>> b = evaluation_bounds(ev, ["P@3"])
        >>> ev.result(["P@3"]).means["P@3"], b.low["P@3"], b.high["P@3"]
        (0.33333, 0.33333, 0.66667)
    """
    _check_grade(grade)
    return _bounds(evaluation, _bounded(measures, k_values, grade), float(grade))


def _check_grade(grade: float) -> None:
    number(grade, "grade", 0, closed="neither")  # the label of a hole judged relevant


def _bounded(measures: Sequence[str | Measure] | None, k_values: Sequence[int] | None, grade: float) -> list[Measure]:
    """The measures, each of a family with bounds that can score ``grade`` (said before any work)."""
    wanted = resolve_measures(measures, k_values)
    unbounded = [m.name for m in wanted if FAMILIES[m.family].hole_bounds is None]
    if unbounded:
        raise UnknownMeasureError(
            f"no hole bounds for {unbounded[:5]}: these families read which documents are judged or are not "
            f"per-query means; bounded families: {bounded_families()}"
        )
    for m in wanted:  # a grade the family cannot score (ERR's above max_rel)
        check = FAMILIES[m.family].label_check
        if check is not None and (bad := check(np.asarray([float(grade)]), m.params)) is not None:
            raise InvalidArgumentError(f"grade {float(grade)} cannot be scored by {m.name}: it {bad[1]}")
    return wanted


def _bounds(evaluation: Evaluation, wanted: list[Measure], grade: float) -> HoleBounds:
    """The bounds of ``wanted`` (checked) on an evaluation: today's values, then each group's labellings."""
    policy = evaluation.preset
    base = evaluation.result(wanted)
    ev = evaluation.scorer
    scored = {qid: i for i, qid in enumerate(ev.prep.qids)}
    n_ret = np.diff(ev.prep.offsets)
    # The labellings are ranked lists already: no identical id to drop (the real ones are gone).
    virtual = replace(policy, ignore_identical_ids=False)

    groups: dict[tuple[str, int | None], list[Measure]] = {}
    for m in wanted:
        groups.setdefault((policy.policy(m.family).ties, m.cutoff), []).append(m)
    folded: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    for (tie_order, cutoff), ms in groups.items():
        scan = any(FAMILIES[m.family].hole_bounds == "scan" for m in ms)
        folded.update(_fold_group(ev, tie_order, cutoff, ms, n_ret, scan, grade, virtual))

    digits = policy.round_digits
    out_low, out_high, out_all, out_value, out_holes = {}, {}, {}, {}, {}
    per_query: dict[str, dict[str, tuple[float, float]]] = {}
    for m in wanted:
        low, high, every, n_holes = folded[m.name]
        today = base.per_query[m.name]
        rows: dict[str, tuple[float, float]] = {}
        lows, highs, alls, counts = [], [], [], []
        for qid, v in today.items():
            i = scored.get(qid)
            if i is None or np.isnan(low[i]):  # not ranked, or nothing to judge: the value stands
                rows[qid] = (v, v)
                alls.append(v)
                counts.append(0 if i is None else n_holes[i])
            else:
                rows[qid] = (float(low[i]), float(high[i]))
                alls.append(float(every[i]))
                counts.append(n_holes[i])
            lows.append(rows[qid][0])
            highs.append(rows[qid][1])
        per_query[m.name] = rows
        out_value[m.name] = base.means[m.name]
        out_low[m.name] = _mean(lows, digits)
        out_high[m.name] = _mean(highs, digits)
        out_all[m.name] = _mean(alls, digits)
        out_holes[m.name] = _mean(counts, digits)
    return HoleBounds(grade, tuple(wanted), out_value, out_low, out_high, out_all, out_holes, per_query)


def _mean(values: list[float], digits: int | None) -> float:
    if not values:
        return float("nan")
    x = float(np.mean(np.asarray(values, np.float64)))
    return round(x, digits) if digits is not None else x


def _fold_group(
    ev: Scorer,
    tie_order: str,
    cutoff: int | None,
    ms: list[Measure],
    n_ret: np.ndarray,
    scan: bool,
    grade: float,
    virtual: Preset,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per scored query: the smallest and largest value over the labellings, the all-relevant value and
    the number of holes, for each measure of one (tie order, cutoff) group (``nan``: no hole).

    Each labelling is one query of a prepared ranked run built here directly: its judged documents at
    their ranks in the top d, the holes it judges at theirs, and every judgment that can count (the
    ones in the list, and beyond it those that can be relevant: R and the ideal DCG read them).
    """
    prep = ev.prep
    n = len(prep.qids)
    order, ranks = ev.ranked(tie_order)
    owner = prep.pair_query[order]
    pair_label = prep.pair_label[order]
    starts = np.searchsorted(owner, np.arange(n + 1))
    depth = n_ret if cutoff is None else np.minimum(n_ret, cutoff)
    n_holes = np.zeros(n, np.int64)
    threshold = virtual.relevance_threshold
    grade_array = np.asarray([grade])
    folded = _Folded(n, ms, virtual)
    # the lists the loop appends to, once per labelling: bound here, not looked up on each append
    parts, pair_counts, label_counts = folded.parts, folded.pair_counts, folded.label_counts
    lengths, where = folded.lengths, folded.where

    size = 0
    for i in range(n):
        d = int(depth[i])
        a, b = int(starts[i]), int(starts[i + 1])
        r = ranks[a:b]
        in_list = r < d
        j_pos, j_lab = r[in_list], pair_label[a:b][in_list]
        taken = np.zeros(d, bool)
        taken[j_pos] = True
        holes = np.flatnonzero(~taken)
        h = holes.size
        n_holes[i] = h
        if not h:
            continue
        # Judgments beyond the list that can count (R, the ideal DCG); judged non-relevant ones change nothing.
        own = prep.judged_labels[prep.judged_offsets[i] : prep.judged_offsets[i + 1]]
        # Their labels: every countable label of the query less those of the judged documents in the list.
        out_labels = _minus(own[(own > 0) | (own >= threshold)], j_lab[(j_lab > 0) | (j_lab >= threshold)])
        base_all = np.concatenate([j_lab, out_labels])
        # Monotone: none and every hole; scan: the s first and the s last holes for every s.
        slices = [(0, s) for s in range(h + 1)] + [(h - s, h) for s in range(1, h)] if scan else [(0, 0), (0, h)]
        for lo_, hi_ in slices:
            s_ = hi_ - lo_
            parts["pos"].append(j_pos)
            parts["pos"].append(holes[lo_:hi_])
            parts["lab"].append(j_lab)
            parts["lab"].append(np.repeat(grade_array, s_))
            parts["all"].append(base_all)
            parts["all"].append(np.repeat(grade_array, s_))
            pair_counts.append(j_pos.size + s_)
            label_counts.append(base_all.size + s_)
            lengths.append(d)
            where.append((i, s_ == h))
            size += j_pos.size + s_
        if size >= _CHUNK_PAIRS:
            folded.flush()
            size = 0
    folded.flush()
    return {m.name: (folded.low[m.name], folded.high[m.name], folded.every[m.name], n_holes) for m in ms}


class _Folded:
    """The labellings of one (tie order, cutoff) group, gathered by :func:`_fold_group` and scored a chunk at a
    time as one prepared ranked run (one query per labelling), each value folded into its query's smallest,
    largest and all-relevant value (``nan``: no labelling, or none counted)."""

    def __init__(self, n: int, ms: list[Measure], virtual: Preset) -> None:
        self.ms, self.virtual = ms, virtual
        self.low = {m.name: np.full(n, np.nan) for m in ms}
        self.high = {m.name: np.full(n, np.nan) for m in ms}
        self.every = {m.name: np.full(n, np.nan) for m in ms}
        self.parts: dict[str, list[np.ndarray]] = {"pos": [], "lab": [], "all": []}
        self.pair_counts: list[int] = []
        self.label_counts: list[int] = []
        self.lengths: list[int] = []
        self.where: list[tuple[int, bool]] = []  # per labelling: (query, whether it judges every hole relevant)

    def flush(self) -> None:
        """Score the labellings gathered so far, fold their values in, and start the next chunk."""
        parts, where = self.parts, self.where
        if not where:
            return
        pos = np.concatenate(parts["pos"]).astype(np.int64)
        n_virtual = len(where)
        offsets = csr(np.asarray(self.lengths, np.int64))
        pair_query = np.repeat(np.arange(n_virtual), self.pair_counts)
        virtual_prep = Prepared(
            qids=[str(j) for j in range(n_virtual)],
            offsets=offsets,
            scores=None,
            ids_at=_unused,
            exact_at=_unused,
            pair_query=pair_query,
            pair_score=(offsets[pair_query + 1] - offsets[pair_query] - pos).astype(np.float64),
            pair_label=np.concatenate(parts["lab"]),
            pair_doc=[],
            judged_offsets=csr(np.asarray(self.label_counts, np.int64)),
            judged_labels=np.concatenate(parts["all"]),
            pair_ranks={"trec": pos, "stable": pos},
        )
        rows = Scorer(_NO_QRELS, virtual_prep, self.virtual).compute(self.ms)
        owners = np.fromiter((i for i, _ in where), np.int64, count=n_virtual)
        is_all = np.fromiter((a for _, a in where), bool, count=n_virtual)
        for m in self.ms:
            block, row = rows[m]
            values = block.table[row].astype(np.float64)
            if self.virtual.no_relevant == "skip":  # not counted: no relevant document in this labelling
                values = np.where(block.rel_any, values, np.nan)
            lo, hi, al = self.low[m.name], self.high[m.name], self.every[m.name]
            np.fmin.at(lo, owners, values)
            np.fmax.at(hi, owners, values)
            al[owners[is_all]] = values[is_all]
        for key in parts:
            parts[key].clear()
        self.pair_counts.clear()
        self.label_counts.clear()
        self.lengths.clear()
        where.clear()


def _minus(items: np.ndarray, remove: np.ndarray) -> np.ndarray:
    """``items`` less one occurrence of each value of ``remove`` (a multiset difference)."""
    if remove.size == 0:
        return items
    values, counts = np.unique(items, return_counts=True)
    drop_values, drop_counts = np.unique(remove, return_counts=True)
    left = counts.copy()
    left[np.searchsorted(values, drop_values)] -= drop_counts
    return np.repeat(values, left)


def _unused(*_args: object) -> object:  # pragma: no cover - ranked labellings never tie
    raise AssertionError("a labelling's ranks are known: no document id is read")


# The labellings' evaluation reads no judgment by id (labels are checked before, on the real qrels).
_NO_QRELS = Qrels({}, [], np.zeros(1, np.int64), np.zeros(0))
