"""The judgment cache: one SQLite file under the package's cache root (``$IRMETRICS_CACHE_DIR``,
``judgments/judgments.sqlite``), one row per judged pair, keyed by the SHA-256 of the judge's fingerprint and
the exact query and document texts (:func:`judgment_key`, each text length-prefixed by
:func:`~haystack_irmetrics.integration.cache_entry.add_text`).

Each judgment is committed as soon as it is made, so a run killed midway keeps every judgment it finished and
the run started again asks only for the others; a changed prompt, model or text is another key and misses.
SQLite's write-ahead log keeps a commit cheap and a killed writer harmless. A cache that cannot be opened or
written (a read-only disk, a damaged file) warns once and the run goes on without it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from ..integration.cache_entry import add_text, cache_root, warn_once
from .judge import Verdict

#: The cache file under the cache root.
CACHE_FILE = Path("judgments") / "judgments.sqlite"


def judgment_key(fingerprint: str, query: str, document: str) -> str:
    """The cache key of one pair: SHA-256 (hex) of the fingerprint and the two texts."""
    digest = hashlib.sha256()
    for text in (fingerprint, query, document):
        add_text(digest, text)
    return digest.hexdigest()


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
                    "CREATE TABLE IF NOT EXISTS judgments (key TEXT PRIMARY KEY, label INTEGER, raw TEXT, tokens TEXT)"
                )
                self._db = db
            except (OSError, sqlite3.Error) as e:
                self._warn(f"could not open ({e})")

    def _warn(self, what: str) -> None:
        warn_once(str(self.path), f"the judgment cache {self.path} {what}; judgments are not cached")
        self._db = None

    def get_many(self, keys: Iterable[str]) -> dict[str, Verdict]:
        """The cached verdict of each key that has one."""
        keys = list(keys)
        out: dict[str, Verdict] = {}
        if self._db is None:
            return out
        try:
            with self._lock:
                for start in range(0, len(keys), 500):
                    chunk = keys[start : start + 500]
                    rows = self._db.execute(
                        f"SELECT key, label, raw, tokens FROM judgments WHERE key IN ({','.join('?' * len(chunk))})",
                        chunk,
                    ).fetchall()
                    for key, label, raw, tokens in rows:
                        out[key] = Verdict(label, raw, json.loads(tokens) if tokens else {})
        except (sqlite3.Error, ValueError) as e:
            self._warn(f"cannot be read ({e})")
            return {}
        return out

    def put(self, key: str, verdict: Verdict) -> None:
        """Keep one verdict (committed at once)."""
        if self._db is None:
            return
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?)",
                    (key, verdict.label, verdict.raw, json.dumps(verdict.tokens) if verdict.tokens else None),
                )
        except sqlite3.Error as e:
            self._warn(f"cannot be written ({e})")

    def close(self) -> None:
        """Close the file."""
        if self._db is not None:
            self._db.close()
            self._db = None


__all__ = ["CACHE_FILE", "JudgmentCache", "judgment_key"]
