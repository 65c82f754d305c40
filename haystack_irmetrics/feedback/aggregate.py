"""Votes -> judgments: named aggregation strategies over (query, document), columnar and mergeable.

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

The columnar path (:func:`partial_aggregate`, :func:`merge_partials`, :func:`finalize`) only sums, takes
minima and picks the vote with the largest (or smallest) ``(timestamp, row)``: partial results of any
split of the log merge into the same answer, so batches, files or Spark partitions can each be reduced
on their own (``mapInArrow(partial_aggregate)``) and merged once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields, replace
from statistics import NormalDist
from typing import TYPE_CHECKING

from .._extras import require_feedback
from .errors import UnknownStrategyError

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa

STRATEGIES = ("mean", "majority", "wilson")
DEDUP = ("none", "last", "first")
DEDUP_BY = ("user", "session")

#: Pending partial rows (over all shards) below which no shard is merged (see :class:`Accumulator`).
MERGE_EVERY = 1 << 20
#: Hash shards of the query id the reduce step works in (a merge holds one shard at a time).
SHARDS = 16


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
        if self.dedup not in DEDUP:
            raise UnknownStrategyError(f"dedup must be one of {DEDUP}, got {self.dedup!r}")
        if self.dedup_by not in DEDUP_BY:
            raise UnknownStrategyError(f"dedup_by must be one of {DEDUP_BY}, got {self.dedup_by!r}")
        if isinstance(self.min_votes, bool) or not isinstance(self.min_votes, int) or self.min_votes < 1:
            raise UnknownStrategyError(f"min_votes must be an int >= 1, got {self.min_votes!r}")
        if not isinstance(self.up_threshold, int | float) or self.up_threshold != self.up_threshold:
            raise UnknownStrategyError(f"up_threshold must be a number, got {self.up_threshold!r}")
        if not isinstance(self.confidence, float | int) or not 0 < self.confidence < 1:
            raise UnknownStrategyError(f"confidence must be in (0, 1), got {self.confidence!r}")

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
    import polars as pl

    expr = pl.col(column)
    return expr.last() if strategy.dedup == "last" else expr.first()


def _first_texts(frame: pl.DataFrame) -> pl.DataFrame:
    """Text rows: per query, the text with the smallest row (``doc`` null marks the kind)."""
    import polars as pl

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
    import polars as pl

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
    import polars as pl

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
    import polars as pl

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
    import pyarrow as pa

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
    """Canonical batches (:func:`~.normalize.normalize_batches`, errors removed) -> partial aggregates.

    A Spark ``mapInArrow`` function once ``strategy`` is bound (:func:`functools.partial`); its output
    schema is :func:`partial_schema`. Merge the partials of every partition with :func:`merge_partials`.
    Rows still flagged with an ``error`` are left out.
    """
    require_feedback("partial_aggregate")
    import polars as pl

    from .normalize import arrow_frame

    strat = Strategy.parse(strategy)
    for batch in batches:
        df = arrow_frame(batch, "partial_aggregate")
        if "error" in df.columns:
            df = df.filter(pl.col("error").is_null())
        yield from _to_arrow(_partial_frame(df, strat, with_segment)).to_batches()


def merge_partials(partials: Iterable[pa.RecordBatch | pa.Table], strategy: Strategy | str = "mean") -> pa.Table:
    """Merge partial aggregates of any split of the log (one row per key of each kind, see :func:`_partial_frame`)."""
    require_feedback("merge_partials")
    import pyarrow as pa

    from .normalize import arrow_frame, arrow_table

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
        import polars as pl

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
    import polars as pl

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
    import polars as pl

    queries = partial.filter(pl.col("doc").is_not_null()).select(pl.col("query").unique())
    texts = _first_texts(partial.filter(pl.col("doc").is_null())).select("query", "text")
    return queries.join(texts, on="query", how="left").sort("query")


def _label(strategy: Strategy) -> pl.Expr:
    import polars as pl

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


__all__ = [
    "DEDUP",
    "DEDUP_BY",
    "STRATEGIES",
    "Accumulator",
    "Strategy",
    "finalize",
    "merge_partials",
    "partial_aggregate",
    "partial_schema",
    "query_texts",
    "wilson_lower_bound",
]
