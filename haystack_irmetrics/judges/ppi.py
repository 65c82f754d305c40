"""Intervals that say how far to trust a model judge: prediction-powered inference
(:func:`haystack_irmetrics.stats.ppi.ppi_mean`) of each run's mean measure and of the difference between two
runs, with queries as the items.

The labelled set is the queries whose pool (every run's top k) people judged in full: there ``Y`` is the
measure with the human qrels. ``Yhat`` is the measure with the model's labels for every pool pair and no human
label, on every query; the model judges the human-judged pool pairs too, so that ``Yhat`` is the same function
of the query on both sets. PPI's guarantee needs the labelled queries to be a random sample of
all queries: people judged a random subset of the queries in full (TREC-style pooling of a sample of topics).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import JudgeError
from ..stats.ppi import ppi_mean

QrelsDict = Mapping[str, Mapping[str, int]]
RunDict = Mapping[str, Mapping[str, float]]


def per_query(qrels: QrelsDict, run: RunDict, measure: str, preset: Any = "beir") -> dict[str, float]:
    """``{query: value}`` of ``measure`` for the run's queries that ``qrels`` judges."""
    from .. import evaluate

    return dict(evaluate(qrels, run, None, measures=[measure], preset=preset).per_query[measure])


def ppi_report(
    runs: Mapping[str, RunDict],
    human: QrelsDict,
    model: QrelsDict,
    filled: QrelsDict,
    labelled: Sequence[str],
    measure: str,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
) -> dict[str, Any]:
    """Each run's PPI estimate and interval of ``measure``'s mean, beside the naive value with the filled qrels,
    and the same for the difference of each pair of runs.

    :param human: the human qrels (``Y`` on the ``labelled`` queries).
    :param model: the model's labels for every pool pair (``Yhat``).
    :param filled: the human qrels with the holes filled by the model (the naive value).
    :param labelled: the queries whose pool people judged in full.
    :raises JudgeError: fewer than two labelled or unlabelled queries.
    """
    yhat = {name: per_query(model, run, measure) for name, run in runs.items()}
    y = {name: per_query(human, run, measure) for name, run in runs.items()}
    naive = {name: per_query(filled, run, measure) for name, run in runs.items()}
    queries = sorted(set.intersection(*(set(v) for v in yhat.values()))) if yhat else []
    chosen = set(labelled)
    lab = [q for q in queries if q in chosen and all(q in y[name] for name in runs)]
    unl = [q for q in queries if q not in chosen]
    if len(lab) < 2 or len(unl) < 2:
        raise JudgeError(
            f"prediction-powered intervals need at least two queries whose pool people judged in full and two "
            f"others; there are {len(lab)} and {len(unl)}"
        )

    def interval(f_y, f_hat) -> dict[str, Any]:
        r = ppi_mean([f_y(q) for q in lab], [f_hat(q) for q in lab], [f_hat(q) for q in unl], alpha=alpha, lam=lam)
        return r.to_dict()

    out: dict[str, Any] = {
        "measure": measure,
        "alpha": alpha,
        "labelled_queries": len(lab),
        "unlabelled_queries": len(unl),
        "labelled": lab,
        "runs": {},
        "differences": {},
    }
    for name in runs:
        row = interval(lambda q, n=name: y[n][q], lambda q, n=name: yhat[n][q])
        row["filled"] = sum(naive[name].values()) / len(naive[name]) if naive[name] else None
        out["runs"][name] = row
    names = list(runs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            row = interval(lambda q, a=a, b=b: y[a][q] - y[b][q], lambda q, a=a, b=b: yhat[a][q] - yhat[b][q])
            out["differences"][f"{a} - {b}"] = row
    return out


def judged_ppi(
    run: RunDict, human: QrelsDict, folder: str | os.PathLike[str], measures: Sequence[str], preset: Any = "beir"
) -> dict:
    """Each measure's value of ``run`` with the human qrels, with the filled qrels of ``irmetrics judge --ppi``'s
    output ``folder``, and its prediction-powered estimate and interval (the folder's labelled queries and
    alpha).

    :raises JudgeError: the folder was not written with ``--ppi``, or the run's top k holds pairs the judge was
        not asked about (it was not among the judged runs).
    """
    import json

    from ..io import read_qrels
    from .pool import pooled_pairs

    base = Path(folder)
    try:
        report = json.loads((base / "ppi.json").read_text(encoding="utf-8"))
        summary = json.loads((base / "summary.json").read_text(encoding="utf-8"))
        judged = {
            (row["query_id"], row["doc_id"])
            for row in map(json.loads, (base / "judgments.jsonl").read_text(encoding="utf-8").splitlines())
        }
    except FileNotFoundError as e:
        raise JudgeError(
            f"{base} holds no {Path(e.filename).name}: judge with irmetrics judge ... --ppi -o {base}"
        ) from None
    except (ValueError, KeyError, TypeError) as e:
        raise JudgeError(f"{base}: its ppi.json, summary.json or judgments.jsonl is damaged ({e})") from None
    depth = summary["depth"]
    missing = [p for p in pooled_pairs({"run": run}, depth) if p not in judged and p[1] not in human.get(p[0], {})]
    if missing:
        raise JudgeError(
            f"the run's top {depth} holds {len(missing)} pairs the judge of {base} was not asked about (e.g. query "
            f"{missing[0][0]!r}, document {missing[0][1]!r}): judge it with the other runs first"
        )
    model = read_qrels(base / "model_qrels.tsv").data
    filled = read_qrels(base / "qrels.tsv").data
    labelled = set(report["labelled"])
    out = {}
    for measure in measures:
        y, yhat, naive = (per_query(q, run, measure, preset) for q in (human, model, filled))
        lab = [q for q in yhat if q in labelled and q in y]
        unl = [q for q in yhat if q not in labelled]
        if len(lab) < 2 or len(unl) < 2:
            raise JudgeError(f"{measure}: {len(lab)} labelled and {len(unl)} unlabelled queries; PPI needs two of each")
        r = ppi_mean([y[q] for q in lab], [yhat[q] for q in lab], [yhat[q] for q in unl], alpha=report["alpha"])
        out[measure] = {
            "human": sum(y.values()) / len(y) if y else None,
            "filled": sum(naive.values()) / len(naive) if naive else None,
            **r.to_dict(),
        }
    return out


__all__ = ["judged_ppi", "per_query", "ppi_report"]
