"""The measures of runs on usefulness labels, through the core: each run's ranked lists (its top K in trec_eval's
order) against the labels as qrels, trec_eval's rules (the :data:`~haystack_irmetrics.core.presets.TREC` preset; a
query the run retrieved nothing for counts 0, and so does a query where no document helped).

With 0/1 labels (``exact_match``, ``contains``) every measure is the core's, which equals pytrec_eval. With graded
labels (``f1``, any number in [0, 1]) a graded family (NDCG, the user-model measures) takes the label as its
gain, and one that counts relevant documents (P, MRR, Success, Recall, MAP, bpref, ...) is its mean over a relevance threshold t drawn uniformly
from (0, 1]: a document with F1 0.6 is useful at 60% of the thresholds. The core scores each threshold where the
measure can change (each distinct label), weighted by the share of (0, 1] it covers. For P@k that mean is the mean
label of the top k (sum over k), and for Success@k the top k's best label: eRAG's definitions for continuous labels
(Salemi and Zamani, SIGIR 2024).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.measures import Measure

#: ``{qid: {doc: label}}``.
Labels = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class RunScores:
    """One run's measures: ``means`` (``{measure: mean}`` over the queries scored) and ``per_query``
    (``{measure: {qid: value}}``, every query scored)."""

    means: dict[str, float]
    per_query: dict[str, dict[str, float]]


def score_run(
    labels: Labels,
    ranked: Mapping[str, Sequence[str]],
    measures: Sequence[Measure],
    graded: bool,
    queries: Sequence[str],
) -> RunScores:
    """The measures of the run ``ranked`` (``{qid: [doc, ...]}``, best first) on ``labels``, for each of ``queries``
    (one missing from the run or the labels scores 0), and their means over ``queries``."""
    per_query = {m.name: dict.fromkeys(queries, 0.0) for m in measures}
    present = {q: list(docs) for q, docs in ranked.items() if docs and labels.get(q)}
    if present:
        for name, values in _per_query(labels, present, measures, graded).items():
            per_query[name].update((q, v) for q, v in values.items() if q in per_query[name])
    means = {
        name: math.fsum(values.values()) / len(values) if values else math.nan for name, values in per_query.items()
    }
    return RunScores(means, per_query)


def _per_query(
    labels: Labels, ranked: Mapping[str, list[str]], measures: Sequence[Measure], graded: bool
) -> dict[str, dict[str, float]]:
    """The core's per-query values of ``measures``; a binary family's, with ``graded`` labels, averaged over the
    relevance thresholds (the module's rule)."""
    from ..core.evaluation import Evaluation
    from ..core.plausibility import THRESHOLD_KINDS
    from ..errors import NoRelevantLabelWarning

    with warnings.catch_warnings():
        # No useful document anywhere is a finding, not a mistake in the labels: every measure is 0.
        warnings.simplefilter("ignore", NoRelevantLabelWarning)
        ev = Evaluation(labels, ranked, "trec", missing_queries="zero")
        thresholded = [m for m in measures if graded and m.spec.kernel in THRESHOLD_KINDS]
        rest = [m for m in measures if m not in thresholded]
        out = {name: dict(values) for name, values in ev.result(rest).per_query.items()} if rest else {}
        if thresholded:
            out.update(_over_thresholds(ev, labels, thresholded))
    return out


def _over_thresholds(ev: object, labels: Labels, measures: list[Measure]) -> dict[str, dict[str, float]]:
    """Each binary measure's mean over a relevance threshold uniform in (0, 1]: the sum over the distinct labels
    ``t_1 < t_2 < ...`` in (0, 1] of ``(t_j - t_(j-1))`` times its value at threshold ``t_j`` (above the top
    label, nothing is relevant: 0)."""
    levels = sorted({float(v) for docs in labels.values() for v in docs.values() if 0 < v <= 1}) or [1.0]
    out: dict[str, dict[str, float]] = {m.name: {} for m in measures}
    below = 0.0
    for level in levels:
        result = ev.with_preset(relevance_threshold=level).result(measures)  # type: ignore[attr-defined]
        for m in measures:
            sums = out[m.name]
            for q, value in result.per_query[m.name].items():
                sums[q] = sums.get(q, 0.0) + (level - below) * value
        below = level
    return out


def check_measures(names: Sequence[str], depth: int, where: str = "--depth") -> list[Measure]:
    """``names`` parsed (:func:`~haystack_irmetrics.core.measures.parse_measure`), each once, none with a cutoff
    above ``depth`` (it would read documents no label was made for).

    :raises UsefulnessError: no measure, a cutoff above ``depth``, or a measure twice. :raises UnknownMeasureError: an
        unknown measure.
    """
    from ..core.measures import parse_measure
    from ..errors import UsefulnessError

    if isinstance(names, str) or not names:
        raise UsefulnessError(f"measures must be a list of one or more measure names, got {names!r:.80}")
    parsed = [parse_measure(name) for name in names]
    for m in parsed:
        if m.cutoff is not None and m.cutoff > depth:
            raise UsefulnessError(
                f"{m.name} reads each ranking's top {m.cutoff}, but only the top {depth} documents are labelled "
                f"({where} {depth}): raise {where} or lower the cutoff"
            )
    names_seen = [m.name for m in parsed]
    twice = next((n for i, n in enumerate(names_seen) if n in names_seen[:i]), None)
    if twice is not None:
        raise UsefulnessError(f"measure {twice} is asked for twice")
    return parsed


__all__ = ["RunScores", "check_measures", "score_run"]
