"""How fusion's messages name the arguments: as Python passes them (``fuse``'s keywords: ``params=``,
``qrels=``), or as ``irmetrics fuse`` does (its flags: ``--param``, ``--qrels``) within
:func:`command_line_names`. One message per error, the argument spelled for whoever called.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_SPELLINGS: dict[str, dict[str, str]] = {
    "python": {
        "param": "params={{{key!r}: {value}}}",
        "k": "rrf_k={value}",
        "qrels": "qrels=",
        "weights": "weights=",
        "depth": "depth={value}",
        "folds": "folds={value}",
        "step": "step={value}",
        "grid": "grid=",
        "max_configurations": "max_configurations={value}",
    },
    "cli": {
        "param": "--param {key}={value}",
        "k": "--rrf-k {value}",
        "qrels": "--qrels FILE",
        "weights": "--weights",
        "depth": "--depth {value}",
        "folds": "--folds {value}",
        "step": "--grid {value}",
        "grid": "--grid",
        "max_configurations": "--max-configurations {value}",
    },
}
_SPELLING: ContextVar[str] = ContextVar("fusion_argument_spelling", default="python")


def argument(name: str, key: str = "", value: object = "...") -> str:
    """How a message names the argument ``name`` (``"param"`` with ``key``: a method's parameter), with
    ``value``: its Python keyword, or its ``irmetrics fuse`` flag within :func:`command_line_names`."""
    return _SPELLINGS[_SPELLING.get()][name].format(key=key, value=value)


@contextmanager
def command_line_names() -> Iterator[None]:
    """Within the block, fusion's messages name ``irmetrics fuse``'s flags (``--param``, ``--qrels``, ...)
    instead of Python's keywords (``params=``, ``qrels=``)."""
    token = _SPELLING.set("cli")
    try:
        yield
    finally:
        _SPELLING.reset(token)


__all__ = ["argument", "command_line_names"]
