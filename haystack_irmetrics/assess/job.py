"""``irmetrics assess PAIRS`` as one call: :class:`AssessSettings` in (checked when built), the page served until
it stops, :class:`AssessResult` out (:func:`run_assess`).

Everything the page needs is read and checked before anything is made: the scale, the pairs and their texts, the
model's labels, and the adaptive strategy built from ``pooling/`` (its runs' pairs checked against the texts
too), which the session is handed as a factory (:data:`~.session.StrategyFactory`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checks import choice, whole
from ..errors import AssessError, InvalidArgumentError
from .export import Exported
from .scale import check_page_scale
from .server import check_port
from .session import ORDERS, PageOptions, check_assessor

#: A label ``>=`` this counts as relevant for the strategy (as in the page's progress).
STRATEGY_THRESHOLD = 1


@dataclass(frozen=True)
class AssessSettings:
    """What ``irmetrics assess PAIRS`` judges, and how: the pairs file (``irmetrics pool``'s), BEIR's
    ``queries``/``corpus`` (files or a folder), the judging folder ``output``, the ``assessor`` (None: the login
    name), the top grade, the grades' definitions (``scale``: a prompt file; None: the judge's default prompt), an
    adaptive ``strategy`` pooling ``runs`` (each cut at ``depth``) up to ``budget`` labels, the model's labels
    (``prelabels``: a judge's judgments.jsonl) and whether the page shows them, the port on 127.0.0.1, the
    ``order`` pairs come in (``"topic"``: query by query; ``"file"``: the pairs file's), a ``guidelines``
    file (Markdown, shown as text), how many pairs the strategy is asked at a time (``batch``) and the ``seed`` of
    its ties between runs (``irmetrics pool --seed``'s: the same pairs as the first batch it wrote).

    :raises AssessError: an assessor's name, a port, a top grade or an order the page cannot take.
    :raises InvalidArgumentError: ``runs`` without a ``strategy``, a strategy without ``runs`` and a
        ``budget``, a sampled strategy (drawn once, not asked live), a budget below 1.
    """

    pairs: str | os.PathLike[str]
    queries: str | os.PathLike[str]
    corpus: str | os.PathLike[str]
    output: str | os.PathLike[str]
    assessor: str | None = None
    max_grade: int = 3
    scale: str | None = None
    strategy: str | None = None
    runs: tuple[str, ...] = ()
    depth: int | None = None
    budget: int | None = None
    prelabels: str | None = None
    show_prelabels: bool = False
    port: int = 8765
    order: str = "topic"
    guidelines: str | None = None
    batch: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        choice(self.order, "--order", ORDERS, error=AssessError)
        whole(self.batch, "--batch", least=1, error=AssessError)
        whole(self.seed, "--seed", least=0, most=2**32 - 1, error=AssessError)
        if self.assessor is not None:
            check_assessor(self.assessor)
        check_port(self.port)
        check_page_scale(self.max_grade)
        object.__setattr__(self, "runs", tuple(self.runs))
        if self.strategy is None:
            if self.runs:
                raise InvalidArgumentError("--runs are pooled by a strategy: give --strategy too")
            if self.batch != 1:
                raise InvalidArgumentError(
                    "--batch is how many pairs --strategy is asked at a time: give --strategy too"
                )
            if self.seed != 0:
                raise InvalidArgumentError("--seed breaks the ties of --strategy between runs: give --strategy too")
        else:
            if not self.runs or self.budget is None:
                raise InvalidArgumentError("--strategy asks for pairs from --runs up to a --budget: give both")
            from ..pooling.registry import strategy_spec

            if strategy_spec(self.strategy).sampled:
                raise InvalidArgumentError(
                    f"{self.strategy} is a sample drawn once, not asked live: judge its pairs file without --strategy"
                )
        if self.budget is not None:
            whole(self.budget, "--budget", least=1)


@dataclass(frozen=True)
class AssessStart:
    """The judging folder as the page opens: the pairs it holds (``added`` of them new), what ``assessor``
    judged and skipped there before, and the store every key is saved in."""

    assessor: str
    pairs: int
    added: int
    judged: int
    skipped: int
    store: Path


@dataclass(frozen=True)
class AssessResult:
    """What the assessor judged by the time the page stopped (``relevant``: labels >= 1), and what the export on
    stopping wrote (None: nothing labelled yet)."""

    assessor: str
    judged: int
    relevant: int
    exported: Exported | None


def run_assess(
    settings: AssessSettings,
    *,
    started: Callable[[AssessStart], None] | None = None,
    announce: Callable[[str], None] = print,
) -> AssessResult:
    """Serve the judging page of ``settings`` until it stops (Ctrl-C, SIGTERM), then export the folder.

    :param started: told what the folder holds once the store is open and the port bound.
    :param announce: told the page's address once the server answers.
    :raises AssessError: an input the page cannot show (a pair without its texts, an empty pairs file, ...), a
        port that cannot be bound; nothing is made before these are known.
    """
    import getpass

    from .server import listen, require_server, serve
    from .session import JudgingSession
    from .store import judging_folder

    require_server()
    scale, pairs, queries, corpus, prelabels, factory, options = _inputs(settings)
    assessor = settings.assessor if settings.assessor is not None else (getpass.getuser() or "assessor")
    with listen(settings.port) as sock, judging_folder(settings.output, settings.max_grade) as store:
        added = store.add_pairs(pairs)
        if prelabels is not None:
            store.set_prelabels(*prelabels)
        if settings.show_prelabels and not store.prelabels():
            raise InvalidArgumentError("--show-prelabels: no model labels to show (give --prelabels FILE)")
        session = JudgingSession(
            store,
            queries,
            corpus,
            assessor,
            scale,
            budget=settings.budget,
            strategy=factory,
            show_prelabels=settings.show_prelabels,
            options=options,
        )
        if started is not None:
            counts = store.counts(assessor)
            start = AssessStart(assessor, counts["pairs"], added, counts["judged"], counts["skipped"], store.path)
            started(start)
        done = serve(session, sock=sock, announce=announce)
        counts = store.counts(assessor)
    return AssessResult(assessor, counts["judged"], counts["relevant"], done)


def _inputs(settings: AssessSettings) -> tuple[Any, ...]:
    """What the page needs, read and checked before anything is made: the scale, the pairs, the texts, the
    model's labels and answers, the strategy, the topics' fields and the guidelines; a lone surrogate in a text to
    show is said here, once."""
    from ..io.beir_data import beir_file, read_beir_corpus, read_beir_queries
    from ..pooling.pairs import read_pairs
    from .export import read_prelabels
    from .scale import scale_of
    from .session import check_pair_texts, say_unshowable

    scale = scale_of(settings.scale, settings.max_grade)
    pairs = read_pairs(settings.pairs)
    if not pairs:
        raise AssessError(f"{settings.pairs} lists no pair to judge")
    queries_path, corpus_path = beir_file(settings.queries, "queries"), beir_file(settings.corpus, "corpus")
    queries = read_beir_queries(queries_path)
    corpus = read_beir_corpus(corpus_path)
    check_pair_texts(pairs, queries, corpus, (str(settings.pairs), str(queries_path), str(corpus_path)))
    prelabels = None
    if settings.prelabels:
        prelabels = (read_prelabels(settings.prelabels, settings.max_grade), model_answers(settings.prelabels))
    factory, asked = _strategy(settings, queries, corpus)
    say_unshowable([(q, d) for q, d, _ in pairs] + asked, queries, corpus)
    guidelines = read_guidelines(settings.guidelines) if settings.guidelines else None
    options = PageOptions(settings.order, topic_fields(queries_path), guidelines, settings.batch)
    return scale, pairs, queries, corpus, prelabels, factory, options


#: The fields of a topic shown beside its query: TREC topics' (a query object's own, or in BEIR's ``metadata``).
TOPIC_FIELDS = ("description", "narrative")


def topic_fields(path: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """``{qid: {field: text}}`` of the :data:`TOPIC_FIELDS` a BEIR ``queries.jsonl`` holds, at the top of a
    query's object or in its ``metadata`` (a blank one left out; queries without any are absent).

    :raises ParseError: naming the file and line: a field that is not text.
    """
    from ..errors import ParseError
    from ..io.beir_data import read_jsonl

    out: dict[str, dict[str, str]] = {}
    for lineno, obj in read_jsonl(path):
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        for name in TOPIC_FIELDS:
            value = obj.get(name, metadata.get(name))
            if value is not None and not isinstance(value, str):
                raise ParseError(f"{name!r} must be text, found {type(value).__name__}", path=str(path), line=lineno)
            if value and value.strip() and isinstance(obj.get("_id"), str):
                out.setdefault(obj["_id"], {})[name] = value
    return out


def read_guidelines(path: str | os.PathLike[str]) -> str:
    """The text of a guidelines file (UTF-8; Markdown, which the page draws as text).

    :raises ParseError: a file that cannot be read or is not UTF-8 text (naming the line).
    """
    from ..io.text import text_lines

    return "".join(line for _, line in text_lines(path))


def model_answers(path: str | os.PathLike[str]) -> dict[tuple[str, str], str]:
    """``{(query, doc): raw answer}`` of a judge's ``judgments.jsonl`` (its ``raw`` field, where it is text),
    shown on the page on demand; :func:`~.export.read_prelabels` has checked the file's lines."""
    from ..io.beir_data import read_jsonl

    return {
        (obj["query_id"], obj["doc_id"]): obj["raw"]
        for _, obj in read_jsonl(path)
        if isinstance(obj.get("raw"), str)
        and isinstance(obj.get("query_id"), str)
        and isinstance(obj.get("doc_id"), str)
    }


def _strategy(settings: AssessSettings, queries: dict, corpus: dict) -> tuple[Any, list]:
    """The factory of the live strategy (``None`` without one), its runs read and checked once, and the pairs it
    may ask (empty without one)."""
    if settings.strategy is None:
        return None, []
    from ..judges.texts import check_pair_texts
    from ..pooling.registry import make_strategy
    from ..pooling.runs import pool_runs

    pooled = pool_runs(list(settings.runs), depth=settings.depth)
    asked: dict[tuple[str, str], None] = {}
    for r, name in enumerate(pooled.names):
        ranked = [(q, d) for q, docs in zip(pooled.qids, pooled.rankings[r]) for d in docs]

        def say(what: str, q: str, d: str, name: str = name) -> str:
            if what == "query":
                return f"query {q!r} of run {name} has no text in the queries"
            return f"document {d!r} (query {q!r} of run {name}) is not in the corpus"

        check_pair_texts(ranked, queries, corpus, say, AssessError)
        asked.update(dict.fromkeys(ranked))
    name, budget, seed = settings.strategy, settings.budget, settings.seed

    def build(judged: dict[str, dict[str, int]]) -> Any:
        return make_strategy(
            name, pooled, budget=budget, judged=judged, seed=seed, relevance_threshold=STRATEGY_THRESHOLD
        )

    build({})  # a strategy that cannot be built is said now, not on the page
    return build, list(asked)


__all__ = ["AssessResult", "AssessSettings", "AssessStart", "run_assess"]
