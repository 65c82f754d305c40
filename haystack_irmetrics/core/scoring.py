"""Per-query values of measures on one prepared run: one method per kernel kind, each (ranking order,
relevance rule) computed once and shared by the measures that read it.

:class:`Scorer` is the core's engine under :class:`~.evaluation.Evaluation` (one per run, or per piece of a
run that comes in pieces) and under the hole bounds' labellings (:mod:`.bounds`, which hand it prepared
ranked lists directly); :data:`KINDS` says what it does for each kernel kind of the registry
(``Family.kernel``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import NamedTuple

import numpy as np

from ..errors import InvalidArgumentError, InvalidLabelError
from .inputs import ArrayRun, Qrels, Run
from .kernels import (
    BinaryRanking,
    binary_kernel,
    bpref_kernel,
    counts_below,
    coverage_kernel,
    gain_kernel,
    iprec_kernel,
)
from .kernels_diversity import QueryView
from .kernels_user import JudgedRanking
from .measures import FAMILIES, Family, GainMap, Measure
from .prepare import Prepared, prepare
from .presets import FamilyPolicy, Preset, relevant_labels
from .ranking import Counted, count_f32, judged_ranks
from .subtopics import SubtopicQrels


@dataclass
class Block:
    """One kernel call's output: ``table[row]`` per measure, over ``qids`` (default: the scored queries)."""

    table: np.ndarray
    rel_any: np.ndarray
    qids: list[str] | None = None
    counted: np.ndarray | None = None  # False: summed but not counted (BEIR's Hole)


class Scorer:
    """The measures of one prepared run: each (ranking order, relevance rule) computed once and shared.

    ``run`` (the run as given) is read by BEIR's Hole only, which also counts results queries nobody judged;
    ``subtopics`` by the diversity families.
    """

    def __init__(
        self, qrels: Qrels, prep: Prepared, preset: Preset, run: Run | ArrayRun | None = None,
        subtopics: SubtopicQrels | None = None,
    ) -> None:  # fmt: skip
        self.subtopics = subtopics
        self._subtopic_views: dict[tuple, list[QueryView]] = {}
        self.qrels = qrels
        self.prep = prep
        self.preset = preset
        self.run_input = run
        self._ranks: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._counted: Counted | None = None
        self._relevant: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        self._counts: dict[tuple, np.ndarray] = {}
        self._annotated: dict[tuple[str, bool], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        n = len(prep.qids)
        # Each scored query's judged labels (all judged docs, retrieved or not).
        self.label_owner = np.repeat(np.arange(n), np.diff(prep.judged_offsets))
        self.labels = prep.judged_labels

    def with_preset(self, preset: Preset) -> Scorer:
        """The same prepared run under another preset of the same ``ignore_identical_ids`` (what the run was
        prepared with): the rankings and Hole's marked documents, which no other policy reads, are shared."""
        other = Scorer(self.qrels, self.prep, preset, self.run_input, self.subtopics)
        other._ranks, other._annotated, other._subtopic_views = self._ranks, self._annotated, self._subtopic_views
        other._counted = self._counted
        return other

    def ranked(self, ties: str) -> tuple[np.ndarray, np.ndarray]:
        """Pair order sorted by (query, rank) and the sorted ranks, per tie policy (cached)."""
        if ties not in self._ranks:
            if self._counted is None and self.prep.pair_ranks is None:
                self._counted = count_f32(self.prep)
            ranks = judged_ranks(self.prep, ties, self._counted)
            # Pairs are grouped by query already; most queries hold one, so the order often stands.
            key = self.prep.pair_query * (int(ranks.max(initial=0)) + 1) + ranks
            if key.size < 2 or bool((key[1:] > key[:-1]).all()):
                order = np.arange(key.size)
            else:
                order = np.argsort(key, kind="stable")
            self._ranks[ties] = (order, ranks[order])
        return self._ranks[ties]

    def is_relevant(self, labels: np.ndarray, policy: FamilyPolicy) -> np.ndarray:
        return relevant_labels(labels, policy, self.preset.relevance_threshold)

    def n_retrieved(self) -> np.ndarray:
        return np.diff(self.prep.offsets)

    def compute(self, wanted: list[Measure]) -> dict[Measure, tuple[Block, int]]:
        """Per-query values of every wanted measure: ``{measure: (block, row of block.table)}``."""
        groups: dict[tuple, list[Measure]] = {}
        for m in wanted:
            groups.setdefault((m.family, self.preset.policy(m.family), m.variant), []).append(m)
        rows: dict[Measure, tuple[Block, int]] = {}
        for (family, policy, _), ms in groups.items():
            spec = FAMILIES[family]
            block = KINDS[spec.kernel].compute(self, spec, policy, ms)
            for row, m in enumerate(ms):
                rows[m] = (block, row)
        return rows

    # One method per kernel kind (the KINDS table below); each returns a Block with one row per measure of
    # the group, and reads what differs between the families of its kind from their Family entry.

    def ranked_gains(self, policy: FamilyPolicy, m: Measure) -> tuple[np.ndarray, ...]:
        """``(owner, ranks, gains, offsets, ideal_gains, ideal_offsets)`` of an NDCG variant."""
        n = len(self.prep.qids)
        order, ranks = self.ranked(policy.ties)
        owner = self.prep.pair_query[order]
        all_gains = gain_values(self.labels, m.gain)
        if m.gain == "exp" and not np.isfinite(all_gains).all():
            raise self._gain_overflow(int(np.flatnonzero(~np.isfinite(all_gains))[0]), m)
        gains = gain_values(self.prep.pair_label[order], m.gain)
        ideal = all_gains > 0
        ideal_owner = self.label_owner[ideal]
        ideal_gain = all_gains[ideal]
        # Every DCG and IDCG of a query is at most the sum of its positive gains (each discount is >= 1): one
        # sum says whether any overflows (a gain map of finite gains can: {1: 1e308}), which would make NaN.
        with np.errstate(over="ignore"):
            overflow = not math.isfinite(float(ideal_gain.sum()))
        if overflow:
            with np.errstate(over="ignore"):
                totals = np.bincount(ideal_owner, weights=ideal_gain, minlength=n)
            qid = self.prep.qids[int(np.flatnonzero(~np.isfinite(totals))[0])]
            raise InvalidLabelError(
                f"{m.name}: the gains of the judgments of query {qid!r} add up beyond any float, so its DCG "
                "cannot be computed; use smaller gains (NDCG is the same with every gain divided by one number)"
            )
        sort = np.lexsort((-ideal_gain, ideal_owner))
        return owner, ranks, gains, _offsets(owner, n), ideal_gain[sort], _offsets(ideal_owner, n)

    def _gain_overflow(self, i: int, m: Measure) -> InvalidLabelError:
        """The error for judgment ``i`` (flat, qrels order), whose exponential gain overflows."""
        return self._label_error(
            i, f"its gain 2**label - 1 in {m.name} is beyond any float (exponential gains take labels below 1024)"
        )

    def _label_error(self, i: int, why: str) -> InvalidLabelError:
        """The error for judgment ``i`` (flat, qrels order), naming its query, document and label."""
        q = int(self.label_owner[i])
        qid = self.prep.qids[q]
        doc = next(islice(iter(self.qrels.data[qid]), i - int(self.prep.judged_offsets[q]), None))
        return InvalidLabelError(f"label {self.qrels.data[qid][doc]!r} of document {doc!r} in query {qid!r}: {why}")

    def _gain(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> Block:
        n = len(self.prep.qids)
        owner, ranks, gains, offsets, ideal_gain, ideal_offsets = self.ranked_gains(policy, ms[0])
        cutoffs = [m.cutoff for m in ms]
        table = gain_kernel(owner, ranks, gains, offsets, ideal_gain, ideal_offsets, cutoffs, jk=ms[0].discount == "jk")
        return Block(table, np.diff(ideal_offsets) > 0 if n else np.zeros(0, bool))

    def relevant_ranked(self, policy: FamilyPolicy) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(owner, ranks, offsets, n_relevant)`` of the relevant retrieved documents (cached)."""
        key = (policy.ties, policy.positive_above)
        cached = self._relevant.get(key)
        if cached is None:
            n = len(self.prep.qids)
            order, ranks = self.ranked(policy.ties)
            owner = self.prep.pair_query[order]
            keep = self.is_relevant(self.prep.pair_label[order], policy)
            r_owner = owner[keep]
            n_rel = np.bincount(self.label_owner[self.is_relevant(self.labels, policy)], minlength=n)
            cached = self._relevant[key] = (r_owner, ranks[keep], _offsets(r_owner, n), n_rel)
        return cached

    def _binary(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> Block:
        """Binary families and trec_eval's counts: ``spec.value`` over the relevant retrieved documents."""
        r_owner, r_ranks, offsets, n_rel = self.relevant_ranked(policy)
        cutoffs = [m.cutoff for m in ms]
        counts = None
        if spec.needs_counts:  # MAP, P, Recall, ... of one relevance rule share their counts
            key = (policy.ties, policy.positive_above, tuple(cutoffs))
            if key not in self._counts:
                self._counts[key] = counts_below(r_ranks, r_owner, len(self.prep.qids), cutoffs)
            counts = self._counts[key]
        n_ret = self.n_retrieved() if spec.needs_retrieved else None
        if spec.value is None:  # pragma: no cover - every binary and count family has one
            raise ValueError(f"family {spec.name} has no value function")
        ranking = BinaryRanking(
            r_owner, r_ranks, offsets, n_rel, cutoffs, n_retrieved=n_ret, beta=ms[0].beta, counts=counts
        )
        table = binary_kernel(spec.value, ranking)
        return Block(table, n_rel > 0)

    def _bpref(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> Block:
        n = len(self.prep.qids)
        order, ranks = self.ranked(policy.ties)
        owner = self.prep.pair_query[order]
        labels = self.prep.pair_label[order]
        rel = self.is_relevant(labels, policy)
        nonrel = (labels >= 0) & ~rel
        all_rel = self.is_relevant(self.labels, policy)
        n_rel = np.bincount(self.label_owner[all_rel], minlength=n)
        n_nonrel = np.bincount(self.label_owner[(self.labels >= 0) & ~all_rel], minlength=n)
        values = bpref_kernel(owner, ranks, _offsets(owner, n), rel, nonrel, n_rel, n_nonrel)
        return Block(values[None, :], n_rel > 0)

    def _iprec(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> Block:
        r_owner, r_ranks, offsets, n_rel = self.relevant_ranked(policy)
        levels = spec.averaged_levels
        if levels is None:  # iP: each measure's own level
            return Block(iprec_kernel(r_owner, r_ranks, offsets, n_rel, [m.level for m in ms]), n_rel > 0)
        # trec_eval 11pt_avg: the values summed from the highest level down, then / number of levels.
        table = iprec_kernel(r_owner, r_ranks, offsets, n_rel, levels)
        total = np.zeros(table.shape[1], np.float64)
        for row in range(len(levels) - 1, -1, -1):
            total += table[row]
        return Block((total / float(len(levels)))[None, :], n_rel > 0)

    def _user(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> Block:
        """The user-model families (ERR, RBP, infAP, ...): ``spec.user`` over every judged retrieved document."""
        n = len(self.prep.qids)
        params = ms[0].params
        if spec.label_check is not None and (bad := spec.label_check(self.labels, params)) is not None:
            raise self._label_error(bad[0], f"in {ms[0].name} it {bad[1]}")
        order, ranks = self.ranked(policy.ties)
        owner = self.prep.pair_query[order]
        relevant = lambda labels: self.is_relevant(labels, policy)  # noqa: E731
        ranking = JudgedRanking(owner, ranks, self.prep.pair_label[order], _offsets(owner, n), self.label_owner,
                                self.labels, self.prep.judged_offsets, self.n_retrieved(), relevant)  # fmt: skip
        table = spec.user(ranking, [m.cutoff for m in ms], params)  # type: ignore[misc]
        positive = spec.positive(self.labels, params, relevant)  # type: ignore[misc]
        return Block(table, np.bincount(self.label_owner[positive], minlength=n) > 0)

    def _diversity(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> Block:
        """The diversity families (alpha_nDCG, ERR_IA, NRBP, StRecall): ``spec.diversity``, query by query."""
        if self.subtopics is None:
            check_subtopics(ms, None)
        params = ms[0].params
        key = (policy.ties, params["rel"])  # the families of one tie order and level share these
        if key not in self._subtopic_views:
            level = float(params["rel"])  # type: ignore[arg-type]
            order, ranks = self.ranked(policy.ties)
            # A document is relevant to some subtopic exactly when its topical label (the highest) reaches rel.
            keep = self.prep.pair_label[order] >= level
            order, ranks = order[keep], ranks[keep]
            owner, docs = self.prep.pair_query[order].tolist(), [self.prep.pair_doc[i] for i in order.tolist()]
            by_query: list[list[tuple[int, str]]] = [[] for _ in self.prep.qids]
            for q, rank, doc in zip(owner, ranks.tolist(), docs, strict=True):
                by_query[q].append((rank, doc))
            self._subtopic_views[key] = [QueryView(by_query[i], *self.subtopics.relevant_sets(qid, level))
                                         for i, qid in enumerate(self.prep.qids)]  # fmt: skip
        table = np.zeros((len(ms), len(self.prep.qids)), np.float64)
        rel_any = np.zeros(len(self.prep.qids), bool)
        for i, query in enumerate(self._subtopic_views[key]):
            rel_any[i] = query.n > 0
            if query.n:
                table[:, i] = spec.diversity(query, [m.cutoff for m in ms], params)  # type: ignore[misc]
        return Block(table, rel_any)

    def _coverage(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> Block:
        n = len(self.prep.qids)
        cutoffs = [m.cutoff for m in ms]
        n_rel = np.bincount(self.label_owner[self.is_relevant(self.labels, policy)], minlength=n)
        if not spec.counts_unjudged:  # Judged: the documents judged for the query
            order, ranks = self.ranked(policy.ties)
            return Block(coverage_kernel(self.prep.pair_query[order], ranks, n, cutoffs), n_rel > 0)
        # Hole: documents judged for no query at all (BEIR's annotated corpus: every qrels doc id).
        qids = self.prep.qids
        counted = None
        rel_any = n_rel > 0
        if policy.unjudged_in_sum and self.run_input is not None:
            scored = dict(zip(qids, rel_any.tolist()))
            qids = run_qids(self.run_input)
            counted = np.fromiter((q in scored for q in qids), bool, count=len(qids))
            rel_any = np.fromiter((scored.get(q, False) for q in qids), bool, count=len(qids))
        key = (policy.ties, counted is not None)
        if key not in self._annotated:  # one preparation against the judged ids, whatever the cutoffs asked later
            self._annotated[key] = self._annotated_ranks(policy.ties, qids)
        owner, ranks, n_ret = self._annotated[key]
        table = coverage_kernel(owner, ranks, len(qids), cutoffs, n_ret)
        return Block(table, rel_any, None if counted is None else qids, counted)

    def _annotated_ranks(self, ties: str, qids: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ranks of the retrieved documents that some query judged, for ``qids`` (any results queries)."""
        annotated: set[str] = set()
        for docs in self.qrels.data.values():
            annotated.update(docs)
        sub = _run_subset(self.run_input, qids) if self.run_input is not None else {}
        ignore = self.preset.ignore_identical_ids
        n_ret = np.fromiter((len(sub[q]) - (ignore and q in sub[q]) for q in qids), np.int64, count=len(qids))
        marked = {}
        for q in qids:
            hit = {d: 1 for d in sub[q] if d in annotated}
            if hit:
                marked[q] = hit
        if not marked:
            empty = np.zeros(0, np.int64)
            return empty, empty, n_ret
        prep = prepare(Run.from_dict(sub), Qrels.from_dict(marked), ignore)
        ranks = judged_ranks(prep, ties)
        position = {q: i for i, q in enumerate(qids)}
        to_qids = np.fromiter((position[q] for q in prep.qids), np.int64, count=len(prep.qids))
        return to_qids[prep.pair_query], ranks, n_ret


class Kind(NamedTuple):
    """What the core does for one kernel kind (``Family.kernel``)."""

    # The Scorer method computing a group of measures of one family, policy and variant.
    compute: Callable[[Scorer, Family, FamilyPolicy, list[Measure]], Block]
    # Whether a query's judgments hold a document that makes it count under no_relevant="skip".
    has_relevant: Callable[[Mapping[str, float], Measure, FamilyPolicy, float], bool]


def _any_relevant(judgments: Mapping[str, float], m: Measure, policy: FamilyPolicy, threshold: float) -> bool:
    if policy.positive_above is not None:
        return any(v > policy.positive_above for v in judgments.values())
    return any(v >= threshold for v in judgments.values())


def _any_positive(judgments: Mapping[str, float], m: Measure, policy: FamilyPolicy, threshold: float) -> bool:
    labels = np.fromiter(judgments.values(), np.float64, count=len(judgments))
    return bool(m.spec.positive(labels, m.params, lambda x: relevant_labels(x, policy, threshold)).any())  # type: ignore[misc]


def _any_gain(judgments: Mapping[str, float], m: Measure, policy: FamilyPolicy, threshold: float) -> bool:
    labels = np.fromiter(judgments.values(), np.float64, count=len(judgments))
    return bool((gain_values(labels, m.gain) > 0).any())


KINDS: dict[str, Kind] = {
    "gain": Kind(Scorer._gain, _any_gain),
    "binary": Kind(Scorer._binary, _any_relevant),
    "count": Kind(Scorer._binary, _any_relevant),  # trec_eval's counts: binary values at no cutoff
    "bpref": Kind(Scorer._bpref, _any_relevant),
    "iprec": Kind(Scorer._iprec, _any_relevant),
    "coverage": Kind(Scorer._coverage, _any_relevant),
    "user": Kind(Scorer._user, _any_positive),
    "diversity": Kind(Scorer._diversity, _any_positive),
}


def gain_values(labels: np.ndarray, gain: str | GainMap | None) -> np.ndarray:
    """Gains of relevance labels: linear (the label), ``"exp"`` (``2^label - 1``) or a ``{grade: gain}`` map.

    Labels <= 0 gain nothing, except through a map entry for grade 0; in a map, grades it does not
    list keep gain = grade (trec_eval's ``ndcg`` parameters). Negative labels always gain 0.
    """
    if gain is None:
        return labels
    if gain == "exp":
        with np.errstate(over="ignore"):  # inf from 2**1024 up: the caller names the label
            return np.where(labels > 0, np.power(2.0, np.maximum(labels, 0.0)) - 1.0, 0.0)
    out = np.where(labels > 0, labels, 0.0)
    for grade, value in gain:
        out[labels == grade] = value
    return out


def _run_subset(run: Run | ArrayRun, qids: list[str]) -> dict[str, Mapping[str, float]]:
    """``{qid: {docid: score}}`` for these queries of the run (dict runs: the caller's own dicts)."""
    if isinstance(run, ArrayRun):
        where = {q: i for i, q in enumerate(run.qids)}
        index = np.fromiter((where[q] for q in qids), np.int64, count=len(qids))
        starts, ends = run.offsets[index], run.offsets[index + 1]
        sizes = ends - starts
        # Every row wanted in one read (a columnar run reads its id column once, not once per query).
        rows = np.repeat(starts - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes) + np.arange(int(sizes.sum()))
        ids, scores = run.ids_at(rows), run.scores[rows].tolist()
        bounds = np.concatenate(([0], np.cumsum(sizes))).tolist()
        return {q: dict(zip(ids[a:b], scores[a:b])) for q, a, b in zip(qids, bounds[:-1], bounds[1:])}
    return {q: run.data[q] for q in qids}


def run_qids(run: Run | ArrayRun) -> list[str]:
    """The run's query ids, in results order."""
    return run.qids if isinstance(run, ArrayRun) else list(run.data)


def _offsets(owner: np.ndarray, n: int) -> np.ndarray:
    """CSR offsets for an ``owner`` array sorted ascending."""
    out = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=out[1:])
    return out


def check_subtopics(wanted: Sequence[Measure], qrels: object) -> None:
    """The error of a diversity measure (``alpha_nDCG``, ...) asked of qrels without judgments per subtopic."""
    if isinstance(qrels, SubtopicQrels):
        return
    for m in wanted:
        if m.spec.needs_subtopics:
            raise InvalidArgumentError(
                f"{m.name} reads judgments per subtopic: give SubtopicQrels as the qrels "
                "(SubtopicQrels.from_dict, io.read_subtopic_qrels; irmetrics evaluate reads QRELS so)"
            )


def has_relevant(judgments: Mapping[str, float], m: Measure, preset: Preset) -> bool:
    """Whether a query's judgments make it one with a relevant document for ``m`` (``no_relevant="skip"``)."""
    return KINDS[m.spec.kernel].has_relevant(judgments, m, preset.policy(m.family), preset.relevance_threshold)
