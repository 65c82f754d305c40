"""Stage 7 of the feedback path, the whole run: log -> judgments -> every system scored -> compared -> per segment.

:func:`evaluate_feedback` is what ``irmetrics feedback`` runs. The result, :class:`~.report.FeedbackEvaluation`,
holds per-query values of every system (the rankings users saw, named ``logged``, plus any runs),
bootstrap intervals of every mean, and paired comparisons against a baseline, and renders the report.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core import Measure, Run
from ..core.inputs import ArrayRun
from ..errors import EmptyInputError, FeedbackError, NoOverlapError, NoRelevantJudgmentWarning
from ..io import read_run
from ..stats.significance import check_bootstrap_size
from .aggregate import aggregate_feedback, split_options
from .judgments import ALL, AggregatedFeedback, Strategy, wilson_lower_bound
from .reading import FeedbackLog
from .report import FeedbackEvaluation
from .scoring import LOGGED, VARIANTS, SegmentResult, score_segment
from .settings import DEFAULT_K_VALUES, FeedbackSettings, split_settings

#: Kernels whose measures count a label ``>= threshold`` as relevant (NDCG uses labels as gains instead).
_THRESHOLD_KERNELS = ("binary", "bpref", "iprec")


def _load_run(name: str, run: Any) -> Run | ArrayRun:
    if isinstance(run, Run | ArrayRun):
        return run
    if isinstance(run, str | os.PathLike):
        return read_run(run)
    if isinstance(run, Mapping):
        return Run.from_dict(run)
    raise FeedbackError(f"run {name!r} must be a TREC run path, a {{qid: {{docid: score}}}} dict or a Run")


def _named_runs(runs: Mapping[str, Any] | Sequence[Any] | None) -> dict[str, Any]:
    if runs is None:
        return {}
    if isinstance(runs, Mapping):
        return dict(runs)
    out: dict[str, Any] = {}
    for i, run in enumerate(runs):
        name = Path(run).name.split(".")[0] if isinstance(run, str | os.PathLike) else f"run{i + 1}"
        base, n = name, 2
        while name in out or name == LOGGED:
            name, n = f"{base}_{n}", n + 1
        out[name] = run
    return out


def evaluate_feedback(
    log: FeedbackLog | AggregatedFeedback | Any,
    runs: Mapping[str, Any] | Sequence[Any] | None = None,
    settings: FeedbackSettings | None = None,
    **options: Any,
) -> FeedbackEvaluation:
    """Score the logged rankings and any runs against judgments aggregated from a feedback log.

    :param log: a path or table (with log ``options`` for :class:`~.reading.FeedbackLog`), an open
        ``FeedbackLog``, or an already aggregated :class:`~.judgments.AggregatedFeedback`.
    :param runs: ``{name: run}`` or a list of runs; a run is a TREC run path, a ``{qid: {docid: score}}``
        dict or a :class:`~haystack_irmetrics.core.inputs.Run` (e.g. from :func:`~.replay.replay_pipeline`).
    :param settings: how to score, as one value (:class:`~.settings.FeedbackSettings`); any of its fields
        given as a keyword (``k_values=[1]``) takes the place of the settings' own.
    :param options: the fields of :class:`~.settings.FeedbackSettings` as keywords (below), and the options of
        :func:`~.aggregate.aggregate_feedback`: the strategy's ``min_votes``, ``dedup``, ``dedup_by`` and
        ``up_threshold`` (Wilson's ``confidence`` goes in a :class:`~.judgments.Strategy`: ``confidence`` here is
        the bootstrap's), and the log's ``columns``, ``on_error``, ...

    The fields of :class:`~.settings.FeedbackSettings` (keywords or ``settings``):

    * ``strategy``: aggregation strategy (:class:`~.judgments.Strategy` or name).
    * ``threshold``: labels ``>=`` this are relevant for P, Recall, MAP, MRR and R_cap (NDCG uses labels as gains).
    * ``k_values``: cutoffs; ``measures``: families or names (default BEIR's six families).
    * ``condensed``: also score condensed lists (unjudged documents removed).
    * ``include_logged``: score the rankings users saw (system ``"logged"``; needs positions).
    * ``baseline``: the system the others are compared with (default ``"logged"``, else the first run).
    * ``by_segment``: per-segment breakdown (default: when the log has a segment column).
    * ``preset``: the core's preset for ties and rounding (``"beir"`` or ``"trec"``).
    * ``n_resamples``: randomization sign patterns and bootstrap resamples; ``seed`` makes both repeatable.
    * ``confidence``: level of every bootstrap interval.
    * ``test``: the test behind significance markers: ``"randomization"`` or ``"t"``.

    Usage::

        >>> rows = [
        ...     {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1.0},
        ...     {"query_id": "q1", "doc_id": "d2", "position": 2, "vote": 0.0},
        ...     {"query_id": "q2", "doc_id": "d3", "position": 1, "vote": 0.0},
        ...     {"query_id": "q2", "doc_id": "d4", "position": 2, "vote": 1.0},
        ... ]
        >>> new = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d4": 2.0, "d3": 1.0}}
        >>> ev = evaluate_feedback(rows, {"new": new}, k_values=[1], measures=["P", "MRR"], n_resamples=100)
        >>> ev.means()
        {'logged': {'P@1': 0.5, 'MRR@1': 0.5}, 'new': {'P@1': 1.0, 'MRR@1': 1.0}}
    """
    # Every setting is checked before the log is read (the settings check their own): aggregating takes a while.
    s, options = split_settings(FeedbackSettings, settings, options, "evaluate_feedback")
    split_options(options)  # any other keyword is the strategy's or the log's, or refused here, naming theirs
    if isinstance(log, AggregatedFeedback) and options:
        raise FeedbackError(f"options {sorted(options)} apply to a log, not to aggregated feedback")
    wanted = s.wanted()
    metrics = [m.name for m in wanted]
    external = {name: _load_run(name, run) for name, run in _named_runs(runs).items()}
    systems, baseline = _systems(s, external)
    # One bootstrap over every (system, list, metric) column and each system's Judged@k.
    n_lists = len(VARIANTS) if s.condensed else 1
    check_bootstrap_size(s.n_resamples, len(systems) * (n_lists * len(metrics) + len({m.cutoff for m in wanted})))
    if isinstance(log, AggregatedFeedback):
        feedback = log
    else:
        feedback = aggregate_feedback(log, s.strategy, by_segment=s.by_segment, **options)
    qrels = feedback.qrels(ALL)
    judged_queries = [q for q in qrels.qids if qrels.data[q]]
    for name, run in external.items():
        _check_shared_queries(name, run, judged_queries, feedback.source)
    _warn_if_nothing_relevant(feedback, float(s.threshold), wanted)
    recorded = {
        "strategy": feedback.strategy.describe(),
        "threshold": float(s.threshold),
        "k_values": sorted({m.cutoff for m in wanted}),
        "measures": metrics,
        "condensed": s.condensed,
        "preset": s.preset,
        "n_resamples": s.n_resamples,
        "seed": s.seed,
        "confidence": s.confidence,
        "test": s.test,
    }
    scoring = replace(s, threshold=float(s.threshold), baseline=baseline)
    overall = score_segment(feedback, ALL, "all", external, systems, scoring, metrics)
    segments = _segments(feedback, external, systems, scoring, metrics)
    return FeedbackEvaluation(feedback, recorded, systems, baseline, metrics, overall, segments)


def _systems(s: FeedbackSettings, external: Mapping[str, Any]) -> tuple[list[str], str]:
    """The systems scored (the logged rankings first, then the runs) and the baseline among them."""
    if LOGGED in external:
        raise FeedbackError(f"the name {LOGGED!r} is reserved for the rankings users saw; rename that run")
    systems = ([LOGGED] if s.include_logged else []) + list(external)
    if not systems:
        raise FeedbackError("nothing to score: give runs, or keep include_logged=True")
    baseline = s.baseline or systems[0]
    if baseline not in systems:
        raise FeedbackError(f"baseline {baseline!r} is not one of the systems {systems}")
    return systems, baseline


def _segments(
    feedback: AggregatedFeedback,
    external: dict[str, Run | ArrayRun],
    systems: list[str],
    scoring: FeedbackSettings,
    metrics: list[str],
) -> list[SegmentResult]:
    """Each segment's scores (none unless asked for, or the log has a segment column), labelled by its value."""
    want_segments = feedback.segment_judgments is not None if scoring.by_segment is None else scoring.by_segment
    if not want_segments:
        return []
    values = list(feedback.segments)
    labels = ["(none)" if v is None else str(v) for v in values]
    if len(set(labels)) < len(labels):  # a segment literally named "(none)" beside rows without one
        labels = ["(none)" if v is None else repr(v) for v in values]
    return [score_segment(feedback, v, label, external, systems, scoring, metrics) for v, label in zip(values, labels)]


def _examples(ids: Sequence[str], n: int = 3) -> str:
    shown = ", ".join(repr(x) for x in ids[:n])
    return f"e.g. {shown}" + (", ..." if len(ids) > n else "")


def _check_shared_queries(name: str, run: Run | ArrayRun, judged: list[str], source: str) -> None:
    """Raise :class:`~haystack_irmetrics.errors.NoOverlapError` (as ``evaluate`` does) when ``run`` answers
    none of the judged queries: every value would be 0, which is an id mismatch, not a score."""
    qids = list(run.qids) if isinstance(run, ArrayRun) else list(run.data)
    if not qids:
        raise EmptyInputError(f"run {name!r} is empty: no query was retrieved for")
    wanted = set(judged)
    if any(q in wanted for q in qids):
        return
    raise NoOverlapError(
        f"no query is shared by run {name!r} ({len(qids)} queries, {_examples(qids)}) and the judged queries "
        f"of the feedback log {source} ({len(judged)} queries, {_examples(judged)}); check the id format"
    )


def smallest_all_up_votes(strategy: Strategy, threshold: float) -> int | None:
    """The fewest votes, all up, whose label reaches ``threshold`` under ``strategy`` (at least
    ``min_votes``); ``None`` if no number of votes does (a threshold above 1 for ``majority`` and
    ``wilson``) or the labels are not vote shares (``mean``: they are on the votes' own scale).

    Usage::

        >>> smallest_all_up_votes(Strategy("wilson"), 0.5), smallest_all_up_votes(Strategy("wilson"), 0.8)
        (4, 16)
        >>> smallest_all_up_votes(Strategy("majority", min_votes=2), 0.5), smallest_all_up_votes(Strategy("wilson"), 1)
        (2, None)
    """
    if strategy.name == "mean":
        return None
    if strategy.name == "majority":
        return strategy.min_votes if threshold <= 1 else None
    if threshold >= 1:  # the bound of n up votes of n is n / (n + z^2) < 1
        return None
    z2 = strategy.z**2
    n = max(strategy.min_votes, math.floor(threshold * z2 / (1 - threshold)))
    while wilson_lower_bound(n, n, strategy.confidence) < threshold:  # one or two steps from the closed form
        n += 1
    return n


def no_relevant_explanation(strategy: Strategy, threshold: float, highest: float | None, votes: int, up: int) -> str:
    """Why no judgment reaches ``threshold`` under ``strategy``; ``highest`` is the largest label, with
    the ``votes`` and ``up`` votes of that (query, document)."""
    if strategy.name == "mean":
        best = "" if highest is None else f"; the highest here is {highest:.4g} (the mean of {votes} votes)"
        return f"the labels are mean votes and no (query, document) has a mean vote >= {threshold:g}{best}"
    best = "" if highest is None else f"; the highest label here is {highest:.4g} ({up} of {votes} votes up)"
    n = smallest_all_up_votes(strategy, threshold)
    if strategy.name == "majority":
        if n is None:
            return f"majority labels are 0 or 1, so a threshold of {threshold:g} (above 1) is never reached"
        return (
            f"no (query, document) has more up votes (vote >= {strategy.up_threshold:g}) than down votes"
            f"{' among those with ' + str(strategy.min_votes) + ' or more votes' if strategy.min_votes > 1 else ''}"
            f"{best}"
        )
    if n is None:
        return f"the Wilson lower bound is below 1 for any number of votes, so a threshold of {threshold:g} is never reached"
    bound = wilson_lower_bound(n, n, strategy.confidence)
    return (
        f"with wilson at {strategy.confidence:.0%} confidence it takes {n} of {n} up votes (bound {bound:.4f}) "
        f"to reach {threshold:g}{best}"
    )


def _warn_if_nothing_relevant(feedback: AggregatedFeedback, threshold: float, wanted: list[Measure]) -> None:
    binary = list(dict.fromkeys(m.family for m in wanted if m.spec.kernel in _THRESHOLD_KERNELS))
    judgments = feedback.judgments
    if not binary or not judgments.height or judgments["label"].max() >= threshold:
        return
    top = judgments.sort("label", descending=True, nulls_last=True).row(0, named=True)
    why = no_relevant_explanation(feedback.strategy, threshold, top["label"], top["votes"], top["up_votes"])
    warnings.warn(
        f"no judgment reaches the relevance threshold {threshold:g} (0 relevant of {judgments.height:,} judged "
        f"(query, document) pairs), so {', '.join(binary)} are 0 for every system: {why}. "
        "Lower the threshold, or use another strategy or more votes.",
        NoRelevantJudgmentWarning,
        stacklevel=3,
    )


__all__ = [
    "DEFAULT_K_VALUES",
    "LOGGED",
    "FeedbackSettings",
    "NoRelevantJudgmentWarning",
    "evaluate_feedback",
    "no_relevant_explanation",
    "smallest_all_up_votes",
]
