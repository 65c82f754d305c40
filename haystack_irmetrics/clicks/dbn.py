"""The dynamic Bayesian network click model (Chapelle & Zhang 2009), fitted by EM as Chuklin et al. (2015).

The user examines rank 1. At an examined rank they click with the pair's attractiveness alpha; after a
click they are satisfied with the pair's satisfaction sigma and stop; unsatisfied (or without a
click) they go on to the next rank with probability gamma, one value for every rank.

Given the clicks, every rank above the last click was examined and left unsatisfied: those counts
are taken once. What is hidden is whether the user was satisfied at the last click and how far they
read below it, which depends only on the last clicked pair and the pairs below it: EM works on the
distinct such tails, each with how many sessions share it (far fewer than the sessions: a query's
ranking and the rank of its last click). Per distinct tail, one backward pass gives Z_j = P(no click at ranks j.. | rank j examined) and one forward pass
the probability that each rank below the last click was examined; the expected counts follow:

* alpha: clicks, plus at each unclicked rank below the last click alpha (1 - P(examined));
  divided by the pair's impressions;
* sigma: P(satisfied at the last click) = sigma / P(no click below it); divided by the pair's clicks;
* gamma: expected continuations over expected chances to continue (examined, unsatisfied) at every rank
  but a session's last, whose continuation the log cannot show (left out: the same maximum, faster).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .cascade import _CascadeFamily, last_click
from .em import log_likelihood_terms, run_em
from .log import Sessions
from .models import DEFAULT, _by_pair, _ratio, _take


def distinct_sessions(pairs: np.ndarray, clicks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of one row per distinct (pairs, clicks) row, how many rows each stands for).

    Rows are hashed column by column into 64 bits (no copy of the matrix), grouped by hash, and every
    row is checked against its group's first; on a collision the rows are grouped exactly instead.
    """
    n_s, n_r = pairs.shape
    if n_s == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    h = np.zeros(n_s, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(n_r):
            h *= np.uint64(0x100000001B3)
            h ^= pairs[:, j].astype(np.uint64) + np.uint64(1)
            h *= np.uint64(0x9E3779B97F4A7C15)
            h ^= clicks[:, j].astype(np.uint64)
            h ^= h >> np.uint64(29)
    _, first, inverse, counts = np.unique(h, return_index=True, return_inverse=True, return_counts=True)
    rep = first[inverse]
    same = all(np.array_equal(pairs[:, j], pairs[rep, j]) for j in range(n_r))
    if not (same and all(np.array_equal(clicks[:, j], clicks[rep, j]) for j in range(n_r))):  # a hash collision
        both = np.concatenate([pairs.astype(np.int64), clicks.astype(np.int64)], axis=1)
        _, first, counts = np.unique(both, axis=0, return_index=True, return_counts=True)
    return first, counts.astype(np.float64)


@dataclass(frozen=True)
class TailCounts:
    """The DBN's sufficient statistics: the distinct (last clicked pair, pairs below it) rows (``last``: -1
    without a click; ``tail``: pair codes from column 0, -1 beyond) with how many sessions end so
    (``weight``); each pair's ``impressions`` and ``clicks``; and ``continuations``, the continuations the log
    shows (every rank above a session's last click was examined and left unsatisfied)."""

    tail: np.ndarray
    last: np.ndarray
    weight: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray
    continuations: float


class DBN(_CascadeFamily):
    """Dynamic Bayesian network model: attractiveness and satisfaction per pair, one continuation gamma.

    Its qrels label is the relevance attractiveness x satisfaction.
    """

    name = "dbn"
    label_name = "relevance"
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {
        "attractiveness": "alpha",
        "satisfaction": "sigma",
        "continuation": "gamma",
    }

    @classmethod
    def counts(cls, sessions: Sessions) -> TailCounts:
        s = sessions
        n_s, n_r = s.pairs.shape
        rows = np.arange(n_s)
        length = s.length.astype(np.int64)
        last = last_click(s.clicks)
        has_click = last >= 0
        # What the log fixes, counted once: every rank above the last click was examined and left
        # unsatisfied (its click, if any, counts for attractiveness; its continuation for gamma).
        imp = np.bincount(s.pairs[s.shown], minlength=s.n_pairs).astype(float)
        clicked = np.bincount(s.pairs[s.clicks], minlength=s.n_pairs).astype(float)
        fixed = float(np.maximum(last, 0).sum())
        # What is hidden depends only on the last clicked pair and the pairs below it: one row per
        # distinct (last clicked pair, pairs below), the tail shifted to column 0, with its count.
        at = (last[:, None] + 1 + np.arange(n_r)[None, :]).astype(np.int32)
        tail_all = np.take_along_axis(s.pairs, np.minimum(at, n_r - 1), axis=1)
        tail_all[at >= length[:, None]] = -1
        last_all = np.where(has_click, s.pairs[rows, np.maximum(last, 0)], -1)
        key = np.concatenate([last_all[:, None], tail_all], axis=1)
        first, w = distinct_sessions(key, np.zeros(key.shape, dtype=bool))
        del key
        return TailCounts(tail_all[first], last_all[first], w, imp, clicked, fixed)

    def _fit_counts(self, c: TailCounts) -> None:
        self._em(c.tail, c.last, c.weight, c.impressions, c.clicks, c.continuations, self.fitted.n_pairs)

    def _em(
        self,
        tail: np.ndarray,
        lastp: np.ndarray,
        w: np.ndarray,
        imp: np.ndarray,
        clicked: np.ndarray,
        fixed: float,
        n_pairs: int,
    ) -> None:
        """EM on the sufficient statistics: distinct (last clicked pair, pairs below it) rows with their
        counts ``w``, each pair's impressions and clicks, and the continuations the log shows (``fixed``)."""
        n_d, n_r = tail.shape
        shown = tail >= 0
        tlen = shown.sum(axis=1)
        clicked_last = lastp >= 0
        chance_last = clicked_last & (tlen > 0)  # a next rank the user could go on to
        chance_tail = shown & (np.arange(n_r)[None, :] < (tlen - 1)[:, None])  # all but the session's last rank
        ww = np.broadcast_to(w[:, None], tail.shape)
        tail_pairs = tail[shown]
        tail_w = ww[shown]

        # The log-likelihood's terms the log fixes: each pair's clicks (attracted), its skips above the last
        # click (not attracted) and its clicks above the last click (not satisfied); each tail's is log(total).
        above = imp - np.bincount(tail_pairs, weights=tail_w, minlength=n_pairs)
        skipped_above = above - clicked
        not_last = clicked - np.bincount(lastp[clicked_last], weights=w[clicked_last], minlength=n_pairs)

        def step(x: np.ndarray) -> tuple[np.ndarray, float]:
            alpha, sigma, gamma = x[:n_pairs], x[n_pairs:-1], float(x[-1])
            a = np.where(shown, alpha[np.maximum(tail, 0)], 0.0)
            sig = np.where(clicked_last, sigma[np.maximum(lastp, 0)], 0.0)
            z = np.ones((n_d, n_r + 1))  # P(no click at ranks j.. | rank j examined)
            for j in range(n_r - 1, -1, -1):
                z[:, j] = np.where(shown[:, j], (1.0 - a[:, j]) * ((1.0 - gamma) + gamma * z[:, j + 1]), 1.0)
            e0 = np.where(clicked_last, gamma * (1.0 - sig), 1.0)  # P(the first tail rank is examined)
            total = 1.0 - e0 + e0 * z[:, 0]  # P(no click below the last click)
            f = np.empty((n_d, n_r))
            f[:, 0] = e0
            for j in range(1, n_r):
                f[:, j] = f[:, j - 1] * (1.0 - a[:, j - 1]) * gamma
            p_exam = np.where(shown, f * z[:, :n_r] / total[:, None], 0.0)
            unseen = (a * (1.0 - p_exam))[shown]
            num_a = clicked + np.bincount(tail_pairs, weights=tail_w * unseen, minlength=n_pairs)
            new_alpha = _ratio(num_a, imp, alpha)
            p_sat = np.where(clicked_last, sig / total, 0.0)
            sat = np.bincount(lastp[clicked_last], weights=(w * p_sat)[clicked_last], minlength=n_pairs)
            new_sigma = _ratio(sat, clicked, sigma)
            chances = fixed + float((w * np.where(chance_last, 1.0 - p_sat, 0.0)).sum())
            taken = fixed + float((w * np.where(chance_last, p_exam[:, 0], 0.0)).sum())
            chances += float((ww * np.where(chance_tail, p_exam, 0.0)).sum())
            taken += float((ww[:, :-1] * np.where(chance_tail[:, :-1], p_exam[:, 1:], 0.0)).sum())
            new_gamma = taken / chances if chances > 0 else gamma
            ll = (
                log_likelihood_terms(clicked, alpha)
                + log_likelihood_terms(skipped_above, 1.0 - alpha)
                + log_likelihood_terms(not_last, 1.0 - sigma)
                + log_likelihood_terms(np.array([fixed]), np.array([gamma]))
                + log_likelihood_terms(w, total)
            )
            return np.concatenate([new_alpha, new_sigma, [new_gamma]]), ll

        x0 = np.full(2 * n_pairs + 1, DEFAULT)
        em = run_em(step, x0, max_iter=self.max_iter, tol=self.tol, accelerate=self.accelerate)
        self._set(attractiveness=em.x[:n_pairs], satisfaction=em.x[n_pairs:-1], continuation=float(em.x[-1]))
        self._ended(em)

    @property
    def after_skip(self) -> float:  # type: ignore[override]
        return self.gamma

    def _after_click(self, s: Sessions) -> np.ndarray:
        return self.gamma * (1.0 - _take(self.sigma, s.pairs))

    def params(self) -> dict[str, Any]:
        return {
            "continuation": self.gamma,
            "attractiveness": _by_pair(self.fitted, self.alpha),
            "satisfaction": _by_pair(self.fitted, self.sigma),
        }

    def labels(self) -> np.ndarray:
        return self.alpha * self.sigma


__all__ = ["DBN", "TailCounts", "distinct_sessions"]
