"""One person's judging: which pair they see, what a keypress does, and what the page is told, over the store.

The server (:mod:`.server`) only carries these calls over HTTP; everything the page shows comes from
:meth:`JudgingSession.state`, derived from the store, so a restarted server shows what the killed one would
have shown next.

**An adaptive strategy** (``--strategy``, :mod:`haystack_irmetrics.pooling`) is asked for the next pair when
the assessor has judged or skipped every pair there is, until the budget is spent: the pair it names is
appended to the store's pairs first, then shown. It is told each label as it is given (with several people, the
:func:`~.export.consensus` of their labels for the pair). The pairs file is taken as its first batch (what
``irmetrics pool`` wrote), so judging it here asks the same pairs, in the same order, as driving the strategy
by hand with the same labels. When the server starts, and after an undo, the strategy is built again from the
store: replayed call by call where the store's pairs are what it asked, else told the labels there are; its
state never holds a label that was taken back.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..checks import is_whole, whole
from ..errors import AssessError, StalePairError, SuspiciousInputWarning
from ..io.output import listed, printable
from ..judges.prompt import sendable
from .export import consensus
from .scale import check_page_scale, highlight
from .store import AssessStore

#: Builds a strategy from the labels so far, ``{qid: {docid: label}}`` (``None``: no strategy).
StrategyFactory = Callable[[dict[str, dict[str, int]]], Any]


@dataclass
class JudgingSession:
    """The judging of one assessor into one store.

    :param queries: ``{qid: text}``; :param corpus: ``{doc_id: {"title", "text"}}`` (BEIR's readers').
    :param scale: ``{grade: definition}`` for ``0..max_grade`` (:mod:`.scale`).
    :param budget: labels to give in all (default: one per pair there is).
    :param strategy: builds the adaptive strategy that names pairs past the pairs file (see the module).
    :param show_prelabels: show the model's label of the pair (the store's prelabels); hidden by default, as
        a label seen first anchors the person's.
    :param threshold: labels ``>=`` this count as relevant in the progress.
    """

    store: AssessStore
    queries: Mapping[str, str | None]
    corpus: Mapping[str, Mapping[str, str | None]]
    assessor: str
    scale: dict[int, str]
    budget: int | None = None
    strategy: StrategyFactory | None = None
    show_prelabels: bool = False
    threshold: int = 1
    _shown: dict[tuple[str, str], float] = field(default_factory=dict, init=False, repr=False)
    _strategy: Any = field(default=None, init=False, repr=False)
    _exhausted: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        check_assessor(self.assessor)
        check_page_scale(max(self.scale))
        if self.budget is not None:
            whole(self.budget, "the budget", least=1, error=AssessError)
        self._rebuild()

    # -- the strategy ------------------------------------------------------------------------------------

    def _labels(self) -> dict[tuple[str, str], int]:
        """Each labelled pair's label: the consensus of everyone's live labels."""
        by_pair: dict[tuple[str, str], list[int]] = {}
        for j in self.store.judgments():
            by_pair.setdefault((j.query_id, j.doc_id), []).append(j.label)
        return {pair: consensus(labels) for pair, labels in by_pair.items()}

    def _rebuild(self) -> None:
        """The strategy as the judging so far left it: replayed call by call when it asked every pair there is
        (:meth:`_replay`), else built on the labels there are (``judged``)."""
        if self.strategy is None:
            return
        labels = self._labels()
        self._strategy = self._replay(labels)
        if self._strategy is None:
            judged: dict[str, dict[str, int]] = {}
            for (q, d), label in labels.items():
                judged.setdefault(q, {})[d] = label
            self._strategy = self.strategy(judged)
        self._exhausted = False

    def _replay(self, labels: dict[tuple[str, str], int]) -> Any:
        """A new strategy told what the live one was, in the order it was: the pairs file's pairs asked first
        (they are its first batch), each pair it added later asked once the labels of the pairs before it were
        told (the page asks only when nothing is left), the labels in the order they were given. ``None`` when
        the strategy would ask another pair than the store holds (the pairs file is not its first batch, or a
        label it learnt from was taken back)."""
        assert self.strategy is not None
        strategy = self.strategy({})
        told: set[tuple[str, str]] = set()
        before: set[tuple[str, str]] = set()
        for q, d, origin in self.store.queue():
            if origin == "strategy":
                for pair, label in labels.items():
                    if pair in before and pair not in told:
                        strategy.record(pair[0], pair[1], label)
                        told.add(pair)
            asked = strategy.next()
            if asked is None or (asked[0], asked[1]) != (q, d):
                return None
            before.add((q, d))
        for pair, label in labels.items():
            if pair not in told:
                strategy.record(pair[0], pair[1], label)
        return strategy

    def _ask_strategy(self) -> tuple[str, str] | None:
        """A new pair from the strategy, appended to the store; ``None`` when it has none left."""
        while self._strategy is not None and not self._exhausted:
            found = self._strategy.next()
            if found is None:
                self._exhausted = True
                return None
            q, d = found[0], found[1]
            probability = float(found[2]) if len(found) > 2 else 1.0
            self._check_texts(q, d)
            if self.store.add_pairs([(q, d, probability)], origin="strategy"):
                return q, d
            # already a pair of the store, not yet labelled: now pending with the strategy too
        return None

    def _check_texts(self, query_id: str, doc_id: str) -> None:
        if not self.queries.get(query_id):
            raise AssessError(f"query {query_id!r} has no text in the queries")
        if doc_id not in self.corpus:
            raise AssessError(f"document {doc_id!r} (query {query_id!r}) is not in the corpus")

    # -- what is shown -------------------------------------------------------------------------------------

    @property
    def budget_total(self) -> int:
        """The budget, or the number of pairs there are when none was given."""
        return self.budget if self.budget is not None else self.store.counts(self.assessor)["pairs"]

    def current(self) -> tuple[str, str] | None:
        """The pair the assessor sees now, or ``None`` when they are done (budget spent, nothing left)."""
        counts = self.store.counts(self.assessor, self.threshold)
        if self.budget is not None and counts["judged"] >= self.budget:
            return None
        pair = self.store.next_pair(self.assessor)
        if pair is not None and self._strategy is not None and self.store.is_skipped(self.assessor, *pair):
            pair = self._ask_strategy() or pair  # a new pair before the skipped ones come back
        if pair is None:
            pair = self._ask_strategy()
        return pair

    def state(self, note: str | None = None) -> dict[str, Any]:
        """What the page shows: the pair (texts as highlighted segments), the progress, the scale."""
        pair = self.current()
        counts = self.store.counts(self.assessor, self.threshold)
        shown = None
        if pair is not None:
            q, d = pair
            self._shown.setdefault(pair, time.monotonic())
            query = sendable(self.queries.get(q) or "")
            doc = {key: sendable(text or "") for key, text in (self.corpus.get(d) or {}).items()}
            shown = {
                "query_id": q,
                "doc_id": d,
                "query": query,
                "title": highlight(doc.get("title") or "", query),
                "text": highlight(doc.get("text") or "", query),
                "skipped": self.store.is_skipped(self.assessor, q, d),
                "prelabel": self.store.prelabels().get(pair) if self.show_prelabels else None,
            }
        return {
            "assessor": self.assessor,
            "pair": shown,
            "scale": [[g, text] for g, text in self.scale.items()],
            "progress": {
                "judged": counts["judged"],
                "budget": self.budget_total,
                "relevant": counts["relevant"],
                "skipped": counts["skipped"],
                "threshold": self.threshold,
            },
            "can_undo": self.store.can_undo(self.assessor),
            "done": pair is None,
            "note": note,
        }

    # -- what a key does -----------------------------------------------------------------------------------

    def _expect(self, query_id: str, doc_id: str) -> tuple[str, str]:
        pair = self.current()
        if pair != (query_id, doc_id):
            raise StalePairError(f"pair ({query_id!r}, {doc_id!r}) is not the one shown now")
        return pair

    def label(self, query_id: str, doc_id: str, label: int) -> dict[str, Any]:
        """Label the shown pair (committed before this returns); the state after."""
        pair = self._expect(query_id, doc_id)
        if not is_whole(label) or label not in self.scale:
            raise AssessError(f"label {label!r} is not a grade of the scale 0..{max(self.scale)}")
        started = self._shown.pop(pair, None)
        seconds = None if started is None else round(time.monotonic() - started, 3)
        self.store.label(self.assessor, query_id, doc_id, label, seconds)
        if self._strategy is not None:
            self._strategy.record(query_id, doc_id, self._labels()[pair])
        return self.state(f"last: {query_id} · {doc_id} labelled {label}")

    def skip(self, query_id: str, doc_id: str) -> dict[str, Any]:
        """Skip the shown pair: it comes back after the others."""
        pair = self._expect(query_id, doc_id)
        self._shown.pop(pair, None)
        self.store.skip(self.assessor, query_id, doc_id)
        return self.state(f"last: {query_id} · {doc_id} skipped")

    def undo(self) -> dict[str, Any]:
        """Take back the assessor's last label or skip; the pair is shown again."""
        pair = self.store.undo(self.assessor)
        if pair is None:
            return self.state("nothing to undo")
        self._rebuild()
        return self.state(f"last: {pair[0]} · {pair[1]} undone")


def check_assessor(name: str) -> str:
    """``name`` as an assessor's: not empty, and text UTF-8 can hold (a name given as bytes that are not UTF-8
    arrives with lone surrogates, which the store and the page cannot keep).

    :raises AssessError: naming what is wrong.
    """
    if not name or not name.strip():
        raise AssessError("the assessor's name is empty: give --assessor NAME")
    if sendable(name) is not name:
        raise AssessError(f"the assessor's name {printable(name)} is not UTF-8 text: give --assessor NAME in UTF-8")
    return name


def say_unshowable(
    pairs: Iterable[tuple[str, str]], queries: Mapping[str, str | None], corpus: Mapping[str, Any]
) -> None:
    """Warn once, before the page opens, of the queries and documents of ``pairs`` whose text holds a lone
    surrogate (UTF-8 cannot carry it, e.g. a JSON ``\\udc80`` escape): the page shows U+FFFD in its place."""

    def odd(text: object) -> bool:
        return isinstance(text, str) and sendable(text) is not text

    pairs = list(pairs)
    names = [f"query {q!r}" for q in dict.fromkeys(q for q, _ in pairs) if odd(queries.get(q))]
    for d in dict.fromkeys(d for _, d in pairs):
        if any(odd(text) for text in (corpus.get(d) or {}).values()):
            names.append(f"document {d!r}")
    if names:
        warnings.warn(
            f"{listed(names, 3)} hold a lone surrogate (text UTF-8 cannot carry, e.g. a JSON \\udc80 escape): the "
            "page shows U+FFFD in its place",
            SuspiciousInputWarning,
            stacklevel=2,
        )


def check_pair_texts(
    pairs: list[tuple[str, str, Any]], queries: Mapping[str, Any], corpus: Mapping[str, Any], where: tuple[str, ...]
) -> None:
    """Every pair of the pairs file ``where[0]`` has a query with text in ``where[1]`` and a document in the corpus
    ``where[2]``, before the page opens.

    :raises AssessError: naming the pair and what it lacks.
    """
    from ..judges.texts import check_pair_texts as check

    target, queries_path, corpus_path = where

    def say(what: str, q: str, d: str) -> str:
        lacks = (
            f"query {q!r} has no text in {queries_path}"
            if what == "query"
            else f"document {d!r} is not in {corpus_path}"
        )
        return f"pair ({q!r}, {d!r}) of {target}: {lacks}"

    check(((q, d) for q, d, _ in pairs), queries, corpus, say, AssessError)


__all__ = ["JudgingSession", "StrategyFactory", "check_assessor", "check_pair_texts", "say_unshowable"]
