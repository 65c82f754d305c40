"""Click models as Chuklin, Markov & de Rijke, *Click Models for Web Search* (2015) define them.

Each model is fitted on :class:`~.log.Sessions` from sufficient statistics: counts of distinct
(pair, rank, click) combinations (CTRs, PBM), (pair, rank, rank of the previous click, click) (UBM),
closed forms over the ranks up to the first or last click (Cascade, DCM, SDBN), or, for the DBN, the
distinct sessions (documents and clicks) with their counts, so memory grows with what is distinct in
the log, not with its rows. EM starts every probability at 0.5 (as PyClick), is accelerated by SQUAREM
unless ``accelerate=False`` (:mod:`.em`), and stops when an EM step moves no parameter more than ``tol``
(:data:`TOL`) or after ``max_iter`` (:data:`MAX_ITER`) steps; the model says which (:attr:`ClickModel.em`,
and a :class:`~haystack_irmetrics.errors.ConvergenceWarning` when it stopped at ``max_iter``).

A model fits in two steps: :meth:`ClickModel.counts` makes its sufficient statistics from sessions (numpy,
partition by partition where the log is split: :mod:`.statistics`), and the fit reads only them. A fitted
model is also made from counts merged from elsewhere (:meth:`ClickModel.from_counts`) or from known
parameters (:meth:`ClickModel.from_parameters`, the simulations'). What each model is (its parameters and
their ranges, its statistics, whether it labels documents) is its entry in :mod:`.registry`.

A pair the model never saw (a held-out session's new document) takes :data:`DEFAULT` for each of
its parameters; a rank beyond the longest training session takes :data:`DEFAULT` too.

Every model gives, for any sessions, the probability of a click at each rank given the clicks above
(``conditional``, behind the log-likelihood) and without them (``full``, behind the perplexity):
:meth:`ClickModel.probabilities`. The cascade family (Cascade, DCM, DBN, SDBN) shares one recursion:
the user examines rank 1; after a click at rank r they go on with a probability ``after_click`` (0;
the DCM's lambda_r; the DBN's gamma (1 - sigma); the SDBN's 1 - sigma), after a skip with ``after_skip``
(1, or the DBN's gamma); :mod:`.cascade` holds it with Cascade, DCM and SDBN, :mod:`.dbn` the DBN.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..checks import number, whole
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


@dataclass(frozen=True)
class EMSettings:
    """How EM runs: at most ``max_iter`` EM steps, stopping when a step moves no parameter more than ``tol``,
    SQUAREM-accelerated unless ``accelerate`` is False (:mod:`.em`). Checked when made.

    :raises ClickModelError: ``max_iter`` is not a positive int, ``tol`` not a number >= 0, ``accelerate``
        not a bool.
    """

    max_iter: int = MAX_ITER
    tol: float = TOL
    accelerate: bool = True

    def __post_init__(self) -> None:
        max_iter, tol, accelerate = self.max_iter, self.tol, self.accelerate
        whole(max_iter, "max_iter", least=1, error=ClickModelError)
        number(tol, "tol", 0, finite=False, error=ClickModelError)
        if not isinstance(accelerate, bool):
            raise ClickModelError(f"accelerate must be True or False, got {accelerate!r}")
        object.__setattr__(self, "tol", float(tol))

    def options(self) -> dict[str, Any]:
        """``{"max_iter", "tol", "accelerate"}``: the keywords of :func:`.em.run_em` and of every model."""
        return {"max_iter": self.max_iter, "tol": self.tol, "accelerate": self.accelerate}


class ClickModel:
    """A click model: :meth:`fit` on sessions, then :meth:`probabilities`, :meth:`params`, :meth:`labels`.

    A subclass gives :meth:`counts` (its sufficient statistics of sessions), ``_fit_counts`` (the fit from
    them, through ``_set``) and ``_set`` (its parameters, keywords named as :meth:`params` names them).
    """

    name: ClassVar[str] = ""
    #: What :meth:`labels` gives: the per-pair parameter behind click-derived qrels.
    label_name: ClassVar[str] = "attractiveness"
    #: Whether :meth:`labels` tells one (query, document) pair from another: False for the models with no
    #: per-document parameter (one click rate, or one per rank), which give no qrels.
    per_document: ClassVar[bool] = True

    def __init__(self, *, max_iter: int = MAX_ITER, tol: float = TOL, accelerate: bool = True) -> None:
        settings = EMSettings(max_iter=max_iter, tol=tol, accelerate=accelerate)
        self.max_iter = settings.max_iter
        self.tol = settings.tol
        self.accelerate = settings.accelerate
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

    @property
    def em_settings(self) -> EMSettings:
        """The model's :class:`EMSettings` (used by the models fitted by EM)."""
        return EMSettings(max_iter=self.max_iter, tol=self.tol, accelerate=self.accelerate)

    def _em_options(self) -> dict[str, Any]:
        return self.em_settings.options()

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
        self._fit_counts(self.counts(sessions))
        return self

    @classmethod
    def counts(cls, sessions: Sessions) -> Any:
        """The model's sufficient statistics of ``sessions`` (:class:`SlotCounts`, ...), over their pair table."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _fit_counts(self, counts: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    #: Each parameter's name (as :meth:`params` names it) and the attribute that holds its fitted value.
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {}

    def _set(self, **values: Any) -> None:
        """Hold the parameters (every one of :attr:`ATTRIBUTES`, by name): arrays of floats, or a float."""
        if set(values) != set(self.ATTRIBUTES):
            raise ClickModelError(f"{self.name} takes the parameters {sorted(self.ATTRIBUTES)}, got {sorted(values)}")
        for name, value in values.items():
            array = np.asarray(value, dtype=float)
            setattr(self, self.ATTRIBUTES[name], float(array) if array.ndim == 0 else array)

    def parameter(self, name: str) -> Any:
        """A fitted parameter by its name (:meth:`params`' key): an array over the pair table or the ranks, or a
        number.

        :raises ClickModelError: the model has no such parameter.
        """
        if name not in self.ATTRIBUTES:
            raise ClickModelError(f"{self.name} has no parameter {name!r}; its parameters: {sorted(self.ATTRIBUTES)}")
        self.fitted  # noqa: B018
        return getattr(self, self.ATTRIBUTES[name])

    @classmethod
    def _over(cls, pairs: Sessions, options: dict[str, Any]) -> ClickModel:
        model = cls(**options)
        model._sessions = pairs
        return model

    @classmethod
    def from_counts(cls, pairs: Sessions, counts: Any, **options: Any) -> ClickModel:
        """The model fitted on ``counts`` (of :meth:`counts`' kind, coded by ``pairs``' pair table, e.g. merged
        from the partitions of a log), as :meth:`fit` fits on the sessions they were counted from.

        :param options: ``max_iter``, ``tol``, ``accelerate`` (:class:`EMSettings`).
        """
        model = cls._over(pairs, options)
        model._fit_counts(counts)
        return model

    @classmethod
    def from_parameters(cls, pairs: Sessions, *, em: EMResult | None = None, **values: Any) -> ClickModel:
        """A fitted model with the given parameters over ``pairs``' pair table, named as :meth:`params` names
        them (``attractiveness`` per pair, ``examination`` per rank, ...; arrays coded by the pair table).

        :param em: how the EM that found them ended, if one did (a model that stopped short warns, as a fit).
        :param values: the parameters, and the :class:`EMSettings` keywords (``max_iter``, ``tol``, ``accelerate``).
        """
        options = {k: values.pop(k) for k in ("max_iter", "tol", "accelerate") if k in values}
        model = cls._over(pairs, options)
        model._set(**values)
        if em is not None:
            model._ended(em)
        return model

    @property
    def fitted(self) -> Sessions:
        if self._sessions is None:
            raise ClickModelError(f"{self.name}: fit the model first")
        return self._sessions

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


# -- the slot models: clicks and skips per (pair, rank[, previous click]) -----------------------------


def previous_click(clicks: np.ndarray) -> np.ndarray:
    """Per (session, rank): the rank (1-based) of the last click above it, 0 if none."""
    ranks = np.where(clicks, np.arange(1, clicks.shape[1] + 1), 0)
    before = np.maximum.accumulate(ranks, axis=1)
    return np.concatenate([np.zeros((clicks.shape[0], 1), dtype=before.dtype), before[:, :-1]], axis=1)


@dataclass(frozen=True)
class SlotCounts:
    """The sufficient statistics of the CTR baselines, PBM and UBM: the clicks and skips of each distinct (pair,
    rank, rank of the previous click) of the shown cells (``rank`` 0-based; ``prev`` 1-based, 0 for no click
    above, and 0 throughout for a model that does not read it); ``n_ranks``: the longest session."""

    pair: np.ndarray
    rank: np.ndarray
    prev: np.ndarray
    clicked: np.ndarray
    skipped: np.ndarray
    n_ranks: int

    @classmethod
    def of(cls, s: Sessions, *, previous: bool) -> SlotCounts:
        """``s``'s counts, by the previous click's rank too when ``previous``."""
        n = s.n_ranks
        rank = np.broadcast_to(np.arange(n, dtype=np.int64), s.pairs.shape)
        if not previous:
            pair, slot, clicked, skipped = slot_counts(s.pairs[s.shown], rank[s.shown], s.clicks[s.shown], n)
            return cls(pair, slot, np.zeros_like(slot), clicked, skipped, n)
        both = rank * n + previous_click(s.clicks)  # prev < rank + 1 <= n
        pair, slot, clicked, skipped = slot_counts(s.pairs[s.shown], both[s.shown], s.clicks[s.shown], n * n)
        return cls(pair, slot // n, slot % n, clicked, skipped, n)


class _SlotModel(ClickModel):
    """A model fitted on :class:`SlotCounts`; ``previous_click``: whether it reads the previous click's rank."""

    previous_click: ClassVar[bool] = False

    @classmethod
    def counts(cls, sessions: Sessions) -> SlotCounts:
        return SlotCounts.of(sessions, previous=cls.previous_click)

    def _shown(self, c: SlotCounts, by: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        """(clicks, impressions) summed by ``by`` (the pair or the rank of each row), ``size`` values."""
        return (
            np.bincount(by, weights=c.clicked, minlength=size),
            np.bincount(by, weights=c.clicked + c.skipped, minlength=size),
        )


# -- CTR baselines ----------------------------------------------------------------------------------


class GlobalCTR(_SlotModel):
    """GCTR: one click probability for every rank and document (clicks / impressions)."""

    name = "gctr"
    label_name = "click_probability"
    per_document = False  # one value for every pair: qrels of it would judge every document alike
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {"click_probability": "rho"}

    def _fit_counts(self, c: SlotCounts) -> None:
        self._set(click_probability=float(c.clicked.sum() / (c.clicked + c.skipped).sum()))

    def _probabilities(self, s: Sessions) -> tuple[np.ndarray, np.ndarray]:
        p = np.full(s.pairs.shape, self.rho)
        return p, p

    def params(self) -> dict[str, Any]:
        return {"click_probability": self.rho}

    def labels(self) -> np.ndarray:
        return np.full(self.fitted.n_pairs, self.rho)

    def simulate(self, s: Sessions, rng: np.random.Generator) -> np.ndarray:
        return (rng.random(s.pairs.shape) < self.rho) & s.shown


class RankCTR(_SlotModel):
    """RCTR: a click probability per rank."""

    name = "rctr"
    label_name = "click_probability"
    per_document = False
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {"click_probability": "rho"}

    def _fit_counts(self, c: SlotCounts) -> None:
        self._set(click_probability=_ratio(*self._shown(c, c.rank, c.n_ranks)))

    def _probabilities(self, s: Sessions) -> tuple[np.ndarray, np.ndarray]:
        p = np.broadcast_to(_rank_values(self.rho, s.n_ranks), s.pairs.shape).copy()
        return p, p

    def params(self) -> dict[str, Any]:
        return {"click_probability": _by_rank(self.rho)}

    def labels(self) -> np.ndarray:
        raise ClickModelError(no_qrels_message(self.name))

    def simulate(self, s: Sessions, rng: np.random.Generator) -> np.ndarray:
        return (rng.random(s.pairs.shape) < _rank_values(self.rho, s.n_ranks)) & s.shown


class DocumentCTR(_SlotModel):
    """DCTR (``ctr``): a click probability per (query, document) pair, whatever the rank."""

    name = "ctr"
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {"attractiveness": "alpha"}

    def _fit_counts(self, c: SlotCounts) -> None:
        self._set(attractiveness=_ratio(*self._shown(c, c.pair, self.fitted.n_pairs)))

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


class PBM(_SlotModel):
    """Position-based model: P(click) = attractiveness(query, doc) x examination(rank)."""

    name = "pbm"
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {"attractiveness": "alpha", "examination": "gamma"}

    def _fit_counts(self, c: SlotCounts) -> None:
        alpha, gamma, em = examination_em(
            c.pair, c.rank, c.clicked, c.skipped, self.fitted.n_pairs, c.n_ranks, **self._em_options()
        )
        self._set(attractiveness=alpha, examination=gamma)
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


class UBM(_SlotModel):
    """User browsing model: examination by (rank, rank of the previous click; 0: no click above).

    ``params()["examination"]`` is ``{rank: {previous click rank: p}}``, both 1-based, 0 for none.
    """

    name = "ubm"
    previous_click = True
    ATTRIBUTES: ClassVar[Mapping[str, str]] = {"attractiveness": "alpha", "examination": "gamma"}

    def _fit_counts(self, c: SlotCounts) -> None:
        n = c.n_ranks
        slot = c.rank * n + c.prev
        alpha, gamma, em = examination_em(
            c.pair, slot, c.clicked, c.skipped, self.fitted.n_pairs, n * n, **self._em_options()
        )
        self._ended(em)
        seen = np.bincount(slot, minlength=n * n).reshape(n, n) > 0
        self._set(attractiveness=alpha, examination=gamma.reshape(n, n), seen=seen)

    def _set(self, *, seen: np.ndarray | None = None, **values: Any) -> None:
        """``examination[r][p]``: rank r + 1 after a click at rank p (0: none); ``seen``: the (r, p) the log
        showed, which :meth:`params` lists (default: every p <= r)."""
        super()._set(**values)
        self._seen = np.tril(np.ones(self.gamma.shape, dtype=bool)) if seen is None else np.asarray(seen, dtype=bool)

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


__all__ = [
    "DEFAULT",
    "FLOOR",
    "MAX_ITER",
    "PBM",
    "TOL",
    "UBM",
    "ClickModel",
    "DocumentCTR",
    "EMSettings",
    "GlobalCTR",
    "RankCTR",
    "SlotCounts",
    "examination_em",
    "no_qrels_message",
    "previous_click",
    "slot_counts",
]
