"""Inputs that evaluate without an error but look wrong, said as a :class:`SuspiciousInputWarning`.

Three traps give plausible-looking zeros or nonsense: qrels of another collection (the shared query ids
exist, but no retrieved document is judged), ``evaluate(results, qrels)`` (the arguments swapped), and
labels that never reach the relevance threshold (click-derived labels in [0, 1] under the default
threshold 1: a :class:`NoRelevantLabelWarning`). Every evaluation passes here (``Evaluation``, ``evaluate_chunks``), so
every function and command says them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from ..errors import NoRelevantLabelWarning, SuspiciousInputWarning
from .inputs import Qrels
from .measures import Measure
from .prepare import Prepared
from .presets import Preset, relevant_labels

#: "Far fewer than usual": with at least this many shared queries, under this share of them with any
#: judged document retrieved (a weak run on shallow qrels still reaches several times more).
FEW_JUDGED_QUERIES = 20
FEW_JUDGED_SHARE = 0.05


class Overlap:
    """How much of the run the qrels judge, counted over the pieces, to warn about inputs that look wrong."""

    def __init__(self) -> None:
        self.queries = self.retrieved = self.judged = self.queries_hit = 0
        self.scores: np.ndarray | None = None  # the first piece's scores (dict runs), for the swap check

    def add(self, prep: Prepared) -> None:
        self.queries += len(prep.qids)
        self.retrieved += int(prep.offsets[-1])
        self.judged += int(prep.pair_query.size)
        self.queries_hit += int(np.count_nonzero(np.bincount(prep.pair_query, minlength=len(prep.qids))))
        if self.scores is None and prep.scores is not None:
            self.scores = prep.scores

    def warn(self, qrels: Qrels) -> None:
        # A run is deeper than the qrels of its queries: swapped, the "qrels" hold many more documents
        # per query than the "results" (judgments aggregated from a log and the rankings they were
        # shown in are about as deep: not a swap).
        deeper = qrels.labels.size * max(self.queries, 1) >= 2 * self.retrieved * max(len(qrels.qids), 1)
        swapped = _swapped(qrels.labels, self.scores) if deeper else None
        if swapped:
            warnings.warn(swapped, SuspiciousInputWarning, stacklevel=4)
        elif self.retrieved and not self.judged:
            warnings.warn(
                f"not one of the {self.retrieved:,} documents retrieved for the {self.queries:,} queries the results "
                "share with the qrels is judged, so every measure is 0: are the qrels of another collection, or its "
                "document ids written another way?",
                SuspiciousInputWarning,
                stacklevel=4,
            )
        elif self.queries >= FEW_JUDGED_QUERIES and self.queries_hit < FEW_JUDGED_SHARE * self.queries:
            warnings.warn(
                f"only {self.queries_hit} of the {self.queries:,} queries the results share with the qrels have a "
                f"judged document among the {self.retrieved:,} retrieved ({self.judged} judged in all): are the "
                "qrels of another collection, or its document ids written another way?",
                SuspiciousInputWarning,
                stacklevel=4,
            )


#: The kernel kinds whose measures count a document as relevant when its label reaches the threshold.
THRESHOLD_KINDS = ("binary", "count", "bpref", "iprec")
#: How the warning that no label reaches the threshold begins (:func:`judgments_built_here` silences it).
NOTHING_RELEVANT = "no label of the qrels reaches the relevance threshold"


def warn_if_nothing_relevant(qrels: Qrels, wanted: Sequence[Measure], preset: Preset) -> None:
    """A :class:`NoRelevantLabelWarning` when a wanted measure counts relevant documents and no label of the
    qrels is relevant to it: it is 0 for every query, whatever the run. The message depends on the qrels and
    the threshold only, so a command evaluating several runs says it once."""
    labels = qrels.labels
    if labels.size == 0:
        return
    for m in wanted:
        if m.spec.kernel not in THRESHOLD_KINDS:
            continue
        policy = preset.policy(m.family)
        if bool(relevant_labels(labels, policy, preset.relevance_threshold).any()):
            continue
        threshold = preset.relevance_threshold
        rule = f"> {policy.positive_above:g}" if policy.positive_above is not None else f">= {threshold:g}"
        low, high = float(labels.min()), float(labels.max())
        warnings.warn(
            f"{NOTHING_RELEVANT} {threshold:g} (a document is relevant when its label is {rule}; the "
            f"{labels.size:,} labels range from {low:g} to {high:g}), so every measure that counts relevant "
            "documents (P, Recall, MAP, bpref, the precision-recall curve, ...) is 0 for every query: labels in "
            "[0, 1], such as click-derived ones, need a threshold within their range (--threshold, "
            "relevance_threshold=)",
            NoRelevantLabelWarning,
            stacklevel=4,
        )
        return


#: How the warning about ``evaluate(results, qrels)`` begins (:func:`judgments_built_here` silences it).
SWAPPED = "the qrels look like a run"


@contextmanager
def judgments_built_here() -> Iterator[None]:
    """Within the block, no warning that the arguments look swapped: for callers whose qrels cannot be a
    run (the feedback path's judgments, aggregated from a log: fractional mean votes or Wilson bounds
    beside the logged rankings' whole ``n - rank`` scores), and none that no label reaches the threshold,
    which the feedback path says itself with what it takes to reach it. The other checks stay on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=SWAPPED, category=SuspiciousInputWarning)
        warnings.filterwarnings("ignore", category=NoRelevantLabelWarning)
        yield


def _swapped(labels: np.ndarray, scores: np.ndarray | None) -> str | None:
    """A message when the qrels look like a run (many distinct fractional labels) and the results like
    qrels (a few whole-number scores): ``evaluate(results, qrels)``."""
    if scores is None or labels.size < FEW_JUDGED_QUERIES or scores.size == 0:
        return None
    sample = labels[:100_000]
    fractional = sample != np.floor(sample)
    if np.count_nonzero(fractional) * 2 < sample.size or np.unique(sample).size < FEW_JUDGED_QUERIES:
        return None
    values = np.unique(scores[:100_000])
    if values.size > 10 or bool((values != np.floor(values)).any()):
        return None
    return (
        f"{SWAPPED} and the results like qrels: {np.count_nonzero(fractional):,} of the first "
        f"{sample.size:,} labels are not whole numbers (e.g. {float(sample[fractional][0])!r}), while every score "
        f"of the results is one of {[int(v) if v.is_integer() else v for v in values.tolist()]}; "
        "evaluate(qrels, results) takes the judgments first: are the arguments swapped?"
    )


__all__ = [
    "FEW_JUDGED_QUERIES",
    "FEW_JUDGED_SHARE",
    "NOTHING_RELEVANT",
    "SWAPPED",
    "THRESHOLD_KINDS",
    "Overlap",
    "judgments_built_here",
    "warn_if_nothing_relevant",
]
