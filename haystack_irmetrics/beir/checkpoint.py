"""Resumable BEIR runs: a run's configuration fingerprint and the retrieval checkpoint of one dataset.

**Configuration.** :func:`run_configuration` describes everything that decides a dataset's output
files: the dataset's files (size and SHA-256 of ``corpus.jsonl``, ``queries.jsonl`` and
``qrels/<split>.tsv``), the split, the pipeline's content (:func:`~haystack_irmetrics.beir.pipelines.pipeline_digest`),
the model, ``top_k``, the cutoffs, the chunking, the engine and the package version. It is stored in
``summary.json`` and in the checkpoint; :func:`differences` says, in words, what differs between two.
A file whose size and modification time are those recorded is not hashed again.

**Checkpoint.** While a dataset's queries run, :class:`Checkpoint` writes the retrieved documents of
every ``every`` queries to ``<output>/.partial/batch-NNNNNN.jsonl`` (one JSON line per query: its
corpus ids in the pipeline's order and their scores as exact float64 bytes, :func:`record_line`), each file written to a temporary name
and renamed, so a kill leaves whole batches only. ``config.json`` holds the configuration and
``index.json`` what indexing found (documents indexed, pipeline source, models), so a run whose every
query is checkpointed does not index again, the SHA-256 of ``config.json`` and the name and SHA-256
of every batch. The output files are written from the same records whether they came from the
checkpoint or from the pipeline, so a resumed run writes the bytes an uninterrupted one writes.

**Nothing is trusted unchecked.** Resuming reads only the batches ``index.json`` lists, each
matching its digest; every record must be well formed, name a query of the dataset once in the whole
checkpoint and documents of the corpus once each, with finite scores. Anything else (a stray or
edited batch file, a tampered ``index.json``, a checkpoint copied from another folder) stops the run
with a :class:`~haystack_irmetrics.errors.CheckpointError` naming the file and line, and
``--overwrite`` discards the checkpoint.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections.abc import Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..checks import whole
from ..errors import CheckpointError, shorten
from ..io.tables import json_text
from .outputs import make_folder, remove_tree, write_atomic

#: Version of the configuration and checkpoint layout; a change makes older folders "another configuration".
FORMAT = 1
#: Name of a dataset output folder's checkpoint folder.
PARTIAL = ".partial"
#: Which retrieval engine ran (part of the configuration; other engines will name themselves).
ENGINE = "haystack-in-memory"
#: The engine of a run against stores filled beforehand (``--no-index``): their content is not fingerprinted.
EXTERNAL_ENGINE = "external-store"


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
    settings: Any,
    folder: str | os.PathLike[str] | None,
    split: str,
    pipeline_sha256: str,
    *,
    queries_sha256: str | None = None,
    previous: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The configuration of one dataset's run with ``settings``, as ``summary.json`` and the checkpoint record it:
    the package version, the engine (:data:`EXTERNAL_ENGINE` with ``no_index``, else :data:`ENGINE`), the
    dataset's files, the pipeline, the model, ``top_k``, the cutoffs, the chunking, and the embedders'
    ``batch_size`` and ``precision`` when set (they change the last bits of the vectors; recorded only when set,
    so that a configuration without them reads as before: an absent key and ``None`` are no difference).

    :param settings: a :class:`~haystack_irmetrics.beir.settings.BeirSettings` (not imported here: it imports
        this module).
    :param folder: the dataset folder (its files are identified), or ``None`` for a dataset built in memory.
    :param pipeline_sha256: the pipeline's content (:func:`~haystack_irmetrics.beir.pipelines.pipeline_digest`).
    :param queries_sha256: a hash of the query ids, for a dataset given as an object (it may be a subset).
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
        "engine": EXTERNAL_ENGINE if settings.no_index else ENGINE,
        "dataset": {"split": split, "files": files, "queries_sha256": queries_sha256},
        "pipeline": {"retriever": os.fspath(settings.retriever), "sha256": pipeline_sha256},
        "model": settings.model,
        "top_k": settings.top_k,
        "k_values": list(settings.k_values),
        "chunk_words": settings.chunk_words,
        "chunk_overlap": settings.chunk_overlap if settings.chunk_words else None,
        **({"batch_size": settings.batch_size} if settings.batch_size is not None else {}),
        **({"precision": settings.precision} if settings.precision is not None else {}),
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


#: What a damaged or foreign checkpoint's error tells the user to do.
START_OVER = "pass --overwrite (overwrite=True) to discard the checkpoint and start this dataset over"
_BATCH_NAME = re.compile(r"batch-[0-9]{6}\.jsonl")


class Checkpoint:
    """The retrieval checkpoint of one dataset: ``<output>/.partial/`` (see the module docstring).

    :param folder: the ``.partial`` folder.
    :param configuration: the run's configuration (:func:`run_configuration`).
    :param every: queries per batch file.
    """

    def __init__(self, folder: str | os.PathLike[str], configuration: Mapping[str, Any], every: int = 100) -> None:
        whole(every, "checkpoint_every", least=1, error=CheckpointError)
        self.folder = Path(folder)
        self.configuration = dict(configuration)
        self.every = every
        self._pending: list[str] = []
        self._batches = 0
        self._digests: dict[str, str] = {}  # batch file name -> SHA-256, as index.json lists them
        self._state: dict[str, Any] | None = None

    def recorded_configuration(self) -> dict[str, Any] | None:
        """The configuration the checkpoint was made with, or ``None`` when there is no checkpoint."""
        path = self.folder / "config.json"
        if not path.is_file():
            return None
        return _read_json(path)

    def load(
        self, queries: Collection[str] | None = None, corpus: Collection[str] | None = None
    ) -> dict[str, QueryRecord]:
        """The checkpointed queries (creating the folder and ``config.json`` when they are absent),
        each batch checked before it is trusted.

        :param queries: the dataset's query ids: a checkpointed query must be one of them.
        :param corpus: the corpus ids: a checkpointed document must be one of them (``None``: not checked,
            e.g. a store filled beforehand may hold more).
        :raises CheckpointError: naming the file (and line) when ``index.json`` or a batch is damaged,
            was not written with this configuration, is not listed in ``index.json``, does not match its
            recorded digest, or names an unknown or repeated query or document.
        """
        make_folder(self.folder)
        config = self.folder / "config.json"
        if not config.is_file():
            write_atomic(config, json_text(self.configuration, indent=2) + "\n")
        index = self._read_index()
        listed = dict(index["batches"]) if index is not None else {}
        on_disk = {p.name for p in self.folder.glob("batch-*")}
        unlisted = sorted(on_disk - set(listed))
        if unlisted:
            raise CheckpointError(
                f"{self.folder / unlisted[0]} is not a batch this checkpoint's index.json lists "
                f"({len(unlisted)} such file(s)); {START_OVER}"
            )
        done: dict[str, QueryRecord] = {}
        where: dict[str, str] = {}
        known = _id_set(corpus)
        for name in sorted(listed):
            path = self.folder / name
            if not path.exists():  # killed between writing index.json and the batch: retrieve them again
                del listed[name]
                continue
            done.update(self._read_batch(path, listed[name], queries, known, where))
        self._digests = listed
        self._batches = max((int(n[6:12]) + 1 for n in listed), default=0)
        return done

    def _read_index(self) -> dict[str, Any] | None:
        path = self.folder / "index.json"
        if not path.is_file():
            self._state = None
            return None
        value = _read_json(path)
        try:
            expected = _sha256((self.folder / "config.json").read_bytes())
        except OSError as e:
            raise CheckpointError(f"cannot read {self.folder / 'config.json'} ({e}); {START_OVER}") from None
        batches = value.get("batches")
        if value.get("configuration_sha256") != expected:
            raise CheckpointError(f"{path} was not written with this checkpoint's config.json; {START_OVER}")
        if not isinstance(batches, dict) or not all(
            isinstance(n, str) and _BATCH_NAME.fullmatch(n) and isinstance(d, str) and len(d) == 64
            for n, d in batches.items()
        ):
            raise CheckpointError(f"{path}: 'batches' is not a list of batch files and digests; {START_OVER}")
        self._state = _index_state(value.get("index"), path)
        return value

    def _read_batch(
        self,
        path: Path,
        digest: str,
        queries: Collection[str] | None,
        known: AbstractSet[str] | None,
        where: dict[str, str],
    ) -> dict[str, QueryRecord]:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CheckpointError(f"cannot read {path} ({e.strerror or e}); {START_OVER}") from None
        if _sha256(data) != digest:
            raise CheckpointError(f"{path} is not the batch index.json recorded (its SHA-256 differs); {START_OVER}")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data[: e.start].count(b"\n") + 1
            raise CheckpointError(f"{path}, line {line}: not UTF-8; {START_OVER}") from None
        out: dict[str, QueryRecord] = {}
        for lineno, line in enumerate(text.splitlines(), 1):
            at = f"{path}, line {lineno}"
            qid, record = _parse_record(line, at)
            if queries is not None and qid not in queries:
                raise CheckpointError(f"{at}: query {shorten(qid)!r} is not a query of this dataset; {START_OVER}")
            if qid in where:
                raise CheckpointError(
                    f"{at}: query {shorten(qid)!r} is checkpointed twice (also {where[qid]}); {START_OVER}"
                )
            where[qid] = at
            if known is not None and not record.ranked.keys() <= known:  # one C-level pass per query
                unknown = next(d for d in record.ranked if d not in known)
                raise CheckpointError(
                    f"{at}: document {shorten(unknown)!r} of query {shorten(qid)!r} is not in the corpus; {START_OVER}"
                )
            out[qid] = record
        return out

    def index_state(self) -> dict[str, Any] | None:
        """What indexing recorded (``n_indexed``, ``pipeline_source``, ``models``), or ``None``; read by :meth:`load`."""
        return dict(self._state) if self._state is not None else None

    def save_index_state(self, state: Mapping[str, Any]) -> None:
        self._state = dict(state)
        self._write_index()

    def _write_index(self) -> None:
        config = (self.folder / "config.json").read_bytes()
        index = {"configuration_sha256": _sha256(config), "index": self._state, "batches": self._digests}
        write_atomic(self.folder / "index.json", json_text(index, indent=2) + "\n")

    def add(self, qid: str, record: QueryRecord) -> None:
        """Record a retrieved query; every ``every`` queries make a batch file."""
        self._pending.append(record_line(qid, list(record.ranked), list(record.ranked.values()), record.merged,
                                         record.is_sorted))  # fmt: skip
        if len(self._pending) >= self.every:
            self.flush()

    def flush(self) -> None:
        """Write the pending queries as the next batch file: its digest goes to ``index.json`` first, so
        a kill in between leaves a listed batch that is absent (retrieved again), never an unlisted one."""
        if not self._pending:
            return
        name = f"batch-{self._batches:06d}.jsonl"
        text = "\n".join(self._pending) + "\n"
        self._digests[name] = _sha256(text.encode("utf-8"))
        self._write_index()
        write_atomic(self.folder / name, text)
        self._batches += 1
        self._pending = []

    def remove(self) -> None:
        """Delete the checkpoint (the dataset's outputs are written, or ``overwrite`` starts it over); a
        symbolic link is removed, never followed.

        :raises OutputError: when it cannot be deleted.
        """
        remove_tree(self.folder)


def _id_set(ids: Collection[str] | None) -> AbstractSet[str] | None:
    """``ids`` as something a ``dict``'s keys compare with (``<=``) in one C-level pass: a mapping's keys."""
    if ids is None or isinstance(ids, AbstractSet):
        return ids
    return ids.keys() if isinstance(ids, Mapping) else set(ids)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _index_state(value: Any, path: Path) -> dict[str, Any]:
    """The indexing state of ``index.json``, checked field by field."""
    ok = (
        isinstance(value, dict)
        and type(value.get("n_indexed")) is int
        and value["n_indexed"] >= 1
        and isinstance(value.get("pipeline_source"), str)
        and isinstance(value.get("models"), list)
        and all(isinstance(m, str) for m in value["models"])
        and (
            value.get("embedding_cache") is None
            or (
                isinstance(value["embedding_cache"], dict)
                and all(type(value["embedding_cache"].get(k)) is int for k in ("hits", "misses"))
            )
        )
    )
    if not ok:
        raise CheckpointError(
            f"{path}: 'index' is not what indexing records (n_indexed, pipeline_source, models); {START_OVER}"
        )
    return value


def record_line(qid: str, ids: Sequence[str], scores: Sequence[float], merged: int, is_sorted: bool) -> str:
    """One checkpoint line: ``{"q": query id, "d": [corpus id, ...], "x": the scores, "m": merged, "s":
    sorted}``, the scores as little-endian float64 bytes in base64: exact, and a fifth of the time
    ``repr`` takes to write a thousand floats as JSON numbers (the checkpoint is written per query)."""
    x = base64.b64encode(np.asarray(scores, dtype="<f8").tobytes()).decode("ascii")
    return json_text({"q": qid, "d": list(ids), "x": x, "m": merged, "s": is_sorted})


def record_fields(line: str) -> dict[str, Any]:
    """A checkpoint line as ``{"q", "d": [[corpus id, score], ...], "m", "s"}``, unchecked (for tools
    and tests that read or edit a batch; :func:`_parse_record` checks every field)."""
    row = json.loads(line)
    scores = np.frombuffer(base64.b64decode(row.pop("x"), validate=True), dtype="<f8").tolist()
    row["d"] = [list(pair) for pair in zip(row["d"], scores, strict=True)]
    return row


def _parse_record(line: str, at: str) -> tuple[str, QueryRecord]:
    """One checkpoint line (:func:`record_line`), every field checked."""
    try:
        row = json.loads(line)
    except (ValueError, RecursionError) as e:
        raise CheckpointError(f"{at}: not a checkpoint record ({e}); {START_OVER}") from None
    if not (
        isinstance(row, dict)
        and isinstance(row.get("q"), str)
        and isinstance(row.get("d"), list)
        and isinstance(row.get("x"), str)
        and type(row.get("m")) is int
        and row["m"] >= 0
        and isinstance(row.get("s"), bool)
    ):
        raise CheckpointError(f"{at}: not a checkpoint record (expected q, d, x, m, s); {START_OVER}")
    try:
        raw = base64.b64decode(row["x"], validate=True)
    except ValueError:
        raw = b"?"
    ids = row["d"]
    if len(raw) != 8 * len(ids):
        raise CheckpointError(f"{at}: the scores are not {len(ids)} float64 values in base64; {START_OVER}")
    scores = np.frombuffer(raw, dtype="<f8")
    if not np.isfinite(scores).all():
        i = int(np.flatnonzero(~np.isfinite(scores))[0])
        raise CheckpointError(
            f"{at}: document {shorten(repr(ids[i]))} has the score {float(scores[i])!r}, not a finite number; {START_OVER}"
        )
    ranked: dict[str, float] = {}
    for doc, score in zip(ids, scores.tolist(), strict=True):
        if not isinstance(doc, str):
            raise CheckpointError(f"{at}: {shorten(repr(doc))} is not a document id; {START_OVER}")
        if doc in ranked:
            raise CheckpointError(f"{at}: document {shorten(doc)!r} is listed twice; {START_OVER}")
        ranked[doc] = score
    return row["q"], QueryRecord(ranked, row["m"], row["s"])


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as e:
        raise CheckpointError(f"cannot read {path} ({shorten(str(e))}); {START_OVER}") from None
    if not isinstance(value, dict):
        raise CheckpointError(f"{path} is not a JSON object; {START_OVER}")
    return value


__all__ = [
    "ENGINE",
    "FORMAT",
    "PARTIAL",
    "START_OVER",
    "Checkpoint",
    "QueryRecord",
    "dataset_files",
    "differences",
    "file_identity",
    "record_fields",
    "record_line",
    "run_configuration",
    "write_atomic",
]
