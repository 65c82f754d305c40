"""Load serialized pipelines that use haystack_irmetrics components.

Haystack 3.x refuses to deserialize classes from modules outside its allowlist. This package never
widens that allowlist on import (that would trust every pipeline the process loads afterwards);
:func:`load_pipeline` trusts our component modules for the one call instead: only the modules that
define components, not the whole package, so a YAML cannot reach any other function of ours (say, a
file reader) through a callable init parameter.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from haystack import Pipeline

# Exact module names (no wildcard): a pattern such as "haystack_irmetrics.*" would let a YAML name any
# function of the package as a callable.
TRUSTED_MODULES = (
    "haystack_irmetrics.components.evaluators",
    "haystack_irmetrics.components.feedback",
    # The bm25s BM25 store and retriever of the BEIR pipelines (pipelines/beir_bm25.yaml).
    "haystack_irmetrics.beir.bm25s_store",
    # The FAISS vector store and retriever of the dense and hybrid BEIR pipelines (pipelines/beir_dense.yaml).
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
    :raises haystack.core.errors.DeserializationError: if the YAML names a module that is not trusted.

    Usage::

        >>> from haystack_irmetrics.components import NDCGEvaluator, load_pipeline
        >>> from haystack import Pipeline
        >>> pipe = Pipeline()
        >>> _ = pipe.add_component("ndcg", NDCGEvaluator(k=5))
        >>> load_pipeline(pipe.dumps()).get_component("ndcg").k
        5
    """
    text = _read(source)
    return Pipeline.loads(text, callbacks=callbacks, allowed_modules=[*TRUSTED_MODULES, *allowed_modules])


def _read(source: str | os.PathLike[str] | IO[str]) -> str:
    if hasattr(source, "read"):
        return source.read()
    if isinstance(source, os.PathLike):
        return Path(source).read_text(encoding="utf-8")
    if not isinstance(source, str):
        raise TypeError(f"load_pipeline needs a path, an open file or YAML text, got {type(source).__name__}")
    if "\n" not in source and (source.endswith((".yml", ".yaml")) or os.path.isfile(source)):
        return Path(source).read_text(encoding="utf-8")
    return source
