"""The folders ``irmetrics beir --output`` writes, read back: the dataset a run was made from
(``summary.json``) and the one qrels file several runs can be scored on.

Here, below ``beir/`` and ``report/``, so that both find a run folder's qrels the same way (``report/``
may not import ``beir/``). A summary records its dataset's folder (``dataset_path``), the ``split`` and,
in ``configuration.dataset``, the SHA-256 of the dataset's files: two runs were made from the same
dataset when those agree, whatever folder each copy sits in.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DatasetError, ParseError
from .limits import capped, line_too_long


def read_json_object(path: str | os.PathLike[str], what: str = "object") -> dict[str, Any]:
    """The JSON object in ``path`` (a ``what``: ``"summary"``, ``"leaderboard"``, for messages), read under the line limit of :mod:`.limits`; :class:`ParseError` naming
    the file when it is missing, unreadable, not UTF-8, not JSON (or nested too deeply), or JSON but not an
    object."""
    where = os.fspath(path)
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed with the capped stream
    except FileNotFoundError:
        raise ParseError("file not found", path=where) from None
    except IsADirectoryError:
        raise ParseError("is a directory, not a file", path=where) from None
    except OSError as e:  # no permission
        raise ParseError(f"cannot be read ({e.strerror or e})", path=where) from None
    with capped(raw, utf8=True) as f:  # a file without line ends is not read whole
        data = f.read()
        stream = f.raw
    line = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n") + 1
    if stream.overlong:
        raise line_too_long(where, line, stream.limit)
    if stream.not_utf8 is not None:
        raise ParseError(f"not UTF-8 text ({stream.not_utf8[1]})", path=where, line=line)
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except json.JSONDecodeError as e:
        raise ParseError(
            f"not a JSON {what} (invalid JSON: {e.msg} at line {e.lineno}, column {e.colno})", path=where
        ) from None
    except RecursionError:  # json's decoder recurses once per nested array or object
        raise ParseError(f"not a JSON {what} (invalid JSON: nested too deeply)", path=where) from None
    if not isinstance(value, dict):
        raise ParseError(f"expected a JSON object, got a JSON {_kind(value)}", path=where)
    return value


def _kind(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class RunDataset:
    """The dataset a run folder's ``summary.json`` names.

    :ivar summary: the ``summary.json`` it was read from.
    :ivar path: the dataset's folder (``dataset_path``), ``None`` for a dataset built in memory.
    :ivar split: the evaluated split.
    :ivar files: ``{file: SHA-256}`` of the dataset's files as the run found them (``corpus.jsonl``,
        ``queries.jsonl``, ``qrels/<split>.tsv``); ``None`` when not recorded (an older or hand-written summary).
    :ivar queries_sha256: a hash of the query ids of a dataset given as an object, if recorded.
    """

    summary: Path
    path: Path | None
    split: str
    files: dict[str, str] | None = None
    queries_sha256: str | None = None

    @property
    def qrels(self) -> Path | None:
        """Where the split's qrels are: ``<dataset_path>/qrels/<split>.tsv``."""
        return None if self.path is None else self.path / "qrels" / f"{self.split}.tsv"

    @property
    def recorded(self) -> bool:
        """Whether the summary fingerprints the dataset (its files, or its queries for an in-memory one)."""
        return self.files is not None or self.queries_sha256 is not None


def read_run_dataset(folder: str | os.PathLike[str]) -> RunDataset | None:
    """The dataset of an ``irmetrics beir --output`` dataset folder, from its ``summary.json``; ``None``
    when the folder has no summary. A summary that is not a JSON object, or whose ``dataset_path``,
    ``split`` or dataset fingerprint has the wrong type, raises :class:`ParseError` naming it."""
    summary = Path(folder) / "summary.json"
    if not summary.exists():
        return None
    info = read_json_object(summary, "summary")
    path = _typed(info, "dataset_path", (str, type(None)), summary)
    split = _typed(info, "split", (str,), summary, default="test")
    configuration = _typed(info, "configuration", (dict, type(None)), summary)
    recorded = _typed(configuration or {}, "dataset", (dict, type(None)), summary, key="configuration.dataset")
    files, queries = None, None
    if recorded:
        raw = _typed(recorded, "files", (dict, type(None)), summary, key="configuration.dataset.files")
        queries = _typed(
            recorded, "queries_sha256", (str, type(None)), summary, key="configuration.dataset.queries_sha256"
        )
        if raw is not None:
            files = {}
            for name, identity in raw.items():
                where = f"configuration.dataset.files.{name}"
                sha = (
                    _typed(identity, "sha256", (str,), summary, key=f"{where}.sha256")
                    if isinstance(identity, dict)
                    else None
                )
                if sha is None:
                    raise ParseError(f"{where} should be an object with a 'sha256' string", path=str(summary))
                files[str(name)] = sha
    return RunDataset(summary, Path(path) if path else None, split, files, queries)


def _typed(
    obj: Mapping[str, Any],
    name: str,
    types: tuple[type, ...],
    summary: Path,
    *,
    key: str | None = None,
    default: Any = None,
) -> Any:
    value = obj.get(name, default)
    if not isinstance(value, types):
        wanted = " or ".join(
            "null" if t is type(None) else {"str": "a string", "dict": "an object"}[t.__name__] for t in types
        )
        raise ParseError(f"{key or name} should be {wanted}, got a JSON {_kind(value)}", path=str(summary))
    return value


def dataset_differences(a: RunDataset, b: RunDataset, hashes: dict[Path, str | None] | None = None) -> list[str]:
    """How the datasets of two run folders differ, in words (``[]``: the same dataset).

    Both fingerprinted: the split, each file's SHA-256 and the queries' hash must agree. Otherwise the
    split and the qrels' content must (hashed from disk where not recorded); a qrels file that is neither
    recorded nor on disk cannot be compared, which counts as a difference. ``hashes`` caches file hashes.
    """
    hashes = {} if hashes is None else hashes
    if a.split != b.split:
        return [f"split {a.split!r} against {b.split!r}"]
    if a.recorded and b.recorded:
        out = [
            f"{name} differs"
            for name in sorted((a.files or {}).keys() | (b.files or {}).keys())
            if (a.files or {}).get(name) != (b.files or {}).get(name)
        ]
        if a.queries_sha256 != b.queries_sha256:
            out.append("the queries differ")
        return out
    if a.qrels is not None and a.qrels == b.qrels:  # one file (shared_qrels checks it against what is recorded)
        return []
    qrels = [_qrels_sha(ds, hashes) for ds in (a, b)]
    if None in qrels:
        unknown = [ds for ds, sha in zip((a, b), qrels) if sha is None]
        return [
            f"{ds.summary} records no dataset fingerprint and its qrels file {ds.qrels} is missing" for ds in unknown
        ]
    return [] if qrels[0] == qrels[1] else [f"qrels/{a.split}.tsv differs"]


def _qrels_sha(ds: RunDataset, hashes: dict[Path, str | None]) -> str | None:
    recorded = (ds.files or {}).get(f"qrels/{ds.split}.tsv")
    return recorded if recorded is not None else (_sha256(ds.qrels, hashes) if ds.qrels is not None else None)


def _sha256(path: Path, hashes: dict[Path, str | None]) -> str | None:
    """The file's SHA-256, ``None`` when it is not a readable file (cached per path in ``hashes``)."""
    if path not in hashes:
        try:
            digest = hashlib.sha256()
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            hashes[path] = digest.hexdigest()
        except OSError:
            hashes[path] = None
    return hashes[path]


def shared_qrels(datasets: Sequence[RunDataset], hashes: dict[Path, str | None] | None = None) -> Path:
    """The qrels file the runs of ``datasets`` (one per run folder) are all scored on.

    :raises DatasetError: when two of them were made from different datasets (another split, another
        qrels, corpus or queries file), or when no qrels file is where the summaries say with the content
        they record (moved, deleted, or changed since the runs).
    """
    hashes = {} if hashes is None else hashes
    first = datasets[0]
    for other in datasets[1:]:
        differ = dataset_differences(first, other, hashes)
        if differ:
            raise DatasetError(
                f"{first.summary.parent} and {other.summary.parent} were not made from the same dataset "
                f"({'; '.join(differ)}): score them on one qrels file with --qrels if that is what you want"
            )
    expected = next((sha for ds in datasets if (sha := (ds.files or {}).get(f"qrels/{ds.split}.tsv"))), None)
    candidates = list(dict.fromkeys(ds.qrels for ds in datasets if ds.qrels is not None))
    changed = []
    for path in candidates:
        sha = _sha256(path, hashes)
        if sha is not None and (expected is None or sha == expected):
            return path
        if sha is not None:
            changed.append(path)
    if changed:
        raise DatasetError(
            f"the qrels file {changed[0]} changed since the run ({first.summary} records another SHA-256): "
            "give the qrels to score on with --qrels"
        )
    if not candidates:
        raise DatasetError(f"{first.summary} names no dataset folder (dataset_path): give the qrels with --qrels")
    raise DatasetError(
        f"no qrels file where the summaries say ({', '.join(map(str, candidates))}): the dataset was moved or "
        "deleted; give the qrels with --qrels"
    )


def tell_apart(names: Sequence[str], parents: Sequence[tuple[str, ...] | None]) -> list[str]:
    """Each run's name with as many of its parent folders as tell apart runs whose names clash
    (``bm25/scifact`` and ``dense/scifact``, both ``scifact``), as ``irmetrics compare`` and
    ``irmetrics report`` label runs. ``parents[i]`` is the folder parts of run ``i``'s path, or ``None``
    for a run not named after a path (kept as it is); one path given twice still clashes (each caller
    says what then).

        >>> tell_apart(["scifact", "scifact", "x"], [("runs", "bm25"), ("runs", "dense"), None])
        ['bm25/scifact', 'dense/scifact', 'x']
    """
    depth = [0] * len(names)
    while True:
        labels = [
            "/".join((*p[len(p) - d :], n)) if p and d else n for n, p, d in zip(names, parents, depth, strict=True)
        ]
        groups: dict[str, list[int]] = {}
        for i, label in enumerate(labels):
            groups.setdefault(label, []).append(i)
        grow = [
            i
            for group in groups.values()
            if len(group) > 1 and len({(parents[j], names[j]) for j in group}) > 1
            for i in group
            if parents[i] and depth[i] < len(parents[i])
        ]
        if not grow:
            return labels
        for i in grow:
            depth[i] += 1


__all__ = ["RunDataset", "dataset_differences", "read_json_object", "read_run_dataset", "shared_qrels", "tell_apart"]
