"""The ``irmetrics`` command line: the parser of every subcommand, ``--version`` and :func:`main`.

Building the parser imports only the standard library (each subcommand imports its work when it
runs), so ``irmetrics --help`` and ``irmetrics evaluate`` load neither haystack, polars, matplotlib
nor scipy.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import IRMetricsError
from . import (
    assess,
    beir,
    cache,
    clicks,
    compare,
    evaluate,
    feedback,
    fuse,
    interleave,
    judge,
    plot,
    pool,
    power,
    report,
    usefulness,
)
from .args import Parser, show_defaults

#: The subcommands in the order ``irmetrics --help`` lists them; each module has ``add_subcommand`` and ``run``,
#: and each command sets ``func`` (its ``run``) and ``paths`` (what it reads and writes: a
#: :class:`~haystack_irmetrics.io.output.Paths`, checked by :func:`main` before ``func`` runs).
SUBCOMMANDS = (
    evaluate,
    beir,
    cache,
    compare,
    power,
    report,
    feedback,
    plot,
    judge,
    usefulness,
    assess,
    fuse,
    pool,
    clicks,
    interleave,
)


def package_version() -> str:
    """The installed distribution's version (package metadata), else the package's ``__version__``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("haystack-irmetrics")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from .. import __version__

        return f"{__version__} (not installed)"


class _Version(argparse.Action):
    """``--version``: the version is looked up only when asked for (package metadata costs ~20 ms per run)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"{parser.prog} {package_version()}")  # on stdout, as argparse's own version action
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The ``irmetrics`` parser with every subcommand of :data:`SUBCOMMANDS`."""
    parser = Parser(prog="irmetrics", description="Exact retrieval evaluation (BEIR / trec_eval).")
    parser.add_argument("--version", action=_Version, help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in SUBCOMMANDS:
        command.add_subcommand(sub)
    show_defaults(parser)
    _check_declared(parser)
    return parser


def _check_declared(parser: argparse.ArgumentParser, prog: str = "irmetrics") -> None:
    """Every command that runs declares what it reads and writes (``paths``), so that :func:`main` can refuse
    an output that would replace an input: a command without it fails at once, whatever its arguments."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                if command.get_default("func") is not None and command.get_default("paths") is None:
                    raise TypeError(f"{prog} {name} sets func but not paths (what it reads and writes)")
                _check_declared(command, f"{prog} {name}")


class _WarningLines:
    """The package's own warnings as one ``irmetrics: warning: ...`` line on stderr (no source line), each text
    once per command (one run of several saying the same about the qrels is said once); others as Python shows
    them."""

    def __init__(self) -> None:
        self.shown: set[str] = set()

    def __call__(
        self, message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:
        if not category.__module__.startswith("haystack_irmetrics"):
            _PYTHON_SHOWWARNING(message, category, filename, lineno, file, line)
        elif str(message) not in self.shown:
            self.shown.add(str(message))
            print(f"irmetrics: warning: {message}", file=sys.stderr if file is None else file)


_PYTHON_SHOWWARNING = warnings.showwarning


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``irmetrics`` on ``argv`` (default: the process's arguments); the exit status: 0, or 2 on bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _WarningLines()
            args.paths(args).check()  # before any work: no output of the command may replace one of its inputs
            return args.func(args)
    except IRMetricsError as e:
        print(f"irmetrics: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except OSError as e:  # a path that cannot be read or written (missing, a directory, no permission)
        print(f"irmetrics: error: {e}", file=sys.stderr)
        return 2


__all__ = ["SUBCOMMANDS", "build_parser", "main", "package_version"]
