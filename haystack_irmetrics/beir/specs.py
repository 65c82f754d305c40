"""A BEIR pipeline's spec rewritten before it loads: every in-process store's index made private to the run,
every SentenceTransformers embedder given its model and the run's device, precision and batch size
(:class:`~haystack_irmetrics.beir.devices.EmbedderOptions`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._builtin import DEFAULT_MODEL
from .devices import EmbedderOptions, guessed_device
from .models import resolve_model

#: In-process stores whose indexes a run renames to private ones (``--no-index`` leaves them as named).
_PRIVATE_STORES = ("InMemoryDocumentStore", "BM25sDocumentStore", "FaissDocumentStore")
_ST_EMBEDDERS = ("SentenceTransformersDocumentEmbedder", "SentenceTransformersTextEmbedder")


def rewrite_spec(
    node: Any,
    index_map: dict[Any, str] | None,
    run_id: str,
    model: str | None,
    show: bool,
    models: list[str],
    dim: int | None = None,
    options: EmbedderOptions | None = None,
    guessed: list[dict[str, Any]] | None = None,
) -> None:
    """Give every in-process store a private shared index (unless ``index_map`` is None) and every
    embedder its model and the run's :class:`~haystack_irmetrics.beir.devices.EmbedderOptions`, in place;
    with ``guessed``, an embedder naming no device gets the guessed one and its parameters are added there."""
    if isinstance(node, list):
        for item in node:
            rewrite_spec(item, index_map, run_id, model, show, models, dim, options, guessed)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    params = node.get("init_parameters")
    if isinstance(kind, str) and isinstance(params, dict):
        cls = kind.rsplit(".", 1)[-1]
        if cls in _PRIVATE_STORES and index_map is not None:
            old = params.get("index")
            if old in index_map.values():  # the same mapping reached twice (a YAML alias): renamed already
                return
            if old not in index_map:
                index_map[old] = f"{old or 'beir'}-{run_id}-{len(index_map)}"
            params["index"] = index_map[old]
            params["shared"] = True
        elif dim is not None and "embedding_dim" in params:  # a vector store sized for the default model
            params["embedding_dim"] = dim
        elif cls in _ST_EMBEDDERS:
            resolved = resolve_model(model or params.get("model") or DEFAULT_MODEL)
            params["model"] = resolved
            if Path(resolved).is_dir():
                params["local_files_only"] = True
            if cls == "SentenceTransformersDocumentEmbedder":
                params["progress_bar"] = show
            else:
                params.setdefault("progress_bar", False)
            guess = guessed_device() if guessed is not None else None
            if (options or EmbedderOptions()).apply(params, document=cls == _ST_EMBEDDERS[0], guess=guess):
                guessed.append(params)  # type: ignore[union-attr]
            models.append(resolved)
    for key, value in node.items():
        if key != "type":
            rewrite_spec(value, index_map, run_id, model, show, models, dim, options, guessed)


def guessed_names(spec: dict[str, Any], guessed: list[dict[str, Any]]) -> list[str]:
    """The components of ``spec`` whose init parameters are among ``guessed`` (by identity)."""
    components = spec.get("components") or {}
    return [
        name
        for name, comp in components.items()
        if isinstance(comp, dict) and any(comp.get("init_parameters") is g for g in guessed)
    ]


__all__ = ["guessed_names", "rewrite_spec"]
