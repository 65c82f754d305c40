"""BEIR benchmarks through Haystack pipelines (``irmetrics beir``, ``irmetrics compare``).

:func:`run_beir` indexes a BEIR corpus with a Haystack indexing pipeline, runs every query through a
Haystack retrieval pipeline (BM25, dense, hybrid or your YAML), keeps each corpus id's best-ranked
chunk with the pipeline's score, and evaluates the resulting ``{qid: {doc_id: score}}`` exactly as
BEIR's ``EvaluateRetrieval.evaluate`` + ``evaluate_custom`` (MRR, R_cap) would.

- :mod:`.dataset`: BEIR datasets in the layout BEIR's ``GenericDataLoader`` reads (:func:`load_beir`, the same
  result, a clear error where it would crash or lose data), the named ones and where they are found;
- :mod:`.pipelines`: the retrieval and indexing pipelines of a run, built in or loaded from YAML, with their
  ``metadata.irmetrics`` block and their indexes private to the run (:class:`BeirPipelines`);
- :mod:`._builtin`: the built-in pipelines as dicts, the same as ``pipelines/beir_*.yaml``, for an installed
  package without that folder;
- :mod:`.specs`: a pipeline's spec rewritten before it loads: private indexes, each embedder's model, device,
  precision and batch size;
- :mod:`.models`: the embedding models: where a name resolves to, its vector size, loading it at first use;
- :mod:`.devices`: where and how the embedders compute (``--device``, ``--precision``, ``--batch-size``),
  written into their own init parameters;
- :mod:`.dense`: the dense path: the corpus embedded, cached and indexed as a bounded pipeline of threads, and
  batches of queries ranked without a Document per hit;
- :mod:`.cache`: the corpus and query embedding cache under ``$IRMETRICS_CACHE_DIR``, and the batched query
  embedding;
- :mod:`.cache_admin`: ``irmetrics cache list|clear``: the cache listed and cleared without trusting what is on
  disk (nothing deleted that this package did not write);
- :mod:`.lazy_torch`: Haystack imported without torch, and the embedders without sentence-transformers and
  torch until a model loads;
- :mod:`.settings`: a run's configuration as one frozen value (:class:`BeirSettings`), its fingerprint in
  ``summary.json`` and the checkpoint;
- :mod:`.runner`: one dataset run in its phases, load, index, retrieve, evaluate, and its outputs written
  (:func:`run_beir`, :func:`run_dataset`, :class:`BeirRun`);
- :mod:`.checkpoint`: the configuration fingerprint and the retrieval checkpoint a run resumes from;
- :mod:`.outputs`: the output folder written safely: one run per folder, whole files only;
- :mod:`.progress`: the bars, and each phase's wall time and peak memory;
- :mod:`.suite`: several datasets in one run, resumable, with one leaderboard (:func:`run_beir_suite`,
  :class:`SuiteSteps`);
- :mod:`.leaderboard`: each dataset's numbers, their average and the published references (``references.json``);
- :mod:`.bm25s_store` and :mod:`.faiss_store`: the stores' old import paths, which pipeline YAMLs store; the
  stores live in :mod:`haystack_irmetrics.integration.stores`.

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
