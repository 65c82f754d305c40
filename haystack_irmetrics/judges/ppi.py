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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import JudgeError, shorten
from ..stats.ppi import ppi_mean

QrelsDict = Mapping[str, Mapping[str, int]]
RunDict = Mapping[str, Mapping[str, float]]


def per_query(qrels: QrelsDict, run: RunDict, measure: str, preset: Any = "beir") -> dict[str, float]:
    """``{query: value}`` of ``measure`` for the run's queries that ``qrels`` judges."""
    from .. import evaluate

    return dict(evaluate(qrels, run, None, measures=[measure], preset=preset).per_query[measure])


def measure_range(measure: str, difference: bool = False) -> tuple[float, float] | None:
    """The range of ``measure``'s mean, which its intervals are clipped to: [0, 1] for a measure whose per-query
    value is a rate ([-1, 1] for the difference of two runs), else ``None`` (no bound).

        >>> measure_range("NDCG@10"), measure_range("MRR@10", difference=True)
        ((0.0, 1.0), (-1.0, 1.0))
    """
    from ..core.measures import FAMILIES, parse_measure

    if FAMILIES[parse_measure(measure).family].unit != "rate":
        return None
    return (-1.0, 1.0) if difference else (0.0, 1.0)


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

    def interval(f_y, f_hat, bounds) -> dict[str, Any]:
        ys, hats, others = [f_y(q) for q in lab], [f_hat(q) for q in lab], [f_hat(q) for q in unl]
        return ppi_mean(ys, hats, others, alpha=alpha, lam=lam, bounds=bounds).to_dict()

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
        row = interval(lambda q, n=name: y[n][q], lambda q, n=name: yhat[n][q], measure_range(measure))
        row["filled"] = sum(naive[name].values()) / len(naive[name]) if naive[name] else None
        out["runs"][name] = row
    names = list(runs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            row = interval(
                lambda q, a=a, b=b: y[a][q] - y[b][q],
                lambda q, a=a, b=b: yhat[a][q] - yhat[b][q],
                measure_range(measure, difference=True),
            )
            out["differences"][f"{a} - {b}"] = row
    return out


#: The files of an ``irmetrics judge --ppi`` output folder that :func:`judged_ppi` reads.
JUDGED_FILES = ("summary.json", "ppi.json", "judgments.jsonl", "model_qrels.tsv", "qrels.tsv")


@dataclass(frozen=True)
class JudgedFolder:
    """What an ``irmetrics judge --ppi`` output folder says about its judging, read and checked by
    :func:`read_judged`: the depth judged (``summary.json``), the interval level and the labelled queries
    (``ppi.json``) and the pairs the judge was asked about (``judgments.jsonl``)."""

    path: Path
    depth: int
    alpha: float
    labelled: frozenset[str]
    judged: frozenset[tuple[str, str]]
    #: The human qrels the folder was judged against, as ``summary.json`` records them (``path``, ``sha256``), or
    #: ``None`` (a folder of an older version).
    qrels: dict[str, str] | None = None


def file_record(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{"path": absolute path, "sha256": of its bytes}`` of a file."""
    import hashlib

    full = Path(path).resolve()
    digest = hashlib.sha256()
    with open(full, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"path": str(full), "sha256": digest.hexdigest()}


def recorded_qrels(folder: JudgedFolder, given: str | os.PathLike[str] | None = None) -> Path:
    """The human qrels ``folder`` was judged against: the file its ``summary.json`` records, still there and
    unchanged (its SHA-256). With ``given``, the qrels a command was given: a warning
    (:class:`~haystack_irmetrics.errors.SuspiciousInputWarning`) when they are another file than the record.

    :raises JudgeError: ``given`` is None and the folder records no qrels, or its file is gone or has changed.
    """
    import warnings

    from ..errors import SuspiciousInputWarning

    summary = folder.path / JUDGED_FILES[0]
    if given is not None:
        if folder.qrels is not None and file_record(given)["sha256"] != folder.qrels["sha256"]:
            warnings.warn(
                f"{folder.path} was judged against the qrels {folder.qrels['path']}, not {given} (another file): "
                "'human' is scored on the qrels given",
                SuspiciousInputWarning,
                stacklevel=2,
            )
        return Path(given)
    if folder.qrels is None:
        raise JudgeError(
            f"{summary} records no qrels (a folder of an older irmetrics judge): give the human qrels it was judged "
            "against (--qrels)"
        )
    path = Path(folder.qrels["path"])
    if not path.is_file():
        raise JudgeError(f"the qrels {summary} records, {path}, are gone: give the human qrels (--qrels)")
    if file_record(path)["sha256"] != folder.qrels["sha256"]:
        raise JudgeError(
            f"the qrels {summary} records, {path}, changed since the folder was judged: give the human qrels (--qrels)"
        )
    return path


def _key(data: dict[str, Any], key: str, path: Path, ok: bool, expected: str) -> Any:
    """``data[key]``, or a :class:`JudgeError` naming the file and the key when it is missing or not ``ok``."""
    if key not in data:
        raise JudgeError(f"{path}: the key {key!r} is missing (a damaged folder of irmetrics judge --ppi?)")
    if not ok:
        raise JudgeError(f"{path}: {key!r} must be {expected}, got {shorten(repr(data[key]))}")
    return data[key]


def read_judged(folder: str | os.PathLike[str]) -> JudgedFolder:
    """The judging an ``irmetrics judge --ppi`` output ``folder`` records, every value checked: ``depth`` a whole
    number of at least 1, ``alpha`` a number in (0, 1), ``labelled`` a list of query ids, each judgment a JSON
    object with a string ``query_id`` and ``doc_id``. The one reader of that folder.

    :raises JudgeError: a file the folder lacks, or a key missing or of the wrong type (naming the file and the key).
    :raises ParseError: a file that is not JSON (JSONL), naming the file (and the line).
    """
    from ..io.beir_data import read_jsonl
    from ..io.beir_outputs import read_json_object

    base = Path(folder)
    for name in JUDGED_FILES[:3]:
        if not (base / name).is_file():
            raise JudgeError(f"{base} holds no {name}: judge with irmetrics judge ... --ppi -o {base}")
    summary_path, ppi_path, judgments_path = (base / name for name in JUDGED_FILES[:3])
    summary = read_json_object(summary_path, "summary")
    depth = summary.get("depth")
    _key(summary, "depth", summary_path, _whole(depth) and depth >= 1, "a whole number of at least 1")
    report = read_json_object(ppi_path, "object")
    alpha = report.get("alpha")
    number = isinstance(alpha, int | float) and not isinstance(alpha, bool)
    _key(report, "alpha", ppi_path, number and 0 < alpha < 1, "a number between 0 and 1")
    labelled = report.get("labelled")
    listed = isinstance(labelled, list) and all(isinstance(q, str) for q in labelled)
    _key(report, "labelled", ppi_path, listed, "a list of query ids (strings)")
    judged = set()
    for line, row in read_jsonl(judgments_path):
        pair = row.get("query_id"), row.get("doc_id")
        for key, value in zip(("query_id", "doc_id"), pair):
            if not isinstance(value, str):
                raise JudgeError(f"{judgments_path}:{line}: {key!r} must be a string, got {shorten(repr(value))}")
        judged.add(pair)
    qrels = summary.get("qrels")
    recorded = isinstance(qrels, dict) and all(isinstance(qrels.get(k), str) for k in ("path", "sha256"))
    if qrels is not None:
        _key(summary, "qrels", summary_path, recorded, "an object with the strings path and sha256")
    return JudgedFolder(base, depth, float(alpha), frozenset(labelled), frozenset(judged), qrels if recorded else None)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def judged_ppi(
    run: RunDict, human: QrelsDict, folder: str | os.PathLike[str], measures: Sequence[str], preset: Any = "beir"
) -> dict:
    """Each measure's value of ``run`` with the human qrels, with the filled qrels of ``irmetrics judge --ppi``'s
    output ``folder``, and its prediction-powered estimate and interval (the folder's labelled queries and
    alpha). Each value has its own queries: ``human`` and ``filled`` are the means over the queries each qrels
    gives a value for (``human_queries``, ``filled_queries``), the estimate is of the mean over the queries with a
    pool (``n`` labelled + ``N`` others); the interval of a rate is clipped to [0, 1] (:func:`measure_range`).

    :raises JudgeError: the folder was not written with ``--ppi`` or is damaged (:func:`read_judged`), or the
        run's top k holds pairs the judge was not asked about (it was not among the judged runs).
    """
    from ..io import read_qrels
    from .pool import pooled_pairs

    found = read_judged(folder)
    base, depth = found.path, found.depth
    missing = [
        p for p in pooled_pairs({"run": run}, depth) if p not in found.judged and p[1] not in human.get(p[0], {})
    ]
    if missing:
        raise JudgeError(
            f"the run's top {depth} holds {len(missing)} pairs the judge of {base} was not asked about (e.g. query "
            f"{missing[0][0]!r}, document {missing[0][1]!r}): judge it with the other runs first"
        )
    model = read_qrels(base / "model_qrels.tsv").data
    filled = read_qrels(base / "qrels.tsv").data
    labelled = found.labelled
    out = {}
    for measure in measures:
        y, yhat, naive = (per_query(q, run, measure, preset) for q in (human, model, filled))
        lab = [q for q in yhat if q in labelled and q in y]
        unl = [q for q in yhat if q not in labelled]
        if len(lab) < 2 or len(unl) < 2:
            raise JudgeError(f"{measure}: {len(lab)} labelled and {len(unl)} unlabelled queries; PPI needs two of each")
        ys, hats, others = [y[q] for q in lab], [yhat[q] for q in lab], [yhat[q] for q in unl]
        r = ppi_mean(ys, hats, others, alpha=found.alpha, bounds=measure_range(measure))
        out[measure] = {
            "human": sum(y.values()) / len(y) if y else None,
            "filled": sum(naive.values()) / len(naive) if naive else None,
            "human_queries": len(y),  # each column's own denominator: the tables say it
            "filled_queries": len(naive),
            **r.to_dict(),
        }
    return out


__all__ = ["JUDGED_FILES", "JudgedFolder", "judged_ppi", "measure_range", "per_query", "ppi_report", "read_judged"]
