"""Listing and clearing the cache (``irmetrics cache list|clear``) without trusting what is on disk.

An entry is a real folder named like a key under ``embeddings/`` or ``bm25s/`` that holds only the files
this package writes there. It is ``ok`` when its metadata reads as ours, else ``damaged``; both are listed
and both are cleared. Anything else found there (a symbolic link, a foreign file or folder, a folder
holding something this package does not write) is left alone and reported with the reason: clearing never
follows a link, never deletes a link's target and never deletes what it did not write.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ..checks import is_whole
from ..integration.cache_entry import (
    KEY,
    KINDS,
    META_FILE,
    TMP,
    cache_root,
    layout_problem,
    meta_problem,
    read_json_object,
)
from ..io.tables import json_text


@dataclass(frozen=True)
class CacheEntry:
    """One cache entry: its kind (``embeddings``, ``bm25s``), key, folder, size and what it holds;
    ``status`` is ``"ok"`` or ``"damaged"`` (then ``problem`` says why; it is recomputed when next used)."""

    kind: str
    key: str
    path: Path
    size_bytes: int
    items: int
    description: str
    status: str = "ok"
    problem: str | None = None


@dataclass(frozen=True)
class LeftAlone:
    """Something under a kind folder that is not an entry this package wrote (or could not be deleted)."""

    path: Path
    reason: str


@dataclass(frozen=True)
class CacheScan:
    """What is under the cache root: the entries, the unfinished writes and what is left alone."""

    root: Path
    entries: list[CacheEntry]
    unfinished: list[Path]
    left_alone: list[LeftAlone]


@dataclass(frozen=True)
class CacheClearing:
    """What :func:`clear_cache_report` removed (entries, unfinished writes) and left alone, with why."""

    root: Path
    removed: list[CacheEntry]
    unfinished: list[Path]
    left_alone: list[LeftAlone]


def _size(path: Path) -> int:
    """Bytes of the regular files under ``path``, links not followed."""
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                info = os.lstat(os.path.join(dirpath, name))
                total += info.st_size if stat.S_ISREG(info.st_mode) else 0
    return total


def _link_reason(path: Path) -> str:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return f"a symbolic link (to {target}): not followed, its target is not deleted"


def _embeddings_entry(folder: Path, meta: dict | None, problem: str | None) -> CacheEntry:
    texts = batches = damaged = 0
    with os.scandir(folder) as items:
        for item in items:
            stem, _, suffix = item.name.rpartition(".")
            if suffix == "json" and KEY.match(stem):
                batches += 1
                info, _ = read_json_object(Path(item.path))
                n = info.get("n_texts") if info else None
                if is_whole(n) and n >= 0:
                    texts += n
                else:
                    damaged += 1
    model = meta.get("model") if meta else None
    description = f"model {model if model is not None else '?'}, {batches} batch{'es' if batches != 1 else ''}"
    if damaged:
        description += f" ({damaged} damaged: embedded again when next used)"
    status = "ok" if problem is None else "damaged"
    return CacheEntry("embeddings", folder.name, folder, _size(folder), texts, description, status, problem)


def _bm25s_entry(folder: Path, meta: dict | None, problem: str | None) -> CacheEntry:
    if meta is None or problem is not None:
        return CacheEntry("bm25s", folder.name, folder, _size(folder), 0, "bm25s index", "damaged", problem)
    description = f"k1 {meta.get('k1')} b {meta.get('b')} stemmer {meta.get('stemmer')}"
    return CacheEntry("bm25s", folder.name, folder, _size(folder), meta["n_documents"], description)


def _scan_kind(base: Path, kind: str, scan: CacheScan) -> None:
    kind_dir = base / kind
    if kind_dir.is_symlink():
        scan.left_alone.append(LeftAlone(kind_dir, _link_reason(kind_dir)))
        return
    if not kind_dir.exists():
        return
    if not kind_dir.is_dir():
        scan.left_alone.append(LeftAlone(kind_dir, "a file where the cache keeps a folder: not a cache entry"))
        return
    try:
        with os.scandir(kind_dir) as items:
            children = sorted(items, key=lambda item: item.name)
    except OSError as e:
        scan.left_alone.append(LeftAlone(kind_dir, f"cannot be read ({e.strerror or e})"))
        return
    for child in children:
        path = Path(child.path)
        try:
            if child.is_symlink():
                scan.left_alone.append(LeftAlone(path, _link_reason(path)))
            elif TMP.match(child.name):
                # an interrupted write of this package: removed if it holds only what an entry holds
                if child.is_file(follow_symlinks=False) or (
                    child.is_dir(follow_symlinks=False) and layout_problem(kind, path) is None
                ):
                    scan.unfinished.append(path)
                else:
                    scan.left_alone.append(LeftAlone(path, "holds what an unfinished write of this package does not"))
            elif not child.is_dir(follow_symlinks=False):
                scan.left_alone.append(LeftAlone(path, "a file, not a cache entry"))
            elif not KEY.match(child.name):
                scan.left_alone.append(LeftAlone(path, "not a cache entry: its name is not a cache key"))
            elif (why := layout_problem(kind, path)) is not None:
                scan.left_alone.append(LeftAlone(path, f"not safely a cache entry: {why}"))
            else:
                meta, problem = read_json_object(path / META_FILE[kind])
                if meta is not None:
                    problem = meta_problem(kind, meta)
                build = _embeddings_entry if kind == "embeddings" else _bm25s_entry
                scan.entries.append(build(path, meta, problem))
        except OSError as e:
            scan.left_alone.append(LeftAlone(path, f"cannot be read ({e.strerror or e})"))


def scan_cache(kind: str | None = None, root: Path | None = None) -> CacheScan:
    """What is under the cache root (``root`` or :func:`cache_root`), for ``kind`` or every kind."""
    base = root if root is not None else cache_root()
    scan = CacheScan(base, [], [], [])
    for k in KINDS if kind is None else (kind,):
        _scan_kind(base, k, scan)
    return scan


def cache_entries(root: Path | None = None) -> list[CacheEntry]:
    """The entries under the cache root (``root`` or :func:`cache_root`), ok or damaged."""
    return scan_cache(root=root).entries


def clear_cache_report(kind: str | None = None, root: Path | None = None) -> CacheClearing:
    """Delete the entries of ``kind`` (or of every kind), ok or damaged, and unfinished writes; leave
    everything else alone. Returns what was removed and what was left alone, with why."""
    scan = scan_cache(kind, root)
    removed: list[CacheEntry] = []
    unfinished: list[Path] = []
    left = list(scan.left_alone)
    for entry in scan.entries:
        try:
            if entry.path.is_symlink():  # replaced by a link since the scan: never followed
                left.append(LeftAlone(entry.path, _link_reason(entry.path)))
                continue
            shutil.rmtree(entry.path)
            removed.append(entry)
        except OSError as e:
            left.append(LeftAlone(entry.path, f"could not be deleted ({e.strerror or e})"))
    for path in scan.unfinished:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            unfinished.append(path)
        except FileNotFoundError:
            pass  # finished or cleaned by its writer meanwhile
        except OSError as e:
            left.append(LeftAlone(path, f"could not be deleted ({e.strerror or e})"))
    return CacheClearing(scan.root, removed, unfinished, left)


def clear_cache(kind: str | None = None, root: Path | None = None) -> list[CacheEntry]:
    """Delete the entries of ``kind`` (or of every kind); returns what was deleted
    (:func:`clear_cache_report` says what was left alone too)."""
    return clear_cache_report(kind, root).removed


def entry_row(entry: CacheEntry) -> dict:
    """An entry as a JSON object (``irmetrics cache list --format json``)."""
    return {
        "kind": entry.kind,
        "key": entry.key,
        "path": str(entry.path),
        "status": entry.status,
        "problem": entry.problem,
        "size_bytes": entry.size_bytes,
        "items": entry.items,
        "description": entry.description,
    }


def scan_json(scan: CacheScan) -> str:
    """The scan as JSON: the root, the entries and what is not an entry."""
    return json_text(
        {
            "root": str(scan.root),
            "entries": [entry_row(e) for e in scan.entries],
            "left_alone": [{"path": str(x.path), "reason": x.reason} for x in scan.left_alone],
        },
        indent=2,
    )


__all__ = [
    "CacheClearing",
    "CacheEntry",
    "CacheScan",
    "LeftAlone",
    "cache_entries",
    "clear_cache",
    "clear_cache_report",
    "entry_row",
    "scan_cache",
    "scan_json",
]
