"""Clicks: judgments from implicit feedback.

A click log (``session``, ``position`` and ``click`` columns besides the query and document, :mod:`.log`) read into
sessions; click models as Chuklin, Markov & de Rijke (2015) define them, fitted on sufficient statistics
(:mod:`.models`, :mod:`.dbn`); their held-out log-likelihood and perplexity and the qrels they derive
(:mod:`.evaluation`; a feedback log votes by those qrels through
:class:`haystack_irmetrics.feedback.JudgedLog`); logs simulated from known parameters (:mod:`.simulate`);
interleaving and its credit (:mod:`.interleaving`).

Usage::

    >>> from haystack_irmetrics.clicks import ClickLog, fit_model
    >>> rows = [
    ...     {"session": f"s{i}", "query_id": "q1", "doc_id": d, "position": r + 1, "click": int(d == "d2")}
    ...     for i in range(4) for r, d in enumerate(["d1", "d2"])
    ... ]
    >>> fit = fit_model("ctr", ClickLog(rows).sessions())
    >>> fit.qrels()
    {'q1': {'d1': 0.0, 'd2': 1.0}}
"""

from __future__ import annotations

from .evaluation import (
    MODELS,
    ClickFit,
    HeldOut,
    compare_models,
    comparison_json,
    comparison_table,
    fit_model,
    make_model,
    score,
)
from .log import CLICK_COLUMNS, ClickColumns, ClickLog, Sessions, click_columns
from .models import ClickModel

__all__ = [
    "CLICK_COLUMNS",
    "MODELS",
    "ClickColumns",
    "ClickFit",
    "ClickLog",
    "ClickModel",
    "HeldOut",
    "Sessions",
    "click_columns",
    "compare_models",
    "comparison_json",
    "comparison_table",
    "fit_model",
    "make_model",
    "score",
]
