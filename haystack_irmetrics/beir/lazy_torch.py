"""Import Haystack without importing torch (``irmetrics beir`` does, before anything imports Haystack).

``import haystack`` imports ``haystack.utils.device``, which runs ``import torch`` whenever torch is
installed: 1.2 s and 200 MB of a BM25 run on SciFact, although only components that run a model use
torch. :func:`import_haystack_without_torch` imports Haystack while ``sys.modules["torch"]`` is a
stand-in, then removes the stand-in: ``haystack.utils.device`` keeps it as its ``torch``, and every
attribute it reads there (``torch.device``, ``torch.cuda``...) is the real torch's, imported at that
first read. Everything imported afterwards (sentence-transformers, a user's component) imports the real
torch as usual. Haystack is not patched and ``sys.modules`` is left as it was, plus Haystack.

:func:`deferred_import` does the same for a module that a component's module imports names from:
within the block, ``from sentence_transformers import SentenceTransformer`` binds a stand-in that imports
sentence-transformers when it is first called or read (and ``import torch``, in ``haystack.utils.hf``,
binds the stand-in above). A dense run whose vectors are all cached loads no model, and so never imports
sentence-transformers, transformers or torch: seconds of a rerun's start.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _TorchStandIn(types.ModuleType):
    """The module (``torch``) bound while Haystack is imported: attribute reads go to the real module."""

    def __getattr__(self, name: str) -> object:
        if sys.modules.get(self.__name__) is self:  # read while Haystack is being imported: it is needed now
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


def import_haystack_without_torch() -> bool:
    """Import Haystack, leaving torch to be imported at its first use; returns whether torch was deferred.

    Nothing is deferred when Haystack or torch is imported already, or torch is not installed: Haystack
    is then imported as usual. When Haystack cannot be imported, nothing is changed: the code that needs
    it reports that.
    """
    if "haystack" in sys.modules or "torch" in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    stand_in = None
    if spec is not None:
        stand_in = _TorchStandIn("torch")
        # The import statement reads __spec__ (initialized?) and a submodule import reads __path__: both
        # answer without importing torch (an empty path: no torch submodule is imported through the stand-in).
        stand_in.__spec__ = spec
        stand_in.__path__ = []
        sys.modules["torch"] = stand_in
    try:
        importlib.import_module("haystack")
    except ImportError:
        return False
    finally:
        if stand_in is not None and sys.modules.get("torch") is stand_in:
            del sys.modules["torch"]
    return stand_in is not None and "torch" not in sys.modules


class _Deferred:
    """A name imported from a module at its first use: calling it or reading one of its attributes imports the
    module (the real one, once the stand-in is gone) and hands the call on."""

    def __init__(self, module: str, name: str) -> None:
        self._module = module
        self._name = name

    def _target(self) -> Any:
        if isinstance(sys.modules.get(self._module), _ModuleStandIn):  # used within the block: import it now
            del sys.modules[self._module]
        return getattr(importlib.import_module(self._module), self._name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._target(), name)


class _ModuleStandIn(types.ModuleType):
    """The module bound while :func:`deferred_import`'s block runs: every name read from it is :class:`_Deferred`."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Deferred(self.__name__, name)


@contextmanager
def deferred_import(module: str, *, names: bool = True) -> Iterator[None]:
    """Within the block, names imported from ``module`` (``from module import X``) are stand-ins that import
    it at their first use; with ``names=False``, ``import module`` binds a stand-in whose attributes, once read,
    are the real module's (``import torch`` then ``torch.dtype``, as :func:`import_haystack_without_torch`
    does it). After the block ``sys.modules`` is as it was. Nothing is deferred when the module is imported
    already or not installed."""
    try:
        spec = None if module in sys.modules else importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        yield
        return
    stand_in = _ModuleStandIn(module) if names else _TorchStandIn(module)
    stand_in.__spec__ = spec
    stand_in.__path__ = []  # a submodule imported within the block is not found (the embedders import none)
    sys.modules[module] = stand_in
    try:
        yield
    finally:
        if sys.modules.get(module) is stand_in:
            del sys.modules[module]


__all__ = ["deferred_import", "import_haystack_without_torch"]
