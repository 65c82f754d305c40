"""Haystack components: exact BEIR / trec_eval retrieval metrics at a cutoff k.

- :mod:`.evaluators`: BEIR's six measures as single-metric evaluators on the contract of Haystack's
  ``Document*Evaluator``, and :class:`IRMetricsEvaluator` (several measures and cutoffs in one pass), its output
  turned into Haystack's ``EvaluationRunResult`` by :func:`to_evaluation_run_result`;
- :mod:`.feedback`: ``FeedbackToGoldDocuments``, feedback rows into each query's gold documents with graded
  scores, and the ranking the users saw;
- :mod:`.judge`: :class:`RelevanceJudge`, a model grading (query, document) pairs where no person judged (its
  logic in :mod:`haystack_irmetrics.judges`), and the judge of a pipeline YAML (``load_judge``);
- :mod:`.usefulness`: :class:`UsefulnessEvaluator`, each retrieved document labelled by what the RAG pipeline's
  generator answers from it alone, and the rankings scored on those labels (its logic in
  :mod:`haystack_irmetrics.usefulness`);
- :mod:`.interleaving`: :class:`InterleavingJoiner`, two retrievers' results interleaved into the one list a user
  sees, each Document marked with the team that placed it.

Module paths here are public: serialized pipelines store them. Importing this package imports Haystack;
``import haystack_irmetrics`` alone does not.
"""

from ..errors import InvalidDocumentsError
from ..integration.loading import load_pipeline
from .evaluators import (
    IRMetricsEvaluator,
    MAPEvaluator,
    MRREvaluator,
    NDCGEvaluator,
    PrecisionEvaluator,
    RCapEvaluator,
    RecallEvaluator,
    to_evaluation_run_result,
)
from .interleaving import InterleavingJoiner
from .judge import RelevanceJudge
from .usefulness import UsefulnessEvaluator

__all__ = [
    "IRMetricsEvaluator",
    "InterleavingJoiner",
    "InvalidDocumentsError",
    "MAPEvaluator",
    "MRREvaluator",
    "NDCGEvaluator",
    "PrecisionEvaluator",
    "RCapEvaluator",
    "RecallEvaluator",
    "RelevanceJudge",
    "UsefulnessEvaluator",
    "load_pipeline",
    "to_evaluation_run_result",
]
