"""Import Haystack without importing torch (``irmetrics beir`` does, before anything imports Haystack).

``import haystack`` imports ``haystack.utils.device``, which runs ``import torch`` whenever torch is
installed: 1.2 s and 200 MB of a BM25 run on SciFact, although only components that run a model use
torch. :func:`import_haystack_without_torch` imports Haystack while ``sys.modules["torch"]`` is a
stand-in, then removes the stand-in: ``haystack.utils.device`` keeps it as its ``torch``, and every
attribute it reads there (``torch.device``, ``torch.cuda``...) is the real torch's, imported at that
first read. Everything imported afterwards (sentence-transformers, a user's component) imports the real
torch as usual. Haystack is not patched and ``sys.modules`` is left as it was, plus Haystack.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types


class _TorchStandIn(types.ModuleType):
    """The ``torch`` bound while Haystack is imported: attribute reads go to the real torch."""

    def __getattr__(self, name: str) -> object:
        if sys.modules.get("torch") is self:  # read while Haystack is being imported: torch is needed now
            del sys.modules["torch"]
        return getattr(importlib.import_module("torch"), name)


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


__all__ = ["import_haystack_without_torch"]
