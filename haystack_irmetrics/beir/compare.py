"""Compare two runs on the same qrels: BEIR's numbers side by side (``irmetrics compare``)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._extras import require
from ..core import DEFAULT_K_VALUES, EvaluationResult, Qrels, Run, evaluate
from ..core.measures import FAMILIES, parse_measure
from ..errors import InvalidPolicyError
from ..stats import Comparison, compare_paired, holm
from ..stats.compare import format_p
from ..stats.significance import check_bootstrap_size, check_confidence, check_resamples, check_seed

RunSource = str | os.PathLike[str] | Mapping[str, Mapping[str, float]] | Run

# Keys of each measure's JSON object besides the two runs' labels.
_RESERVED = frozenset({"delta", "paired"})


@dataclass(frozen=True)
class CompareResult:
    """Two evaluations of runs on the same qrels.

    :ivar names: the two runs' labels.
    :ivar a: evaluation of the first run (``preset="beir"`` unless told otherwise).
    :ivar b: evaluation of the second run.
    :ivar notes: differences in the queries the two runs answered, and which means cover different
        queries because of them.
    :ivar stats: B against A for each measure at least two queries pair for, in the evaluation's order
        (:func:`~haystack_irmetrics.stats.compare_paired`: ``delta`` = B − A, its percentile bootstrap
        interval, two-sided paired t-test and randomization p-values; ``*_holm`` adjusted over every
        measure tested). A measure pairs the queries either run is scored on for it (``n``); a query
        one run did not answer takes the measure's value for a missing query (0; GMAP's 1e-5) for that run. A
        geometric mean (GMAP) is compared on the log of its per-query values (:attr:`log_scale`).
    :ivar log_scale: the measures whose ``stats`` are of log values (``delta``: the log of the ratio).
    :ivar confidence: the level of the bootstrap intervals.
    """

    names: tuple[str, str]
    a: EvaluationResult
    b: EvaluationResult
    notes: tuple[str, ...] = field(default=())
    stats: tuple[Comparison, ...] = field(default=())
    log_scale: frozenset[str] = field(default=frozenset())
    confidence: float = 0.95

    def rows(self) -> list[tuple[str, float, float, float]]:
        """``(measure, value A, value B, B - A)`` for each measure, in the evaluation's order."""
        return [
            (name, self.a.means[name], self.b.means[name], round(self.b.means[name] - self.a.means[name], 5))
            for name in self.a.means
        ]

    def markdown(self) -> str:
        """A markdown table: one row per measure, the two runs and their difference as columns (and,
        with :attr:`stats`, the paired difference, its interval and Holm-adjusted p-values)."""
        a, b = self.names
        if not self.stats:
            lines = [f"| measure | {a} | {b} | {b} − {a} |", "|---|---:|---:|---:|"]
            lines += [f"| {m} | {va:.5f} | {vb:.5f} | {d:+.5f} |" for m, va, vb, d in self.rows()]
            return "\n".join(lines)
        tested = {c.metric: c for c in self.stats}
        lines = [
            f"| measure | {a} | {b} | {b} − {a} | paired Δ [{self.confidence * 100:g}% CI] | queries | p (t) "
            "| p (rand.) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for m, va, vb, d in self.rows():
            c = tested.get(m)
            if c is None:
                lines.append(f"| {m} | {va:.5f} | {vb:.5f} | {d:+.5f} | — | — | — | — |")
                continue
            log = "log " if m in self.log_scale else ""
            lines.append(
                f"| {m} | {va:.5f} | {vb:.5f} | {d:+.5f} | {log}{c.delta:+.5f}{c.marker()} [{c.ci_low:+.4f}, "
                f"{c.ci_high:+.4f}] | {c.n:,} | {format_p(c.p_t_holm)} | {format_p(c.p_randomization_holm)} |"
            )
        lines.append("")
        logged = sorted(self.log_scale & tested.keys())
        lines.append(
            "Paired per measure over the queries either run is scored on for it; a query one run did not answer "
            "counts for that run as an unanswered query does (0; GMAP's floor 1e-5), so paired Δ differs from "
            f"{b} − {a} only where the two means cover different queries or a mean is not the average of its "
            "per-query values (a note names those)"
            + (f"; {', '.join(logged)}: mean log difference (log of the ratio)" if logged else "")
            + f". p-values two-sided, Holm-adjusted over the {len(self.stats)} measures tested; `*` p < 0.05, "
            "`**` p < 0.01 (randomization)."
        )
        return "\n".join(lines)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {
            "runs": list(self.names),
            "metrics": {m: {self.names[0]: va, self.names[1]: vb, "delta": d} for m, va, vb, d in self.rows()},
            "notes": list(self.notes),
        }
        if self.stats:
            out["confidence"] = self.confidence
            for c in self.stats:
                out["metrics"][c.metric]["paired"] = {
                    "queries": c.n,
                    "scale": "log" if c.metric in self.log_scale else "linear",
                    "delta": c.delta,
                    "ci": [c.ci_low, c.ci_high],
                    "p_t": c.p_t,
                    "p_randomization": c.p_randomization,
                    "p_t_holm": c.p_t_holm,
                    "p_randomization_holm": c.p_randomization_holm,
                }
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)


def compare_runs(
    run_a: RunSource,
    run_b: RunSource,
    qrels: str | os.PathLike[str] | Mapping[str, Mapping[str, float]] | Qrels,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    *,
    measures: Sequence[str] | None = None,
    names: tuple[str, str] | None = None,
    preset: str = "beir",
    significance: bool | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CompareResult:
    """Evaluate two runs against the same qrels.

    :param run_a: a TREC run file, a folder written by ``irmetrics beir --output`` (its ``run.trec``),
        or a ``{qid: {doc_id: score}}`` dict.
    :param run_b: the same for the second run.
    :param qrels: a qrels file (TREC or BEIR TSV) or dict.
    :param k_values: cutoffs.
    :param measures: families or names (default: BEIR's six).
    :param names: labels for the two runs (default: the file or folder names, else ``A`` and ``B``).
    :param preset: ``"beir"`` or ``"trec"``.
    :param significance: also test B against A per measure (:attr:`CompareResult.stats`), with
        ``n_resamples`` sign patterns and bootstrap resamples, ``seed`` and ``confidence``. ``None``
        (default): when scipy is installed (the ``stats`` extra), else a note says why not; ``True``:
        scipy is required (:class:`~haystack_irmetrics.errors.MissingDependencyError` without it).
    :returns: a :class:`CompareResult`.
    """
    from ..io import read_qrels, read_run

    label_a, loaded_a = _load_run(run_a, "A", read_run)
    label_b, loaded_b = _load_run(run_b, "B", read_run)
    if names is None:
        names = (label_a, label_b) if label_a != label_b else (f"A:{label_a}", f"B:{label_b}")
        if _RESERVED & set(names):  # the JSON keys each measure by both labels, "delta" and "paired"
            names = tuple(f"{side}:{name}" for side, name in zip("AB", names))
    names = tuple(names)
    if len(names) != 2 or len(set(names)) != 2 or _RESERVED & set(names):
        raise InvalidPolicyError(
            f"the two runs need two different labels, neither of them 'delta' or 'paired' (the JSON keys each "
            f"measure by both labels, 'delta' and 'paired'), got {list(names)}"
        )
    q = read_qrels(qrels) if isinstance(qrels, str | os.PathLike) else qrels
    notes: list[str] = []
    if significance is None:
        significance = _scipy_installed()
        if not significance:
            notes.append(
                "no significance tests: scipy is not installed (pip install 'haystack-irmetrics[stats]'; "
                "--no-stats leaves them out without this note)"
            )
    elif significance:
        require("scipy", purpose="significance tests of compare")
    if significance:  # before the evaluations: a bad setting fails fast
        check_resamples(n_resamples)
        check_seed(seed)
        check_confidence(confidence)
    ev_a = evaluate(q, loaded_a, k_values, measures=measures, preset=preset)
    ev_b = evaluate(q, loaded_b, k_values, measures=measures, preset=preset)
    notes = _notes(names, loaded_a, loaded_b, q, ev_a, ev_b) + notes
    stats: list[Comparison] = []
    log_scale: frozenset[str] = frozenset()
    if significance:
        stats, log_scale = _paired_stats(ev_a, ev_b, n_resamples, seed, confidence)
        if len(stats) < len(ev_a.means):
            untested = [m for m in ev_a.means if m not in {c.metric for c in stats}]
            notes.append(f"no significance tests for {', '.join(untested)}: fewer than two queries pair for them")
    return CompareResult(
        names=names,
        a=ev_a,
        b=ev_b,
        notes=tuple(notes),
        stats=tuple(stats),
        log_scale=log_scale,
        confidence=float(confidence),
    )


def _scipy_installed() -> bool:
    try:
        import scipy.stats  # noqa: F401
    except ImportError:
        return False
    return True


def _paired_stats(
    a: EvaluationResult, b: EvaluationResult, n_resamples: int, seed: int, confidence: float
) -> tuple[list[Comparison], frozenset[str]]:
    """B against A for every measure over its own paired queries (see :attr:`CompareResult.stats`).

    Measures pairing the same queries share one call (one set of random draws); Holm then runs over
    every measure tested.
    """
    groups: dict[tuple[str, ...], list[str]] = {}
    for m in a.means:
        queries = sorted(a.per_query[m].keys() | b.per_query[m].keys())
        groups.setdefault(tuple(queries), []).append(m)
    testable = {queries: group for queries, group in groups.items() if len(queries) >= 2}
    for group in testable.values():  # every group's bootstrap fits, before any test runs
        check_bootstrap_size(n_resamples, len(group))
    log_scale = frozenset(m for m in a.means if FAMILIES[parse_measure(m).family].aggregate == "geometric")
    found: dict[str, Comparison] = {}
    for queries, group in testable.items():
        va, vb = ({m: _paired_values(ev, m, queries, m in log_scale) for m in group} for ev in (a, b))
        for c in compare_paired(vb, va, n_resamples=n_resamples, seed=seed, confidence=confidence):
            found[c.metric] = c
    tested = [m for m in a.means if m in found]  # the evaluation's order
    if not tested:
        return [], log_scale
    p_t = holm([found[m].p_t for m in tested])
    p_r = holm([found[m].p_randomization for m in tested])
    stats = [
        replace(found[m], p_t_holm=float(t), p_randomization_holm=float(r))
        for m, t, r in zip(tested, p_t.tolist(), p_r.tolist(), strict=True)
    ]
    return stats, log_scale


def _paired_values(ev: EvaluationResult, measure: str, queries: tuple[str, ...], log: bool) -> np.ndarray:
    """Per-query values of ``measure`` at ``queries``; the measure's missing value where ``ev`` has none."""
    fill = FAMILIES[parse_measure(measure).family].missing_value
    values = ev.per_query[measure]
    out = np.array([values.get(q, fill) for q in queries], dtype=np.float64)
    return np.log(out) if log else out  # a geometric mean's values are >= its floor (> 0)


def _load_run(source: RunSource, default: str, read_run) -> tuple[str, Any]:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.is_dir():
            return path.name, read_run(path / "run.trec")
        return path.name, read_run(path)
    return default, source


def _answered(run: Any) -> set[str]:
    """Query ids with at least one document, for a dict, a Run or a columnar run from the readers."""
    if isinstance(run, Mapping):
        return {q for q, docs in run.items() if len(docs)}
    qids, offsets = getattr(run, "qids", None), getattr(run, "offsets", None)
    if qids is not None and offsets is not None:
        return {q for q, n in zip(qids, np.diff(offsets).tolist(), strict=True) if n}
    return {q for q, docs in run.data.items() if len(docs)}


def _notes(
    names: tuple[str, str], a: Any, b: Any, qrels: Any, ev_a: EvaluationResult, ev_b: EvaluationResult
) -> list[str]:
    q = Qrels.from_dict(qrels)
    judged = {qid for qid in q.qids if q.judged(qid)}
    qa, qb = _answered(a) & judged, _answered(b) & judged
    notes = []
    if qa - qb:
        notes.append(f"{len(qa - qb)} judged queries are answered by {names[0]} only, e.g. {sorted(qa - qb)[:5]}")
    if qb - qa:
        notes.append(f"{len(qb - qa)} judged queries are answered by {names[1]} only, e.g. {sorted(qb - qa)[:5]}")
    # Which means average over different queries (the preset decides which families leave unanswered ones out).
    apart = [m for m in ev_a.means if ev_a.per_query[m].keys() != ev_b.per_query[m].keys()]
    if apart:
        notes.append(
            f"the means of {_listed(apart)} cover different queries for the two runs (each averages its answered ones)"
        )
    # A mean that is not the average of its per-query values: BEIR's Hole sums unjudged queries too but
    # divides by the judged ones.
    uneven = [
        m for m in ev_a.means if any(ev.n_queries[m] != len(ev.per_query[m]) for ev in (ev_a, ev_b)) and m not in apart
    ]
    if uneven:
        notes.append(
            f"the means of {_listed(uneven)} are not the average of their per-query values (BEIR's Hole divides by "
            "the judged queries only), so their paired difference is not the difference of the means"
        )
    return notes


def _listed(names: list[str]) -> str:
    return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")


__all__ = ["CompareResult", "compare_runs"]
