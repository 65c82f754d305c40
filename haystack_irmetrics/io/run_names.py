"""What a run is called: the one ``[NAME=]RUN`` syntax and the one name of an unnamed run, for every command
and function that labels runs (``irmetrics compare``, ``report``, ``plot``, ``judge``, ``feedback``, ``fuse``,
``power``; :func:`~haystack_irmetrics.compare.compare_many`, :func:`~haystack_irmetrics.report.build_report`,
:func:`~haystack_irmetrics.fusion.pack_runs`).

* ``NAME=RUN`` names the run ``NAME``; an argument that names an existing file or folder is that path, ``=`` in
  it or not, and so is one with nothing before its first ``=``.
* An unnamed run is named after its path: a folder (``irmetrics beir --output``) by its name, a file by its name
  less its run extensions (:data:`RUN_EXTENSIONS`, as many as it ends with: ``bm25.run.trec.gz`` is ``bm25``).
  Runs whose names clash take as many of their parent folders as tell them apart (``bm25/scifact``,
  ``dense/scifact``: :func:`~haystack_irmetrics.io.beir_outputs.tell_apart`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError, shorten
from .beir_outputs import tell_apart

#: The extensions an unnamed run file's name loses, in any case, as many as it ends with.
RUN_EXTENSIONS = (".gz", ".trec", ".run", ".res", ".txt", ".tsv", ".yaml", ".yml")


def split_named(spec: str) -> tuple[str | None, str]:
    """``(NAME, RUN)`` of a ``[NAME=]RUN`` argument; ``NAME`` is ``None`` when the argument names no run.

        >>> split_named("bm25=runs/a.trec")
        ('bm25', 'runs/a.trec')
        >>> split_named("runs/a.trec")
        (None, 'runs/a.trec')

    :raises InvalidArgumentError: ``NAME=`` with nothing after the ``=``.
    """
    name, sep, path = spec.partition("=")
    if not sep or not name or os.path.exists(spec):
        return None, spec
    if not path:
        raise InvalidArgumentError(f"{shorten(spec)!r} names no run: write NAME=RUN (a run file or folder)")
    return name, path


def run_name(path: str | os.PathLike[str]) -> str:
    """The name of a run given by its ``path`` alone: a folder's name, a file's name less its run extensions.

    >>> run_name("runs/bm25.run.trec.gz"), run_name("runs/run.v2.trec"), run_name("runs/.trec")
    ('bm25', 'run.v2', '.trec')
    """
    p = Path(path)
    name = p.name or p.resolve().name or os.fspath(path)
    if p.is_dir():
        return name
    while True:
        lower = name.lower()
        cut = next((e for e in RUN_EXTENSIONS if lower.endswith(e) and len(name) > len(e)), None)
        if cut is None:
            return name
        name = name[: -len(cut)]


def run_names(runs: Sequence[Any], names: Sequence[str | None] | None = None) -> list[str | None]:
    """Each run's name: ``names[i]`` where given, else for a path :func:`run_name` with as many parent folders
    as tell apart the path-named runs whose names clash; ``None`` for a run that is no path and has no name
    (each caller names those its way). Names may still repeat (one path given twice): the caller says what then.

        >>> run_names(["a/bm25.trec", "b/bm25.trec", "dense.trec"])
        ['a/bm25', 'b/bm25', 'dense']
        >>> run_names(["a/bm25.trec", "b/bm25.trec"], ["x", None])
        ['x', 'bm25']
    """
    given = list(names) if names is not None else [None] * len(runs)
    if len(given) != len(runs):
        raise InvalidArgumentError(f"{len(given)} names for {len(runs)} runs: {given}")
    paths = [r if n is None and isinstance(r, str | os.PathLike) else None for r, n in zip(runs, given)]
    parents = [Path(p).parent.parts if p is not None else None for p in paths]
    default = tell_apart([run_name(p) if p is not None else "" for p in paths], parents)
    return [n if n is not None else (d if p is not None else None) for n, p, d in zip(given, paths, default)]


def split_runs(
    specs: Sequence[str], names: Sequence[str] | None = None, option: str = "--names"
) -> tuple[list[str], list[str] | None]:
    """``(paths, names)`` of ``[NAME=]RUN`` arguments for a function that names unnamed runs itself by
    :func:`run_names` (``compare_many``, ``build_report``, ``pack_runs``): ``names`` is ``None`` when no run is
    named, else one name per run; ``names`` given (``--names``) are the runs' names.

    :raises InvalidArgumentError: runs named both ways (``NAME=`` and ``option``).
    """
    pairs = [split_named(s) for s in specs]
    paths = [p for _, p in pairs]
    given = [n for n, _ in pairs]
    if names is not None:
        if any(n is not None for n in given):
            raise InvalidArgumentError(f"name the runs either as NAME=RUN or with {option}, not both")
        return paths, list(names)
    if all(n is None for n in given):
        return paths, None
    return paths, [str(n) for n in run_names(paths, given)]


def label_runs(specs: Sequence[str]) -> dict[str, str]:
    """``{name: path}`` of ``[NAME=]RUN`` arguments, every run named (:func:`run_names`).

    :raises InvalidArgumentError: two runs of one name.
    """
    pairs = [split_named(s) for s in specs]
    labels = run_names([p for _, p in pairs], [n for n, _ in pairs])
    out: dict[str, str] = {}
    for label, (_, path) in zip(labels, pairs):
        assert label is not None  # every run here is a path
        if label in out:
            raise InvalidArgumentError(f"two runs are named {label!r}; label them NAME=RUN")
        out[label] = path
    return out


def read_named_runs(specs: Sequence[str]) -> dict[str, Any]:
    """``{name: run}`` of ``[NAME=]RUN`` arguments, each run read by :func:`~haystack_irmetrics.io.trec.read_run`
    and named by :func:`label_runs` (``irmetrics plot`` and ``irmetrics judge`` read their runs so).

    :raises InvalidArgumentError: two runs of one name.
    """
    from .trec import read_run

    return {name: read_run(file) for name, file in label_runs(specs).items()}


__all__ = ["RUN_EXTENSIONS", "label_runs", "read_named_runs", "run_name", "run_names", "split_named", "split_runs"]
