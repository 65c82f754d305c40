"""The BEIR caches: corpus and query embeddings and bm25s indexes under ``$IRMETRICS_CACHE_DIR``.

The root is ``$IRMETRICS_CACHE_DIR``, default ``~/.cache/haystack_irmetrics``. Two kinds of entries
live there (named BEIR datasets, in ``$IRMETRICS_BEIR_DIR``, are not cache entries and are never cleared):

- ``embeddings/<model key>/``: what one SentenceTransformers document or text embedder (model and
  every parameter that changes a vector: the model's name or folder, prefix, suffix, normalisation,
  precision, batch size, ...; the key of ``model.json``) produced. Each call of the embedder (a batch
  of up to 10,000 documents or chunks, or of up to 1,000 queries) is one ``<texts key>.npy`` (float32,
  one row per text, in order) with ``<texts key>.json`` (how many texts, the vectors' dimension and
  dtype, the SHA-256 of the ``.npy``), keyed by the SHA-256 of the exact texts embedded, each text
  length-prefixed (so no two lists of texts share a key). The texts are the documents' contents after
  chunking, so a changed corpus, a changed chunking or another model misses and is embedded again,
  while an unchanged one embeds nothing; a run whose vectors are all cached does not even load the
  model. The vectors read back are the float32 values the model produced, so a run from the cache
  gives the same numbers. The folder and its ``model.json`` are written with the first batch, so a
  model that fails to load leaves nothing behind.
- ``bm25s/<key>/``: a bm25s index (:mod:`haystack_irmetrics.integration.stores.bm25s_store`), keyed by the
  documents' ids and contents and the analysis and BM25 parameters, with the checksum of its files in
  ``entry.json``.

Every entry is written to a temporary name in the same folder and renamed, so a killed run leaves
no half entry. An entry is checked when read (its checksum; a batch's shape, dtype, row count,
dimension and finite values; an index's posting bounds): a damaged one is named in a
:class:`CacheWarning`, computed again and overwritten. A failed write (a full disk, a read-only
cache) warns once and the run goes on with the computed values. ``irmetrics cache list`` and
``irmetrics cache clear`` show and delete entries (:func:`cache_entries`, :func:`clear_cache_report`),
and never follow a symbolic link nor delete what this package did not write
(:mod:`haystack_irmetrics.beir.cache_admin`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..checks import is_whole
from ..integration.cache_entry import (
    FORMAT,
    KINDS,
    WRITER,
    CacheWarning,
    add_text,
    cache_root,
    file_sha256,
    read_json_object,
    warn_once,
    write_atomic,
    write_entry,
)
from ..io.tables import json_text
from .cache_admin import CacheClearing, CacheEntry, LeftAlone, cache_entries, clear_cache, clear_cache_report
from .models import LazyModel


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:32]


def texts_key(texts: Sequence[str], settings: dict[str, Any]) -> str:
    """The key of one embedder call: the SHA-256 of its settings and of each text, length-prefixed (texts
    joined with a separator would let ``["a\\0b", "c"]`` and ``["a", "b\\0c"]`` share a key)."""
    digest = hashlib.sha256(f"texts/{FORMAT}".encode())
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode("utf-8"))
    for text in texts:
        add_text(digest, text)
    return digest.hexdigest()[:32]


def _vectors_problem(vectors: np.ndarray, meta: dict[str, Any], n_texts: int, dim: int | None) -> str | None:
    """What makes ``vectors`` read from a batch unusable for ``n_texts`` texts, or None."""
    if vectors.ndim != 2:
        return f"it holds a {vectors.ndim}-d array, not one row per text"
    if vectors.shape[0] != n_texts:
        return f"it holds {vectors.shape[0]} rows for {n_texts} texts"
    if vectors.shape[1] != meta["dim"] or (dim is not None and vectors.shape[1] != dim):
        return f"its vectors have dimension {vectors.shape[1]}, the model's have {dim or meta['dim']}"
    if str(vectors.dtype) != meta["dtype"]:
        return f"it holds {vectors.dtype} values, its metadata says {meta['dtype']}"
    if vectors.dtype.kind == "f" and not np.isfinite(vectors).all():
        return "it holds NaN or infinite values"
    return None


def _batch_meta_problem(meta: dict[str, Any], n_texts: int) -> str | None:
    n, dim, dtype, sha = (meta.get(k) for k in ("n_texts", "dim", "dtype", "sha256"))
    if not is_whole(n) or n != n_texts:
        return f"its metadata says {n!r} texts for {n_texts}"
    if not is_whole(dim) or not 0 < dim <= 1 << 20:
        return "its metadata has no valid dimension"
    if not isinstance(dtype, str) or not isinstance(sha, str):
        return "its metadata has no dtype or checksum"
    return None


class CachingEmbeddingBackend:
    """Stands in for a SentenceTransformers embedder's backend: each ``embed`` call is read from the
    cache when its texts were embedded before with the same model and parameters, else embedded and stored.

    A stored batch is checked when read (checksum, shape, dtype, row count, dimension, finite values):
    a damaged one is embedded again and overwritten, with a :class:`CacheWarning` naming it. A batch
    that cannot be written warns once per folder; the computed vectors are returned all the same.

    :param model_meta: what ``model.json`` says (the model and its parameters); by default, read from
        the embedder behind a :class:`~haystack_irmetrics.beir.models.LazyModel`.
    :ivar hits: calls answered from the cache; ``misses``: calls the model computed.
    """

    def __init__(self, inner: Any, folder: Path, model_meta: dict[str, Any] | None = None) -> None:
        self.inner = inner
        self.folder = folder
        self.hits = 0
        self.misses = 0
        self._model_meta = model_meta
        self._dim: int | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _known_dim(self) -> int | None:
        """The model's vector size: seen in this run, or written in ``model.json``."""
        if self._dim is None:
            meta, _ = read_json_object(self.folder / "model.json")
            dim = meta.get("dim") if meta else None
            if is_whole(dim) and dim > 0:
                self._dim = dim
        return self._dim

    def _read(self, path: Path, n_texts: int) -> np.ndarray | None:
        """The batch stored at ``path`` for ``n_texts`` texts, or None (missing; damaged: warned)."""
        meta_path = path.with_suffix(".json")
        if not path.exists() and not meta_path.exists():
            return None
        meta, problem = read_json_object(meta_path)
        if meta is not None:
            problem = _batch_meta_problem(meta, n_texts)
        vectors = None
        if problem is None:
            try:
                # bounded: a planted multi-GB file is not read into memory
                if path.stat().st_size > n_texts * meta["dim"] * 8 + (1 << 16):
                    problem = "it is larger than its vectors can be"
                else:
                    data = path.read_bytes()
                    if hashlib.sha256(data).hexdigest() != meta["sha256"]:
                        problem = "it does not match the checksum written with it"
                    else:
                        vectors = np.load(io.BytesIO(data), allow_pickle=False)
            except (OSError, ValueError, EOFError) as e:
                problem = f"it cannot be read ({e})"
        if vectors is not None and problem is None:
            problem = _vectors_problem(vectors, meta, n_texts, self._known_dim())
        if problem is not None:
            warn_once(str(path), f"the cache entry {path} is damaged ({problem}): embedded again and rewritten")
            return None
        self._dim = vectors.shape[1]
        return vectors

    def _model_json(self, dim: int) -> bytes:
        meta = self._model_meta
        if meta is None:
            meta = embedding_model_meta(self.inner.embedder) if isinstance(self.inner, LazyModel) else {}
        body = {"model": None, "parameters": None, **meta, "kind": "embeddings", "writer": WRITER, "format": FORMAT}
        return json_text({**body, "dim": dim}, default=str, indent=1).encode("utf-8")

    def _store(self, path: Path, vectors: np.ndarray) -> None:
        """Write one batch (and ``model.json`` with the first); a failed write warns once per folder and
        leaves nothing half written."""
        made_folder = not self.folder.exists()
        model_json = self.folder / "model.json"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            meta, _ = read_json_object(model_json)
            if meta is None or meta.get("format") != FORMAT or meta.get("dim") != vectors.shape[1]:
                write_atomic(model_json, self._model_json(vectors.shape[1]))
            buffer = io.BytesIO()
            np.save(buffer, vectors, allow_pickle=False)
            data = buffer.getvalue()
            info = {
                "n_texts": int(vectors.shape[0]),
                "dim": int(vectors.shape[1]),
                "dtype": str(vectors.dtype),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
            write_atomic(path, data)
            write_atomic(path.with_suffix(".json"), json_text(info).encode("utf-8"))
        except OSError as e:
            # what was written goes: a batch without its metadata is no entry, a new folder no folder
            for done in (path, model_json) if made_folder else (path,):
                with contextlib.suppress(OSError):
                    done.unlink(missing_ok=True)
            if made_folder:
                with contextlib.suppress(OSError):
                    self.folder.rmdir()
            warn_once(
                f"write:{self.folder}",
                f"could not write the cache entry {path} ({e.strerror or e}); the run goes on with the vectors "
                f"it computed, not cached (later failures under {self.folder} are not reported again)",
            )

    def lookup(self, texts: Sequence[str], kwargs: dict[str, Any]) -> tuple[Path, np.ndarray | None]:
        """Where the vectors of one embedder call on ``texts`` with ``kwargs`` are cached, and those vectors
        when they are there and sound (a damaged entry warns and reads as None). Counts nothing."""
        settings = {k: v for k, v in kwargs.items() if k != "show_progress_bar"}
        path = self.folder / f"{texts_key(texts, settings)}.npy"
        return path, self._read(path, len(texts))

    def keep(self, path: Path, vectors: np.ndarray) -> np.ndarray:
        """Cache ``vectors`` computed for the call :meth:`lookup` gave ``path`` for, and return them as the
        cache would read them back (float32 when they are floats). Only what reads back as valid is
        stored: a model's NaN vectors or a ragged result are returned as the model gave them, uncached."""
        if vectors.dtype.kind == "f":
            vectors = vectors.astype(np.float32, copy=False)
        storable = vectors.ndim == 2 and vectors.shape[1] > 0
        if storable and (vectors.dtype.kind != "f" or np.isfinite(vectors).all()):
            self._dim = self._dim or vectors.shape[1]
            self._store(path, vectors)
        return vectors

    def embed_array(self, data: Sequence[str], **kwargs: Any) -> np.ndarray:
        """The vectors of ``data`` as one array (float32 for float vectors), from the cache or computed and
        cached."""
        path, cached = self.lookup(data, kwargs)
        if cached is not None:
            self.hits += 1
            return cached
        vectors = np.asarray(self.inner.embed(list(data), **kwargs))
        self.misses += 1
        if vectors.ndim == 2 and vectors.shape[0] == len(data):
            return self.keep(path, vectors)
        return vectors.astype(np.float32) if vectors.dtype.kind == "f" else vectors

    def embed(self, data: list[Any], **kwargs: Any) -> list[list[float]]:
        if not all(isinstance(t, str) for t in data):  # images: not cached
            return self.inner.embed(data, **kwargs)
        return self.embed_array(data, **kwargs).tolist()


def embedding_model_meta(embedder: Any) -> dict[str, Any]:
    """The key parameters of a SentenceTransformers embedder: its model and every setting that changes a
    vector (not the progress bar, token or device)."""
    params = dict(embedder.to_dict().get("init_parameters") or {})
    for volatile in ("progress_bar", "token", "device"):
        params.pop(volatile, None)
    return {"model": params.get("model"), "parameters": params}


def embedding_cache_folder(embedder: Any) -> Path:
    """The cache folder of a SentenceTransformers embedder, keyed by its model and parameters. Nothing is
    created here: the folder is written with its first batch."""
    params = embedding_model_meta(embedder)["parameters"]
    key = dict(params, model=_model_identity(str(params.get("model"))), cache_format=FORMAT)
    return cache_root() / "embeddings" / _digest(key)


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
        files[path.relative_to(folder).as_posix()] = [size, file_sha256(path) if small else None]
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


__all__ = [
    "KINDS",
    "CacheClearing",
    "CacheEntry",
    "CacheWarning",
    "CachingEmbeddingBackend",
    "LeftAlone",
    "PrecomputedQueryBackend",
    "cache_entries",
    "cache_root",
    "clear_cache",
    "clear_cache_report",
    "embed_queries_in_batches",
    "embedding_cache_folder",
    "embedding_model_meta",
    "texts_key",
    "write_entry",
]
