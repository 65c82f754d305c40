"""Compare runs on the same qrels: BEIR's numbers side by side, each run against a baseline (``irmetrics compare``).

Two suites written by ``irmetrics beir --output`` are compared dataset by dataset in :mod:`.suites`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._extras import require
from .._settings import settings_of
from ..core import DEFAULT_K_VALUES, EvaluationResult, Qrels, Run, evaluate
from ..core.measures import FAMILIES, parse_measure, resolve_measures
from ..core.subtopics import SubtopicQrels
from ..errors import InvalidArgumentError, InvalidPolicyError
from ..io.beir_outputs import read_run_dataset, shared_qrels
from ..io.run_names import run_names
from ..io.tables import json_text, markdown_cell, plural
from ..stats import Comparison, compare_with_baseline
from ..stats.compare import format_p
from ..stats.power import ALPHA, POWER, min_detectable_delta
from ..stats.significance import check_confidence, check_resamples, check_seed

RunSource = str | os.PathLike[str] | Mapping[str, Mapping[str, float]] | Run
QrelsSource = str | os.PathLike[str] | Mapping[str, Mapping[str, float]] | Qrels

# Keys of each measure's JSON object besides the two runs' labels.
_RESERVED = frozenset({"delta", "paired"})


@dataclass(frozen=True)
class CompareResult:
    """Two evaluations of runs on the same qrels.

    :ivar names: the two runs' labels (the baseline first).
    :ivar a: evaluation of the first run (``preset="beir"`` unless told otherwise).
    :ivar b: evaluation of the second run.
    :ivar notes: differences in the queries the two runs answered, and which means cover different
        queries because of them.
    :ivar stats: B against A for each measure at least two queries pair for, in the evaluation's order
        (:func:`~haystack_irmetrics.stats.compare_paired`: ``delta`` = B − A, its percentile bootstrap
        interval, two-sided paired t-test and randomization p-values; ``*_holm`` adjusted over every
        test of the comparison, :attr:`tests`). A measure pairs the queries either run is scored on for it (``n``); a query
        one run did not answer takes the measure's value for a missing query (0; GMAP's 1e-5) for that run. A
        geometric mean (GMAP) is compared on the log of its per-query values (:attr:`log_scale`).
    :ivar log_scale: the measures whose ``stats`` are of log values (``delta``: the log of the ratio).
    :ivar confidence: the level of the bootstrap intervals.
    :ivar tests: how many tests Holm's correction ran over: the measures tested here, or, when several
        runs are compared with one baseline (:func:`compare_many`), every run's (runs × measures).
    :ivar detectable: ``{measure: difference}`` of each tested measure: the smallest paired difference a
        two-sided paired t-test at :data:`~haystack_irmetrics.stats.power.ALPHA` detects with power
        :data:`~haystack_irmetrics.stats.power.POWER` over its ``n`` queries, given the variance of the per-query
        differences (Sakai's topic set size design, :func:`~haystack_irmetrics.stats.power.min_detectable_delta`);
        ``None`` where the differences do not vary.
    """

    names: tuple[str, str]
    a: EvaluationResult
    b: EvaluationResult
    notes: tuple[str, ...] = field(default=())
    stats: tuple[Comparison, ...] = field(default=())
    log_scale: frozenset[str] = field(default=frozenset())
    confidence: float = 0.95
    tests: int = 0
    detectable: Mapping[str, float | None] = field(default_factory=dict)

    def rows(self) -> list[tuple[str, float, float, float]]:
        """``(measure, value A, value B, B - A)`` for each measure, in the evaluation's order."""
        return [
            (name, self.a.means[name], self.b.means[name], round(self.b.means[name] - self.a.means[name], 5))
            for name in self.a.means
        ]

    def table(self) -> list[str]:
        """The markdown table's lines: one row per measure, the two runs and their difference as columns (and,
        with :attr:`stats`, the paired difference, its interval and Holm-adjusted p-values)."""
        a, b = (markdown_cell(n) for n in self.names)  # run names: from file names or [NAME=]
        if not self.stats:
            lines = [f"| measure | {a} | {b} | {b} − {a} |", "|---|---:|---:|---:|"]
            return lines + [f"| {m} | {va:.5f} | {vb:.5f} | {d:+.5f} |" for m, va, vb, d in self.rows()]
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
        return lines

    def footnote(self, family: str | None = None) -> str:
        """What the table's paired columns mean (``""`` without :attr:`stats`); ``family`` says what Holm's
        correction ran over (default: the measures tested) and makes the note speak of every run's table."""
        if not self.stats:
            return ""
        a, b = self.names if family is None else ("baseline", "run")
        logged = sorted(self.log_scale & {c.metric for c in self.stats})
        return (
            "Paired per measure over the queries either run is scored on for it; a query one run did not answer "
            "counts for that run as an unanswered query does (0; GMAP's floor 1e-5), so paired Δ differs from "
            f"{b} − {a} only where the two means cover different queries or a mean is not the average of its "
            "per-query values (a note names those)"
            + (f"; {', '.join(logged)}: mean log difference (log of the ratio)" if logged else "")
            + f". p-values two-sided, Holm-adjusted over the {family or plural(len(self.stats), 'measure') + ' tested'}; "
            "`*` p < 0.05, `**` p < 0.01 (randomization)."
        )

    def detectable_line(self) -> str:
        """The line under the table that says :attr:`detectable` (``""`` without it)."""
        if not self.detectable:
            return ""
        shown = ", ".join(f"{m} {'—' if d is None else f'{d:.4f}'}" for m, d in self.detectable.items())
        return (
            f"Smallest paired Δ detectable (paired t-test at α {ALPHA:g}, power {POWER:g}, over the same queries; "
            f"Sakai's topic set size design, `irmetrics power`): {shown}."
        )

    def markdown(self) -> str:
        """The markdown table (:meth:`table`), the smallest difference detectable per measure
        (:meth:`detectable_line`) and, with :attr:`stats`, its :meth:`footnote`."""
        note, detectable = self.footnote(), self.detectable_line()
        return "\n".join([*self.table(), *(["", detectable] if detectable else []), *(["", note] if note else [])])

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
                    "min_detectable_delta": self.detectable.get(c.metric),
                }
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json_text(self.to_dict(), indent=indent)


@dataclass(frozen=True)
class RunsComparison:
    """Several runs on the same qrels, each compared with one baseline (:func:`compare_many`).

    :ivar names: every run's label, in the order given.
    :ivar baseline: the label of the run the others are compared with.
    :ivar results: ``{run: CompareResult}``, the baseline against each other run (in order); with
        significance, Holm's correction ran over every run's tests together (runs × measures).
    :ivar notes: the settings' notes (no scipy), then each comparison's own notes (prefixed with the run
        when there are more than two runs).
    """

    names: tuple[str, ...]
    baseline: str
    results: dict[str, CompareResult]
    notes: tuple[str, ...] = field(default=())

    def _family(self) -> str | None:
        tests = sum(len(r.stats) for r in self.results.values())
        if len(self.results) == 1 or not tests:
            return None
        return f"{tests} tests (each of the {len(self.results)} runs against {self.baseline}, per measure)"

    def markdown(self) -> str:
        """Two runs: their table (:meth:`CompareResult.markdown`). More: one block per run against the
        baseline (a line ``RUN against BASELINE:`` and its table), then one footnote."""
        if len(self.results) == 1:
            return next(iter(self.results.values())).markdown()
        lines: list[str] = []
        for name, result in self.results.items():
            lines += [f"{name} against {self.baseline}:", "", *result.table(), ""]
            if result.detectable:
                lines += [result.detectable_line(), ""]
        note = next(iter(self.results.values())).footnote(self._family())
        return "\n".join([*lines, note] if note else lines[:-1])

    def to_dict(self) -> dict[str, Any]:
        """``runs``, ``baseline``, ``comparisons`` (``{run: CompareResult.to_dict()}``), ``notes``; with
        significance, ``tests`` (how many tests Holm's correction ran over)."""
        out: dict[str, Any] = {
            "runs": list(self.names),
            "baseline": self.baseline,
            "comparisons": {name: result.to_dict() for name, result in self.results.items()},
            "notes": list(self.notes),
        }
        tests = sum(len(r.stats) for r in self.results.values())
        if tests:
            out["tests"] = tests
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json_text(self.to_dict(), indent=indent)


@dataclass(frozen=True)
class CompareSettings:
    """How :func:`compare_runs` and :func:`compare_many` evaluate and test (each field is their keyword of the same
    name): the measures (default BEIR's six), the preset, whether to test (``None``: when scipy is installed) and
    the tests' resamples, seed and interval level.

    :raises InvalidArgumentError: ``significance`` not True, False or None.
    :raises StatsInputError: ``n_resamples``, ``seed`` or ``confidence`` the tests could not take (checked
        whether or not they run, so a setting is refused the same way on a machine without scipy).
    """

    measures: Sequence[str] | None = None
    preset: str = "beir"
    significance: bool | None = None
    n_resamples: int = 10_000
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.significance is not None and not isinstance(self.significance, bool):
            raise InvalidArgumentError(f"significance must be True, False or None, got {self.significance!r}")
        check_resamples(self.n_resamples)
        check_seed(self.seed)
        check_confidence(self.confidence)


def compare_runs(
    run_a: RunSource,
    run_b: RunSource,
    qrels: QrelsSource | None = None,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    *,
    names: tuple[str, str] | None = None,
    settings: CompareSettings | None = None,
    **options: Any,
) -> CompareResult:
    """Evaluate two runs against the same qrels (:func:`compare_many` with two runs, ``run_a`` the baseline).

    :param run_a: a TREC run file, a folder written by ``irmetrics beir --output`` (its ``run.trec``),
        or a ``{qid: {doc_id: score}}`` dict.
    :param run_b: the same for the second run.
    :param qrels: a qrels file (TREC or BEIR TSV) or dict; ``None``: the qrels of the dataset the run
        folders' ``summary.json`` name (see :func:`compare_many`).
    :param k_values: cutoffs.
    :param names: labels for the two runs (default: as :func:`~haystack_irmetrics.io.run_names.run_names` names
        paths, ``bm25.trec`` as ``bm25``; else ``A`` and ``B``).
    :param settings: the fields below as one value (:class:`CompareSettings`); ``options`` are its fields as
        keywords, each in place of the settings' own.
    :returns: a :class:`CompareResult`.

    The keywords (``options``), the fields of :class:`CompareSettings`:

    * ``measures``: families or names (default: BEIR's six).
    * ``preset``: ``"beir"`` or ``"trec"``.
    * ``significance``: also test B against A per measure (:attr:`CompareResult.stats`), with
      ``n_resamples`` sign patterns and bootstrap resamples, ``seed`` and ``confidence``. ``None``
      (default): when scipy is installed (the ``stats`` extra), else a note says why not; ``True``:
      scipy is required (:class:`~haystack_irmetrics.errors.MissingDependencyError` without it).
    """
    settings = settings_of(CompareSettings, options, "compare_runs", base=settings)
    compared = compare_many([run_a, run_b], qrels, k_values, names=names, settings=settings)
    return next(iter(compared.results.values()))


def compare_many(
    runs: Sequence[RunSource],
    qrels: QrelsSource | None = None,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    *,
    names: Sequence[str] | None = None,
    baseline: str | None = None,
    settings: CompareSettings | None = None,
    **options: Any,
) -> RunsComparison:
    """Evaluate two or more runs against the same qrels and compare each with the baseline.

    :param runs: TREC run files, folders written by ``irmetrics beir --output`` (their ``run.trec``) or
        ``{qid: {doc_id: score}}`` dicts; at least two.
    :param qrels: a qrels file (TREC or BEIR TSV) or dict. ``None``: the qrels of the dataset the run
        folders' ``summary.json`` name (``dataset_path``, ``split``), as ``irmetrics report`` finds them;
        folders made from different datasets (another split, or files whose recorded SHA-256 differ) raise
        :class:`~haystack_irmetrics.errors.DatasetError`, and so does a qrels file changed since the runs.
    :param names: one label per run (default: as :func:`~haystack_irmetrics.io.run_names.run_names` names
        paths, a file less its run extensions, with as many parent folders as tell them apart; else ``A``,
        ``B``, ...).
    :param baseline: the label of the run the others are compared with (default: the first).
    :param settings: the fields below as one value (:class:`CompareSettings`); ``options`` are its fields as
        keywords, each in place of the settings' own.
    :returns: a :class:`RunsComparison`.

    The keywords (``options``), the fields of :class:`CompareSettings`:

    * ``measures``: families or names (default: BEIR's six).
    * ``preset``: ``"beir"`` or ``"trec"``.
    * ``significance``: as :func:`compare_runs`; the p-values are Holm-adjusted over every run's tests
      together (runs × measures).
    * ``n_resamples``: sign patterns and bootstrap resamples.
    * ``seed``: seed of the resamples.
    * ``confidence``: the level of the bootstrap intervals.
    """
    s = settings_of(CompareSettings, options, "compare_many", base=settings)
    loaded, labels, base = _runs_and_labels(runs, names, baseline)
    q = _qrels_of(qrels, runs, s.measures, k_values)
    significance, notes = _significance(s.significance)
    evaluations = [evaluate(q, run, k_values, measures=s.measures, preset=s.preset) for run in loaded]
    at = labels.index(base)
    measures = list(evaluations[at].means)
    log_scale = frozenset(m for m in measures if FAMILIES[parse_measure(m).family].aggregate == "geometric")
    compared = _tested(evaluations, labels, base, measures, log_scale, s) if significance else None
    judged = _judged(q)
    pairs = {}
    for i, label in enumerate(labels):
        if i != at:
            stats = list(compared.comparisons.get(label, {}).values()) if compared is not None else []
            pair_notes = _notes((base, label), loaded[at], loaded[i], judged, evaluations[at], evaluations[i])
            if compared is not None:
                pair_notes += _untested(measures, stats)
            pairs[label] = (i, pair_notes, stats, log_scale if compared is not None else frozenset())
    return _comparison(labels, base, evaluations, pairs, notes, float(s.confidence))


def _runs_and_labels(
    runs: Sequence[RunSource], names: Sequence[str] | None, baseline: str | None
) -> tuple[list[Any], list[str], str]:
    """Each run loaded, its label and the baseline's label."""
    from ..io import read_run

    if isinstance(runs, str | os.PathLike | Mapping) or not isinstance(runs, Sequence):
        raise InvalidArgumentError(f"runs must be a list of runs, got {type(runs).__name__}")
    if len(runs) < 2:
        raise InvalidArgumentError(f"compare needs at least two runs, got {len(runs)}")
    loaded = [_load_run(source, read_run) for source in runs]
    labels = _labels(list(runs), names)
    base = labels[0] if baseline is None else baseline
    if base not in labels:
        raise InvalidArgumentError(f"the baseline {base!r} is not one of the runs {labels}")
    return loaded, labels, base


def _qrels_of(
    qrels: QrelsSource | None, runs: Sequence[RunSource], measures: Sequence[str] | None, k_values: Sequence[int]
) -> Any:
    """The qrels given, read if a path (as subtopics for a diversity measure), else those of the run folders."""
    from ..io import read_qrels, read_subtopic_qrels

    if qrels is None:
        # Only now: with qrels given, a folder's summary.json is not read at all.
        folders = [Path(r) for r in runs if isinstance(r, str | os.PathLike) and Path(r).is_dir()]
        datasets = [ds for ds in map(read_run_dataset, folders) if ds is not None]
        if not datasets:
            raise InvalidArgumentError(
                "no qrels: give --qrels (qrels=), or folders written by 'irmetrics beir --output' whose summary.json "
                "names their dataset"
            )
        qrels = shared_qrels(datasets)
    if isinstance(qrels, str | os.PathLike):  # a diversity measure reads the second column as the subtopic
        diverse = any(m.spec.needs_subtopics for m in resolve_measures(measures, k_values))
        return read_subtopic_qrels(qrels) if diverse else read_qrels(qrels)
    return qrels


def _significance(wanted: bool | None) -> tuple[bool, list[str]]:
    """Whether the runs are tested, and the note that says why not when scipy's absence decided it."""
    if wanted is None:
        if _scipy_installed():
            return True, []
        return False, [
            "no significance tests: scipy is not installed (pip install 'haystack-irmetrics[stats]'; "
            "--no-stats leaves them out without this note)"
        ]
    if wanted:
        require("scipy", purpose="significance tests of compare")
    return wanted, []


def _tested(
    evaluations: list[EvaluationResult],
    labels: list[str],
    base: str,
    measures: list[str],
    log_scale: frozenset[str],
    s: CompareSettings,
) -> Any:
    """Every run against the baseline, per measure, Holm's family being runs × measures."""
    return compare_with_baseline(
        {label: evaluations[i].per_query for i, label in enumerate(labels)},
        base,
        measures=measures,
        holm_scope="all",  # the family is runs × measures
        fill={m: FAMILIES[parse_measure(m).family].missing_value for m in measures},
        log=log_scale,
        n_resamples=s.n_resamples,
        seed=s.seed,
        confidence=s.confidence,
    )


def _untested(measures: list[str], stats: list[Comparison]) -> list[str]:
    """The note naming the measures too few queries pair for to be tested, if any."""
    if len(stats) >= len(measures):
        return []
    tested = {c.metric for c in stats}
    untested = [m for m in measures if m not in tested]
    return [f"no significance tests for {', '.join(untested)}: fewer than two queries pair for them"]


def _comparison(
    labels: list[str],
    base: str,
    evaluations: list[EvaluationResult],
    pairs: dict[str, tuple[int, list[str], list[Comparison], frozenset[str]]],
    notes: list[str],
    confidence: float,
) -> RunsComparison:
    """The comparison of each pair ``{label: (index, notes, stats, log scale)}`` with the baseline; the settings'
    ``notes`` go with the one pair's, or ahead of every pair's, prefixed with its run."""
    at = labels.index(base)
    tests = sum(len(stats) for _, _, stats, _ in pairs.values())
    results = {}
    for label, (i, pair_notes, stats, log_scale) in pairs.items():
        results[label] = CompareResult(
            names=(base, label),
            a=evaluations[at],
            b=evaluations[i],
            notes=tuple(pair_notes + notes) if len(pairs) == 1 else tuple(pair_notes),
            stats=tuple(stats),
            log_scale=log_scale,
            confidence=confidence,
            tests=tests,
            detectable=_detectable(evaluations[at], evaluations[i], stats),
        )
    if len(pairs) == 1:
        all_notes = next(iter(results.values())).notes
    else:
        all_notes = tuple(notes + [f"{label} against {base}: {n}" for label, r in results.items() for n in r.notes])
    return RunsComparison(tuple(labels), base, results, all_notes)


def _detectable(base: EvaluationResult, run: EvaluationResult, stats: Sequence[Comparison]) -> dict[str, float | None]:
    """Each tested measure's smallest detectable paired difference (:attr:`CompareResult.detectable`), from its
    per-query values paired as the tests pair them (:func:`paired_rows`; ``irmetrics power`` pairs them alike)."""
    out: dict[str, float | None] = {}
    for c in stats:
        x, y = paired_rows({"run": run.per_query[c.metric], "base": base.per_query[c.metric]}, c.metric)
        variance = float(np.var(x - y, ddof=1))
        out[c.metric] = min_detectable_delta(len(x), variance) if variance > 0 else None
    return out


def paired_rows(per_query: Mapping[str, Mapping[str, float]], measure: str) -> np.ndarray:
    """A runs x queries array of ``measure``'s per-query values, paired as ``irmetrics compare``'s tests and
    ``irmetrics power`` pair them: over the queries any run is scored on (sorted), a query a run did not answer
    at the measure's value for it (0; GMAP's floor 1e-5, as ``trec_eval -c``), on the log scale for a geometric
    mean (GMAP).

    Usage::

        >>> paired_rows({"a": {"q1": 0.5, "q2": 1.0}, "b": {"q2": 0.25}}, "NDCG@10")
        array([[0.5 , 1.  ],
               [0.  , 0.25]])
    """
    family = FAMILIES[parse_measure(measure).family]
    runs = list(per_query.values())
    queries = sorted(set().union(*runs))
    rows = np.array([[r.get(q, family.missing_value) for q in queries] for r in runs], dtype=np.float64)
    rows = rows.reshape(len(runs), len(queries))
    return np.log(rows) if family.aggregate == "geometric" else rows


def _judged_only(n: int) -> str:
    return f"{plural(n, 'judged query', 'judged queries')} {'is' if n == 1 else 'are'} answered"


def _labels(sources: list[RunSource], names: Sequence[str] | None) -> list[str]:
    """Each run's label: ``names``, else the name :func:`~haystack_irmetrics.io.run_names.run_names` gives it
    (``bm25/scifact``, ``dense/scifact``), else a letter (``A``); a letter prefix where labels clash (``A:run``)."""
    if names is not None:
        labels = [names] if isinstance(names, str) else list(names)
        if len(labels) != len(sources) or len(set(labels)) != len(labels) or _RESERVED & set(labels):
            n = "two" if len(sources) == 2 else str(len(sources))
            raise InvalidPolicyError(
                f"the {n} runs need {n} different labels, none of them 'delta' or 'paired' (the JSON keys each "
                f"measure by both labels, 'delta' and 'paired'), got {labels}"
            )
        if not all(isinstance(label, str) and label for label in labels):
            raise InvalidPolicyError(f"every label must be a non-empty string, got {labels}")
        return labels
    named = run_names(sources)  # every command's rule (io/run_names.py); None: not a path
    labels = [_letter(i) if n is None else n for i, n in enumerate(named)]
    if len(set(labels)) != len(labels) or _RESERVED & set(labels):
        # The same file twice, or a label the JSON needs for itself: prefix each with its position.
        labels = [label if n is None else f"{_letter(i)}:{label}" for i, (label, n) in enumerate(zip(labels, named))]
    return labels


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"#{i + 1}"


def _load_run(source: RunSource, read_run) -> Any:
    """The run of a file, of an ``irmetrics beir --output`` folder (its ``run.trec``), or the object itself."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if (path / "leaderboard.json").is_file():
            raise InvalidArgumentError(
                f"{path} is a suite folder (it holds leaderboard.json): compare two suites with compare_suites, or "
                "give its dataset folders OUTPUT/NAME as runs"
            )
        return read_run(path / "run.trec" if path.is_dir() else path)
    return source


def _scipy_installed() -> bool:
    try:
        import scipy.stats  # noqa: F401
    except ImportError:
        return False
    return True


def _answered(run: Any) -> set[str]:
    """Query ids with at least one document, for a dict, a Run or a columnar run from the readers."""
    if isinstance(run, Mapping):
        return {q for q, docs in run.items() if len(docs)}
    qids, offsets = getattr(run, "qids", None), getattr(run, "offsets", None)
    if qids is not None and offsets is not None:
        return {q for q, n in zip(qids, np.diff(offsets).tolist(), strict=True) if n}
    return {q for q, docs in run.data.items() if len(docs)}


def _judged(qrels: Any) -> set[str]:
    q = qrels.topical if isinstance(qrels, SubtopicQrels) else Qrels.from_dict(qrels)
    return {qid for qid in q.qids if q.judged(qid)}


def _notes(
    names: tuple[str, str], a: Any, b: Any, judged: set[str], ev_a: EvaluationResult, ev_b: EvaluationResult
) -> list[str]:
    qa, qb = _answered(a) & judged, _answered(b) & judged
    notes = []
    if qa - qb:
        notes.append(f"{_judged_only(len(qa - qb))} by {names[0]} only, e.g. {sorted(qa - qb)[:5]}")
    if qb - qa:
        notes.append(f"{_judged_only(len(qb - qa))} by {names[1]} only, e.g. {sorted(qb - qa)[:5]}")
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


__all__ = ["CompareResult", "CompareSettings", "RunsComparison", "compare_many", "compare_runs", "paired_rows"]
