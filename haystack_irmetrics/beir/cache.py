"""The BEIR caches: corpus and query embeddings and bm25s indexes under ``$IRMETRICS_CACHE_DIR``.

The root is ``$IRMETRICS_CACHE_DIR``, default ``~/.cache/haystack_irmetrics``. Two kinds of entries
live there (named BEIR datasets, in ``beir/`` by default, are not cache entries and are never cleared):

- ``embeddings/<model key>/``: what one SentenceTransformers document or text embedder (model and
  every parameter that changes a vector: the model's name or folder, prefix, suffix, normalisation,
  precision, batch size, ...; the key of ``model.json``) produced. Each call of the embedder (a batch
  of up to 10,000 documents or chunks, or of up to 1,000 queries) is one ``<texts key>.npy`` (float32,
  one row per text, in order) with ``<texts key>.json`` (how many texts, the vectors' dimension),
  keyed by the SHA-256 of the exact texts embedded. The texts are the documents' contents after
  chunking, so a changed corpus, a changed chunking or another model misses and is embedded again,
  while an unchanged one embeds nothing; a run whose vectors are all cached does not even load the
  model. The vectors read back are the float32 values the model produced, so a run from the cache
  gives the same numbers.
- ``bm25s/<key>/``: a bm25s index (:mod:`haystack_irmetrics.beir.bm25s_store`), keyed by the
  documents' ids and contents and the analysis and BM25 parameters.

Every entry is written to a temporary name in the same folder and renamed, so a killed run leaves
no half entry; a damaged entry is recomputed. ``irmetrics cache list`` and ``irmetrics cache clear``
show and delete them (:func:`cache_entries`, :func:`clear_cache`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: The kinds of cache entries, each a folder under the cache root.
KINDS = ("embeddings", "bm25s")


def cache_root() -> Path:
    """``$IRMETRICS_CACHE_DIR``, default ``~/.cache/haystack_irmetrics``."""
    value = os.environ.get("IRMETRICS_CACHE_DIR")
    return Path(value).expanduser() if value else Path.home() / ".cache" / "haystack_irmetrics"


def write_entry(folder: Path, fill: Callable[[Path], None], meta: dict[str, Any]) -> None:
    """Create the folder entry ``folder``: ``fill(tmp)`` writes into a temporary folder, renamed at the end."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.mkdir()
    try:
        fill(tmp)
        (tmp / "entry.json").write_text(json.dumps({**meta, "created": time.time()}, default=str), encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:32]


class CachingEmbeddingBackend:
    """Stands in for a SentenceTransformers embedder's backend: each ``embed`` call is read from the
    cache when its texts were embedded before with the same model and parameters, else embedded and stored.

    :ivar hits: calls answered from the cache; ``misses``: calls the model computed.
    """

    def __init__(self, inner: Any, folder: Path) -> None:
        self.inner = inner
        self.folder = folder
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, data: list[Any], **kwargs: Any) -> list[list[float]]:
        if not all(isinstance(t, str) for t in data):  # images: not cached
            return self.inner.embed(data, **kwargs)
        settings = {k: v for k, v in kwargs.items() if k != "show_progress_bar"}
        digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode("utf-8"))
        for text in data:
            digest.update(text.encode("utf-8") + b"\0")
        key = digest.hexdigest()[:32]
        path = self.folder / f"{key}.npy"
        if path.is_file():
            try:
                vectors = np.load(path, allow_pickle=False)
                if vectors.shape[0] == len(data):
                    self.hits += 1
                    return vectors.tolist()
            except (OSError, ValueError):
                pass  # damaged: embedded again below
        vectors = np.asarray(self.inner.embed(data, **kwargs))
        self.misses += 1
        self.folder.mkdir(parents=True, exist_ok=True)
        dtype = np.float32 if vectors.dtype.kind == "f" else vectors.dtype

        def save(tmp: Path) -> None:
            with tmp.open("wb") as f:
                np.save(f, vectors.astype(dtype), allow_pickle=False)

        _write_atomic(path, save)
        info = {"n_texts": len(data), "dim": int(vectors.shape[1]) if vectors.ndim == 2 else None}
        _write_atomic(path.with_suffix(".json"), lambda tmp: tmp.write_text(json.dumps(info), encoding="utf-8"))
        return vectors.astype(dtype).tolist()


def embedding_cache_folder(embedder: Any) -> Path:
    """The cache folder of a SentenceTransformers document embedder: keyed by its model and parameters."""
    params = dict(embedder.to_dict().get("init_parameters") or {})
    for volatile in ("progress_bar", "token", "device"):
        params.pop(volatile, None)
    key = dict(params, model=_model_identity(str(params.get("model"))))
    folder = cache_root() / "embeddings" / _digest(key)
    if not (folder / "model.json").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"model": params.get("model"), "parameters": params}, default=str, indent=1)
        _write_atomic(folder / "model.json", lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return folder


def _model_identity(model: str) -> Any:
    """A model's name, or for a local folder what identifies its content wherever it is installed: the
    folder's name, every file's size and the SHA-256 of its small (configuration) files."""
    folder = Path(model)
    if not folder.is_dir():
        return model
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        size = path.stat().st_size
        small = size <= 1 << 20
        files[path.relative_to(folder).as_posix()] = [
            size,
            hashlib.sha256(path.read_bytes()).hexdigest() if small else None,
        ]
    return {"folder": folder.name, "files": files}


class PrecomputedQueryBackend:
    """Stands in for a text embedder's backend: the queries were embedded in batches beforehand."""

    def __init__(self, inner: Any, table: dict[str, list[float]]) -> None:
        self.inner = inner
        self.table = table

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, data: list[Any], **kwargs: Any) -> list[list[float]]:
        if len(data) == 1 and isinstance(data[0], str) and data[0] in self.table:
            return [self.table[data[0]]]
        # A text the batch did not hold (a pipeline that rewrites the query first): embedded alone and
        # not cached, so that a run does not leave one cache file per query behind.
        model = self.inner.inner if isinstance(self.inner, CachingEmbeddingBackend) else self.inner
        return model.embed(data, **kwargs)


def embed_queries_in_batches(embedder: Any, queries: Sequence[str], batch_size: int = 64) -> list[list[float]]:
    """Embed ``queries`` with a SentenceTransformers text embedder's model in batches; its later one-query
    calls (the pipeline's) read them back. Settings are the embedder's own.

    :returns: the vectors of ``queries``, in order (what the embedder's one-query calls will return).
    """
    backend = embedder.embedding_backend
    inner = backend.inner if isinstance(backend, PrecomputedQueryBackend) else backend
    texts = [f"{embedder.prefix}{q}{embedder.suffix}" for q in queries]
    unique = list(dict.fromkeys(texts))
    vectors = inner.embed(
        unique,
        batch_size=max(batch_size, embedder.batch_size),
        show_progress_bar=False,
        normalize_embeddings=embedder.normalize_embeddings,
        precision=embedder.precision,
        quantization_ranges=getattr(embedder, "quantization_ranges", None),
        **(embedder.encode_kwargs or {}),
    )
    table = dict(zip(unique, vectors))
    embedder.embedding_backend = PrecomputedQueryBackend(inner, table)
    return [table[t] for t in texts]


@dataclass(frozen=True)
class CacheEntry:
    """One cache entry: its kind (``embeddings``, ``bm25s``), key, folder, size and what it holds."""

    kind: str
    key: str
    path: Path
    size_bytes: int
    items: int
    description: str


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def cache_entries(root: Path | None = None) -> list[CacheEntry]:
    """The entries under the cache root (``root`` or :func:`cache_root`)."""
    base = root if root is not None else cache_root()
    out: list[CacheEntry] = []
    for folder in sorted((base / "embeddings").glob("*")) if (base / "embeddings").is_dir() else []:
        if not folder.is_dir() or folder.name.startswith("."):
            continue
        try:
            model = json.loads((folder / "model.json").read_text(encoding="utf-8")).get("model")
        except (OSError, ValueError):
            model = "?"
        batches = list(folder.glob("*.json"))
        texts = 0
        for meta in batches:
            if meta.name != "model.json":
                with contextlib.suppress(OSError, ValueError):
                    texts += int(json.loads(meta.read_text(encoding="utf-8")).get("n_texts", 0))
        out.append(CacheEntry("embeddings", folder.name, folder, _size(folder), texts, f"model {model}"))
    for folder in sorted((base / "bm25s").glob("*")) if (base / "bm25s").is_dir() else []:
        if not folder.is_dir() or folder.name.startswith("."):
            continue
        try:
            meta = json.loads((folder / "entry.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            meta = {}
        desc = f"k1 {meta.get('k1')} b {meta.get('b')} stemmer {meta.get('stemmer')}"
        out.append(CacheEntry("bm25s", folder.name, folder, _size(folder), int(meta.get("n_documents", 0)), desc))
    return out


def clear_cache(kind: str | None = None, root: Path | None = None) -> list[CacheEntry]:
    """Delete the entries of ``kind`` (or of every kind); returns what was deleted."""
    entries = [e for e in cache_entries(root) if kind is None or e.kind == kind]
    for entry in entries:
        shutil.rmtree(entry.path, ignore_errors=True)
    base = root if root is not None else cache_root()
    for k in KINDS if kind is None else (kind,):
        for leftover in (base / k).glob(".*.tmp") if (base / k).is_dir() else []:
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
    return entries


__all__ = [
    "KINDS",
    "CacheEntry",
    "CachingEmbeddingBackend",
    "PrecomputedQueryBackend",
    "cache_entries",
    "cache_root",
    "clear_cache",
    "embed_queries_in_batches",
    "embedding_cache_folder",
    "write_entry",
]
