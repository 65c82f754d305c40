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
ratios): the parameters are the local fit's, up to the order of floating-point sums. Which statistics a model
has is its registry entry's (:mod:`.registry`, the rows of :mod:`.sufficient`); the merged counts fit it
through its public :meth:`~.models.ClickModel.from_counts`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ClickModelError
from ..io.log_columns import arrow_frame
from ._deps import require_clicks
from .log import ClickColumns, ClickLog
from .models import ClickModel, EMSettings
from .registry import ENTRIES, ClickModelEntry, find

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
else:
    from ._deps import pa, pl

#: The models with statistics: every click model.
MODELS = tuple(e.name for e in ENTRIES)


def statistics_schema() -> pa.Schema:
    """The Arrow schema :func:`session_statistics` yields (one for every model; unused columns null)."""
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


def _check_model(model: str) -> ClickModelEntry:
    found = find(model)
    if found is None:
        raise ClickModelError(f"statistics are for the click models {MODELS}, got {model!r}")
    return found


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
    require_clicks("session_statistics")
    found = _check_model(model)
    frames = [arrow_frame(b, "session_statistics") for b in batches]
    frames = [f for f in frames if f.height]
    if not frames:
        return
    log = ClickLog(pl.concat(frames, how="vertical_relaxed"), columns=columns, position_base=position_base)
    s = log.sessions()
    queries, docs = s.pair_names()
    out = found.statistics.rows(found.model, s, np.asarray(queries, dtype=object), np.asarray(docs, dtype=object))
    yield from out.to_arrow().cast(statistics_schema()).to_batches()


def fit_statistics(model: str, tables: Iterable[Any], **options: Any) -> ClickModel:
    """Merge the statistics ``tables`` (Arrow tables or batches, any number of partitions) and fit ``model``.

    :param options: ``max_iter``, ``tol``, ``accelerate`` (:class:`~.models.EMSettings`).
    :returns: the fitted model; its ``params()`` and ``labels()`` are keyed by the statistics' (query, doc).
    """
    require_clicks("fit_statistics")
    found = _check_model(model)
    settings = EMSettings(**options)  # checked before the tables are read
    parts = [arrow_frame(t, "fit_statistics") for t in tables]
    if not parts or not sum(p.height for p in parts):
        raise ClickModelError(f"{model}: no statistics to fit on")
    pairs, counts = found.statistics.merge(pl.concat(parts, how="vertical_relaxed"))
    return found.model.from_counts(pairs, counts, **settings.options())


__all__ = ["MODELS", "fit_statistics", "session_statistics", "statistics_schema"]
