"""The dynamic Bayesian network click model (Chapelle & Zhang 2009), fitted by EM as Chuklin et al. (2015).

The user examines rank 1. At an examined rank they click with the pair's attractiveness alpha; after a
click they are satisfied with the pair's satisfaction sigma and stop; unsatisfied (or without a
click) they go on to the next rank with probability gamma, one value for every rank.

EM works on the distinct sessions (documents and clicks), each with how many times it occurs. Given
the clicks, every rank above the last click was examined and left unsatisfied; what is hidden is
whether the user was satisfied at the last click and how far they read below it. Per distinct
session, one backward pass gives Z_j = P(no click at ranks j.. | rank j examined) and one forward pass
the probability that each rank below the last click was examined; the expected counts follow:

* alpha: clicks, plus at each unclicked rank below the last click alpha (1 - P(examined));
  divided by the pair's impressions;
* sigma: P(satisfied at the last click) = sigma / P(no click below it); divided by the pair's clicks;
* gamma: expected continuations over expected chances to continue (examined, unsatisfied) at every rank
  but a session's last, whose continuation the log cannot show (left out: the same maximum, faster).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .log import Sessions
from .models import DEFAULT, _by_pair, _CascadeFamily, _last_click, _ratio, _take


def distinct_sessions(pairs: np.ndarray, clicks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of one session per distinct (documents, clicks) row, how many sessions each stands for)."""
    n_s, n_r = pairs.shape
    if n_s == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    rng = np.random.default_rng(0x5EED)
    mult = rng.integers(1, 2**63 - 1, size=(2, n_r), dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        h = (pairs.astype(np.uint64) + np.uint64(1)) * mult[0] + clicks.astype(np.uint64) * mult[1]
        h = np.bitwise_xor.reduce(h * np.uint64(0x9E3779B97F4A7C15) + np.arange(n_r, dtype=np.uint64), axis=1)
    _, first, inverse, counts = np.unique(h, return_index=True, return_inverse=True, return_counts=True)
    rep = first[inverse]
    if not (np.array_equal(pairs, pairs[rep]) and np.array_equal(clicks, clicks[rep])):  # a hash collision
        both = np.concatenate([pairs.astype(np.int64), clicks.astype(np.int64)], axis=1)
        _, first, counts = np.unique(both, axis=0, return_index=True, return_counts=True)
    return first, counts.astype(np.float64)


class DBN(_CascadeFamily):
    """Dynamic Bayesian network model: attractiveness and satisfaction per pair, one continuation gamma.

    Its qrels label is the relevance attractiveness x satisfaction.
    """

    name = "dbn"
    label_name = "relevance"

    def _fit(self, s: Sessions) -> None:
        first, w = distinct_sessions(s.pairs, s.clicks)
        pairs, clicks, shown = s.pairs[first], s.clicks[first], s.shown[first]
        n_d, n_r = pairs.shape
        rows = np.arange(n_d)
        ranks = np.arange(n_r)[None, :]
        length = shown.sum(axis=1)
        last = _last_click(clicks)
        has_click = last >= 0
        start = last + 1  # the first rank below the last click (0 without a click)
        tail = shown & (ranks >= start[:, None])
        ww = np.broadcast_to(w[:, None], pairs.shape)
        imp = np.bincount(pairs[shown], weights=ww[shown], minlength=s.n_pairs)
        clicked = np.bincount(pairs[clicks], weights=ww[clicks], minlength=s.n_pairs)
        last_pair = np.where(has_click, pairs[rows, np.maximum(last, 0)], 0)
        # ranks above the last click: each a chance to go on, taken
        fixed = float((w * np.maximum(last, 0)).sum())
        # a chance at the last click and below it, except at a session's last rank
        chance_at_last = has_click & (last < length - 1)
        chance_tail = tail & (ranks < (length - 1)[:, None])

        alpha = np.full(s.n_pairs, DEFAULT)
        sigma = np.full(s.n_pairs, DEFAULT)
        gamma = DEFAULT
        iterations = 0
        for iterations in range(1, self.max_iter + 1):  # noqa: B007 - the count is kept
            a = _take(alpha, pairs)
            sig_last = np.where(has_click, sigma[last_pair], 0.0)
            z = np.ones((n_d, n_r + 1))
            for r in range(n_r - 1, -1, -1):
                z[:, r] = np.where(shown[:, r], (1.0 - a[:, r]) * ((1.0 - gamma) + gamma * z[:, r + 1]), 1.0)
            e0 = np.where(has_click, gamma * (1.0 - sig_last), 1.0)
            z_start = z[rows, start]
            total = 1.0 - e0 + e0 * z_start  # P(no click below the last click)
            f = np.zeros((n_d, n_r + 1))
            for r in range(n_r + 1):
                carried = f[:, r - 1] * (1.0 - a[:, r - 1]) * gamma if r else 0.0
                f[:, r] = np.where(start == r, e0, np.where(start < r, carried, 0.0))
            p_exam = f * z / total[:, None]  # P(rank examined | clicks), below the last click
            num_a = np.where(clicks, 1.0, 0.0) + np.where(tail, a * (1.0 - p_exam[:, :n_r]), 0.0)
            new_alpha = _ratio(np.bincount(pairs[shown], weights=(ww * num_a)[shown], minlength=s.n_pairs), imp, alpha)
            p_sat = np.where(has_click, sig_last / total, 0.0)
            sat = np.bincount(last_pair[has_click], weights=(w * p_sat)[has_click], minlength=s.n_pairs)
            new_sigma = _ratio(sat, clicked, sigma)
            chances = fixed + float((w * np.where(chance_at_last, 1.0 - p_sat, 0.0)).sum())
            taken = fixed + float((w * np.where(chance_at_last, p_exam[rows, start], 0.0)).sum())
            chances += float((ww * np.where(chance_tail, p_exam[:, :n_r], 0.0)).sum())
            taken += float((ww * np.where(chance_tail, p_exam[:, 1:], 0.0)).sum())
            new_gamma = taken / chances if chances > 0 else gamma
            moved = max(
                np.abs(new_alpha - alpha).max(initial=0.0),
                np.abs(new_sigma - sigma).max(initial=0.0),
                abs(new_gamma - gamma),
            )
            alpha, sigma, gamma = new_alpha, new_sigma, new_gamma
            if moved <= self.tol:
                break
        self.alpha, self.sigma, self.gamma = alpha, sigma, float(gamma)
        self.iterations = iterations

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


__all__ = ["DBN", "distinct_sessions"]
