"""The cascade family of click models (Chuklin, Markov & de Rijke 2015): one recursion, and the closed forms.

The user examines rank 1; after a click at rank r they go on with a probability ``after_click`` (0: Cascade;
the DCM's lambda_r; the SDBN's 1 - sigma; the DBN's gamma (1 - sigma), :mod:`.dbn`), after a skip with
``after_skip`` (1, or the DBN's gamma): :func:`cascade_probabilities` and :func:`cascade_simulate`.

Cascade, DCM and SDBN are fitted in closed form from :class:`ExaminedCounts`: each pair's impressions and
clicks at the ranks the model takes as examined (up to the first click; up to the last, or all without a
click), with the DCM's clicks and last clicks per rank and the SDBN's last clicks and clicks per pair.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import ClickModelError
from .log import Sessions
from .models import FLOOR, ClickModel, _by_pair, _by_rank, _rank_values, _ratio, _take


def cascade_probabilities(
    alpha: np.ndarray, after_click: np.ndarray, after_skip: float, clicks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(conditional, full) click probabilities of a cascade-family model, arrays ``(S, R)``.

    ``alpha``: attractiveness at each (session, rank); ``after_click``: the probability to go on after a
    click there; ``after_skip``: to go on after examining without a click.
    """
    n_s, n_r = alpha.shape
    cond = np.zeros((n_s, n_r))
    full = np.zeros((n_s, n_r))
    e = np.ones(n_s)  # P(examine rank r | clicks above)
    m = np.ones(n_s)  # P(examine rank r)
    for r in range(n_r):
        a = alpha[:, r]
        cond[:, r] = e * a
        full[:, r] = m * a
        skip_examined = e * (1.0 - a) / np.maximum(1.0 - e * a, FLOOR)
        e = np.where(clicks[:, r], after_click[:, r], after_skip * skip_examined)
        m = m * (a * after_click[:, r] + (1.0 - a) * after_skip)
    return cond, full


def cascade_simulate(
    alpha: np.ndarray, after_click: np.ndarray, after_skip: float, shown: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Clicks drawn from a cascade-family model (see :func:`cascade_probabilities`)."""
    n_s, n_r = alpha.shape
    clicks = np.zeros((n_s, n_r), dtype=bool)
    examining = np.ones(n_s, dtype=bool)
    draws = rng.random((n_s, n_r, 2))
    for r in range(n_r):
        c = examining & shown[:, r] & (draws[:, r, 0] < alpha[:, r])
        clicks[:, r] = c
        go_on = np.where(c, draws[:, r, 1] < after_click[:, r], draws[:, r, 1] < after_skip)
        examining = examining & go_on
    return clicks


def last_click(clicks: np.ndarray) -> np.ndarray:
    """Per session, the 0-based rank of the last click, -1 if none."""
    ranks = np.where(clicks, np.arange(clicks.shape[1]), -1)
    return ranks.max(axis=1)


def first_click(clicks: np.ndarray) -> np.ndarray:
    """Per session, the 0-based rank of the first click, the number of ranks if none."""
    n_r = clicks.shape[1]
    ranks = np.where(clicks, np.arange(n_r), n_r)
    return ranks.min(axis=1)


def up_to_last_click(s: Sessions, last: np.ndarray) -> np.ndarray:
    """Per session, the last rank examined if the user reads down to the last click (``last``, :func:`last_click`;
    all ranks without one)."""
    return np.where(last < 0, s.n_ranks, last)


@dataclass(frozen=True)
class ExaminedCounts:
    """The closed forms' sufficient statistics: per pair, ``impressions`` and ``clicks`` at the ranks the model
    takes as examined; the DCM's ``clicks_at`` and ``last_at`` (per rank: clicks, and sessions whose last
    click is there); the SDBN's ``last_clicks`` and ``clicked`` (per pair: times it was the last click, and
    its clicks). A model's own fields are ``None`` in another model's counts."""

    impressions: np.ndarray
    clicks: np.ndarray
    clicks_at: np.ndarray | None = None
    last_at: np.ndarray | None = None
    last_clicks: np.ndarray | None = None
    clicked: np.ndarray | None = None

    @classmethod
    def up_to(cls, s: Sessions, cut: np.ndarray, **extra: np.ndarray) -> ExaminedCounts:
        """Impressions and clicks over the ranks <= ``cut`` of each session, with ``extra`` fields."""
        examined = s.shown & (np.arange(s.n_ranks)[None, :] <= cut[:, None])
        imp = np.bincount(s.pairs[examined], minlength=s.n_pairs).astype(float)
        clk = np.bincount(s.pairs[examined & s.clicks], minlength=s.n_pairs).astype(float)
        return cls(imp, clk, **extra)

    def needs(self, model: str, *fields: str) -> tuple[np.ndarray, ...]:
        """The ``fields`` a model reads; a counts table without them is a :class:`ClickModelError`."""
        missing = [f for f in fields if getattr(self, f) is None]
        if missing:
            raise ClickModelError(f"{model}: the counts hold no {', '.join(missing)}")
        return tuple(np.asarray(getattr(self, f)) for f in fields)


class _CascadeFamily(ClickModel):
    after_skip: float = 1.0

    def _after_click(self, s: Sessions) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _probabilities(self, s: Sessions) -> tuple[np.ndarray, np.ndarray]:
        return cascade_probabilities(_take(self.alpha, s.pairs), self._after_click(s), self.after_skip, s.clicks)

    def labels(self) -> np.ndarray:
        return self.alpha

    def simulate(self, s: Sessions, rng: np.random.Generator) -> np.ndarray:
        return cascade_simulate(_take(self.alpha, s.pairs), self._after_click(s), self.after_skip, s.shown, rng)


class Cascade(_CascadeFamily):
    """Cascade model: the user scans down and stops at the first click (closed form: the ranks up to it).

    Clicks below the first have probability 0 under the model: fitting ignores them, the
    log-likelihood counts them at :data:`~.models.FLOOR`.
    """

    name = "cascade"
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {"attractiveness": "alpha"}

    @classmethod
    def counts(cls, sessions: Sessions) -> ExaminedCounts:
        return ExaminedCounts.up_to(sessions, first_click(sessions.clicks))

    def _fit_counts(self, c: ExaminedCounts) -> None:
        self._set(attractiveness=_ratio(c.clicks, c.impressions))

    def _after_click(self, s: Sessions) -> np.ndarray:
        return np.zeros(s.pairs.shape)

    def params(self) -> dict[str, Any]:
        return {"attractiveness": _by_pair(self.fitted, self.alpha)}


class DCM(_CascadeFamily):
    """Dependent click model: after a click at rank r the user goes on with probability lambda_r.

    Fitted in closed form as the book (and PyClick) do: the ranks up to the last click are examined,
    and lambda_r = 1 - (sessions whose last click is at r) / (clicks at r).
    """

    name = "dcm"
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {"attractiveness": "alpha", "continuation": "lam"}

    @classmethod
    def counts(cls, sessions: Sessions) -> ExaminedCounts:
        last = last_click(sessions.clicks)
        clicks_at = sessions.clicks.sum(axis=0).astype(float)
        last_at = np.bincount(last[last >= 0], minlength=sessions.n_ranks).astype(float)
        return ExaminedCounts.up_to(sessions, up_to_last_click(sessions, last), clicks_at=clicks_at, last_at=last_at)

    def _fit_counts(self, c: ExaminedCounts) -> None:
        clicks_at, last_at = c.needs(self.name, "clicks_at", "last_at")
        self._set(attractiveness=_ratio(c.clicks, c.impressions), continuation=_ratio(clicks_at - last_at, clicks_at))

    def _after_click(self, s: Sessions) -> np.ndarray:
        return np.broadcast_to(_rank_values(self.lam, s.n_ranks), s.pairs.shape)

    def params(self) -> dict[str, Any]:
        return {"continuation": _by_rank(self.lam), "attractiveness": _by_pair(self.fitted, self.alpha)}


class SDBN(_CascadeFamily):
    """Simplified DBN (gamma = 1): closed form over the ranks up to the last click; the satisfaction of a
    pair is (times it was the last click) / (its clicks). Its qrels label is attractiveness x satisfaction."""

    name = "sdbn"
    label_name = "relevance"
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {"attractiveness": "alpha", "satisfaction": "sigma"}

    @classmethod
    def counts(cls, sessions: Sessions) -> ExaminedCounts:
        s = sessions
        last = last_click(s.clicks)
        rows = np.flatnonzero(last >= 0)
        last_clicks = np.bincount(s.pairs[rows, last[rows]], minlength=s.n_pairs).astype(float)
        clicked = np.bincount(s.pairs[s.clicks], minlength=s.n_pairs).astype(float)
        return ExaminedCounts.up_to(s, up_to_last_click(s, last), last_clicks=last_clicks, clicked=clicked)

    def _fit_counts(self, c: ExaminedCounts) -> None:
        last_clicks, clicked = c.needs(self.name, "last_clicks", "clicked")
        self._set(attractiveness=_ratio(c.clicks, c.impressions), satisfaction=_ratio(last_clicks, clicked))

    def _after_click(self, s: Sessions) -> np.ndarray:
        return 1.0 - _take(self.sigma, s.pairs)

    def params(self) -> dict[str, Any]:
        return {
            "attractiveness": _by_pair(self.fitted, self.alpha),
            "satisfaction": _by_pair(self.fitted, self.sigma),
        }

    def labels(self) -> np.ndarray:
        return self.alpha * self.sigma


__all__ = [
    "DCM",
    "SDBN",
    "Cascade",
    "ExaminedCounts",
    "cascade_probabilities",
    "cascade_simulate",
    "first_click",
    "last_click",
    "up_to_last_click",
]
