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

from .._lazy import lazy_names

_HOMES = {
    "MODELS": ".evaluation",
    "ClickFit": ".evaluation",
    "HeldOut": ".evaluation",
    "compare_models": ".evaluation",
    "comparison_json": ".evaluation",
    "comparison_table": ".evaluation",
    "fit_model": ".evaluation",
    "make_model": ".evaluation",
    "score": ".evaluation",
    "CLICK_COLUMNS": ".log",
    "ClickColumns": ".log",
    "ClickLog": ".log",
    "Sessions": ".log",
    "click_columns": ".log",
    "ClickModel": ".models",
}
__getattr__, __dir__ = lazy_names(__name__, _HOMES)

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
