"""Readers and writers for TREC and BEIR files.

One reader and one writer per format, and what every reader and writer of the package shares:

- :mod:`.trec`: TREC qrels and runs and BEIR's qrels TSV: their readers, and the one writer of each format
  (:func:`write_trec_run`, :func:`write_qrels` in BEIR's layout or TREC's), what they write read back as it was;
- :mod:`._fast`: the streaming fast path of a TREC run file with polars (the ``columnar`` extra), which gives up
  to the line-by-line reader on anything it does not take as is;
- :mod:`.diversity`: TREC's diversity qrels, ``query subtopic doc label``, as ndeval reads them
  (:func:`read_subtopic_qrels`);
- :mod:`.beir_data`: BEIR's dataset files (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``) as BEIR's
  ``GenericDataLoader`` reads them, and the one JSONL reader;
- :mod:`.answers`: reference answers, one JSONL object per question (``irmetrics usefulness --answers``);
- :mod:`.beir_outputs`: the folders ``irmetrics beir --output`` writes, read back: the dataset a run was made
  from, and the one qrels file several runs can be scored on;
- :mod:`.logs`: the one log reader (CSV/TSV, JSONL, Parquet or a table) in bounded batches with an error policy,
  its column roles a parameter;
- :mod:`.log_columns`: those roles, the columns a log names for them, and raw columns validated into the
  canonical ones (polars);
- :mod:`.text`: opening and reading text files: decoding errors and truncated gzip named with file and line,
  every line under the limit;
- :mod:`.limits`: that limit on one line of an input file (1 MiB, ``IRMETRICS_MAX_LINE_BYTES``);
- :mod:`.tables`: how results print as JSON, tsv and markdown, the one JSON writer and the one CSV writer;
- :mod:`.output`: files written whole or not at all, the check that no output replaces an input
  (:class:`~.output.Paths`), and the lock of an output folder;
- :mod:`.run_names`: what a run is called: the one ``[NAME=]RUN`` syntax and the one name of an unnamed run;
- :mod:`.progress`: the one progress bar of every long job (tqdm on stderr, by default only when stderr is a
  terminal; ``--no-progress`` turns it off).
"""

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
