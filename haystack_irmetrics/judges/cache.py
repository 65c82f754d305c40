"""The judgment cache: one SQLite file under the package's cache root (``$IRMETRICS_CACHE_DIR``,
``judgments/judgments.sqlite``), one row per judged pair, keyed by the SHA-256 of the judge's fingerprint and
the exact query and document texts (:func:`judgment_key`, each text length-prefixed by
:func:`~haystack_irmetrics.integration.cache_entry.add_text`).

Each row keeps the raw answer (at most :data:`~.grades.MAX_ANSWER_CHARS` characters of it), the answer to the
re-ask when the first was not in the form asked for (``reask_raw``), whether the grade is the second's
(``from_reask``), and the version of the parser that read them (``parser``): when the parser changes, a cached answer is read again from its raw text
(:meth:`JudgmentCache.get_many` with ``reread``) and the row updated, with no new request. A row without a raw
answer (a reply that held none, cached by an older version) is no judgment: it misses.

Each judgment is committed as soon as it is made, so a run killed midway keeps every judgment it finished and
the run started again asks only for the others; a changed prompt, model or text is another key and misses.
SQLite's write-ahead log keeps a commit cheap and a killed writer harmless. A cache that cannot be opened or
written (a read-only disk, a damaged file) warns once and the run goes on without it.

Each row also keeps its judge's fingerprint, and the ``judges`` table each fingerprint's settings (model,
prompt, ...; never an API key), so the cache can be listed by judge (:meth:`JudgmentCache.judges`, ``irmetrics
cache list``) and one judge's judgments deleted (:meth:`JudgmentCache.clear`, ``irmetrics cache clear --kind
judgments [--judge FINGERPRINT]``). Rows of a file written before the fingerprint was kept still answer their
keys; they are listed under no judge (``fingerprint`` None).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError, JudgeError
from ..integration.cache_entry import add_text, cache_root, warn_once
from .grades import MAX_ANSWER_CHARS
from .judge import Verdict, redact_url, token_counts

#: The cache file under the cache root.
CACHE_FILE = Path("judgments") / "judgments.sqlite"


def judgment_key(fingerprint: str, query: str, document: str) -> str:
    """The cache key of one pair: SHA-256 (hex) of the fingerprint and the two texts."""
    digest = hashlib.sha256()
    for text in (fingerprint, query, document):
        add_text(digest, text)
    return digest.hexdigest()


@dataclass
class JudgeEntry:
    """The judgments of one judge in the cache: its fingerprint (``None``: rows written before fingerprints
    were kept), what it is (``kind``: ``chat`` or ``scores``; ``model``), how many pairs (``unparseable`` of
    them without a grade), the bytes its rows hold, and its settings."""

    fingerprint: str | None
    kind: str
    model: str
    pairs: int
    unparseable: int
    size_bytes: int
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """As JSON (``irmetrics cache list --format json``)."""
        return {
            "fingerprint": self.fingerprint,
            "kind": self.kind,
            "model": self.model,
            "pairs": self.pairs,
            "unparseable": self.unparseable,
            "size_bytes": self.size_bytes,
            "settings": self.settings,
        }


def _tokens(text: str | None) -> dict[str, int]:
    """A row's token counts (``{"prompt": n, "completion": n}``), each kept only when a whole number >= 0."""
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return token_counts({f"{name}_tokens": value.get(name) for name in ("prompt", "completion")})


def model_of(settings: dict[str, Any]) -> str:
    """The model a judge's settings name: the chat generator's ``model`` (and its server, when the settings
    hold one), the scorer's ``model``, else the component's type."""
    part = settings.get("generator") or settings.get("scorer") or {}
    params = part.get("init_parameters") or {}
    name = params.get("model") or params.get("model_name_or_path") or part.get("type") or "?"
    server = settings.get("server")
    return f"{name} at {server}" if server else str(name)


class JudgmentCache:
    """The judgments already made, on disk (or nowhere, with ``path=None`` and ``enabled=False``).

    :param path: the SQLite file (default: :data:`CACHE_FILE` under the cache root).
    :param enabled: ``False`` keeps nothing (every pair is asked again).
    """

    def __init__(self, path: str | Path | None = None, *, enabled: bool = True) -> None:
        self.path = Path(path) if path is not None else cache_root() / CACHE_FILE
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if enabled:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS judgments "
                    "(key TEXT PRIMARY KEY, label INTEGER, raw TEXT, tokens TEXT, judge TEXT)"
                )
                columns = {row[1] for row in db.execute("PRAGMA table_info(judgments)")}
                for column, kind in (
                    ("judge", "TEXT"),
                    ("parser", "INTEGER"),
                    ("reask_raw", "TEXT"),
                    ("from_reask", "INTEGER"),
                ):
                    if column not in columns:  # a file of an older version: its rows still answer
                        try:
                            db.execute(f"ALTER TABLE judgments ADD COLUMN {column} {kind}")
                        except sqlite3.OperationalError:  # another process added it first
                            if column not in {row[1] for row in db.execute("PRAGMA table_info(judgments)")}:
                                raise
                db.execute("CREATE TABLE IF NOT EXISTS judges (fingerprint TEXT PRIMARY KEY, settings TEXT)")
                self._db = db
            except (OSError, sqlite3.Error) as e:
                self._warn(f"could not open ({e})")

    def _warn(self, what: str) -> None:
        warn_once(str(self.path), f"the judgment cache {self.path} {what}; judgments are not cached")
        self._db = None

    def get_many(
        self,
        keys: Iterable[str],
        *,
        reread: Callable[[str, str | None], tuple[int | None, bool]] | None = None,
        parser: int | None = None,
        update: bool = True,
    ) -> dict[str, Verdict]:
        """The cached verdict of each key that has one. A row without a raw answer misses. With ``reread`` (the
        judge's :meth:`read_answers`: the first answer and the re-asked one to a grade and whether it came from
        the second), a row read by a parser other than version ``parser`` is read again from its raw answers, and
        the row updated (unless ``update`` is false)."""
        keys = list(keys)
        out: dict[str, Verdict] = {}
        if self._db is None:
            return out
        stale: list[tuple[int | None, int | None, int, str]] = []
        try:
            with self._lock:
                for start in range(0, len(keys), 500):
                    chunk = keys[start : start + 500]
                    rows = self._db.execute(
                        "SELECT key, label, raw, tokens, parser, reask_raw, from_reask FROM judgments "
                        f"WHERE key IN ({','.join('?' * len(chunk))})",
                        chunk,
                    ).fetchall()
                    for key, label, raw, tokens, version, reask_raw, from_reask in rows:
                        if raw is None:
                            continue
                        if reread is not None and version != parser:
                            label, from_reask = reread(raw, reask_raw)
                            stale.append((label, parser, int(from_reask), key))
                        out[key] = Verdict(label, raw, _tokens(tokens), reask_raw, bool(from_reask))
                if stale and update:
                    self._db.executemany(
                        "UPDATE judgments SET label = ?, parser = ?, from_reask = ? WHERE key = ?", stale
                    )
        except (sqlite3.Error, ValueError) as e:
            self._warn(f"cannot be read ({e})")
            return {}
        return out

    def register(self, fingerprint: str, settings: dict[str, Any]) -> None:
        """Keep what a judge's fingerprint is made of (its settings, no API key), for listing."""
        if self._db is None:
            return
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR IGNORE INTO judges VALUES (?, ?)",
                    (fingerprint, json.dumps(settings, sort_keys=True, default=str)),
                )
        except sqlite3.Error as e:
            self._warn(f"cannot be written ({e})")

    def put(self, key: str, verdict: Verdict, fingerprint: str | None = None, parser: int | None = None) -> None:
        """Keep one verdict (committed at once), under its judge's ``fingerprint``, read by parser version
        ``parser``. A verdict without a raw answer is not kept (it is no judgment)."""
        if self._db is None or verdict.raw is None:
            return
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO judgments (key, label, raw, tokens, judge, parser, reask_raw, from_reask) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        key,
                        verdict.label,
                        verdict.raw[:MAX_ANSWER_CHARS],
                        json.dumps(verdict.tokens) if verdict.tokens else None,
                        fingerprint,
                        parser,
                        None if verdict.reask_raw is None else verdict.reask_raw[:MAX_ANSWER_CHARS],
                        int(verdict.from_reask),
                    ),
                )
        except sqlite3.Error as e:
            self._warn(f"cannot be written ({e})")

    @property
    def available(self) -> bool:
        """Whether the file is open (not disabled, not failed to open)."""
        return self._db is not None

    def judges(self) -> list[JudgeEntry]:
        """The judges with judgments in the cache, the most pairs first.

        :raises JudgeError: the file cannot be read.
        """
        if self._db is None:
            return []
        try:
            rows, known = self._judge_rows()
        except sqlite3.Error as e:
            raise JudgeError(f"the judgment cache {self.path} cannot be read ({e})") from None
        out = []
        for fingerprint, pairs, unparseable, size in rows:
            try:
                settings = json.loads(known[fingerprint]) if fingerprint in known else {}
            except ValueError:
                settings = {}
            if not isinstance(settings, dict):
                settings = {}
            if settings.get("server"):  # a file written before servers were recorded without credentials
                settings["server"] = redact_url(str(settings["server"]))
            kind = settings.get("kind", "?") if fingerprint else "?"
            model = model_of(settings) if settings else "(written before judges were kept)"
            out.append(JudgeEntry(fingerprint, kind, model, pairs, unparseable or 0, size or 0, settings))
        return sorted(out, key=lambda e: (-e.pairs, e.fingerprint or ""))

    def _judge_rows(self) -> tuple[list[tuple], dict[str, str]]:
        assert self._db is not None
        with self._lock:
            rows = self._db.execute(
                "SELECT judge, COUNT(*), SUM(label IS NULL), SUM(LENGTH(key) + IFNULL(LENGTH(CAST(raw AS BLOB)), 0) "
                "+ IFNULL(LENGTH(tokens), 0) + 8) FROM judgments GROUP BY judge"
            ).fetchall()
            known = dict(self._db.execute("SELECT fingerprint, settings FROM judges").fetchall())
        return rows, known

    def resolve(self, prefix: str) -> str:
        """The one fingerprint in the cache that starts with ``prefix`` (a short one, as listed).

        :raises InvalidArgumentError: none, or several, start with it.
        """
        matches = [e.fingerprint for e in self.judges() if e.fingerprint and e.fingerprint.startswith(prefix)]
        if len(matches) != 1:
            what = "no judge" if not matches else f"{len(matches)} judges ({', '.join(m[:12] for m in matches)})"
            raise InvalidArgumentError(
                f"{what} in the judgment cache {self.path} has a fingerprint starting {prefix!r}"
            )
        return matches[0]

    def clear(self, fingerprint: str | None = None) -> int:
        """Delete the judgments of the judge whose fingerprint starts with ``fingerprint`` (every judgment when
        ``None``); how many were deleted.

        :raises InvalidArgumentError: no judge, or several, match ``fingerprint``.
        :raises JudgeError: the file cannot be written.
        """
        if self._db is None:
            return 0
        full = None if fingerprint is None else self.resolve(fingerprint)
        try:
            with self._lock:
                if full is None:
                    n = self._db.execute("DELETE FROM judgments").rowcount
                    self._db.execute("DELETE FROM judges")
                else:
                    n = self._db.execute("DELETE FROM judgments WHERE judge = ?", (full,)).rowcount
                    self._db.execute("DELETE FROM judges WHERE fingerprint = ?", (full,))
                self._db.execute("VACUUM")  # give the space back
        except sqlite3.Error as e:
            raise JudgeError(f"the judgment cache {self.path} cannot be cleared ({e})") from None
        return n

    def close(self) -> None:
        """Close the file."""
        if self._db is not None:
            self._db.close()
            self._db = None


def _cache_under(root: Path) -> JudgmentCache | None:
    """The judgment cache under ``root``, or ``None`` when there is none (nothing is created)."""
    path = root / CACHE_FILE
    if not path.is_file():
        return None
    cache = JudgmentCache(path)
    if not cache.available:
        raise JudgeError(f"the judgment cache {path} cannot be opened")
    return cache


def cache_listing(root: Path) -> dict[str, Any]:
    """The judgment cache under ``root`` by judge, as JSON (``irmetrics cache list``): ``path``, ``judges``."""
    cache = _cache_under(root)
    if cache is None:
        return {"path": str(root / CACHE_FILE), "judges": []}
    try:
        return {"path": str(cache.path), "judges": [e.to_dict() for e in cache.judges()]}
    finally:
        cache.close()


def clear_judgments(root: Path, fingerprint: str | None) -> list[str]:
    """Delete the judgments of the judge whose fingerprint starts with ``fingerprint`` (all, when ``None``) from
    the cache under ``root``; what ``irmetrics cache clear`` says of it (nothing when there is no cache).

    :raises InvalidArgumentError: no judge, or several, match ``fingerprint``.
    """
    cache = _cache_under(root)
    if cache is None:
        if fingerprint is not None:
            raise InvalidArgumentError(f"there is no judgment cache ({root / CACHE_FILE}): no judge {fingerprint!r}")
        return []
    try:
        if fingerprint is None:
            return [f"removed {cache.clear()} judgments (every judge) from {cache.path}"]
        full = cache.resolve(fingerprint)
        model = next(e.model for e in cache.judges() if e.fingerprint == full)
        return [f"removed {cache.clear(full)} judgments of judge {full[:12]} ({model}) from {cache.path}"]
    finally:
        cache.close()


__all__ = [
    "CACHE_FILE",
    "JudgeEntry",
    "JudgmentCache",
    "cache_listing",
    "clear_judgments",
    "judgment_key",
    "model_of",
]
