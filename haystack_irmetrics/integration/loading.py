"""Load serialized pipelines that use haystack_irmetrics components.

Haystack 3.x refuses to deserialize classes from modules outside its allowlist. This package never
widens that allowlist on import (that would trust every pipeline the process loads afterwards);
:func:`load_pipeline` trusts our component modules for the one call instead: only the modules that
define components, not the whole package, so a YAML cannot reach any other function of ours (say, a
file reader) through a callable init parameter.

Every pipeline YAML the package reads goes through :func:`read_pipeline_yaml` first, which refuses an
alias bomb ("billion laughs": a few hundred bytes of nested anchors that expand to billions of nodes, which
each walk of the loaded pipeline would visit), recursive aliases and very deep nesting, before Haystack
sees the text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from haystack import Pipeline

from ..errors import PipelineError

#: Nodes that YAML aliases may add to a pipeline when expanded (a shared document store adds a few dozen).
ALIAS_NODE_BUDGET = 100_000
#: Deepest nesting of mappings and lists in a pipeline YAML (Haystack's own pipelines nest about 8 deep).
MAX_YAML_DEPTH = 100

# Exact module names (no wildcard): a pattern such as "haystack_irmetrics.*" would let a YAML name any
# function of the package as a callable.
TRUSTED_MODULES = (
    "haystack_irmetrics.components.evaluators",
    "haystack_irmetrics.components.feedback",
    # InterleavingJoiner: two retrievers' results as one interleaved list.
    "haystack_irmetrics.components.interleaving",
    # RelevanceJudge: the model judge (its generator's or scorer's own module must be trusted as well; Haystack's
    # own components are).
    "haystack_irmetrics.components.judge",
    # UsefulnessEvaluator: documents labelled by what a RAG generator answers from each (its generator's module too).
    "haystack_irmetrics.components.usefulness",
    # The bm25s BM25 store and retriever of the BEIR pipelines (pipelines/beir_bm25.yaml).
    "haystack_irmetrics.integration.stores.bm25s_store",
    # The FAISS vector store and retriever of the dense and hybrid BEIR pipelines (pipelines/beir_dense.yaml).
    "haystack_irmetrics.integration.stores.faiss_store",
    # Their paths before they moved, which pipeline YAMLs written then still name.
    "haystack_irmetrics.beir.bm25s_store",
    "haystack_irmetrics.beir.faiss_store",
)


def load_pipeline(
    source: str | os.PathLike[str] | IO[str],
    *,
    allowed_modules: Iterable[str] = (),
    callbacks: Any = None,
) -> Pipeline:
    """
    Load a YAML pipeline, allowing ``haystack_irmetrics`` components for this call only.

    Only the component modules (``haystack_irmetrics.components.evaluators`` and
    ``haystack_irmetrics.components.feedback``) are trusted, not the rest of the package.

    :param source: a path (``str`` ending in ``.yml`` / ``.yaml`` or naming an existing file, or a
        :class:`os.PathLike`), an open text file, or the YAML text itself.
    :param allowed_modules: further module patterns to trust in this load (Haystack's
        ``allowed_modules``), e.g. your own components' package.
    :param callbacks: passed to :meth:`haystack.Pipeline.loads` (``DeserializationCallbacks``).
    :returns: the :class:`haystack.Pipeline`.
    :raises FileNotFoundError: if ``source`` looks like a path and the file does not exist.
    :raises PipelineError: if the YAML is malformed, or its aliases expand past :data:`ALIAS_NODE_BUDGET`
        nodes, refer to themselves, or it nests deeper than :data:`MAX_YAML_DEPTH` (:func:`read_pipeline_yaml`).
    :raises haystack.core.errors.DeserializationError: if the YAML names a module that is not trusted.

    Usage::

        >>> from haystack_irmetrics.components import NDCGEvaluator, load_pipeline
        >>> from haystack import Pipeline
        >>> pipe = Pipeline()
        >>> _ = pipe.add_component("ndcg", NDCGEvaluator(k=5))
        >>> load_pipeline(pipe.dumps()).get_component("ndcg").k
        5
    """
    text, name = _read(source)
    data = read_pipeline_yaml(text, name)
    if not isinstance(data, dict):
        raise PipelineError(f"{name} is not a Haystack pipeline YAML (a mapping), got {type(data).__name__}")
    require_extras(data, name)
    return Pipeline.from_dict(data, callbacks=callbacks, allowed_modules=[*TRUSTED_MODULES, *allowed_modules])


def require_extras(data: Any, source: str) -> None:
    """Import the module of every component type in the pipeline ``data`` (at any depth: a judge's scorer is an
    init parameter) that an extra installs (:data:`~haystack_irmetrics._extras.EXTRA_OF`), before Haystack does:
    a missing one is a :class:`~haystack_irmetrics.errors.MissingDependencyError` naming the extra, where
    Haystack would log an import traceback and fail on its own words.

    :raises MissingDependencyError: naming ``source``, the component and the extra.
    """
    from .._extras import EXTRA_OF, require

    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kind = node.get("type")
            for module in EXTRA_OF if isinstance(kind, str) else ():
                if kind.startswith(f"{module}."):
                    require(module, purpose=f"{source} ({kind.rsplit('.', 1)[-1]})")
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)


def read_pipeline_yaml(text: str | bytes, source: str = "<text>") -> Any:
    """Parse pipeline YAML as Haystack's loader does (``YamlMarshaller``: safe YAML, tuples), bounded.

    The document is composed first (aliases stay references, so this is linear in the text), its size with
    every alias expanded is counted, and only then is it built into Python objects.

    :param source: what to call the text in messages (its file).
    :raises PipelineError: naming ``source``: malformed YAML (with its line), aliases that would add more
        than :data:`ALIAS_NODE_BUDGET` nodes or that contain themselves, nesting deeper than
        :data:`MAX_YAML_DEPTH`.
    """
    from haystack.marshal.yaml import YamlLoader
    from yaml import YAMLError

    loader = YamlLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # PyYAML composes recursively: nesting in the hundreds exhausts the stack
            raise PipelineError(f"{source} nests deeper than {MAX_YAML_DEPTH} levels") from None
        if node is None:
            return None
        _check_size(node, source)
        return loader.construct_document(node)
    except YAMLError as e:
        raise PipelineError(
            f"cannot read pipeline YAML {source}: it is not readable YAML ({_yaml_problem(e)})"
        ) from None
    finally:
        loader.dispose()


def _check_size(root: Any, source: str) -> None:
    """Refuse a composed YAML graph whose alias expansion, self-reference or depth would make it unbounded."""
    from yaml import MappingNode, SequenceNode

    def children(node: Any) -> list[Any]:
        if isinstance(node, SequenceNode):
            return node.value
        if isinstance(node, MappingNode):
            return [part for pair in node.value for part in pair]
        return []

    # Post-order over the graph, each node once (an alias is the same node object again): the expanded size
    # and the depth of each node from its children's, so a bomb is measured without being expanded.
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    path: set[int] = set()  # the nodes open on the way from the root: meeting one again is a cycle
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            kids = children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            path.discard(key)
            continue
        if key in size:
            continue
        if key in path:
            raise PipelineError(f"{source}: a YAML alias refers to a node that contains it (line {_line(node)})")
        path.add(key)
        stack.append((node, True))
        stack.extend((kid, False) for kid in children(node))
    added = size[id(root)] - len(size)
    if added > ALIAS_NODE_BUDGET:
        raise PipelineError(
            f"{source}: its YAML aliases expand {len(size):,} written nodes to {size[id(root)]:,} "
            f"(more than {ALIAS_NODE_BUDGET:,} added): refused as an alias bomb"
        )
    if depth[id(root)] > MAX_YAML_DEPTH:
        raise PipelineError(f"{source} nests deeper than {MAX_YAML_DEPTH} levels")


def _line(node: Any) -> int:
    mark = getattr(node, "start_mark", None)
    return mark.line + 1 if mark is not None else 0


def _yaml_problem(error: Exception) -> str:
    """A YAML error on one line: what is wrong and where (PyYAML's own message spans several lines)."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or getattr(error, "context", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(error).split())


def _read(source: str | os.PathLike[str] | IO[str]) -> tuple[str, str]:
    """The YAML text of ``source`` and what to call it in messages."""
    if hasattr(source, "read"):
        return source.read(), str(getattr(source, "name", "<text>"))
    if isinstance(source, os.PathLike):
        return Path(source).read_text(encoding="utf-8"), os.fspath(source)
    if not isinstance(source, str):
        raise TypeError(f"load_pipeline needs a path, an open file or YAML text, got {type(source).__name__}")
    if "\n" not in source and (source.endswith((".yml", ".yaml")) or os.path.isfile(source)):
        return Path(source).read_text(encoding="utf-8"), source
    return source, "<text>"
