"""Click-derived qrels as a feedback log's judgments: the feedback evaluation of runs on what clicks say.

A click model turns clicks into a label in [0, 1] per (query, document)
(:meth:`haystack_irmetrics.clicks.ClickFit.qrels`, or the ``qrels.tsv`` of ``irmetrics clicks fit``).
:class:`JudgedLog` reads a click log (or any feedback log with positions) as a :class:`~.reading.FeedbackLog`
whose every shown row of a
judged pair carries that pair's label as its vote: with the ``mean`` strategy (the default) the
aggregated label is the click label itself (to 1e-12: the mean of equal votes, rounded as the strategy
rounds), its votes are the pair's impressions in the log, and pairs shown fewer than
``min_impressions`` times, or not in the qrels, stay unjudged. So
:func:`~haystack_irmetrics.feedback.evaluate_feedback` (and ``irmetrics feedback LOG --qrels QRELS``)
scores the rankings users saw and any new run against the click-derived judgments, with the feedback
report's full and condensed lists, Judged@k, intervals and tests; the log's rows, skipped rows,
timestamps and segments are the log's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..checks import whole
from ..clicks import ClickFit, ClickLog
from ..errors import ClickModelError
from ..io.logs import Log, empty_rows
from .reading import FeedbackLog
from .schema import CANONICAL, FeedbackColumns

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
else:
    from ._deps import pl


def _labels(qrels: Any) -> dict[str, dict[str, float]]:
    from ..core import Qrels

    if isinstance(qrels, ClickFit):
        return qrels.qrels()
    if isinstance(qrels, str | os.PathLike):
        from ..io.trec import read_qrels

        qrels = read_qrels(qrels)
    if isinstance(qrels, Qrels):
        qrels = qrels.data
    if not isinstance(qrels, Mapping):
        raise ClickModelError(
            f"qrels must be a path, a ClickFit or {{query: {{doc: label}}}}, got {type(qrels).__name__}"
        )
    return {str(q): {str(d): float(label) for d, label in docs.items()} for q, docs in qrels.items()}


def _feedback_columns(base: Log) -> FeedbackColumns:
    """The columns of ``base`` (a click log's roles, or a feedback log's) as a feedback log's, voting by label."""
    shared = {role: getattr(base.columns, role) for role in CANONICAL if hasattr(base.columns, role)}
    return FeedbackColumns(**{**shared, "vote": shared.get("vote") or "vote"})


class JudgedLog(FeedbackLog):
    """``log`` (a :class:`~haystack_irmetrics.clicks.ClickLog`, or a feedback log with positions) with the votes
    of ``qrels`` (a qrels path, ``{query: {doc: label}}``, a :class:`~haystack_irmetrics.core.Qrels` or a
    :class:`~haystack_irmetrics.clicks.ClickFit`): see the module docs. Any vote the log itself holds is
    replaced; a click log's rows keep the click log's checks (a malformed click is a malformed row).

    :param min_impressions: pairs shown fewer times than this in the log stay unjudged.
    :raises ClickModelError: ``min_impressions`` is not a positive int; the log has no positions.

    Usage::

        >>> from haystack_irmetrics.clicks import ClickLog
        >>> from haystack_irmetrics.feedback import evaluate_feedback
        >>> clicks = ClickLog([
        ...     {"session": s, "query_id": "q1", "doc_id": d, "position": r + 1, "click": int(d == "good")}
        ...     for s, shown in (("s1", ["bad", "good"]), ("s2", ["good", "bad"]), ("s3", ["bad", "good"]))
        ...     for r, d in enumerate(shown)
        ... ])
        >>> log = JudgedLog(clicks, {"q1": {"good": 0.9, "bad": 0.1}}, min_impressions=2)
        >>> ev = evaluate_feedback(log, {"new": {"q1": {"good": 2.0, "bad": 1.0}}}, k_values=[1], measures=["P"],
        ...                        n_resamples=100)
        >>> ev.means()
        {'logged': {'P@1': 0.0}, 'new': {'P@1': 1.0}}
        >>> ev.feedback.judgments.select("doc", "label", "votes").sort("doc").rows()
        [('bad', 0.1, 3), ('good', 0.9, 3)]
    """

    def __init__(self, log: ClickLog | FeedbackLog, qrels: Any, *, min_impressions: int = 1) -> None:
        base = log.rows if isinstance(log, ClickLog) else log
        if not isinstance(base, FeedbackLog) and not isinstance(log, ClickLog):
            raise ClickModelError(f"log must be a ClickLog or a FeedbackLog, got {type(log).__name__}")
        whole(min_impressions, "min_impressions", least=1, error=ClickModelError)
        if base.columns.position is None:
            raise ClickModelError(f"{base.name}: click-derived judgments need the log's positions (its impressions)")
        self.base = base
        self.labels = _labels(qrels)
        self.min_impressions = min_impressions
        self.source, self.name, self.fmt, self.on_error = base.source, base.name, base.fmt, base.on_error
        self.vote_map, self.words = getattr(base, "vote_map", None), base.words
        self.position_base = base.position_base
        self.batch_rows = base.batch_rows
        self.columns = _feedback_columns(base)
        self._skipped = None
        self._stats = None
        self._table: pl.DataFrame | None = None

    def __repr__(self) -> str:
        return f"JudgedLog({self.name!r}, min_impressions={self.min_impressions})"

    def _judged(self) -> pl.DataFrame:
        """``query, doc, judged_vote``: the labels of the pairs shown at least ``min_impressions`` times."""
        if self._table is None:
            labels = pl.DataFrame(
                [(q, d, v) for q, docs in self.labels.items() for d, v in docs.items()],
                schema={"query": pl.String, "doc": pl.String, "judged_vote": pl.Float64},
                orient="row",
            )
            if self.min_impressions == 1:  # a pair that gets a vote is shown: no pass to count impressions
                self._table = labels
                return labels
            counts = [
                b.filter(pl.col("position").is_not_null()).group_by("query", "doc").len() for b in self.base.batches()
            ]
            shown = (
                pl.concat(counts).group_by("query", "doc").agg(pl.col("len").sum())
                if counts
                else pl.DataFrame(schema={"query": pl.String, "doc": pl.String, "len": pl.UInt32})
            )
            keep = shown.filter(pl.col("len") >= self.min_impressions).select("query", "doc")
            self._table = labels.join(keep, on=["query", "doc"], how="semi")
        return self._table

    def batches(self) -> Iterator[pl.DataFrame]:
        """The log's batches in a feedback log's columns, each shown row's ``vote`` the label of its pair (null when
        unjudged); a role the base log lacks (a click log's ``user``) is null."""
        judged = self._judged()
        layout = empty_rows(FeedbackColumns).schema
        for raw in self.base.batches():
            batch = raw.with_columns(
                pl.lit(None, dtype).alias(c) for c, dtype in layout.items() if c not in raw.columns
            )
            voted = (
                batch.with_row_index("_order")
                .join(judged, on=["query", "doc"], how="left")
                .sort("_order")
                .with_columns(
                    pl.when(pl.col("position").is_not_null()).then(pl.col("judged_vote")).otherwise(None).alias("vote")
                )
            )
            yield voted.select(list(layout))
        self._skipped, self._stats = self.base.skipped, self.base.stats


__all__ = ["JudgedLog"]
