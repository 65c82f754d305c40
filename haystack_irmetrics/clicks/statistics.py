"""The sufficient-statistics pass of the EM click models over Arrow batches: logs beyond one machine.

:func:`session_statistics` has the signature of a Spark ``mapInArrow`` function (bind the options
with :func:`functools.partial`): it reads the click-log rows of one partition, whose sessions must be
whole (repartition by the session column first), and yields the partition's statistics, keyed by query
and document ids, so partitions add up:

* ``pbm`` and ``ubm``: per (query, doc, rank, rank of the previous click) the clicks and the skips
  (``prev`` is 0 for PBM);
* ``dbn``: per (query, last clicked doc or null, the docs below it) how many sessions end so, the
  continuations the log shows above the last click, and per (query, doc) the impressions and clicks.

:func:`fit_statistics` merges any number of such tables (summing per key) and runs the same EM as a
local fit (:class:`~.models.PBM`, :class:`~.models.UBM`, :class:`~.dbn.DBN`): the parameters are the
local fit's, up to the order of floating-point sums.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ClickModelError
from ..feedback.schema import FeedbackColumns, arrow_frame
from .dbn import DBN
from .log import ClickLog, Sessions
from .models import PBM, UBM, ClickModel, _last_click, examination_em, previous_click

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa

MODELS = ("pbm", "ubm", "dbn")


def statistics_schema() -> pa.Schema:
    """The Arrow schema :func:`session_statistics` yields (one for the three models; unused columns null)."""
    from ..feedback._deps import pa

    return pa.schema(
        [
            ("kind", pa.string()),  # "slot" (pbm/ubm), "tail" or "pair" (dbn)
            ("query", pa.string()),
            ("doc", pa.string()),  # the pair's doc, or the tail's last clicked doc (null: no click)
            ("tail", pa.list_(pa.string())),
            ("rank", pa.int64()),
            ("prev", pa.int64()),
            ("a", pa.float64()),  # slot: clicks; tail: sessions; pair: impressions
            ("b", pa.float64()),  # slot: skips; tail: continuations shown above the last click; pair: clicks
        ]
    )


def _check_model(model: str) -> str:
    if model not in MODELS:
        raise ClickModelError(f"statistics are for the EM models {MODELS}, got {model!r}")
    return model


def session_statistics(
    batches: Iterable[pa.RecordBatch],
    *,
    model: str,
    columns: FeedbackColumns | Mapping[str, str | None] | None = None,
    position_base: int = 1,
) -> Iterator[pa.RecordBatch]:
    """One partition's sufficient statistics for ``model`` (see the module docs); its sessions whole.

    :raises ClickModelError: an unknown model. Bad rows and sessions raise as :class:`~.log.ClickLog` does.
    """
    from ..feedback._deps import pl

    _check_model(model)
    frames = [arrow_frame(b, "session_statistics") for b in batches]
    frames = [f for f in frames if f.height]
    if not frames:
        return
    log = ClickLog(pl.concat(frames, how="vertical_relaxed"), columns=columns, position_base=position_base)
    s = log.sessions()
    queries, docs = s.pair_names()
    q = np.asarray(queries, dtype=object)
    d = np.asarray(docs, dtype=object)
    if model in ("pbm", "ubm"):
        rank = np.broadcast_to(np.arange(s.n_ranks), s.pairs.shape)
        prev = previous_click(s.clicks) if model == "ubm" else np.zeros(s.pairs.shape, dtype=np.int64)
        frame = pl.DataFrame(
            {
                "pair": s.pairs[s.shown],
                "rank": rank[s.shown].astype(np.int64),
                "prev": prev[s.shown].astype(np.int64),
                "click": s.clicks[s.shown],
            }
        )
        grouped = frame.group_by("pair", "rank", "prev").agg(
            pl.col("click").sum().cast(pl.Float64).alias("a"), (~pl.col("click")).sum().cast(pl.Float64).alias("b")
        )
        pair = grouped["pair"].to_numpy()
        out = pl.DataFrame(
            {
                "kind": "slot",
                "query": q[pair].tolist(),
                "doc": d[pair].tolist(),
                "tail": pl.Series([None] * grouped.height, dtype=pl.List(pl.String)),
                "rank": grouped["rank"],
                "prev": grouped["prev"],
                "a": grouped["a"],
                "b": grouped["b"],
            }
        )
    else:
        out = _dbn_statistics(s, q, d)
    yield from out.to_arrow().cast(statistics_schema()).to_batches()


def _dbn_statistics(s: Sessions, q: np.ndarray, d: np.ndarray) -> pl.DataFrame:
    from ..feedback._deps import pl

    n_s, n_r = s.pairs.shape
    last = _last_click(s.clicks)
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
    tail_rows = frame.group_by("query", "doc", "tail").agg(
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


def fit_statistics(model: str, tables: Iterable[Any], **options: Any) -> ClickModel:
    """Merge the statistics ``tables`` (Arrow tables or batches, any number of partitions) and fit ``model``.

    :param options: ``max_iter``, ``tol``.
    :returns: the fitted model; its ``params()`` and ``labels()`` are keyed by the statistics' (query, doc).
    """
    from ..feedback._deps import pl

    _check_model(model)
    parts = [arrow_frame(t, "fit_statistics") for t in tables]
    if not parts or not sum(p.height for p in parts):
        raise ClickModelError(f"{model}: no statistics to fit on")
    stats = pl.concat(parts, how="vertical_relaxed")
    if model in ("pbm", "ubm"):
        merged = (
            stats.filter(pl.col("kind") == "slot")
            .group_by("query", "doc", "rank", "prev")
            .agg(pl.col("a").sum(), pl.col("b").sum())
        )
        pairs, sessions = _pair_table(merged)
        n_ranks = int(merged["rank"].max()) + 1
        slot = (
            merged["rank"].to_numpy()
            if model == "pbm"
            else merged["rank"].to_numpy() * n_ranks + merged["prev"].to_numpy()
        )
        n_slots = n_ranks if model == "pbm" else n_ranks * n_ranks
        fitted: ClickModel = PBM(**options) if model == "pbm" else UBM(**options)
        alpha, gamma, fitted.iterations = examination_em(
            pairs,
            slot,
            merged["a"].to_numpy(),
            merged["b"].to_numpy(),
            sessions.n_pairs,
            n_slots,
            max_iter=fitted.max_iter,
            tol=fitted.tol,
        )
        fitted.alpha = alpha  # type: ignore[attr-defined]
        if model == "ubm":
            fitted.gamma = gamma.reshape(n_ranks, n_ranks)  # type: ignore[attr-defined]
            fitted._seen = np.bincount(slot, minlength=n_slots).reshape(n_ranks, n_ranks) > 0  # type: ignore[attr-defined]
        else:
            fitted.gamma = gamma  # type: ignore[attr-defined]
        fitted._sessions = sessions
        return fitted
    pair_rows = (
        stats.filter(pl.col("kind") == "pair").group_by("query", "doc").agg(pl.col("a").sum(), pl.col("b").sum())
    )
    tails = (
        stats.filter(pl.col("kind") == "tail")
        .group_by("query", "doc", "tail")
        .agg(pl.col("a").sum(), pl.col("b").sum())
    )
    codes, sessions = _pair_table(pair_rows)
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
    fitted = DBN(**options)
    fitted._em(tail, lastp, tails["a"].to_numpy(), imp, clicked, float(tails["b"].sum()), sessions.n_pairs)
    fitted._sessions = sessions
    return fitted


def _pair_table(frame: pl.DataFrame) -> tuple[np.ndarray, Sessions]:
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


__all__ = ["MODELS", "fit_statistics", "session_statistics", "statistics_schema"]
