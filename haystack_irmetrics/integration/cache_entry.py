"""One cache entry on disk: where the cache lives, how an entry is written (whole or not at all, and a
full disk only warns), how its metadata is read (bounded, typed) and how it is checked before use (the
checksum written with it; for a bm25s index, its posting bounds). :mod:`haystack_irmetrics.beir.cache`
builds the embedding cache on it and :mod:`haystack_irmetrics.beir.cache_admin` lists and clears entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..checks import is_number, is_whole
from ..errors import CacheWarning
from ..io.tables import json_text

T = TypeVar("T")

#: The kinds of cache entries, each a folder under the cache root.
KINDS = ("embeddings", "bm25s")
#: The metadata file of an entry of each kind: it says the folder is an entry this package wrote.
META_FILE = {"embeddings": "model.json", "bm25s": "entry.json"}
#: Who wrote an entry, in its metadata.
WRITER = "haystack_irmetrics"
#: The layout of the entries; 2 adds the checksums (entries of format 1 miss or are recomputed).
FORMAT = 2
#: Longest metadata file read, in bytes: ours are a few hundred; a larger one is damaged, not read.
META_LIMIT = 1 << 20

#: The name of every entry folder and embedding batch: a key, 32 hex digits.
KEY = re.compile(r"[0-9a-f]{32}\Z")
#: The files bm25s saves in an index folder (arrays, parameters, vocabularies).
INDEX_FILE = re.compile(r"\w[\w.]*\.(npy|json|jsonl)\Z")
#: What an interrupted write leaves: ``.<name>.<8 hex digits>.tmp``.
TMP = re.compile(r"\..+\.[0-9a-f]{8}\.tmp\Z")


#: Why an entry of format 1 is not used.
OLDER = "written by an older version, without a checksum"

_warned: set[str] = set()


def warn_once(key: str, message: str) -> None:
    """Warn ``message`` the first time ``key`` (an entry's path) is warned about in this process."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, CacheWarning, stacklevel=3)


def add_text(digest: Any, text: str) -> None:
    """Feed ``text`` to a hashlib ``digest`` length-prefixed, so that no two sequences of texts feed the same
    bytes (joined with a separator, ``["a\\0b", "c"]`` and ``["a", "b\\0c"]`` would); a lone surrogate is
    hashed as it is, not refused."""
    data = text.encode("utf-8", "surrogatepass")
    digest.update(len(data).to_bytes(8, "little") + data)


def cache_root() -> Path:
    """``$IRMETRICS_CACHE_DIR``, default ``~/.cache/haystack_irmetrics``."""
    value = os.environ.get("IRMETRICS_CACHE_DIR")
    return Path(value).expanduser() if value else Path.home() / ".cache" / "haystack_irmetrics"


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``; the one low-level write of the cache (a full disk raises OSError here)."""
    with open(path, "wb") as f:
        f.write(data)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` through a temporary name in its folder, renamed at the end: never half a file.
    On failure the temporary file is removed and the error raised."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write_file(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def read_json_object(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(object, None)`` for a metadata file that holds a JSON object, else ``(None, what is wrong)``:
    missing, not a regular file, over :data:`META_LIMIT` bytes, not UTF-8, not JSON, not an object."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None, f"it has no {path.name}"
    except OSError as e:
        return None, f"its {path.name} cannot be read ({e.strerror or e})"
    if not stat.S_ISREG(info.st_mode):
        return None, f"its {path.name} is not a regular file"
    if info.st_size > META_LIMIT:
        return None, f"its {path.name} is {info.st_size:,} bytes (metadata is at most {META_LIMIT:,})"
    try:
        with open(path, "rb") as f:
            raw = f.read(META_LIMIT + 1)
        text = raw.decode("utf-8")
        value = json.loads(text)
    except OSError as e:
        return None, f"its {path.name} cannot be read ({e.strerror or e})"
    except UnicodeDecodeError:
        return None, f"its {path.name} is not UTF-8"
    except (ValueError, RecursionError):
        return None, f"its {path.name} is not JSON"
    if not isinstance(value, dict):
        return None, f"its {path.name} holds a JSON {type(value).__name__}, not an object"
    return value, None


def meta_problem(kind: str, meta: dict[str, Any]) -> str | None:
    """What is wrong with an entry's metadata (its keys and their types), or None.

    Embedding folders of format 1 (``model`` and ``parameters``, no ``kind``) are still recognised, so
    ``irmetrics cache clear`` removes them; their batches never match a key of format 2.
    """
    name = META_FILE[kind]
    legacy = kind == "embeddings" and "kind" not in meta and {"model", "parameters"} <= meta.keys()
    if meta.get("kind") != kind and not legacy:
        return f"its {name} does not say kind {kind!r}"
    if kind == "embeddings":
        if not isinstance(meta.get("model"), (str, type(None))):
            return f"its {name} has a model that is not a string"
        if "dim" in meta and not (is_whole(meta["dim"]) and meta["dim"] > 0):
            return f"its {name} has a dim that is not a positive integer"
        return None
    if not (is_whole(meta.get("n_documents")) and meta["n_documents"] >= 0):
        return f"its {name} has no n_documents count"
    for number in ("k1", "b"):
        if not is_number(meta.get(number)):
            return f"its {name} has no numeric {number}"
    if not isinstance(meta.get("stemmer"), (str, type(None))):
        return f"its {name} has a stemmer that is not a string"
    return None


def layout_problem(kind: str, folder: Path) -> str | None:
    """Why ``folder`` (a real folder named like a key) is not safely an entry of ``kind`` this package
    wrote, or None: it may hold only the files this package writes there, as regular files (no link)."""

    def foreign(entry: os.DirEntry[str], where: str = "") -> str:
        what = "a symbolic link" if entry.is_symlink() else "a folder" if entry.is_dir() else "a file"
        return f"it holds {where}{entry.name} ({what}), which this package does not write there"

    with os.scandir(folder) as items:
        for item in items:
            regular = item.is_file(follow_symlinks=False)
            if kind == "embeddings":
                stem, _, suffix = item.name.rpartition(".")
                ours = (
                    item.name == "model.json" or (KEY.match(stem) and suffix in ("npy", "json")) or TMP.match(item.name)
                )
                if not (ours and regular):
                    return foreign(item)
            elif item.name == "entry.json" and regular:
                continue
            elif item.name == "index" and item.is_dir(follow_symlinks=False):
                with os.scandir(item.path) as files:
                    for file in files:
                        if not (file.is_file(follow_symlinks=False) and INDEX_FILE.match(file.name)):
                            return foreign(file, "index/")
            else:
                return foreign(item)
    return None


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def payload_sha256(folder: Path) -> str:
    """The SHA-256 of an entry folder's files but its ``entry.json``: their paths, sizes and bytes.

    :raises ValueError: the folder holds a symbolic link or something that is neither file nor folder.
    """
    digest = hashlib.sha256()

    def walk(path: Path, rel: str) -> None:
        with os.scandir(path) as scan:
            items = sorted(scan, key=lambda item: item.name)
        for item in items:
            name = f"{rel}{item.name}"
            if item.is_symlink():
                raise ValueError(f"{name} is a symbolic link")
            if item.is_dir():
                walk(Path(item.path), f"{name}/")
            elif not item.is_file():
                raise ValueError(f"{name} is not a regular file")
            elif name != "entry.json":
                size = item.stat(follow_symlinks=False).st_size
                digest.update(name.encode("utf-8") + b"\0" + size.to_bytes(8, "little"))
                digest.update(file_sha256(Path(item.path)).encode("ascii"))

    walk(folder, "")
    return digest.hexdigest()


def write_entry(folder: Path, fill: Callable[[Path], None], meta: dict[str, Any]) -> bool:
    """Create the folder entry ``folder``: ``fill(tmp)`` writes into a temporary folder, which gets an
    ``entry.json`` (``meta``, the writer, the format and the checksum of the payload) and is renamed
    at the end, replacing a damaged entry. A killed run leaves no half entry.

    A failed write (a full disk, a read-only cache: any OSError) warns once, naming the entry, removes
    what it had written and returns False: the caller goes on with what it computed. An existing
    ``folder`` that is not an entry this package wrote is left alone (a warning; False).
    """
    tmp = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}.tmp")
    created = False
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
        created = True
        fill(tmp)
        entry = {
            **meta,
            "writer": WRITER,
            "format": FORMAT,
            "created": time.time(),
            "payload_sha256": payload_sha256(tmp),
        }
        write_file(tmp / "entry.json", json_text(entry, default=str).encode("utf-8"))
        if folder.is_symlink() or folder.exists():
            kind = meta.get("kind")
            why = (
                "it is a symbolic link"
                if folder.is_symlink()
                else "it is not a folder"
                if not folder.is_dir()
                else layout_problem(kind, folder)
                if kind in META_FILE
                else None
            )
            if why:
                _remove(tmp)
                warn_once(str(folder), f"the cache entry {folder} was not written: {why}; it is left alone")
                return False
            shutil.rmtree(folder)  # ours and damaged (it was read and rejected): replaced
        try:
            os.replace(tmp, folder)
        except OSError:
            if not folder.is_dir():
                raise
            _remove(tmp)  # another process wrote the same entry meanwhile: theirs stays
        return True
    except OSError as e:
        if created:
            _remove(tmp)
        warn_once(
            str(folder),
            f"could not write the cache entry {folder} ({e.strerror or e}); the run goes on with the values it "
            "computed, not cached",
        )
        return False
    except BaseException:
        if created:
            _remove(tmp)
        raise


def read_entry(folder: Path, load: Callable[[Path], T]) -> T | None:
    """What ``load(folder)`` reads from the folder entry ``folder`` once its ``entry.json`` and the checksum
    of its payload check out; None when there is no entry, or when it is damaged (a warning naming it,
    once): the caller computes the value again and :func:`write_entry` overwrites the entry.
    ``load`` raises (any exception: a damaged file can make a reader raise anything) when what it read
    is not usable."""
    if not folder.exists() and not folder.is_symlink():
        return None
    meta, problem = read_json_object(folder / "entry.json")
    if meta is not None:
        expected = meta.get("payload_sha256")
        if not isinstance(expected, str):
            problem = OLDER
        else:
            try:
                if payload_sha256(folder) != expected:
                    problem = "its files do not match the checksum written with it"
            except (OSError, ValueError) as e:
                problem = f"its files cannot be checked ({e})"
    if problem is None:
        try:
            return load(folder)
        except Exception as e:  # any error of the reader means the entry is damaged
            problem = f"it cannot be loaded ({type(e).__name__}: {str(e)[:200]})"
    if problem == OLDER:
        warn_once(str(folder), f"the cache entry {folder} was {OLDER}: it is computed again and rewritten")
    else:
        warn_once(str(folder), f"the cache entry {folder} is damaged ({problem}): it is computed again and rewritten")
    return None


def load_bm25s_index(folder: Path, tokenizer: Any, n_documents: int) -> tuple[Any, Any]:
    """The bm25s model and ``tokenizer`` (its vocabulary loaded) of the index saved in ``folder``,
    once its postings are checked against ``n_documents``.

    :raises ValueError: an out-of-range posting, a vocabulary that does not match, a non-finite score.
    """
    import bm25s

    model = bm25s.BM25.load(str(folder), show_progress=False)
    tokenizer.load_vocab(str(folder))
    scores = model.scores
    data, indices, indptr = (np.asarray(scores[name]) for name in ("data", "indices", "indptr"))
    if scores.get("num_docs") != n_documents:
        raise ValueError(f"it indexes {scores.get('num_docs')} documents, not {n_documents}")
    if indices.ndim != 1 or data.shape != indices.shape or indptr.ndim != 1 or len(indptr) < 1:
        raise ValueError("its postings are not one row of documents and scores per term")
    if indptr[0] != 0 or indptr[-1] != len(indices) or np.any(np.diff(indptr) < 0):
        raise ValueError("its posting offsets do not cover its postings")
    if len(indices) and (indices.min() < 0 or indices.max() >= n_documents):
        raise ValueError(f"a posting points outside the {n_documents} documents")
    if not np.isfinite(data).all():
        raise ValueError("a posting has a non-finite score")
    n_terms = len(indptr) - 1
    for name, ids in (
        ("index vocabulary", model.vocab_dict or {}),
        ("tokenizer vocabulary", tokenizer.stem_to_sid or {}),
        ("tokenizer word ids", tokenizer.word_to_id or {}),
    ):
        values = list(ids.values())  # ints (not bools) in [0, n_terms): C-level passes, not a test per id
        if values and (not set(map(type, values)) <= {int} or min(values) < 0 or max(values) >= n_terms):
            raise ValueError(f"its {name} has term ids outside the {n_terms} terms")
    return model, tokenizer


__all__ = [
    "FORMAT",
    "KINDS",
    "META_FILE",
    "CacheWarning",
    "add_text",
    "cache_root",
    "layout_problem",
    "load_bm25s_index",
    "meta_problem",
    "payload_sha256",
    "read_entry",
    "read_json_object",
    "write_atomic",
    "write_entry",
]
