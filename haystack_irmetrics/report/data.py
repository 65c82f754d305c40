"""Everything a report shows, collected once: every run evaluated with :func:`~haystack_irmetrics.evaluate`,
each run against the baseline (the :mod:`~haystack_irmetrics.stats` functions, Holm over runs × measures),
win / tie / loss counts, per-query values, and each query's ranked lists with the qrels' judgments.

:func:`build_report` returns a :class:`ReportData`; the page (:mod:`.html`) and the exports
(:mod:`.exports`) render it and compute nothing of their own.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._settings import settings_of
from ..checks import whole
from ..core import DEFAULT_K_VALUES, Evaluation, EvaluationResult, Preset, Qrels, resolve_preset
from ..core.inputs import ArrayRun, as_run
from ..core.measures import FAMILIES, parse_measure, resolve_measures
from ..core.subtopics import SubtopicQrels
from ..errors import InvalidArgumentError, IRMetricsError, NoOverlapError
from ..stats import Comparison, compare_with_baseline, paired_arrays
from ..stats.significance import check_confidence, check_resamples, check_seed
from .sources import Source, beir_files, load_sources, read_documents, read_queries

#: Documents of each run shown per query in the drill-down unless told otherwise.
DEFAULT_DEPTH = 20
#: The judgment of a document the qrels do not judge, as the page's ``data-judgment`` shows it.
UNJUDGED = "unjudged"
#: Relative size below which a per-query difference is a tie (floats carry ~16 digits), as in :mod:`~haystack_irmetrics.stats`.
_ROUNDING = 1e-12


@dataclass(frozen=True)
class ReportData:
    """One report's content (frozen: :func:`build_report` makes it whole).

    :ivar names: the runs' names, in the order given; :ivar baseline: the one the others are compared with.
    :ivar measures: BEIR's names (``NDCG@10``) in the evaluation's order.
    :ivar means: ``{run: {measure: unrounded mean}}`` (``raw_means`` of :func:`~haystack_irmetrics.evaluate`).
    :ivar values: ``{run: {measure: {qid: value}}}``, the per-query values the means average.
    :ivar comparisons: ``{run: {measure: Comparison}}`` of every run but the baseline: ``delta`` = run −
        baseline, bootstrap interval, paired t-test and randomization p-values, ``*_holm`` adjusted over
        every (run, measure) tested. Empty without scipy (a note says so).
    :ivar wtl: ``{run: {measure: (wins, ties, losses)}}`` against the baseline, per query.
    :ivar qids: the queries of the per-query table, in qrels order.
    :ivar lists: ``{run: {qid: [doc, ...]}}``, the top ``depth`` in trec_eval's order; a run given as
        per-query values only has none.
    :ivar missed: ``{qid: [doc, ...]}``: the judged-relevant documents no run retrieved (at any depth).
    :ivar coverage: ``{run: {"Judged@k": mean, "Hole@k": mean}}`` of each run with a ranking, at the report's
        cutoffs (:mod:`.judged`).
    :ivar judged: ``{run: {measure: row}}`` given the folder of ``irmetrics judge --ppi`` (``judged_folder``):
        each measure with the human qrels (``human``), with the filled qrels (``filled``) and its
        prediction-powered ``estimate`` and interval (``low``, ``high``, level ``1 - alpha``).
    :ivar bounds: ``{run: {measure: (low, high)}}`` given a grade (``bounds_grade``): the interval the mean lies
        in once every hole of the top k is judged, each 0 or the grade (:func:`.judged.bounds`).
    """

    names: list[str]
    baseline: str
    measures: list[str]
    means: dict[str, dict[str, float]]
    values: dict[str, dict[str, dict[str, float]]]
    qids: list[str]
    qrels: Mapping[str, Mapping[str, Any]]
    threshold: float
    preset: Preset
    depth: int = DEFAULT_DEPTH
    comparisons: dict[str, dict[str, Comparison]] = field(default_factory=dict)
    wtl: dict[str, dict[str, tuple[int, int, int]]] = field(default_factory=dict)
    log_scale: frozenset[str] = frozenset()
    confidence: float = 0.95
    n_resamples: int = 10_000
    lists: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    missed: dict[str, list[str]] = field(default_factory=dict)
    query_text: dict[str, str] = field(default_factory=dict)
    documents: dict[str, tuple[str, str]] = field(default_factory=dict)
    evaluations: dict[str, EvaluationResult] = field(default_factory=dict)
    runs: dict[str, Any] = field(default_factory=dict, repr=False)
    notes: list[str] = field(default_factory=list)
    coverage: dict[str, dict[str, float]] = field(default_factory=dict)
    judged: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    judged_folder: str | None = None
    bounds: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    bounds_grade: float | None = None
    title: str = "Retrieval evaluation report"

    @property
    def others(self) -> list[str]:
        """Every run but the baseline, in order."""
        return [n for n in self.names if n != self.baseline]

    def best(self, measure: str) -> float:
        """The best mean of ``measure`` over the runs (the lowest where lower is better: Hole, RBP_residual)."""
        values = [self.means[n][measure] for n in self.names if self.means[n][measure] == self.means[n][measure]]
        if not values:
            return float("nan")
        return min(values) if lower_is_better(measure) else max(values)

    def judgment(self, qid: str, doc: str) -> str:
        """The qrels label of ``doc`` for ``qid`` as written (``"2"``, ``"0.5"``), or ``"unjudged"``."""
        label = self.qrels.get(qid, {}).get(doc)
        return UNJUDGED if label is None else label_text(label)


def label_text(label: Any) -> str:
    """A qrels label as its file writes it: an integral value without a decimal point."""
    value = float(label)
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def lower_is_better(measure: str) -> bool:
    """Whether a lower mean of ``measure`` is better (its family says so: Hole, the RBP residual)."""
    spec = family_of(measure)
    return spec is not None and not spec.higher_is_better


def family_of(measure: str) -> Any:
    try:
        return FAMILIES[parse_measure(measure).family]
    except (IRMetricsError, KeyError):
        return None


@dataclass(frozen=True)
class ReportSettings:
    """What :func:`build_report` shows and how it compares, as one value (each field is its keyword of the same
    name; :func:`~haystack_irmetrics.report.write_report` says what each does)."""

    k_values: Sequence[int] | None = DEFAULT_K_VALUES
    measures: Sequence[str] | None = None
    names: Sequence[str] | None = None
    baseline: str | None = None
    preset: str | Preset = "beir"
    queries: str | os.PathLike[str] | Mapping[str, str] | None = None
    corpus: str | os.PathLike[str] | None = None
    docs: str | os.PathLike[str] | None = None
    depth: int = DEFAULT_DEPTH
    significance: bool | None = None
    n_resamples: int = 10_000
    seed: int = 0
    confidence: float = 0.95
    title: str | None = None
    judged: str | os.PathLike[str] | None = None
    bounds: float | None = None

    def __post_init__(self) -> None:
        whole(self.depth, "depth", least=1)
        check_resamples(self.n_resamples)
        check_seed(self.seed)
        check_confidence(self.confidence)


#: The preset's overrides :func:`build_report` takes as keywords beside its settings (:func:`resolve_preset`'s).
PRESET_OVERRIDES = ("ties", "missing_queries", "ignore_identical_ids", "relevance_threshold", "no_relevant")


def _judged_qrels(folder: Any, qrels: Any) -> Any:
    """The human qrels to score a judged folder's "human" on (``folder``: the
    :class:`~haystack_irmetrics.judges.folder.JudgedFolder`, read once): those given (a file other than the
    folder's record warns), else the file its ``summary.json`` records, unchanged, said in a warning. Never the
    qrels of the runs' dataset or of ``--corpus``, which need not be those the folder was judged against."""
    import warnings

    from ..errors import InputChoiceWarning, JudgeError

    judged = folder.path
    if qrels is not None and not isinstance(qrels, str | os.PathLike):
        return qrels
    try:
        path = folder.recorded_qrels(qrels)
    except JudgeError as e:
        raise InvalidArgumentError(f"--judged {judged} (judged=) without --qrels (qrels=): {e}") from None
    if qrels is None:
        warnings.warn(
            f"'human' is scored on the qrels {judged} was judged against, as its summary.json records: {path}",
            InputChoiceWarning,
            stacklevel=3,
        )
    return str(path)


def build_report(
    runs: Mapping[str, Any] | Sequence[Any],
    qrels: str | os.PathLike[str] | Mapping[str, Mapping[str, float]] | Qrels | None = None,
    settings: ReportSettings | None = None,
    *,
    scores: Mapping[str, tuple[Mapping[str, float], Mapping[str, Mapping[str, float]]]] | None = None,
    **options: Any,
) -> ReportData:
    """Evaluate every run and collect what the report shows (see :func:`~haystack_irmetrics.report.write_report`).

    ``settings``: what to show, as one value (:class:`ReportSettings`); ``options`` are its fields as keywords
    (``k_values=[10]``), each in place of the settings' own, and the preset's policy overrides (``ties=``, ...).
    ``scores``: ``{run: (means, per-query values)}`` already computed with this preset and these measures (a
    feedback evaluation's own): those runs are not evaluated again, their ranked lists still shown.
    ``judged``: the output folder of ``irmetrics judge --ppi`` (``qrels``: the human qrels it was judged against;
    without them, the file its ``summary.json`` records, said in an :class:`~haystack_irmetrics.errors.
    InputChoiceWarning`): each run's
    measures with the filled qrels and their prediction-powered estimates and intervals
    (:func:`.judged.judged_rows`). ``bounds``: a grade (> 0): each run's bounds of the measures the summary
    shows by default, the interval the mean lies in once each unjudged document of the top k is judged 0 or
    ``bounds`` (:func:`.judged.bounds`).
    """
    policy = {k: options.pop(k) for k in PRESET_OVERRIDES if k in options}
    settings = settings_of(ReportSettings, options, "build_report", base=settings)
    folder = None
    if settings.judged is not None:
        from ..judges.folder import JudgedFolder

        folder = JudgedFolder.read(settings.judged)  # every file of the folder opened once, for the whole report
        qrels = _judged_qrels(folder, qrels)
    plan = _plan(runs, qrels, settings, policy)
    data = _scored(plan, settings, scores)
    significance = settings.significance
    if significance is None:
        significance = importlib.util.find_spec("scipy") is not None
        if not significance and data.others:
            data.notes.append("no significance tests: scipy is not installed (pip install 'haystack-irmetrics[stats]')")
    if significance and data.others:
        data = replace(data, comparisons=_comparisons(data, settings.n_resamples, settings.seed, settings.confidence))
    lists = {}
    for s in plan.sources:
        if s.scored is None:
            lists[s.name] = ranked_lists(as_run(s.run), data.qids, settings.depth, plan.preset.ignore_identical_ids)
        else:
            data.notes.append(f"{s.name} was given as per-query values: the drill-down has no ranked list for it")
    data = replace(data, lists=lists)
    data = replace(data, **_judgments(data, plan.judgments, folder, settings.bounds, plan.prepared))
    data = replace(data, missed=_missed(data, plan.sources), query_text=_query_text(settings.queries, plan.dataset))
    return replace(data, documents=_documents(data, settings.corpus, settings.docs, plan.dataset))


@dataclass(frozen=True)
class _Plan:
    """What a report is made of, read and checked before anything is computed: the runs (``sources``, their
    names in ``order``; ``base`` the baseline), the preset, the BEIR dataset's files to fall back on, the
    judgments (their topical view; ``subtopics`` where a diversity measure reads them), and each run's
    :class:`~haystack_irmetrics.Evaluation`, filled as the runs are scored (``prepared``: entered once)."""

    sources: list[Source]
    order: list[str]
    base: str
    preset: Preset
    dataset: dict[str, Path]
    judgments: Qrels | None
    subtopics: SubtopicQrels | None
    prepared: dict[str, Evaluation] = field(default_factory=dict)


def _plan(runs: Any, qrels: Any, settings: ReportSettings, policy: Mapping[str, Any]) -> _Plan:
    """The runs read, the baseline and the preset checked, the judgments read (:class:`_Plan`)."""
    sources = load_sources(runs, settings.names)
    order = [s.name for s in sources]
    base = settings.baseline if settings.baseline is not None else order[0]
    if base not in order:
        raise InvalidArgumentError(f"baseline {base!r} is not one of the runs {order}")
    preset = resolve_preset(settings.preset, **{k: v for k, v in policy.items() if v is not None})
    dataset = _dataset_files(sources, settings.corpus)
    all_scored = all(s.scored is not None for s in sources)
    judgments = _qrels(
        qrels, dataset, sources, optional=all_scored, measures=settings.measures, k_values=settings.k_values
    )
    subtopics = judgments if isinstance(judgments, SubtopicQrels) else None
    if subtopics is not None:  # the diversity measures read the subtopics; the page shows the topical labels
        judgments = subtopics.topical
    return _Plan(sources, order, base, preset, dataset, judgments, subtopics)


def _scored(
    plan: _Plan,
    settings: ReportSettings,
    scores: Mapping[str, tuple[Mapping[str, float], Mapping[str, Mapping[str, float]]]] | None,
) -> ReportData:
    """Every run's means and per-query values (evaluated once each, or as given), the measures all runs share,
    the queries, and the wins, ties and losses against the baseline: a :class:`ReportData` to complete."""
    evaluations: dict[str, EvaluationResult] = {}
    values: dict[str, dict[str, dict[str, float]]] = {}
    means: dict[str, dict[str, float]] = {}
    for s in plan.sources:
        if s.scored is None and scores is not None and s.name in scores:
            given_means, given_values = scores[s.name]
            values[s.name] = {m: dict(v) for m, v in given_values.items()}
            means[s.name] = dict(given_means)
        elif s.scored is None:
            ev = _evaluated(plan, s, settings)
            evaluations[s.name] = ev
            values[s.name] = {m: dict(ev.per_query[m].items()) for m in ev.raw_means}
            means[s.name] = dict(ev.raw_means)
        else:
            values[s.name], means[s.name] = s.scored.values, s.scored.means
            scored_qids = {qid for v in s.scored.values.values() for qid in v}
            if plan.judgments is not None and not scored_qids & set(plan.judgments.data):
                raise NoOverlapError(f"run {s.name!r} shares no query with the qrels (e.g. {sorted(scored_qids)[:3]})")
    shown = _shared_measures(plan.order, means)
    means = {n: {m: means[n][m] for m in shown} for n in plan.order}
    values = {n: {m: values[n][m] for m in shown} for n in plan.order}
    scored_any: dict[str, None] = {}
    for n in plan.order:
        for m in shown:
            scored_any.update(dict.fromkeys(values[n][m]))
    if plan.judgments is None:
        qids, qrels_data = list(scored_any), {}
    else:
        qids, qrels_data = [qid for qid in plan.judgments.qids if qid in scored_any], plan.judgments.data
    data = ReportData(
        names=plan.order,
        baseline=plan.base,
        measures=shown,
        means=means,
        values=values,
        qids=qids,
        qrels=qrels_data,
        threshold=float(plan.preset.relevance_threshold),
        preset=plan.preset,
        depth=settings.depth,
        confidence=float(settings.confidence),
        n_resamples=settings.n_resamples,
        evaluations=evaluations,
        runs={s.name: s.run for s in plan.sources if s.scored is None},
        notes=[],
        title=settings.title or f"Retrieval evaluation: {', '.join(plan.order)}",
        log_scale=frozenset(m for m in shown if (f := family_of(m)) is not None and f.aggregate == "geometric"),
    )
    wtl = {n: {m: _win_tie_loss(*paired_values(data, n, m, log=False)) for m in shown} for n in data.others}
    return replace(data, wtl=wtl)


def _evaluated(plan: _Plan, source: Source, settings: ReportSettings) -> EvaluationResult:
    """A ranked run entered once (kept in ``plan.prepared`` for its coverage and bounds) and its measures."""
    try:
        plan.prepared[source.name] = Evaluation(plan.subtopics or plan.judgments, source.run, plan.preset)
        return plan.prepared[source.name].result(settings.measures, settings.k_values)
    except NoOverlapError as e:
        raise NoOverlapError(f"run {source.name!r}: {e}") from None


def _dataset_files(sources: list[Source], corpus: str | os.PathLike[str] | None) -> dict[str, Path]:
    """The BEIR dataset files the report can fall back on: ``corpus`` (a BEIR folder) first, else the
    dataset a BEIR run folder names in its summary (when that folder still exists)."""
    if corpus is not None and Path(corpus).is_dir():
        return beir_files(corpus)
    for s in sources:
        path = s.dataset.get("dataset_path")
        if path and Path(path).is_dir():
            try:
                return beir_files(path, s.dataset.get("split") or "test")
            except InvalidArgumentError:
                continue
    return {}


def _qrels(
    qrels: Any,
    dataset: dict[str, Path],
    sources: list[Source],
    optional: bool,
    measures: Any = None,
    k_values: Any = None,
) -> Qrels | SubtopicQrels | None:
    """The judgments; read as TREC diversity qrels (the second column the subtopic) when a measure needs them."""
    from ..io import read_qrels, read_subtopic_qrels

    if isinstance(qrels, SubtopicQrels):
        return qrels

    if qrels is None:
        if "qrels" not in dataset and optional:  # per-query values only: no drill-down judgments
            return None
        if "qrels" not in dataset:
            raise InvalidArgumentError(
                "no qrels: give --qrels (qrels=), a BEIR folder as --corpus, or a run folder of 'irmetrics beir' "
                f"whose summary names its dataset (runs: {[s.name for s in sources]})"
            )
        qrels = dataset["qrels"]
    if isinstance(qrels, str | os.PathLike):
        if measures is not None and any(m.spec.needs_subtopics for m in resolve_measures(measures, k_values)):
            return read_subtopic_qrels(qrels)
        return read_qrels(qrels)
    return qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)


def _shared_measures(order: list[str], means: dict[str, dict[str, float]]) -> list[str]:
    first = list(means[order[0]])
    shown = [m for m in first if all(m in means[n] for n in order)]
    if not shown:
        raise InvalidArgumentError(
            f"the runs share no measure: {', '.join(f'{n}: {sorted(means[n])[:6]}' for n in order)}"
        )
    return shown


def paired_values(data: ReportData, run: str, measure: str, log: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(run's values, baseline's values)`` over the queries either is scored on for ``measure``; a query
    one of them has no value for takes the measure's value for a missing query (0; GMAP's floor)."""
    _, x, y = paired_arrays(data.values[run][measure], data.values[data.baseline][measure], _fill(measure))
    return (np.log(x), np.log(y)) if log else (x, y)


def _fill(measure: str) -> float:
    family = family_of(measure)
    return family.missing_value if family is not None else 0.0


def _win_tie_loss(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int]:
    d = x - y
    d[np.abs(d) <= _ROUNDING * np.maximum(np.abs(x), np.abs(y))] = 0.0
    return int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())


def _comparisons(data: ReportData, n_resamples: int, seed: int, confidence: float) -> dict[str, dict[str, Comparison]]:
    """Every run but the baseline against it, per measure (:func:`~haystack_irmetrics.stats.compare_with_baseline`);
    Holm over every (run, measure) tested."""
    compared = compare_with_baseline(
        data.values,
        data.baseline,
        measures=data.measures,
        holm_scope="all",
        fill={m: _fill(m) for m in data.measures},
        log=data.log_scale,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
    for run, groups in compared.untested.items():
        data.notes += [
            f"{run}: no significance test for {', '.join(group)} (fewer than two queries)" for group in groups
        ]
    return compared.comparisons


def ranked_lists(run: Any, qids: Sequence[str], depth: int, drop_identical: bool) -> dict[str, list[str]]:
    """The top ``depth`` documents of each of ``qids`` in trec_eval's order (float32 score descending,
    ties by doc id descending: :func:`~haystack_irmetrics.core.ranking.trec_sorted`); only the top of each query
    (and its ties) become Python strings."""
    from ..core.ranking import trec_sorted

    wanted = set(qids)
    keep = depth + 1 if drop_identical else depth
    if isinstance(run, ArrayRun):
        run_qids, offsets, scores, ids_at = run.qids, np.asarray(run.offsets, np.int64), run.scores, run.ids_at
    else:
        run_qids = [qid for qid, docs in run.data.items() if qid in wanted]
        flat = [d for qid in run_qids for d in run.data[qid]]
        sizes = [len(run.data[qid]) for qid in run_qids]
        offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        scores = np.fromiter((v for qid in run_qids for v in run.data[qid].values()), np.float64, count=len(flat))

        def ids_at(rows: np.ndarray) -> list[str]:
            return [flat[i] for i in rows.tolist()]

    sizes = np.diff(offsets)
    mine = np.fromiter((q in wanted for q in run_qids), bool, count=len(run_qids)) & (sizes > 0)
    owner = np.repeat(np.arange(len(run_qids)), sizes)
    rows = np.flatnonzero(mine[owner])
    if not rows.size:
        return {}
    s32 = np.asarray(scores)[rows].astype(np.float32) + np.float32(0)
    owner = owner[rows]
    order = np.lexsort((-s32, owner))  # by query, then score descending
    rows, s32, owner = rows[order], s32[order], owner[order]
    starts = np.searchsorted(owner, owner, side="left")
    ends = np.searchsorted(owner, owner, side="right")
    boundary = s32[np.minimum(starts + keep, ends) - 1]  # the score at the last shown rank: its ties come too
    chosen = (np.arange(rows.size) - starts < keep) | (s32 == boundary)
    rows, s32, owner = rows[chosen], s32[chosen], owner[chosen]
    ids = ids_at(rows)
    out: dict[str, list[str]] = {}
    bounds = np.flatnonzero(np.diff(owner)) + 1
    for a, b in zip([0, *bounds.tolist()], [*bounds.tolist(), rows.size]):
        qid = run_qids[int(owner[a])]
        ranked = trec_sorted(ids[a:b], s32[a:b])  # score, then doc id, descending
        out[qid] = [d for d in ranked if not (drop_identical and d == qid)][:depth]
    return out


def _judgments(
    data: ReportData,
    judgments: Qrels | None,
    folder: Any,
    grade: float | None,
    prepared: Mapping[str, Evaluation],
) -> dict[str, Any]:
    """Each ranked run's Judged@k and Hole@k, given ``folder`` its PPI rows, given ``grade`` its bounds
    (:mod:`.judged`), read from the run's evaluation (``prepared``; a run given with its scores is entered
    here): the fields of :class:`ReportData` they fill."""
    from .judged import bounds, coverage, coverage_ks, entered, judged_rows

    if judgments is None:
        if folder is not None or grade is not None:
            raise InvalidArgumentError("judged= and bounds= need the qrels (qrels=)")
        return {}
    out: dict[str, Any] = {}
    ranked = {n: data.runs[n] for n in data.names if n in data.runs}
    evaluations = entered(judgments, ranked, prepared, data.preset)
    if ranked:
        out["coverage"] = coverage(evaluations, coverage_ks(data.measures))
    if grade is not None:
        out["bounds"] = bounds(evaluations, data.measures, grade)
        out["bounds_grade"] = float(grade)
    if folder is not None:
        if not ranked:
            raise InvalidArgumentError("judged= needs runs with rankings: per-query values have no holes to fill")
        out["judged"] = judged_rows(folder, evaluations, data.measures, data.preset)
        out["judged_folder"] = str(folder.path)
        unranked = [n for n in data.names if n not in ranked]
        data.notes.extend(f"{n} was given as per-query values: no prediction-powered interval" for n in unranked)
    return out


def _relevant(data: ReportData, qid: str) -> list[str]:
    return [d for d, label in data.qrels.get(qid, {}).items() if float(label) >= data.threshold]


def _missed(data: ReportData, sources: list[Source]) -> dict[str, list[str]]:
    """Per query, the judged-relevant documents no run retrieved (at any depth)."""
    relevant = {qid: _relevant(data, qid) for qid in data.qids}
    found: set[tuple[str, str]] = set()
    for s in sources:
        if s.scored is not None:
            continue
        run = as_run(s.run)
        if isinstance(run, ArrayRun):
            candidates = sorted({d for docs in relevant.values() for d in docs})
            if not candidates:
                continue
            rows, which = run.find(candidates)
            owner = np.searchsorted(np.asarray(run.offsets), rows, side="right") - 1
            found.update(zip((run.qids[i] for i in owner.tolist()), (candidates[i] for i in which.tolist())))
        else:
            found.update((qid, d) for qid, docs in relevant.items() for d in docs if d in run.data.get(qid, ()))
    return {qid: [d for d in docs if (qid, d) not in found] for qid, docs in relevant.items()}


def _query_text(queries: Any, dataset: dict[str, Path]) -> dict[str, str]:
    if queries is None:
        queries = dataset.get("queries")
    if queries is None:
        return {}
    if isinstance(queries, Mapping):
        return {str(k): str(v) for k, v in queries.items()}
    return read_queries(queries)


def _documents(data: ReportData, corpus: Any, docs: Any, dataset: dict[str, Path]) -> dict[str, tuple[str, str]]:
    """Title and snippet of every document the drill-downs show, from ``docs`` or the BEIR corpus."""
    path = docs if docs is not None else dataset.get("corpus")
    if path is None:
        return {}
    wanted = {d for lists in data.lists.values() for ranked in lists.values() for d in ranked}
    wanted.update(d for missed in data.missed.values() for d in missed)
    return read_documents(path, wanted)


__all__ = ["DEFAULT_DEPTH", "UNJUDGED", "ReportData", "ReportSettings", "build_report", "label_text", "ranked_lists"]
