"""Errors of the BEIR runner; every one is an :class:`~haystack_irmetrics.errors.IRMetricsError`."""

from __future__ import annotations

from ..errors import IRMetricsError


class DatasetError(IRMetricsError):
    """A BEIR dataset folder is incomplete or inconsistent (the message says what and where)."""


class DatasetNotFoundError(DatasetError):
    """A dataset name or path could not be resolved to a folder, nor downloaded."""


class MissingDocumentsError(DatasetError):
    """The qrels judge documents that are not in the corpus (so no retriever can find them)."""


class EmptyQueryError(DatasetError):
    """A query of the evaluated split has no text."""


class PipelineError(IRMetricsError):
    """A retrieval or indexing pipeline cannot be used for a BEIR run (bad YAML, wrong sockets, bad output)."""


class OutputError(IRMetricsError):
    """The output folder of a BEIR run cannot be written (checked before the run starts)."""


__all__ = [
    "DatasetError",
    "DatasetNotFoundError",
    "EmptyQueryError",
    "MissingDocumentsError",
    "OutputError",
    "PipelineError",
]
