"""The whole job of ``irmetrics judge``: the unjudged pairs of the runs' top k judged by a model, the human
labels kept, an agreement sample on request, and the output folder.

``DIR/judgments.jsonl`` (one line per judged pair, appended as each is made: ``query_id``, ``doc_id``,
``label`` or null when the answer held no grade, ``judge`` the fingerprint, ``raw`` the answer; a pair of the
agreement sample has ``human``, its human label, too), ``DIR/qrels.tsv`` (BEIR's layout: the human qrels and
the model's labels for the holes), ``DIR/summary.json`` and, with an agreement sample, ``DIR/agreement.json``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._extras import require
from ..errors import JudgeError, OutputError
from ..io.output import write_text
from ..io.tables import json_text
from ..io.trec import write_qrels
from .agreement import label_agreement, sample_labelled, system_agreement
from .batch import Counts, jsonl_line, judge_texts
from .cache import JudgmentCache
from .judge import ChatJudge, ScoreJudge, Verdict, cut_points_json
from .pool import pooled_pairs, unjudged_pairs, unjudged_share
from .prompt import sendable
from .settings import JudgeSettings

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
    ppi: dict[str, Any] | None = None
    filled: dict[str, dict[str, int]] = field(init=False)

    def __post_init__(self) -> None:
        filled = {q: dict(d) for q, d in self.human.items()}
        for q, docs in self.model.items():
            filled.setdefault(q, {}).update(docs)
        object.__setattr__(self, "filled", filled)


def _texts(
    pairs: list[tuple[str, str]],
    queries: Mapping[str, str | None],
    corpus: Mapping[str, Mapping[str, str | None]],
    depth: int,
    where: tuple[str, str],
) -> list[tuple[str, str]]:
    """The ``(query text, document text)`` of each pair, the document's as the pipelines index it (title and
    text); a query or document without text raises before any request."""
    from ..integration.corpus import corpus_documents

    needed = {}
    for qid, doc in pairs:
        if not queries.get(qid):
            raise JudgeError(f"query {qid!r} (in the runs' top {depth}) has no text in {where[0]}")
        if doc not in corpus:
            raise JudgeError(f"document {doc!r} (query {qid!r}'s top {depth}) is not in the corpus {where[1]}")
        needed[doc] = corpus[doc]
    content = {d.id: d.content or "" for d in corpus_documents(needed)}
    for qid, doc in pairs:
        if not content[doc]:
            raise JudgeError(f"document {doc!r} (query {qid!r}'s top {depth}) has no text in the corpus {where[1]}")
    texts = [(queries[q] or "", content[d]) for q, d in pairs]
    _say_unsendable(pairs, texts, where)
    return [(sendable(q), sendable(d)) for q, d in texts]


def _say_unsendable(pairs: list[tuple[str, str]], texts: list[tuple[str, str]], where: tuple[str, str]) -> None:
    """Warn once, before any request, of the queries and documents whose text UTF-8 cannot carry (a lone
    surrogate): they are sent with U+FFFD in its place (:func:`~.prompt.sendable`)."""
    import warnings

    from ..errors import SuspiciousInputWarning

    odd: dict[str, None] = {}
    for (qid, doc), (q, d) in zip(pairs, texts):
        if sendable(q) is not q:
            odd[f"query {qid!r} ({where[0]})"] = None
        if sendable(d) is not d:
            odd[f"document {doc!r} ({where[1]})"] = None
    if odd:
        names = list(odd)
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        warnings.warn(
            f"{', '.join(names[:3])}{more} hold text UTF-8 cannot carry (a lone surrogate, e.g. a JSON \\udc80 "
            "escape): it is sent to the judge with U+FFFD in its place",
            SuspiciousInputWarning,
            stacklevel=3,
        )


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
    **options: Any,
) -> JudgeResult:
    """Judge the unjudged pairs of each run's top ``depth`` and write the output folder ``output``.

    :param runs: ``{name: {qid: {doc: score}}}``.
    :param qrels: the human judgments (never replaced).
    :param settings: how to judge, as one value (:class:`JudgeSettings`); ``options`` are its fields as keywords
        (``depth=10, ppi=True``), each in place of the settings' own (a name that is no field is a ``TypeError``).
    :param cache: the judgment cache (default: the one under the cache root).

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
    measure = _check_arguments(judge, settings)
    if settings.agreement and len(runs) >= 2:  # the systems' order by Kendall's tau: scipy, known before judging
        require("scipy", purpose="the agreement's order of systems (Kendall's tau, --agreement)")
    depth, seed, sources = settings.depth, settings.seed, settings.sources
    started = time.perf_counter()
    human = {q: dict(d) for q, d in qrels.items()}
    holes = unjudged_pairs(runs, human, depth)
    chooser = _strategy(settings, runs, human)
    if settings.ppi:
        _check_ppi(runs, human, holes, depth)
    sample = (
        sample_labelled(_with_texts(human, queries, corpus), settings.agreement, seed) if settings.agreement else []
    )
    in_sample = set(sample)
    judged_pool = (
        [p for p in pooled_pairs(runs, depth) if p[1] in human.get(p[0], {}) and p not in in_sample]
        if settings.ppi
        else []
    )
    labelled = sample + judged_pool
    # Every text is checked before the first request: each hole a strategy may ask for, too.
    text_of = dict(zip(holes + labelled, _texts(holes + labelled, queries, corpus, depth, sources)))
    fitted = _fit(judge, human, queries, corpus, settings, set(sample))
    out = Path(output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create the output folder {out}: {e.strerror or e}") from None
    cache = cache if cache is not None else JudgmentCache()
    fingerprint = judge.fingerprint()
    verdicts: dict[tuple[str, str], Verdict] = {}
    asking = {"concurrency": settings.concurrency, "retries": settings.retries, "backoff": settings.backoff}
    with open(out / "judgments.jsonl", "w", encoding="utf-8") as log:

        def ask(asked: list[tuple[str, str]], shown: bool | None) -> Counts:
            def on_verdict(i: int, verdict: Verdict, cached: bool) -> None:
                qid, doc = asked[i]
                extra = {"human": human[qid][doc]} if doc in human.get(qid, {}) else {}  # agreement, PPI pool
                verdicts[asked[i]] = verdict
                log.write(jsonl_line(qid, doc, verdict, fingerprint, **extra))
                if not cached:  # a new judgment is on disk at once; a cached one is safe in the cache already
                    log.flush()

            texts = [text_of[pair] for pair in asked]
            return judge_texts(judge, texts, cache=cache, on_verdict=on_verdict, names=asked, progress=shown, **asking)

        if chooser is None:
            pairs = holes
            counts = ask(pairs + labelled, settings.progress)
        else:
            pairs, counts = _judge_by_strategy(chooser, settings, ask, verdicts)
            counts.merge(ask(labelled, settings.progress))
    model: dict[str, dict[str, int]] = {}
    for qid, doc in pairs:
        label = verdicts[qid, doc].label
        if label is not None:
            model.setdefault(qid, {})[doc] = label
    result = JudgeResult(human, model, verdicts, {})
    agreement_out = ppi_out = None
    if sample:
        agreement_out = _agreement(result, sample, runs, settings.threshold, measure)
        write_text(out / "agreement.json", json_text(agreement_out, indent=2) + "\n")
    if settings.ppi:
        ppi_out = _ppi(result, runs, pairs, depth, measure, settings.alpha, out)
    summary = _summary(judge, fingerprint, runs, result, counts, depth, len(pairs), len(sample), started)
    if chooser is not None:
        summary["strategy"] = {"name": settings.strategy, "budget": settings.budget, "holes": len(holes)}
    if settings.qrels_file is not None:
        from .ppi import file_record

        summary["qrels"] = file_record(settings.qrels_file)
    if fitted:
        summary["cut_points_learned_on"] = fitted
        summary["cut_points"] = cut_points_json(judge.cut_points)
    result = replace(result, summary=summary, agreement=agreement_out, ppi=ppi_out)
    write_qrels(result.filled, out / "qrels.tsv", layout="beir")
    write_text(out / "summary.json", json_text(result.summary, indent=2) + "\n")
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
    _whole(budget, "the budget", 1)
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


def _whole(value: Any, name: str, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise JudgeError(f"{name} must be a whole number of at least {least}, got {value!r}")


def _check_arguments(judge: ChatJudge | ScoreJudge, settings: JudgeSettings) -> str:
    """Every setting of :func:`judge_runs` checked before the first request (one line naming it); the measure
    (``NDCG@depth`` by default)."""
    import math

    from ..core.measures import parse_measure
    from ..stats.significance import seed_value

    s = settings
    depth, backoff, threshold, alpha = s.depth, s.backoff, s.threshold, s.alpha
    concurrency, retries, agreement, fit, seed, measure = (
        s.concurrency,
        s.retries,
        s.agreement,
        s.fit,
        s.seed,
        s.measure,
    )
    _whole(depth, "depth", 1)
    _whole(concurrency, "concurrency", 1)
    _whole(retries, "retries", 0)
    _whole(agreement, "the agreement sample", 0)
    _whole(fit, "fit", 0)
    seed_value(seed)
    if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or not math.isfinite(backoff) or backoff < 0:
        raise JudgeError(f"backoff must be a number of seconds >= 0, got {backoff!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, int) or not 1 <= threshold <= judge.max_grade:
        raise JudgeError(
            f"threshold must be a grade from 1 to {judge.max_grade} (relevant = grade >= it), got {threshold!r}"
        )
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise JudgeError(f"alpha must be a number between 0 and 1 (the intervals' level is 1 - alpha), got {alpha!r}")
    measure = measure or f"NDCG@{depth}"
    parse_measure(measure)
    return measure


def _check_ppi(runs: Mapping[str, RunDict], human: QrelsDict, holes: list[tuple[str, str]], depth: int) -> None:
    """PPI's precondition, before any request: at least two queries whose pool (every run's top ``depth``) people
    judged in full, and two others."""
    with_holes = {q for q, _ in holes}
    pooled = {q for q, _ in pooled_pairs(runs, depth)}
    labelled = [q for q in pooled if q not in with_holes and human.get(q)]
    others = pooled & with_holes
    if len(labelled) < 2 or len(others) < 2:
        raise JudgeError(
            f"--ppi needs at least two queries whose pool (every run's top {depth}) people judged in full, and two "
            f"with holes; these qrels have {len(labelled)} and {len(others)}: judge some queries' pools in full "
            "(a random sample of them) first"
        )


def _ppi(
    result: JudgeResult,
    runs: Mapping[str, RunDict],
    unjudged: list[tuple[str, str]],
    depth: int,
    measure: str,
    alpha: float,
    out: Path,
) -> dict[str, Any]:
    """The model's qrels (its labels for every pool pair and nothing else, an unparseable answer left
    unjudged: no human label reaches ``Yhat``), written to ``model_qrels.tsv``, and the PPI report, written to
    ``ppi.json``."""
    from .ppi import ppi_report

    model: dict[str, dict[str, int]] = {}
    for qid, doc in pooled_pairs(runs, depth):
        label = result.verdicts[qid, doc].label
        if label is not None:
            model.setdefault(qid, {})[doc] = label
    holes = {q for q, _ in unjudged}
    labelled = [q for run in runs.values() for q in run if q not in holes and result.human.get(q)]
    report = ppi_report(runs, result.human, model, result.filled, list(dict.fromkeys(labelled)), measure, alpha=alpha)
    write_qrels(model, out / "model_qrels.tsv", layout="beir")
    write_text(out / "ppi.json", json_text(report, indent=2) + "\n")
    return report


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
    texts = _texts(chosen, queries, corpus, settings.depth, settings.sources)
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
    labels = label_agreement([h for h, _ in parsed], [m for _, m in parsed], threshold) if parsed else None
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
    fingerprint: str,
    runs: Mapping[str, RunDict],
    result: JudgeResult,
    counts: Counts,
    depth: int,
    n_pairs: int,
    n_sample: int,
    started: float,
) -> dict[str, Any]:
    return {
        "pairs": n_pairs,
        "agreement_pairs": n_sample,
        "requests": counts.requests,
        "retries": counts.retries,
        "cache_hits": counts.cache_hits,
        "unparseable": counts.unparseable,
        "reasked": counts.reasked,
        "reader": "lenient" if judge.lenient else "contract",
        "response_format": {"sent": judge.response_format, "refused_by_server": judge.format_refused},
        "tokens": dict(counts.tokens) or None,
        "depth": depth,
        f"Hole@{depth}": {
            name: {"before": beir_hole(run, result.human, depth), "after": beir_hole(run, result.filled, depth)}
            for name, run in runs.items()
        },
        f"unjudged_pairs@{depth}": {
            name: {
                "before": unjudged_share(run, result.human, depth),
                "after": unjudged_share(run, result.filled, depth),
            }
            for name, run in runs.items()
        },
        "judge": {"fingerprint": fingerprint, **judge.settings()},
        "server": judge.server,
        "seconds": round(time.perf_counter() - started, 3),
    }


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
