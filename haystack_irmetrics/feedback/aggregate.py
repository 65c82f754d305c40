"""Stage 4 of the feedback path: votes -> judgments, streamed through a columnar path that merges.

:func:`aggregate_feedback` streams a log (:mod:`.reading`) once and keeps only per-(query, document)
results, so memory is bounded by distinct pairs, not by rows; it returns an
:class:`~.judgments.AggregatedFeedback` under a :class:`~.judgments.Strategy`.

The columnar path (:func:`partial_aggregate`, :func:`merge_partials`, :func:`finalize`) only sums, takes
minima and picks the vote with the largest (or smallest) ``(timestamp, row)``: partial results of any
split of the log merge into the same answer, so batches, files or Spark partitions can each be reduced
on their own (``mapInArrow(partial_aggregate)``) and merged once.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .._extras import require_feedback
from ..errors import FeedbackError
from ..io.log_columns import arrow_frame, arrow_table
from .judgments import STRATEGY_OPTIONS, AggregatedFeedback, Strategy
from .reading import FeedbackLog

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa
else:
    from ._deps import pa, pl

#: Pending partial rows (over all shards) below which no shard is merged (see :class:`Accumulator`).
MERGE_EVERY = 1 << 20
#: Hash shards of the query id the reduce step works in (a merge holds one shard at a time).
SHARDS = 16


# -- columnar path ---------------------------------------------------------------------------------

KEY = ["segment", "query", "doc", "voter"]
PARTIAL_COLUMNS = [
    *KEY,
    "n_rows",
    "pos_n",
    "pos_sum",
    "pos_min",
    "n_votes",
    "vote_sum",
    "n_up",
    "sel_vote",
    "sel_ts",
    "sel_row",
    "text",
    "text_row",
]


def _sum_by_pair(frame: pl.DataFrame | pl.LazyFrame, aggs: list[pl.Expr]) -> pl.DataFrame:
    """Order-free aggregates per (segment, query, doc) (polars' lazy engine: no intermediate copies)."""
    return frame.lazy().group_by(["segment", "query", "doc"]).agg(aggs).collect()


def _pick(strategy: Strategy, column: str) -> pl.Expr:
    """The selected vote's ``column`` of a group sorted by (timestamp, row): its last or first row."""
    expr = pl.col(column)
    return expr.last() if strategy.dedup == "last" else expr.first()


def _first_texts(frame: pl.DataFrame) -> pl.DataFrame:
    """Text rows: per query, the text with the smallest row (``doc`` null marks the kind)."""
    return (
        frame.sort("text_row")
        .unique("query", keep="first")
        .select("query", "text", "text_row", pl.lit(None, pl.String).alias("doc"))
    )


def _partial_frame(df: pl.DataFrame, strategy: Strategy, with_segment: bool) -> pl.DataFrame:
    """One batch of canonical rows -> mergeable aggregates (see :func:`partial_schema`).

    Three kinds of row share the schema:

    * ``voter`` null, ``doc`` set: per (segment, query, doc), every shown row (count, positions) and the
      votes that are not de-duplicated (sums and counts);
    * ``voter`` set (only with ``dedup``): per (segment, query, doc, voter), that voter's vote count and
      the selected vote with its ``(timestamp, row)``;
    * ``doc`` null: per query, the first logged query text and its row.

    Partials grow with distinct pairs and voters, not with rows. Sums and minima are plain group-by
    aggregates; the picks sort the (few) voted rows once instead of sorting inside groups.
    """
    has_vote = pl.col("vote").is_not_null()
    voter = pl.when(has_vote).then(pl.col(strategy.dedup_by)) if strategy.dedup != "none" else pl.lit(None, pl.String)
    segment = pl.col("segment") if with_segment else pl.lit(None, pl.String)
    keyed = df.with_columns(segment.alias("segment"), voter.alias("voter"))
    anonymous = pl.when(pl.col("voter").is_null()).then(pl.col("vote"))
    parts = [
        _sum_by_pair(
            keyed,
            [
                pl.len().cast(pl.Int64).alias("n_rows"),
                pl.col("position").count().cast(pl.Int64).alias("pos_n"),
                pl.col("position").sum().cast(pl.Int64).alias("pos_sum"),
                pl.col("position").min().cast(pl.Int64).alias("pos_min"),
                anonymous.count().cast(pl.Int64).alias("n_votes"),
                anonymous.sum().cast(pl.Float64).alias("vote_sum"),
                (anonymous >= strategy.up_threshold).sum().cast(pl.Int64).alias("n_up"),
            ],
        )
    ]
    if strategy.dedup != "none":
        ts = pl.col("timestamp").fill_null(float("-inf"))
        votes = keyed.filter(pl.col("voter").is_not_null()).with_columns(ts.alias("sel_ts")).sort(["sel_ts", "row"])
        parts.append(
            votes.group_by(KEY).agg(  # in-memory engine: keeps the sorted order inside each group
                pl.len().cast(pl.Int64).alias("n_votes"),
                pl.col("vote").sum().alias("vote_sum"),
                (pl.col("vote") >= strategy.up_threshold).sum().cast(pl.Int64).alias("n_up"),
                _pick(strategy, "vote").alias("sel_vote"),
                _pick(strategy, "sel_ts"),
                _pick(strategy, "row").alias("sel_row"),
            )
        )
    texts = keyed.filter(pl.col("query_text").is_not_null())
    if texts.height:
        parts.append(
            _first_texts(texts.select("query", pl.col("query_text").alias("text"), pl.col("row").alias("text_row")))
        )
    return pl.concat([_complete(p) for p in parts], how="vertical")


_ZERO = ("n_rows", "pos_n", "pos_sum", "n_votes", "n_up")


def _complete(df: pl.DataFrame) -> pl.DataFrame:
    """All partial columns in order: a kind's unused counts as 0, other unused columns null."""
    schema = pl.from_arrow(partial_schema().empty_table()).schema
    return df.select(
        [
            (pl.col(c) if c in df.columns else pl.lit(0 if c in _ZERO else None)).cast(t).alias(c)
            for c, t in schema.items()
        ]
    )


def _merge_frame(df: pl.DataFrame | list[pl.DataFrame], strategy: Strategy) -> pl.DataFrame:
    """Merge partial rows that share a key (the reduce step; associative and commutative).

    Takes one frame or a list (merged without first copying them into one).
    """
    frames = df if isinstance(df, list) else [df]
    is_text = pl.col("doc").is_null()
    is_voter = pl.col("voter").is_not_null()
    parts = [
        _sum_by_pair(
            pl.concat([f.lazy() for f in frames], how="vertical").filter(~is_text & ~is_voter),
            [
                pl.col("n_rows").sum(),
                pl.col("pos_n").sum(),
                pl.col("pos_sum").sum(),
                pl.col("pos_min").min(),
                pl.col("n_votes").sum(),
                pl.col("vote_sum").sum(),
                pl.col("n_up").sum(),
            ],
        )
    ]
    voters = pl.concat([f.filter(is_voter) for f in frames], how="vertical")
    if voters.height:
        parts.append(
            voters.sort(["sel_ts", "sel_row"])
            .group_by(KEY)
            .agg(  # in-memory engine: keeps the sorted order inside each group
                pl.col("n_votes").sum(),
                pl.col("vote_sum").sum(),
                pl.col("n_up").sum(),
                _pick(strategy, "sel_vote"),
                _pick(strategy, "sel_ts"),
                _pick(strategy, "sel_row"),
            )
        )
    texts = pl.concat([f.filter(is_text) for f in frames], how="vertical")
    if texts.height:
        parts.append(_first_texts(texts))
    return pl.concat([_complete(p) for p in parts], how="vertical")


def partial_schema() -> pa.Schema:
    """The pyarrow schema of :func:`partial_aggregate`'s output (the ``mapInArrow`` return schema)."""
    return pa.schema(
        [
            ("segment", pa.string()),
            ("query", pa.string()),
            ("doc", pa.string()),
            ("voter", pa.string()),
            ("n_rows", pa.int64()),
            ("pos_n", pa.int64()),
            ("pos_sum", pa.int64()),
            ("pos_min", pa.int64()),
            ("n_votes", pa.int64()),
            ("vote_sum", pa.float64()),
            ("n_up", pa.int64()),
            ("sel_vote", pa.float64()),
            ("sel_ts", pa.float64()),
            ("sel_row", pa.int64()),
            ("text", pa.string()),
            ("text_row", pa.int64()),
        ]
    )


def _to_arrow(df: pl.DataFrame) -> pa.Table:
    return df.select(partial_schema().names).to_arrow().cast(partial_schema())


def partial_aggregate(
    batches: Iterable[pa.RecordBatch], strategy: Strategy | str = "mean", *, with_segment: bool = True
) -> Iterator[pa.RecordBatch]:
    """Canonical batches (:func:`~.schema.normalize_batches`, errors removed) -> partial aggregates.

    A Spark ``mapInArrow`` function once ``strategy`` is bound (:func:`functools.partial`); its output
    schema is :func:`partial_schema`. Merge the partials of every partition with :func:`merge_partials`.
    Rows still flagged with an ``error`` are left out.
    """
    require_feedback("partial_aggregate")

    strat = Strategy.parse(strategy)
    for batch in batches:
        df = arrow_frame(batch, "partial_aggregate")
        if "error" in df.columns:
            df = df.filter(pl.col("error").is_null())
        yield from _to_arrow(_partial_frame(df, strat, with_segment)).to_batches()


def merge_partials(partials: Iterable[pa.RecordBatch | pa.Table], strategy: Strategy | str = "mean") -> pa.Table:
    """Merge partial aggregates of any split of the log (one row per key of each kind, see :func:`_partial_frame`)."""
    require_feedback("merge_partials")

    strat = Strategy.parse(strategy)
    tables = [arrow_table(p, "merge_partials") for p in partials]
    if not tables:
        return partial_schema().empty_table()
    df = arrow_frame(pa.concat_tables(tables), "merge_partials")
    return _to_arrow(_merge_frame(df, strat))


class Accumulator:
    """Reduce canonical batches to merged partials in hash shards of the query id.

    Each batch's partials are split into ``shards`` by query. A shard merges its pending partials into
    its state once they outnumber both ``MERGE_EVERY / shards`` rows and the state itself (so the
    total merge work stays proportional to the input, as in a doubling array). A merge only ever holds
    one shard; memory is the merged state (distinct pairs and voters), at most as much again pending,
    and one batch.
    """

    def __init__(self, strategy: Strategy, with_segment: bool, shards: int = SHARDS) -> None:
        self.strategy = strategy
        self.with_segment = with_segment
        self.n = max(1, shards)
        self.parts: list[list[pl.DataFrame]] = [[] for _ in range(self.n)]
        self.state = [0] * self.n  # rows of each shard's merged state (its first part)
        self.pending = [0] * self.n  # rows of its parts not merged yet

    def add(self, df: pl.DataFrame) -> None:
        part = _partial_frame(df, self.strategy, self.with_segment)
        if self.n == 1:
            pieces = {0: part}
        else:
            shard = (pl.col("query").hash(seed=0) % self.n).alias("_shard")
            split = part.with_columns(shard).partition_by("_shard", as_dict=True, include_key=False)
            pieces = {int(key[0]): piece for key, piece in split.items()}
        floor = max(1, MERGE_EVERY // self.n)
        for i, piece in pieces.items():
            self.parts[i].append(piece)
            self.pending[i] += piece.height
            if self.pending[i] > max(floor, self.state[i]) and len(self.parts[i]) > 1:
                self.parts[i] = [_merge_frame(self.parts[i], self.strategy)]
                self.state[i] = self.parts[i][0].height
                self.pending[i] = 0

    def shards(self) -> list[pl.DataFrame]:
        """The merged partials of every non-empty shard (a query's rows are all in one shard)."""
        out = []
        for i, parts in enumerate(self.parts):
            if len(parts) > 1:
                self.parts[i] = [_merge_frame(parts, self.strategy)]
            if self.parts[i]:
                out.append(self.parts[i][0])
        return out


def finalize(partial: pl.DataFrame, strategy: Strategy, *, by_segment: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Merged partials -> (judgments, shown documents), keyed by query (and segment when ``by_segment``).

    judgments: ``query, doc, label, votes, up_votes, voters, raw_votes`` for every (query, doc) with at
    least ``min_votes`` votes after de-duplication. shown: ``query, doc, mean_position, min_position,
    impressions, judged`` for every (query, doc) logged with a position.
    """
    partial = partial.filter(pl.col("doc").is_not_null())  # text rows carry no judgment
    if not by_segment:
        partial = _merge_frame(partial.with_columns(pl.lit(None, pl.String).alias("segment")), strategy)
    is_voter = pl.col("voter").is_not_null()
    sel = pl.col("sel_vote")
    per_pair = _sum_by_pair(
        partial,
        [
            pl.when(is_voter).then(sel.is_not_null().cast(pl.Int64)).otherwise(pl.col("n_votes")).sum().alias("votes"),
            pl.when(is_voter).then(sel.fill_null(0.0)).otherwise(pl.col("vote_sum")).sum().alias("vote_total"),
            pl.when(is_voter)
            .then((sel >= strategy.up_threshold).fill_null(False).cast(pl.Int64))
            .otherwise(pl.col("n_up"))
            .sum()
            .alias("up_votes"),
            (is_voter & sel.is_not_null()).sum().cast(pl.Int64).alias("voters"),
            pl.col("n_votes").sum().alias("raw_votes"),
            pl.col("n_rows").sum().alias("impressions"),
            pl.col("pos_n").sum().alias("pos_n"),
            pl.col("pos_sum").sum().alias("pos_sum"),
            pl.col("pos_min").min().alias("min_position"),
        ],
    )
    judged = pl.col("votes") >= strategy.min_votes
    per_pair = per_pair.with_columns(judged.alias("judged"), _label(strategy).alias("label"))
    key = ["segment", "query", "doc"] if by_segment else ["query", "doc"]
    judgments = (
        per_pair.filter(pl.col("judged")).select(*key, "label", "votes", "up_votes", "voters", "raw_votes").sort(key)
    )
    shown = (
        per_pair.filter(pl.col("pos_n") > 0)
        .with_columns((pl.col("pos_sum") / pl.col("pos_n")).alias("mean_position"))
        .select(*key, "mean_position", "min_position", "impressions", "judged")
        .sort([*key[:-1], "mean_position", "min_position", "doc"])
    )
    return judgments, shown


def query_texts(partial: pl.DataFrame) -> pl.DataFrame:
    """``query, text``: each logged query's first text (by row), null when the log has none."""
    queries = partial.filter(pl.col("doc").is_not_null()).select(pl.col("query").unique())
    texts = _first_texts(partial.filter(pl.col("doc").is_null())).select("query", "text")
    return queries.join(texts, on="query", how="left").sort("query")


def _label(strategy: Strategy) -> pl.Expr:
    n = pl.col("votes").cast(pl.Float64)
    up = pl.col("up_votes").cast(pl.Float64)
    if strategy.name == "mean":
        # Rounded to 12 decimals: float sums depend on the order rows are added (batches, partitions);
        # the rounding makes the label independent of it, and 0.3/0.7/0.5 average to exactly 0.5.
        return pl.when(n > 0).then((pl.col("vote_total") / n).round(12))
    if strategy.name == "majority":
        return pl.when(n > 0).then((2 * up > n).cast(pl.Float64))
    z2 = strategy.z**2
    p = up / n
    centre = p + z2 / (2 * n)
    margin = strategy.z * ((p * (1 - p) / n) + z2 / (4 * n * n)).sqrt()
    return pl.when(n > 0).then(((centre - margin) / (1 + z2 / n)).clip(lower_bound=0.0))


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

    :param log: a :class:`~.reading.FeedbackLog`, or a path / table with ``options`` for it.
    :param strategy: a :class:`~.judgments.Strategy` or a strategy name (``"mean"``, ``"majority"``, ``"wilson"``).
    :param by_segment: also aggregate per segment (default: when the log has a segment column).
    :param options: the strategy's options (``min_votes``, ``dedup``, ``dedup_by``, ``up_threshold``,
        ``confidence``: see :class:`~.judgments.Strategy`) and, for a path or table, the log's
        (``columns``, ``fmt``, ``on_error``, ``vote_map``, ``position_base``, ``batch_rows``: see
        :class:`~.reading.FeedbackLog`).

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
    if not shards:
        shards = [pl.from_arrow(partial_schema().empty_table())]  # type: ignore[list-item]
    done = [finalize(s, strategy, by_segment=by_segment) for s in shards]
    key = ["segment", "query", "doc"] if by_segment else ["query", "doc"]
    judgments = pl.concat([j for j, _ in done]).sort(key)
    shown = pl.concat([s for _, s in done]).sort([*key[:-1], "mean_position", "min_position", "doc"])
    return judgments, shown


__all__ = [
    "Accumulator",
    "Strategy",
    "aggregate_feedback",
    "finalize",
    "merge_partials",
    "partial_aggregate",
    "partial_schema",
    "query_texts",
    "split_options",
]
