"""A Haystack component that interleaves two retrievers' results into the one list a user sees.

:class:`InterleavingJoiner` sits after two retrievers of a running pipeline (``documents_a``,
``documents_b``) and returns ``documents``: one list, each Document a copy carrying
``meta["interleaving_team"]`` (``"a"`` or ``"b"``, the ranking that placed it) and, for probabilistic
interleaving, ``meta["interleaving_probability"]`` (the probability it was drawn with). Log each shown
Document's team with the user's clicks, and ``irmetrics interleave LOG`` says which retriever users
prefer (:mod:`haystack_irmetrics.clicks.interleaving`: the methods, the credit and the outcome).

The list is reproducible: the same seed and query give the same list (the query seeds the draw).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from ..checks import number, whole
from ..clicks.interleaving import METHODS, TAU, interleave, query_rng
from ..errors import InterleavingError
from ..stats.significance import seed_value


@component
class InterleavingJoiner:
    """
    Interleave ``documents_a`` and ``documents_b`` (team-draft, balanced or probabilistic).

    Usage::

        >>> from haystack import Document
        >>> joiner = InterleavingJoiner(seed=7)
        >>> a = [Document(id="d1", content="x"), Document(id="d2", content="y")]
        >>> b = [Document(id="d2", content="y"), Document(id="d3", content="z")]
        >>> out = joiner.run(documents_a=a, documents_b=b, query="how to fix a flat")
        >>> [(d.id, d.meta["interleaving_team"]) for d in out["documents"]]
        [('d1', 'a'), ('d2', 'b'), ('d3', 'b')]
        >>> out == joiner.run(documents_a=a, documents_b=b, query="how to fix a flat")
        True

    :param method: ``"team-draft"`` (default), ``"balanced"`` or ``"probabilistic"``.
    :param seed: with the query, seeds every draw.
    :param top_k: at most this many Documents out (default: every distinct Document of both lists).
    :param tau: the exponent of probabilistic interleaving's softmax over ranks (3, as Hofmann et al.).
    """

    def __init__(self, method: str = "team-draft", seed: int = 0, top_k: int | None = None, tau: float = TAU) -> None:
        if method not in METHODS:
            raise InterleavingError(f"unknown interleaving method {method!r}; known: {', '.join(METHODS)}")
        if top_k is not None:
            whole(top_k, "top_k", least=1, error=InterleavingError)
        number(tau, "tau", 0, closed="neither", finite=False, error=InterleavingError)
        self.method = method
        self.seed = seed_value(seed)
        self.top_k = top_k
        self.tau = float(tau)

    def to_dict(self) -> dict[str, Any]:
        """Serialize the component to a dictionary (init parameters only)."""
        return default_to_dict(self, method=self.method, seed=self.seed, top_k=self.top_k, tau=self.tau)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InterleavingJoiner:
        """Deserialize the component from a dictionary made by :meth:`to_dict`."""
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(
        self, documents_a: list[Document], documents_b: list[Document], query: str | None = None
    ) -> dict[str, list[Document]]:
        """The interleaved list; the input Documents are not changed (each output is a copy).

        :raises InterleavingError: an item of either list is not a Document.
        """
        by_id: dict[str, Document] = {}
        ids: dict[str, list[str]] = {"a": [], "b": []}
        for team, docs in (("a", documents_a), ("b", documents_b)):
            for i, doc in enumerate(docs):
                if not isinstance(doc, Document):
                    raise InterleavingError(f"documents_{team}[{i}] is a {type(doc).__name__}, not a Document")
                by_id.setdefault(doc.id, doc)
                ids[team].append(doc.id)
        merged = interleave(
            ids["a"],
            ids["b"],
            method=self.method,
            rng=query_rng(self.seed, query),
            length=self.top_k,
            tau=self.tau,
        )
        out = []
        for doc_id, team, probability in merged:
            meta = {**by_id[str(doc_id)].meta, "interleaving_team": team}
            if probability is not None:
                meta["interleaving_probability"] = probability
            out.append(replace(by_id[str(doc_id)], meta=meta))
        return {"documents": out}


__all__ = ["InterleavingJoiner"]
