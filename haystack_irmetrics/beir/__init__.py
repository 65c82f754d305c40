"""BEIR benchmarks through Haystack pipelines (``irmetrics beir``, ``irmetrics compare``).

:func:`run_beir` indexes a BEIR corpus with a Haystack indexing pipeline, runs every query through a
Haystack retrieval pipeline (BM25, dense, hybrid or your YAML), keeps each corpus id's best-ranked
chunk with the pipeline's score, and evaluates the resulting ``{qid: {doc_id: score}}`` exactly as
BEIR's ``EvaluateRetrieval.evaluate`` + ``evaluate_custom`` (MRR, R_cap) would.

Importing this package imports neither Haystack nor beir; they are imported when a run needs them.
"""

from ..compare import CompareResult, RunsComparison, SuiteComparison, compare_many, compare_runs, compare_suites
from ..errors import (
    CheckpointError,
    ConfigurationChangedError,
    DatasetError,
    DatasetNotFoundError,
    EmptyQueryError,
    MissingDocumentsError,
    OutputError,
    PipelineError,
)
from .dataset import BEIR_DATASETS, BeirDataset, default_data_dir, load_beir, resolve_dataset, sample_path
from .leaderboard import Leaderboard, build_leaderboard
from .pipelines import BeirPipelines, corpus_documents, load_beir_pipelines, pipelines_dir, resolve_model
from .runner import DEFAULT_TOP_K, BeirRun, run_beir, run_dataset
from .settings import BeirSettings
from .suite import SuiteResult, SuiteSteps, run_beir_suite, run_suite

__all__ = [
    "BEIR_DATASETS",
    "DEFAULT_TOP_K",
    "BeirDataset",
    "BeirPipelines",
    "BeirRun",
    "BeirSettings",
    "CheckpointError",
    "CompareResult",
    "ConfigurationChangedError",
    "DatasetError",
    "DatasetNotFoundError",
    "EmptyQueryError",
    "Leaderboard",
    "MissingDocumentsError",
    "OutputError",
    "PipelineError",
    "RunsComparison",
    "SuiteComparison",
    "SuiteResult",
    "SuiteSteps",
    "build_leaderboard",
    "compare_many",
    "compare_runs",
    "compare_suites",
    "corpus_documents",
    "default_data_dir",
    "load_beir",
    "load_beir_pipelines",
    "pipelines_dir",
    "resolve_dataset",
    "resolve_model",
    "run_beir",
    "run_beir_suite",
    "run_dataset",
    "run_suite",
    "sample_path",
]
