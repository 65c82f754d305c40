"""Usefulness labels for runs, as plan, work, score: :func:`plan_usefulness` checks everything and lays out what
will be asked before the first request (the pool of the runs' top K through
:class:`~haystack_irmetrics.pooling.PoolRuns`, each pair once however many runs retrieved it; every text; each
question's reference answers; the measures); :func:`label_usefulness` asks the generator through the judges'
machinery (:func:`~haystack_irmetrics.judges.batch.judge_texts`), labels each pair by the answer metric, scores
each run by the core (:mod:`.scoring`) and, with ``end_to_end``, asks each run's top N together and correlates
(:mod:`.endtoend`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._extras import require
from ..core.measures import Measure
from ..errors import UsefulnessError
from ..judges.batch import Counts, judge_texts
from ..judges.cache import JudgmentCache
from ..pooling.runs import PoolRuns, pool_runs
from .asker import AnswerAsker, joined
from .endtoend import EndToEnd, across_runs, end_to_end
from .metrics import GRADED, answer_score, check_references
from .scoring import RunScores, check_measures, score_run
from .settings import UsefulnessSettings

RunDict = Mapping[str, Mapping[str, float]]
Pair = tuple[str, str]


@dataclass(frozen=True)
class UsefulnessResult:
    """What a labelling made: the labels (``{qid: {doc: label}}``, the qrels), the generator's answer to each pair,
    each run's scores, each run's end-to-end scores and correlations (or ``None``), the correlation across runs
    (3 runs or more, else ``None``) and the summary."""

    labels: dict[str, dict[str, int | float]]
    generations: dict[Pair, str]
    scores: dict[str, RunScores]
    end_to_end: dict[str, EndToEnd] | None
    across_runs: dict[str, Any] | None
    summary: dict[str, Any]


@dataclass(frozen=True)
class UsefulnessPlan:
    """What :func:`label_usefulness` will ask, known and checked before the first request: the measures, the pool,
    its pairs and their ``(question, document)`` texts, each question's references, and for ``end_to_end`` each
    run's top N per query (``(run, qid, docs)``) and their ``(question, passages)`` texts."""

    measures: list[Measure]
    pool: PoolRuns
    pairs: list[Pair]
    texts: list[Pair]
    references: dict[str, list[str]]
    together: list[tuple[str, str, tuple[str, ...]]]
    together_texts: list[Pair]
    started: float


def plan_usefulness(
    runs: Mapping[str, RunDict],
    queries: Mapping[str, str | None],
    corpus: Mapping[str, Mapping[str, str | None]],
    answers: Mapping[str, Sequence[str]],
    settings: UsefulnessSettings,
) -> UsefulnessPlan:
    """Every check before the first request (the measures, scipy for ``end_to_end``, a reference answer for every
    query of the runs, every text) and the pool (:class:`UsefulnessPlan`)."""
    from ..judges.texts import pair_texts

    started = time.perf_counter()
    measures = check_measures(settings.measure_names, settings.depth)
    top = settings.end_to_end
    if top:  # the correlations need scipy: known before the first request
        require("scipy", purpose="the end-to-end correlations (Kendall's tau, Spearman's rho; --end-to-end)")
    pool = pool_runs(list(runs.values()), list(runs), settings.depth)
    references = {}
    for qid in pool.qids:
        if qid not in answers:
            raise UsefulnessError(
                f"query {qid!r} of the runs has no reference answers in {settings.sources[2]}: every question the "
                "runs retrieve for needs one or more"
            )
        references[qid] = check_references(answers[qid], f"query {qid!r} ({settings.sources[2]})")
    pairs = pool.pairs()
    together = _together(runs, top) if top else []
    asked = list(dict.fromkeys([*pairs, *((q, d) for _, q, docs in together for d in docs)]))
    text_of = dict(zip(asked, pair_texts(asked, queries, corpus, max(settings.depth, top or 0), settings.sources[:2])))
    together_texts = [(text_of[q, docs[0]][0], joined([text_of[q, d][1] for d in docs])) for _, q, docs in together]
    texts = [text_of[pair] for pair in pairs]
    return UsefulnessPlan(measures, pool, pairs, texts, references, together, together_texts, started)


def _together(runs: Mapping[str, RunDict], top: int) -> list[tuple[str, str, tuple[str, ...]]]:
    """Each run's top ``top`` of each query it retrieved for, in trec_eval's order: ``(run, qid, docs)``."""
    pool = pool_runs(list(runs.values()), list(runs), top)
    return [
        (name, qid, ranking)
        for name, rankings in zip(runs, pool.rankings)
        for qid, ranking in zip(pool.qids, rankings)
        if ranking
    ]


def label_usefulness(
    asker: AnswerAsker,
    runs: Mapping[str, RunDict],
    queries: Mapping[str, str | None],
    corpus: Mapping[str, Mapping[str, str | None]],
    answers: Mapping[str, Sequence[str]],
    settings: UsefulnessSettings | None = None,
    *,
    cache: JudgmentCache | None = None,
    **options: Any,
) -> UsefulnessResult:
    """Label each pair of the runs' top ``depth`` by what the generator answers from that document alone, and
    score each run on the labels.

    :param runs: ``{name: {qid: {doc: score}}}``.
    :param queries: ``{qid: text}``; ``corpus``: ``{doc: {"title": ..., "text": ...}}`` (BEIR's files).
    :param answers: ``{qid: [reference answer, ...]}``.
    :param settings: how to label, as one value (:class:`~.settings.UsefulnessSettings`); ``options`` are its
        fields as keywords (``depth=5, answer_metric="f1"``), each in place of the settings' own.
    :param cache: the judgment cache, which keeps each raw answer (default: the one under the cache root).
    :raises UsefulnessError: before any request: a query of the runs without reference answers, a measure that
        does not fit; a generator that fails for good (:class:`~haystack_irmetrics.errors.JudgeError`; every
        answer made so far is in the cache).
    :raises JudgeError: a query or document without its text, before any request.
    """
    settings = UsefulnessSettings.of(settings, options)
    plan = plan_usefulness(runs, queries, corpus, answers, settings)
    cache = cache if cache is not None else JudgmentCache()
    generations, counts = ask_answers(asker, plan.texts, plan.pairs, cache, **asking_of(settings))
    labels = label_pairs(plan.pairs, generations, plan.references, settings.answer_metric)
    graded = settings.answer_metric in GRADED
    scores = {
        name: score_run(labels, ranked_lists(plan.pool, r), plan.measures, graded, plan.pool.qids)
        for r, name in enumerate(plan.pool.names)
    }
    together = across = None
    summary = _summary(asker, plan, settings, generations, labels, counts)
    if settings.end_to_end:
        names = [(q, f"{run}'s top {len(docs)} together") for run, q, docs in plan.together]
        said, more = ask_answers(asker, plan.together_texts, names, cache, **asking_of(settings))
        top = settings.end_to_end
        together = end_to_end(plan.together, said, plan.pool.qids, plan.references, scores, settings.answer_metric, top)
        across = across_runs(scores, together)
        summary["end_to_end"] = {"top": top, "asked": len(said), **_cost(more, said)}
    summary["seconds"] = round(time.perf_counter() - plan.started, 3)
    return UsefulnessResult(labels, dict(zip(plan.pairs, generations)), scores, together, across, summary)


def ask_answers(
    asker: AnswerAsker, texts: Sequence[Pair], names: Sequence[Pair], cache: JudgmentCache, **asking: Any
) -> tuple[list[str], Counts]:
    """The generator's answer to each ``(question, document)`` of ``texts`` (cached ones from the cache), asked as
    ``asking`` says (:func:`~haystack_irmetrics.judges.batch.judge_texts`' ``concurrency``, ``retries``,
    ``backoff``, ``progress``); and what it cost."""
    out = [""] * len(texts)

    def keep(i: int, verdict: Any, cached: bool) -> None:
        out[i] = verdict.raw or ""

    counts = judge_texts(asker, texts, cache=cache, on_verdict=keep, names=names, **asking)
    return out, counts


def asking_of(settings: UsefulnessSettings) -> dict[str, Any]:
    """How ``settings`` asks: the keywords of :func:`ask_answers`."""
    return {k: getattr(settings, k) for k in ("concurrency", "retries", "backoff", "progress")}


def label_pairs(
    pairs: Sequence[Pair], generations: Sequence[str], references: Mapping[str, Sequence[str]], metric: str
) -> dict[str, dict[str, int | float]]:
    """``{qid: {doc: label}}``: each pair's generation scored against its query's references by ``metric``."""
    labels: dict[str, dict[str, int | float]] = {}
    for (qid, doc), answer in zip(pairs, generations):
        labels.setdefault(qid, {})[doc] = answer_score(metric, answer, references[qid])
    return labels


def ranked_lists(pool: PoolRuns, r: int) -> dict[str, list[str]]:
    """Run ``r``'s top ``depth`` of each query it retrieved for, in trec_eval's order."""
    return {qid: list(ranking) for qid, ranking in zip(pool.qids, pool.rankings[r]) if ranking}


def _summary(
    asker: AnswerAsker,
    plan: UsefulnessPlan,
    settings: UsefulnessSettings,
    generations: Sequence[str],
    labels: Mapping[str, Mapping[str, float]],
    counts: Counts,
) -> dict[str, Any]:
    """``summary.json``: what was labelled and what it cost, the labels' spread, the generator (no key); end to
    end, what that cost (``end_to_end``, else ``None``)."""
    from ..judges.folder import file_record

    values = [v for docs in labels.values() for v in docs.values()]
    summary: dict[str, Any] = {
        "pairs": len(plan.pairs),
        "queries": len(plan.pool.qids),
        **_cost(counts, generations),
        "useful_pairs": sum(v > 0 for v in values),
        "mean_label": sum(values) / len(values) if values else None,
        "depth": settings.depth,
        "answer_metric": settings.answer_metric,
        "labels": "graded" if settings.answer_metric in GRADED else "binary",
        "measures": [m.name for m in plan.measures],
        "end_to_end": None,
        "generator": {"fingerprint": asker.fingerprint(), **asker.settings()},
        "server": asker.server,
    }
    if settings.answers_file is not None:
        summary["answers"] = file_record(settings.answers_file)
    return summary


def _cost(counts: Counts, answers: Sequence[str]) -> dict[str, Any]:
    """What asking cost: requests (retries included), retries, cache hits, empty answers, the server's tokens."""
    return {
        "requests": counts.requests,
        "retries": counts.retries,
        "cache_hits": counts.cache_hits,
        "empty_generations": sum(not a.strip() for a in answers),
        "tokens": dict(counts.tokens) or None,
    }


__all__ = [
    "UsefulnessPlan",
    "UsefulnessResult",
    "ask_answers",
    "asking_of",
    "label_pairs",
    "label_usefulness",
    "plan_usefulness",
    "ranked_lists",
]
