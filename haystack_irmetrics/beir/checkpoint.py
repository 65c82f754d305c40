"""Resumable BEIR runs: a run's configuration fingerprint and the retrieval checkpoint of one dataset.

**Configuration.** :func:`run_configuration` describes everything that decides a dataset's output
files: the dataset's files (size and SHA-256 of ``corpus.jsonl``, ``queries.jsonl`` and
``qrels/<split>.tsv``), the split, the pipeline's content (:func:`~haystack_irmetrics.beir.pipelines.pipeline_digest`),
the model, ``top_k``, the cutoffs, the chunking, the engine and the package version. It is stored in
``summary.json`` and in the checkpoint; :func:`differences` says, in words, what differs between two.
A file whose size and modification time are those recorded is not hashed again.

**Checkpoint.** While a dataset's queries run, :class:`Checkpoint` writes the retrieved documents of
every ``every`` queries to ``<output>/.partial/batch-NNNNNN.jsonl`` (one JSON line per query: its
``{corpus id: score}`` in the pipeline's order, exact floats), each file written to a temporary name
and renamed, so a kill leaves whole batches only. ``config.json`` holds the configuration and
``index.json`` what indexing found (documents indexed, pipeline source, models), so a run whose every
query is checkpointed does not index again. The output files are written from the same records
whether they came from the checkpoint or from the pipeline, so a resumed run writes the bytes an
uninterrupted one writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CheckpointError

#: Version of the configuration and checkpoint layout; a change makes older folders "another configuration".
FORMAT = 1
#: Name of a dataset output folder's checkpoint folder.
PARTIAL = ".partial"
#: Which retrieval engine ran (part of the configuration; other engines will name themselves).
ENGINE = "haystack-in-memory"
#: The engine of a run against stores filled beforehand (``--no-index``): their content is not fingerprinted.
EXTERNAL_ENGINE = "external-store"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through ``.<name>.tmp`` in the same folder and a rename (one writer per folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def dataset_files(folder: str | os.PathLike[str], split: str) -> dict[str, Path]:
    """The three files of a BEIR folder that a run reads, by their names relative to the folder."""
    root = Path(folder)
    return {
        "corpus.jsonl": root / "corpus.jsonl",
        "queries.jsonl": root / "queries.jsonl",
        f"qrels/{split}.tsv": root / "qrels" / f"{split}.tsv",
    }


def file_identity(path: Path, previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``{"size", "mtime_ns", "sha256"}`` of a file; the hash of ``previous`` is reused when its size
    and modification time are the file's (so an unchanged multi-GB corpus is not read again)."""
    stat = path.stat()
    if (
        previous
        and previous.get("size") == stat.st_size
        and previous.get("mtime_ns") == stat.st_mtime_ns
        and previous.get("sha256")
    ):
        return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": previous["sha256"]}
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest.hexdigest()}


def run_configuration(
    *,
    folder: str | os.PathLike[str] | None,
    split: str,
    retriever: str | os.PathLike[str],
    pipeline_sha256: str,
    model: str | None,
    top_k: int | None,
    k_values: Sequence[int],
    chunk_words: int | None,
    chunk_overlap: int,
    queries_sha256: str | None = None,
    engine: str | None = None,
    previous: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The configuration of one dataset's run, as ``summary.json`` and the checkpoint record it.

    :param folder: the dataset folder (its files are identified), or ``None`` for a dataset built in memory.
    :param queries_sha256: a hash of the query ids, for a dataset given as an object (it may be a subset).
    :param engine: what holds the index (default :data:`ENGINE`; :data:`EXTERNAL_ENGINE` with ``--no-index``).
    :param previous: a recorded configuration whose file hashes are reused for unchanged files.
    """
    from .. import __version__

    old_files = ((previous or {}).get("dataset") or {}).get("files") or {}
    files = (
        {name: file_identity(path, old_files.get(name)) for name, path in dataset_files(folder, split).items()}
        if folder is not None
        else None
    )
    return {
        "format": FORMAT,
        "package_version": __version__,
        "engine": engine or ENGINE,
        "dataset": {"split": split, "files": files, "queries_sha256": queries_sha256},
        "pipeline": {"retriever": os.fspath(retriever), "sha256": pipeline_sha256},
        "model": model,
        "top_k": top_k,
        "k_values": list(k_values),
        "chunk_words": chunk_words,
        "chunk_overlap": chunk_overlap if chunk_words else None,
    }


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


_WHAT = {
    "pipeline.sha256": "the pipeline's content (YAML or its indexing pipeline)",
    "pipeline.retriever": "the retriever",
    "dataset.queries_sha256": "the queries",
}


def differences(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[str]:
    """What differs between two configurations, in words (modification times alone are no difference)."""
    if not old:
        return ["the folder was written without a configuration (by an older version, or not by irmetrics beir)"]
    a = {k: v for k, v in _flat(old).items() if not k.endswith(".mtime_ns")}
    b = {k: v for k, v in _flat(new).items() if not k.endswith(".mtime_ns")}
    out: list[str] = []
    seen_files: set[str] = set()
    for key in dict.fromkeys([*a, *b]):
        if a.get(key) == b.get(key):
            continue
        if key.startswith("dataset.files."):
            name = key[len("dataset.files.") :].rsplit(".", 1)[0]
            if name not in seen_files:
                seen_files.add(name)
                out.append(f"dataset file {name} changed")
            continue
        what = _WHAT.get(key, key)
        if key.endswith("sha256"):
            out.append(f"{what} changed")
        else:
            out.append(f"{what} was {a.get(key)!r}, now {b.get(key)!r}")
    return out


@dataclass(frozen=True)
class QueryRecord:
    """What a query retrieved: ``{corpus id: score}`` in the pipeline's order, chunks merged into an
    earlier chunk of the same document, and whether the pipeline's scores were sorted."""

    ranked: dict[str, float]
    merged: int
    is_sorted: bool


class Checkpoint:
    """The retrieval checkpoint of one dataset: ``<output>/.partial/`` (see the module docstring).

    :param folder: the ``.partial`` folder.
    :param configuration: the run's configuration (:func:`run_configuration`).
    :param every: queries per batch file.
    """

    def __init__(self, folder: str | os.PathLike[str], configuration: Mapping[str, Any], every: int = 100) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise CheckpointError(f"checkpoint_every must be a positive integer, got {every!r}")
        self.folder = Path(folder)
        self.configuration = dict(configuration)
        self.every = every
        self._pending: list[str] = []
        self._batches = 0

    def recorded_configuration(self) -> dict[str, Any] | None:
        """The configuration the checkpoint was made with, or ``None`` when there is no checkpoint."""
        path = self.folder / "config.json"
        if not path.is_file():
            return None
        return _read_json(path)

    def load(self) -> dict[str, QueryRecord]:
        """The checkpointed queries (creating the folder and ``config.json`` when they are absent)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if not (self.folder / "config.json").is_file():
            write_atomic(self.folder / "config.json", json.dumps(self.configuration, indent=2) + "\n")
        done: dict[str, QueryRecord] = {}
        batches = sorted(self.folder.glob("batch-*.jsonl"))
        for path in batches:
            for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    row = json.loads(line)
                    done[row["q"]] = QueryRecord({str(d): float(s) for d, s in row["d"]}, int(row["m"]), bool(row["s"]))
                except (ValueError, KeyError, TypeError) as e:
                    raise CheckpointError(
                        f"{path}, line {lineno}: not a checkpoint record ({e}); delete {self.folder} or pass "
                        "--overwrite to start this dataset over"
                    ) from None
        self._batches = len(batches)
        return done

    def index_state(self) -> dict[str, Any] | None:
        """What indexing recorded (``n_indexed``, ``pipeline_source``, ``models``), or ``None``."""
        path = self.folder / "index.json"
        return _read_json(path) if path.is_file() else None

    def save_index_state(self, state: Mapping[str, Any]) -> None:
        write_atomic(self.folder / "index.json", json.dumps(dict(state), indent=2) + "\n")

    def add(self, qid: str, record: QueryRecord) -> None:
        """Record a retrieved query; every ``every`` queries make a batch file."""
        self._pending.append(
            json.dumps(
                {"q": qid, "d": [[d, s] for d, s in record.ranked.items()], "m": record.merged, "s": record.is_sorted}
            )
        )
        if len(self._pending) >= self.every:
            self.flush()

    def flush(self) -> None:
        """Write the pending queries as the next batch file."""
        if not self._pending:
            return
        write_atomic(self.folder / f"batch-{self._batches:06d}.jsonl", "\n".join(self._pending) + "\n")
        self._batches += 1
        self._pending = []

    def remove(self) -> None:
        """Delete the checkpoint (the dataset's outputs are written)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise CheckpointError(f"cannot read {path} ({e}); pass --overwrite to start this dataset over") from None
    if not isinstance(value, dict):
        raise CheckpointError(f"{path} is not a JSON object; pass --overwrite to start this dataset over")
    return value


__all__ = [
    "ENGINE",
    "FORMAT",
    "PARTIAL",
    "Checkpoint",
    "QueryRecord",
    "dataset_files",
    "differences",
    "file_identity",
    "run_configuration",
    "write_atomic",
]
