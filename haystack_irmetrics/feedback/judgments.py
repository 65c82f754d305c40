"""A log aggregated once: judgments (qrels), the rankings users saw, query texts, per segment too.

:func:`aggregate_feedback` streams the log through the columnar path of :mod:`.aggregate` and keeps
only per-(query, document) results, so memory is bounded by distinct pairs, not by rows.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .aggregate import STRATEGY_OPTIONS, Accumulator, Strategy, finalize, query_texts
from .errors import FeedbackError
from .log import FeedbackLog, ReadStats

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

    from ..core.inputs import Qrels, Run


class _AllSegments:
    def __repr__(self) -> str:
        return "ALL"


#: Pass as ``segment`` to mean every row (the default of the methods that take a segment).
ALL: Any = _AllSegments()


def finite_labels(judgments: pl.DataFrame, source: str) -> np.ndarray:
    """The ``label`` column as numbers; every consumer of judgments (qrels, gold Documents) reads them here.

    :raises InvalidLabelError: naming the query and document whose finite votes aggregate beyond any
        float (two votes of 1e308 average to inf).
    """
    labels = judgments["label"].to_numpy()
    bad = np.flatnonzero(~np.isfinite(labels))
    if bad.size:
        from ..errors import InvalidLabelError

        i = int(bad[0])
        raise InvalidLabelError(
            f"{source}: the votes for document {judgments['doc'][i]!r} in query "
            f"{judgments['query'][i]!r} aggregate to {float(labels[i])!r}, beyond any float"
        )
    return labels


@dataclass
class AggregatedFeedback:
    """Judgments and shown rankings of one log under one :class:`~.aggregate.Strategy`.

    ``judgments``: ``query, doc, label, votes, up_votes, voters, raw_votes`` (judged pairs only; an
    unjudged document is absent). ``shown``: ``query, doc, mean_position, min_position, impressions,
    judged`` (every logged document with a position). ``segment_*``: the same with a leading ``segment``
    column, each segment aggregated from its own rows (``None`` when the log has no segment column).
    """

    strategy: Strategy
    source: str
    judgments: pl.DataFrame
    shown: pl.DataFrame
    texts: pl.DataFrame
    read: ReadStats
    skipped: pl.DataFrame
    votes: int
    segment_judgments: pl.DataFrame | None = None
    segment_shown: pl.DataFrame | None = None
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    # -- selection ---------------------------------------------------------------------------

    @property
    def segments(self) -> list[str | None]:
        """Segment values with at least one judgment, sorted (``None`` = rows without a segment, last)."""
        if self.segment_judgments is None:
            return []
        values = self.segment_judgments["segment"].unique().to_list()
        return sorted(v for v in values if v is not None) + ([None] if None in values else [])

    def _frames(self, segment: Any) -> tuple[pl.DataFrame, pl.DataFrame]:
        import polars as pl

        if segment is ALL:
            return self.judgments, self.shown
        if self.segment_judgments is None or self.segment_shown is None:
            raise FeedbackError("this log was aggregated without a segment column")
        match = pl.col("segment").is_null() if segment is None else pl.col("segment") == segment
        return (
            self.segment_judgments.filter(match).drop("segment"),
            self.segment_shown.filter(match).drop("segment"),
        )

    # -- core inputs -------------------------------------------------------------------------

    def qrels(self, segment: Any = ALL) -> Qrels:
        """The judgments as core :class:`~haystack_irmetrics.core.inputs.Qrels` (float labels).

        By default every row counts; with a segment value (``None`` for rows without one), only that
        segment's rows.
        """
        from ..core.inputs import Qrels
        from ..errors import EmptyInputError

        key = ("qrels", segment)
        if key not in self._cache:  # built once for the whole log; a segment's on each call (not kept)
            judgments, _ = self._frames(segment)
            if judgments.height == 0:
                raise EmptyInputError(
                    f"{self.source}: no (query, document) has {self.strategy.min_votes} vote(s) or more"
                    + ("" if segment is ALL else f" in segment {segment!r}")
                    + "; nothing is judged"
                )
            labels = finite_labels(judgments, self.source)
            qrels = Qrels.from_columns(
                judgments["query"].to_list(), judgments["doc"].to_list(), labels, source=self.source
            )
            if segment is not ALL:
                return qrels
            self._cache[key] = qrels
        return self._cache[key]

    def logged_run(self, segment: Any = ALL) -> Run:
        """The rankings users saw: per query, documents by mean logged position (then best position, doc id).

        Scores are ``n - rank`` (strictly decreasing), so any tie policy keeps this order.
        """
        import polars as pl

        from ..core.inputs import Run

        key = ("logged", segment)
        if key not in self._cache:  # built once for the whole log; a segment's on each call (not kept)
            _, shown = self._frames(segment)
            if shown.height == 0:
                raise FeedbackError(
                    f"{self.source}: the log has no positions, so there is no logged ranking to score; "
                    "leave it out with include_logged=False (--no-logged)"
                )
            ranked = shown.select(
                "query",
                "doc",
                (pl.len().over("query") - pl.int_range(pl.len()).over("query")).cast(pl.Float64).alias("score"),
            )
            run = Run.from_columns(
                ranked["query"].to_list(), ranked["doc"].to_list(), ranked["score"].to_numpy(), source=self.source
            )
            if segment is not ALL:
                return run
            self._cache[key] = run
        return self._cache[key]

    def query_text(self) -> dict[str, str]:
        """``{query id: text}`` for replaying queries through a pipeline (the id when the log has no text)."""
        import polars as pl

        rows = self.texts.with_columns(pl.col("text").fill_null(pl.col("query")))
        return dict(zip(rows["query"].to_list(), rows["text"].to_list(), strict=True))

    # -- outputs ----------------------------------------------------------------------------------

    def write_trec_qrels(self, path: str | os.PathLike[str], segment: Any = ALL) -> int:
        """Write the judgments as TREC qrels ``qid 0 docid label``; returns the number of lines.

        Labels are written as integers when every label is integral (``majority``), else as the
        shortest float text that reads back exactly. Ids containing whitespace cannot be written
        (TREC files are whitespace-separated): use a query-id column rather than the query text.
        """
        import polars as pl

        judgments, _ = self._frames(segment)
        for col in ("query", "doc"):
            bad = judgments.filter(pl.col(col).str.contains(r"\s"))
            if bad.height:
                raise FeedbackError(
                    f"{col} id {bad[col][0]!r} contains whitespace and cannot be written to TREC qrels; "
                    "map ids to tokens first (e.g. a query-id column instead of the query text)"
                )
        label = pl.col("label")
        integral = judgments.height > 0 and judgments.select((label == label.round(0)).all()).item()
        text = label.cast(pl.Int64).cast(pl.String) if integral else label.cast(pl.String)  # shortest exact text
        lines = judgments.select(pl.format("{} 0 {} {}", "query", "doc", text).alias("line"))["line"]
        Path(path).write_text("".join(f"{x}\n" for x in lines.to_list()), encoding="utf-8")
        return lines.len()

    def summary(self, threshold: float | None = None) -> dict[str, Any]:
        """Counts for reports: rows, skipped, votes, impressions, queries, judged and relevant pairs."""
        import polars as pl

        j = self.judgments
        out: dict[str, Any] = {
            "source": self.source,
            "strategy": self.strategy.describe(),
            "rows": self.read.rows,
            "usable_rows": self.read.usable,
            "skipped_rows": self.read.skipped,
            "votes": self.votes,
            "shown_pairs": self.shown.height,
            "judged_pairs": j.height,
            "queries_logged": self.texts.height,
            "queries_with_judgments": j["query"].n_unique(),
            "unjudged_shown_pairs": int(self.shown.filter(~pl.col("judged")).height),
        }
        if threshold is not None:
            relevant = j.filter(pl.col("label") >= threshold)
            out["relevance_threshold"] = threshold
            out["relevant_pairs"] = relevant.height
            out["queries_with_relevant"] = relevant["query"].n_unique()
        return out


#: Keyword options of :func:`aggregate_feedback` for the log (the strategy's are ``STRATEGY_OPTIONS``).
LOG_OPTIONS = tuple(
    name for name, p in inspect.signature(FeedbackLog.__init__).parameters.items() if p.kind is p.KEYWORD_ONLY
)


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``options`` as (strategy options, log options); an unknown name is a :class:`FeedbackError`."""
    unknown = sorted(set(options) - set(STRATEGY_OPTIONS) - set(LOG_OPTIONS))
    if unknown:
        raise FeedbackError(
            f"unknown options {unknown}: the strategy takes {', '.join(STRATEGY_OPTIONS)}; "
            f"a log path or table takes {', '.join(LOG_OPTIONS)}"
        )
    strategy = {k: v for k, v in options.items() if k in STRATEGY_OPTIONS}
    return strategy, {k: v for k, v in options.items() if k not in STRATEGY_OPTIONS}


def aggregate_feedback(
    log: FeedbackLog | Any,
    strategy: Strategy | str = "mean",
    *,
    by_segment: bool | None = None,
    **options: Any,
) -> AggregatedFeedback:
    """Stream a log once and aggregate its votes into judgments and shown rankings.

    :param log: a :class:`~.log.FeedbackLog`, or a path / table with ``options`` for it.
    :param strategy: a :class:`~.aggregate.Strategy` or a strategy name (``"mean"``, ``"majority"``, ``"wilson"``).
    :param by_segment: also aggregate per segment (default: when the log has a segment column).
    :param options: the strategy's options (``min_votes``, ``dedup``, ``dedup_by``, ``up_threshold``,
        ``confidence``: see :class:`~.aggregate.Strategy`) and, for a path or table, the log's
        (``columns``, ``fmt``, ``on_error``, ``vote_map``, ``position_base``, ``batch_rows``: see
        :class:`~.log.FeedbackLog`).

    Usage::

        >>> rows = [
        ...     {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 1, "user_id": "u1"},
        ...     {"query_id": "q1", "doc_id": "d1", "position": 1, "vote": 0, "user_id": "u2"},
        ...     {"query_id": "q1", "doc_id": "d1", "position": 2, "vote": 1, "user_id": "u3"},
        ...     {"query_id": "q1", "doc_id": "d2", "position": 2, "vote": None, "user_id": "u1"},
        ... ]
        >>> agg = aggregate_feedback(rows, "majority", columns={"user": "user_id"})
        >>> agg.judgments.select("query", "doc", "label", "votes", "up_votes").rows()
        [('q1', 'd1', 1.0, 3, 2)]
        >>> agg.qrels().data, agg.logged_run().data
        ({'q1': {'d1': 1.0}}, {'q1': {'d1': 2.0, 'd2': 1.0}})
    """
    strategy_options, log_options = split_options(options)
    if not isinstance(log, FeedbackLog):
        log = FeedbackLog(log, **log_options)
    elif log_options:
        raise FeedbackError(f"options {sorted(log_options)} apply to a path or table, not to an open FeedbackLog")
    strat = Strategy.parse(strategy, **strategy_options)
    if strat.dedup != "none" and getattr(log.columns, strat.dedup_by) is None:
        raise FeedbackError(
            f"dedup={strat.dedup!r} by {strat.dedup_by} needs a {strat.dedup_by} column; "
            f"set columns={{'{strat.dedup_by}': '<column name>'}}"
        )
    with_segment = log.has_segment if by_segment is None else by_segment
    if with_segment and not log.has_segment:
        raise FeedbackError("by_segment=True needs a segment column; set columns={'segment': '<column name>'}")
    import polars as pl

    acc = Accumulator(strat, with_segment)
    for batch in log.batches():
        acc.add(batch)
    shards = acc.shards()
    judgments, shown = _finalize_shards(shards, strat, by_segment=False)
    seg_j = seg_s = None
    if with_segment:
        seg_j, seg_s = _finalize_shards(shards, strat, by_segment=True)
    texts = [query_texts(s) for s in shards]
    return AggregatedFeedback(
        strategy=strat,
        source=log.name,
        judgments=judgments,
        shown=shown,
        texts=pl.concat(texts).sort("query") if texts else pl.DataFrame(schema={"query": pl.String, "text": pl.String}),
        read=log.stats,
        skipped=log.skipped,
        votes=sum(int(s["n_votes"].sum()) for s in shards),
        segment_judgments=seg_j,
        segment_shown=seg_s,
    )


def _finalize_shards(
    shards: list[pl.DataFrame], strategy: Strategy, *, by_segment: bool
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Finalize shard by shard (a query lives in one shard) and put the results in the documented order."""
    import polars as pl

    from .aggregate import partial_schema

    if not shards:
        shards = [pl.from_arrow(partial_schema().empty_table())]  # type: ignore[list-item]
    done = [finalize(s, strategy, by_segment=by_segment) for s in shards]
    key = ["segment", "query", "doc"] if by_segment else ["query", "doc"]
    judgments = pl.concat([j for j, _ in done]).sort(key)
    shown = pl.concat([s for _, s in done]).sort([*key[:-1], "mean_position", "min_position", "doc"])
    return judgments, shown


def labels_dict(frame: pl.DataFrame) -> dict[str, dict[str, float]]:
    """``{query: {doc: label}}`` of a judgments frame (tests and small inputs)."""
    out: dict[str, dict[str, float]] = {}
    for q, d, v in frame.select("query", "doc", "label").iter_rows():
        out.setdefault(q, {})[d] = v
    return out


__all__ = ["ALL", "AggregatedFeedback", "aggregate_feedback", "labels_dict"]
