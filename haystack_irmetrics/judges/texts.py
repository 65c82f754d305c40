"""The texts of (query, document) pairs a judge or a person is asked about: the one check that every pair has
them (:func:`check_pair_texts`), before any request or page, and the texts a judge is sent (:func:`pair_texts`:
the document as the pipelines index it, title and text; a text UTF-8 cannot carry sent with U+FFFD, said once).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import JudgeError
from .prompt import sendable

#: ``(what, query id, doc id) -> message``: what a caller says of a pair that lacks a text (``what``:
#: ``"query"``, the query has no text; ``"document"``, the document is not in the corpus).
Say = Callable[[str, str, str], str]


def check_pair_texts(
    pairs: Iterable[tuple[str, str]],
    queries: Mapping[str, Any],
    corpus: Mapping[str, Any],
    say: Say,
    error: Callable[[str], Exception] = JudgeError,
) -> None:
    """Every pair has a query with text and a document in the corpus; else ``error(say(what, query, doc))`` for
    the first that does not (the caller words it: a run's top k, a pairs file's line, a strategy's run)."""
    for qid, doc in pairs:
        if not queries.get(qid):
            raise error(say("query", qid, doc))
        if doc not in corpus:
            raise error(say("document", qid, doc))


def pair_texts(
    pairs: list[tuple[str, str]],
    queries: Mapping[str, str | None],
    corpus: Mapping[str, Mapping[str, str | None]],
    depth: int,
    where: tuple[str, str],
) -> list[tuple[str, str]]:
    """The ``(query text, document text)`` of each pair of the runs' top ``depth``, the document's as the pipelines
    index it (title and text); a query or document without text raises before any request (``where``: what to
    call the queries and the corpus)."""
    from ..integration.corpus import corpus_documents

    def say(what: str, qid: str, doc: str) -> str:
        if what == "query":
            return f"query {qid!r} (in the runs' top {depth}) has no text in {where[0]}"
        return f"document {doc!r} (query {qid!r}'s top {depth}) is not in the corpus {where[1]}"

    check_pair_texts(pairs, queries, corpus, say)
    content = {d.id: d.content or "" for d in corpus_documents({doc: corpus[doc] for _, doc in pairs})}
    for qid, doc in pairs:
        if not content[doc]:
            raise JudgeError(f"document {doc!r} (query {qid!r}'s top {depth}) has no text in the corpus {where[1]}")
    texts = [(queries[q] or "", content[d]) for q, d in pairs]
    _say_unsendable(pairs, texts, where)
    return [(sendable(q), sendable(d)) for q, d in texts]


def _say_unsendable(pairs: list[tuple[str, str]], texts: list[tuple[str, str]], where: tuple[str, str]) -> None:
    """Warn once, before any request, of the queries and documents whose text UTF-8 cannot carry (a lone
    surrogate): they are sent with U+FFFD in its place (:func:`~.prompt.sendable`)."""
    import warnings

    from ..errors import SuspiciousInputWarning

    odd: dict[str, None] = {}
    for (qid, doc), (q, d) in zip(pairs, texts):
        if sendable(q) is not q:
            odd[f"query {qid!r} ({where[0]})"] = None
        if sendable(d) is not d:
            odd[f"document {doc!r} ({where[1]})"] = None
    if odd:
        names = list(odd)
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        warnings.warn(
            f"{', '.join(names[:3])}{more} hold text UTF-8 cannot carry (a lone surrogate, e.g. a JSON \\udc80 "
            "escape): it is sent to the judge with U+FFFD in its place",
            SuspiciousInputWarning,
            stacklevel=3,
        )


__all__ = ["Say", "check_pair_texts", "pair_texts"]
