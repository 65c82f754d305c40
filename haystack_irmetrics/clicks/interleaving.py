"""Interleaving: two rankings merged into one list shown to a user, and the clicks credited to each.

Methods (:func:`interleave`):

* ``team-draft`` (Radlinski, Kurup & Joachims 2008, the default): the team with fewer picks so far (a coin
  decides when equal) places its highest-ranked document not yet shown;
* ``balanced`` (Joachims 2003): a coin decides which ranking leads, then the two take turns by depth,
  each placing its next document not yet shown; a document's team is the ranking that placed it;
* ``probabilistic`` (Hofmann, Whiteson & de Rijke 2011): each ranking becomes a softmax over its ranks,
  P(d) proportional to 1 / rank(d) ** tau (tau = 3); at each position a coin picks a team, which draws
  a document from its softmax renormalised over the documents not yet shown; the probability the
  document was drawn with is kept.

The draws are reproducible: the random generator is seeded from (seed, query) (:func:`query_rng`).

Credit (:func:`credits`, each method its own rule): for ``team-draft`` and ``probabilistic`` each
impression's clicks are counted per team (:func:`credit`: team-draft's rule, and probabilistic
interleaving's as Hofmann et al. (2011) first give it); for ``balanced``, Joachims's rule
(:func:`balanced_credit`): with k the smaller of the depths at which the two original rankings hold the
lowest clicked document, the clicks among each ranking's top k. A click log holds only the team of each
shown document, so the balanced rule takes the two original rankings per query (``irmetrics interleave
--method balanced --ranking-a RUN --ranking-b RUN``).

Outcome (:func:`outcome`), as Chapelle, Joachims, Radlinski & Yue (TOIS 2012): among impressions with at
least one click, ``wins`` (team ``a`` credited more), ``losses`` (team ``b``), ``ties``; ``delta`` =
(wins + ties / 2) / (wins + losses + ties) - 0.5, positive when ``a`` is preferred; the two-sided
sign (binomial) test of wins against losses, ties left out; a percentile bootstrap interval of delta
over impressions (:func:`~haystack_irmetrics.stats.significance.bootstrap_ci`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InterleavingError
from ..stats.significance import seed_value
from .log import TEAM_A, TEAM_B, TEAM_NONE, Sessions

METHODS = ("team-draft", "balanced", "probabilistic")
#: The exponent of probabilistic interleaving's softmax over ranks (Hofmann et al. 2011).
TAU = 3.0


def check_method(method: str, rankings: bool = True) -> None:
    """``method`` is one of :data:`METHODS`, and ``balanced`` comes with its two original ``rankings``.

    :raises InterleavingError: either not so.
    """
    if method not in METHODS:
        raise InterleavingError(f"unknown interleaving method {method!r}; known: {', '.join(METHODS)}")
    if method == "balanced" and not rankings:
        raise InterleavingError(
            "balanced interleaving's credit needs the two original rankings of each query "
            "(rankings=(a, b); --ranking-a RUN --ranking-b RUN)"
        )


def query_rng(seed: int, query: str | None) -> np.random.Generator:
    """A generator seeded from ``seed`` and the query text (the same list for the same query and seed)."""
    digest = hashlib.sha256(f"{seed_value(seed)}\x00{query if query is not None else ''}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def _unique(ids: Sequence[Hashable]) -> list[Hashable]:
    return list(dict.fromkeys(ids))


def interleave(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    method: str = "team-draft",
    rng: np.random.Generator,
    length: int | None = None,
    tau: float = TAU,
) -> list[tuple[Hashable, str, float | None]]:
    """One interleaved list of the ids of ``a`` and ``b``: ``(id, team "a"/"b", probability or None)`` each.

    :param length: at most this many results (default: every distinct id of both).
    :raises InterleavingError: an unknown method.
    """
    check_method(method)
    lists = {"a": _unique(a), "b": _unique(b)}
    total = len(set(lists["a"]) | set(lists["b"]))
    n = total if length is None else min(length, total)
    if method == "team-draft":
        return _team_draft(lists, rng, n)
    if method == "balanced":
        return _balanced(lists, rng, n)
    return _probabilistic(lists, rng, n, tau)


def _team_draft(lists: dict[str, list[Hashable]], rng: np.random.Generator, n: int) -> list[tuple[Any, str, None]]:
    out: list[tuple[Any, str, None]] = []
    shown: set[Hashable] = set()
    picks = {"a": 0, "b": 0}
    at = {"a": 0, "b": 0}
    while len(out) < n:
        if picks["a"] != picks["b"]:
            team = "a" if picks["a"] < picks["b"] else "b"
        else:
            team = "a" if rng.random() < 0.5 else "b"
        ranking = lists[team]
        while at[team] < len(ranking) and ranking[at[team]] in shown:
            at[team] += 1
        if at[team] == len(ranking):  # this team has nothing left: the other places the rest
            team = "b" if team == "a" else "a"
            ranking = lists[team]
            while at[team] < len(ranking) and ranking[at[team]] in shown:
                at[team] += 1
        doc = ranking[at[team]]
        shown.add(doc)
        out.append((doc, team, None))
        picks[team] += 1
    return out


def _balanced(lists: dict[str, list[Hashable]], rng: np.random.Generator, n: int) -> list[tuple[Any, str, None]]:
    out: list[tuple[Any, str, None]] = []
    shown: set[Hashable] = set()
    a_first = rng.random() < 0.5
    at = {"a": 0, "b": 0}
    while len(out) < n:
        a_turn = at["a"] < at["b"] or (at["a"] == at["b"] and a_first)
        team = "a" if a_turn else "b"
        if at[team] >= len(lists[team]):
            team = "b" if team == "a" else "a"
        doc = lists[team][at[team]]
        at[team] += 1
        if doc not in shown:
            shown.add(doc)
            out.append((doc, team, None))
    return out


def _probabilistic(
    lists: dict[str, list[Hashable]], rng: np.random.Generator, n: int, tau: float
) -> list[tuple[Any, str, float]]:
    weights = {t: 1.0 / np.arange(1, len(r) + 1, dtype=float) ** tau for t, r in lists.items()}
    left = {t: np.ones(len(r), dtype=bool) for t, r in lists.items()}
    where = {t: {d: i for i, d in enumerate(r)} for t, r in lists.items()}
    out: list[tuple[Any, str, float]] = []
    while len(out) < n:
        team = "a" if rng.random() < 0.5 else "b"
        if not left[team].any():
            team = "b" if team == "a" else "a"
        w = np.where(left[team], weights[team], 0.0)
        p = w / w.sum()
        i = int(rng.choice(len(p), p=p))
        doc = lists[team][i]
        out.append((doc, team, float(p[i])))
        for t in ("a", "b"):
            j = where[t].get(doc)
            if j is not None:
                left[t][j] = False
    return out


def credit(sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
    """Per impression, the clicks on team ``a``'s documents and on team ``b``'s.

    :raises InterleavingError: the log has no team column, or a shown document's team is not ``a``/``b``.
    """
    team = sessions.team
    if team is None:
        raise InterleavingError("the click log has no team column (name it with --team-col, or team= in columns)")
    bad = sessions.shown & ~np.isin(team, (TEAM_A, TEAM_B))
    if bad.any():
        s, r = (int(x[0]) for x in np.nonzero(bad))
        what = "has no team" if team[s, r] == TEAM_NONE else "has a team other than 'a' or 'b'"
        raise InterleavingError(
            f"the session starting at row {int(sessions.first_row[s])}: the document at position {r + 1} {what}"
        )
    clicks = sessions.clicks & sessions.shown
    return (clicks & (team == TEAM_A)).sum(axis=1), (clicks & (team == TEAM_B)).sum(axis=1)


def balanced_credit(
    shown: Sequence[Hashable], clicked: Sequence[bool], a: Sequence[Hashable], b: Sequence[Hashable]
) -> tuple[int, int]:
    """Joachims's (2003) credit of a balanced-interleaved list: with k the smaller of the depths at which
    ``a`` and ``b`` hold the lowest clicked document, the clicks among each ranking's top k."""
    hits = [d for d, c in zip(shown, clicked, strict=True) if c]
    if not hits:
        return 0, 0
    lowest = hits[-1]
    la, lb = _unique(a), _unique(b)
    depth = min(la.index(lowest) + 1 if lowest in la else len(la), lb.index(lowest) + 1 if lowest in lb else len(lb))
    clicked_set = set(hits)
    return sum(d in clicked_set for d in la[:depth]), sum(d in clicked_set for d in lb[:depth])


def credits(
    sessions: Sessions,
    method: str = "team-draft",
    rankings: tuple[Mapping[str, Sequence[Hashable]], Mapping[str, Sequence[Hashable]]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per impression, team ``a``'s credit and team ``b``'s under ``method``'s own rule (see the module docs).

    :param rankings: for ``balanced``: ``({query: ranking a}, {query: ranking b})``, the original rankings
        the impressions interleaved (the team column is then not read).
    :raises InterleavingError: an unknown method; ``balanced`` without rankings, or an impression whose
        query one of them lacks; for the others, as :func:`credit`.
    """
    check_method(method, rankings is not None)
    if method != "balanced":
        return credit(sessions)
    queries, docs = sessions.pair_names()
    out = np.zeros((2, sessions.n_sessions), dtype=np.int64)
    for s in range(sessions.n_sessions):
        n = int(sessions.length[s])
        pairs = sessions.pairs[s, :n]
        query = queries[int(pairs[0])]
        missing = [name for name, r in zip("ab", rankings, strict=True) if query not in r]
        if missing:
            raise InterleavingError(
                f"the session starting at row {int(sessions.first_row[s])} shows query {query!r}, which ranking "
                f"{missing[0]} does not hold; balanced credit needs both original rankings of every query"
            )
        shown = [docs[int(p)] for p in pairs]
        clicked = (sessions.clicks[s, :n] & sessions.shown[s, :n]).tolist()
        out[:, s] = balanced_credit(shown, clicked, rankings[0][query], rankings[1][query])
    return out[0], out[1]


#: Why an outcome without any clicked impression has no delta, p-value or interval.
NO_CLICK = "no impression has a click: delta, p_value, ci_low and ci_high are undefined"


@dataclass(frozen=True)
class Outcome:
    """Wins, losses and ties of team ``a`` against ``b`` with delta, its sign-test p-value and interval."""

    wins: int
    losses: int
    ties: int
    delta: float
    p_value: float
    ci_low: float
    ci_high: float
    impressions: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``irmetrics interleave --json``; with no impression clicked, delta, the p-value and the
        interval are undefined: ``None`` (JSON's ``null``), and ``reason`` says why."""
        out: dict[str, Any] = {
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "delta": self.delta,
            "p_value": self.p_value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "impressions": self.impressions,
        }
        if self.wins + self.losses + self.ties == 0:
            out.update(delta=None, p_value=None, ci_low=None, ci_high=None, reason=NO_CLICK)
        return out


def outcome_of(
    credit_a: np.ndarray,
    credit_b: np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Outcome:
    """The :class:`Outcome` of per-impression credits (impressions without a click are counted, not scored)."""
    from scipy.stats import binomtest

    from ..stats.significance import bootstrap_ci

    ca, cb = np.asarray(credit_a), np.asarray(credit_b)
    clicked = (ca + cb) > 0
    wins = int((ca > cb).sum())
    losses = int((cb > ca).sum())
    ties = int((clicked & (ca == cb)).sum())
    scored = wins + losses + ties
    nan = float("nan")
    if scored == 0:
        return Outcome(0, 0, 0, nan, nan, nan, nan, int(ca.size))
    score = np.where(ca > cb, 1.0, np.where(cb > ca, 0.0, 0.5))[clicked] - 0.5
    delta = float(score.mean())
    p = float(binomtest(wins, wins + losses, 0.5).pvalue) if wins + losses else 1.0
    if scored >= 2:
        low, high = bootstrap_ci(score, confidence=confidence, n_resamples=n_resamples, seed=seed)
    else:
        low = high = delta
    return Outcome(wins, losses, ties, delta, p, float(low), float(high), int(ca.size))


def outcome(
    sessions: Sessions,
    *,
    method: str = "team-draft",
    rankings: tuple[Mapping[str, Sequence[Hashable]], Mapping[str, Sequence[Hashable]]] | None = None,
    by_segment: bool = False,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Outcome | dict[str, Outcome]:
    """Credit every impression of ``sessions`` by ``method``'s rule (:func:`credits`; ``rankings`` for
    ``balanced``) and score team ``a`` against ``b`` (see module docs).

    :param by_segment: one :class:`Outcome` per value of the log's segment column (``{segment: Outcome}``).
    """
    ca, cb = credits(sessions, method, rankings)
    options = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    if not by_segment:
        return outcome_of(ca, cb, **options)
    if sessions.segment is None:
        raise InterleavingError("a breakdown by segment needs the log's segment column (--segment COL)")
    segments = np.array(["" if s is None else str(s) for s in sessions.segment], dtype=object)
    return {str(g): outcome_of(ca[segments == g], cb[segments == g], **options) for g in sorted(set(segments))}


__all__ = [
    "METHODS",
    "NO_CLICK",
    "TAU",
    "Outcome",
    "balanced_credit",
    "credit",
    "credits",
    "interleave",
    "outcome",
    "outcome_of",
    "query_rng",
]
