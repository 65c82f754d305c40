"""haystack_irmetrics: exact, fast retrieval evaluation (BEIR's numbers, bit for bit) for Haystack.

``import haystack_irmetrics`` loads only numpy; Haystack components live in
``haystack_irmetrics.components`` and are imported on use.
"""

from .core import (
    BEIR,
    DEFAULT_K_VALUES,
    PRESETS,
    TREC,
    EvaluationResult,
    Measure,
    Preset,
    Qrels,
    Run,
    SubtopicQrels,
    evaluate,
    evaluate_chunks,
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
    "EvaluationResult",
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
    "parse_measure",
]
