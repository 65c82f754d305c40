"""Offline estimates of a new ranking's expected clicks from a log of a stochastic ranker (issue 33.4).

The log must hold, for every shown result, the logging policy's propensity: the probability that it
placed that document at that position (the ``propensity`` column). The new ranking is deterministic:
``{query: [doc at rank 1, ...]}``. Per impression i and rank r (the first ``k``), with c the logged click,
a the logged document, p its propensity and w = 1[the new ranking puts a at r] / p (at most ``clip``
when given), the item-position estimators (Li, Kim & Zitouni 2018) are:

* **IPS**: the mean over impressions of sum_r c w: unbiased when every propensity is right and positive;
* **SNIPS**: sum_r (sum_i c w) / (sum_i w): self-normalised per rank (lower variance, a little bias);
* **DR** (doubly robust): the mean over impressions of sum_r [m(q, new doc at r, r) + w (c - m(q, a, r))],
  with m a click model's probability of a click (a PBM fitted on the log: attractiveness x examination);
  unbiased when either the propensities or the model are right.

A query the new ranking does not cover shows nothing: its impressions count 0 clicks. Each estimate
comes with a percentile bootstrap interval over impressions (SNIPS's ratio recomputed per resample).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..checks import choice, number, whole
from ..errors import ClickModelError
from .log import Sessions
from .models import PBM, ClickModel, _rank_values, _take
from .registry import ENTRIES, ClickModelEntry, find


@dataclass(frozen=True)
class Estimate:
    """An estimate of the expected clicks per impression with its bootstrap interval."""

    value: float
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict[str, float]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high}


def _new_pairs(sessions: Sessions, ranking: Mapping[str, Sequence[str]], k: int) -> np.ndarray:
    """Per session, the pair codes the new ranking shows at ranks 1..k (-1: nothing; -2: a pair the log lacks)."""
    queries, docs = sessions.pair_names()
    code = {(q, d): i for i, (q, d) in enumerate(zip(queries, docs, strict=True))}
    by_query = {}
    for qi, q in enumerate(sessions.query_names.astype(str).tolist()):
        shown = list(ranking.get(q, []))[:k]
        by_query[qi] = [code.get((q, str(d)), -2) for d in shown] + [-1] * (k - len(shown))
    table = np.array([by_query[qi] for qi in range(len(sessions.query_names))], dtype=np.int64).reshape(-1, k)
    return table[sessions.query]


def estimate_clicks(
    sessions: Sessions,
    ranking: Mapping[str, Sequence[str]],
    *,
    k: int = 10,
    clip: float | None = None,
    model: ClickModel | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, Estimate]:
    """``{"ips", "snips", "dr"}``: the new ranking's expected clicks per impression (see module docs).

    :param model: the DR's click model, fitted on ``sessions`` (default: a PBM fitted here).
    :raises ClickModelError: the log has no propensities, ``k`` or ``clip`` out of range, a model of
        another pair table.
    """
    from ..stats.significance import bootstrap_means, percentile_interval

    if sessions.propensity is None:
        raise ClickModelError("the click log has no propensity column (name it with --propensity-col)")
    whole(k, "k", least=1, error=ClickModelError)
    if clip is not None:
        number(clip, "clip", 0, closed="neither", finite=False, error=ClickModelError)
    if not isinstance(ranking, Mapping):
        raise ClickModelError(f"the new ranking must be a dict {{query: [doc, ...]}}, got {type(ranking).__name__}")
    if model is None:
        model = PBM().fit(sessions)
    elif model.fitted.pair_query is not sessions.pair_query:
        raise ClickModelError("the DR's model must be fitted on these sessions (the same pair table)")
    depth = min(k, sessions.n_ranks)
    logged = sessions.pairs[:, :depth]
    shown = logged >= 0
    clicks = (sessions.clicks[:, :depth] & shown).astype(float)
    new = _new_pairs(sessions, ranking, k)[:, :depth]
    match = shown & (logged == new)
    with np.errstate(divide="ignore"):
        w = np.where(match, 1.0 / sessions.propensity[:, :depth], 0.0)
    if clip is not None:
        w = np.minimum(w, float(clip))
    gamma = _rank_values_of(model, depth)
    predicted_logged = np.where(shown, _take(_attractiveness(model), logged) * gamma, 0.0)
    predicted_new = np.where(new >= 0, _take(_attractiveness(model), np.maximum(new, 0)) * gamma, 0.0)
    predicted_new = np.where(new == -2, 0.5 * gamma, predicted_new)  # a pair the log never showed: the default

    ips = (clicks * w).sum(axis=1)
    dr = predicted_new.sum(axis=1) + (w * (clicks - predicted_logged)).sum(axis=1)
    columns = np.column_stack([ips, dr, clicks * w, w])  # SNIPS: per rank, numerators then denominators
    means = bootstrap_means(columns, n_resamples=n_resamples, seed=seed)
    point = columns.mean(axis=0)

    def snips(m: np.ndarray) -> np.ndarray:
        num, den = m[..., 2 : 2 + depth], m[..., 2 + depth :]
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0).sum(axis=-1)

    out = {}
    for name, values, at in (("ips", means[:, 0], point[0]), ("dr", means[:, 1], point[1])):
        low, high = percentile_interval(values, confidence)
        out[name] = Estimate(float(at), float(low), float(high))
    low, high = percentile_interval(snips(means), confidence)
    out["snips"] = Estimate(float(snips(point)), float(low), float(high))
    return {name: out[name] for name in ("ips", "snips", "dr")}


def _attractiveness(model: ClickModel) -> np.ndarray:
    if "attractiveness" not in model.ATTRIBUTES:
        raise ClickModelError(f"the DR's model needs attractiveness per document; {model.name} has none")
    return model.parameter("attractiveness")


def _rank_values_of(model: ClickModel, depth: int) -> np.ndarray:
    found = find(model.name)
    if found is not None and examines_by_rank(found):
        return _rank_values(model.parameter("examination"), depth)
    return np.ones(depth)  # a model without examination by rank: attractiveness alone


# -- a run's measure from clicks, position bias removed by examination propensities -----------------

MEASURES = ("dcg", "clicks")
#: ``propensities=`` that reads the log's propensity column (any other value names a click model).
LOGGED = "log"


def examines_by_rank(e: ClickModelEntry) -> bool:
    """Whether the model has an examination probability per rank (a propensity per position)."""
    return any(p.name == "examination" and p.over == "rank" for p in e.parameters)


def propensity_sources() -> tuple[str, ...]:
    """What ``propensities=`` may be: the click models with examination per rank (``pbm``), or ``"log"``."""
    return (*(e.name for e in ENTRIES if examines_by_rank(e)), LOGGED)


def check_propensities(propensities: str) -> ClickModelEntry | None:
    """The click model ``propensities`` names (None: the log's column, :data:`LOGGED`).

    :raises ClickModelError: a name that is neither that nor a model with examination per rank.
    """
    if propensities == LOGGED:
        return None
    found = find(propensities)
    if found is None or not examines_by_rank(found):
        known = " or ".join(repr(x) for x in propensity_sources())
        raise ClickModelError(f"propensities must be {known}, got {propensities!r}")
    return found


def _examination(sessions: Sessions, propensities: str) -> np.ndarray:
    """Each shown position's examination probability: the log's propensity column, or relative to rank 1 from a
    click model with examination per rank fitted on the sessions."""
    if propensities == LOGGED:
        if sessions.propensity is None:
            raise ClickModelError("the click log has no propensity column (name it with --propensity-col)")
        return sessions.propensity
    gamma = check_propensities(propensities).make().fit(sessions).parameter("examination")
    return np.broadcast_to(np.clip(gamma / gamma[0], 1e-6, 1.0), sessions.pairs.shape)


def ips_measure(
    sessions: Sessions,
    ranking: Mapping[str, Sequence[str]],
    *,
    k: int = 10,
    measure: str = "dcg",
    propensities: str = "pbm",
    clip: float | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, Estimate]:
    """A run's utility from logged clicks with inverse examination propensities (Joachims et al. 2017).

    Per impression i, with p the probability that the user examined a clicked document's logged position:
    ``sum over clicked d of lambda(rank of d in the run) / p``, lambda = 1 / log2(1 + rank) (``dcg``) or 1
    (``clicks``) within the run's top ``k``, 0 below. Returns ``{"ips", "clipped", "snips"}``: the mean over
    impressions; the same with every weight at most ``clip`` (default 10); and the self-normalised
    estimate, the IPS sum divided by the sum of the clicks' weights (the mean lambda of a debiased click,
    in [0, 1]).

    :param propensities: ``"pbm"`` (a click model with examination per rank, :func:`propensity_sources`):
        examination by rank from that model fitted on the sessions, relative to rank 1 (examined for sure);
        ``"log"``: the log's ``propensity`` column holds each shown position's examination probability (from
        randomisation or intervention harvesting).
    """
    from ..stats.significance import bootstrap_means, percentile_interval

    choice(measure, "measure", MEASURES, error=ClickModelError)
    whole(k, "k", least=1, error=ClickModelError)
    if clip is not None:
        number(clip, "clip", 1, finite=False, error=ClickModelError)
    exam = _examination(sessions, propensities)
    if not isinstance(ranking, Mapping):
        raise ClickModelError(f"the run must be a dict {{query: [doc, ...]}}, got {type(ranking).__name__}")
    queries, docs = sessions.pair_names()
    rank_of = np.zeros(sessions.n_pairs, dtype=np.int64)  # 0: not in the run's top k
    code = {(q, d): i for i, (q, d) in enumerate(zip(queries, docs, strict=True))}
    for q, shown in ranking.items():
        for r, d in enumerate(list(shown)[:k]):
            i = code.get((str(q), str(d)))
            if i is not None:
                rank_of[i] = r + 1
    ranks = np.where(sessions.shown, rank_of[np.maximum(sessions.pairs, 0)], 0)
    gain = (
        np.where(ranks > 0, 1.0 / np.log2(1.0 + np.maximum(ranks, 1)), 0.0) if measure == "dcg" else (ranks > 0) * 1.0
    )
    clicked = sessions.clicks & sessions.shown
    with np.errstate(divide="ignore"):
        weight = np.where(clicked, 1.0 / exam, 0.0)
    capped = np.minimum(weight, 10.0 if clip is None else float(clip))
    columns = np.column_stack([(gain * weight).sum(axis=1), (gain * capped).sum(axis=1), weight.sum(axis=1)])
    means = bootstrap_means(columns, n_resamples=n_resamples, seed=seed)
    point = columns.mean(axis=0)
    out = {}
    for name, col in (("ips", 0), ("clipped", 1)):
        low, high = percentile_interval(means[:, col], confidence)
        out[name] = Estimate(float(point[col]), float(low), float(high))
    ratio = np.where(means[:, 2] > 0, means[:, 0] / np.where(means[:, 2] > 0, means[:, 2], 1.0), 0.0)
    low, high = percentile_interval(ratio, confidence)
    out["snips"] = Estimate(float(point[0] / point[2]) if point[2] > 0 else 0.0, float(low), float(high))
    return out


__all__ = ["LOGGED", "MEASURES", "Estimate", "estimate_clicks", "examines_by_rank", "ips_measure", "propensity_sources"]
