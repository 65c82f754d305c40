"""Stage 3 of the feedback path: what a judgment is -- the strategies that turn votes into labels, and
:class:`AggregatedFeedback`, a log's judgments, shown rankings and query texts (per segment too).

Every (query, document) that received at least ``min_votes`` votes (after de-duplication) becomes a
judgment with a label; every other shown document stays **unjudged** -- absent from the qrels, which is
not the same as judged-not-relevant (a label ``<= 0`` or below the threshold). Strategies:

``mean``
    The mean vote, rounded to 12 decimals (so the order in which batches are summed cannot change it).
    Graded votes (1.0 / 0.5 / 0.3, star ratings) keep their scale; NDCG uses the mean as its gain, the
    binary metrics compare it with the relevance threshold.
``majority``
    ``1`` when up votes outnumber down votes, else ``0`` (a tie is not a majority). A vote is *up*
    when it is ``>= up_threshold`` (default 0.5, so ``1``/``0``, ``+1``/``-1`` and graded votes all work).
``wilson``
    The lower bound of the Wilson score interval of the up-vote share at ``confidence`` (two-sided,
    default 95%: z = 1.96). Few votes give a low bound: one up vote alone scores 0.2065, so at
    threshold 0.5 a document needs 4 of 4 (0.5101), 7 of 8 (0.5291) or 9 of 11 (0.5230) up votes
    to count as relevant.

Options shared by all strategies:

``min_votes``
    Documents with fewer votes stay unjudged (default 1: every voted document is judged).
``dedup``
    Per-user de-duplication: ``"none"`` (every vote counts), ``"last"`` / ``"first"`` (each user's
    latest / earliest vote on the (query, document) counts, by ``timestamp`` and then row order).
    ``dedup_by`` names the key: ``"user"`` (default) or ``"session"``. Rows without that key cannot be
    de-duplicated: each of their votes counts.

:func:`~.aggregate.aggregate_feedback` computes an :class:`AggregatedFeedback` (stage 4).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

from ..checks import choice, number, whole
from ..core import Qrels, Run
from ..errors import EmptyInputError, FeedbackError, InvalidIdError, InvalidLabelError, UnknownStrategyError
from ..io.trec import write_qrels

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

    from .reading import ReadStats
else:
    from ._deps import pl

STRATEGIES = ("mean", "majority", "wilson")
DEDUP = ("none", "last", "first")
DEDUP_BY = ("user", "session")


@dataclass(frozen=True)
class Strategy:
    """How votes become a label: a named strategy plus ``min_votes``, de-duplication and vote reading.

    Usage::

        >>> Strategy.parse("wilson", min_votes=2, dedup="last")
        Strategy(name='wilson', min_votes=2, dedup='last', dedup_by='user', up_threshold=0.5, confidence=0.95)
        >>> round(Strategy("wilson").z, 6)
        1.959964
    """

    name: str = "mean"
    min_votes: int = 1
    dedup: str = "none"
    dedup_by: str = "user"
    up_threshold: float = 0.5
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.name not in STRATEGIES:
            raise UnknownStrategyError(f"unknown strategy {self.name!r}; known: {STRATEGIES}")
        error = UnknownStrategyError
        choice(self.dedup, "dedup", DEDUP, error=error)
        choice(self.dedup_by, "dedup_by", DEDUP_BY, error=error)
        whole(self.min_votes, "min_votes", least=1, error=error)
        number(self.up_threshold, "up_threshold", finite=False, error=error)
        number(self.confidence, "confidence", 0, 1, closed="neither", error=error)

    @classmethod
    def parse(cls, value: Strategy | str, **options: object) -> Strategy:
        """A strategy from its name (or an existing one) with options replaced."""
        if unknown := sorted(set(options) - set(STRATEGY_OPTIONS)):
            raise UnknownStrategyError(
                f"unknown strategy options {unknown}; a strategy takes {', '.join(STRATEGY_OPTIONS)}"
            )
        if isinstance(value, Strategy):
            return replace(value, **options) if options else value  # type: ignore[arg-type]
        if not isinstance(value, str):
            raise UnknownStrategyError(f"strategy must be a name {STRATEGIES}, got {value!r}")
        return cls(name=value.strip().lower(), **options)  # type: ignore[arg-type]

    @property
    def z(self) -> float:
        """The normal quantile of the two-sided ``confidence`` (1.96 at 95%), used by ``wilson``."""
        return NormalDist().inv_cdf(1 - (1 - self.confidence) / 2)

    def describe(self) -> str:
        """One line naming every option, for reports."""
        head = {
            "mean": "mean vote",
            "majority": f"majority of up votes (vote >= {self.up_threshold:g} is up; a tie is not relevant)",
            "wilson": (
                f"Wilson lower bound of the up-vote share at {self.confidence:.0%} (z = {self.z:.4f}; "
                f"vote >= {self.up_threshold:g} is up)"
            ),
        }[self.name]
        dedup = "every vote counts" if self.dedup == "none" else f"each {self.dedup_by}'s {self.dedup} vote counts"
        return f"{self.name}: {head}; min_votes={self.min_votes}; {dedup}"


#: The options of a :class:`Strategy` besides its name.
STRATEGY_OPTIONS = tuple(f.name for f in fields(Strategy) if f.name != "name")


def wilson_lower_bound(up: int, n: int, confidence: float = 0.95) -> float:
    """The Wilson score lower bound of ``up / n`` (scalar reference of the ``wilson`` strategy).

    Usage::

        >>> round(wilson_lower_bound(1, 1), 4), round(wilson_lower_bound(3, 4), 4), round(wilson_lower_bound(4, 4), 4)
        (0.2065, 0.3006, 0.5101)
    """
    if n <= 0:
        raise UnknownStrategyError("the Wilson bound needs at least one vote")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = up / n
    centre = p + z * z / (2 * n)
    margin = z * ((p * (1 - p) / n) + z * z / (4 * n * n)) ** 0.5
    return max(0.0, (centre - margin) / (1 + z * z / n))


# -- a log's judgments ---------------------------------------------------------------------------


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
        i = int(bad[0])
        raise InvalidLabelError(
            f"{source}: the votes for document {judgments['doc'][i]!r} in query "
            f"{judgments['query'][i]!r} aggregate to {float(labels[i])!r}, beyond any float"
        )
    return labels


@dataclass
class AggregatedFeedback:
    """Judgments and shown rankings of one log under one :class:`~.judgments.Strategy`.

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
        rows = self.texts.with_columns(pl.col("text").fill_null(pl.col("query")))
        return dict(zip(rows["query"].to_list(), rows["text"].to_list(), strict=True))

    # -- outputs ----------------------------------------------------------------------------------

    def write_trec_qrels(self, path: str | os.PathLike[str], segment: Any = ALL) -> int:
        """Write the judgments as TREC qrels ``qid 0 docid label``, whole or not at all (the package's qrels
        writer, :func:`~haystack_irmetrics.io.trec.write_qrels`); returns the number of lines.

        Labels are written as integers when every label is integral (``majority``), else as the
        shortest float text that reads back exactly. Ids containing whitespace cannot be written
        (TREC files are whitespace-separated): use a query-id column rather than the query text.

        :raises FeedbackError: an id that cannot be a field of TREC qrels, before anything is written.
        :raises OutputError: the file cannot be written.
        """
        judgments, _ = self._frames(segment)
        label = pl.col("label")
        integral = judgments.height > 0 and judgments.select((label == label.round(0)).all()).item()
        labels = judgments["label"].cast(pl.Int64) if integral else judgments["label"]
        qrels: dict[str, dict[str, float]] = {}
        for q, d, value in zip(judgments["query"].to_list(), judgments["doc"].to_list(), labels.to_list()):
            qrels.setdefault(q, {})[d] = value
        try:
            write_qrels(qrels, path, layout="trec")
        except InvalidIdError as e:
            raise FeedbackError(
                f"{e}; map ids to tokens first (e.g. a query-id column instead of the query text)"
            ) from None
        return judgments.height

    def summary(self, threshold: float | None = None) -> dict[str, Any]:
        """Counts for reports: rows, skipped, votes, impressions, queries, judged and relevant pairs."""
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


def labels_dict(frame: pl.DataFrame) -> dict[str, dict[str, float]]:
    """``{query: {doc: label}}`` of a judgments frame (tests and small inputs)."""
    out: dict[str, dict[str, float]] = {}
    for q, d, v in frame.select("query", "doc", "label").iter_rows():
        out.setdefault(q, {})[d] = v
    return out


__all__ = [
    "ALL",
    "DEDUP",
    "DEDUP_BY",
    "STRATEGIES",
    "STRATEGY_OPTIONS",
    "AggregatedFeedback",
    "Strategy",
    "finite_labels",
    "labels_dict",
    "wilson_lower_bound",
]
