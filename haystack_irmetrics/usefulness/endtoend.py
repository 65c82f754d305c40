"""End to end beside the labels (``--end-to-end N``): the generator asked with each run's top N together, its answer
scored by the same answer metric, and whether a usefulness measure follows that score: Kendall's tau-b and
Spearman's rho (scipy's, through :mod:`haystack_irmetrics.stats.correlation`) between each measure's per-query
values and the end-to-end scores across a run's queries, and with 3 runs or more between the runs' means.

A coefficient over inputs that do not vary (every query's score the same) is ``nan``, as scipy gives it (``null``
in JSON); one over fewer than two queries is ``None``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..stats.correlation import Correlation
from .metrics import answer_score
from .scoring import RunScores

#: The coefficients reported, as :mod:`haystack_irmetrics.stats.correlation` names them.
METHODS = ("kendall", "spearman")
#: The fewest runs a correlation across runs is computed for.
MIN_RUNS = 3


@dataclass(frozen=True)
class EndToEnd:
    """One run end to end: ``top`` documents asked together, the score of each query (0 where the run retrieved
    nothing: no request) and their ``mean``, the generator's answers and the documents asked with, how many answers
    were empty, and per measure the correlations across queries (``{measure: {method: Correlation | None}}``)."""

    top: int
    mean: float
    per_query: dict[str, float]
    answers: dict[str, str]
    docs: dict[str, tuple[str, ...]]
    empty: int
    correlation: dict[str, dict[str, Correlation | None]]


def end_to_end(
    together: Sequence[tuple[str, str, tuple[str, ...]]],
    said: Sequence[str],
    queries: Sequence[str],
    references: Mapping[str, Sequence[str]],
    scores: Mapping[str, RunScores],
    metric: str,
    top: int,
) -> dict[str, EndToEnd]:
    """Each run's :class:`EndToEnd` from the answers ``said`` to ``together`` (``(run, qid, docs)``, in order)."""
    per_query = {name: dict.fromkeys(queries, 0.0) for name in scores}
    answers: dict[str, dict[str, str]] = {name: {} for name in scores}
    docs: dict[str, dict[str, tuple[str, ...]]] = {name: {} for name in scores}
    for (name, qid, ranking), answer in zip(together, said):
        per_query[name][qid] = answer_score(metric, answer, references[qid])
        answers[name][qid], docs[name][qid] = answer, ranking
    out = {}
    for name, run in scores.items():
        values = per_query[name]
        correlation = {
            m: _coefficients(measured, values, per_query_coefficient) for m, measured in run.per_query.items()
        }
        mean = math.fsum(values.values()) / len(values) if values else math.nan
        empty = sum(not a.strip() for a in answers[name].values())
        out[name] = EndToEnd(top, mean, values, answers[name], docs[name], empty, correlation)
    return out


def across_runs(scores: Mapping[str, RunScores], together: Mapping[str, EndToEnd]) -> dict[str, Any] | None:
    """``{measure: {method: Correlation}}`` between the runs' means of each measure and their end-to-end means, with
    :data:`MIN_RUNS` runs or more (else ``None``)."""
    if len(scores) < MIN_RUNS:
        return None
    e2e = {name: together[name].mean for name in scores}
    measures = next(iter(scores.values())).means
    return {m: _coefficients({n: s.means[m] for n, s in scores.items()}, e2e, system_coefficient) for m in measures}


def per_query_coefficient(a: Mapping[str, float], b: Mapping[str, float], method: str) -> Correlation:
    from ..stats.correlation import per_query_correlation

    return per_query_correlation(a, b, method=method)  # type: ignore[arg-type]


def system_coefficient(a: Mapping[str, float], b: Mapping[str, float], method: str) -> Correlation:
    from ..stats.correlation import system_correlation

    return system_correlation(a, b, method)  # type: ignore[arg-type]


def _coefficients(a: Mapping[str, float], b: Mapping[str, float], how: Any) -> dict[str, Correlation | None]:
    """Each of :data:`METHODS` between ``a`` and ``b``; ``None`` over fewer than two items."""
    from ..errors import EmptyInputError

    out: dict[str, Correlation | None] = {}
    for method in METHODS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # scipy's word on a constant input: the coefficient is nan
                out[method] = how(a, b, method)
        except EmptyInputError:
            out[method] = None
    return out


def correlation_json(value: Correlation | None) -> dict[str, Any] | None:
    """A coefficient as ``metrics.json`` holds it: ``statistic``, ``pvalue`` (scipy's, two-sided) and ``n``."""
    return None if value is None else {"statistic": value.statistic, "pvalue": value.pvalue, "n": value.n}


__all__ = ["METHODS", "MIN_RUNS", "EndToEnd", "across_runs", "correlation_json", "end_to_end"]
