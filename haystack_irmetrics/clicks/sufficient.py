"""The click models' sufficient statistics as Arrow rows: made partition by partition, merged, read back.

Three kinds, one per way the models fit (a model's registry entry names its kind, :mod:`.registry`):

* :data:`SLOTS` (the CTR baselines, PBM, UBM): ``slot`` rows, per (query, doc, rank, rank of the previous
  click) the clicks (``a``) and skips (``b``), from :class:`~.models.SlotCounts`;
* :data:`EXAMINED` (Cascade, DCM, SDBN): ``examined`` rows, per shown (query, doc) the impressions (``a``) and
  clicks (``b``) at the ranks the model takes as examined; the DCM's ``rank`` rows (per rank: clicks, and the
  sessions whose last click is there) and the SDBN's ``satisfied`` rows (per pair: last clicks, clicks), from
  :class:`~.cascade.ExaminedCounts`;
* :data:`TAILS` (the DBN): ``tail`` rows, per (query, last clicked doc or null, the docs below it) how many
  sessions end so (``a``) and the continuations shown above their last click (``b``), and ``pair`` rows, per
  (query, doc) the impressions and clicks; read back as :class:`~.dbn.TailCounts`.

:meth:`Statistics.rows` makes a partition's rows from its sessions (the model's own
:meth:`~.models.ClickModel.counts` where it has them); :meth:`Statistics.merge` sums any number of partitions'
rows per key and codes them by one pair table, which the model is fitted on with
:meth:`~.models.ClickModel.from_counts`. polars is imported on first use (the ``clicks`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .cascade import ExaminedCounts, last_click
from .dbn import TailCounts
from .log import Sessions
from .models import ClickModel, SlotCounts

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
else:
    from ._deps import pl


def _rows(kind: str, query: list[Any], doc: list[Any], rank: Any, a: np.ndarray, b: np.ndarray) -> pl.DataFrame:
    n = len(a)
    return pl.DataFrame(
        {
            "kind": [kind] * n,
            "query": pl.Series(query, dtype=pl.String),
            "doc": pl.Series(doc, dtype=pl.String),
            "tail": pl.Series([None] * n, dtype=pl.List(pl.String)),
            "rank": pl.Series(rank, dtype=pl.Int64),
            "prev": pl.Series([None] * n, dtype=pl.Int64),
            "a": pl.Series(a, dtype=pl.Float64),
            "b": pl.Series(b, dtype=pl.Float64),
        }
    )


def pair_table(frame: pl.DataFrame) -> tuple[np.ndarray, Sessions]:
    """Pair codes of the (query, doc) rows of ``frame`` and a :class:`Sessions` holding only that pair table."""
    keys = frame.select("query", "doc").unique().sort("query", "doc").with_row_index("code")
    codes = frame.join(keys, on=["query", "doc"], how="left", maintain_order="left")["code"].to_numpy().astype(np.int64)
    queries = keys["query"].unique(maintain_order=True).to_list()
    docs = keys["doc"].unique(maintain_order=True).to_list()
    qi = {x: i for i, x in enumerate(queries)}
    di = {x: i for i, x in enumerate(docs)}
    empty = np.zeros((0, 1), dtype=np.int32)
    sessions = Sessions(
        query=np.zeros(0, dtype=np.int32),
        pairs=empty,
        clicks=empty.astype(bool),
        length=np.zeros(0, dtype=np.int32),
        pair_query=np.array([qi[x] for x in keys["query"].to_list()], dtype=np.int32),
        pair_doc=np.array([di[x] for x in keys["doc"].to_list()], dtype=np.int32),
        query_names=np.array(queries, dtype=object),
        doc_names=np.array(docs, dtype=object),
        first_row=np.zeros(0, dtype=np.int64),
    )
    return codes, sessions


def _summed(stats: pl.DataFrame, kind: str, *keys: str) -> pl.DataFrame:
    """The rows of ``kind``, ``a`` and ``b`` summed per ``keys``, in the order the keys first come (the same
    sums, in the same order, on every run)."""
    rows = stats.filter(pl.col("kind") == kind)
    return rows.group_by(*keys, maintain_order=True).agg(pl.col("a").sum(), pl.col("b").sum())


def _per_pair(frame: pl.DataFrame, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` of per-(query, doc) rows as arrays over ``sessions``' pair table (0 for a pair absent)."""
    index = {key: i for i, key in enumerate(zip(*sessions.pair_names(), strict=True))}
    at = np.array([index[key] for key in frame.select("query", "doc").iter_rows()], dtype=np.int64)
    a, b = np.zeros(sessions.n_pairs), np.zeros(sessions.n_pairs)
    a[at], b[at] = frame["a"].to_numpy(), frame["b"].to_numpy()
    return a, b


def _per_rank(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` of per-rank rows as arrays over the ranks up to the largest."""
    n_ranks = int(frame["rank"].max()) + 1
    a, b = np.zeros(n_ranks), np.zeros(n_ranks)
    a[frame["rank"].to_numpy()] = frame["a"].to_numpy()
    b[frame["rank"].to_numpy()] = frame["b"].to_numpy()
    return a, b


# -- slots -------------------------------------------------------------------------------------------


def _slot_rows(model: type[ClickModel], s: Sessions, q: np.ndarray, d: np.ndarray) -> pl.DataFrame:
    c: SlotCounts = model.counts(s)
    return pl.DataFrame(
        {
            "kind": "slot",
            "query": q[c.pair].tolist(),
            "doc": d[c.pair].tolist(),
            "tail": pl.Series([None] * c.pair.size, dtype=pl.List(pl.String)),
            "rank": c.rank.astype(np.int64),
            "prev": c.prev.astype(np.int64),
            "a": c.clicked,
            "b": c.skipped,
        }
    )


def _slot_merge(stats: pl.DataFrame) -> tuple[Sessions, SlotCounts]:
    merged = _summed(stats, "slot", "query", "doc", "rank", "prev")
    pairs, sessions = pair_table(merged)
    rank, prev = merged["rank"].to_numpy(), merged["prev"].to_numpy()
    n_ranks = int(rank.max()) + 1
    return sessions, SlotCounts(pairs, rank, prev, merged["a"].to_numpy(), merged["b"].to_numpy(), n_ranks)


# -- the closed forms ----------------------------------------------------------------------------------


def _examined_rows(model: type[ClickModel], s: Sessions, q: np.ndarray, d: np.ndarray) -> pl.DataFrame:
    c: ExaminedCounts = model.counts(s)
    seen = np.flatnonzero(np.bincount(s.pairs[s.shown], minlength=s.n_pairs))  # every shown pair, examined or not
    qs, ds, none = q[seen].tolist(), d[seen].tolist(), [None] * seen.size
    parts = [_rows("examined", qs, ds, none, c.impressions[seen], c.clicks[seen])]
    if c.clicks_at is not None and c.last_at is not None:
        n = s.n_ranks
        parts.append(_rows("rank", [None] * n, [None] * n, list(range(n)), c.clicks_at, c.last_at))
    if c.last_clicks is not None and c.clicked is not None:
        parts.append(_rows("satisfied", qs, ds, none, c.last_clicks[seen], c.clicked[seen]))
    return pl.concat(parts)


def _examined_merge(stats: pl.DataFrame) -> tuple[Sessions, ExaminedCounts]:
    examined = _summed(stats, "examined", "query", "doc")
    codes, sessions = pair_table(examined)
    imp, clk = np.zeros(sessions.n_pairs), np.zeros(sessions.n_pairs)
    imp[codes], clk[codes] = examined["a"].to_numpy(), examined["b"].to_numpy()
    extra: dict[str, np.ndarray] = {}
    ranks = _summed(stats, "rank", "rank")
    if ranks.height:
        extra["clicks_at"], extra["last_at"] = _per_rank(ranks)
    satisfied = _summed(stats, "satisfied", "query", "doc")
    if satisfied.height:
        extra["last_clicks"], extra["clicked"] = _per_pair(satisfied, sessions)
    return sessions, ExaminedCounts(imp, clk, **extra)


# -- the DBN's tails ---------------------------------------------------------------------------------


def _tail_rows(model: type[ClickModel], s: Sessions, q: np.ndarray, d: np.ndarray) -> pl.DataFrame:
    del model  # the tails are counted per session here, by name: partitions add up across their pair tables
    n_s, n_r = s.pairs.shape
    last = last_click(s.clicks)
    has_click = last >= 0
    at = last[:, None] + 1 + np.arange(n_r)[None, :]
    tail = np.take_along_axis(s.pairs, np.minimum(at, n_r - 1), axis=1)
    tail[at >= s.length[:, None]] = -1
    last_pair = np.where(has_click, s.pairs[np.arange(n_s), np.maximum(last, 0)], -1)
    tails = [[str(x) for x in d[row[row >= 0]].tolist()] for row in tail]  # per session: the docs below the last click
    frame = pl.DataFrame(
        {
            "query": s.query_names[s.query].astype(str).tolist(),
            "doc": [str(d[p]) if p >= 0 else None for p in last_pair.tolist()],
            "tail": pl.Series(tails, dtype=pl.List(pl.String)),
            "above": np.maximum(last, 0).astype(np.float64),
        }
    )
    tail_rows = frame.group_by("query", "doc", "tail", maintain_order=True).agg(
        pl.len().cast(pl.Float64).alias("a"), pl.col("above").sum().alias("b")
    )
    imp = np.bincount(s.pairs[s.shown], minlength=s.n_pairs).astype(float)
    clicked = np.bincount(s.pairs[s.clicks & s.shown], minlength=s.n_pairs).astype(float)
    seen = np.flatnonzero(imp)
    pair_rows = pl.DataFrame({"query": q[seen].tolist(), "doc": d[seen].tolist(), "a": imp[seen], "b": clicked[seen]})
    null_list = pl.lit(None, dtype=pl.List(pl.String))
    none = pl.lit(None, dtype=pl.Int64)
    return pl.concat(
        [
            tail_rows.select(
                pl.lit("tail").alias("kind"), "query", "doc", "tail", none.alias("rank"), none.alias("prev"), "a", "b"
            ),
            pair_rows.select(
                pl.lit("pair").alias("kind"),
                "query",
                "doc",
                null_list.alias("tail"),
                none.alias("rank"),
                none.alias("prev"),
                "a",
                "b",
            ),
        ]
    )


def _tail_merge(stats: pl.DataFrame) -> tuple[Sessions, TailCounts]:
    pair_rows = _summed(stats, "pair", "query", "doc")
    tails = _summed(stats, "tail", "query", "doc", "tail")
    codes, sessions = pair_table(pair_rows)
    index = {(qq, dd): i for i, (qq, dd) in enumerate(zip(*sessions.pair_names(), strict=True))}
    imp = np.zeros(sessions.n_pairs)
    clicked = np.zeros(sessions.n_pairs)
    imp[codes] = pair_rows["a"].to_numpy()
    clicked[codes] = pair_rows["b"].to_numpy()
    width = max((len(t) for t in tails["tail"].to_list()), default=0) or 1
    tail = np.full((tails.height, width), -1, dtype=np.int64)
    lastp = np.full(tails.height, -1, dtype=np.int64)
    for i, (qq, dd, below) in enumerate(tails.select("query", "doc", "tail").iter_rows()):
        if dd is not None:
            lastp[i] = index[qq, dd]
        tail[i, : len(below)] = [index[qq, x] for x in below]
    return sessions, TailCounts(tail, lastp, tails["a"].to_numpy(), imp, clicked, float(tails["b"].sum()))


@dataclass(frozen=True)
class Statistics:
    """A kind of sufficient statistics: its ``rows`` of a partition's sessions (given the model class and each
    pair's query and doc ids) and its ``merge`` of any number of partitions' rows into (the pair table, the
    counts a model's :meth:`~.models.ClickModel.from_counts` takes); ``what``: what the rows hold, in words."""

    name: str
    rows: Callable[[type[ClickModel], Sessions, np.ndarray, np.ndarray], pl.DataFrame]
    merge: Callable[[pl.DataFrame], tuple[Sessions, Any]]
    what: str


SLOTS = Statistics(
    "slots", _slot_rows, _slot_merge, "clicks and skips per (query, doc, rank, rank of the previous click)"
)
EXAMINED = Statistics(
    "examined",
    _examined_rows,
    _examined_merge,
    "each shown pair's impressions and clicks at the ranks the model takes as examined (with the DCM's clicks "
    "and last clicks per rank, the SDBN's last clicks and clicks per pair)",
)
TAILS = Statistics(
    "tails",
    _tail_rows,
    _tail_merge,
    "how many sessions end with each (query, last clicked doc, docs below it), with each pair's impressions and clicks",
)

__all__ = ["EXAMINED", "SLOTS", "TAILS", "Statistics", "pair_table"]
