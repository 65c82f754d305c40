"""Prediction-powered inference (Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi and Zrnic 2023)
for a mean: an interval for the mean of ``Y`` from a few items with ``Y`` known (the labelled set, with the
model's prediction ``Yhat`` beside each) and many items with the prediction only (the unlabelled set).

With power tuning ``lam`` (``None``: estimated from the data and clipped to [0, 1], as ``ppi_py`` does; 1: plain
PPI; 0: the labelled set alone), the estimate is ``lam * mean(Yhat_unlabelled) + mean(Y - lam * Yhat)`` and the
interval the normal one with standard error ``sqrt(var(lam * Yhat_unlabelled) / N + var(Y - lam * Yhat) / n)``
(variances with divisor N and n), exactly as ``ppi_py.ppi_mean_ci`` computes it.

Usage::

    >>> r = ppi_mean([0.5, 0.7, 0.2, 0.9], [0.4, 0.8, 0.3, 0.7], [0.6, 0.5, 0.7, 0.4, 0.9, 0.3], lam=1.0)
    >>> round(r.estimate, 4), round(r.low, 4), round(r.high, 4)
    (0.5917, 0.3889, 0.7944)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..checks import number
from ..errors import StatsInputError


@dataclass(frozen=True)
class PPIInterval:
    """A prediction-powered estimate of a mean and its interval at level ``1 - alpha``; ``lam`` the power tuning
    used, ``n`` and ``N`` the sizes of the labelled and unlabelled sets, ``classical`` the mean of the labelled
    ``Y`` alone and ``naive`` the mean of every prediction (labelled and unlabelled)."""

    estimate: float
    low: float
    high: float
    alpha: float
    lam: float
    n: int
    N: int
    classical: float
    naive: float

    def to_dict(self) -> dict[str, float | int]:
        """The fields as a JSON-ready dict."""
        return dict(self.__dict__)


def _column(values: Sequence[float], name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise StatsInputError(f"{name} must be one number per item")
    if not np.isfinite(array).all():
        raise StatsInputError(f"{name} holds NaN or an infinity")
    return array


def ppi_mean(
    y: Sequence[float],
    yhat: Sequence[float],
    yhat_unlabelled: Sequence[float],
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    bounds: tuple[float, float] | None = None,
) -> PPIInterval:
    """The prediction-powered estimate and two-sided interval of the mean of ``Y``.

    :param y: ``Y`` of the labelled items.
    :param yhat: the prediction of each labelled item.
    :param yhat_unlabelled: the prediction of each unlabelled item.
    :param alpha: the interval covers the mean with probability ``1 - alpha`` (asymptotically).
    :param lam: the power tuning (see the module); ``None`` estimates it.
    :param bounds: the range the mean lies in (a measure's [0, 1]): the interval is clipped to it, where the
        normal approximation reaches past it (NDCG's [0.9926, 1.0005]); the estimate is left as it is.
    :raises StatsInputError: fewer than two labelled or unlabelled items, lengths that differ, NaN, an
        ``alpha`` outside (0, 1).
    """
    y_, yhat_, unl = _column(y, "Y"), _column(yhat, "Yhat"), _column(yhat_unlabelled, "Yhat of the unlabelled")
    if len(y_) != len(yhat_):
        raise StatsInputError(f"{len(y_)} labelled values but {len(yhat_)} predictions for them")
    if len(y_) < 2 or len(unl) < 2:
        raise StatsInputError(
            f"prediction-powered inference needs at least two labelled and two unlabelled items, got {len(y_)} "
            f"and {len(unl)}"
        )
    number(alpha, "alpha", 0, 1, closed="neither", error=StatsInputError)
    n, big_n = len(y_), len(unl)
    if lam is None:
        theta = unl.mean() + (y_ - yhat_).mean()
        g, gh = y_ - theta, yhat_ - theta
        cov = float(((g - g.mean()) * (gh - gh.mean())).sum()) / n
        var = float(np.var(np.concatenate([gh, unl - theta]), ddof=1))
        lam = 0.0 if var == 0 else float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))
    estimate = float((lam * unl).mean() + (y_ - lam * yhat_).mean())
    se = math.sqrt(float((lam * unl).var()) / big_n + float((y_ - lam * yhat_).var()) / n)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    return PPIInterval(
        estimate=estimate,
        low=estimate - z * se if bounds is None else max(bounds[0], estimate - z * se),
        high=estimate + z * se if bounds is None else min(bounds[1], estimate + z * se),
        alpha=alpha,
        lam=lam,
        n=n,
        N=big_n,
        classical=float(y_.mean()),
        naive=float(np.concatenate([yhat_, unl]).mean()),
    )


__all__ = ["PPIInterval", "ppi_mean"]
