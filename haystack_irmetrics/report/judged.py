"""What a report says about the judgments under its numbers: each run's Judged@k and Hole@k (the core's
measures, BEIR's hole), and, given the output folder of ``irmetrics judge --ppi``, each measure's
prediction-powered estimate and interval beside its value with the filled qrels
(:func:`haystack_irmetrics.judges.ppi.judged_ppi`, as ``irmetrics evaluate --judged`` prints them); and, given
a grade, each measure's bounds: the interval its value lies in once the holes of each query's top k are judged,
each 0 or the grade (:func:`haystack_irmetrics.core.bounds.evaluation_bounds`).

:func:`~.data.build_report` calls these; :mod:`.html` renders what they return.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ..core import Evaluation, Preset
from ..core.inputs import as_run
from ..core.measures import parse_measure
from ..errors import IRMetricsError, JudgeError, SuspiciousInputWarning

#: What the columns of a judged table average (``irmetrics evaluate --judged``, the report's section): each has
#: its own queries, which a row's queries column counts.
JUDGED_NOTE = (
    "Each column averages its own queries, counted in the last one: human and filled qrels are the preset's means "
    "(BEIR's: MRR over every query of the qrels, answered or not; NDCG over the queries the run answers); PPI "
    "estimates the mean over the queries with a pool, n labelled (people judged their pool in full) + N others, "
    "its interval clipped to [0, 1] for a measure in [0, 1]."
)
#: The cutoffs of Judged@k and Hole@k when the report's measures have none.
DEFAULT_COVERAGE_KS = (10,)


def coverage_ks(measures: Sequence[str]) -> list[int]:
    """The cutoffs the report's measures are evaluated at, in increasing order (:data:`DEFAULT_COVERAGE_KS`
    when none has one).

        >>> coverage_ks(["NDCG@10", "Recall@100", "MRR@10", "Rprec"])
        [10, 100]
    """
    ks = set()
    for m in measures:
        try:
            cutoff = parse_measure(m).cutoff
        except IRMetricsError:
            continue
        if isinstance(cutoff, int):
            ks.add(cutoff)
    return sorted(ks) or list(DEFAULT_COVERAGE_KS)


def entered(
    judgments: Any, runs: Mapping[str, Any], prepared: Mapping[str, Evaluation], preset: Preset
) -> dict[str, Evaluation]:
    """``{run: Evaluation}`` of each ranked run: the one its measures were read from (``prepared``), else one made
    here under the report's ``preset`` (a run whose scores were given, such as a feedback evaluation's)."""
    return {name: prepared.get(name) or Evaluation(judgments, run, preset) for name, run in runs.items()}


def coverage(evaluations: Mapping[str, Evaluation], ks: Sequence[int]) -> dict[str, dict[str, float]]:
    """``{run: {"Judged@k": mean, "Hole@k": mean, ...}}`` of each run at each of ``ks``, read from the run's
    :class:`~haystack_irmetrics.Evaluation` under the report's preset (Hole@k is BEIR's ``evaluate_custom(...,
    "hole")``: the share of the top k judged for no query)."""
    names = [f"{family}@{k}" for k in ks for family in ("Judged", "Hole")]
    out = {}
    with warnings.catch_warnings():  # the report's own evaluation has said anything suspicious already
        warnings.simplefilter("ignore", SuspiciousInputWarning)
        for name, ev in evaluations.items():
            means = ev.result(names, None).raw_means
            out[name] = {m: float(means[m]) for m in names}
    return out


def bounded_measures(measures: Sequence[str]) -> list[str]:
    """The measures the report gives bounds for: those its summary shows by default
    (:func:`.columns.summary_columns`; the bounds of a scan family cost ``2h + 1`` rankings of each query, so
    not every cutoff to 1000) whose family has bounds.

        >>> bounded_measures([f"{f}@{k}" for f in ("NDCG", "Judged", "Recall") for k in (1, 10, 100)])
        ['NDCG@10', 'Recall@10', 'Recall@100']
    """
    from ..core.bounds import bounded_families
    from .columns import parsed, summary_columns

    families = set(bounded_families())
    return [m for m in summary_columns(list(measures)) if (p := parsed(m)) is not None and p.family in families]


def bounds(
    evaluations: Mapping[str, Evaluation], measures: Sequence[str], grade: float
) -> dict[str, dict[str, tuple[float, float]]]:
    """``{run: {measure: (low, high)}}``: the unrounded means over the queries of each query's smallest and
    largest value once its holes are judged, each 0 or ``grade``
    (:func:`~haystack_irmetrics.core.bounds.evaluation_bounds`' ``per_query``), for :func:`bounded_measures`."""
    from ..core.bounds import evaluation_bounds

    wanted = bounded_measures(measures)
    out: dict[str, dict[str, tuple[float, float]]] = {}
    if not wanted:
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SuspiciousInputWarning)
        for name, ev in evaluations.items():
            b = evaluation_bounds(ev, wanted, None, grade=grade)
            out[name] = {}
            for m in wanted:
                rows = list(b.per_query[m].values())
                if rows:
                    out[name][m] = (sum(r[0] for r in rows) / len(rows), sum(r[1] for r in rows) / len(rows))
    return out


def judged_rows(
    folder: Any, evaluations: Mapping[str, Evaluation], measures: Sequence[str], preset: Preset
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{run: {measure: row}}``: each ranked run's values with the human qrels (read from the report's own
    :class:`~haystack_irmetrics.Evaluation` of the run, ``evaluations``), with the filled qrels of ``folder`` (a
    :class:`~haystack_irmetrics.judges.folder.JudgedFolder`, read once by the report), its PPI estimate and
    interval (:func:`~haystack_irmetrics.judges.ppi.judged_intervals`), for the measures that take one
    (:func:`~haystack_irmetrics.judges.ppi.ppi_measures`).

    :raises JudgeError: none of the measures takes an interval, or a run's top k holds pairs its judge was not
        asked about (named with the run).
    """
    from ..judges.ppi import check_judged, judged_intervals, per_query_values, ppi_measures

    wanted = ppi_measures(measures)
    if not wanted:
        raise JudgeError(f"none of the report's measures {list(measures)[:6]} takes a prediction-powered interval")
    out = {}
    for name, ev in evaluations.items():
        run = as_run(ev.run).data
        try:
            check_judged(run, ev.qrels.data, folder)
            y = per_query_values(ev, wanted)
            yhat, naive = (per_query_values(Evaluation(q, run, preset), wanted) for q in (folder.model, folder.filled))
            out[name] = judged_intervals(y, yhat, naive, folder, wanted)
        except JudgeError as e:
            raise JudgeError(f"run {name!r}: {e}") from None
    return out


__all__ = [
    "DEFAULT_COVERAGE_KS",
    "JUDGED_NOTE",
    "bounded_measures",
    "bounds",
    "coverage",
    "coverage_ks",
    "entered",
    "judged_rows",
]
