"""The EM loop of every click model fitted by EM (PBM, UBM, DBN): plain, or accelerated by SQUAREM.

A model gives one EM step on a flat vector of its probabilities, ``step(x) -> (F(x), L(x))``: the next
parameters and the log-likelihood of the clicks at ``x`` (which the step computes anyway). :func:`run_em`
iterates it from :data:`~.models.DEFAULT` until one EM step moves no parameter more than ``tol`` or
``max_iter`` steps were taken, and says which (:class:`EMResult`).

Plain EM (``accelerate=False``) is one step per iteration, as the book writes it. It converges
linearly, and slowly where the likelihood is flat (a satisfaction near 0, a pair shown at one rank only):
on the shipped ``click_log.csv`` the DBN needs thousands of steps to settle. SQUAREM (Varadhan &
Roland, *Scand. J. Statist.* 35, 2008; the S3 step length with the monotone safeguard of their R package)
takes two EM steps ``x1 = F(x)``, ``x2 = F(x1)``, jumps along them to
``x + 2 a r + a^2 v`` (``r = x1 - x``, ``v = x2 - x1 - r``, ``a = |r| / |v|`` between 1 and a cap that grows
after each jump it allows), clipped to [0, 1], and takes one EM step from there. The jump is kept only
when the likelihood there is at least the likelihood at ``x`` (so the fit's likelihood never goes down,
as EM's does not), else the plain ``x2`` is kept and the cap shrinks. It converges to the same maximum,
in far fewer steps; every value it returns is an EM step's output.

Every EM step counts as an iteration (a SQUAREM cycle takes two or three), so ``max_iter`` bounds the
work alike in both modes. ``change`` is the largest move of the last EM step taken from a point the
loop kept: ``converged`` is ``change <= tol``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: A model's EM step: ``x -> (F(x), log-likelihood at x)``.
Step = Callable[[np.ndarray], tuple[np.ndarray, float]]

#: SQUAREM's step-length cap starts at 1 and is multiplied (divided) by this after a kept (refused) jump at it.
_CAP_FACTOR = 4.0


@dataclass(frozen=True)
class EMResult:
    """The parameters EM returned (``x``), the EM steps taken, whether the last one moved no parameter more than
    tol, its largest move, and the clicks' log-likelihood where that step started (the log-likelihood of
    ``x`` is at least that: EM never lowers it)."""

    x: np.ndarray
    iterations: int
    converged: bool
    change: float
    log_likelihood: float


def _largest_move(new: np.ndarray, old: np.ndarray) -> float:
    return float(np.abs(new - old).max(initial=0.0))


def run_em(step: Step, x0: np.ndarray, *, max_iter: int, tol: float, accelerate: bool = True) -> EMResult:
    """Iterate the EM ``step`` from ``x0`` (probabilities) until a step moves no value more than ``tol`` or
    ``max_iter`` steps were taken; SQUAREM-accelerated unless ``accelerate`` is False (module docstring)."""
    x = x0
    iterations = 0
    cap = 1.0
    while True:
        x1, l0 = step(x)
        iterations += 1
        change = _largest_move(x1, x)
        if change <= tol or iterations >= max_iter:
            return EMResult(x1, iterations, change <= tol, change, l0)
        if not accelerate:
            x = x1
            continue
        x2, _ = step(x1)
        iterations += 1
        if iterations >= max_iter:
            return EMResult(x2, iterations, False, change, l0)
        r = x1 - x
        v = x2 - x1 - r
        sv = float(np.dot(v, v))
        a = 1.0 if sv == 0.0 else min(cap, max(1.0, math.sqrt(float(np.dot(r, r)) / sv)))
        if a == 1.0:  # x + 2r + v is x2 itself
            x = x2
        else:
            jump = np.clip(x + 2.0 * a * r + a * a * v, 0.0, 1.0)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                x3, lj = step(jump)
            iterations += 1
            # EM never lowers the likelihood, so L(x3) >= L(jump) >= L(x) when the jump is kept
            if math.isfinite(lj) and lj >= l0 and np.isfinite(x3).all():
                x = x3
            else:
                x = x2
                if a == cap:
                    cap = max(1.0, cap / _CAP_FACTOR)
                a = 1.0
            if iterations >= max_iter:
                return EMResult(x, iterations, False, change, l0)
        if a == cap:
            cap *= _CAP_FACTOR


def log_likelihood_terms(counts: np.ndarray, p: np.ndarray) -> float:
    """``sum(counts * log(p))`` with ``0 * log(0) = 0`` (a term no event stands for), ``-inf`` where an
    event of probability 0 was seen."""
    seen = counts > 0
    with np.errstate(divide="ignore"):
        return float((counts[seen] * np.log(p[seen])).sum())


__all__ = ["EMResult", "Step", "log_likelihood_terms", "run_em"]
