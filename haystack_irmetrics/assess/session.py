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

**A working day.** Pairs come topic by topic (:class:`PageOptions` ``order``; the store's
:meth:`~.store.AssessStore.next_pair`), each with its query's description and narrative where the queries have
them; any pair judged before can be opened again (:meth:`JudgingSession.open`) and relabelled
(:meth:`JudgingSession.relabel`: one more event, the last counts); a label carries a note and an unsure mark; the
state says the time judged, the pace and the time left at that pace.
"""

from __future__ import annotations

import re
import secrets
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..checks import choice, is_whole, whole
from ..errors import AssessError, StalePairError, SuspiciousInputWarning
from ..io.output import listed, printable
from ..judges.prompt import sendable
from .export import consensus
from .scale import check_page_scale, highlight
from .store import AssessStore

#: Builds a strategy from the labels so far, ``{qid: {docid: label}}`` (``None``: no strategy).
StrategyFactory = Callable[[dict[str, dict[str, int]]], Any]
#: The orders pairs are judged in: query by query (each query's pairs in their order), or the pairs file's.
ORDERS = ("topic", "file")
#: What a page names the history it holds by (:meth:`JudgingSession.state`'s ``history_version``).
HISTORY_VERSION = re.compile(r"[0-9a-f]{8}-[0-9]+")


@dataclass(frozen=True)
class PageOptions:
    """How the page is laid out for a working day: the ``order`` pairs come in (one of :data:`ORDERS`), each
    query's ``topics`` fields shown beside it (``{qid: {"description": ..., "narrative": ...}}``), the
    ``guidelines`` text (Markdown, drawn as text; ``None``: none), and how many pairs an adaptive strategy is
    asked at a time (``batch``: 1, each pair once the labels before it are told; more, a batch judged topic by
    topic before the next is asked)."""

    order: str = "topic"
    topics: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    guidelines: str | None = None
    batch: int = 1

    def __post_init__(self) -> None:
        choice(self.order, "--order", ORDERS, error=AssessError)
        whole(self.batch, "--batch", least=1, error=AssessError)


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
    :param options: the order, the topics' fields and the guidelines (:class:`PageOptions`).
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
    options: PageOptions = field(default_factory=PageOptions)
    _shown: dict[tuple[str, str], float] = field(default_factory=dict, init=False, repr=False)
    _strategy: Any = field(default=None, init=False, repr=False)
    _exhausted: bool = field(default=False, init=False, repr=False)
    # the history's version (this server's, then one more a change), and the last change: the version before it
    # and the query whose pair it changed
    _epoch: str = field(default_factory=lambda: secrets.token_hex(4), init=False, repr=False)
    _version: int = field(default=0, init=False, repr=False)
    _change: tuple[str, str | None] = field(default=("", None), init=False, repr=False)

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
        (they are its first batch), each batch it added later (a pair of origin ``strategy``, or the pairs of one
        ``strategy N``) asked once the labels of the pairs before it were told (the page asks only when nothing
        is left), the labels in the order they were given. ``None`` when the strategy would ask another pair than
        the store holds (the pairs file is not its first batch, or a label it learnt from was taken back)."""
        assert self.strategy is not None
        strategy = self.strategy({})
        told: set[tuple[str, str]] = set()
        before: set[tuple[str, str]] = set()
        previous = None
        for q, d, origin in self.store.queue():
            batch_starts = origin == "strategy" or (origin.startswith("strategy ") and origin != previous)
            previous = origin
            if batch_starts:
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
        """New pairs from the strategy (one, or a batch of :attr:`PageOptions.batch` within the budget), appended
        to the store; the one to judge first, or ``None`` when it has none left."""
        size, origin = 1, "strategy"
        if self.options.batch > 1:
            queue = self.store.queue()
            size = (
                self.options.batch if self.budget is None else max(1, min(self.options.batch, self.budget - len(queue)))
            )
            origin = f"strategy {len({o for _, _, o in queue if o.startswith('strategy ')}) + 1}"
        added = 0
        while self._strategy is not None and not self._exhausted and added < size:
            found = self._strategy.next()
            if found is None:
                self._exhausted = True
                break
            q, d = found[0], found[1]
            probability = float(found[2]) if len(found) > 2 else 1.0
            self._check_texts(q, d)
            # a pair already in the store, not yet labelled, is now pending with the strategy too
            added += self.store.add_pairs([(q, d, probability)], origin=origin)
        return self.store.next_pair(self.assessor, by_topic=self.options.order == "topic") if added else None

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
        if self.budget is not None and self.store.counts(self.assessor)["judged"] >= self.budget:
            return None
        pair = self.store.next_pair(self.assessor, by_topic=self.options.order == "topic")
        if pair is not None and self._strategy is not None and self.store.is_skipped(self.assessor, *pair):
            pair = self._ask_strategy() or pair  # a new pair before the skipped ones come back
        if pair is None:
            pair = self._ask_strategy()
        return pair

    def state(
        self, note: str | None = None, history: bool | str = False, opened: tuple[str, str] | None = None
    ) -> dict:
        """What the page shows: the pair (texts as highlighted segments; ``opened``: a pair judged before, open
        again), the progress and the pace, the scale; with ``history`` true, what the assessor did to each pair
        (``history``) and that list's ``history_version``. A page holding a version (``history`` is it) is sent
        what changed since (``history_patch``, see :meth:`_history`): a key's answer stays the same size
        however long the history is."""
        current = self.current()
        pair = opened if opened is not None and opened != current else current
        counts = self.store.counts(self.assessor, self.threshold)
        total = self.budget if self.budget is not None else counts["pairs"]
        return {
            "assessor": self.assessor,
            "pair": None if pair is None else self._pair_state(*pair, reopened=pair != current),
            "scale": [[g, text] for g, text in self.scale.items()],
            "progress": {
                "judged": counts["judged"],
                "budget": total,
                "relevant": counts["relevant"],
                "skipped": counts["skipped"],
                "threshold": self.threshold,
            },
            "pace": self._pace(total - counts["judged"]),
            "can_undo": self.store.can_undo(self.assessor),
            "done": current is None,
            "note": note,
            **self._history(history, counts["judged"] + counts["skipped"]),
        }

    def _changed(self, query_id: str) -> None:
        """A key changed the history: the last live event of a pair of ``query_id``."""
        self._change = (self._history_of(), query_id)
        self._version += 1

    def _history_of(self) -> str:
        return f"{self._epoch}-{self._version}"

    def _history(self, held: bool | str, count: int) -> dict[str, Any]:
        """The history for a page holding the version ``held`` (``True``: none; ``False``: not shown): the whole
        list, or, when the page holds the version now or the one before the last change, ``history_patch``: the
        rows of the query that change touched (``groups``: ``query``, its ``rows``, the query shown ``after``)
        and ``count``, the rows in all."""
        if not held:
            return {"history": None}
        version = self._history_of()
        base, query = self._change
        if held is True or held not in (version, base):
            return {"history": [list(row) for row in self.store.history(self.assessor)], "history_version": version}
        groups = []
        if held == base and query is not None:
            rows, after = self.store.history_group(self.assessor, query)
            groups.append({"query": query, "rows": [list(row) for row in rows], "after": after})
        return {"history": None, "history_version": version, "history_patch": {"groups": groups, "count": count}}

    def _pair_state(self, q: str, d: str, reopened: bool) -> dict[str, Any]:
        """One pair as the page draws it: its texts, the topic's fields, the model's suggestion (when shown) and
        what the assessor gave it before (``last``: kind, label, note, unsure)."""
        self._shown.setdefault((q, d), time.monotonic())
        query = sendable(self.queries.get(q) or "")
        doc = {key: sendable(text or "") for key, text in (self.corpus.get(d) or {}).items()}
        topic = self.options.topics.get(q) or {}
        model = self.store.prelabel(q, d) if self.show_prelabels else None
        last = self.store.last(self.assessor, q, d)
        return {
            "query_id": q,
            "doc_id": d,
            "query": query,
            "description": sendable(topic.get("description") or "") or None,
            "narrative": sendable(topic.get("narrative") or "") or None,
            "title": highlight(doc.get("title") or "", query),
            "text": highlight(doc.get("text") or "", query),
            "skipped": last is not None and last[0] == "skip",
            "prelabel": None if model is None else model[0],
            "raw": None if model is None or model[1] is None else sendable(model[1]),
            "reopened": reopened,
            "last": None if last is None else {"kind": last[0], "label": last[1], "note": last[2], "unsure": last[3]},
        }

    def _pace(self, left: int) -> dict[str, float | None]:
        """The time judged (seconds, each pair's at most :data:`~.store.IDLE_CAP`), the labels an hour at that
        pace and the time the rest of the budget takes at it (``None`` before a label's time is known)."""
        seconds, timed = self.store.timing(self.assessor)
        if not timed or seconds <= 0:
            return {"seconds": seconds, "per_hour": None, "remaining": None}
        each = seconds / timed
        return {
            "seconds": round(seconds, 1),
            "per_hour": round(3600 / each, 1),
            "remaining": round(max(left, 0) * each, 1),
        }

    # -- what a key does -----------------------------------------------------------------------------------

    def _expect(self, query_id: str, doc_id: str) -> tuple[str, str]:
        pair = self.current()
        if pair != (query_id, doc_id):
            raise StalePairError(f"pair ({query_id!r}, {doc_id!r}) is not the one shown now")
        return pair

    def label(
        self,
        query_id: str,
        doc_id: str,
        label: int,
        marks: tuple[Any, Any] = (None, False),
        history: bool | str = False,
    ) -> dict[str, Any]:
        """Label the shown pair with ``marks`` (the note, unsure) (committed before this returns); the state after."""
        pair = self._expect(query_id, doc_id)
        self._check_label(label)
        started = self._shown.pop(pair, None)
        seconds = None if started is None else round(time.monotonic() - started, 3)
        self.store.label(self.assessor, query_id, doc_id, label, seconds, marks)
        self._changed(query_id)
        if self._strategy is not None:  # the consensus of everyone's labels of this pair (not of every pair)
            self._strategy.record(query_id, doc_id, consensus(self.store.labels_of(query_id, doc_id)))
        return self.state(f"last: {query_id} · {doc_id} labelled {label}", history)

    def _check_label(self, label: object) -> None:
        if not is_whole(label) or label not in self.scale:
            raise AssessError(f"label {label!r} is not a grade of the scale 0..{max(self.scale)}")

    def _judged_before(self, query_id: str, doc_id: str) -> tuple[str, str]:
        if self.store.last(self.assessor, query_id, doc_id) is None:
            raise AssessError(
                f"pair ({query_id!r}, {doc_id!r}) was never judged by {self.assessor}: only a pair labelled or "
                "skipped before opens again"
            )
        return query_id, doc_id

    def open(self, query_id: str, doc_id: str, history: bool | str = False) -> dict[str, Any]:
        """The state with a pair judged before shown again (the current pair stays next).

        :raises AssessError: a pair the assessor never labelled nor skipped.
        """
        pair = self._judged_before(query_id, doc_id)
        self._shown[pair] = time.monotonic()
        return self.state(f"open: {query_id} · {doc_id}", history, opened=pair)

    def back(
        self, query_id: str | None = None, doc_id: str | None = None, history: bool | str = False
    ) -> dict[str, Any]:
        """Open the pair the assessor judged before the one shown (the last judged, when the pair shown was
        never judged or none is given); the state as it is when there is none before."""
        pair = self.store.before(self.assessor, query_id, doc_id)
        if pair is None:
            return self.state("nothing judged before this pair", history)
        return self.open(*pair, history)

    def relabel(
        self,
        query_id: str,
        doc_id: str,
        label: int,
        marks: tuple[Any, Any] = (None, False),
        history: bool | str = False,
    ) -> dict[str, Any]:
        """Label again a pair judged before (one more event: the last counts); the current pair is shown next.

        :raises AssessError: a pair the assessor never labelled nor skipped, a label off the scale, bad marks.
        """
        if (query_id, doc_id) == self.current():
            return self.label(query_id, doc_id, label, marks, history)
        pair = self._judged_before(query_id, doc_id)
        self._check_label(label)
        started = self._shown.pop(pair, None)
        seconds = None if started is None else round(time.monotonic() - started, 3)
        self.store.label(self.assessor, query_id, doc_id, label, seconds, marks)
        self._changed(query_id)
        self._rebuild()  # the strategy learnt the label given before
        return self.state(f"last: {query_id} · {doc_id} relabelled {label}", history)

    def skip(self, query_id: str, doc_id: str, history: bool | str = False) -> dict[str, Any]:
        """Skip the shown pair: it comes back after the others."""
        pair = self._expect(query_id, doc_id)
        self._shown.pop(pair, None)
        self.store.skip(self.assessor, query_id, doc_id)
        self._changed(query_id)
        return self.state(f"last: {query_id} · {doc_id} skipped", history)

    def undo(self, history: bool | str = False) -> dict[str, Any]:
        """Take back the assessor's last label or skip; the pair is shown again."""
        pair = self.store.undo(self.assessor)
        if pair is None:
            return self.state("nothing to undo", history)
        self._changed(pair[0])
        self._rebuild()
        return self.state(f"last: {pair[0]} · {pair[1]} undone", history)


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


__all__ = [
    "HISTORY_VERSION",
    "ORDERS",
    "JudgingSession",
    "PageOptions",
    "StrategyFactory",
    "check_assessor",
    "check_pair_texts",
    "say_unshowable",
]
