"""The click log: a log of clicks, read into sessions (one impression each).

A click log is read by the package's one log reader (:class:`haystack_irmetrics.io.logs.Log`: the same
formats, column options, line limits and bad-input rules as a feedback log) given the click roles,
:class:`ClickColumns`: one row per (session, position), where a *session* is one impression, a result
list shown once, and its click.

Default column names (each configurable): ``query_id``, ``doc_id``, ``session``, ``position`` and
``click`` (0/1, a boolean, ``yes``/``no``); optionally ``team`` (which interleaving team placed the
document), ``propensity`` (the logging policy's probability of what it showed), ``segment`` (a
breakdown key) and ``timestamp``.

Rows are checked by the reader (a malformed row names its row, line and column). Sessions
are checked here: a session's positions must run 1, 2, ..., n (a position shown twice, or a missing
one, is a :class:`~haystack_irmetrics.errors.SessionError` naming the session and its rows), and a
session shows one query. With ``on_error="skip"`` such sessions are left out and listed
(:attr:`ClickLog.skipped_sessions`), as malformed rows are (:attr:`ClickLog.skipped`).

:meth:`ClickLog.sessions` reads the log once into :class:`Sessions`: numpy arrays of one row per
session (the documents, as codes of distinct (query, document) pairs, and the clicks by rank). The
strings are read once, in one column per field; the arrays hold 6 bytes a row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..checks import number, whole
from ..errors import ClickModelError, FeedbackSchemaError, SessionError
from ..io.log_columns import LogColumns, Role
from ..io.logs import DEFAULT_BATCH_ROWS, Log
from ..stats.significance import check_seed
from ._deps import EXTRA

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
else:
    from ._deps import pl


@dataclass(frozen=True)
class ClickColumns(LogColumns):
    """The click roles: source column names of each canonical field of a click log (``None``: absent).

    ``click`` is 0 or 1 (or a boolean, ``yes``/``no``, ``true``/``false``); ``team`` the interleaving team
    that placed the document; ``propensity`` the logging policy's probability of what it showed, in (0, 1];
    ``timestamp`` and ``segment`` as a feedback log's.
    """

    query: str = "query_id"
    doc: str = "doc_id"
    position: str | None = "position"
    session: str | None = "session"
    timestamp: str | None = None
    segment: str | None = None
    click: str | None = "click"
    team: str | None = None
    propensity: str | None = None

    ROLES: ClassVar[Mapping[str, Role]] = {
        "query": Role("id", label="query"),
        "doc": Role("id", label="document"),
        "position": Role("position"),
        "session": Role("text"),
        "timestamp": Role("timestamp"),
        "segment": Role("text"),
        "click": Role("binary"),
        "team": Role("text"),
        "propensity": Role("probability"),
    }
    purpose: ClassVar[str] = "click logs"
    extra: ClassVar[str] = EXTRA
    rows_name: ClassVar[str] = "click rows"

    @classmethod
    def coerce(cls, value: ClickColumns | Mapping[str, str | None] | None) -> ClickColumns:
        """``value`` as the columns: itself, ``{role: column}`` over the defaults, or the defaults (None)."""
        return value if isinstance(value, cls) else cls(**cls.checked(value))


#: The roles a click log reads by default, and their column names.
CLICK_COLUMNS: Mapping[str, str | None] = {
    "query": "query_id",
    "doc": "doc_id",
    "position": "position",
    "session": "session",
    "click": "click",
}
#: The most cells (sessions x longest session) :class:`Sessions` may hold without ``max_rank``: 5 bytes each.
MAX_CELLS = 200_000_000
#: Team codes in :attr:`Sessions.team`: ``a``, ``b``, no team given, another word.
TEAM_A, TEAM_B, TEAM_NONE, TEAM_OTHER = 0, 1, -1, -2


def click_columns(
    columns: ClickColumns | Mapping[str, str | None] | None = None, *, team: bool = False, propensity: bool = False
) -> ClickColumns:
    """The columns of a click log: :data:`CLICK_COLUMNS`, ``team``/``propensity`` when asked, then ``columns``.

    :raises FeedbackSchemaError: the result has no ``click`` or no ``session`` column.
    """
    if isinstance(columns, ClickColumns):
        out = columns
    else:
        base: dict[str, str | None] = dict(CLICK_COLUMNS)
        if team:
            base["team"] = "team"
        if propensity:
            base["propensity"] = "propensity"
        if columns is not None and not isinstance(columns, Mapping):
            raise FeedbackSchemaError(f"columns must be a ClickColumns or a dict, got {type(columns).__name__}")
        base.update(columns or {})
        out = ClickColumns.coerce(base)
    for role in ("click", "session", "position"):
        if getattr(out, role) is None:
            raise FeedbackSchemaError(f"a click log needs a {role!r} column; give its name")
    return out


@dataclass(frozen=True)
class Sessions:
    """Sessions as arrays: ``S`` sessions of at most ``R`` ranks over ``P`` distinct (query, document) pairs.

    ``pairs[s, r]`` is the pair shown at rank ``r + 1`` of session ``s`` (``-1`` beyond its ``length``),
    ``clicks[s, r]`` whether it was clicked. ``pair_query``/``pair_doc`` index ``query_names``/``doc_names``.
    """

    query: np.ndarray
    pairs: np.ndarray
    clicks: np.ndarray
    length: np.ndarray
    pair_query: np.ndarray
    pair_doc: np.ndarray
    query_names: np.ndarray
    doc_names: np.ndarray
    first_row: np.ndarray
    team: np.ndarray | None = None
    propensity: np.ndarray | None = None
    segment: np.ndarray | None = None
    timestamp: np.ndarray | None = None
    shown: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shown", self.pairs >= 0)

    @property
    def n_sessions(self) -> int:
        return int(self.pairs.shape[0])

    @property
    def n_ranks(self) -> int:
        return int(self.pairs.shape[1])

    @property
    def n_pairs(self) -> int:
        return int(self.pair_query.shape[0])

    def subset(self, index: np.ndarray) -> Sessions:
        """The sessions at ``index`` (positions or a mask), over the same pair table."""
        take = np.asarray(index)

        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[take]

        return replace(
            self,
            query=self.query[take],
            pairs=self.pairs[take],
            clicks=self.clicks[take],
            length=self.length[take],
            first_row=self.first_row[take],
            team=pick(self.team),
            propensity=pick(self.propensity),
            segment=pick(self.segment),
            timestamp=pick(self.timestamp),
        )

    def split(self, test_fraction: float, seed: int = 0) -> tuple[Sessions, Sessions]:
        """(train, test): a seeded random ``test_fraction`` of the sessions held out, over the same pairs.

        :raises ClickModelError: ``test_fraction`` is not in (0, 1), or a side would hold no session.
        :raises InvalidSeedError: ``seed`` is not a whole number from 0 to 2**32 - 1.
        """
        number(test_fraction, "the test fraction", 0, 1, closed="neither", error=ClickModelError)
        n_test = round(self.n_sessions * test_fraction)
        if n_test == 0 or n_test == self.n_sessions:
            raise ClickModelError(
                f"a test fraction of {test_fraction} of {self.n_sessions} sessions leaves no session on one side"
            )
        order = check_seed(seed).permutation(self.n_sessions)
        test = np.sort(order[:n_test])
        train = np.sort(order[n_test:])
        return self.subset(train), self.subset(test)

    def aligned_to(self, other: Sessions) -> Sessions:
        """These sessions over ``other``'s pair table: a pair ``other`` lacks gets a code from ``other.n_pairs`` up."""
        mine = pl.DataFrame(
            {"q": self.query_names[self.pair_query].astype(str), "d": self.doc_names[self.pair_doc].astype(str)}
        ).with_row_index("mine")
        theirs = pl.DataFrame(
            {"q": other.query_names[other.pair_query].astype(str), "d": other.doc_names[other.pair_doc].astype(str)}
        ).with_row_index("theirs")
        joined = mine.join(theirs, on=["q", "d"], how="left").sort("mine")
        code = joined["theirs"].to_numpy(allow_copy=True).astype(np.float64)
        unknown = np.isnan(code)
        code[unknown] = other.n_pairs + np.arange(int(unknown.sum()))
        remap = code.astype(np.int64)
        pairs = np.where(self.shown, remap[np.maximum(self.pairs, 0)], -1).astype(np.int32)
        extra = np.flatnonzero(unknown)
        return replace(
            self,
            pairs=pairs,
            pair_query=np.concatenate([other.pair_query, np.full(extra.size, -1, np.int32)]),
            pair_doc=np.concatenate([other.pair_doc, np.full(extra.size, -1, np.int32)]),
            query_names=other.query_names,
            doc_names=other.doc_names,
        )

    def pair_names(self) -> tuple[list[str], list[str]]:
        """(query id, document id) of every pair, in pair-code order."""
        return (
            self.query_names[self.pair_query].astype(str).tolist(),
            self.doc_names[self.pair_doc].astype(str).tolist(),
        )


class ClickLog:
    """A click log (path or table) read into :class:`Sessions`.

    :param source: a path (JSONL, CSV/TSV, Parquet) or a table, as :class:`~haystack_irmetrics.io.logs.Log` reads.
    :param columns: ``{role: column}`` over :data:`CLICK_COLUMNS` (the roles of :class:`ClickColumns`), or a
        complete :class:`ClickColumns`.
    :param team: read the ``team`` column (interleaving); :param propensity: read ``propensity``.
    :param on_error: ``"raise"`` (default: the first malformed row or session is an error) or ``"skip"``.
    :param max_rank: keep the first ``max_rank`` positions of each session (default: all).

    Usage::

        >>> log = ClickLog([
        ...     {"session": "s1", "query_id": "q1", "doc_id": "d1", "position": 1, "click": 1},
        ...     {"session": "s1", "query_id": "q1", "doc_id": "d2", "position": 2, "click": 0},
        ...     {"session": "s2", "query_id": "q1", "doc_id": "d2", "position": 1, "click": "no"},
        ...     {"session": "s2", "query_id": "q1", "doc_id": "d1", "position": 3, "click": "yes"},
        ... ], on_error="skip")
        >>> log.sessions().clicks.tolist()
        [[True, False]]
        >>> log.skipped_sessions.rows()
        [('s2', [3, 4], 'position 2 is missing (positions run 1, 3)')]
    """

    def __init__(
        self,
        source: Any,
        *,
        columns: ClickColumns | Mapping[str, str | None] | None = None,
        team: bool = False,
        propensity: bool = False,
        fmt: str | None = None,
        on_error: str = "raise",
        position_base: int = 1,
        batch_rows: int = DEFAULT_BATCH_ROWS,
        max_rank: int | None = None,
    ) -> None:
        if max_rank is not None:
            whole(max_rank, "max_rank", least=1, error=ClickModelError)
        #: The validated rows (the package's one log reader, given the click roles).
        self.rows = Log(
            source,
            columns=click_columns(columns, team=team, propensity=propensity),
            fmt=fmt,
            on_error=on_error,
            position_base=position_base,
            batch_rows=batch_rows,
        )
        self.name = self.rows.name
        self.max_rank = max_rank
        self._sessions: Sessions | None = None
        self._skipped_sessions: pl.DataFrame | None = None

    def __repr__(self) -> str:
        return f"ClickLog({self.name!r}, on_error={self.rows.on_error!r})"

    @property
    def skipped(self) -> pl.DataFrame:
        """Malformed rows (as :attr:`~haystack_irmetrics.io.logs.Log.skipped`): ``row``, ``line``, ``column``,
        ``value``, ``reason``."""
        self.sessions()
        return self.rows.skipped

    @property
    def skipped_sessions(self) -> pl.DataFrame:
        """Sessions left out (``on_error="skip"``): ``session``, ``rows`` (their data rows), ``reason``."""
        self.sessions()
        assert self._skipped_sessions is not None
        return self._skipped_sessions

    def sessions(self) -> Sessions:
        """Every usable session, read once (see :class:`Sessions`)."""
        if self._sessions is None:
            self._sessions, self._skipped_sessions = _read_sessions(self)
        return self._sessions


def _read_sessions(log: ClickLog) -> tuple[Sessions, pl.DataFrame]:
    df = _log_frame(log)
    # Sessions in the order of their first row, each by position: the same order in every process.
    # The rows are not moved: one permutation, and the columns read through it.
    first_all = df.select(pl.col("row").min().over("session")).to_series().to_numpy()
    order = np.lexsort((df["position"].to_numpy(), first_all))
    first = first_all[order]
    del first_all
    position = df["position"].to_numpy()[order]
    qcode = df["query"].cast(pl.Categorical).to_physical().to_numpy()[order].astype(np.int64)
    starts, session_of_row, within = _session_rows(first)

    bad = (position != within + 1) | (qcode != qcode[starts[session_of_row]])
    skipped_rows: list[tuple[str, list[int], str]] = []
    if bad.any():
        bad_sessions = np.unique(session_of_row[bad])
        skipped_rows = _bad_sessions(log, df, order, position, starts, bad_sessions)
        drop = np.isin(session_of_row, bad_sessions)
        order, first, position, qcode = order[~drop], first[~drop], position[~drop], qcode[~drop]
        starts, session_of_row, within = _session_rows(first)
    skipped = pl.DataFrame(
        {
            "session": [s for s, _, _ in skipped_rows],
            "rows": [r for _, r, _ in skipped_rows],
            "reason": [r for _, _, r in skipped_rows],
        },
        schema={"session": pl.String, "rows": pl.List(pl.Int64), "reason": pl.String},
    )
    if first.size == 0:
        raise ClickModelError(f"{log.name}: no usable session in the click log")

    pair_of_row, qinv, dinv, query_names, doc_names = _pair_codes(df, order, qcode)
    kept, at, length, pairs, clicks = _grid(log, df, order, starts, session_of_row, within, pair_of_row)
    sessions = Sessions(
        query=qinv[pair_of_row[starts]].astype(np.int32),
        pairs=pairs,
        clicks=clicks,
        length=length.astype(np.int32),
        pair_query=qinv.astype(np.int32),
        pair_doc=dinv.astype(np.int32),
        query_names=query_names,
        doc_names=doc_names,
        first_row=first[starts],
        **_optional_columns(df, order, starts, kept, at, pairs.shape),
    )
    return sessions, skipped


def _log_frame(log: ClickLog) -> pl.DataFrame:
    """The log's columns a session needs, every batch in one frame (positions as Int32, clicks as Boolean)."""
    cols = log.rows.columns
    keep = ["row", "session", "query", "doc", "position", "click"]
    keep += [c for c in ("team", "propensity", "segment", "timestamp") if getattr(cols, c) is not None]
    parts = [
        b.select(keep).with_columns(pl.col("position").cast(pl.Int32), pl.col("click").cast(pl.Boolean))
        for b in log.rows.batches()
    ]
    if not parts:
        raise ClickModelError(f"{log.name}: the click log has no rows")
    return pl.concat(parts, rechunk=True)


def _session_rows(first: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(starts, session_of_row, within)`` of rows ordered by session (``first``: each row's session's first
    row): where each session starts, each row's session and its place in it."""
    starts = np.flatnonzero(np.r_[True, first[1:] != first[:-1]]) if first.size else np.zeros(0, np.int64)
    session_of_row = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, first.size]))
    return starts, session_of_row, np.arange(first.size) - starts[session_of_row]


def _bad_sessions(
    log: ClickLog, df: pl.DataFrame, order: np.ndarray, position: np.ndarray, starts: np.ndarray, bad: np.ndarray
) -> list[tuple[str, list[int], str]]:
    """``(session, its rows, why)`` of each of the ``bad`` sessions (not one impression); with
    ``on_error="raise"`` the first is a :class:`~haystack_irmetrics.errors.SessionError`."""
    rows = df["row"].to_numpy()[order]
    n_rows = order.size
    skipped_rows = []
    for s in bad[: 1 if log.rows.on_error == "raise" else None].tolist():
        lo = starts[s]
        hi = starts[s + 1] if s + 1 < starts.size else n_rows
        name = str(df["session"][int(order[lo])])
        reason = _session_problem(position[lo:hi], df["query"].gather(order[lo:hi]).to_list())
        session_rows = sorted(rows[lo:hi].tolist())
        if log.rows.on_error == "raise":
            raise SessionError(
                f"{reason} (on_error='skip', or --on-error skip, lists such sessions and leaves them out)",
                source=log.name,
                session=name,
                rows=session_rows,
            )
        skipped_rows.append((name, session_rows, reason))
    return skipped_rows


def _pair_codes(
    df: pl.DataFrame, order: np.ndarray, qcode: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(pair_of_row, pair_query, pair_doc, query_names, doc_names)``: each row's (query, document) pair, each
    pair's query and document, and their names, numbered in sorted order of their codes."""
    dcode = df["doc"].cast(pl.Categorical).to_physical().to_numpy()[order].astype(np.int64)
    key = (qcode << 32) | dcode
    _, pair_first, pair_of_row = np.unique(key, return_index=True, return_inverse=True)
    _, qfirst, qinv = np.unique(qcode[pair_first], return_index=True, return_inverse=True)
    _, dfirst, dinv = np.unique(dcode[pair_first], return_index=True, return_inverse=True)
    query_names = df["query"].gather(order[pair_first[qfirst]]).to_numpy().astype(object)
    doc_names = df["doc"].gather(order[pair_first[dfirst]]).to_numpy().astype(object)
    return pair_of_row, qinv, dinv, query_names, doc_names


def _grid(
    log: ClickLog,
    df: pl.DataFrame,
    order: np.ndarray,
    starts: np.ndarray,
    session_of_row: np.ndarray,
    within: np.ndarray,
    pair_of_row: np.ndarray,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """``(kept, at, length, pairs, clicks)``: the rows within ``max_rank`` and their cells, each session's length,
    and the sessions x ranks grids of pair numbers (-1: none) and clicks, refused past :data:`MAX_CELLS`."""
    n_rows = order.size
    kept = within < log.max_rank if log.max_rank is not None else np.ones(n_rows, dtype=bool)
    length = np.minimum(np.diff(np.r_[starts, n_rows]), log.max_rank or np.iinfo(np.int64).max)
    n_s, n_r = starts.size, int(length.max())
    if n_s * n_r > MAX_CELLS:
        longest = int(np.argmax(length))
        raise ClickModelError(
            f"{log.name}: {n_s:,} sessions up to {n_r:,} results long (session "
            f"{str(df['session'][int(order[starts[longest]])])!r}) would take {n_s * n_r:,} cells; keep the first "
            f"positions of each with max_rank= (--max-rank N), as click models look at the top of a list"
        )
    pairs = np.full((n_s, n_r), -1, dtype=np.int32)
    clicks = np.zeros((n_s, n_r), dtype=bool)
    at = (session_of_row[kept], within[kept])
    pairs[at] = pair_of_row[kept]
    clicks[at] = df["click"].to_numpy()[order][kept]
    return kept, at, length, pairs, clicks


def _optional_columns(
    df: pl.DataFrame,
    order: np.ndarray,
    starts: np.ndarray,
    kept: np.ndarray,
    at: tuple[np.ndarray, np.ndarray],
    shape: tuple[int, int],
) -> dict[str, np.ndarray | None]:
    """The :class:`Sessions` fields of the log's optional columns (None where the log has none): the team per
    cell, the propensity per cell, the segment per session and its time, its earliest row's (NaN: none given)."""
    team = propensity = segment = timestamp = None
    if "team" in df.columns:
        words = df["team"].str.to_lowercase()
        code = (
            pl.select(
                pl.when(words.is_null())
                .then(TEAM_NONE)
                .when(words == "a")
                .then(TEAM_A)
                .when(words == "b")
                .then(TEAM_B)
                .otherwise(TEAM_OTHER)
            )
            .to_series()
            .to_numpy()
        )
        team = np.full(shape, TEAM_NONE, dtype=np.int8)
        team[at] = code[order][kept]
    if "propensity" in df.columns:
        propensity = np.full(shape, np.nan)
        propensity[at] = df["propensity"].to_numpy()[order][kept]
    if "segment" in df.columns:
        segment = df["segment"].gather(order[starts]).to_numpy().astype(object)
    if "timestamp" in df.columns:
        stamps = df["timestamp"].fill_null(float("nan")).to_numpy()[order]
        timestamp = np.fmin.reduceat(stamps, starts) if stamps.size else stamps
    return {"team": team, "propensity": propensity, "segment": segment, "timestamp": timestamp}


def _session_problem(position: np.ndarray, queries: list[str]) -> str:
    """Why a session's rows (sorted by position) are not one impression: a query change, a repeat, a gap."""
    if len(set(queries)) > 1:
        shown = ", ".join(repr(q) for q in dict.fromkeys(queries))
        return f"the session holds more than one query ({shown})"
    runs = ", ".join(map(str, position.tolist()[:12])) + (", ..." if position.size > 12 else "")
    repeated = position[1:][position[1:] == position[:-1]]
    if repeated.size:
        return f"position {int(repeated[0])} is shown twice (positions run {runs})"
    expected = np.arange(1, position.size + 1)
    missing = int(expected[np.flatnonzero(position != expected)[0]])
    return f"position {missing} is missing (positions run {runs})"


__all__ = ["CLICK_COLUMNS", "ClickColumns", "ClickLog", "Sessions", "click_columns"]
