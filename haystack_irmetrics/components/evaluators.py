"""Haystack evaluator components: BEIR's six retrieval metrics at a cutoff k, exactly.

Six single-metric evaluators follow the contract of Haystack's ``Document*Evaluator``
(``run(ground_truth_documents, retrieved_documents) -> {"score", "individual_scores"}``), so they
drop into :class:`haystack.evaluation.EvaluationRunResult`:

==================  =========  ==========================================================
component           metric     per query
==================  =========  ==========================================================
NDCGEvaluator       NDCG@k     DCG@k / IDCG@k, gain = relevance, ideal list cut at k
MAPEvaluator        MAP@k      sum of precision at each relevant rank <= k, / all relevant
PrecisionEvaluator  P@k        relevant in the top k / k
RecallEvaluator     Recall@k   relevant in the top k / all relevant
RCapEvaluator       R_cap@k    relevant in the top k / min(all relevant, k)
MRREvaluator        MRR@k      1 / rank of the first relevant document within the top k
==================  =========  ==========================================================

:class:`IRMetricsEvaluator` computes any metrics x ``k_values`` in one pass and returns every mean
under BEIR's key names; :func:`to_evaluation_run_result` turns its output into an
``EvaluationRunResult``.

All seven share one document path (:mod:`haystack_irmetrics.integration.documents`) and then call
:func:`haystack_irmetrics.evaluate`; their init parameters are plain JSON values, so ``to_dict`` /
``from_dict`` and ``Pipeline.dumps()`` / :func:`~haystack_irmetrics.components.load_pipeline`
round-trip.

Usage::

    >>> from haystack import Document
    >>> from haystack_irmetrics.components import (
    ...     MAPEvaluator, MRREvaluator, NDCGEvaluator, PrecisionEvaluator, RCapEvaluator, RecallEvaluator
    ... )
    >>> gold = [[Document(id="d1"), Document(id="d3")], [Document(id="d2", score=2.0)]]
    >>> retrieved = [
    ...     [Document(id="d1"), Document(id="d2"), Document(id="d3")],
    ...     [Document(id="d4"), Document(id="d2")],
    ... ]
    >>> for cls in (NDCGEvaluator, MAPEvaluator, PrecisionEvaluator, RecallEvaluator, RCapEvaluator, MRREvaluator):
    ...     out = cls(k=2).run(ground_truth_documents=gold, retrieved_documents=retrieved)
    ...     print(f"{cls.__name__:18} {round(out['score'], 4):<6} {[round(v, 4) for v in out['individual_scores']]}")
    NDCGEvaluator      0.622  [0.6131, 0.6309]
    MAPEvaluator       0.5    [0.5, 0.5]
    PrecisionEvaluator 0.5    [0.5, 0.5]
    RecallEvaluator    0.75   [0.5, 1.0]
    RCapEvaluator      0.75   [0.5, 1.0]
    MRREvaluator       0.75   [1.0, 0.5]

Query 0 has two binary gold documents, d1 found at rank 1 and d3 at rank 3 (outside k=2); query 1
has one with relevance 2.0, found at rank 2.

**Which numbers.** With ``preset="beir"`` (default) each metric is computed as beir 2.2.0 computes it
on the same judgments and ranking; ``preset="trec"`` gives trec_eval's semantics for all six. The
BEIR rules that matter here: NDCG uses the relevance as gain (any value > 0 counts); MAP, P and
Recall count a document relevant when its relevance is >= 1 and MRR and R_cap when it is > 0 --
unless ``relevance_threshold`` is set, which then applies to all five binary metrics (use it for
float feedback such as 1.0 / 0.5 / 0.3).

**Queries without ground truth.** A query whose ``ground_truth_documents`` list is empty is unjudged:
its individual score is ``nan`` and it is left out of ``score``, except for MRR and R_cap under
``preset="beir"``, which -- like BEIR, dividing by the number of qrels entries -- count it as 0. A query
whose ground-truth documents are all non-relevant (relevance <= 0, or below the threshold) scores 0
(``no_relevant="zero"``, default) or ``nan`` and is left out (``no_relevant="skip"``). So ``score`` is
always the mean of the individual scores that are not ``nan``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from haystack import Document, component, default_from_dict, default_to_dict

from ..checks import number
from ..core import (
    DEFAULT_K_VALUES,
    Evaluation,
    EvaluationResult,
    HoleBounds,
    Measure,
    evaluation_bounds,
    resolve_preset,
)
from ..core.measures import check_cutoff, check_k_values, resolve_measures
from ..errors import InvalidArgumentError, InvalidPolicyError, UnknownMeasureError
from ..integration.documents import DocumentPath

_NAN = float("nan")


class _DocumentEvaluator:
    """Shared init, serialization and evaluation of every evaluator (not a component itself)."""

    def _setup(
        self,
        *,
        document_comparison_field: str,
        relevance_field: str,
        rank_by: str,
        preset: str,
        relevance_threshold: float | None,
        ignore_identical_ids: bool,
        no_relevant: str,
    ) -> None:
        self.document_comparison_field = document_comparison_field
        self.relevance_field = relevance_field
        self.rank_by = rank_by
        self.preset = preset
        self.relevance_threshold = relevance_threshold
        self.ignore_identical_ids = ignore_identical_ids
        self.no_relevant = no_relevant
        self._path = DocumentPath(document_comparison_field, relevance_field, rank_by)
        if not isinstance(preset, str):
            raise InvalidPolicyError(f"preset must be 'beir' or 'trec', got {preset!r}")
        # The one policy object the evaluations use (init parameters stay as given, for to_dict).
        self._policy = resolve_preset(
            preset,
            relevance_threshold=relevance_threshold,
            # List order is a RankedRun, which never ties; "stable" states it for any other policy reader.
            ties="stable" if rank_by == "order" else None,
            ignore_identical_ids=ignore_identical_ids,
            no_relevant=no_relevant,
        )
        if relevance_threshold is not None:  # valid by now; a numpy float would not serialize
            self.relevance_threshold = float(relevance_threshold)

    def _common_params(self) -> dict[str, Any]:
        return {
            "document_comparison_field": self.document_comparison_field,
            "relevance_field": self.relevance_field,
            "rank_by": self.rank_by,
            "preset": self.preset,
            "relevance_threshold": self.relevance_threshold,
            "ignore_identical_ids": self.ignore_identical_ids,
            "no_relevant": self.no_relevant,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """Deserialize the component from a dictionary made by :meth:`to_dict`."""
        return default_from_dict(cls, data)

    def _evaluate(
        self,
        ground_truth_documents: list[list[Document]],
        retrieved_documents: list[list[Document]],
        query_ids: list[str] | None,
        measures: Sequence[Measure],
        bounded: Sequence[Measure] = (),
        grade: float | None = None,
    ) -> tuple[list[str], EvaluationResult, HoleBounds | None]:
        """The query ids used (input order), the core's result and, for ``bounded`` measures, their hole bounds."""
        with _no_cycle_collection():
            batch = self._path.convert(ground_truth_documents, retrieved_documents, query_ids)
            qrels = batch.qrels if batch.judgments is None else batch.judgments
            evaluation = Evaluation(qrels, batch.results, self._policy)  # the batch prepared once
            result = evaluation.result(measures, None)
            bounds = None
            if bounded and grade is not None:
                bounds = evaluation_bounds(evaluation, bounded, None, grade=grade)
            del evaluation
            ids = batch.query_ids
            del batch  # the rankings' key list goes before a collection could walk it
        return ids, result, bounds


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause the cycle collector while a batch is converted and scored.

    Converting allocates one dict per query and one list of every retrieved key, nothing cyclic,
    but those allocations trigger collections that walk every live object (a batch holds hundreds
    of thousands of Documents), and the first collection after the batch would walk the key list,
    touching every key again: together a quarter of the time. The batch is freed inside, by
    reference counting, before the collector is back on.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _aligned(result: EvaluationResult, name: str, query_ids: list[str]) -> list[float]:
    """Per-query values of measure ``name`` in input order; ``nan`` for a query the mean leaves out."""
    parts = getattr(result.per_query, "parts", {}).get(name)
    per_query = result.per_query[name]
    if parts is not None and not parts[2] and parts[0] == query_ids:
        return list(per_query.values())  # every query scored, in input order: no lookups
    return [per_query.get(qid, _NAN) for qid in query_ids]


class _SingleMetricEvaluator(_DocumentEvaluator):
    """One metric at one cutoff; subclasses only name the metric family."""

    metric: ClassVar[str]

    def __init__(
        self,
        k: int = 10,
        document_comparison_field: str = "id",
        relevance_field: str = "score",
        rank_by: str = "order",
        preset: str = "beir",
        relevance_threshold: float | None = None,
        ignore_identical_ids: bool = False,
        no_relevant: str = "zero",
    ) -> None:
        """
        Create the evaluator. Every parameter is a plain JSON value.

        :param k: the cutoff: only the top ``k`` distinct retrieved documents count.
        :param document_comparison_field: how retrieved documents match ground-truth ones: ``"id"``
            (default), ``"content"``, or ``"meta.<key>"`` (e.g. ``"meta.corpus_id"`` when chunks were
            indexed; nested dicts by dotted path). Several retrieved documents with one key count once,
            at the first one's rank.
        :param relevance_field: where a ground-truth document's graded relevance is: ``"score"``
            (``Document.score``, default) or ``"meta.<key>"``. Without it a query's ground truth is binary.
        :param rank_by: ``"order"`` (default): rank by position in ``retrieved_documents``, as the pipeline
            returned them; ``"score"``: rank by ``Document.score`` (what BEIR ranks), ties as the preset says.
        :param preset: ``"beir"`` (default, beir 2.2.0's numbers) or ``"trec"`` (trec_eval's).
        :param relevance_threshold: relevance ``>=`` this counts as relevant for MAP, P, Recall, R_cap and
            MRR; ``None``: BEIR's rules (``>= 1``; MRR and R_cap ``> 0``). NDCG always uses the relevance as gain.
        :param ignore_identical_ids: drop retrieved documents whose key equals the query id (BEIR's
            ``ignore_identical_ids``, e.g. for ArguAna); off by default because query ids default to "0", "1", ...
        :param no_relevant: a query with judgments but no relevant document scores ``"zero"`` (default) or is
            left out (``"skip"``, individual score ``nan``).
        :raises InvalidCutoffError: if ``k`` is not a positive integer.
        :raises InvalidPolicyError: on an unknown field, ``rank_by``, ``preset`` or policy value.
        """
        self._measure = Measure(self.metric, k)
        self.k = check_cutoff(k)  # a plain int (a numpy one would not serialize)
        self._setup(
            document_comparison_field=document_comparison_field,
            relevance_field=relevance_field,
            rank_by=rank_by,
            preset=preset,
            relevance_threshold=relevance_threshold,
            ignore_identical_ids=ignore_identical_ids,
            no_relevant=no_relevant,
        )

    def to_dict(self) -> dict[str, Any]:
        """Serialize the component to a dictionary (init parameters only)."""
        return default_to_dict(self, k=self.k, **self._common_params())

    @component.output_types(score=float, individual_scores=list[float], per_query=dict[str, float])
    def run(
        self,
        ground_truth_documents: list[list[Document]],
        retrieved_documents: list[list[Document]],
        query_ids: list[str] | None = None,
    ) -> dict[str, Any]:
        """
        Score each query's retrieved documents against its ground truth.

        :param ground_truth_documents: one list of relevant documents per query (graded by
            ``relevance_field`` if they carry it).
        :param retrieved_documents: one list of retrieved documents per query, same order.
        :param query_ids: optional ids of the queries (unique str); default ``"0"``, ``"1"``, ...
        :returns: ``score``: the mean over the scored queries (unrounded; ``round(score, 5)`` is BEIR's
            figure); ``individual_scores``: one value per query in input order (``nan`` for a query left
            out, see the module docs); ``per_query``: ``{query_id: value}`` for the scored queries.
        :raises EmptyInputError: on empty inputs, or when no query has ground truth.
        :raises LengthMismatchError: when the lists (or ``query_ids``) hold different numbers of queries.
        :raises InvalidDocumentsError: when an input is not a list of ``Document`` lists.
        :raises InvalidIdError: when a document has no value to match on (names the position).
        :raises InvalidLabelError: on a ground-truth list mixing scored and unscored documents.
        :raises InvalidScoreError: with ``rank_by="score"`` when a retrieved document has no score.
        """
        used_ids, result, _ = self._evaluate(ground_truth_documents, retrieved_documents, query_ids, [self._measure])
        name = self._measure.name
        per_query = result.per_query[name]
        return {
            "score": result.raw_means[name],
            "individual_scores": _aligned(result, name, used_ids),
            "per_query": per_query,
        }


@component
class NDCGEvaluator(_SingleMetricEvaluator):
    """NDCG@k: DCG of the top k over the DCG of the query's k best judgments (linear gain, as BEIR / trec_eval)."""

    metric = "NDCG"


@component
class MAPEvaluator(_SingleMetricEvaluator):
    """MAP@k: average precision cut at k, divided by all relevant documents of the query (trec_eval ``map_cut``)."""

    metric = "MAP"


@component
class PrecisionEvaluator(_SingleMetricEvaluator):
    """P@k: relevant documents in the top k, divided by k (even when fewer were retrieved)."""

    metric = "P"


@component
class RecallEvaluator(_SingleMetricEvaluator):
    """Recall@k: relevant documents in the top k over all relevant documents of the query (not a hit rate)."""

    metric = "Recall"


@component
class RCapEvaluator(_SingleMetricEvaluator):
    """R_cap@k: relevant documents in the top k over min(all relevant documents, k) (BEIR's capped recall)."""

    metric = "R_cap"


@component
class MRREvaluator(_SingleMetricEvaluator):
    """MRR@k: reciprocal rank of the first relevant document within the top k, else 0."""

    metric = "MRR"


@component
class IRMetricsEvaluator(_DocumentEvaluator):
    """
    Several metrics at several cutoffs in one pass, keyed by BEIR's names (``NDCG@10``, ``P@5``, ...).

    Matching, graded relevance, ranking and query policies are those of the single-metric evaluators
    (:mod:`haystack_irmetrics.components.evaluators`). Turn the output into Haystack's report object with
    :func:`to_evaluation_run_result`.

    Usage::

        >>> from haystack import Document
        >>> from haystack_irmetrics.components import IRMetricsEvaluator
        >>> gold = [[Document(id="d1"), Document(id="d3")], [Document(id="d2", score=2.0)]]
        >>> retrieved = [
        ...     [Document(id="d1"), Document(id="d2"), Document(id="d3")],
        ...     [Document(id="d4"), Document(id="d2")],
        ... ]
        >>> out = IRMetricsEvaluator(metrics=["NDCG", "MRR"], k_values=[1, 3]).run(gold, retrieved)
        >>> out["means"]
        {'NDCG@1': 0.5, 'NDCG@3': 0.77533, 'MRR@1': 0.5, 'MRR@3': 0.75}
        >>> out["individual_scores"]["MRR@3"], out["query_ids"]
        ([1.0, 0.5], ['0', '1'])
    """

    def __init__(
        self,
        metrics: list[str] | None = None,
        k_values: list[int] | None = None,
        document_comparison_field: str = "id",
        relevance_field: str = "score",
        rank_by: str = "order",
        preset: str = "beir",
        relevance_threshold: float | None = None,
        ignore_identical_ids: bool = False,
        no_relevant: str = "zero",
        holes: bool = False,
        bounds_grade: float | None = None,
    ) -> None:
        """
        Create the evaluator. Every parameter is a plain JSON value.

        :param metrics: metric families (``"NDCG"``, ``"MAP"``, ``"P"``, ``"Recall"``, ``"R_cap"``,
            ``"MRR"``; aliases such as ``"precision"`` work), crossed with ``k_values``, and/or full names
            such as ``"P@5"``; ``None``: BEIR's six families.
        :param k_values: the cutoffs; ``None``: BEIR's ``[1, 3, 5, 10, 100, 1000]``.
        :param document_comparison_field: see :class:`NDCGEvaluator`.
        :param relevance_field: see :class:`NDCGEvaluator`.
        :param rank_by: see :class:`NDCGEvaluator`.
        :param preset: see :class:`NDCGEvaluator`.
        :param relevance_threshold: see :class:`NDCGEvaluator`.
        :param ignore_identical_ids: see :class:`NDCGEvaluator`.
        :param no_relevant: see :class:`NDCGEvaluator`.
        :param holes: also output ``holes``: ``Judged@k`` (the share of the top k with a ground-truth
            Document, of any score) and BEIR's ``Hole@k`` (the share no query of the batch has) at every k.
        :param bounds_grade: also output ``bounds``: for each metric with bounds (nDCG, MAP, P, Recall,
            R_cap, MRR, ...), the interval its mean lies in once every retrieved document without a
            ground-truth Document in a query's top k is judged 0 or this grade
            (:func:`haystack_irmetrics.core.bounds.hole_bounds`).
        :raises UnknownMeasureError: (or InvalidCutoffError, DuplicateCutoffError, InvalidPolicyError) on a bad
            parameter; also for a diversity measure (``alpha_nDCG``, ...), which needs judgments per subtopic.
        """
        # Kept as plain JSON values (the YAML stores them): a bare name is one measure, numpy ints are ints.
        if isinstance(metrics, str):
            metrics = [metrics]
        self.metrics = (
            None if metrics is None else [m if isinstance(m, str) else getattr(m, "name", m) for m in metrics]
        )
        self.k_values = None if k_values is None else check_k_values(k_values)
        self._measures = resolve_measures(self.metrics, list(DEFAULT_K_VALUES) if k_values is None else self.k_values)
        if diverse := [m.name for m in self._measures if m.spec.needs_subtopics]:
            raise UnknownMeasureError(
                f"{diverse[0]} reads judgments per subtopic, which ground-truth Documents do not carry: "
                "score it with evaluate() and SubtopicQrels, or irmetrics evaluate"
            )
        self._setup(
            document_comparison_field=document_comparison_field,
            relevance_field=relevance_field,
            rank_by=rank_by,
            preset=preset,
            relevance_threshold=relevance_threshold,
            ignore_identical_ids=ignore_identical_ids,
            no_relevant=no_relevant,
        )
        if not isinstance(holes, bool):
            raise InvalidArgumentError(f"holes must be true or false, got {holes!r}")
        self.holes = holes
        ks = list(DEFAULT_K_VALUES) if k_values is None else self.k_values
        self._hole_measures = resolve_measures(["Judged", "Hole"], ks) if holes else []
        self._bounded = [m for m in self._measures if m.spec.hole_bounds is not None]
        if bounds_grade is not None:
            number(bounds_grade, "bounds_grade", 0, closed="neither", finite=False)
            if not self._bounded:
                raise UnknownMeasureError(f"bounds_grade: none of the metrics {self.metrics} has hole bounds")
            bounds_grade = float(bounds_grade)
        self.bounds_grade = bounds_grade

    def to_dict(self) -> dict[str, Any]:
        """Serialize the component to a dictionary (init parameters only)."""
        return default_to_dict(
            self,
            metrics=self.metrics,
            k_values=self.k_values,
            **self._common_params(),
            holes=self.holes,
            bounds_grade=self.bounds_grade,
        )

    @component.output_types(
        means=dict[str, float],
        raw_means=dict[str, float],
        individual_scores=dict[str, list[float]],
        per_query=dict[str, dict[str, float]],
        query_ids=list[str],
        holes=dict[str, float],
        bounds=dict[str, dict[str, float]],
    )
    def run(
        self,
        ground_truth_documents: list[list[Document]],
        retrieved_documents: list[list[Document]],
        query_ids: list[str] | None = None,
    ) -> dict[str, Any]:
        """
        Compute every requested metric for a batch of queries.

        :param ground_truth_documents: one list of relevant documents per query.
        :param retrieved_documents: one list of retrieved documents per query, same order.
        :param query_ids: optional unique ids of the queries; default ``"0"``, ``"1"``, ...
        :returns: ``means``: ``{name: mean}`` rounded as the preset reports (BEIR: ``round(x, 5)``), i.e.
            exactly :func:`haystack_irmetrics.evaluate`'s ``means``; ``raw_means``: unrounded;
            ``individual_scores``: ``{name: [value per query in input order]}`` (``nan`` for a query left
            out); ``per_query``: ``{name: {query_id: value}}`` for the scored queries; ``query_ids``: the ids
            used, in input order; ``holes``: ``{"Judged@k": mean, "Hole@k": mean}`` when ``holes=True``, else
            ``{}``; ``bounds``: ``{name: {"value", "low", "high", "holes_relevant", "holes"}}`` when
            ``bounds_grade`` is set, else ``{}``.
        :raises IRMetricsError: as the single-metric evaluators' ``run``.
        """
        used_ids, result, bounds = self._evaluate(
            ground_truth_documents,
            retrieved_documents,
            query_ids,
            [*self._measures, *self._hole_measures],
            self._bounded,
            self.bounds_grade,
        )
        names = [m.name for m in self._measures]
        # Plain dicts (the core's are built lazily): pipeline snapshots and tracing serialize outputs.
        per_query = {name: result.per_query[name] for name in names}
        return {
            "means": {name: result.means[name] for name in names},
            "raw_means": {name: result.raw_means[name] for name in names},
            "individual_scores": {name: _aligned(result, name, used_ids) for name in per_query},
            "per_query": per_query,
            "query_ids": used_ids,
            "holes": {m.name: result.means[m.name] for m in self._hole_measures},
            "bounds": {} if bounds is None else bounds.to_dict()["measures"],
        }


def to_evaluation_run_result(output: dict[str, Any], run_name: str, inputs: dict[str, list[Any]] | None = None) -> Any:
    """
    Turn an :class:`IRMetricsEvaluator` output into a :class:`haystack.evaluation.EvaluationRunResult`.

    Each metric becomes one result (``{"score": raw mean, "individual_scores": [...]}``) named by its
    BEIR key, so ``aggregated_report()``, ``detailed_report()`` and ``comparative_detailed_report()``
    work as with Haystack's own evaluators.

    :param output: the dict returned by :meth:`IRMetricsEvaluator.run` (or a pipeline's output for it).
    :param run_name: the name of the run in the reports.
    :param inputs: the report's input columns, one value per query; default ``{"query_id": query_ids}``.
    :returns: an ``EvaluationRunResult``.

    Usage::

        >>> from haystack import Document
        >>> from haystack_irmetrics.components import IRMetricsEvaluator, to_evaluation_run_result
        >>> out = IRMetricsEvaluator(metrics=["NDCG@3", "Recall@3"]).run(
        ...     [[Document(id="d1")], [Document(id="d2")]], [[Document(id="d1")], [Document(id="d5")]]
        ... )
        >>> report = to_evaluation_run_result(out, "bm25").aggregated_report()
        >>> report
        {'metrics': ['NDCG@3', 'Recall@3'], 'score': [0.5, 0.5]}
    """
    needed = ("query_ids", "raw_means", "individual_scores")
    if not isinstance(output, Mapping) or any(key not in output for key in needed):
        got = sorted(output) if isinstance(output, Mapping) else type(output).__name__
        raise InvalidPolicyError(
            f"to_evaluation_run_result takes the output of IRMetricsEvaluator.run (with {', '.join(needed)}), "
            f"got {got}; from a pipeline's output, pass its evaluator's part, e.g. result['evaluator']"
        )
    n = len(output["query_ids"])
    unscored = [name for name in output["raw_means"] if name not in output["individual_scores"]]
    if unscored:
        raise InvalidPolicyError(f"output has raw_means but no individual_scores for {unscored}")
    if inputs is None:
        inputs = {"query_id": list(output["query_ids"])}
    if not isinstance(inputs, Mapping) or not inputs:
        raise InvalidPolicyError(
            f"inputs must be a non-empty dict {{column: [one value per query]}}, got {inputs!r:.80}"
        )
    wrong = [name for name, values in inputs.items() if not isinstance(values, list) or len(values) != n]
    if wrong:
        raise InvalidPolicyError(f"inputs {wrong} need a list of one value per query ({n}), as the scores have")
    results = {
        name: {"score": output["raw_means"][name], "individual_scores": output["individual_scores"][name]}
        for name in output["raw_means"]
    }
    from haystack.evaluation import EvaluationRunResult  # pandas: imported only for this conversion

    return EvaluationRunResult(run_name, inputs, results)


__all__ = [
    "IRMetricsEvaluator",
    "MAPEvaluator",
    "MRREvaluator",
    "NDCGEvaluator",
    "PrecisionEvaluator",
    "RCapEvaluator",
    "RecallEvaluator",
    "to_evaluation_run_result",
]
