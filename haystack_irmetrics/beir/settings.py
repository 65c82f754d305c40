"""The configuration of an ``irmetrics beir`` run as one value, built once by the CLI or the API.

:class:`BeirSettings` holds what :func:`~haystack_irmetrics.beir.runner.run_beir` and
:func:`~haystack_irmetrics.beir.suite.run_beir_suite` are told beyond the datasets and the output
folder: the suite passes it to each dataset's run, and the run to its phases (load, index, retrieve,
evaluate). :meth:`BeirSettings.configuration` is the fingerprint ``summary.json`` and the checkpoint
record (:func:`~haystack_irmetrics.beir.checkpoint.run_configuration`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..checks import whole
from ..core import DEFAULT_K_VALUES
from ..errors import PipelineError
from .checkpoint import run_configuration

#: Documents retrieved per query unless told otherwise (capped at the number of indexed documents).
DEFAULT_TOP_K = 1000


@dataclass(frozen=True)
class BeirSettings:
    """How every dataset of a run is indexed, retrieved and evaluated (the parameters of
    :func:`~haystack_irmetrics.beir.runner.run_beir`, whose docstring describes each one).

    ``strict_docs`` is resolved already (the deprecated ``allow_missing_docs`` is read by ``run_beir``
    and ``run_beir_suite``); ``checkpoint_every`` is used only with an output folder.

    ``batch_size``, ``precision`` and ``device`` are how the SentenceTransformers embedders run
    (:mod:`haystack_irmetrics.beir.devices`); ``None`` leaves each as the pipeline and the device found say.

    :raises PipelineError: when ``top_k``, ``chunk_words`` or ``batch_size`` is not a positive integer or
        ``None``, ``chunk_overlap`` is not an int, ``precision`` is not one of :data:`PRECISIONS` or ``device``
        is not a device name (whether the device exists is checked when the pipelines load).
    """

    retriever: str | os.PathLike[str] = "bm25"
    split: str = "test"
    k_values: Sequence[int] = DEFAULT_K_VALUES
    top_k: int | None = DEFAULT_TOP_K
    model: str | None = None
    chunk_words: int | None = None
    chunk_overlap: int = 0
    progress: bool | None = None
    strict_docs: bool = False
    data_dir: str | os.PathLike[str] | None = None
    download: bool = True
    allowed_modules: Sequence[str] = ()
    checkpoint_every: int | None = None
    overwrite: bool = False
    no_index: bool = False
    cache: bool = True
    #: ``DocumentJoiner`` init parameters for the pipeline's one joiner (a tuned fusion), or None; a joiner YAML's
    #: path (as ``irmetrics fuse --joiner-yaml`` writes it) is read into them.
    joiner: Mapping[str, Any] | str | os.PathLike[str] | None = None
    #: Texts per forward pass of every SentenceTransformers embedder (None: the pipeline's, else the device's default).
    batch_size: int | None = None
    #: The embedders' weights and arithmetic: ``float32``, ``float16``, ``bfloat16`` (None: the model's own).
    precision: str | None = None
    #: Where the embedders run: ``cpu``, ``cuda``, ``cuda:N``, ``mps`` or several, comma-separated (None: the device found).
    device: str | None = None

    def __post_init__(self) -> None:
        from .devices import check_device, check_precision

        for name, value in (
            ("top_k", self.top_k),
            ("chunk_words", self.chunk_words),
            ("the batch size", self.batch_size),
        ):
            if value is not None:  # None: the pipeline's, no chunking, the embedder's own
                whole(value, name, least=1, error=PipelineError)
        check_precision(self.precision)
        object.__setattr__(self, "device", check_device(self.device))
        whole(self.chunk_overlap, "chunk_overlap", error=PipelineError)
        object.__setattr__(self, "k_values", tuple(self.k_values))
        object.__setattr__(self, "allowed_modules", tuple(self.allowed_modules))
        if self.joiner is not None:
            from .pipelines import check_joiner

            joiner = joiner_setting(self.joiner) if isinstance(self.joiner, str | os.PathLike) else self.joiner
            object.__setattr__(self, "joiner", check_joiner(joiner, "joiner"))

    def configuration(
        self,
        folder: str | os.PathLike[str] | None,
        split: str,
        pipeline_sha256: str,
        *,
        queries_sha256: str | None = None,
        previous: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The configuration fingerprint of one dataset's run with these settings (``summary.json``'s
        ``configuration`` and the checkpoint's ``config.json``); the arguments are
        :func:`~haystack_irmetrics.beir.checkpoint.run_configuration`'s that depend on the dataset."""
        return run_configuration(self, folder, split, pipeline_sha256, queries_sha256=queries_sha256, previous=previous)


def joiner_setting(joiner: Mapping[str, Any] | str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """A ``joiner`` argument as ``DocumentJoiner`` init parameters: a path is read as a joiner YAML."""
    if joiner is None or isinstance(joiner, Mapping):
        return None if joiner is None else dict(joiner)
    from .pipelines import read_joiner

    return read_joiner(joiner)


__all__ = ["DEFAULT_TOP_K", "BeirSettings", "joiner_setting"]
