"""One evaluation, entered once: :class:`Evaluation` (the inputs validated, the run prepared, the preset
resolved, each once; every measure read from it), :func:`evaluate` and :func:`evaluate_chunks` (a run that
comes in pieces), and the aggregation of per-query values into an :class:`~.results.EvaluationResult`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np

from ..errors import EmptyInputError, NoOverlapError, SplitQueryError
from .inputs import ArrayRun, Qrels, QrelsDict, Run, RunDict, as_run
from .measures import FAMILIES, Measure, resolve_measures
from .plausibility import Overlap, warn_if_nothing_relevant
from .prepare import Prepared, prepare
from .presets import Preset, resolve_preset
from .results import EvaluationResult, PerQuery
from .scoring import Block, Scorer, check_subtopics, has_relevant, run_qids
from .subtopics import SubtopicQrels

DEFAULT_K_VALUES = (1, 3, 5, 10, 100, 1000)

#: What a run may be given as: ``{qid: {docid: score}}``, ranked lists ``{qid: [docid, ...]}``, or a container.
Results = RunDict | Mapping[str, Sequence[str]] | Run | ArrayRun


class Evaluation:
    """A run scored against judgments under one preset, entered once: the qrels validated, the run read and
    prepared (each judged document found with its score), the preset resolved; then every measure,
    ``Judged@k`` and ``Hole@k``, the per-query values (:meth:`result`) and the hole bounds
    (:func:`~haystack_irmetrics.core.bounds.evaluation_bounds`) are read from it, each ranking computed once.

    :param qrels: as :func:`evaluate` takes them (a :class:`~.subtopics.SubtopicQrels` for the diversity
        measures).
    :param results: as :func:`evaluate` takes them; never modified.
    :param preset: ``"beir"``, ``"trec"`` or a :class:`~.presets.Preset`; ``overrides`` are its policy
        overrides as :func:`evaluate` takes them (``ties``, ``missing_queries``, ``ignore_identical_ids``,
        ``relevance_threshold``, ``no_relevant``).
    :raises IRMetricsError: bad input, named as :func:`evaluate` names it, when the evaluation is made.

    Usage::

        >>> from haystack_irmetrics import Evaluation
        >>> qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
        >>> results = {"q1": {"d1": 0.9, "d2": 0.5, "d4": 0.4}, "q2": {"d5": 0.8, "d3": 0.7}}
        >>> ev = Evaluation(qrels, results)
        >>> ev.result(k_values=[1, 3]).means["NDCG@3"]
        0.74532
        >>> ev.result(["Judged@3", "Hole@3"]).means
        {'Judged@3': 0.5, 'Hole@3': 0.33333}
        >>> ev.with_preset("trec").result(["MRR@1"]).means
        {'MRR@1': 0.5}
    """

    scorer: Scorer  # the engine (core-internal: :mod:`.bounds` and :mod:`.curves` read its rankings)

    def __init__(
        self,
        qrels: QrelsDict | Qrels | SubtopicQrels,
        results: Results,
        preset: str | Preset = "beir",
        **overrides: Any,
    ) -> None:
        policy = resolve_preset(preset, **overrides)
        sub = qrels if isinstance(qrels, SubtopicQrels) else None
        q = Qrels.from_dict(sub.topical if sub is not None else qrels)  # type: ignore[arg-type]
        piece = _piece(results)
        if piece is None:
            raise EmptyInputError("results is empty: no query was retrieved for")
        run, qids = piece
        prep = prepare(run, q, policy.ignore_identical_ids)
        if not prep.qids:
            raise _no_overlap(len(qids), qids[0], q)
        overlap = Overlap()
        overlap.add(prep)
        self.scorer = Scorer(q, prep, policy, run, sub)
        # Said with the first result, after its measures computed, as evaluate() says it (shared by with_preset).
        self._unsaid = [overlap]

    @property
    def qrels(self) -> Qrels:
        """The judgments, validated (the topical view of :class:`~.subtopics.SubtopicQrels`)."""
        return self.scorer.qrels

    @property
    def run(self) -> Run | ArrayRun:
        """The run as the core holds it (:class:`~.inputs.Run`, or an ``ArrayRun`` as given)."""
        return self.scorer.run_input  # type: ignore[return-value]

    @property
    def preset(self) -> Preset:
        """The resolved preset every measure of this evaluation follows."""
        return self.scorer.preset

    @property
    def prepared(self) -> Prepared:
        """The prepared run: the scored queries (``prepared.qids``, results order) flattened for ranking."""
        return self.scorer.prep

    def result(
        self, measures: Sequence[str | Measure] | None = None, k_values: Sequence[int] | None = DEFAULT_K_VALUES
    ) -> EvaluationResult:
        """The means and per-query values of ``measures`` (crossed with ``k_values`` as :func:`evaluate` crosses
        them; default BEIR's six), as :func:`evaluate` returns them."""
        wanted = resolve_measures(measures, k_values)
        rows = self.scorer.compute(wanted)
        while self._unsaid:
            self._unsaid.pop().warn(self.qrels)
        warn_if_nothing_relevant(self.qrels, wanted, self.preset)
        return aggregate(wanted, rows, self.prepared.qids, self.qrels, self.preset)

    def with_preset(self, preset: str | Preset | None = None, **overrides: Any) -> Evaluation:
        """This evaluation under another preset (``None``: this one) and ``overrides``; the prepared run and its
        rankings are shared unless ``ignore_identical_ids`` changes, which prepares the run again.

        >>> ev = Evaluation({"q": {"a": 1}}, {"q": {"a": 0.5, "b": 0.5}})  # a tie: "a" first as listed, "b" by id
        >>> ev.result(["MRR@1"]).means, ev.with_preset(ties="trec").result(["MRR@1"]).means
        ({'MRR@1': 1.0}, {'MRR@1': 0.0})
        """
        policy = resolve_preset(self.preset if preset is None else preset, **overrides)
        if policy.ignore_identical_ids != self.preset.ignore_identical_ids:
            return Evaluation(self.scorer.subtopics or self.qrels, self.run, policy)
        other = object.__new__(Evaluation)
        other.scorer, other._unsaid = self.scorer.with_preset(policy), self._unsaid
        return other

    def __repr__(self) -> str:
        return (
            f"Evaluation(preset={self.preset.name!r}, queries={len(self.prepared.qids)}, "
            f"judged_retrieved={int(self.prepared.pair_query.size)})"
        )


def _piece(results: Results) -> tuple[Run | ArrayRun, list[str]] | None:
    """The run of one piece of results and its query ids; None when it holds no query."""
    if isinstance(results, Mapping) and len(results) == 0:
        return None  # an empty piece adds nothing
    run = as_run(results)
    qids = run_qids(run)
    return (run, qids) if qids else None


def evaluate(
    qrels: QrelsDict | Qrels | SubtopicQrels,
    results: Results,
    k_values: Sequence[int] | None = DEFAULT_K_VALUES,
    *,
    measures: Sequence[str | Measure] | None = None,
    preset: str | Preset = "beir",
    **overrides: Any,
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
    :param preset: ``"beir"`` (default, beir 2.2.0 exactly) or ``"trec"`` (trec_eval for all six), or a
        :class:`~haystack_irmetrics.core.presets.Preset`.
    :returns: an :class:`EvaluationResult`.

    The preset's overrides (``overrides``, read by :func:`~haystack_irmetrics.core.presets.resolve_preset`;
    each applies to every family):

    * ``relevance_threshold``: labels ``>=`` this are relevant for MAP, P, Recall, R_cap, MRR.
    * ``ties``: ``"trec"`` or ``"stable"``.
    * ``missing_queries``: ``"skip"`` or ``"zero"``.
    * ``ignore_identical_ids``: drop documents whose id equals the query id.
    * ``no_relevant``: ``"zero"`` (default) or ``"skip"`` for queries with no relevant document.

    To read several results from one run (other measures, ``Judged@k``, the hole bounds, another tie
    order), make one :class:`Evaluation`: the run is prepared once.

    Usage::

        >>> from haystack_irmetrics import evaluate
        >>> qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
        >>> results = {"q1": {"d1": 0.9, "d2": 0.5, "d4": 0.4}, "q2": {"d5": 0.8, "d3": 0.7}}
        >>> res = evaluate(qrels, results, k_values=[1, 3])
        >>> res.means["NDCG@3"], res.means["MRR@1"], res.means["P@3"]
        (0.74532, 0.5, 0.5)
    """
    policy = resolve_preset(preset, **overrides)
    wanted = resolve_measures(measures, k_values)  # a bad measure is said before the inputs are read
    check_subtopics(wanted, qrels)
    return Evaluation(qrels, results, policy).result(wanted)


def evaluate_chunks(
    qrels: QrelsDict | Qrels | SubtopicQrels,
    chunks: Iterable[Results],
    k_values: Sequence[int] | None = DEFAULT_K_VALUES,
    *,
    measures: Sequence[str | Measure] | None = None,
    preset: str | Preset = "beir",
    **overrides: Any,
) -> EvaluationResult:
    """:func:`evaluate` over a run that comes in pieces, with the same result, bit for bit.

    Each piece (a results dict, ranked lists ``{qid: [docid, ...]}``, a
    :class:`~haystack_irmetrics.core.inputs.Run`, :class:`~haystack_irmetrics.core.inputs.ColumnarRun`
    or :class:`~haystack_irmetrics.core.inputs.RankedRun`) must hold whole queries; their order
    across pieces is the results order. Memory follows the largest piece plus the per-query
    values, so a run file of any size is scored in bounded memory (``irmetrics evaluate`` streams
    this way). A query found in two pieces raises :class:`~haystack_irmetrics.errors.SplitQueryError`.
    Parameters and keywords as :func:`evaluate`.

    Usage::

        >>> from haystack_irmetrics import evaluate_chunks
        >>> qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
        >>> pieces = [{"q1": {"d1": 0.9, "d2": 0.5, "d4": 0.4}}, {"q2": {"d5": 0.8, "d3": 0.7}}]
        >>> evaluate_chunks(qrels, pieces, k_values=[1, 3]).means["NDCG@3"]
        0.74532
    """
    policy = resolve_preset(preset, **overrides)
    wanted = resolve_measures(measures, k_values)
    check_subtopics(wanted, qrels)
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
    parts: dict[Measure, list[tuple[Block, int, list[str]]]] = {m: [] for m in wanted}
    overlap = Overlap()
    for chunk in chunks:
        piece = _piece(chunk)
        if piece is None:
            continue
        run, qids = piece
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
        rows = Scorer(q, prep, policy, run, sub).compute(wanted)
        scored.extend(prep.qids)
        for m, (block, row) in rows.items():
            parts[m].append((block, row, prep.qids))
    if not n_run:
        raise EmptyInputError("results is empty: no query was retrieved for")
    if not scored:
        raise _no_overlap(n_run, first[0], q)
    overlap.warn(q)
    warn_if_nothing_relevant(q, wanted, policy)
    merged: dict[Measure, tuple[Block, int]] = {}
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
        merged[m] = (Block(table, rel_any, names if listed else None, counted), 0)
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


def aggregate(
    wanted: list[Measure],
    rows: dict[Measure, tuple[Block, int]],
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
            extra = [q for q in missing if has_relevant(qrels.data[q], m, preset)]
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
