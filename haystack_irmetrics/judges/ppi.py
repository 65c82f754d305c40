"""Intervals that say how far to trust a model judge: prediction-powered inference
(:func:`haystack_irmetrics.stats.ppi.ppi_mean`) of each run's mean measure and of the difference between two
runs, with queries as the items.

The labelled set is the queries whose pool (every run's top k) people judged in full: there ``Y`` is the
measure with the human qrels. ``Yhat`` is the measure with the model's labels for every pool pair and no human
label, on every query; the model judges the human-judged pool pairs too, so that ``Yhat`` is the same function
of the query on both sets. PPI's guarantee needs the labelled queries to be a random sample of
all queries: people judged a random subset of the queries in full (TREC-style pooling of a sample of topics).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import JudgeError
from ..stats.ppi import ppi_mean
from .folder import JudgedFolder

QrelsDict = Mapping[str, Mapping[str, int]]
RunDict = Mapping[str, Mapping[str, float]]


def per_query(qrels: QrelsDict, run: RunDict, measure: str, preset: Any = "beir") -> dict[str, float]:
    """``{query: value}`` of ``measure`` for the run's queries that ``qrels`` judges."""
    from .. import evaluate

    return dict(evaluate(qrels, run, None, measures=[measure], preset=preset).per_query[measure])


def measure_range(measure: str, difference: bool = False) -> tuple[float, float] | None:
    """The range of ``measure``'s mean, which its intervals are clipped to: [0, 1] for a measure whose per-query
    value is a rate ([-1, 1] for the difference of two runs), else ``None`` (no bound).

        >>> measure_range("NDCG@10"), measure_range("MRR@10", difference=True)
        ((0.0, 1.0), (-1.0, 1.0))
    """
    from ..core.measures import FAMILIES, parse_measure

    if FAMILIES[parse_measure(measure).family].unit != "rate":
        return None
    return (-1.0, 1.0) if difference else (0.0, 1.0)


@dataclass(frozen=True)
class PPIReport:
    """What ``ppi.json`` holds (:func:`ppi_report`): the measure and alpha, the labelled queries (how many of them
    and of the others, and which), each run's estimate and interval (``runs``: ``{run: row}``, each row with
    its ``filled`` value too) and each difference's (``differences``: ``{"a - b": row}``)."""

    measure: str
    alpha: float
    labelled_queries: int
    unlabelled_queries: int
    labelled: list[str]
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    differences: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """As ``ppi.json`` holds it."""
        return asdict(self)


def ppi_report(
    runs: Mapping[str, RunDict],
    human: QrelsDict,
    model: QrelsDict,
    filled: QrelsDict,
    labelled: Sequence[str],
    measure: str,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
) -> PPIReport:
    """Each run's PPI estimate and interval of ``measure``'s mean, beside the naive value with the filled qrels,
    and the same for the difference of each pair of runs.

    :param human: the human qrels (``Y`` on the ``labelled`` queries).
    :param model: the model's labels for every pool pair (``Yhat``).
    :param filled: the human qrels with the holes filled by the model (the naive value).
    :param labelled: the queries whose pool people judged in full.
    :raises JudgeError: fewer than two labelled or unlabelled queries.
    """
    yhat = {name: per_query(model, run, measure) for name, run in runs.items()}
    y = {name: per_query(human, run, measure) for name, run in runs.items()}
    naive = {name: per_query(filled, run, measure) for name, run in runs.items()}
    queries = sorted(set.intersection(*(set(v) for v in yhat.values()))) if yhat else []
    chosen = set(labelled)
    lab = [q for q in queries if q in chosen and all(q in y[name] for name in runs)]
    unl = [q for q in queries if q not in chosen]
    if len(lab) < 2 or len(unl) < 2:
        raise JudgeError(
            f"prediction-powered intervals need at least two queries whose pool people judged in full and two "
            f"others; there are {len(lab)} and {len(unl)}"
        )

    def interval(f_y, f_hat, bounds) -> dict[str, Any]:
        ys, hats, others = [f_y(q) for q in lab], [f_hat(q) for q in lab], [f_hat(q) for q in unl]
        return ppi_mean(ys, hats, others, alpha=alpha, lam=lam, bounds=bounds).to_dict()

    out = PPIReport(measure, alpha, len(lab), len(unl), lab)
    for name in runs:
        row = interval(lambda q, n=name: y[n][q], lambda q, n=name: yhat[n][q], measure_range(measure))
        row["filled"] = sum(naive[name].values()) / len(naive[name]) if naive[name] else None
        out.runs[name] = row
    names = list(runs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            row = interval(
                lambda q, a=a, b=b: y[a][q] - y[b][q],
                lambda q, a=a, b=b: yhat[a][q] - yhat[b][q],
                measure_range(measure, difference=True),
            )
            out.differences[f"{a} - {b}"] = row
    return out


def labelled_queries(pool: Any, human: QrelsDict, holes: Sequence[tuple[str, str]]) -> list[str]:
    """PPI's labelled set, defined once: the pool's queries (a :class:`~haystack_irmetrics.pooling.PoolRuns`) that
    people judged and whose pool has no hole, in the pool's query order."""
    with_holes = {q for q, _ in holes}
    ranked = {q for r in range(len(pool.names)) for q, docs in zip(pool.qids, pool.rankings[r]) if docs}
    return [q for q in pool.qids if q in ranked and q not in with_holes and human.get(q)]


def ppi_measures(measures: Sequence[str]) -> list[str]:
    """The measures a prediction-powered interval is given for, the one rule ``irmetrics report`` and
    ``irmetrics evaluate --judged`` both apply: each averaged per query (not Judged/Hole, trec_eval's counts,
    GMAP's geometric mean or the diversity measures, which read subtopics).

        >>> ppi_measures(["NDCG@10", "Judged@10", "Hole@10", "num_ret", "GMAP", "MRR@10"])
        ['NDCG@10', 'MRR@10']
    """
    from ..core.measures import FAMILIES, parse_measure
    from ..errors import IRMetricsError

    out = []
    for m in measures:
        try:
            family = FAMILIES[parse_measure(m).family]
        except (IRMetricsError, KeyError):
            continue
        if family.kernel == "coverage" or family.aggregate != "mean" or family.needs_subtopics:
            continue
        out.append(m)
    return out


def check_judged(run: RunDict, human: QrelsDict, folder: JudgedFolder) -> None:
    """Refuse a run whose top k (the folder's depth) holds pairs neither people nor the folder's judge judged.

    :raises JudgeError: naming how many and one of them.
    """
    from ..pooling.runs import pool_runs

    missing = [p for p in pool_runs([run], ["run"], folder.depth).pairs(human) if p not in folder.judged]
    if missing:
        raise JudgeError(
            f"the run's top {folder.depth} holds {len(missing)} pairs the judge of {folder.path} was not asked about "
            f"(e.g. query {missing[0][0]!r}, document {missing[0][1]!r}): judge it with the other runs first"
        )


def judged_intervals(
    y: Mapping[str, Mapping[str, float]],
    yhat: Mapping[str, Mapping[str, float]],
    naive: Mapping[str, Mapping[str, float]],
    folder: JudgedFolder,
    measures: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """``{measure: row}`` from per-query values (``{measure: {query: value}}``) with the human qrels (``y``), the
    folder's model labels (``yhat``) and its filled qrels (``naive``): ``human`` and ``filled``, the means over
    each one's queries (``human_queries``, ``filled_queries``), and the prediction-powered estimate and interval
    of the mean over the queries with a pool (``n`` labelled by people in full + ``N`` others, the folder's
    alpha), clipped to [0, 1] for a rate (:func:`measure_range`).

    :raises JudgeError: fewer than two labelled or two unlabelled queries for a measure.
    """
    out = {}
    for measure in measures:
        y_m, hat_m, naive_m = y[measure], yhat[measure], naive[measure]
        lab = [q for q in hat_m if q in folder.labelled and q in y_m]
        unl = [q for q in hat_m if q not in folder.labelled]
        if len(lab) < 2 or len(unl) < 2:
            raise JudgeError(f"{measure}: {len(lab)} labelled and {len(unl)} unlabelled queries; PPI needs two of each")
        ys, hats, others = [y_m[q] for q in lab], [hat_m[q] for q in lab], [hat_m[q] for q in unl]
        r = ppi_mean(ys, hats, others, alpha=folder.alpha, bounds=measure_range(measure))
        out[measure] = {
            "human": sum(y_m.values()) / len(y_m) if y_m else None,
            "filled": sum(naive_m.values()) / len(naive_m) if naive_m else None,
            "human_queries": len(y_m),  # each column's own denominator: the tables say it
            "filled_queries": len(naive_m),
            **r.to_dict(),
        }
    return out


def per_query_values(evaluation: Any, measures: Sequence[str]) -> dict[str, dict[str, float]]:
    """``{measure: {query: value}}`` of an :class:`~haystack_irmetrics.core.Evaluation`, unrounded."""
    result = evaluation.result(list(measures), None)
    return {m: dict(result.per_query[m]) for m in measures}


def judged_ppi(
    run: RunDict,
    human: QrelsDict,
    folder: JudgedFolder | str | os.PathLike[str],
    measures: Sequence[str],
    preset: Any = "beir",
) -> dict[str, dict[str, Any]]:
    """Each measure's value of ``run`` with the human qrels, with the filled qrels of ``irmetrics judge --ppi``'s
    output ``folder`` (a :class:`~.folder.JudgedFolder`, or its path, read here once), and its
    prediction-powered estimate and interval (:func:`judged_intervals`), for the measures :func:`ppi_measures`
    gives an interval: the run entered once per qrels (human, model, filled).

    :raises JudgeError: the folder was not written with ``--ppi`` or is damaged (:meth:`~.folder.JudgedFolder.read`),
        none of ``measures`` takes an interval, or the run's top k holds pairs the judge was not asked about (it
        was not among the judged runs).
    """
    from ..core import Evaluation

    found = folder if isinstance(folder, JudgedFolder) else JudgedFolder.read(folder)
    wanted = ppi_measures(measures)
    if not wanted:
        raise JudgeError(f"none of the measures {list(measures)[:6]} takes a prediction-powered interval")
    check_judged(run, human, found)
    y, yhat, naive = (per_query_values(Evaluation(q, run, preset), wanted) for q in (human, found.model, found.filled))
    return judged_intervals(y, yhat, naive, found, wanted)


__all__ = [
    "PPIReport",
    "check_judged",
    "judged_intervals",
    "judged_ppi",
    "labelled_queries",
    "measure_range",
    "per_query",
    "per_query_values",
    "ppi_measures",
    "ppi_report",
]
