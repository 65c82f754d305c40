"""Where and how the SentenceTransformers embedders of a BEIR run compute: device, precision, batch size.

``irmetrics beir --device cuda:1 --precision bfloat16 --batch-size 512`` (``run_beir(device=...,
precision=..., batch_size=...)``) is written into every SentenceTransformers embedder of the pipelines
as Haystack's own init parameters, so a pipeline YAML can say the same:

- ``--device D`` is ``device: {type: single, device: D}``; several devices (``cuda:0,cuda:1``) embed the
  corpus in sentence-transformers' multi-process pool, one process per device: the document embedder's
  ``encode_kwargs: {device: [cuda:0, cuda:1]}`` (the query embedder runs on the first device).
- ``--precision P`` is ``model_kwargs: {dtype: P}``: the model's weights and arithmetic. Left out, the
  model computes in its own dtype (all-MiniLM-L6-v2: float32). The vectors are float32 whatever the
  precision; float16 and bfloat16 change them (docs/beir.md gives the nDCG@10 they cost on SciFact).
- ``--batch-size N`` is ``batch_size: N``. An embedder without one gets :data:`DEFAULT_BATCH_SIZE` of
  its device (the device found, as Haystack picks it: the first GPU, else Apple's MPS, else the CPU).

Every one of these parameters but the device is part of the embedding cache's key
(:mod:`haystack_irmetrics.beir.cache`): a float16 run never reads vectors a float32 run wrote.
"""

from __future__ import annotations

import json
import re
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checks import choice
from ..errors import PipelineError, shorten

#: The precisions an embedder computes in.
PRECISIONS = ("float32", "float16", "bfloat16")
#: Texts per forward pass when neither the pipeline nor the run sets a batch size, by kind of device. CPU: the
#: fastest measured (all-MiniLM-L6-v2 on 2,000 SciFact documents, 2 cores: 16 and 32 alike, 64 and 128 slower;
#: 32 keeps the vectors and caches of earlier runs). CUDA: 256, until benchmarks/gpu_dense.py's sweep of batch
#: sizes on a GPU says otherwise; MPS: 64, not measured (docs/beir.md, "Dense retrieval on a GPU").
DEFAULT_BATCH_SIZE = {"cpu": 32, "cuda": 256, "mps": 64}
_DEVICE = re.compile(r"(cpu|mps|cuda(:\d{1,3})?)\Z")


def check_precision(value: Any) -> str | None:
    """``value`` as a precision (one of :data:`PRECISIONS`, or None: the model's own).

    :raises PipelineError: naming the value and the choices.
    """
    return None if value is None else choice(value, "precision", PRECISIONS, error=PipelineError)


def check_device(value: Any) -> str | None:
    """``value`` as a device name: ``cpu``, ``cuda``, ``cuda:N``, ``mps``, or several comma-separated (spaces
    dropped), or None (the device found). Whether the device exists is :func:`check_available`'s to say.

    :raises PipelineError: naming the value.
    """
    if value is None:
        return None
    parts = [p.strip() for p in value.split(",")] if isinstance(value, str) else []
    if not parts or not all(_DEVICE.match(p) for p in parts):
        raise PipelineError(
            f"device must be cpu, cuda, cuda:N, mps, or several comma-separated (cuda:0,cuda:1), got "
            f"{shorten(repr(value))}"
        )
    return ",".join(parts)


def check_available(device: str) -> None:
    """Whether torch can use every device of ``device`` (a name :func:`check_device` accepted).

    :raises PipelineError: naming the device that is not there and what torch sees.
    """
    import torch

    for part in device.split(","):
        kind, _, number = part.partition(":")
        if kind == "cuda":
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if count == 0:
                raise PipelineError(f"device {part!r}: torch {torch.__version__} sees no CUDA device")
            if number and int(number) >= count:
                raise PipelineError(f"device {part!r}: torch sees {count} CUDA device(s), cuda:0 to cuda:{count - 1}")
        elif kind == "mps" and not torch.backends.mps.is_available():
            raise PipelineError(f"device {part!r}: torch {torch.__version__} has no MPS device here")


def found_device() -> str:
    """The device Haystack gives an embedder that names none (the first GPU, else MPS, else the CPU)."""
    from haystack.utils import ComponentDevice

    return ComponentDevice.resolve_device(None).to_torch_str()


def guessed_device() -> str:
    """The device :func:`found_device` gives, guessed without importing torch (a second of a run whose vectors
    are all cached, which loads no model): the first GPU where an NVIDIA device is visible and torch is a
    CUDA build, MPS on Apple silicon, else the CPU. An embedder given this guess asks torch when its model
    loads (:class:`~haystack_irmetrics.beir.models.LazyModel`); the guess sets only the default batch size."""
    import glob
    import importlib.metadata
    import os
    import platform
    import sys

    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "cpu"
    nvidia = glob.glob("/dev/nvidia[0-9]*") or os.path.isdir("/proc/driver/nvidia/gpus")
    if nvidia and "+cpu" not in version and os.environ.get("CUDA_VISIBLE_DEVICES") not in ("", "-1"):
        return "cuda:0"
    if sys.platform == "darwin" and platform.machine() == "arm64" and os.getenv("HAYSTACK_MPS_ENABLED") != "false":
        return "mps"
    return "cpu"


def model_dtype(model: str) -> str | None:
    """The dtype a local model folder's ``config.json`` stores its weights in (float32 when it says none), or
    None when that is not known (a Hugging Face name, an unreadable file)."""
    try:
        config = json.loads((Path(model) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    dtype = config.get("dtype", config.get("torch_dtype")) if isinstance(config, dict) else None
    return "float32" if dtype is None else str(dtype).removeprefix("torch.")


@dataclass(frozen=True)
class EmbedderOptions:
    """How a run's SentenceTransformers embedders compute (the run's ``--batch-size``, ``--precision`` and
    ``--device``; None: as the pipeline says, else the device's default)."""

    batch_size: int | None = None
    precision: str | None = None
    device: str | None = None

    def check(self) -> EmbedderOptions:
        """The options, checked, their device available.

        :raises PipelineError: on a value that is not one, or a device torch does not have.
        """
        check_precision(self.precision)
        device = check_device(self.device)
        if device is not None:
            check_available(device)
        return EmbedderOptions(self.batch_size, self.precision, device)

    def apply(self, params: MutableMapping[str, Any], *, document: bool, guess: str | None = None) -> bool:
        """Write the options into an embedder's init ``params`` (in place; ``params["model"]`` resolved).

        :param document: a document embedder (it embeds the corpus on every device; a text embedder on the first).
        :param guess: the device of an embedder that names none, written into it (:func:`guessed_device`:
            Haystack would import torch to find it); None: Haystack finds it (:func:`found_device`).
        :returns: whether ``guess`` was written (the device is to be found again when the model loads).
        """
        devices = self.device.split(",") if self.device else []
        guessed = False
        if devices:
            params["device"] = {"type": "single", "device": devices[0]}
            if document and len(devices) > 1:
                params["encode_kwargs"] = {**(params.get("encode_kwargs") or {}), "device": devices}
        elif guess is not None and params.get("device") is None:
            params["device"] = {"type": "single", "device": guess}
            guessed = True
        if self.batch_size is not None:
            params["batch_size"] = self.batch_size
        elif params.get("batch_size") is None:
            named = params.get("device")
            device = named.get("device") if isinstance(named, dict) else None
            kind = str(device or found_device()).partition(":")[0]
            params["batch_size"] = DEFAULT_BATCH_SIZE.get(kind, DEFAULT_BATCH_SIZE["cpu"])
        if self.precision is not None:
            kwargs = dict(params.get("model_kwargs") or {})
            named = kwargs.get("dtype", kwargs.get("torch_dtype"))
            # the model's own dtype asked for: nothing written, so the cache key stays that of a run without it
            if named is not None or model_dtype(str(params.get("model"))) != self.precision:
                kwargs.pop("torch_dtype", None)
                kwargs["dtype"] = self.precision
                params["model_kwargs"] = kwargs
        return guessed


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "PRECISIONS",
    "EmbedderOptions",
    "check_available",
    "check_device",
    "check_precision",
    "found_device",
    "guessed_device",
    "model_dtype",
]
