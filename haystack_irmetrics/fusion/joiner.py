"""The Haystack ``DocumentJoiner`` that reproduces a fusion inside a pipeline, where a join mode can.

What Haystack's joiner computes (haystack-ai 2.x/3.x, ``DocumentJoiner`` and
``haystack.utils.misc._reciprocal_rank_fusion``), against ranx's methods:

* ``reciprocal_rank_fusion``: ``score = 61 * sum_i w_i / (61 + rank0_i)`` with weights normalised to sum 1
  (default equal): for equal weights that is ``61 / n`` times ranx's RRF with k = 60 (``1 / (60 + rank1)``),
  the same ranking. Haystack's constant is fixed (61 on 0-based ranks), so only k = 60 is reproduced; its
  weights have no ranx counterpart, so only equal weights are written.
* ``merge``: ``score = sum_i w_i * score_i`` over the lists that hold the document, weights normalised to sum
  1: ranx's ``wsum`` (and ``sum``, equal weights) divided by the weights' sum, the same ranking, but on the
  retrievers' raw scores. Haystack does not normalise per query, so only ``norm=None`` is reproduced.
* ``concatenate``: each document's highest score: ranx's ``max`` with ``norm=None``.

Both rank ties by first appearance over the lists (a stable sort), as :func:`~.api.fuse` does when the
lists come in the runs' order. Nothing else maps (min-max or z-score normalisation, ``distribution_based_rank_fusion``
is no ranx method): :func:`joiner_parameters` raises :class:`~haystack_irmetrics.errors.FusionError` saying why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import FusionError
from .registry import JOIN_MODES, METHODS, norm_name

#: The component type a pipeline YAML names.
JOINER_TYPE = "haystack.components.joiners.document_joiner.DocumentJoiner"


def joiner_parameters(
    method: str,
    *,
    norm: str | None = None,
    weights: Sequence[float] | None = None,
    params: Mapping[str, Any] | None = None,
    n_runs: int = 2,
    top_k: int | None = None,
) -> dict[str, Any]:
    """The ``DocumentJoiner`` init parameters that reproduce ranx's ``method`` (with ``norm``, ``weights``,
    ``params``) over ``n_runs`` retrievers, connected to the joiner in the runs' order: the method's
    :class:`~.registry.JoinMode`.

    :raises FusionError: when no join mode reproduces it (the message says which mode comes closest and why not).

    Usage::

        >>> from haystack_irmetrics.fusion import joiner_parameters
        >>> joiner_parameters("rrf", params={"k": 60})
        {'join_mode': 'reciprocal_rank_fusion', 'weights': None, 'top_k': None, 'sort_by_score': True}
        >>> joiner_parameters("wsum", norm=None, weights=[0.3, 0.7])
        {'join_mode': 'merge', 'weights': [0.3, 0.7], 'top_k': None, 'sort_by_score': True}
    """
    norm = norm_name(norm)
    params = dict(params or {})
    entry = METHODS.get(method)
    mode = entry.joiner if entry is not None else None
    if mode is None:
        *others, last = [f"{name} ({what})" for name, what in JOIN_MODES.items()]
        raise FusionError(
            f"no DocumentJoiner join mode reproduces {method}: Haystack has {', '.join(others)} and {last}"
        )
    for key, fixed in mode.fixed.items():
        given = params.get(key, fixed)
        if given != fixed:
            raise FusionError(
                f"{mode.why}; {key}={given} cannot be reproduced: tune with the grid [{fixed}] or use irmetrics fuse's run"
            )
    if mode.raw_scores and norm is not None:
        raise FusionError(
            f"Haystack's DocumentJoiner fuses the retrievers' raw scores; {method} after the {norm!r} "
            "normalisation cannot be reproduced (fuse with norm=None, --norm none, to get a joiner)"
        )
    base = {"join_mode": mode.join_mode, "weights": None, "top_k": top_k, "sort_by_score": True}
    if not mode.weights:
        return base
    if weights is None:
        weights = [1.0 / n_runs] * n_runs
    weights = [float(w) for w in weights]
    if any(w < 0 for w in weights) or sum(weights) <= 0:
        raise FusionError(f"Haystack's {mode.join_mode} takes non-negative weights with a positive sum, got {weights}")
    return {**base, "weights": weights}


def joiner_component(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The component as a pipeline YAML holds it: ``{"type": ..., "init_parameters": ...}``."""
    return {"type": JOINER_TYPE, "init_parameters": dict(parameters)}


def joiner_yaml(parameters: Mapping[str, Any]) -> str:
    """The component's YAML (PyYAML, which Haystack installs)."""
    import yaml

    return yaml.safe_dump(joiner_component(parameters), sort_keys=False)
