"""Click logs drawn from a click model with known parameters: the check that each model recovers them.

:func:`sessions_from_rankings` turns shown rankings into :class:`~.log.Sessions` (no clicks yet),
:func:`model_with` makes a model with given parameters over their pairs (the parameters its registry entry
lists, :mod:`.registry`), :func:`simulate` draws the clicks (the book's generative models,
:meth:`~.models.ClickModel.simulate`) and :func:`log_rows` writes the result as click-log rows any reader
takes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import ClickModelError
from ..stats.significance import check_seed
from .log import Sessions
from .models import ClickModel
from .registry import entry


def sessions_from_rankings(rankings: Sequence[tuple[str, Sequence[str]]]) -> Sessions:
    """Sessions showing ``rankings`` (``(query, [doc at rank 1, ...])`` each), without clicks."""
    if not rankings:
        raise ClickModelError("no ranking to show")
    pair_code: dict[tuple[str, str], int] = {}
    query_code: dict[str, int] = {}
    doc_code: dict[str, int] = {}
    n_r = max(len(docs) for _, docs in rankings)
    pairs = np.full((len(rankings), n_r), -1, dtype=np.int32)
    for s, (q, docs) in enumerate(rankings):
        query_code.setdefault(q, len(query_code))
        for r, d in enumerate(docs):
            doc_code.setdefault(d, len(doc_code))
            pairs[s, r] = pair_code.setdefault((q, d), len(pair_code))
    keys = list(pair_code)
    return Sessions(
        query=np.array([query_code[q] for q, _ in rankings], dtype=np.int32),
        pairs=pairs,
        clicks=np.zeros(pairs.shape, dtype=bool),
        length=(pairs >= 0).sum(axis=1).astype(np.int32),
        pair_query=np.array([query_code[q] for q, _ in keys], dtype=np.int32),
        pair_doc=np.array([doc_code[d] for _, d in keys], dtype=np.int32),
        query_names=np.array(list(query_code), dtype=object),
        doc_names=np.array(list(doc_code), dtype=object),
        first_row=np.arange(len(rankings), dtype=np.int64) + 1,
    )


def _per_pair(sessions: Sessions, value: Callable[[str, str], float] | float) -> np.ndarray:
    queries, docs = sessions.pair_names()
    if callable(value):
        return np.array([float(value(q, d)) for q, d in zip(queries, docs, strict=True)])
    return np.full(sessions.n_pairs, float(value))


def model_with(
    name: str,
    sessions: Sessions,
    *,
    attractiveness: Callable[[str, str], float] | float | None = None,
    satisfaction: Callable[[str, str], float] | float | None = None,
    examination: Sequence[float] | np.ndarray | None = None,
    continuation: Sequence[float] | float | None = None,
    click_probability: Sequence[float] | float | None = None,
) -> ClickModel:
    """A model of kind ``name`` with the given parameters over ``sessions``' pairs: the ones its registry entry
    lists (:attr:`~.registry.ClickModelEntry.parameters`), each a probability. Attractiveness and satisfaction
    are functions of (query, doc) or constants (0.5 when not given); examination by rank, for UBM a matrix
    ``[rank][previous click rank]``; continuation the DCM's by rank or the DBN's one gamma (1 when not given);
    the CTR baselines' click probability, one or by rank.

    :raises ClickModelError: an unknown model, a parameter it does not have, or one missing or out of range.
    """
    given = {
        "attractiveness": attractiveness,
        "satisfaction": satisfaction,
        "examination": examination,
        "continuation": continuation,
        "click_probability": click_probability,
    }
    return entry(name).with_parameters(sessions, **given)


def simulate(model: ClickModel, sessions: Sessions, seed: int = 0) -> Sessions:
    """``sessions`` with clicks drawn from ``model`` (seeded)."""
    return replace(sessions, clicks=model.simulate(sessions, check_seed(seed)))


def log_rows(sessions: Sessions, *, prefix: str = "s") -> list[dict[str, Any]]:
    """The sessions as click-log rows: ``session``, ``query_id``, ``doc_id``, ``position``, ``click``."""
    queries, docs = sessions.pair_names()
    rows: list[dict[str, Any]] = []
    for s in range(sessions.n_sessions):
        for r in range(int(sessions.length[s])):
            p = int(sessions.pairs[s, r])
            rows.append(
                {
                    "session": f"{prefix}{s}",
                    "query_id": queries[p],
                    "doc_id": docs[p],
                    "position": r + 1,
                    "click": int(sessions.clicks[s, r]),
                }
            )
    return rows


def true_values(sessions: Sessions, value: Callable[[str, str], float]) -> np.ndarray:
    """``value(query, doc)`` for every pair of ``sessions`` (to compare a fitted model with its truth)."""
    return _per_pair(sessions, value)


def table(mapping: Mapping[tuple[str, str], float], default: float) -> Callable[[str, str], float]:
    """A (query, doc) -> value function from a dict, ``default`` for pairs it lacks."""
    return lambda q, d: mapping.get((q, d), default)


__all__ = ["log_rows", "model_with", "sessions_from_rankings", "simulate", "table", "true_values"]
