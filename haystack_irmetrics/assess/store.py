"""The judgments people make on the judging page, kept in one SQLite file, ``DIR/assess.sqlite``.

Every keypress is one transaction, committed (``synchronous=FULL``) before the page is answered, so a killed
server loses nothing and the same command goes on where it stopped. The file holds:

- ``pairs``: the pairs to judge, in the order to judge them (a pairs file's, then what an adaptive strategy
  asked for, appended as it asks);
- ``events``: each label and skip, by assessor, with its time (a label with the assessor's ``note`` and
  ``unsure`` mark); an undo marks the assessor's last live event undone (kept, never deleted), and a relabel
  is one more event, so the history stays whole and each pair's last live event counts;
- ``prelabels``: a model's labels for the pairs (``--prelabels``) and its raw answers, for the agreement of
  people with it and for the page's suggestion;
- ``meta``: the scale (``max_grade``) every label of the folder is on.

What an assessor is shown next (:meth:`AssessStore.next_pair`) is derived from the events alone: the first
pair in order that they have not labelled or skipped, else the pair they skipped longest ago. The order is
topic by topic by default: the pairs of the query listed first, in their order, then the next query's; or the
order the pairs were added in (``by_topic=False``).

A store made before notes, marks and raw answers existed opens as it is: the columns are added, empty.

Usage::

    >>> import tempfile
    >>> store = AssessStore.create(tempfile.mkdtemp(), max_grade=3)
    >>> store.add_pairs([("q1", "d1", 1.0), ("q1", "d2", 1.0)])
    2
    >>> store.next_pair("ann")
    ('q1', 'd1')
    >>> _ = store.label("ann", "q1", "d1", 2)
    >>> store.next_pair("ann")
    ('q1', 'd2')
    >>> store.undo("ann"), store.next_pair("ann")
    (('q1', 'd1'), ('q1', 'd1'))
    >>> store.close()
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

from ..checks import choice, is_whole, shown, whole
from ..errors import AssessError

#: The store's file in the output folder.
STORE_FILE = "assess.sqlite"
#: The layout of the file this code reads and writes (``PRAGMA user_version``).
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pairs (
    position INTEGER PRIMARY KEY,
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    probability REAL NOT NULL,
    origin TEXT NOT NULL,
    UNIQUE (query_id, doc_id)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assessor TEXT NOT NULL,
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('label', 'skip')),
    label INTEGER,
    time TEXT NOT NULL,
    seconds REAL,
    undone INTEGER NOT NULL DEFAULT 0,
    note TEXT,
    unsure INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS events_by_assessor ON events (assessor, undone, query_id, doc_id);
CREATE INDEX IF NOT EXISTS events_in_order ON events (assessor, undone);
CREATE TABLE IF NOT EXISTS prelabels (
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    label INTEGER NOT NULL,
    raw TEXT,
    PRIMARY KEY (query_id, doc_id)
);
"""
#: The columns added since the first stores: ``(table, column, declaration)``, added where absent.
_ADDED = (
    ("events", "note", "TEXT"),
    ("events", "unsure", "INTEGER NOT NULL DEFAULT 0"),
    ("prelabels", "raw", "TEXT"),
)
#: The indexes added since the first stores: ``(name, declaration)``, made where absent. ``events_in_order``: an
#: assessor's last live event (an undo) found without sorting their events; ``events_by_pair``: everyone's labels
#: of one pair (what a strategy is told on each label).
_INDEXES = (("events_in_order", "events (assessor, undone)"), ("events_by_pair", "events (query_id, doc_id)"))
#: The longest note kept with a label, in characters.
MAX_NOTE = 2000
#: A pair shown longer than this (seconds) counts this long in the time judged: a break is not judging.
IDLE_CAP = 300.0

#: Each pair's last live event of one assessor (SQLite gives the other columns of the row holding the MAX).
_LAST = """
SELECT query_id, doc_id, kind, label, note, unsure, MAX(id) AS id FROM events
WHERE assessor = ? AND undone = 0 GROUP BY query_id, doc_id
"""


@dataclass(frozen=True)
class Judgment:
    """One label a person gave: who, which pair, the grade, when (ISO 8601, UTC), the seconds the pair was
    shown before it (``None`` when not known: the page was loaded before a restart), the person's note (``None``:
    none) and whether they marked it unsure."""

    assessor: str
    query_id: str
    doc_id: str
    label: int
    time: str
    seconds: float | None
    note: str | None = None
    unsure: bool = False

    def to_dict(self) -> dict[str, object]:
        """The line of ``judgments.jsonl``."""
        return {
            "query_id": self.query_id,
            "doc_id": self.doc_id,
            "label": self.label,
            "assessor": self.assessor,
            "time": self.time,
            "seconds": self.seconds,
            "note": self.note,
            "unsure": self.unsure,
        }


#: A row of the history: ``(query, doc, kind, label, note, unsure)``.
HistoryRow = tuple[str, str, str, int | None, str | None, bool]


@dataclass
class _View:
    """One assessor's judging as the store's queries derive it from the events, kept in memory and brought up to
    date by this store's own writes, so a key costs the same with 10 labels in the folder as with 10,000.

    ``latest``: each pair's last live event, ``(id, kind, label, note, unsure)``; ``tally``: how many of those
    there are of each ``(kind, label)``; ``skips``: the pairs whose last live event is a skip, by its id;
    ``first``: each query's smallest ``latest`` id (the history's order of queries); ``spent`` and ``timed``:
    what :meth:`AssessStore.timing` sums (exactly: a ``Fraction``); ``frontier``: per order, how far
    :meth:`AssessStore.next_pair` knows every pair to be judged."""

    latest: dict[tuple[str, str], tuple[int, str, int | None, str | None, bool]] = field(default_factory=dict)
    tally: Counter = field(default_factory=Counter)
    skips: dict[tuple[str, str], int] = field(default_factory=dict)
    first: dict[str, int] = field(default_factory=dict)
    by_query: dict[str, dict[str, int]] = field(default_factory=dict)
    spent: Fraction = Fraction(0)
    timed: int = 0
    frontier: dict[bool, int] = field(default_factory=dict)

    def put(self, pair: tuple[str, str], event: tuple[int, str, int | None, str | None, bool] | None) -> None:
        """``event`` becomes the pair's last live event (``None``: it has none left)."""
        old = self.latest.pop(pair, None)
        if old is not None:
            self.tally[old[1], old[2]] -= 1
            self.skips.pop(pair, None)
            self.by_query[pair[0]].pop(pair[1], None)
        if event is not None:
            self.latest[pair] = event
            self.tally[event[1], event[2]] += 1
            if event[1] == "skip":
                self.skips[pair] = event[0]
            self.by_query.setdefault(pair[0], {})[pair[1]] = event[0]
        ids = self.by_query.get(pair[0])
        if ids:
            self.first[pair[0]] = min(ids.values())
        else:
            self.by_query.pop(pair[0], None)
            self.first.pop(pair[0], None)

    def spend(self, seconds: float | None, sign: int = 1) -> None:
        """Count a live label's ``seconds`` (at most :data:`IDLE_CAP`) in the time judged, or take it out."""
        if seconds is not None:
            self.spent += sign * Fraction(min(seconds, IDLE_CAP))
            self.timed += sign

    def group(self, query_id: str) -> list[HistoryRow]:
        """The history's rows of one query, in the order last judged."""
        ids = self.by_query.get(query_id, {})
        return [_row(query_id, d, self.latest[query_id, d]) for d in sorted(ids, key=ids.__getitem__)]


def _row(q: str, d: str, event: tuple[int, str, int | None, str | None, bool]) -> HistoryRow:
    return q, d, event[1], event[2], event[3], event[4]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class AssessStore:
    """The SQLite store of one output folder (open it with :meth:`create` or :meth:`open`).

    Safe to share between threads (one lock around every statement): the server answers from a thread pool.
    """

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection
        self._lock = threading.RLock()
        # what the events and pairs say, kept as this connection writes; dropped when another connection commits
        self._views: dict[str, _View] = {}
        self._orders: dict[bool, list[tuple[str, str]]] = {}
        self._data_version: int | None = None

    # -- opening ---------------------------------------------------------------------------------------

    @classmethod
    def create(cls, folder: str | os.PathLike[str], *, max_grade: int) -> AssessStore:
        """Open ``folder``'s store, creating the folder and the file when absent, on the scale ``0..max_grade``.

        :raises AssessError: the folder's labels are on another scale, or the file is not a store of this
            version (named).
        """
        out = Path(folder)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise AssessError(f"cannot create the output folder {out}: {e.strerror or e}") from None
        store = cls._connect(out / STORE_FILE)
        with store._lock:
            store._db.executescript(_SCHEMA)  # IF NOT EXISTS: a no-op on a store made before
            store._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        store._add_columns()
        with store._write() as db:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('max_grade', ?)", (str(max_grade),))
            db.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", (_now(),))
        if store.max_grade != max_grade:
            kept = store.max_grade
            store.close()
            raise AssessError(
                f"{out} holds labels on the scale 0..{kept}, not 0..{max_grade}: judge on that scale "
                "(--max-grade), or into another folder"
            )
        return store

    @classmethod
    def open(cls, folder: str | os.PathLike[str]) -> AssessStore:
        """Open the store of ``folder``, which must hold one.

        :raises AssessError: no store there (saying how to make one), or a file that is not one.
        """
        path = Path(folder) / STORE_FILE
        if not path.is_file():
            raise AssessError(
                f"{folder} holds no {STORE_FILE}: judge into it first (irmetrics assess PAIRS ... -o DIR)"
            )
        store = cls._connect(path)
        if not store._tables():
            store.close()
            raise AssessError(f"{path} is not a judging store (no tables)")
        store._add_columns()
        return store

    @classmethod
    def _connect(cls, path: Path) -> AssessStore:
        try:
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                db.close()
                raise AssessError(
                    f"{path} is a judging store of another version ({version}, this one reads {SCHEMA_VERSION})"
                )
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")  # committed means on disk: a kill loses no keypress
        except sqlite3.DatabaseError as e:
            raise AssessError(f"{path} cannot be opened as a judging store: {e}") from None
        return cls(path, db)

    def _tables(self) -> bool:
        names = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {"meta", "pairs", "events", "prelabels"} <= names

    def _add_columns(self) -> None:
        """The columns a store made before them lacks (:data:`_ADDED`), added empty, and the indexes
        (:data:`_INDEXES`): old folders open as they are."""
        for table, column, declaration in _ADDED:
            have = {r[1] for r in self._read(f"PRAGMA table_info({table})")}
            if column not in have:
                with self._write() as db:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        indexes = {r[0] for r in self._read("SELECT name FROM sqlite_master WHERE type = 'index'")}
        for name, declaration in _INDEXES:
            if name not in indexes:
                with self._write() as db:
                    db.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {declaration}")

    def close(self) -> None:
        """Close the file (what was committed stays)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> AssessStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One transaction, committed when the block ends (rolled back on an error)."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _fresh(self) -> None:
        """Drop what is kept in memory when another connection committed since it was read (the lock held)."""
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            self._views.clear()
            self._orders.clear()
            self._data_version = version

    def _view(self, assessor: str) -> _View:
        """``assessor``'s :class:`_View`, read from the events once (the lock held)."""
        self._fresh()
        view = self._views.get(assessor)
        if view is None:
            view = self._views[assessor] = _View()
            for q, d, kind, label, note, unsure, event in self._db.execute(_LAST, (assessor,)):
                view.put((q, d), (event, kind, label, note, bool(unsure)))
            for (seconds,) in self._db.execute(
                "SELECT seconds FROM events WHERE assessor = ? AND kind = 'label' AND undone = 0", (assessor,)
            ):
                view.spend(seconds)
        return view

    def _order(self, by_topic: bool) -> list[tuple[str, str]]:
        """Every pair in the order judged (see :meth:`next_pair`), read once (the lock held)."""
        self._fresh()
        order = self._orders.get(by_topic)
        if order is None:
            rows = self._db.execute("SELECT query_id, doc_id FROM pairs ORDER BY position").fetchall()
            if by_topic:
                topics: dict[str, list[tuple[str, str]]] = {}
                for q, d in rows:
                    topics.setdefault(q, []).append((q, d))
                rows = [pair for pairs in topics.values() for pair in pairs]
            order = self._orders[by_topic] = [(q, d) for q, d in rows]
        return order

    def _written(self, assessor: str, event: int, pair: tuple[str, str], row: tuple) -> None:
        """Bring ``assessor``'s view up to date with the event this connection just committed (the lock held):
        ``row`` is ``(kind, label, note, unsure, seconds)``."""
        view = self._views.get(assessor)
        if view is not None:
            kind, label, note, unsure, seconds = row
            view.put(pair, (event, kind, label, note, bool(unsure)))
            if kind == "label":
                view.spend(seconds)

    def token(self) -> str:
        """The folder's secret that the judging page sends with each request (made once, kept: a page stays
        usable across a restart of the server)."""
        import secrets

        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('token', ?)", (secrets.token_urlsafe(32),))
        return str(self._read("SELECT value FROM meta WHERE key = 'token'")[0][0])

    # -- the pairs ---------------------------------------------------------------------------------------

    @property
    def max_grade(self) -> int:
        """The top grade of the folder's scale."""
        return int(self._read("SELECT value FROM meta WHERE key = 'max_grade'")[0][0])

    def add_pairs(self, pairs: Iterable[tuple[str, str, float]], origin: str = "pairs") -> int:
        """Append the pairs not already there, in order; how many were new."""
        with self._lock, self._write() as db:
            before = db.total_changes
            db.executemany(
                "INSERT OR IGNORE INTO pairs (query_id, doc_id, probability, origin) VALUES (?, ?, ?, ?)",
                ((q, d, float(p), origin) for q, d, p in pairs),
            )
            self._orders.clear()  # a new pair may come before where next_pair looked from
            for view in self._views.values():
                view.frontier.clear()
            return db.total_changes - before

    def pairs(self) -> list[tuple[str, str, float]]:
        """Every pair to judge, in order."""
        return [
            (q, d, p) for q, d, p in self._read("SELECT query_id, doc_id, probability FROM pairs ORDER BY position")
        ]

    def queue(self) -> list[tuple[str, str, str]]:
        """Every pair to judge, in order, with where it came from (``"pairs"``: a pairs file; ``"strategy"``)."""
        return [tuple(r) for r in self._read("SELECT query_id, doc_id, origin FROM pairs ORDER BY position")]

    def has_pair(self, query_id: str, doc_id: str) -> bool:
        return bool(self._read("SELECT 1 FROM pairs WHERE query_id = ? AND doc_id = ?", (query_id, doc_id)))

    # -- what people do ----------------------------------------------------------------------------------

    def _check(self, label: object) -> int:
        top = self.max_grade
        if not is_whole(label) or not 0 <= label <= top:
            raise AssessError(f"label {label!r} is not a grade of the scale 0..{top}")
        return int(label)  # a numpy int too, which sqlite cannot bind

    def _check_pair(self, query_id: str, doc_id: str) -> None:
        if not self.has_pair(query_id, doc_id):
            raise AssessError(f"pair ({query_id!r}, {doc_id!r}) is not one of the pairs to judge")

    def label(
        self,
        assessor: str,
        query_id: str,
        doc_id: str,
        label: int,
        seconds: float | None = None,
        marks: tuple[str | None, bool] = (None, False),
    ) -> Judgment:
        """Record ``assessor``'s ``label`` for the pair (committed when this returns), with ``marks``: their note
        (``None``: none) and whether they are unsure. A pair labelled before gets one more event: the last counts.

        :raises AssessError: a label outside the scale, a pair that is not to be judged, a note too long or not
            text, an unsure mark that is not true or false.
        """
        label = self._check(label)
        note, unsure = check_marks(*marks)
        self._check_pair(query_id, doc_id)
        time = _now()
        with self._lock, self._write() as db:
            event = db.execute(
                "INSERT INTO events (assessor, query_id, doc_id, kind, label, time, seconds, note, unsure) "
                "VALUES (?, ?, ?, 'label', ?, ?, ?, ?, ?)",
                (assessor, query_id, doc_id, label, time, seconds, note, int(unsure)),
            ).lastrowid
            self._written(assessor, event, (query_id, doc_id), ("label", label, note, unsure, seconds))
        return Judgment(assessor, query_id, doc_id, label, time, seconds, note, unsure)

    def label_many(self, assessor: str, labels: list[tuple[str, str, int]]) -> None:
        """Record ``assessor``'s labels of pairs to judge (checked as :meth:`label` does), in one transaction."""
        labels = [(q, d, self._check(label)) for q, d, label in labels]
        for q, d, _ in labels:
            self._check_pair(q, d)
        time = _now()
        with self._lock, self._write() as db:
            db.executemany(
                "INSERT INTO events (assessor, query_id, doc_id, kind, label, time) VALUES (?, ?, ?, 'label', ?, ?)",
                ((assessor, q, d, label, time) for q, d, label in labels),
            )
            self._views.pop(assessor, None)  # read again when next asked

    def skip(self, assessor: str, query_id: str, doc_id: str) -> None:
        """Record that ``assessor`` skipped the pair: it comes back after every other pair."""
        self._check_pair(query_id, doc_id)
        with self._lock, self._write() as db:
            event = db.execute(
                "INSERT INTO events (assessor, query_id, doc_id, kind, time) VALUES (?, ?, ?, 'skip', ?)",
                (assessor, query_id, doc_id, _now()),
            ).lastrowid
            self._written(assessor, event, (query_id, doc_id), ("skip", None, None, False, None))

    def undo(self, assessor: str) -> tuple[str, str] | None:
        """Undo ``assessor``'s last live label or skip; the pair it was on, or ``None`` when nothing is left."""
        with self._lock, self._write() as db:
            row = db.execute(
                "SELECT id, query_id, doc_id, kind, seconds FROM events WHERE assessor = ? AND undone = 0 "
                "ORDER BY id DESC LIMIT 1",
                (assessor,),
            ).fetchone()
            if row is None:
                return None
            db.execute("UPDATE events SET undone = 1 WHERE id = ?", (row[0],))
            pair = (row[1], row[2])
            view = self._views.get(assessor)
            if view is not None:
                # the pair's event before it counts again (or none: the pair is to judge again)
                before = db.execute(
                    "SELECT id, kind, label, note, unsure FROM events WHERE assessor = ? AND undone = 0 "
                    "AND query_id = ? AND doc_id = ? ORDER BY id DESC LIMIT 1",
                    (assessor, *pair),
                ).fetchone()
                view.put(pair, None if before is None else (*before[:4], bool(before[4])))
                if row[3] == "label":
                    view.spend(row[4], -1)
                view.frontier.clear()
            return pair

    def can_undo(self, assessor: str) -> bool:
        """Whether ``assessor`` has a live label or skip to take back."""
        with self._lock:
            return bool(self._view(assessor).latest)

    def next_pair(self, assessor: str, by_topic: bool = True) -> tuple[str, str] | None:
        """The pair ``assessor`` judges next: the first in order they have neither labelled nor skipped, else
        the one they skipped longest ago; ``None`` when they labelled every pair. The order is topic by topic
        (``by_topic``: the queries in the order each was first listed, each query's pairs in their order), or
        the order the pairs were added in."""
        with self._lock:
            view, order = self._view(assessor), self._order(by_topic)
            # every pair before the frontier is judged: a label or skip keeps it so, an undo or a new pair resets it
            start = view.frontier.get(by_topic, 0)
            for at in range(start, len(order)):
                if order[at] not in view.latest:
                    view.frontier[by_topic] = at
                    return order[at]
            view.frontier[by_topic] = len(order)
            return min(view.skips, key=view.skips.__getitem__) if view.skips else None

    def is_skipped(self, assessor: str, query_id: str, doc_id: str) -> bool:
        """Whether ``assessor``'s last live event for the pair is a skip."""
        with self._lock:
            return (query_id, doc_id) in self._view(assessor).skips

    def counts(self, assessor: str, threshold: int = 1) -> dict[str, int]:
        """``judged`` (pairs ``assessor`` labelled), ``relevant`` (labelled ``>= threshold``), ``skipped``
        (skipped and not labelled since) and ``pairs`` (to judge, in all)."""
        with self._lock:
            tally, total = self._view(assessor).tally, len(self._order(False))
            labels = [(label, n) for (kind, label), n in tally.items() if kind == "label"]
            return {
                "judged": sum(n for _, n in labels),
                "relevant": sum(n for label, n in labels if label is not None and label >= threshold),
                "skipped": sum(n for (kind, _), n in tally.items() if kind == "skip"),
                "pairs": total,
            }

    def history(self, assessor: str) -> list[tuple[str, str, str, int | None, str | None, bool]]:
        """What ``assessor`` did to each pair, its last live event: ``(query, doc, kind, label, note, unsure)``,
        by query (the queries in the order first judged), each query's pairs in the order last judged."""
        with self._lock:
            view = self._view(assessor)
            return [row for q in sorted(view.first, key=view.first.__getitem__) for row in view.group(q)]

    def history_group(self, assessor: str, query_id: str) -> tuple[list[HistoryRow], str | None]:
        """One query's part of :meth:`history` (empty: none of its pairs judged) and the query whose part comes
        before it (``None``: it comes first): what a page showing the history needs to show it again after a key
        changed a pair of that query (the other queries' parts keep their rows and their order)."""
        with self._lock:
            view = self._view(assessor)
            mine = view.first.get(query_id)
            before = [q for q, first in view.first.items() if mine is not None and first < mine]
            return view.group(query_id), max(before, key=view.first.__getitem__, default=None)

    def last(self, assessor: str, query_id: str, doc_id: str) -> tuple[str, int | None, str | None, bool] | None:
        """``assessor``'s last live event for the pair, ``(kind, label, note, unsure)``; ``None``: none."""
        with self._lock:
            event = self._view(assessor).latest.get((query_id, doc_id))
        return None if event is None else (event[1], event[2], event[3], event[4])

    def before(self, assessor: str, query_id: str | None, doc_id: str | None) -> tuple[str, str] | None:
        """The pair ``assessor`` judged (labelled or skipped) last before their last event for this pair (the
        last they judged when they never judged it); ``None``: nothing before."""
        rows = self._read(
            f"SELECT query_id, doc_id FROM ({_LAST}) WHERE id < COALESCE((SELECT id FROM ({_LAST}) "
            "WHERE query_id = ? AND doc_id = ?), 9223372036854775807) ORDER BY id DESC LIMIT 1",
            (assessor, assessor, query_id, doc_id),
        )
        return (rows[0][0], rows[0][1]) if rows else None

    def timing(self, assessor: str) -> tuple[float, int]:
        """``(seconds, labels)``: the time ``assessor``'s live labels took (each at most :data:`IDLE_CAP`) and how
        many labels that is (those whose time is known)."""
        with self._lock:
            view = self._view(assessor)
            return float(view.spent), view.timed

    def judgments(self, assessor: str | None = None) -> list[Judgment]:
        """The live labels (each assessor's last for each pair), in the order they were given; of one
        assessor, or of all."""
        rows = self._read(
            "SELECT e.assessor, e.query_id, e.doc_id, e.label, e.time, e.seconds, e.note, e.unsure FROM events e JOIN ("
            "SELECT assessor, query_id, doc_id, MAX(id) AS id FROM events WHERE undone = 0 "
            "GROUP BY assessor, query_id, doc_id) l ON l.id = e.id WHERE e.kind = 'label' "
            + ("AND e.assessor = ? " if assessor is not None else "")
            + "ORDER BY e.id",
            (assessor,) if assessor is not None else (),
        )
        return [Judgment(*row[:7], bool(row[7])) for row in rows]

    def labels_of(self, query_id: str, doc_id: str) -> list[int]:
        """Everyone's live label of one pair (each assessor's last live event for it, where it is a label)."""
        last: dict[str, tuple[str, int | None]] = {}
        for assessor, kind, label in self._read(
            "SELECT assessor, kind, label FROM events WHERE query_id = ? AND doc_id = ? AND undone = 0 ORDER BY id",
            (query_id, doc_id),
        ):
            last[assessor] = (kind, label)
        return [label for kind, label in last.values() if kind == "label" and label is not None]

    def assessors(self) -> list[str]:
        """Everyone who labelled a pair (live labels), in the order they first did."""
        return list(dict.fromkeys(j.assessor for j in self.judgments()))

    # -- a model's labels --------------------------------------------------------------------------------

    def set_prelabels(self, labels: dict[tuple[str, str], int], raws: dict[tuple[str, str], str] | None = None) -> None:
        """Keep a model's labels and, where known, its raw answers (replacing those kept before)."""
        raws = raws or {}
        with self._write() as db:
            db.execute("DELETE FROM prelabels")
            db.executemany(
                "INSERT INTO prelabels (query_id, doc_id, label, raw) VALUES (?, ?, ?, ?)",
                ((q, d, g, raws.get((q, d))) for (q, d), g in labels.items()),
            )

    def prelabel(self, query_id: str, doc_id: str) -> tuple[int, str | None] | None:
        """The model's label of one pair and its raw answer (``None`` when it has no label)."""
        rows = self._read("SELECT label, raw FROM prelabels WHERE query_id = ? AND doc_id = ?", (query_id, doc_id))
        return (rows[0][0], rows[0][1]) if rows else None

    def prelabels(self) -> dict[tuple[str, str], int]:
        """The model's labels kept by :meth:`set_prelabels` (empty when none)."""
        return {(q, d): g for q, d, g in self._read("SELECT query_id, doc_id, label FROM prelabels")}


def check_marks(note: object, unsure: object) -> tuple[str | None, bool]:
    """A note and an unsure mark as a label keeps them: the note text of at most :data:`MAX_NOTE` characters
    (blank: none), the mark true or false.

    :raises AssessError: naming what is wrong.
    """
    choice(unsure, "the unsure mark", (True, False), error=AssessError)
    if note is None:
        return None, bool(unsure)
    if not isinstance(note, str):
        raise AssessError(f"the note must be text, got {shown(note)}")
    whole(len(note), "the note's length in characters", most=MAX_NOTE, error=AssessError)
    return (note if note.strip() else None), bool(unsure)


@contextmanager
def judging_folder(folder: str | os.PathLike[str], max_grade: int | None = None) -> Iterator[AssessStore]:
    """Hold ``folder``'s lock (:func:`~haystack_irmetrics.io.output.output_lock`) and its store for the block:
    nothing there is read or changed while another server judges into it, or labels are imported into it.

    :param max_grade: the scale the labels are on (a store on another is refused); ``None``: the store's own,
        or 0..3 for a new one.
    :raises OutputError: another command holds the folder. :raises AssessError: as :meth:`AssessStore.create`.
    """
    from ..io.output import output_lock

    with output_lock(folder, "irmetrics assess"):
        if max_grade is None and (Path(folder) / STORE_FILE).is_file():
            store = AssessStore.open(folder)
        else:
            store = AssessStore.create(folder, max_grade=3 if max_grade is None else max_grade)
        with store:
            yield store


__all__ = [
    "IDLE_CAP",
    "MAX_NOTE",
    "SCHEMA_VERSION",
    "STORE_FILE",
    "AssessStore",
    "Judgment",
    "check_marks",
    "judging_folder",
]
