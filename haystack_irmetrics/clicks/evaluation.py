"""A click model's evaluation and outputs: held-out log-likelihood and perplexity, click-derived qrels.

As Chuklin, Markov & de Rijke (2015, section 4.2) evaluate click models:

* **log-likelihood**: the mean over sessions of log P(the session's clicks), each click's probability
  taken given the clicks above it (natural logarithm; 0 is a perfect model);
* **perplexity at rank r**: 2 ** -(the mean over sessions shown rank r of log2 P(the click or skip at r)),
  each probability taken without the other clicks; **perplexity**: the mean of the ranks' perplexities.
  1 is a perfect model, 2 a coin toss.

Probabilities are kept in [FLOOR, 1 - FLOOR] before their logarithm (:data:`.models.FLOOR`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..checks import whole
from ..errors import ClickModelError
from ..stats.significance import seed_value
from .log import Sessions
from .models import FLOOR, ClickModel, no_qrels_message
from .registry import MODELS, entry


def make_model(name: str, **options: Any) -> ClickModel:
    """A new, unfitted model by name (:data:`~.registry.MODELS`, any case; ``ctr`` and ``dctr`` are the same:
    per document); ``options``: ``max_iter``, ``tol``, ``accelerate``.

    :raises ClickModelError: an unknown name.
    """
    return entry(name).make(**options)


@dataclass(frozen=True)
class HeldOut:
    """A model's score on sessions: ``log_likelihood`` (mean per session), ``perplexity`` and by rank."""

    sessions: int
    log_likelihood: float
    perplexity: float
    perplexity_at: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "log_likelihood": self.log_likelihood,
            "perplexity": self.perplexity,
            "perplexity_at": dict(self.perplexity_at),
        }


def _clip(p: np.ndarray) -> np.ndarray:
    return np.clip(p, FLOOR, 1.0 - FLOOR)


def log_likelihood(model: ClickModel, sessions: Sessions) -> float:
    """Mean over ``sessions`` of the natural log of their clicks' probability under ``model``."""
    cond, _ = model.probabilities(sessions)
    p = _clip(np.where(sessions.clicks, cond, 1.0 - cond))
    return float(np.where(sessions.shown, np.log(p), 0.0).sum() / sessions.n_sessions)


def score(model: ClickModel, sessions: Sessions) -> HeldOut:
    """Log-likelihood and perplexity (overall and per rank) of ``model`` on ``sessions`` (its pair table)."""
    if sessions.n_sessions == 0:
        raise ClickModelError(f"{model.name}: no session to test on")
    cond, full = model.probabilities(sessions)
    ll = np.where(sessions.shown, np.log(_clip(np.where(sessions.clicks, cond, 1.0 - cond))), 0.0)
    bits = np.where(sessions.shown, np.log2(_clip(np.where(sessions.clicks, full, 1.0 - full))), 0.0)
    shown = sessions.shown.sum(axis=0)
    at = {str(r + 1): float(2.0 ** (-bits[:, r].sum() / shown[r])) for r in range(sessions.n_ranks) if shown[r]}
    return HeldOut(
        sessions=sessions.n_sessions,
        log_likelihood=float(ll.sum() / sessions.n_sessions),
        perplexity=float(np.mean(list(at.values()))),
        perplexity_at=at,
    )


@dataclass(frozen=True)
class ClickFit:
    """A fitted model with its training log-likelihood and, when sessions were held out, its test score."""

    model: ClickModel
    train: Sessions
    train_log_likelihood: float
    test: HeldOut | None

    def to_dict(self) -> dict[str, Any]:
        """``model.json``: ``{"model", "em", "params", "train": {"sessions", "log_likelihood"}, "test"}``, where
        ``em`` says how the fit ended (:meth:`ClickModel.convergence`: ``converged``, ``iterations``, ``change``)."""
        return {
            "model": self.model.name,
            "em": self.model.convergence(),
            "params": self.model.params(),
            "train": {"sessions": self.train.n_sessions, "log_likelihood": self.train_log_likelihood},
            "test": None if self.test is None else self.test.to_dict(),
        }

    def qrels(self, min_impressions: int = 1) -> dict[str, dict[str, float]]:
        """Click-derived qrels: ``{query: {doc: label in [0, 1]}}`` of pairs shown ``min_impressions`` times."""
        return {q: {d: label for d, (label, _) in docs.items()} for q, docs in self.judgments(min_impressions).items()}

    def judgments(self, min_impressions: int = 1) -> dict[str, dict[str, tuple[float, int]]]:
        """``{query: {doc: (label, impressions)}}``: the model's label and the training sessions behind it."""
        whole(min_impressions, "min_impressions", least=1, error=ClickModelError)
        if not self.model.per_document:  # one rule for every model whose label is the same for every pair
            raise ClickModelError(no_qrels_message(self.model.name))
        labels = np.clip(self.model.labels(), 0.0, 1.0)
        imp = np.bincount(self.train.pairs[self.train.shown], minlength=self.train.n_pairs)
        queries, docs = self.train.pair_names()
        out: dict[str, dict[str, tuple[float, int]]] = {}
        for q, d, label, n in zip(queries, docs, labels.tolist(), imp.tolist(), strict=True):
            if n >= min_impressions:
                out.setdefault(q, {})[d] = (label, n)
        return out

    def write(self, folder: str | Path, *, min_impressions: int = 1) -> tuple[Path, Path]:
        """Write ``folder/qrels.tsv`` (BEIR's qrels layout, as ``irmetrics judge`` writes it: the package's qrels
        writer, :func:`~haystack_irmetrics.io.trec.write_qrels`; float labels, queries and documents sorted) and
        ``folder/model.json``, each whole or not at all (the folder created); returns both paths."""
        from ..io.output import write_text
        from ..io.tables import json_text
        from ..io.trec import write_qrels

        out = Path(folder)
        judged = self.qrels(min_impressions)
        qrels = {q: {d: judged[q][d] for d in sorted(judged[q])} for q in sorted(judged)}
        qrels_path = write_qrels(qrels, out / "qrels.tsv", layout="beir")
        return qrels_path, write_text(out / "model.json", json_text(self.to_dict(), indent=2) + "\n")


def _held_out(
    sessions: Sessions, test: Sessions | None, test_fraction: float | None, seed: int
) -> tuple[Sessions, Sessions | None]:
    seed_value(seed)  # checked before any fit, whether or not a fraction is drawn
    if test is not None and test_fraction is not None:
        raise ClickModelError("give test sessions or a test fraction, not both")
    if test_fraction is not None:
        return sessions.split(test_fraction, seed)
    return sessions, test


def fit_model(
    name: str | ClickModel,
    sessions: Sessions,
    *,
    test: Sessions | None = None,
    test_fraction: float | None = None,
    seed: int = 0,
    **options: Any,
) -> ClickFit:
    """Fit a model (by name, :data:`~.registry.MODELS`, or an unfitted :class:`ClickModel`) and score it held out.

    :param test: held-out sessions (another log's, over any pair table: aligned here), or
    :param test_fraction: the share of ``sessions`` held out, drawn with ``seed``.
    :param options: ``max_iter``, ``tol``, ``accelerate`` of the EM (:class:`~.models.ClickModel`).
    """
    model = make_model(name, **options) if isinstance(name, str) else name
    train, held = _held_out(sessions, test, test_fraction, seed)
    model.fit(train)
    result = None
    if held is not None:
        result = score(model, held if held.pair_query is train.pair_query else held.aligned_to(train))
    return ClickFit(model=model, train=train, train_log_likelihood=log_likelihood(model, train), test=result)


def compare_models(
    names: Sequence[str],
    sessions: Sessions,
    *,
    test: Sessions | None = None,
    test_fraction: float | None = 0.2,
    seed: int = 0,
    **options: Any,
) -> dict[str, HeldOut]:
    """Each model fitted on the same training sessions and scored on the same held-out ones: ``{name: HeldOut}``."""
    if not names:
        raise ClickModelError("name at least one model to compare")
    if test is not None:
        test_fraction = None
    train, held = _held_out(sessions, test, test_fraction, seed)
    if held is None:
        raise ClickModelError("comparing models needs held-out sessions: a test log or a test fraction")
    aligned = held if held.pair_query is train.pair_query else held.aligned_to(train)
    out: dict[str, HeldOut] = {}
    for name in names:
        if name in out:
            raise ClickModelError(f"model {name!r} is named twice")
        out[name] = score(make_model(name, **options).fit(train), aligned)
    return out


def comparison_json(scores: Mapping[str, HeldOut]) -> dict[str, Any]:
    """``{"models": {name: {"log_likelihood", "perplexity", "perplexity_at"}}, "test_sessions": n}``."""
    return {
        "models": {
            name: {"log_likelihood": h.log_likelihood, "perplexity": h.perplexity, "perplexity_at": h.perplexity_at}
            for name, h in scores.items()
        },
        "test_sessions": next(iter(scores.values())).sessions if scores else 0,
    }


def comparison_table(scores: Mapping[str, HeldOut]) -> str:
    """A markdown table: model, held-out log-likelihood, perplexity, perplexity at rank 1 and at the last rank."""
    from ..io.tables import markdown_row

    ranks = sorted({int(r) for h in scores.values() for r in h.perplexity_at})
    head = ["model", "log-likelihood", "perplexity", *(f"@{r}" for r in ranks)]
    lines = [markdown_row(head), "|" + "---|" * len(head)]
    for name, h in scores.items():
        cells = [name, f"{h.log_likelihood:.4f}", f"{h.perplexity:.4f}"]
        cells += [f"{h.perplexity_at[str(r)]:.4f}" if str(r) in h.perplexity_at else "" for r in ranks]
        lines.append(markdown_row(cells))
    return "\n".join(lines)


__all__ = [
    "MODELS",
    "ClickFit",
    "HeldOut",
    "compare_models",
    "comparison_json",
    "comparison_table",
    "fit_model",
    "log_likelihood",
    "make_model",
    "score",
]
