"""How fusion's messages name the arguments: as Python passes them (``fuse``'s keywords: ``params=``,
``qrels=``), or as ``irmetrics fuse`` does (its flags: ``--param``, ``--qrels``) within
:func:`command_line_names`. One message per error, the argument spelled for whoever called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from ..errors import FusionParameterError

T = TypeVar("T")

_SPELLINGS: dict[str, dict[str, str]] = {
    "python": {
        "param": "params={{{key!r}: {value}}}",
        "k": "rrf_k={value}",
        "rrf_k": "rrf_k",
        "qrels": "qrels=",
        "give_qrels": "qrels",
        "weights": "weights=",
        "depth": "depth={value}",
        "folds": "folds={value}",
        "step": "step={value}",
        "grid": "grid=",
        "max_configurations": "max_configurations={value}",
        "output": "output=",
        "optimize": "optimize=True",
        "joiner_yaml": "joiner_yaml=",
    },
    "cli": {
        "param": "--param {key}={value}",
        "k": "--rrf-k {value}",
        "rrf_k": "--rrf-k",
        "qrels": "--qrels FILE",
        "give_qrels": "--qrels",
        "weights": "--weights",
        "depth": "--depth {value}",
        "folds": "--folds {value}",
        "step": "--grid {value}",
        "grid": "--grid",
        "max_configurations": "--max-configurations {value}",
        "output": "-o FUSED.trec",
        "optimize": "--optimize",
        "joiner_yaml": "--joiner-yaml OUT.yaml",
    },
}
_SPELLING: ContextVar[str] = ContextVar("fusion_argument_spelling", default="python")


def argument(name: str, key: str = "", value: object = "...") -> str:
    """How a message names the argument ``name`` (``"param"`` with ``key``: a method's parameter), with
    ``value``: its Python keyword, or its ``irmetrics fuse`` flag within :func:`command_line_names`."""
    return _SPELLINGS[_SPELLING.get()][name].format(key=key, value=value)


def hinted(check: Callable[[], T], hint: str) -> T:
    """What ``check()`` returns; its refusal (a :mod:`~haystack_irmetrics.checks` message) said again with how
    the argument is given, ``hint`` (``rrf_k=0``, ``--folds 2``), after it."""
    try:
        return check()
    except FusionParameterError as e:
        raise FusionParameterError(f"{e} ({hint})") from None


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
