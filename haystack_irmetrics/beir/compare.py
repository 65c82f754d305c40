"""Compare two runs on the same qrels: BEIR's numbers side by side (``irmetrics compare``)."""

from __future__ import annotations

import json
import math
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


def is_suite(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder written by ``irmetrics beir --output`` (it holds ``leaderboard.json``)."""
    return (Path(path) / "leaderboard.json").is_file()


@dataclass(frozen=True)
class SuiteComparison:
    """Two suites compared dataset by dataset (:func:`compare_suites`).

    :ivar names: the two suites' labels.
    :ivar results: ``{dataset: CompareResult}`` for the datasets both suites ran, in the first suite's order.
    :ivar groups: ``{row: [datasets]}`` of rows that average sub-datasets (cqadupstack).
    :ivar notes: datasets only one suite ran, and the comparisons' own notes.
    """

    names: tuple[str, str]
    results: dict[str, CompareResult]
    groups: dict[str, list[str]] = field(default_factory=dict)
    notes: tuple[str, ...] = field(default=())

    def measures(self) -> list[str]:
        first = next(iter(self.results.values()), None)
        return list(first.a.means) if first is not None else []

    def _rows(self) -> dict[str, list[CompareResult]]:
        member_of = {d: g for g, ds in self.groups.items() for d in ds}
        rows: dict[str, list[CompareResult]] = {}
        for name, result in self.results.items():
            rows.setdefault(member_of.get(name, name), []).append(result)
        return rows

    def average(self) -> dict[str, tuple[float, float]]:
        """``{measure: (A, B)}``: the mean over the leaderboard rows (a group is the mean of its members)."""
        rows = self._rows()
        out = {}
        for m in self.measures():
            pairs = [
                (math.fsum(r.a.raw_means[m] for r in rs) / len(rs), math.fsum(r.b.raw_means[m] for r in rs) / len(rs))
                for rs in rows.values()
            ]
            out[m] = (
                round(math.fsum(a for a, _ in pairs) / len(pairs), 5),
                round(math.fsum(b for _, b in pairs) / len(pairs), 5),
            )
        return out

    def markdown(self) -> str:
        """One table: a row per dataset and measure (with the paired test when computed), then the averages."""
        a, b = self.names
        lines = [
            f"| dataset | measure | {a} | {b} | {b} − {a} | paired Δ [CI] | p (t) | p (rand.) |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for dataset, result in self.results.items():
            tested = {c.metric: c for c in result.stats}
            for m, va, vb, d in result.rows():
                c = tested.get(m)
                stats = (
                    f"{c.delta:+.5f}{c.marker()} [{c.ci_low:+.4f}, {c.ci_high:+.4f}] | {format_p(c.p_t_holm)} | "
                    f"{format_p(c.p_randomization_holm)}"
                    if c is not None
                    else "— | — | —"
                )
                lines.append(f"| {dataset} | {m} | {va:.5f} | {vb:.5f} | {d:+.5f} | {stats} |")
        for m, (va, vb) in self.average().items():
            lines.append(f"| **average** | {m} | {va:.5f} | {vb:.5f} | {vb - va:+.5f} | — | — | — |")
        lines.append("")
        lines.append(
            "Each dataset's runs evaluated on its qrels; p-values Holm-adjusted over the measures of that dataset; "
            f"the average is over {len(self._rows())} rows (a group of sub-datasets, cqadupstack, counts as one row)."
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "suites": list(self.names),
            "datasets": {name: result.to_dict() for name, result in self.results.items()},
            "average": {m: {self.names[0]: va, self.names[1]: vb} for m, (va, vb) in self.average().items()},
            "groups": self.groups,
            "notes": list(self.notes),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)


#: The measures a suite comparison shows unless told otherwise (those of the leaderboard).
SUITE_MEASURES = ("NDCG@10", "Recall@100")


def compare_suites(
    suite_a: str | os.PathLike[str],
    suite_b: str | os.PathLike[str],
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    *,
    measures: Sequence[str] | None = None,
    names: tuple[str, str] | None = None,
    **options: Any,
) -> SuiteComparison:
    """Compare two folders written by ``irmetrics beir --output``, dataset by dataset.

    Each dataset both suites ran is compared with :func:`compare_runs` on its ``run.trec`` files and
    the qrels named by its ``summary.json`` (``dataset_path``, ``split``).

    :param measures: default ``NDCG@10`` and ``Recall@100``.
    :param names: labels (default: the folder names).
    :param options: :func:`compare_runs`'s ``preset``, ``significance``, ``n_resamples``, ``seed``, ``confidence``.
    :raises DatasetError: when a dataset's qrels file is not where either summary says.
    """
    from ..errors import DatasetError

    folders = (Path(suite_a), Path(suite_b))
    if names is None:
        names = (folders[0].name, folders[1].name)
        if names[0] == names[1]:
            names = (f"A:{names[0]}", f"B:{names[1]}")
    order_a, groups = _suite_datasets(folders[0])
    order_b, _ = _suite_datasets(folders[1])
    common = [d for d in order_a if d in set(order_b)]
    notes = [
        f"{len(only)} datasets only in {label}: {', '.join(only)}"
        for label, only in (
            (names[0], [d for d in order_a if d not in set(order_b)]),
            (names[1], [d for d in order_b if d not in set(order_a)]),
        )
        if only
    ]
    results: dict[str, CompareResult] = {}
    for dataset in common:
        candidates = []
        for folder in folders:
            summary = json.loads((folder / dataset / "summary.json").read_text(encoding="utf-8"))
            if summary.get("dataset_path"):
                candidates.append(Path(summary["dataset_path"]) / "qrels" / f"{summary.get('split', 'test')}.tsv")
        qrels = next((p for p in candidates if p.is_file()), None)
        if qrels is None:
            raise DatasetError(
                f"the qrels of {dataset} are not where the suites' summary.json say ({', '.join(map(str, candidates))})"
            )
        result = compare_runs(
            folders[0] / dataset,
            folders[1] / dataset,
            qrels,
            k_values,
            measures=list(measures or SUITE_MEASURES),
            names=tuple(names),
            **options,
        )
        results[dataset] = result
        notes += [f"{dataset}: {note}" for note in result.notes]
    kept = {g: [d for d in ds if d in results] for g, ds in groups.items()}
    return SuiteComparison(tuple(names), results, {g: ds for g, ds in kept.items() if ds}, tuple(notes))


def _suite_datasets(folder: Path) -> tuple[list[str], dict[str, list[str]]]:
    board = json.loads((folder / "leaderboard.json").read_text(encoding="utf-8"))
    order: list[str] = []
    groups: dict[str, list[str]] = {}
    for row in board.get("datasets", {}):
        members = board.get("groups", {}).get(row)
        if members:
            groups[row] = [f"{row}/{m}" for m in members]
            order += groups[row]
        else:
            order.append(row)
    return order, groups


__all__ = ["SUITE_MEASURES", "CompareResult", "SuiteComparison", "compare_runs", "compare_suites", "is_suite"]
