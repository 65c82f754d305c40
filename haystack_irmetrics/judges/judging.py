"""Judging: the whole job of ``irmetrics judge`` as plan, work, write. :func:`plan_judging` checks everything
and lays out what will be asked before the first request (the pool of the runs' top k through
:class:`~haystack_irmetrics.pooling.PoolRuns`, its holes, the agreement sample, PPI's judged pool, every text);
:func:`judge_runs` asks the judge (:func:`.batch.judge_texts`), each verdict appended to the folder as it comes,
and writes the rest of the folder (:class:`.folder.FolderWriter`, which says what each file holds).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._extras import require
from ..checks import whole
from ..errors import JudgeError
from ..pooling.runs import PoolRuns, pool_runs
from .agreement import label_agreement, sample_labelled, system_agreement
from .batch import Counts, judge_texts
from .cache import JudgmentCache
from .folder import FolderWriter, file_record
from .judge import ChatJudge, ScoreJudge, Verdict, cut_points_json
from .ppi import PPIReport, labelled_queries, ppi_report
from .settings import JudgeSettings
from .texts import pair_texts

QrelsDict = Mapping[str, Mapping[str, int]]
RunDict = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class JudgeResult:
    """What a judging run made: the human qrels and the model's labels apart (``filled`` is both), the
    verdict of every judged pair, the summary and the agreement and PPI reports (or ``None``)."""

    human: dict[str, dict[str, int]]
    model: dict[str, dict[str, int]]
    verdicts: dict[tuple[str, str], Verdict]
    summary: dict[str, Any]
    agreement: dict[str, Any] | None = None
    ppi: PPIReport | None = None
    filled: dict[str, dict[str, int]] = field(init=False)

    def __post_init__(self) -> None:
        filled = {q: dict(d) for q, d in self.human.items()}
        for q, docs in self.model.items():
            filled.setdefault(q, {}).update(docs)
        object.__setattr__(self, "filled", filled)


def _scores(qrels: QrelsDict, runs: Mapping[str, RunDict], measure: str) -> dict[str, float]:
    from .. import evaluate

    return {
        name: float(evaluate(qrels, run, None, measures=[measure]).raw_means[measure]) for name, run in runs.items()
    }


def judge_runs(
    judge: ChatJudge | ScoreJudge,
    runs: Mapping[str, RunDict],
    qrels: QrelsDict,
    queries: Mapping[str, str | None],
    corpus: Mapping[str, Mapping[str, str | None]],
    output: str | os.PathLike[str],
    settings: JudgeSettings | None = None,
    *,
    cache: JudgmentCache | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    **options: Any,
) -> JudgeResult:
    """Judge the unjudged pairs of each run's top ``depth`` and write the output folder ``output``.

    :param runs: ``{name: {qid: {doc: score}}}``.
    :param qrels: the human judgments (never replaced).
    :param settings: how to judge, as one value (:class:`JudgeSettings`); ``options`` are its fields as keywords
        (``depth=10, ppi=True``), each in place of the settings' own (a name that is no field is a ``TypeError``).
    :param cache: the judgment cache (default: the one under the cache root).
    :param pairs: judge exactly these ``(query id, doc id)`` pairs instead of the runs' holes (``runs`` may then be
        empty; a pair people judged is asked too, its human label kept): the same pairs people judge on the
        page, so that the two can be compared (``irmetrics assess agreement``). Not with ``ppi`` or ``strategy``.

    :returns: the :class:`JudgeResult` (frozen), whose files are written.
    :raises JudgeError: an argument out of range or a query or document without text (before any request), a judge that fails for good
        (the judgments made are kept in the cache and ``judgments.jsonl``).

    The fields of :class:`~.settings.JudgeSettings` (keywords or ``settings``):

    * ``depth``: judge each run's top ``depth``; ``concurrency``: requests in flight; ``retries``: further
      attempts of a request, the first after ``backoff`` seconds (doubling).
    * ``agreement``: also judge this many human-labelled pairs (seeded by ``seed``, stratified by grade) and
      write ``agreement.json``: the labels' agreement at ``threshold`` and the systems' order by ``measure``
      (default ``NDCG@depth``) with the human qrels alone and filled.
    * ``fit``: a score judge without cut points learns them on this many human-labelled pairs (seeded by
      ``seed + 1``, stratified by grade, none of them in the agreement sample).
    * ``ppi``: also judge the pool pairs people judged, and write ``ppi.json``: each run's prediction-powered
      estimate and interval (level ``1 - alpha``) of ``measure``'s mean and of each difference between two runs
      (:mod:`.ppi`), the queries whose pool people judged in full as the labelled set; and ``model_qrels.tsv``,
      the model's labels for every pool pair (and no human label).
    * ``sources``: what to call the queries and the corpus in messages (their files).
    * ``progress``: a bar of the pairs judged on stderr (``None``: when stderr is a terminal).
    * ``strategy``: judge at most ``budget`` of the holes, in the order a pooling strategy of
      :data:`haystack_irmetrics.pooling.STRATEGIES` asks for them (``mtf``, ``maxmean``: adaptively, each batch
      of ``concurrency`` pairs chosen from the labels so far), instead of every hole of the top ``depth``. An
      unparseable answer tells the strategy nothing (the pair stays unjudged). Not with ``ppi``.
    """
    settings = JudgeSettings.of(settings, options)
    plan = plan_judging(judge, runs, qrels, queries, corpus, settings, pairs)
    cache = cache if cache is not None else JudgmentCache()
    with FolderWriter(output, judge.fingerprint()) as folder:
        pairs, verdicts, counts = _judge(judge, plan, settings, cache, folder)
    return _finish(judge, runs, plan, settings, pairs, verdicts, counts, folder)


@dataclass(frozen=True)
class JudgingPlan:
    """What :func:`judge_runs` will ask, all of it known and checked before the first request: the measure, the
    human qrels, the pool and its holes, the strategy that chooses among the holes (or ``None``: every hole),
    the agreement sample, the pairs people judged that the judge is asked too (the sample and PPI's judged pool),
    the texts of every pair, and how many pairs a score judge learned its cut points on."""

    measure: str
    human: dict[str, dict[str, int]]
    pool: PoolRuns | None
    holes: list[tuple[str, str]]
    chooser: Any
    sample: list[tuple[str, str]]
    labelled: list[tuple[str, str]]
    text_of: dict[tuple[str, str], tuple[str, str]]
    fitted: int
    started: float


def plan_judging(
    judge: ChatJudge | ScoreJudge,
    runs: Mapping[str, RunDict],
    qrels: QrelsDict,
    queries: Mapping[str, str | None],
    corpus: Mapping[str, Mapping[str, str | None]],
    settings: JudgeSettings,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> JudgingPlan:
    """Every check before the first request (the settings, the strategy, PPI's precondition, every text), the
    pool, its holes and samples, and the score judge's cut points (:class:`JudgingPlan`)."""
    measure = _check_arguments(judge, settings)
    if settings.agreement and len(runs) >= 2:  # the systems' order by Kendall's tau: scipy, known before judging
        require("scipy", purpose="the agreement's order of systems (Kendall's tau, --agreement)")
    started = time.perf_counter()
    human = {q: dict(d) for q, d in qrels.items()}
    pool = pool_runs(list(runs.values()), list(runs), settings.depth) if runs else None
    holes, given_judged = _holes(pool, human, pairs, settings)
    chooser = _strategy(settings, runs, human)
    if settings.ppi:
        _check_ppi(pool, human, holes)
    with_texts = _with_texts(human, queries, corpus)
    if settings.agreement and not with_texts:
        raise JudgeError("--agreement compares the judge with people's labels: give the human qrels (--qrels)")
    sample = sample_labelled(with_texts, settings.agreement, settings.seed) if settings.agreement else []
    in_sample = set(sample)
    judged_pool = []
    if settings.ppi and pool is not None:
        judged_pool = [p for p in pool.pairs() if p[1] in human.get(p[0], {}) and p not in in_sample]
    labelled = sample + judged_pool + [p for p in given_judged if p not in in_sample]
    # Every text is checked before the first request: each hole a strategy may ask for, too.
    asked = holes + labelled
    text_of = dict(zip(asked, pair_texts(asked, queries, corpus, settings.depth, settings.sources)))
    fitted = _fit(judge, human, queries, corpus, settings, in_sample)
    return JudgingPlan(measure, human, pool, holes, chooser, sample, labelled, text_of, fitted, started)


def _holes(
    pool: PoolRuns | None,
    human: QrelsDict,
    pairs: Sequence[tuple[str, str]] | None,
    settings: JudgeSettings,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The pairs whose labels fill the qrels (the pool's holes, or the given pairs people did not judge) and the
    given pairs people judged (asked too, to be compared)."""
    if pairs is None:
        if pool is None:
            raise JudgeError("nothing to judge: give runs (their top k is pooled) or the pairs to judge (--pairs)")
        return pool.pairs(human), []
    if settings.ppi or settings.strategy is not None:
        raise JudgeError("--pairs names the pairs to judge: it does not go with --ppi or --strategy, which pool runs")
    chosen = list(dict.fromkeys((str(q), str(d)) for q, d in pairs))
    if not chosen:
        raise JudgeError("--pairs holds no pair to judge")
    judged = [p for p in chosen if p[1] in human.get(p[0], {})]
    return [p for p in chosen if p[1] not in human.get(p[0], {})], judged


def _judge(
    judge: ChatJudge | ScoreJudge,
    plan: JudgingPlan,
    settings: JudgeSettings,
    cache: JudgmentCache,
    folder: FolderWriter,
) -> tuple[list[tuple[str, str]], dict[tuple[str, str], Verdict], Counts]:
    """Ask about the plan's pairs (every hole, or the strategy's choice of them, then the labelled pairs), each
    verdict appended to the folder as it comes; the holes judged, every verdict, what it cost."""
    verdicts: dict[tuple[str, str], Verdict] = {}
    asking = {"concurrency": settings.concurrency, "retries": settings.retries, "backoff": settings.backoff}

    def ask(asked: list[tuple[str, str]], shown: bool | None) -> Counts:
        def on_verdict(i: int, verdict: Verdict, cached: bool) -> None:
            qid, doc = asked[i]
            verdicts[asked[i]] = verdict
            folder.judgment(qid, doc, verdict, cached, plan.human.get(qid, {}).get(doc))

        texts = [plan.text_of[pair] for pair in asked]
        return judge_texts(judge, texts, cache=cache, on_verdict=on_verdict, names=asked, progress=shown, **asking)

    if plan.chooser is None:
        return plan.holes, verdicts, ask(plan.holes + plan.labelled, settings.progress)
    pairs, counts = _judge_by_strategy(plan.chooser, settings, ask, verdicts)
    counts.merge(ask(plan.labelled, settings.progress))
    return pairs, verdicts, counts


def _finish(
    judge: ChatJudge | ScoreJudge,
    runs: Mapping[str, RunDict],
    plan: JudgingPlan,
    settings: JudgeSettings,
    pairs: list[tuple[str, str]],
    verdicts: dict[tuple[str, str], Verdict],
    counts: Counts,
    folder: FolderWriter,
) -> JudgeResult:
    """The result of the judging and the folder's files: the model's labels for the holes, the agreement and PPI
    reports where asked for, the summary."""
    model: dict[str, dict[str, int]] = {}
    for qid, doc in pairs:
        label = verdicts[qid, doc].label
        if label is not None:
            model.setdefault(qid, {})[doc] = label
    result = JudgeResult(plan.human, model, verdicts, {})
    agreement = _agreement(result, plan.sample, runs, settings.threshold, plan.measure) if plan.sample else None
    ppi = model_qrels = None
    if settings.ppi and plan.pool is not None:
        model_qrels = _model_qrels(result, plan.pool)
        labelled = labelled_queries(plan.pool, result.human, plan.holes)
        ppi = ppi_report(runs, result.human, model_qrels, result.filled, labelled, plan.measure, alpha=settings.alpha)
    summary = _summary(judge, runs, plan, result, counts, len(pairs), settings)
    result = replace(result, summary=summary, agreement=agreement, ppi=ppi)
    folder.finish(result.filled, summary, agreement=agreement, ppi=ppi and ppi.to_dict(), model=model_qrels)
    return result


def _strategy(settings: JudgeSettings, runs: Mapping[str, RunDict], human: QrelsDict) -> Any:
    """The pooling strategy that chooses which holes to judge, or ``None`` (every hole)."""
    name, budget = settings.strategy, settings.budget
    if name is None:
        if budget is not None:
            raise JudgeError("a budget goes with a strategy (--strategy): without one every hole is judged")
        return None
    if settings.ppi:
        raise JudgeError("--ppi needs every pool pair judged by the model: it does not go with a strategy's budget")
    whole(budget, "the budget", least=1, error=JudgeError)
    from ..pooling import make_strategy

    return make_strategy(
        name, list(runs.values()), budget=budget, judged=human, depth=settings.depth, seed=settings.seed
    )


def _judge_by_strategy(
    chooser: Any,
    settings: JudgeSettings,
    ask: Callable[[list[tuple[str, str]], bool | None], Counts],
    verdicts: dict[tuple[str, str], Verdict],
) -> tuple[list[tuple[str, str]], Counts]:
    """Judge up to the budget of holes in the strategy's order, ``concurrency`` pairs at a time, each label told
    to the strategy before it chooses the next batch (an unparseable answer tells it nothing)."""
    from ..io.progress import bar

    budget, batch, progress = settings.budget, settings.concurrency, settings.progress
    assert budget is not None  # _strategy checked it
    asked: list[tuple[str, str]] = []
    counts = Counts()
    shown = bar(budget, "judging", "pair", progress)
    try:
        while len(asked) < budget:
            chosen = []
            while len(chosen) < min(batch, budget - len(asked)):
                pair = chooser.next()
                if pair is None:
                    break
                chosen.append((pair.query, pair.doc))
            if not chosen:
                break
            counts.merge(ask(chosen, False))
            for qid, doc in chosen:
                label = verdicts[qid, doc].label
                if label is not None:
                    chooser.record(qid, doc, label)
            asked += chosen
            shown.update(len(chosen))
    finally:
        shown.close()
    return asked, counts


def _check_arguments(judge: ChatJudge | ScoreJudge, settings: JudgeSettings) -> str:
    """What of :func:`judge_runs`' settings depends on the judge or the core, checked before the first request
    (one line naming it; :class:`~.settings.JudgeSettings` checks the rest when built): the threshold a grade of
    the judge's scale, the measure known (``NDCG@depth`` by default)."""
    from ..core.measures import parse_measure

    whole(settings.threshold, "threshold (relevant = grade >= it)", least=1, most=judge.max_grade, error=JudgeError)
    measure = settings.measure or f"NDCG@{settings.depth}"
    parse_measure(measure)
    return measure


def _check_ppi(pool: PoolRuns | None, human: QrelsDict, holes: list[tuple[str, str]]) -> None:
    """PPI's precondition, before any request: at least two queries whose pool (every run's top ``depth``) people
    judged in full, and two others."""
    if pool is None:
        raise JudgeError("--ppi needs runs: their pool is what people and the model both judge")
    labelled = labelled_queries(pool, human, holes)
    others = {q for q, _ in holes}
    if len(labelled) < 2 or len(others) < 2:
        raise JudgeError(
            f"--ppi needs at least two queries whose pool (every run's top {pool.depth}) people judged in full, and "
            f"two with holes; these qrels have {len(labelled)} and {len(others)}: judge some queries' pools in full "
            "(a random sample of them) first"
        )


def _model_qrels(result: JudgeResult, pool: PoolRuns) -> dict[str, dict[str, int]]:
    """The model's qrels: its labels for every pool pair and nothing else, an unparseable answer left unjudged
    (no human label reaches PPI's ``Yhat``)."""
    model: dict[str, dict[str, int]] = {}
    for qid, doc in pool.pairs():
        label = result.verdicts[qid, doc].label
        if label is not None:
            model.setdefault(qid, {})[doc] = label
    return model


def _fit(
    judge: ChatJudge | ScoreJudge,
    human: QrelsDict,
    queries: Mapping[str, str | None],
    corpus: Mapping[str, Mapping[str, str | None]],
    settings: JudgeSettings,
    held_out: set[tuple[str, str]],
) -> int:
    """Learn a score judge's missing cut points on ``settings.fit`` human-labelled pairs; how many it learned on."""
    if not isinstance(judge, ScoreJudge) or judge.cut_points is not None:
        return 0
    if not settings.fit:
        raise JudgeError(
            "the judge's scorer has no cut points: give them in the judge YAML, or learn them on human-labelled "
            "pairs (--fit N)"
        )
    pool = _with_texts(human, queries, corpus)
    pool = {q: {d: g for d, g in docs.items() if (q, d) not in held_out} for q, docs in pool.items()}
    chosen = sample_labelled(pool, settings.fit, settings.seed + 1)
    texts = pair_texts(chosen, queries, corpus, settings.depth, settings.sources)
    judge.fit(texts, [int(human[q][d]) for q, d in chosen])
    return len(chosen)


def _with_texts(human: QrelsDict, queries: Mapping[str, Any], corpus: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """The human qrels the judge can be asked about: the query has text and the document is in the corpus."""
    return {
        q: {d: label for d, label in docs.items() if d in corpus}
        for q, docs in human.items()
        if queries.get(q) and any(d in corpus for d in docs)
    }


def _agreement(
    result: JudgeResult, sample: list[tuple[str, str]], runs: Mapping[str, RunDict], threshold: int, measure: str
) -> dict[str, Any]:
    both = [(result.human[q][d], result.verdicts[q, d].label) for q, d in sample]
    parsed = [(h, m) for h, m in both if m is not None]
    labels = label_agreement([h for h, _ in parsed], [m for _, m in parsed], threshold).to_dict() if parsed else None
    human_scores = _scores(result.human, runs, measure)
    filled_scores = _scores(result.filled, runs, measure)
    return {
        "sampled": len(sample),
        "unparseable": len(both) - len(parsed),
        "labels": labels,
        "systems": {
            "measure": measure,
            "human": human_scores,
            "filled": filled_scores,
            **system_agreement(human_scores, filled_scores),
        },
    }


def _summary(
    judge: ChatJudge | ScoreJudge,
    runs: Mapping[str, RunDict],
    plan: JudgingPlan,
    result: JudgeResult,
    counts: Counts,
    n_pairs: int,
    settings: JudgeSettings,
) -> dict[str, Any]:
    """``summary.json``: what was judged and what it cost, the runs' holes before and after, the judge."""
    depth, pool = settings.depth, plan.pool
    summary: dict[str, Any] = {
        "pairs": n_pairs,
        "agreement_pairs": len(plan.sample),
        "human_labels": sum(len(docs) for docs in plan.human.values()),
        "requests": counts.requests,
        "retries": counts.retries,
        "cache_hits": counts.cache_hits,
        "unparseable": counts.unparseable,
        "reasked": counts.reasked,
        "reader": "lenient" if judge.lenient else "contract",
        "response_format": {"sent": judge.response_format, "refused_by_server": judge.format_refused},
        "tokens": dict(counts.tokens) or None,
        "depth": depth,
        f"Hole@{depth}": {name: _holes_filled(run, result, depth) for name, run in runs.items()},
        f"unjudged_pairs@{depth}": {
            name: {"before": pool.unjudged_share(r, result.human), "after": pool.unjudged_share(r, result.filled)}
            for r, name in enumerate(runs)
            if pool is not None
        },
        "judge": {"fingerprint": judge.fingerprint(), **judge.settings()},
        "server": judge.server,
        "seconds": round(time.perf_counter() - plan.started, 3),
    }
    if plan.chooser is not None:
        summary["strategy"] = {"name": settings.strategy, "budget": settings.budget, "holes": len(plan.holes)}
    if settings.qrels_file is not None:
        summary["qrels"] = file_record(settings.qrels_file)
    if plan.fitted:
        summary["cut_points_learned_on"] = plan.fitted
        summary["cut_points"] = cut_points_json(judge.cut_points)
    return summary


def _holes_filled(run: RunDict, result: JudgeResult, k: int) -> dict[str, float | None]:
    """A run's BEIR hole at ``k`` with the human qrels and with the holes filled; with no human label at all,
    every document of the top k is a hole (1.0 before), which BEIR's division by the judged queries leaves
    undefined."""
    before = beir_hole(run, result.human, k) if any(result.human.values()) else 1.0
    return {"before": before, "after": beir_hole(run, result.filled, k)}


def beir_hole(run: RunDict, qrels: QrelsDict, k: int) -> float | None:
    """BEIR's hole at ``k`` (``evaluate_custom(..., "hole")``: the share of the top k judged for no query,
    summed over the run's queries and divided by the number of judged queries), the core's unrounded
    ``Hole@k``; ``None`` when the run and the qrels share nothing to count over (no qrels at all)."""
    import warnings

    from .. import evaluate
    from ..errors import IRMetricsError, SuspiciousInputWarning

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SuspiciousInputWarning)
            return float(evaluate(qrels, run, None, measures=[f"Hole@{k}"], preset="beir").raw_means[f"Hole@{k}"])
    except IRMetricsError:
        return None


__all__ = ["JudgeResult", "JudgeSettings", "beir_hole", "judge_runs"]
