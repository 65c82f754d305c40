"""A package whose names load on first use (PEP 562): importing it costs nothing until a name is read.

The command line builds every subcommand's parser for any command, and those parsers read names from the
fusion, pooling and click registries; with eager package imports each ``irmetrics`` process paid for all
three packages (about 40 ms) whatever it ran.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from importlib.util import find_spec
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public names live in the modules ``homes`` gives
    (``{name: ".module"}``); a submodule is found under its own name too, as after an eager import. A name
    that is also a submodule's must be imported by the package itself: importing the submodule binds the
    package's attribute to the module, and ``__getattr__`` is then never asked."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is not None:
            return getattr(import_module(home, package), name)
        if not name.startswith("__") and find_spec(f"{package}.{name}") is not None:
            return import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*homes, *import_module(package).__dict__})

    return __getattr__, __dir__


__all__ = ["lazy_names"]
