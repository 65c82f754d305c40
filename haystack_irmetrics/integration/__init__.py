"""The Haystack integration layer: what every part of the package that runs Haystack shares.

- :mod:`.loading`: ``load_pipeline``, a pipeline YAML with the allowlist of trusted modules and a bounded
  YAML reader;
- :mod:`.sockets`: one set of rules that finds, checks and explains a pipeline's query inputs, ``top_k``
  inputs, ranked-documents output and documents inputs;
- :mod:`.queries`: queries -> ranked Documents through any pipeline (``QueryRunner``), in batches, with the
  direct run of a chain of components (:mod:`.fastpath`);
- :mod:`.documents`: ``DocumentPath``, Document lists -> judgments and runs, once;
- :mod:`.corpus`: a corpus -> Documents, whole or chunked;
- :mod:`.stores`: the document stores and retrievers this package ships;
- :mod:`.cache_entry`: the content-keyed on-disk cache entries the stores and the embedding cache use.

It sits below ``components/``, ``beir/`` and ``feedback/`` and imports none of them. Importing this package
imports no Haystack: each name below is loaded on first use (``irmetrics beir`` imports Haystack its own way,
without torch, before anything else does).
"""

from __future__ import annotations

from .._lazy import lazy_names

_HOMES = {
    "DocumentPath": ".documents",
    "load_pipeline": ".loading",
    "QueryRunner": ".queries",
    "PipelineSockets": ".sockets",
    "find_sockets": ".sockets",
    "corpus_documents": ".corpus",
}
__getattr__, __dir__ = lazy_names(__name__, _HOMES)


__all__ = sorted(_HOMES)
