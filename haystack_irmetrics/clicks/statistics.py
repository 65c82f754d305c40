"""The sufficient-statistics pass of the click models over Arrow batches: logs beyond one machine.

:func:`session_statistics` has the signature of a Spark ``mapInArrow`` function (bind the options
with :func:`functools.partial`): it reads the click-log rows of one partition, whose sessions must be
whole (repartition by the session column first), and yields the partition's statistics, keyed by query
and document ids, so partitions add up:

* ``pbm`` and ``ubm``: per (query, doc, rank, rank of the previous click) the clicks and the skips
  (``prev`` is 0 for PBM);
* ``dbn``: per (query, last clicked doc or null, the docs below it) how many sessions end so, the
  continuations the log shows above the last click, and per (query, doc) the impressions and clicks;
* the CTR baselines ``gctr``, ``rctr`` and ``ctr``: PBM's (query, doc, rank) clicks and skips;
* the closed forms ``cascade``, ``dcm`` and ``sdbn``: per (query, doc) the impressions and clicks at the
  ranks the model takes as examined (up to the first click; up to the last, or all without a click), every
  shown pair listed; the DCM also per rank the clicks and the sessions whose last click is there (every
  rank up to the partition's longest session); the SDBN also per (query, doc) how often it was the last
  click and its clicks.

:func:`fit_statistics` merges any number of such tables (summing per key) and fits as a local fit does
(the same EM for :class:`~.models.PBM`, :class:`~.models.UBM` and :class:`~.dbn.DBN`; the closed forms'
ratios): the parameters are the local fit's, up to the order of floating-point sums.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ClickModelError
from ..io.log_columns import arrow_frame
from .dbn import DBN
from .log import ClickColumns, ClickLog, Sessions
from .models import (
    DCM,
    PBM,
    SDBN,
    UBM,
    Cascade,
    ClickModel,
    DocumentCTR,
    GlobalCTR,
    RankCTR,
    _first_click,
    _last_click,
    _ratio,
    examination_em,
    previous_click,
)

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa

MODELS = ("gctr", "rctr", "ctr", "pbm", "ubm", "cascade", "dcm", "sdbn", "dbn")
#: The models whose statistics are PBM's (query, doc, rank) clicks and skips.
_SLOT_MODELS = ("gctr", "rctr", "ctr", "pbm", "ubm")


def statistics_schema() -> pa.Schema:
    """The Arrow schema :func:`session_statistics` yields (one for the three models; unused columns null)."""
    from ._deps import pa

    return pa.schema(
        [
            # "slot" (pbm, ubm, ctrs), "tail" or "pair" (dbn), "examined", "rank" (dcm), "satisfied" (sdbn)
            ("kind", pa.string()),
            ("query", pa.string()),
            ("doc", pa.string()),  # the pair's doc, or the tail's last clicked doc (null: no click)
            ("tail", pa.list_(pa.string())),
            ("rank", pa.int64()),
            ("prev", pa.int64()),
            # slot: clicks; tail: sessions; pair, examined: impressions; rank: clicks; satisfied: last clicks
            ("a", pa.float64()),
            # slot: skips; tail: continuations shown above the last click; pair, examined, satisfied: clicks;
            # rank: sessions whose last click is there
            ("b", pa.float64()),
        ]
    )


def _check_model(model: str) -> str:
    if model not in MODELS:
        raise ClickModelError(f"statistics are for the click models {MODELS}, got {model!r}")
    return model


def session_statistics(
    batches: Iterable[pa.RecordBatch],
    *,
    model: str,
    columns: ClickColumns | Mapping[str, str | None] | None = None,
    position_base: int = 1,
) -> Iterator[pa.RecordBatch]:
    """One partition's sufficient statistics for ``model`` (see the module docs); its sessions whole.

    :raises ClickModelError: an unknown model. Bad rows and sessions raise as :class:`~.log.ClickLog` does.
    """
    from ._deps import pl

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
    if model in _SLOT_MODELS:
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
    elif model == "dbn":
        out = _dbn_statistics(s, q, d)
    else:
        out = _closed_form_statistics(s, q, d, model)
    yield from out.to_arrow().cast(statistics_schema()).to_batches()


def _dbn_statistics(s: Sessions, q: np.ndarray, d: np.ndarray) -> pl.DataFrame:
    from ._deps import pl

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


def _rows(kind: str, query: list[Any], doc: list[Any], rank: Any, a: np.ndarray, b: np.ndarray) -> pl.DataFrame:
    from ._deps import pl

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


def _closed_form_statistics(s: Sessions, q: np.ndarray, d: np.ndarray, model: str) -> pl.DataFrame:
    """Cascade, DCM, SDBN: the counts their closed forms divide (see the module docs)."""
    from ._deps import pl

    last = _last_click(s.clicks)
    no_click = last < 0
    cut = _first_click(s.clicks) if model == "cascade" else np.where(no_click, s.n_ranks, last)
    examined = s.shown & (np.arange(s.n_ranks)[None, :] <= cut[:, None])
    imp = np.bincount(s.pairs[examined], minlength=s.n_pairs).astype(float)
    clk = np.bincount(s.pairs[examined & s.clicks], minlength=s.n_pairs).astype(float)
    seen = np.flatnonzero(np.bincount(s.pairs[s.shown], minlength=s.n_pairs))  # every shown pair, examined or not
    none = [None] * seen.size
    parts = [_rows("examined", q[seen].tolist(), d[seen].tolist(), none, imp[seen], clk[seen])]
    if model == "dcm":
        clicks_at = s.clicks.sum(axis=0).astype(float)
        last_at = np.bincount(last[~no_click], minlength=s.n_ranks).astype(float)
        ranks = list(range(s.n_ranks))
        parts.append(_rows("rank", [None] * s.n_ranks, [None] * s.n_ranks, ranks, clicks_at, last_at))
    if model == "sdbn":
        rows = np.flatnonzero(~no_click)
        last_count = np.bincount(s.pairs[rows, last[rows]], minlength=s.n_pairs).astype(float)
        clicked = np.bincount(s.pairs[s.clicks], minlength=s.n_pairs).astype(float)
        parts.append(_rows("satisfied", q[seen].tolist(), d[seen].tolist(), none, last_count[seen], clicked[seen]))
    return pl.concat(parts)


def _fit_slot_ctr(model: str, merged: pl.DataFrame, options: dict[str, Any]) -> ClickModel:
    """GCTR, RCTR, DCTR from the merged (query, doc, rank) clicks (``a``) and skips (``b``)."""
    from ._deps import pl

    if model == "gctr":
        fitted: ClickModel = GlobalCTR(**options)
        clicks, shown = float(merged["a"].sum()), float((merged["a"] + merged["b"]).sum())
        fitted.rho = clicks / shown  # type: ignore[attr-defined]
        _, fitted._sessions = _pair_table(merged)
        return fitted
    if model == "rctr":
        fitted = RankCTR(**options)
        n_ranks = int(merged["rank"].max()) + 1
        by_rank = merged.group_by("rank").agg(pl.col("a").sum(), (pl.col("a") + pl.col("b")).sum().alias("n"))
        clicks, shown = np.zeros(n_ranks), np.zeros(n_ranks)
        clicks[by_rank["rank"].to_numpy()] = by_rank["a"].to_numpy()
        shown[by_rank["rank"].to_numpy()] = by_rank["n"].to_numpy()
        fitted.rho = _ratio(clicks, shown)  # type: ignore[attr-defined]
        _, fitted._sessions = _pair_table(merged)
        return fitted
    fitted = DocumentCTR(**options)
    by_pair = merged.group_by("query", "doc").agg(pl.col("a").sum(), (pl.col("a") + pl.col("b")).sum().alias("n"))
    codes, sessions = _pair_table(by_pair)
    clicks, shown = np.zeros(sessions.n_pairs), np.zeros(sessions.n_pairs)
    clicks[codes], shown[codes] = by_pair["a"].to_numpy(), by_pair["n"].to_numpy()
    fitted.alpha = _ratio(clicks, shown)  # type: ignore[attr-defined]
    fitted._sessions = sessions
    return fitted


def _fit_closed_form(model: str, stats: pl.DataFrame, options: dict[str, Any]) -> ClickModel:
    """Cascade, DCM, SDBN from the merged counts, as their ``_fit`` divides them."""
    from ._deps import pl

    def per_pair(kind: str) -> pl.DataFrame:
        return stats.filter(pl.col("kind") == kind).group_by("query", "doc").agg(pl.col("a").sum(), pl.col("b").sum())

    examined = per_pair("examined")
    codes, sessions = _pair_table(examined)
    imp, clk = np.zeros(sessions.n_pairs), np.zeros(sessions.n_pairs)
    imp[codes], clk[codes] = examined["a"].to_numpy(), examined["b"].to_numpy()
    fitted: ClickModel = {"cascade": Cascade, "dcm": DCM, "sdbn": SDBN}[model](**options)
    fitted.alpha = _ratio(clk, imp)  # type: ignore[attr-defined]
    if model == "dcm":
        ranks = stats.filter(pl.col("kind") == "rank").group_by("rank").agg(pl.col("a").sum(), pl.col("b").sum())
        n_ranks = int(ranks["rank"].max()) + 1
        clicks_at, last_at = np.zeros(n_ranks), np.zeros(n_ranks)
        clicks_at[ranks["rank"].to_numpy()] = ranks["a"].to_numpy()
        last_at[ranks["rank"].to_numpy()] = ranks["b"].to_numpy()
        fitted.lam = _ratio(clicks_at - last_at, clicks_at)  # type: ignore[attr-defined]
    if model == "sdbn":
        satisfied = per_pair("satisfied")
        index = {key: i for i, key in enumerate(zip(*sessions.pair_names(), strict=True))}
        at = np.array([index[key] for key in satisfied.select("query", "doc").iter_rows()], dtype=np.int64)
        last_count, clicked = np.zeros(sessions.n_pairs), np.zeros(sessions.n_pairs)
        last_count[at], clicked[at] = satisfied["a"].to_numpy(), satisfied["b"].to_numpy()
        fitted.sigma = _ratio(last_count, clicked)  # type: ignore[attr-defined]
    fitted._sessions = sessions
    return fitted


def fit_statistics(model: str, tables: Iterable[Any], **options: Any) -> ClickModel:
    """Merge the statistics ``tables`` (Arrow tables or batches, any number of partitions) and fit ``model``.

    :param options: ``max_iter``, ``tol``, ``accelerate`` (:class:`~.models.ClickModel`).
    :returns: the fitted model; its ``params()`` and ``labels()`` are keyed by the statistics' (query, doc).
    """
    from ._deps import pl

    _check_model(model)
    parts = [arrow_frame(t, "fit_statistics") for t in tables]
    if not parts or not sum(p.height for p in parts):
        raise ClickModelError(f"{model}: no statistics to fit on")
    stats = pl.concat(parts, how="vertical_relaxed")
    if model in ("cascade", "dcm", "sdbn"):
        return _fit_closed_form(model, stats, options)
    if model in _SLOT_MODELS:
        merged = (
            stats.filter(pl.col("kind") == "slot")
            .group_by("query", "doc", "rank", "prev")
            .agg(pl.col("a").sum(), pl.col("b").sum())
        )
        if model in ("gctr", "rctr", "ctr"):
            return _fit_slot_ctr(model, merged, options)
        pairs, sessions = _pair_table(merged)
        n_ranks = int(merged["rank"].max()) + 1
        slot = (
            merged["rank"].to_numpy()
            if model == "pbm"
            else merged["rank"].to_numpy() * n_ranks + merged["prev"].to_numpy()
        )
        n_slots = n_ranks if model == "pbm" else n_ranks * n_ranks
        fitted: ClickModel = PBM(**options) if model == "pbm" else UBM(**options)
        alpha, gamma, em = examination_em(
            pairs,
            slot,
            merged["a"].to_numpy(),
            merged["b"].to_numpy(),
            sessions.n_pairs,
            n_slots,
            **fitted._em_options(),
        )
        fitted._ended(em)
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
