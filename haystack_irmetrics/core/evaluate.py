"""``evaluate``: inputs -> ranked relevance arrays -> kernels -> aggregation."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from ..errors import NoOverlapError
from .inputs import ColumnarRun, Prepared, Qrels, QrelsDict, Run, RunDict, prepare
from .kernels import binary_kernel, gain_kernel
from .measures import Measure, resolve_measures
from .presets import FamilyPolicy, MissingQueries, NoRelevant, Preset, Ties, resolve_preset
from .ranking import Counted, count_f32, judged_ranks

DEFAULT_K_VALUES = (1, 3, 5, 10, 100, 1000)


class PerQuery(Mapping):
    """``{measure: {qid: value}}``, each inner dict built on first access (most callers read means only)."""

    def __init__(self) -> None:
        self.parts: dict[str, tuple[list[str], np.ndarray, list[str]]] = {}
        self._built: dict[str, dict[str, float]] = {}

    def __getitem__(self, name: str) -> dict[str, float]:
        built = self._built.get(name)
        if built is None:
            names, values, zeros = self.parts[name]
            built = self._built[name] = dict(chain(zip(names, values.tolist()), ((q, 0.0) for q in zeros)))
        return built

    def __iter__(self):
        return iter(self.parts)

    def __len__(self) -> int:
        return len(self.parts)

    def __repr__(self) -> str:
        return repr(dict(self.items()))


@dataclass(frozen=True)
class EvaluationResult:
    """Means and per-query values of an evaluation.

    ``means`` are rounded as the preset says (BEIR: Python ``round(x, 5)``), ``raw_means`` are
    not. ``per_query[measure][qid]`` holds unrounded values of exactly the queries averaged in
    that measure's mean (so the mean of ``per_query[m]`` is ``raw_means[m]``); ``n_queries[m]`` is
    their count.
    """

    means: dict[str, float]
    raw_means: dict[str, float]
    per_query: Mapping[str, dict[str, float]]
    n_queries: dict[str, int]
    measures: tuple[Measure, ...]
    preset: Preset = field(repr=False)

    def to_dict(self, per_query: bool = False) -> dict:
        out: dict = dict(self.means)
        if per_query:
            out["per_query"] = dict(self.per_query.items())
        return out

    def to_json(self, per_query: bool = False, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(per_query), indent=indent)

    def as_beir(self) -> tuple[dict[str, float], ...]:
        """``(ndcg, _map, recall, precision, mrr, r_cap)`` dicts keyed like BEIR's return values."""
        groups: dict[str, dict[str, float]] = {f: {} for f in ("NDCG", "MAP", "Recall", "P", "MRR", "R_cap")}
        for m in self.measures:
            groups.setdefault(m.family, {})[m.name] = self.means[m.name]
        return tuple(groups.values())


def evaluate(
    qrels: QrelsDict | Qrels,
    results: RunDict | Run | ColumnarRun,
    k_values: Sequence[int] | None = DEFAULT_K_VALUES,
    *,
    measures: Sequence[str | Measure] | None = None,
    preset: str | Preset = "beir",
    relevance_threshold: float | None = None,
    ties: Ties | None = None,
    missing_queries: MissingQueries | None = None,
    ignore_identical_ids: bool | None = None,
    no_relevant: NoRelevant | None = None,
) -> EvaluationResult:
    """Evaluate a run against qrels.

    :param qrels: ``{qid: {docid: label}}`` (int or float labels; negative = not relevant), or a
        :class:`~haystack_irmetrics.core.inputs.Qrels`.
    :param results: ``{qid: {docid: score}}`` (higher = better), or a
        :class:`~haystack_irmetrics.core.inputs.Run`. Never modified.
    :param k_values: cutoffs crossed with the measure families.
    :param measures: families (``"NDCG"``) and/or full names (``"P@5"``); default: BEIR's six.
    :param preset: ``"beir"`` (default, beir 2.2.0 exactly) or ``"trec"`` (trec_eval for all six).
    :param relevance_threshold: labels ``>=`` this are relevant for MAP, P, Recall, R_cap, MRR.
    :param ties: ``"trec"`` or ``"stable"`` for every family (overrides the preset).
    :param missing_queries: ``"skip"`` or ``"zero"`` for every family (overrides the preset).
    :param ignore_identical_ids: drop documents whose id equals the query id.
    :param no_relevant: ``"zero"`` (default) or ``"skip"`` for queries with no relevant document.
    :returns: an :class:`EvaluationResult`.

    Usage::

        >>> from haystack_irmetrics import evaluate
        >>> qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
        >>> results = {"q1": {"d1": 0.9, "d2": 0.5, "d4": 0.4}, "q2": {"d5": 0.8, "d3": 0.7}}
        >>> res = evaluate(qrels, results, k_values=[1, 3])
        >>> res.means["NDCG@3"], res.means["MRR@1"], res.means["P@3"]
        (0.74532, 0.5, 0.5)
    """
    policy = resolve_preset(
        preset,
        ties=ties,
        missing_queries=missing_queries,
        ignore_identical_ids=ignore_identical_ids,
        relevance_threshold=relevance_threshold,
        no_relevant=no_relevant,
    )
    wanted = resolve_measures(measures, k_values)
    q = Qrels.from_dict(qrels)
    run = results if isinstance(results, ColumnarRun) else Run.from_dict(results)
    prep = prepare(run, q, policy.ignore_identical_ids)
    if not prep.qids:
        raise NoOverlapError(
            f"no query is shared by the results ({len(_qids(run))} queries, e.g. {_qids(run)[0]!r}) "
            f"and the non-empty qrels ({len(q.qids)} queries, e.g. {q.qids[0]!r}); check the id format"
        )
    return _Evaluation(q, prep, policy).run(wanted)


class _Evaluation:
    """One evaluation: computes each (ranking order, relevance rule) once and shares it."""

    def __init__(self, qrels: Qrels, prep: Prepared, preset: Preset) -> None:
        self.qrels = qrels
        self.prep = prep
        self.preset = preset
        self._ranks: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._counted: Counted | None = None
        n = len(prep.qids)
        index = qrels.index()
        self.qrels_pos = np.fromiter(map(index.__getitem__, prep.qids), np.int64, count=n)
        # Each scored query's judged labels (all judged docs, retrieved or not).
        starts = qrels.offsets[self.qrels_pos]
        sizes = qrels.offsets[self.qrels_pos + 1] - starts
        self.label_owner = np.repeat(np.arange(n), sizes)
        gather = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes - starts, sizes)
        self.labels = qrels.labels[gather]
        scored = set(prep.qids)
        self.missing = [qid for qid in qrels.qids if qid not in scored and qrels.data[qid]]
        self.empty = [qid for qid in qrels.qids if not qrels.data[qid]]

    def ranked(self, ties: str) -> tuple[np.ndarray, np.ndarray]:
        """Pair order sorted by (query, rank) and the sorted ranks, per tie policy (cached)."""
        if ties not in self._ranks:
            if self._counted is None:
                self._counted = count_f32(self.prep)
            ranks = judged_ranks(self.prep, ties, self._counted)
            order = np.lexsort((ranks, self.prep.pair_query))
            self._ranks[ties] = (order, ranks[order])
        return self._ranks[ties]

    def is_relevant(self, labels: np.ndarray, policy: FamilyPolicy) -> np.ndarray:
        if policy.positive_above is not None:
            return labels > policy.positive_above
        return labels >= self.preset.relevance_threshold

    def run(self, wanted: list[Measure]) -> EvaluationResult:
        n = len(self.prep.qids)
        groups: dict[tuple[str, FamilyPolicy], list[Measure]] = {}
        for m in wanted:
            groups.setdefault((m.family, self.preset.policy(m.family)), []).append(m)
        values: dict[Measure, np.ndarray] = {}
        has_relevant: dict[Measure, np.ndarray] = {}
        for (family, policy), ms in groups.items():
            order, ranks = self.ranked(policy.ties)
            owner = self.prep.pair_query[order]
            labels = self.prep.pair_label[order]
            cutoffs = [m.cutoff for m in ms]
            if family == "NDCG":
                offsets = _offsets(owner, n)
                ideal = self.labels > 0
                ideal_owner = self.label_owner[ideal]
                ideal_gain = self.labels[ideal]
                sort = np.lexsort((-ideal_gain, ideal_owner))
                table = gain_kernel(owner, ranks, labels, offsets, ideal_gain[sort], _offsets(ideal_owner, n), cutoffs)
                rel_any = np.bincount(ideal_owner, minlength=n) > 0
            else:
                keep = self.is_relevant(labels, policy)
                r_owner = owner[keep]
                n_rel = np.bincount(self.label_owner[self.is_relevant(self.labels, policy)], minlength=n)
                table = binary_kernel(family, r_owner, ranks[keep], _offsets(r_owner, n), n_rel, cutoffs)
                rel_any = n_rel > 0
            for row, m in enumerate(ms):
                values[m] = table[row]
                has_relevant[m] = rel_any
        return self.aggregate(wanted, values, has_relevant)

    def aggregate(
        self, wanted: list[Measure], values: dict[Measure, np.ndarray], has_relevant: dict[Measure, np.ndarray]
    ) -> EvaluationResult:
        qids = self.prep.qids
        means: dict[str, float] = {}
        raw: dict[str, float] = {}
        per_query = PerQuery()
        counts: dict[str, int] = {}
        skip_norel = self.preset.no_relevant == "skip"
        for m in wanted:
            policy = self.preset.policy(m.family)
            v = values[m]
            keep = has_relevant[m] if skip_norel else np.ones(v.size, bool)
            answered = v[keep]
            names = qids if answered.size == v.size else [q for q, k in zip(qids, keep.tolist()) if k]
            extra: list[str] = []
            if policy.missing_queries == "zero" and not skip_norel:
                extra = self.missing + (self.empty if policy.count_empty_qrels else [])
            elif policy.missing_queries == "zero":
                # Missing queries with relevant documents still count as 0; none-relevant ones are skipped.
                extra = [q for q in self.missing if _has_relevant(self.qrels.data[q], m, self.preset)]
            count = answered.size + len(extra)
            # Sequential left-to-right sum in results order, as BEIR accumulates it.
            total = float(np.cumsum(answered)[-1]) if answered.size else 0.0
            mean = total / count if count else 0.0
            raw[m.name] = mean
            digits = self.preset.round_digits
            means[m.name] = round(mean, digits) if digits is not None else mean
            per_query.parts[m.name] = (names, answered, extra)
            counts[m.name] = count
        return EvaluationResult(means, raw, per_query, counts, tuple(wanted), self.preset)


def _qids(run: Run | ColumnarRun) -> list[str]:
    return run.qids if isinstance(run, ColumnarRun) else list(run.data)


def _has_relevant(judgments: Mapping[str, float], m: Measure, preset: Preset) -> bool:
    policy = preset.policy(m.family)
    if m.family == "NDCG":
        return any(v > 0 for v in judgments.values())
    if policy.positive_above is not None:
        return any(v > policy.positive_above for v in judgments.values())
    return any(v >= preset.relevance_threshold for v in judgments.values())


def _offsets(owner: np.ndarray, n: int) -> np.ndarray:
    """CSR offsets for an ``owner`` array sorted ascending."""
    out = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=out[1:])
    return out
