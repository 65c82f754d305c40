"""Readers and writers for TREC and BEIR files."""

from .diversity import read_subtopic_qrels
from .trec import (
    evaluate_run_file,
    read_beir_qrels,
    read_qrels,
    read_run,
    read_trec_qrels,
    read_trec_run,
    write_qrels,
    write_trec_run,
)

__all__ = [
    "evaluate_run_file",
    "read_beir_qrels",
    "read_qrels",
    "read_run",
    "read_subtopic_qrels",
    "read_trec_qrels",
    "read_trec_run",
    "write_qrels",
    "write_trec_run",
]
