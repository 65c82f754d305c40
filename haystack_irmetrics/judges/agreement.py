"""How far a model judge agrees with people: on the pairs both labelled (Cohen's kappa at the relevance
threshold, weighted kappa over the grades, Krippendorff's alpha, the confusion matrix) and on what the labels
are for (the order of systems scored with the human qrels alone and with the holes filled: Kendall's tau,
tau_AP, and which pairs of systems swap); and the seeded, grade-stratified sample of human-labelled pairs the
judge is asked about.

Usage::

    >>> a = label_agreement([0, 1, 2, 3, 1, 0], [0, 1, 3, 3, 0, 0], threshold=1)
    >>> round(a["kappa"], 4), round(a["weighted_kappa"], 4), round(a["alpha"], 4)
    (0.6667, 0.8868, 0.8579)
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from ..checks import whole
from ..errors import JudgeError
from ..stats.significance import seed_value


def sample_labelled(qrels: Mapping[str, Mapping[str, int]], n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` human-labelled ``(query id, doc id)`` pairs drawn without replacement, stratified by grade: each
    grade gets its share of ``n`` (largest remainders; at least one when ``n`` allows), seeded.

    :raises JudgeError: ``n`` below 1.
    :raises InvalidSeedError: ``seed`` is not a whole number from 0 to 2**32 - 1.
    """
    whole(n, "the agreement sample (pairs)", least=1, error=JudgeError)
    strata: dict[int, list[tuple[str, str]]] = {}
    for qid, docs in qrels.items():
        for doc, label in docs.items():
            strata.setdefault(int(label), []).append((qid, doc))
    total = sum(len(v) for v in strata.values())
    if n >= total:
        return [pair for grade in sorted(strata) for pair in strata[grade]]
    grades = sorted(strata)
    exact = {g: n * len(strata[g]) / total for g in grades}
    take = {g: min(len(strata[g]), int(exact[g])) for g in grades}
    if n >= len(grades):
        for g in grades:
            take[g] = max(take[g], 1)
    order = sorted(grades, key=lambda g: (-(exact[g] - int(exact[g])), g))
    while sum(take.values()) < n:
        for g in order:
            if sum(take.values()) < n and take[g] < len(strata[g]):
                take[g] += 1
    while sum(take.values()) > n:
        g = max(grades, key=lambda g: (take[g] - exact[g], g))
        take[g] -= 1
    rng = random.Random(seed_value(seed))
    return [pair for g in grades for pair in rng.sample(strata[g], take[g])]


def _kappa(a: np.ndarray, b: np.ndarray, classes: np.ndarray, weights: str | None) -> float:
    """Cohen's kappa of two label arrays over ``classes`` (as scikit-learn's ``cohen_kappa_score``)."""
    index = {c: i for i, c in enumerate(classes.tolist())}
    m = len(classes)
    confusion = np.zeros((m, m), dtype=np.float64)
    for x, y in zip(a.tolist(), b.tolist()):
        confusion[index[x], index[y]] += 1
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    if weights is None:
        w = 1.0 - np.eye(m)
    else:
        diff = np.abs(np.subtract.outer(np.arange(m), np.arange(m))).astype(np.float64)
        w = diff if weights == "linear" else diff**2
    denominator = float((w * expected).sum())
    return float("nan") if denominator == 0 else 1.0 - float((w * confusion).sum()) / denominator


def krippendorff_alpha(a: Sequence[int], b: Sequence[int], level: str = "ordinal") -> float:
    """Krippendorff's alpha of two coders who both labelled every unit (``level``: ``"nominal"``,
    ``"ordinal"`` or ``"interval"``), from the coincidence matrix over the values that occur."""
    values = sorted(set(a) | set(b))
    index = {v: i for i, v in enumerate(values)}
    m = len(values)
    o = np.zeros((m, m), dtype=np.float64)
    for x, y in zip(a, b):
        o[index[x], index[y]] += 1
        o[index[y], index[x]] += 1
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        d = 1.0 - np.eye(m)
    elif level == "interval":
        v = np.asarray(values, dtype=np.float64)
        d = np.subtract.outer(v, v) ** 2
    elif level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        d = np.zeros((m, m))
        for i in range(m):
            for j in range(m):
                lo, hi = min(i, j), max(i, j)
                d[i, j] = (cum[hi + 1] - cum[lo] - (n_c[i] + n_c[j]) / 2) ** 2
    else:
        raise JudgeError(f"unknown level of measurement {level!r}: nominal, ordinal or interval")
    expected = float((np.outer(n_c, n_c) * d).sum())
    if expected == 0:
        return float("nan")
    return 1.0 - float(n - 1) * float((o * d).sum()) / expected


@dataclass(frozen=True)
class LabelAgreement:
    """The agreement of two labellings of the same pairs (:func:`label_agreement`): ``pairs``; ``threshold``;
    ``kappa`` (Cohen's, on relevant = label >= ``threshold``); ``weighted_kappa`` (quadratic weights over the
    grades) and ``weighted_kappa_linear``; ``alpha`` (Krippendorff's, ordinal); ``exact`` (share of equal labels);
    ``confusion`` (``{human: {model: count}}``); ``grades`` (the range of grades seen); ``undefined``: why each
    figure that is ``None`` is (the labels leave chance agreement at 1, e.g. one grade everywhere). A figure is
    also read by its name (``a["kappa"]``), as the dict this once was."""

    pairs: int
    threshold: int
    kappa: float | None
    weighted_kappa: float | None
    weighted_kappa_linear: float | None
    alpha: float | None
    exact: float
    confusion: dict[str, dict[str, int]]
    grades: list[int]
    undefined: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        if name not in {f.name for f in fields(self)}:
            raise KeyError(name)
        return getattr(self, name)

    def to_dict(self) -> dict[str, Any]:
        """As JSON holds it (``agreement.json``'s ``labels``)."""
        return asdict(self)


def label_agreement(human: Sequence[int], model: Sequence[int], threshold: int = 1) -> LabelAgreement:
    """The agreement of two labellings of the same pairs (:class:`LabelAgreement`).

    :raises JudgeError: no pair, or lengths that differ.
    """
    if len(human) != len(model):
        raise JudgeError(f"{len(human)} human labels but {len(model)} model labels")
    if not human:
        raise JudgeError("no pair has both a human and a model label: agreement cannot be measured")
    a, b = np.asarray(human, dtype=np.int64), np.asarray(model, dtype=np.int64)
    grades = np.arange(min(a.min(), b.min()), max(a.max(), b.max()) + 1)
    binary = np.array([0, 1])
    confusion: dict[str, dict[str, int]] = {}
    for x, y in zip(a.tolist(), b.tolist()):
        row = confusion.setdefault(str(x), {})
        row[str(y)] = row.get(str(y), 0) + 1
    out: dict[str, Any] = {
        "pairs": len(a),
        "threshold": threshold,
        "kappa": _kappa((a >= threshold).astype(np.int64), (b >= threshold).astype(np.int64), binary, None),
        "weighted_kappa": _kappa(a, b, np.unique(np.concatenate([a, b])), "quadratic"),
        "weighted_kappa_linear": _kappa(a, b, np.unique(np.concatenate([a, b])), "linear"),
        "alpha": krippendorff_alpha(a.tolist(), b.tolist(), "ordinal"),
        "exact": float((a == b).mean()),
        "confusion": {h: dict(sorted(row.items())) for h, row in sorted(confusion.items())},
        "grades": grades.tolist(),
    }
    # A figure chance cannot be told from (one label everywhere: expected agreement 1) is None, with why.
    undefined = {}
    if out["kappa"] != out["kappa"]:
        undefined["kappa"] = f"every label on one side of the threshold {threshold}: agreement by chance is 1"
    for key in ("weighted_kappa", "weighted_kappa_linear", "alpha"):
        if out[key] != out[key]:
            undefined[key] = "one grade only, on both sides: agreement by chance is 1"
    for key in undefined:
        out[key] = None
    return LabelAgreement(**out, undefined=undefined)


def system_agreement(human: Mapping[str, float], filled: Mapping[str, float]) -> dict[str, Any]:
    """The order of systems by their score with the human qrels alone (``human``) and with the holes filled
    (``filled``): Kendall's tau-b (scipy), tau_AP (Yilmaz et al. 2008, the human order as the truth) and the
    pairs of systems whose order differs (a tie on one side and not the other counts)."""
    from ..stats.correlation import system_correlation, tau_ap

    names = list(human)
    swaps = []
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            before = np.sign(human[x] - human[y])
            after = np.sign(filled[x] - filled[y])
            if before != after:
                swaps.append([x, y] if before > 0 else [y, x])
    out: dict[str, Any] = {"systems": len(names), "tau": None, "tau_ap": None, "swaps": swaps}
    if len(names) >= 2:
        out["tau"] = system_correlation(human, filled, "kendall").statistic
        out["tau_ap"] = tau_ap(human, filled)
    return out


__all__ = ["LabelAgreement", "krippendorff_alpha", "label_agreement", "sample_labelled", "system_agreement"]
