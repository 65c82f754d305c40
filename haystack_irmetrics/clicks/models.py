"""Click models as Chuklin, Markov & de Rijke, *Click Models for Web Search* (2015) define them.

Each model is fitted on :class:`~.log.Sessions` from sufficient statistics: counts of distinct
(pair, rank, click) combinations (CTRs, PBM), (pair, rank, rank of the previous click, click) (UBM),
closed forms over the ranks up to the first or last click (Cascade, DCM, SDBN), or, for the DBN, the
distinct sessions (documents and clicks) with their counts, so memory grows with what is distinct in
the log, not with its rows. EM starts every probability at 0.5 (as PyClick), is accelerated by SQUAREM
unless ``accelerate=False`` (:mod:`.em`), and stops when an EM step moves no parameter more than ``tol``
(:data:`TOL`) or after ``max_iter`` (:data:`MAX_ITER`) steps; the model says which (:attr:`ClickModel.em`,
and a :class:`~haystack_irmetrics.errors.ConvergenceWarning` when it stopped at ``max_iter``).

A pair the model never saw (a held-out session's new document) takes :data:`DEFAULT` for each of
its parameters; a rank beyond the longest training session takes :data:`DEFAULT` too.

Every model gives, for any sessions, the probability of a click at each rank given the clicks above
(``conditional``, behind the log-likelihood) and without them (``full``, behind the perplexity):
:meth:`ClickModel.probabilities`. The cascade family (Cascade, DCM, DBN, SDBN) shares one recursion:
the user examines rank 1; after a click at rank r they go on with a probability ``after_click`` (0;
the DCM's lambda_r; the DBN's gamma (1 - sigma); the SDBN's 1 - sigma), after a skip with ``after_skip``
(1, or the DBN's gamma).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np

from ..errors import ClickModelError, ConvergenceWarning
from .em import EMResult, log_likelihood_terms, run_em
from .log import Sessions

#: A parameter's starting value and the value of a pair or rank the training sessions never showed.
DEFAULT = 0.5
#: EM's defaults: stop when one EM step moves no parameter more than TOL, or after MAX_ITER EM steps.
TOL = 1e-6
MAX_ITER = 5000
#: Probabilities are kept in [FLOOR, 1 - FLOOR] when their logarithm is taken (a Cascade session with
#: two clicks has probability 0 under the model).
FLOOR = 1e-10


def _take(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``values[codes]``, with :data:`DEFAULT` for codes past the end and for ``-1`` (not shown)."""
    out = np.full(codes.shape, DEFAULT)
    ok = (codes >= 0) & (codes < values.shape[0])
    out[ok] = values[codes[ok]]
    return out


def _ratio(num: np.ndarray, den: np.ndarray, old: np.ndarray | None = None) -> np.ndarray:
    """``num / den`` where ``den > 0``, else the old value (or :data:`DEFAULT`)."""
    keep = np.full(num.shape, DEFAULT) if old is None else old
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), keep)


def _by_rank(values: np.ndarray) -> dict[str, float]:
    return {str(r + 1): float(v) for r, v in enumerate(values)}


def _by_pair(sessions: Sessions, values: np.ndarray) -> dict[str, dict[str, float]]:
    queries, docs = sessions.pair_names()
    out: dict[str, dict[str, float]] = {}
    for q, d, v in zip(queries, docs, values.tolist(), strict=True):
        out.setdefault(q, {})[d] = v
    return out


def slot_counts(pairs: np.ndarray, slots: np.ndarray, clicks: np.ndarray, n_slots: int) -> tuple[np.ndarray, ...]:
    """Distinct (pair, slot) combinations of the shown cells: (pair, slot, clicks, skips) of each.

    One int64 key per cell (pair x n_slots + slot); counted with ``bincount`` when the keys are dense
    enough, else through ``unique``. Memory: the distinct combinations, not the cells.
    """
    key = pairs.astype(np.int64) * n_slots + slots
    top = int(key.max(initial=-1)) + 1
    if top <= 4 * key.size + 1024:
        shown = np.bincount(key, minlength=top)
        hit = np.bincount(key[clicks], minlength=top)
        distinct = np.flatnonzero(shown)
        shown, hit = shown[distinct], hit[distinct]
    else:
        distinct, inverse = np.unique(key, return_inverse=True)
        shown = np.bincount(inverse, minlength=distinct.size)
        hit = np.bincount(inverse[clicks], minlength=distinct.size)
    return distinct // n_slots, distinct % n_slots, hit.astype(float), (shown - hit).astype(float)


def no_qrels_message(name: str) -> str:
    """Why a model without a per-document parameter (:attr:`ClickModel.per_document`) gives no qrels."""
    return (
        f"{name} has no per-document parameter to derive qrels from (it would give every (query, document) "
        "pair the same label); use ctr or a click model"
    )


class ClickModel:
    """A click model: :meth:`fit` on sessions, then :meth:`probabilities`, :meth:`params`, :meth:`labels`."""

    name: ClassVar[str] = ""
    #: What :meth:`labels` gives: the per-pair parameter behind click-derived qrels.
    label_name: ClassVar[str] = "attractiveness"
    #: Whether :meth:`labels` tells one (query, document) pair from another: False for the models with no
    #: per-document parameter (one click rate, or one per rank), which give no qrels.
    per_document: ClassVar[bool] = True

    def __init__(self, *, max_iter: int = MAX_ITER, tol: float = TOL, accelerate: bool = True) -> None:
        if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
            raise ClickModelError(f"max_iter must be a positive int, got {max_iter!r}")
        if isinstance(tol, bool) or not isinstance(tol, int | float) or not tol >= 0:
            raise ClickModelError(f"tol must be a number >= 0, got {tol!r}")
        if not isinstance(accelerate, bool):
            raise ClickModelError(f"accelerate must be True or False, got {accelerate!r}")
        self.max_iter = max_iter
        self.tol = float(tol)
        self.accelerate = accelerate
        #: How the EM ended (None for a model fitted in closed form, or not fitted).
        self.em: EMResult | None = None
        self._sessions: Sessions | None = None

    @property
    def iterations(self) -> int:
        """EM steps the fit took (0 for a closed form)."""
        return 0 if self.em is None else self.em.iterations

    @property
    def converged(self) -> bool:
        """Whether the fit reached its maximum: a closed form always; EM when its last step moved no
        parameter more than ``tol`` (False when it stopped at ``max_iter``)."""
        return self.em is None or self.em.converged

    def convergence(self) -> dict[str, Any]:
        """``model.json``'s account of the fit: ``converged``, ``iterations``, ``change`` (the largest move of
        the last EM step; 0.0 for a closed form), ``tol``, ``max_iter`` and ``accelerated`` (None without EM)."""
        em = self.em
        return {
            "converged": self.converged,
            "iterations": self.iterations,
            "change": 0.0 if em is None else em.change,
            "tol": None if em is None else self.tol,
            "max_iter": None if em is None else self.max_iter,
            "accelerated": None if em is None else self.accelerate,
        }

    def _em_options(self) -> dict[str, Any]:
        return {"max_iter": self.max_iter, "tol": self.tol, "accelerate": self.accelerate}

    def _ended(self, result: EMResult) -> EMResult:
        """Keep how the EM ended, with a :class:`ConvergenceWarning` when it stopped at ``max_iter``."""
        self.em = result
        if not result.converged:
            warnings.warn(
                f"{self.name}: EM stopped at max_iter={self.max_iter} steps before converging (its last step "
                f"moved a parameter by {result.change:.3g} > tol={self.tol:g}); raise max_iter (--max-iter)",
                ConvergenceWarning,
                stacklevel=3,
            )
        return result

    def __repr__(self) -> str:
        state = f"fitted on {self._sessions.n_sessions} sessions" if self._sessions is not None else "not fitted"
        return f"{type(self).__name__}({state})"

    def fit(self, sessions: Sessions) -> ClickModel:
        """Fit on ``sessions`` (their pair table becomes the model's); returns the model."""
        if sessions.n_sessions == 0:
            raise ClickModelError(f"{self.name}: no session to fit on")
        self._sessions = sessions
        self._fit(sessions)
        return self

    @property
    def fitted(self) -> Sessions:
        if self._sessions is None:
            raise ClickModelError(f"{self.name}: fit the model first")
        return self._sessions

    def _fit(self, sessions: Sessions) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def probabilities(self, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
        """(conditional, full): P(click at rank r | the clicks above) and P(click at rank r), ``(S, R)``.

        ``sessions`` must be over the fitted pair table (:meth:`Sessions.aligned_to`); values beyond a
        session's length are 0.
        """
        self.fitted  # noqa: B018
        cond, full = self._probabilities(sessions)
        return np.where(sessions.shown, cond, 0.0), np.where(sessions.shown, full, 0.0)

    def _probabilities(self, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The fitted parameters as JSON values (per pair: ``{query: {doc: p}}``; per rank: ``{"1": p, ...}``)."""
        raise NotImplementedError  # pragma: no cover

    def labels(self) -> np.ndarray:
        """Per fitted pair, the label of click-derived qrels in [0, 1] (:attr:`label_name`)."""
        raise NotImplementedError  # pragma: no cover

    def simulate(self, sessions: Sessions, rng: np.random.Generator) -> np.ndarray:
        """Clicks drawn from the model over ``sessions``' rankings (their clicks are ignored), ``(S, R)`` bool."""
        raise NotImplementedError  # pragma: no cover


def _rank_values(values: np.ndarray, n_ranks: int) -> np.ndarray:
    """Per-rank parameters padded with :data:`DEFAULT` (or cut) to ``n_ranks`` columns."""
    out = np.full(n_ranks, DEFAULT)
    n = min(n_ranks, values.shape[0])
    out[:n] = values[:n]
    return out


# -- CTR baselines ----------------------------------------------------------------------------------


class GlobalCTR(ClickModel):
    """GCTR: one click probability for every rank and document (clicks / impressions)."""

    name = "gctr"
    label_name = "click_probability"
    per_document = False  # one value for every pair: qrels of it would judge every document alike

    def _fit(self, s: Sessions) -> None:
        self.rho = float(s.clicks.sum() / s.shown.sum())

    def _probabilities(self, s: Sessions) -> tuple[np.ndarray, np.ndarray]:
        p = np.full(s.pairs.shape, self.rho)
        return p, p

    def params(self) -> dict[str, Any]:
        return {"click_probability": self.rho}

    def labels(self) -> np.ndarray:
        return np.full(self.fitted.n_pairs, self.rho)

    def simulate(self, s: Sessions, rng: np.random.Generator) -> np.ndarray:
        return (rng.random(s.pairs.shape) < self.rho) & s.shown


class RankCTR(ClickModel):
    """RCTR: a click probability per rank."""

    name = "rctr"
    label_name = "click_probability"
    per_document = False

    def _fit(self, s: Sessions) -> None:
        self.rho = _ratio(s.clicks.sum(axis=0).astype(float), s.shown.sum(axis=0).astype(float))

    def _probabilities(self, s: Sessions) -> tuple[np.ndarray, np.ndarray]:
        p = np.broadcast_to(_rank_values(self.rho, s.n_ranks), s.pairs.shape).copy()
        return p, p

    def params(self) -> dict[str, Any]:
        return {"click_probability": _by_rank(self.rho)}

    def labels(self) -> np.ndarray:
        raise ClickModelError(no_qrels_message(self.name))


class DocumentCTR(ClickModel):
    """DCTR (``ctr``): a click probability per (query, document) pair, whatever the rank."""

    name = "ctr"

    def _fit(self, s: Sessions) -> None:
        shown = s.pairs[s.shown]
        imp = np.bincount(shown, minlength=s.n_pairs).astype(float)
        clk = np.bincount(s.pairs[s.clicks & s.shown], minlength=s.n_pairs).astype(float)
        self.alpha = _ratio(clk, imp)

    def _probabilities(self, s: Sessions) -> tuple[np.ndarray, np.ndarray]:
        p = _take(self.alpha, s.pairs)
        return p, p

    def params(self) -> dict[str, Any]:
        return {"attractiveness": _by_pair(self.fitted, self.alpha)}

    def labels(self) -> np.ndarray:
        return self.alpha

    def simulate(self, s: Sessions, rng: np.random.Generator) -> np.ndarray:
        return (rng.random(s.pairs.shape) < _take(self.alpha, s.pairs)) & s.shown


# -- PBM and UBM: examination by rank (and by the previous click), EM on distinct combinations ------


def examination_em(
    pair: np.ndarray,
    slot: np.ndarray,
    clicked: np.ndarray,
    skipped: np.ndarray,
    n_pairs: int,
    n_slots: int,
    *,
    max_iter: int,
    tol: float,
    accelerate: bool = True,
) -> tuple[np.ndarray, np.ndarray, EMResult]:
    """EM of P(click) = alpha[pair] x gamma[slot] on distinct (pair, slot) rows with their click and skip counts.

    Returns (alpha, gamma, how the EM ended). A click means both examined and attracted; a skip splits
    into (attracted, not examined) and (examined, not attracted) by the current parameters.
    """
    n = clicked + skipped
    imp_pair = np.bincount(pair, weights=n, minlength=n_pairs)
    imp_slot = np.bincount(slot, weights=n, minlength=n_slots)

    def step(x: np.ndarray) -> tuple[np.ndarray, float]:
        alpha, gamma = x[:n_pairs], x[n_pairs:]
        a, g = alpha[pair], gamma[slot]
        rest = 1.0 - a * g  # 0 only for a skip the parameters call impossible: it then counts for neither
        share = skipped / np.where(rest > 0, rest, 1.0)
        num_a = clicked + share * (a * (1.0 - g))
        num_g = clicked + share * (g * (1.0 - a))
        new_alpha = _ratio(np.bincount(pair, weights=num_a, minlength=n_pairs), imp_pair, alpha)
        new_gamma = _ratio(np.bincount(slot, weights=num_g, minlength=n_slots), imp_slot, gamma)
        ll = log_likelihood_terms(clicked, a * g) + log_likelihood_terms(skipped, rest)
        return np.concatenate([new_alpha, new_gamma]), ll

    result = run_em(step, np.full(n_pairs + n_slots, DEFAULT), max_iter=max_iter, tol=tol, accelerate=accelerate)
    return result.x[:n_pairs], result.x[n_pairs:], result


class PBM(ClickModel):
    """Position-based model: P(click) = attractiveness(query, doc) x examination(rank)."""

    name = "pbm"

    def _fit(self, s: Sessions) -> None:
        rank = np.broadcast_to(np.arange(s.n_ranks, dtype=np.int64), s.pairs.shape)
        pair, slot, clicked, skipped = slot_counts(s.pairs[s.shown], rank[s.shown], s.clicks[s.shown], s.n_ranks)
        self.alpha, self.gamma, em = examination_em(
            pair, slot, clicked, skipped, s.n_pairs, s.n_ranks, **self._em_options()
        )
        self._ended(em)

    def _probabilities(self, s: Sessions) -> tuple[np.ndarray, np.ndarray]:
        p = _take(self.alpha, s.pairs) * _rank_values(self.gamma, s.n_ranks)
        return p, p

    def params(self) -> dict[str, Any]:
        return {"examination": _by_rank(self.gamma), "attractiveness": _by_pair(self.fitted, self.alpha)}

    def labels(self) -> np.ndarray:
        return self.alpha

    def simulate(self, s: Sessions, rng: np.random.Generator) -> np.ndarray:
        p = _take(self.alpha, s.pairs) * _rank_values(self.gamma, s.n_ranks)
        return (rng.random(s.pairs.shape) < p) & s.shown


def previous_click(clicks: np.ndarray) -> np.ndarray:
    """Per (session, rank): the rank (1-based) of the last click above it, 0 if none."""
    ranks = np.where(clicks, np.arange(1, clicks.shape[1] + 1), 0)
    before = np.maximum.accumulate(ranks, axis=1)
    return np.concatenate([np.zeros((clicks.shape[0], 1), dtype=before.dtype), before[:, :-1]], axis=1)


class UBM(ClickModel):
    """User browsing model: examination by (rank, rank of the previous click; 0: no click above).

    ``params()["examination"]`` is ``{rank: {previous click rank: p}}``, both 1-based, 0 for none.
    """

    name = "ubm"

    def _fit(self, s: Sessions) -> None:
        rank = np.broadcast_to(np.arange(s.n_ranks), s.pairs.shape)
        prev = previous_click(s.clicks)
        slot = rank * s.n_ranks + prev  # prev < rank + 1 <= n_ranks
        n_slots = s.n_ranks * s.n_ranks
        pair, slot_u, clicked, skipped = slot_counts(s.pairs[s.shown], slot[s.shown], s.clicks[s.shown], n_slots)
        self.alpha, gamma, em = examination_em(pair, slot_u, clicked, skipped, s.n_pairs, n_slots, **self._em_options())
        self._ended(em)
        self.gamma = gamma.reshape(s.n_ranks, s.n_ranks)
        self._seen = np.bincount(slot_u, minlength=n_slots).reshape(s.n_ranks, s.n_ranks) > 0

    def _gamma(self, n_ranks: int) -> np.ndarray:
        out = np.full((n_ranks, n_ranks), DEFAULT)
        m = min(n_ranks, self.gamma.shape[0])
        out[:m, :m] = self.gamma[:m, :m]
        return out

    def _probabilities(self, s: Sessions) -> tuple[np.ndarray, np.ndarray]:
        gamma = self._gamma(s.n_ranks)
        alpha = _take(self.alpha, s.pairs)
        prev = previous_click(s.clicks)
        cond = alpha * gamma[np.arange(s.n_ranks), prev]
        # full: a distribution over the rank of the last click so far (0: none), carried down the ranks
        dist = np.zeros((s.n_sessions, s.n_ranks + 1))
        dist[:, 0] = 1.0
        full = np.zeros(s.pairs.shape)
        for r in range(s.n_ranks):
            p = alpha[:, r : r + 1] * gamma[r, : r + 1][None, :]
            click_from = dist[:, : r + 1] * p
            full[:, r] = click_from.sum(axis=1)
            dist[:, : r + 1] -= click_from
            dist[:, r + 1] = full[:, r]
        return cond, full

    def params(self) -> dict[str, Any]:
        n = self.gamma.shape[0]
        exam = {
            str(r + 1): {str(p): float(self.gamma[r, p]) for p in range(r + 1) if self._seen[r, p]} for r in range(n)
        }
        return {"examination": exam, "attractiveness": _by_pair(self.fitted, self.alpha)}

    def labels(self) -> np.ndarray:
        return self.alpha

    def simulate(self, s: Sessions, rng: np.random.Generator) -> np.ndarray:
        gamma = self._gamma(s.n_ranks)
        alpha = _take(self.alpha, s.pairs)
        clicks = np.zeros(s.pairs.shape, dtype=bool)
        last = np.zeros(s.n_sessions, dtype=np.int64)
        draws = rng.random(s.pairs.shape)
        for r in range(s.n_ranks):
            c = (draws[:, r] < alpha[:, r] * gamma[r, last]) & s.shown[:, r]
            clicks[:, r] = c
            last = np.where(c, r + 1, last)
        return clicks


# -- the cascade family ----------------------------------------------------------------------------


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


def _last_click(clicks: np.ndarray) -> np.ndarray:
    """Per session, the 0-based rank of the last click, -1 if none."""
    ranks = np.where(clicks, np.arange(clicks.shape[1]), -1)
    return ranks.max(axis=1)


def _first_click(clicks: np.ndarray) -> np.ndarray:
    """Per session, the 0-based rank of the first click, the number of ranks if none."""
    n_r = clicks.shape[1]
    ranks = np.where(clicks, np.arange(n_r), n_r)
    return ranks.min(axis=1)


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

    def _attractiveness_up_to(self, s: Sessions, cut: np.ndarray) -> np.ndarray:
        """Closed form: clicks / impressions over the ranks <= ``cut`` of each session (examined ones)."""
        examined = s.shown & (np.arange(s.n_ranks)[None, :] <= cut[:, None])
        imp = np.bincount(s.pairs[examined], minlength=s.n_pairs).astype(float)
        clk = np.bincount(s.pairs[examined & s.clicks], minlength=s.n_pairs).astype(float)
        return _ratio(clk, imp)


class Cascade(_CascadeFamily):
    """Cascade model: the user scans down and stops at the first click (closed form: the ranks up to it).

    Clicks below the first have probability 0 under the model: fitting ignores them, the
    log-likelihood counts them at :data:`FLOOR`.
    """

    name = "cascade"

    def _fit(self, s: Sessions) -> None:
        self.alpha = self._attractiveness_up_to(s, _first_click(s.clicks))

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

    def _fit(self, s: Sessions) -> None:
        last = _last_click(s.clicks)
        no_click = last < 0
        self.alpha = self._attractiveness_up_to(s, np.where(no_click, s.n_ranks, last))
        clicks_at = s.clicks.sum(axis=0).astype(float)
        last_at = np.bincount(last[~no_click], minlength=s.n_ranks).astype(float)
        self.lam = _ratio(clicks_at - last_at, clicks_at)

    def _after_click(self, s: Sessions) -> np.ndarray:
        return np.broadcast_to(_rank_values(self.lam, s.n_ranks), s.pairs.shape)

    def params(self) -> dict[str, Any]:
        return {"continuation": _by_rank(self.lam), "attractiveness": _by_pair(self.fitted, self.alpha)}


class SDBN(_CascadeFamily):
    """Simplified DBN (gamma = 1): closed form over the ranks up to the last click; the satisfaction of a
    pair is (times it was the last click) / (its clicks). Its qrels label is attractiveness x satisfaction."""

    name = "sdbn"
    label_name = "relevance"

    def _fit(self, s: Sessions) -> None:
        last = _last_click(s.clicks)
        no_click = last < 0
        self.alpha = self._attractiveness_up_to(s, np.where(no_click, s.n_ranks, last))
        clicked = np.bincount(s.pairs[s.clicks], minlength=s.n_pairs).astype(float)
        rows = np.flatnonzero(~no_click)
        last_pairs = s.pairs[rows, last[rows]]
        self.sigma = _ratio(np.bincount(last_pairs, minlength=s.n_pairs).astype(float), clicked)

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
    "DEFAULT",
    "FLOOR",
    "MAX_ITER",
    "PBM",
    "SDBN",
    "TOL",
    "UBM",
    "Cascade",
    "ClickModel",
    "DocumentCTR",
    "GlobalCTR",
    "RankCTR",
    "cascade_probabilities",
    "cascade_simulate",
    "examination_em",
    "no_qrels_message",
    "previous_click",
    "slot_counts",
]
