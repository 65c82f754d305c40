"""The per-query path of a BEIR run, without the costs that do not change a result.

``Pipeline.run`` validates the inputs, schedules the components through a priority queue, opens
tracing spans and deep-copies every component's inputs: about 0.2 ms a query, a third of the time a
bm25s query takes. For a retrieval pipeline whose components form one chain (a single retriever, or
an embedder feeding a retriever, ...), :class:`DirectRun` calls the components' ``run`` in order
instead, with exactly the inputs ``Pipeline.run`` would give them: the run's values, the values the
previous component produced (deep-copied as Haystack copies them), and the sockets' defaults.
Anything else (branches, joiners and other variadic inputs, loops, type conversions between sockets,
an output that is not the last component's, tracing enabled) runs through ``Pipeline.run``.

A run keeps hundreds of thousands of objects alive (the corpus, the index, Haystack, torch) while each
query makes and drops a thousand Documents; :func:`long_lived_objects_frozen` keeps Python's full
collections, which otherwise rescan all of them, to the objects made during retrieval.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.ranking import in_trec_order  # the core's trec order; imported from here before
from ..errors import NotProduced, PipelineError

if TYPE_CHECKING:  # pragma: no cover
    from haystack import Pipeline


@dataclass(frozen=True)
class _Step:
    name: str
    run: Callable[..., Any]
    #: Haystack's defaults of the optional sockets, overridden by the run's and the previous component's values.
    defaults: dict[str, Any]
    #: ``(output socket, input socket of the next step)`` pairs.
    feeds: tuple[tuple[str, str], ...]


class DirectRun:
    """The components of a chain pipeline, called in order (see the module's docstring)."""

    def __init__(self, steps: list[_Step], copy: Callable[[Any], Any]) -> None:
        self.steps = steps
        self._copy = copy

    @classmethod
    def plan(cls, pipeline: Pipeline, fed: Iterable[tuple[str, str]], output: tuple[str, str]) -> DirectRun | None:
        """The direct run of ``pipeline`` fed at ``fed`` and read at ``output``, or None when only
        ``Pipeline.run`` runs it faithfully."""
        graph = pipeline.graph
        names = list(graph.nodes)
        if not names or any(len(set(graph.predecessors(n))) > 1 or len(set(graph.successors(n))) > 1 for n in names):
            return None
        starts = [n for n in names if not any(True for _ in graph.predecessors(n))]
        if len(starts) != 1:
            return None
        order = starts
        while (after := list(set(graph.successors(order[-1])))) and after[0] not in order:
            order = [*order, after[0]]
        if len(order) != len(names) or output[0] != order[-1]:  # a loop, or a component off the chain
            return None
        fed_set = set(fed)
        steps = []
        for name in order:
            node = graph.nodes[name]
            run = getattr(node["instance"], "run", None)
            sockets = node["input_sockets"]
            if not callable(run) or any(socket.is_variadic for socket in sockets.values()):
                return None
            edges = list(graph.out_edges(name, data=True))
            incoming = {data["to_socket"].name for _, _, data in graph.in_edges(name, data=True)}
            if any(data.get("conversion_strategy") is not None for _, _, data in edges) or any(
                (name, socket) in fed_set for socket in incoming
            ):
                return None
            defaults = {s.name: s.default_value for s in sockets.values() if not s.is_mandatory}
            feeds = tuple((data["from_socket"].name, data["to_socket"].name) for _, _, data in edges)
            steps.append(_Step(name, run, defaults, feeds))
        return cls(steps, _haystack_copy())

    def run(self, data: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any]:
        """The last component's output for the pipeline inputs ``data`` (``{component: {socket: value}}``).

        :raises NotProduced: when a component leaves out an output the next one reads.
        :raises PipelineError: when a component fails, naming it, or returns something else than a mapping.
        """
        received: dict[str, Any] = {}
        out: Any = {}
        for step in self.steps:
            inputs = {**step.defaults, **data.get(step.name, {}), **received}
            try:
                out = step.run(**_copy_inputs(inputs, self._copy))
            except Exception as e:
                raise PipelineError(f"component {step.name!r} ({_type_name(step.run)}) failed: {e}") from e
            if not isinstance(out, Mapping):
                raise PipelineError(f"component {step.name!r} returned {type(out).__name__}, not a dict of outputs")
            if any(source not in out for source, _ in step.feeds):
                raise NotProduced(step.name)
            received = {target: out[source] for source, target in step.feeds}
        return out

    def ranked_meta(self, data: Mapping[str, Mapping[str, Any]], socket: str, key: str) -> tuple[list, list] | None:
        """What :meth:`run` puts in the output ``socket`` (``"documents"``), as each Document's ``meta.get(key)``
        and its score, without a Document per hit: for a chain of one component with a
        ``ranked_meta(key, query, top_k)`` method (:class:`~.stores.bm25s_store.BM25sRetriever`), fed plain
        values at those sockets only. None for any other chain or inputs: :meth:`run` then gives the Documents.

        :raises PipelineError: when the component fails, naming it.
        """
        if len(self.steps) != 1 or socket != "documents":
            return None
        step = self.steps[0]
        method = getattr(getattr(step.run, "__self__", None), "ranked_meta", None)
        inputs = {**step.defaults, **data.get(step.name, {})}
        if (
            not callable(method)
            or not set(inputs) <= {"query", "top_k"}
            or not set(map(type, inputs.values())) <= _ATOMIC
        ):
            return None
        try:
            return method(key, **inputs)
        except Exception as e:
            raise PipelineError(f"component {step.name!r} ({_type_name(step.run)}) failed: {e}") from e


#: Values ``copy.deepcopy`` returns as they are.
_ATOMIC = frozenset({str, int, float, bool, bytes, type(None)})


def _copy_inputs(inputs: dict[str, Any], deep: Callable[[Any], Any]) -> dict[str, Any]:
    """``inputs`` as Haystack's deep copy gives them; a value that deep-copying returns as it is (a query,
    ``top_k``), or a list of such values (a query embedding) whose deep copy is a new list of the same
    elements, is not walked element by element."""
    out = {}
    for name, value in inputs.items():
        kind = type(value)
        if kind in _ATOMIC:
            out[name] = value
        elif (kind is list or kind is tuple) and set(map(type, value)) <= _ATOMIC:
            out[name] = kind(value)
        else:
            out[name] = deep(value)
    return out


def _type_name(run: Callable[..., Any]) -> str:
    return type(getattr(run, "__self__", run)).__name__


def _haystack_copy() -> Callable[[Any], Any]:
    """How ``Pipeline.run`` copies a component's inputs (containers rebuilt, components kept, values
    deep-copied, left as they are when they cannot be); ``copy.deepcopy`` if Haystack moved it."""
    try:
        from haystack.core.pipeline.utils import _deepcopy_with_exceptions
    except ImportError:  # pragma: no cover - another Haystack version
        import copy

        def _deepcopy_with_exceptions(value: Any) -> Any:
            try:
                return copy.deepcopy(value)
            except Exception:
                return value

    return _deepcopy_with_exceptions


@contextmanager
def long_lived_objects_frozen() -> Iterator[None]:
    """Within the block, Python's garbage collector leaves the objects that exist at its start alone
    (``gc.freeze``); they are collectable again after it (``gc.unfreeze``).

    Nothing changes when the collector is off or the process froze objects itself.
    """
    if not gc.isenabled() or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


__all__ = ["DirectRun", "NotProduced", "in_trec_order", "long_lived_objects_frozen"]
