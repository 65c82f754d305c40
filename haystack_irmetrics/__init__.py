"""haystack_irmetrics: exact, fast retrieval evaluation (BEIR's numbers, bit for bit) for Haystack.

``import haystack_irmetrics`` loads only numpy; Haystack components live in
``haystack_irmetrics.components`` and are imported on use.

Its parts, bottom to top as docs/architecture.md draws the layers (a part imports only parts below it):

- :mod:`.errors`: every exception, warning and internal signal of the package;
- :mod:`.checks`: the one vocabulary of value checks (a whole number, a number in a range, a choice, a registry's
  parameter), every refusal in one shape;
- :mod:`._settings`: a job's frozen settings built from its function's keywords, an unknown keyword refused;
- :mod:`._lazy`: a package's names loaded on first use;
- :mod:`._extras`: the extra to install for a missing optional library, named in a ``MissingDependencyError``;
- :mod:`.core`: the measures computed from numpy arrays exactly as BEIR and trec_eval compute them (this package
  gives :func:`evaluate` and the names around it);
- :mod:`.io` and :mod:`.stats`: files (TREC and BEIR qrels and runs, logs, tables, outputs written whole) and
  statistics (paired tests, intervals, Holm, rank correlations, prediction-powered intervals, topic set size);
- :mod:`.plots`: figures drawn with matplotlib;
- :mod:`.ir_measures`: the core as an ir_measures provider;
- :mod:`.integration`: what every part that runs Haystack shares: pipelines loaded and fed, Documents to runs, a
  corpus to Documents, the document stores this package ships;
- :mod:`.compare`, :mod:`.fusion` and :mod:`.pooling`: runs against a baseline; runs fused into one; which pairs
  to judge for a budget;
- :mod:`.clicks` and :mod:`.judges`: labels from click logs, through click models, and interleaving; labels from
  a model for the holes;
- :mod:`.beir`, :mod:`.feedback`, :mod:`.assess` and :mod:`.usefulness`: BEIR benchmarks through Haystack
  pipelines; production feedback logs to judgments to scores; people's labels on a judging page served on
  127.0.0.1; labels from what a RAG pipeline's generator answers from each document;
- :mod:`.components`: the Haystack components (evaluators, feedback, the judge, the interleaving joiner);
- :mod:`.report`: one HTML page comparing any number of runs, and its exports;
- :mod:`.cli`: the ``irmetrics`` command.
"""

from .core import (
    BEIR,
    DEFAULT_K_VALUES,
    PRESETS,
    TREC,
    Evaluation,
    EvaluationResult,
    HoleBounds,
    Measure,
    Preset,
    Qrels,
    Run,
    SubtopicQrels,
    evaluate,
    evaluate_chunks,
    hole_bounds,
    parse_measure,
)
from .errors import (
    DuplicateCutoffError,
    DuplicateDocumentError,
    EmptyInputError,
    InvalidArgumentError,
    InvalidCutoffError,
    InvalidDocumentsError,
    InvalidIdError,
    InvalidLabelError,
    InvalidPolicyError,
    InvalidScoreError,
    IRMetricsError,
    LengthMismatchError,
    MissingDependencyError,
    NoOverlapError,
    ParseError,
    SplitQueryError,
    UnknownMeasureError,
)

__version__ = "0.1.0"

__all__ = [
    "BEIR",
    "DEFAULT_K_VALUES",
    "PRESETS",
    "TREC",
    "DuplicateCutoffError",
    "DuplicateDocumentError",
    "EmptyInputError",
    "Evaluation",
    "EvaluationResult",
    "HoleBounds",
    "IRMetricsError",
    "InvalidArgumentError",
    "InvalidCutoffError",
    "InvalidDocumentsError",
    "InvalidIdError",
    "InvalidLabelError",
    "InvalidPolicyError",
    "InvalidScoreError",
    "LengthMismatchError",
    "Measure",
    "MissingDependencyError",
    "NoOverlapError",
    "ParseError",
    "Preset",
    "Qrels",
    "Run",
    "SplitQueryError",
    "SubtopicQrels",
    "UnknownMeasureError",
    "__version__",
    "evaluate",
    "evaluate_chunks",
    "hole_bounds",
    "parse_measure",
]
