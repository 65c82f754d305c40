"""Optional dependencies: one check that names the pip extra a feature needs.

Heavy packages are imported where they are used; features call :func:`require` first, so a missing
one is a :class:`~haystack_irmetrics.errors.MissingDependencyError` naming what to install (the CLI
exits 2 with it) instead of a bare ``ModuleNotFoundError`` deep in a call.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

from .errors import MissingDependencyError

#: The extra of ``pyproject.toml`` that installs each optional package. bm25s and PyStemmer (``Stemmer``)
#: are base dependencies (the default BEIR engine); their ``bm25`` extra is kept as an alias, so the hint
#: for an install that lost them still works.
EXTRA_OF = {
    "bm25s": "bm25",
    "Stemmer": "bm25",
    "polars": "columnar",
    "pyarrow": "columnar",
    "scipy": "stats",
    "matplotlib": "plots",
    "starlette": "assess",
    "uvicorn": "assess",
    "beir": "oracles",
    "haystack_integrations.components.embedders.sentence_transformers": "dense",
}


#: Extras that pull torch (through sentence-transformers): pip would pick a multi-GB CUDA build by itself.
TORCH_EXTRAS = frozenset({"dense", "oracles"})
#: The CPU build of torch the project is tested with.
CPU_TORCH = "torch==2.13.0"


def install_hint(extra: str) -> str:
    """How to install ``extra``: from PyPI and from a clone (editable), torch's CPU build first where it is needed.

    Usage::

        >>> print(install_hint("feedback"))
        pip install 'haystack-irmetrics[feedback]' (from PyPI) or pip install -e ".[feedback]" (in a clone)
    """
    both = f"pip install 'haystack-irmetrics[{extra}]' (from PyPI) or pip install -e \".[{extra}]\" (in a clone)"
    if extra in TORCH_EXTRAS:
        return (
            f"install a CPU build of torch first, e.g. pip install {CPU_TORCH} (otherwise pip pulls a multi-GB "
            f"CUDA build), then {both}"
        )
    return both


def require(*modules: str, purpose: str, extra: str | None = None, hint: str = "") -> None:
    """Import ``modules`` (a no-op once imported) or raise naming the missing ones and the extra.

    :param purpose: what needs them ("feedback logs", "paired_t_test"); the message starts with it.
    :param extra: the pip extra to suggest; default: the extra of the first missing module.
    :param hint: a sentence appended to the message (another way to get there).
    :raises MissingDependencyError: if any of ``modules`` cannot be imported.
    """
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        wanted = extra or EXTRA_OF.get(missing[0], "")
        install = install_hint(wanted) if wanted else f"pip install {' '.join(missing)}"
        names = " and ".join(missing)
        verb = "is" if len(missing) == 1 else "are"
        message = f"{purpose}: {names} {verb} not installed (needed here); {install}"
        raise MissingDependencyError(f"{message}. {hint}" if hint else message)


def require_feedback(purpose: str) -> None:
    """polars and pyarrow, which every feedback reader and aggregation uses (the ``feedback`` extra)."""
    require("polars", "pyarrow", purpose=purpose, extra="feedback")


class LazyModule:
    """A stand-in for the module ``name`` that imports it when an attribute is first read.

    A package binds the names once (``pl = LazyModule("polars", purpose="click logs", extra="clicks")``) and
    uses them as the modules (``pl.col``), so importing it stays light; a missing module is a
    :class:`~haystack_irmetrics.errors.MissingDependencyError` naming that package's extra. For type checkers
    the modules import the real packages under ``TYPE_CHECKING`` instead.
    """

    def __init__(self, name: str, *, purpose: str, extra: str) -> None:
        self._name = name
        self._purpose = purpose
        self._extra = extra

    def _module(self) -> ModuleType:
        module = sys.modules.get(self._name)
        if module is None:  # not imported yet, or hidden (``None``): require names the extra
            require(self._name, purpose=self._purpose, extra=self._extra)
            module = importlib.import_module(self._name)
        return module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._module(), attr)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"
