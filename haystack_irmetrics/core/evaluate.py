"""``evaluate``: inputs -> ranked relevance arrays -> kernels -> aggregation."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, islice
from typing import NamedTuple

import numpy as np

from ..errors import EmptyInputError, InvalidArgumentError, InvalidLabelError, NoOverlapError, SplitQueryError
from .inputs import ArrayRun, Qrels, QrelsDict, Run, RunDict, as_run
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
from .measures import FAMILIES, Family, GainMap, Measure, resolve_measures
from .plausibility import Overlap, warn_if_nothing_relevant
from .prepare import Prepared, prepare
from .presets import FamilyPolicy, MissingQueries, NoRelevant, Preset, Ties, relevant_labels, resolve_preset
from .ranking import Counted, count_f32, judged_ranks
from .results import REPR_ITEMS, REPR_MAX, EvaluationResult, PerQuery, bounded, short_list  # noqa: F401 - re-exported
from .subtopics import SubtopicQrels

DEFAULT_K_VALUES = (1, 3, 5, 10, 100, 1000)


def evaluate(
    qrels: QrelsDict | Qrels | SubtopicQrels,
    results: RunDict | Run | ArrayRun,
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
        :class:`~haystack_irmetrics.core.inputs.Qrels`; or judgments per subtopic, a
        :class:`~haystack_irmetrics.core.subtopics.SubtopicQrels`, which the diversity measures need
        (``alpha_nDCG@k``, ``ERR_IA@k``, ``NRBP``, ``StRecall@k``; the others read its topical view).
    :param results: ``{qid: {docid: score}}`` (higher = better); or ``{qid: [docid, ...]}``, ranked
        lists best first with no scores (every query a list or tuple; see
        :class:`~haystack_irmetrics.core.inputs.RankedRun`); or a
        :class:`~haystack_irmetrics.core.inputs.Run` / an ``ArrayRun`` (``ColumnarRun``, ``RankedRun``). Never modified.
    :param k_values: cutoffs crossed with the measure families.
    :param measures: families (``"NDCG"``) and/or full names (``"P@5"``, ``"nDCG_exp@10"``, ``"Rprec"``,
        ``"iP@0.3"``; see :mod:`haystack_irmetrics.core.measures`); default: BEIR's six.
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
    return evaluate_chunks(qrels, [results], k_values, measures=measures, preset=policy)


def evaluate_chunks(
    qrels: QrelsDict | Qrels | SubtopicQrels,
    chunks: Iterable[RunDict | Mapping[str, Sequence[str]] | Run | ArrayRun],
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
    """:func:`evaluate` over a run that comes in pieces, with the same result, bit for bit.

    Each piece (a results dict, ranked lists ``{qid: [docid, ...]}``, a
    :class:`~haystack_irmetrics.core.inputs.Run`, :class:`~haystack_irmetrics.core.inputs.ColumnarRun`
    or :class:`~haystack_irmetrics.core.inputs.RankedRun`) must hold whole queries; their order
    across pieces is the results order. Memory follows the largest piece plus the per-query
    values, so a run file of any size is scored in bounded memory (``irmetrics evaluate`` streams
    this way). A query found in two pieces raises :class:`~haystack_irmetrics.errors.SplitQueryError`.
    Parameters as :func:`evaluate`.

    Usage::

        >>> from haystack_irmetrics import evaluate_chunks
        >>> qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
        >>> pieces = [{"q1": {"d1": 0.9, "d2": 0.5, "d4": 0.4}}, {"q2": {"d5": 0.8, "d3": 0.7}}]
        >>> evaluate_chunks(qrels, pieces, k_values=[1, 3]).means["NDCG@3"]
        0.74532
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
    sub = qrels if isinstance(qrels, SubtopicQrels) else None
    q = Qrels.from_dict(sub.topical if sub is not None else qrels)  # type: ignore[arg-type]
    if isinstance(chunks, Mapping | str | bytes) or not isinstance(chunks, Iterable):
        raise EmptyInputError(
            f"chunks must be a list (or any iterable) of run pieces, e.g. [results], got {type(chunks).__name__}"
            + ("; to score one results dict, use evaluate()" if isinstance(chunks, Mapping) else "")
        )
    scored: list[str] = []
    seen: set[str] | None = None  # built when a second piece comes: one piece needs no check
    first: list[str] = []
    n_run = 0
    parts: dict[Measure, list[tuple[_Block, int, list[str]]]] = {m: [] for m in wanted}
    overlap = Overlap()
    for chunk in chunks:
        if isinstance(chunk, Mapping) and len(chunk) == 0:
            continue  # an empty piece adds nothing
        run = as_run(chunk)
        qids = _qids(run)
        if not qids:
            continue
        if n_run:
            if seen is None:
                seen = set(first)
            if not seen.isdisjoint(qids):
                again = next(x for x in qids if x in seen)
                raise SplitQueryError(
                    f"query {again!r} appears in two pieces of the run; each piece must hold whole queries"
                )
            seen.update(qids)
        else:
            first = qids
        n_run += len(qids)
        prep = prepare(run, q, policy.ignore_identical_ids)
        overlap.add(prep)
        rows = _Evaluation(q, prep, policy, run, sub).compute(wanted)
        scored.extend(prep.qids)
        for m, (block, row) in rows.items():
            parts[m].append((block, row, prep.qids))
    if not n_run:
        raise EmptyInputError("results is empty: no query was retrieved for")
    if not scored:
        raise _no_overlap(n_run, first[0], q)
    overlap.warn(q)
    warn_if_nothing_relevant(q, wanted, policy)
    merged: dict[Measure, tuple[_Block, int]] = {}
    for m, pieces in parts.items():
        if len(pieces) == 1:
            merged[m] = pieces[0][:2]
            continue
        listed = any(b.qids is not None for b, _, _ in pieces)
        table = np.concatenate([b.table[r] for b, r, _ in pieces])[None, :]
        rel_any = np.concatenate([b.rel_any for b, _, _ in pieces])
        names = list(chain.from_iterable(b.qids if b.qids is not None else own for b, _, own in pieces))
        counted = None
        if any(b.counted is not None for b, _, _ in pieces):
            counted = np.concatenate(
                [np.ones(b.table.shape[1], bool) if b.counted is None else b.counted for b, _, _ in pieces]
            )
        merged[m] = (_Block(table, rel_any, names if listed else None, counted), 0)
    return aggregate(wanted, merged, scored, q, policy)


def _no_overlap(n_run: int, example: str, qrels: Qrels) -> NoOverlapError:
    judged = [qrels.qids[i] for i in np.flatnonzero(np.diff(qrels.offsets)).tolist()]
    if not judged:
        return NoOverlapError(
            f"the qrels judge no document ({len(qrels.qids)} queries, each with an empty dict, "
            f"e.g. {qrels.qids[0]!r}): there is nothing to evaluate against"
        )
    return NoOverlapError(
        f"no query is shared by the results ({n_run} queries, e.g. {example!r}) "
        f"and the non-empty qrels ({len(judged)} queries, e.g. {judged[0]!r}); check the id format"
    )


def build_evaluation(qrels: QrelsDict | Qrels, results: RunDict | Run | ArrayRun, policy: Preset) -> _Evaluation:
    """Validate the inputs and prepare one evaluation under a resolved preset (shared with :mod:`.curves`)."""
    q = Qrels.from_dict(qrels)
    run = as_run(results)
    prep = prepare(run, q, policy.ignore_identical_ids)
    if not prep.qids:
        raise _no_overlap(len(_qids(run)), _qids(run)[0], q)
    return _Evaluation(q, prep, policy, run)


@dataclass
class _Block:
    """One kernel call's output: ``table[row]`` per measure, over ``qids`` (default: the scored queries)."""

    table: np.ndarray
    rel_any: np.ndarray
    qids: list[str] | None = None
    counted: np.ndarray | None = None  # False: summed but not counted (BEIR's Hole)


class _Evaluation:
    """One evaluation: computes each (ranking order, relevance rule) once and shares it."""

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
        n = len(prep.qids)
        # Each scored query's judged labels (all judged docs, retrieved or not).
        self.label_owner = np.repeat(np.arange(n), np.diff(prep.judged_offsets))
        self.labels = prep.judged_labels

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

    def compute(self, wanted: list[Measure]) -> dict[Measure, tuple[_Block, int]]:
        """Per-query values of every wanted measure: ``{measure: (block, row of block.table)}``."""
        groups: dict[tuple, list[Measure]] = {}
        for m in wanted:
            groups.setdefault((m.family, self.preset.policy(m.family), m.variant), []).append(m)
        rows: dict[Measure, tuple[_Block, int]] = {}
        for (family, policy, _), ms in groups.items():
            spec = FAMILIES[family]
            block = _KINDS[spec.kernel].compute(self, spec, policy, ms)
            for row, m in enumerate(ms):
                rows[m] = (block, row)
        return rows

    # One method per kernel kind (the _KINDS table below); each returns a _Block with one row per measure of
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

    def _gain(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> _Block:
        n = len(self.prep.qids)
        owner, ranks, gains, offsets, ideal_gain, ideal_offsets = self.ranked_gains(policy, ms[0])
        cutoffs = [m.cutoff for m in ms]
        table = gain_kernel(owner, ranks, gains, offsets, ideal_gain, ideal_offsets, cutoffs, jk=ms[0].discount == "jk")
        return _Block(table, np.diff(ideal_offsets) > 0 if n else np.zeros(0, bool))

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

    def _binary(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> _Block:
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
        return _Block(table, n_rel > 0)

    def _bpref(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> _Block:
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
        return _Block(values[None, :], n_rel > 0)

    def _iprec(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> _Block:
        r_owner, r_ranks, offsets, n_rel = self.relevant_ranked(policy)
        levels = spec.averaged_levels
        if levels is None:  # iP: each measure's own level
            return _Block(iprec_kernel(r_owner, r_ranks, offsets, n_rel, [m.level for m in ms]), n_rel > 0)
        # trec_eval 11pt_avg: the values summed from the highest level down, then / number of levels.
        table = iprec_kernel(r_owner, r_ranks, offsets, n_rel, levels)
        total = np.zeros(table.shape[1], np.float64)
        for row in range(len(levels) - 1, -1, -1):
            total += table[row]
        return _Block((total / float(len(levels)))[None, :], n_rel > 0)

    def _judged(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> _Block:
        """The user-model families (ERR, RBP, infAP, ...): ``spec.judged`` over every judged retrieved document."""
        n = len(self.prep.qids)
        params = ms[0].params
        if spec.label_check is not None and (bad := spec.label_check(self.labels, params)) is not None:
            raise self._label_error(bad[0], f"in {ms[0].name} it {bad[1]}")
        order, ranks = self.ranked(policy.ties)
        owner = self.prep.pair_query[order]
        relevant = lambda labels: self.is_relevant(labels, policy)  # noqa: E731
        ranking = JudgedRanking(owner, ranks, self.prep.pair_label[order], _offsets(owner, n), self.label_owner,
                                self.labels, self.prep.judged_offsets, self.n_retrieved(), relevant)  # fmt: skip
        table = spec.judged(ranking, [m.cutoff for m in ms], params)  # type: ignore[misc]
        positive = spec.positive(self.labels, params, relevant)  # type: ignore[misc]
        return _Block(table, np.bincount(self.label_owner[positive], minlength=n) > 0)

    def _diversity(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> _Block:
        """The diversity families (alpha_nDCG, ERR_IA, NRBP, StRecall): ``spec.diversity``, query by query."""
        if self.subtopics is None:
            raise InvalidArgumentError(
                f"{ms[0].name} reads judgments per subtopic: give SubtopicQrels as the qrels "
                "(SubtopicQrels.from_dict, io.read_subtopic_qrels; irmetrics evaluate reads QRELS so)"
            )
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
        return _Block(table, rel_any)

    def _coverage(self, spec: Family, policy: FamilyPolicy, ms: list[Measure]) -> _Block:
        n = len(self.prep.qids)
        cutoffs = [m.cutoff for m in ms]
        n_rel = np.bincount(self.label_owner[self.is_relevant(self.labels, policy)], minlength=n)
        if not spec.counts_unjudged:  # Judged: the documents judged for the query
            order, ranks = self.ranked(policy.ties)
            return _Block(coverage_kernel(self.prep.pair_query[order], ranks, n, cutoffs), n_rel > 0)
        # Hole: documents judged for no query at all (BEIR's annotated corpus: every qrels doc id).
        qids = self.prep.qids
        counted = None
        rel_any = n_rel > 0
        if policy.unjudged_in_sum and self.run_input is not None:
            scored = dict(zip(qids, rel_any.tolist()))
            qids = _qids(self.run_input)
            counted = np.fromiter((q in scored for q in qids), bool, count=len(qids))
            rel_any = np.fromiter((scored.get(q, False) for q in qids), bool, count=len(qids))
        owner, ranks, n_ret = self._annotated_ranks(policy.ties, qids)
        table = coverage_kernel(owner, ranks, len(qids), cutoffs, n_ret)
        return _Block(table, rel_any, None if counted is None else qids, counted)

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


class _Kind(NamedTuple):
    """What the core does for one kernel kind (``Family.kernel``)."""

    # The _Evaluation method computing a group of measures of one family, policy and variant.
    compute: Callable[[_Evaluation, Family, FamilyPolicy, list[Measure]], _Block]
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


_KINDS: dict[str, _Kind] = {
    "gain": _Kind(_Evaluation._gain, _any_gain),
    "binary": _Kind(_Evaluation._binary, _any_relevant),
    "count": _Kind(_Evaluation._binary, _any_relevant),  # trec_eval's counts: binary values at no cutoff
    "bpref": _Kind(_Evaluation._bpref, _any_relevant),
    "iprec": _Kind(_Evaluation._iprec, _any_relevant),
    "coverage": _Kind(_Evaluation._coverage, _any_relevant),
    "judged": _Kind(_Evaluation._judged, _any_positive),
    "diversity": _Kind(_Evaluation._diversity, _any_positive),
}


def aggregate(
    wanted: list[Measure],
    rows: dict[Measure, tuple[_Block, int]],
    scored: list[str],
    qrels: Qrels,
    preset: Preset,
) -> EvaluationResult:
    """Means of per-query values (``rows``, over the ``scored`` queries in results order).

    Queries judged but never scored count as the missing-query policy says.
    """
    missing, empty = unscored(qrels, scored)
    means: dict[str, float] = {}
    raw: dict[str, float] = {}
    per_query = PerQuery()
    counts: dict[str, int] = {}
    skip_norel = preset.no_relevant == "skip"
    for m in wanted:
        policy = preset.policy(m.family)
        spec = FAMILIES[m.family]
        block, row = rows[m]
        qids = scored if block.qids is None else block.qids
        v = block.table[row]
        if skip_norel:
            keep = block.rel_any
            answered = v[keep]
            names = qids if answered.size == v.size else [q for q, k in zip(qids, keep.tolist()) if k]
            n_counted = answered.size if block.counted is None else int(block.counted[keep].sum())
        else:
            answered, names = v, qids
            n_counted = answered.size if block.counted is None else int(block.counted.sum())
        extra: list[str] = []
        if spec.aggregate == "sum":
            pass  # counts cover the queries the run answers, as trec_eval without -c
        elif policy.missing_queries == "zero" and not skip_norel:
            extra = missing + (empty if policy.count_empty_qrels else [])
        elif policy.missing_queries == "zero":
            # Missing queries with relevant documents still count as 0; none-relevant ones are skipped.
            extra = [q for q in missing if _has_relevant(qrels.data[q], m, preset)]
        count = n_counted + len(extra)
        if spec.aggregate == "geometric":
            logs = [math.log(x) for x in answered.tolist()] + [math.log(spec.missing_value)] * len(extra)
            total = 0.0
            for x in logs:
                total += x
            mean = math.exp(total / count) if count else math.nan
        else:
            # Sequential left-to-right sum in results order, as BEIR accumulates it.
            total = float(np.cumsum(answered)[-1]) if answered.size else 0.0
            for _ in range(len(extra) if spec.missing_value else 0):
                total += spec.missing_value
            # trec_eval's summary of a count is its sum; a mean over no query (all skipped) is nan.
            mean = total if spec.aggregate == "sum" else total / count if count else math.nan
        raw[m.name] = mean
        digits = preset.round_digits
        means[m.name] = round(mean, digits) if digits is not None else mean
        if block.qids is not None:
            listed = set(names)
            extra = [q for q in extra if q not in listed]
        per_query.parts[m.name] = (names, answered, extra, spec.missing_value)
        counts[m.name] = count
    return EvaluationResult(means, raw, per_query, counts, tuple(wanted), preset)


def unscored(qrels: Qrels, scored: list[str]) -> tuple[list[str], list[str]]:
    """``(missing, empty)``: judged queries without results, and queries with an empty judgment dict."""
    sizes = np.diff(qrels.offsets)
    if int(np.count_nonzero(sizes)) == len(scored):  # the scored queries are judged ones: all were scored
        missing: list[str] = []
    else:
        seen = set(scored)
        missing = [qid for qid in qrels.qids if qid not in seen and qrels.data[qid]]
    return missing, [qrels.qids[i] for i in np.flatnonzero(sizes == 0).tolist()]


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


def _qids(run: Run | ArrayRun) -> list[str]:
    return run.qids if isinstance(run, ArrayRun) else list(run.data)


def _has_relevant(judgments: Mapping[str, float], m: Measure, preset: Preset) -> bool:
    return _KINDS[m.spec.kernel].has_relevant(judgments, m, preset.policy(m.family), preset.relevance_threshold)


def _offsets(owner: np.ndarray, n: int) -> np.ndarray:
    """CSR offsets for an ``owner`` array sorted ascending."""
    out = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=out[1:])
    return out
