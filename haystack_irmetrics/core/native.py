"""The one seam to the optional compiled scan (``_rank.c``, built at install when a C compiler is there).

Every function here is an accelerated form of one step of the Python path, and answers None (or
False) where the scan is not used or declines the input: the caller then takes its own, visible
Python path, which computes the same values and raises the typed errors. The scan handles the
common input only (plain dicts and lists, exact ``str`` ids, finite float or int values); anything
else, and every error, stays with Python. The tests run both paths against the oracles.

Where it is used, and what it earns end to end: ``benchmarks/native_ops.py`` times each caller with
one operation switched off at a time (2 cores; its table is ``benchmarks/native_ops.md``). The scan
keeps only the operations whose row shows a gain:

* :func:`prepare_dicts`, dict runs: each query's judged documents looked up, its scores read and
  the judged ones ranked in both tie orders while the query is in cache: 1.2x (MS MARCO-like,
  large) to 1.6x (BEIR-like) faster than the Python path.
* :func:`read_labels`, the qrels' labels read into one array: up to 1.16x on qrels-heavy inputs
  (TREC DL-like ranked lists), 1.03x to 1.08x elsewhere.
* :func:`index_judged`, Haystack Documents (the components' path): judgments and rankings read in
  one pass, 1.2x; with :func:`index_lists`, its fallback, 2.5x to 2.7x.
* :func:`index_lists` and :func:`find_ranked`, ranked lists
  (:class:`~haystack_irmetrics.core.inputs.RankedRun`): each query's ids hashed once into a table
  and the judged ones found in it, 2.5x to 4.9x.

Two operations the scan once had, the kernels' running sums and the per-query output dicts, showed
no gain beyond the benchmark's noise (0.87x to 1.11x over three runs of every row, where switching
off an operation a caller does not use varies as much) and were removed: numpy and Python do those.

``IRMETRICS_PURE_PYTHON=1`` switches the scan off; a free-threaded build never imports it (the scan
reads lists and dicts without per-object locks, so importing it would turn the GIL back on).
"""

from __future__ import annotations

import os
import sysconfig
from typing import Any

import numpy as np

_UNSET = object()
_SCAN: Any = _UNSET


def scan() -> Any:
    """The compiled module, or None where it is not used: decided once, on first use (tests set
    ``_SCAN`` to ``_UNSET`` to decide again, or to None for the Python path)."""
    global _SCAN
    if _SCAN is _UNSET:
        _SCAN = load() if wanted() else None
    return _SCAN


def wanted() -> bool:
    """Whether to import the compiled scan at all: not when ``IRMETRICS_PURE_PYTHON`` is set (other
    than "" or "0"), nor on a free-threaded build (3.13t)."""
    return os.environ.get("IRMETRICS_PURE_PYTHON", "") in ("", "0") and not free_threaded()


def free_threaded() -> bool:
    """A free-threaded CPython build (``Py_GIL_DISABLED``), whether or not the GIL was turned on at run time."""
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def load() -> Any:
    """The built extension, or None where it was not built (no C compiler at install)."""
    try:
        from . import _rank
    except ImportError:
        return None
    return _rank


def read_labels(inner: list, out: np.ndarray) -> bool:
    """Every value of the plain dicts ``inner``, in order, into the float64 array ``out``."""
    compiled = scan()
    return compiled is not None and bool(compiled.flat_values(inner, out))


def prepare_dicts(values: list, qids: list[str], judgments: dict, drop_identical: bool) -> tuple | None:
    """A dict run's scored queries against plain-dict qrels (see ``prepare_dicts`` in ``_rank.c``)."""
    compiled = scan()
    if compiled is None or type(judgments) is not dict:
        return None
    return compiled.prepare_dicts(values, qids, judgments, drop_identical)


def index_lists(lists: list, sizes: bytes | None, attr: str | None, item_type: type | None) -> tuple | None:
    """``(ids, counts, table, table_offsets)``: each query's keys, first occurrences kept, hashed into a
    table. ``sizes`` (int64 bytes) cuts one flat list of ids into queries; else ``lists`` holds one
    sequence per query, whose keys are the items or their ``attr`` (items of exactly ``item_type``)."""
    compiled = scan()
    return None if compiled is None else compiled.index_lists(lists, sizes, attr, item_type)


def index_judged(
    judged: list, lists: list, attr: str, item_type: type, label_attr: str, qids: list[str]
) -> tuple | None:
    """Judgments and rankings of the same queries in one pass (see :meth:`RankedRun.from_judged_items`)."""
    compiled = scan()
    return None if compiled is None else compiled.index_judged(judged, lists, attr, item_type, label_attr, qids)


def find_ranked(
    ids: list[str], offsets: bytes, table: Any, table_offsets: Any, rows: bytes, keys: list[str]
) -> bytes | None:
    """Positions (int64 bytes, -1: absent) of ``keys[k]`` in query ``rows[k]``'s list, by the table
    :func:`index_lists` built."""
    compiled = scan()
    return None if compiled is None else compiled.find_ranked(ids, offsets, table, table_offsets, rows, keys)
