"""Clicks: judgments from implicit feedback.

- :mod:`.log`: a click log (``session``, ``position`` and ``click`` columns besides the query and document, read
  by :mod:`haystack_irmetrics.io.logs` given the click roles) into :class:`Sessions`, each session's positions
  checked to run 1..n;
- :mod:`.registry`: the click models as data: each model's class, other names, parameters with their ranges, how
  it is fitted, its qrels label and its sufficient statistics; no other module compares a model's name;
- :mod:`.models`: click models as Chuklin, Markov & de Rijke (2015) define them, fitted on sufficient statistics:
  the base :class:`ClickModel`, the CTR baselines, PBM and UBM;
- :mod:`.cascade`: the cascade family's one recursion, and Cascade, DCM and SDBN in closed form;
- :mod:`.dbn`: the DBN, fitted by EM on distinct sessions' tails;
- :mod:`.em`: the one EM loop of PBM, UBM and the DBN, plain or accelerated by SQUAREM, which says whether the fit
  converged;
- :mod:`.evaluation`: a model's held-out log-likelihood and perplexity, :func:`fit_model`, :func:`compare_models`
  and the click-derived qrels (a feedback log votes by them through
  :class:`haystack_irmetrics.feedback.JudgedLog`);
- :mod:`.simulate`: logs drawn from models with known parameters, to check that each model recovers them;
- :mod:`.statistics`: every model's sufficient statistics made partition by partition (a Spark ``mapInArrow``
  function) and a model fitted from them;
- :mod:`.sufficient`: those statistics as Arrow rows of the kind a model's entry names: made, merged in a fixed
  order, read back into a model's counts;
- :mod:`.counterfactual`: a new ranking's expected clicks estimated from a randomised ranker's log (IPS, SNIPS,
  doubly robust);
- :mod:`.interleaving`: two rankings interleaved (team-draft, balanced, probabilistic), an impression's clicks
  credited to the teams, and team a scored against b;
- :mod:`.windows`: a click measure per time window, each window compared with the previous one;
- :mod:`.jobs`: each job of ``irmetrics clicks`` and ``irmetrics interleave`` as one call, frozen settings in and
  a frozen result out;
- :mod:`._deps`: polars and pyarrow, imported on first use (a missing one names the ``clicks`` extra).

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
