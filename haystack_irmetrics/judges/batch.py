"""Judging many pairs: through the cache, ``concurrency`` requests in flight, bounded retries with backoff on
429s, server errors, time-outs and refused connections; and the output folder of ``irmetrics judge``.

Every judgment is kept the moment it is made: committed to the cache and appended to ``judgments.jsonl``.
When the judge fails for good (its retries spent, or an error no retry mends), no new request starts, the
requests in flight finish and are kept, and a :class:`~haystack_irmetrics.errors.JudgeError` names the pair and
the reason; the run started again asks only for what is missing.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..checks import whole
from ..errors import JudgeError, JudgeFailed, NoAnswerError
from ..io.tables import json_text
from .cache import JudgmentCache, judgment_key
from .judge import ScoreJudge, Verdict, scrub

#: Longest wait between two attempts, in seconds (and the most of a server's Retry-After that is honoured).
MAX_BACKOFF = 30.0


@dataclass
class Counts:
    """What judging cost: requests sent (retries and re-asks included), retries, cache hits, pairs whose answers
    held no grade in the form asked for (``unparseable``, after the re-ask), pairs asked a second time
    (``reasked``), and the tokens the server reported (``{}`` when it reported none)."""

    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    unparseable: int = 0
    reasked: int = 0
    tokens: dict[str, int] = field(default_factory=dict)

    def merge(self, other: Counts) -> None:
        """Add ``other``'s counts to these."""
        self.requests += other.requests
        self.retries += other.retries
        self.cache_hits += other.cache_hits
        self.unparseable += other.unparseable
        self.reasked += other.reasked
        for name, n in other.tokens.items():
            self.tokens[name] = self.tokens.get(name, 0) + n

    def add(self, verdict: Verdict) -> None:
        """Count a pair's verdict: unparseable (after its re-ask), re-asked, its tokens."""
        if verdict.label is None:
            self.unparseable += 1
        self.reasked += verdict.reasked
        for name, n in verdict.tokens.items():
            self.tokens[name] = self.tokens.get(name, 0) + n


def _names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


def retry_reason(error: BaseException) -> str | None:
    """Why ``error`` is worth another attempt (``"429 (rate limited)"``, ``"server error 503"``, ``"time-out"``,
    ``"connection failed"``, ``"no answer"``: a reply with no choices or no text), or ``None`` when it is not (a
    bad request, a wrong key)."""
    if isinstance(error, NoAnswerError):
        return "no answer"
    status = getattr(error, "status_code", None)
    if status == 429:
        return "429 (rate limited)"
    if isinstance(status, int) and status >= 500:
        return f"server error {status}"
    names = _names(error)
    if isinstance(error, TimeoutError) or names & {"APITimeoutError", "TimeoutException"}:
        return "time-out"
    if isinstance(error, ConnectionError) or names & {"APIConnectionError", "ConnectError", "TransportError"}:
        return "connection failed"
    return None


def _retry_after(error: BaseException) -> float | None:
    headers = getattr(getattr(error, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return min(max(float(value), 0.0), MAX_BACKOFF) if value is not None else None
    except ValueError:
        return None


def _one_line(error: BaseException, secrets: Sequence[str] = ()) -> str:
    """The error on one line, at most 300 characters, without any of ``secrets`` (a URL's password or key)."""
    text = scrub(" ".join(str(error).split()) or type(error).__name__, secrets)
    return text[:300]


class Asker(Protocol):
    """What :func:`judge_texts` asks: a :class:`~.judge.ChatJudge`, a :class:`~.judge.ScoreJudge`, or another asker
    of a generator (:class:`haystack_irmetrics.usefulness.asker.AnswerAsker`). Its ``fingerprint()`` (of its
    ``settings()``) and the exact texts key the cache; ``read_answers(raw, reask_raw)`` reads a cached answer again
    (version ``parser_version``) with nothing but the answer; ``role`` is what messages call it."""

    role: str
    reask_count: int
    parser_version: int
    secrets: list[str]
    server: str | None

    def fingerprint(self) -> str: ...
    def settings(self) -> dict[str, Any]: ...
    def legacy_fingerprints(self) -> list[str]: ...
    def read_answers(self, raw: str | None, reask_raw: str | None) -> tuple[int | None, bool]: ...
    def warm_up(self) -> None: ...
    def ask(self, query: str, document: str) -> Verdict: ...
    def reask(self, query: str, document: str, first: Verdict) -> Verdict: ...


def _where(judge: Asker) -> str:
    return f" at {judge.server}" if judge.server else ""


def judge_texts(
    judge: Asker,
    texts: Sequence[tuple[str, str]],
    *,
    cache: JudgmentCache,
    on_verdict: Callable[[int, Verdict, bool], None],
    names: Sequence[tuple[str, str]] | None = None,
    concurrency: int = 8,
    retries: int = 4,
    backoff: float = 0.5,
    progress: bool | None = None,
) -> Counts:
    """Judge each ``(query text, document text)`` of ``texts``: the cached ones from the cache (an answer read
    by an older parser is read again from its raw text, no request made), the others by the judge,
    ``on_verdict(index, verdict, cached)`` called (in this thread) as each is known.

    :param names: the ``(query id, doc id)`` of each pair, for messages.
    :param concurrency: requests in flight (a chat judge; a score judge scores in this thread).
    :param retries: further attempts of a request that failed with a 429, a 5xx, a time-out or a refused
        connection; the wait before attempt ``n`` is ``backoff * 2**(n-1)`` seconds (jittered, at most
        :data:`MAX_BACKOFF`), or the server's Retry-After.
    :param progress: a bar of the pairs judged (cached, unparseable, retries) on stderr: ``None`` when stderr is
        a terminal (:mod:`haystack_irmetrics.io.progress`).
    :raises JudgeError: a pair the judge could not judge; every verdict known before is passed on first.
    """
    whole(concurrency, "concurrency", least=1, error=JudgeError)
    whole(retries, "retries", least=0, error=JudgeError)
    from ..io.progress import bar

    counts = Counts()
    fingerprint = judge.fingerprint()
    cache.register(fingerprint, judge.settings())
    keys = [judgment_key(fingerprint, q, d) for q, d in texts]
    cached = _cached(judge, cache, texts, keys, fingerprint)
    shown = bar(len(texts), "judging", "pair", progress)

    def tell(i: int, verdict: Verdict, was_cached: bool) -> None:
        on_verdict(i, verdict, was_cached)
        if shown.disable:  # no bar: its figures cost a formatted dict a pair (a fifth of an instant pair's time)
            return
        shown.update(1)
        shown.set_postfix(
            cached=counts.cache_hits, unparseable=counts.unparseable, retries=counts.retries, refresh=False
        )

    todo: list[int] = []
    first: dict[str, int] = {}
    repeats: list[tuple[int, int]] = []
    for i, key in enumerate(keys):
        verdict = cached.get(key)
        if verdict is not None:
            counts.cache_hits += 1
            counts.add(verdict)
            tell(i, verdict, True)
        elif key in first:
            repeats.append((i, first[key]))  # the same texts twice (two ids, one text): asked once
        else:
            first[key] = i
            todo.append(i)
    done: dict[int, Verdict] = {}

    def keep(i: int, verdict: Verdict) -> None:
        cache.put(keys[i], verdict, fingerprint, judge.parser_version)
        counts.add(verdict)
        done[i] = verdict
        tell(i, verdict, False)

    def name(i: int) -> str:
        return f"query {names[i][0]!r}, document {names[i][1]!r}" if names else f"pair {i}"

    try:
        if isinstance(judge, ScoreJudge):
            if todo:
                verdicts = judge.judge_pairs([texts[i] for i in todo])
                counts.requests += len(todo)
                for i, verdict in zip(todo, verdicts):
                    keep(i, verdict)
        elif todo:
            _ask_all(judge, texts, todo, keep, name, counts, concurrency, retries, backoff)
        for i, source in repeats:
            verdict = done.get(source) or cached.get(keys[source])
            if verdict is not None:
                tell(i, verdict, True)
    finally:
        shown.close()
    return counts


def _cached(
    judge: Asker,
    cache: JudgmentCache,
    texts: Sequence[tuple[str, str]],
    keys: list[str],
    fingerprint: str,
) -> dict[str, Verdict]:
    """The cached verdicts of ``keys``, each read by this judge's reader; a pair cached under one of the judge's
    legacy fingerprints (version 2's, or when the parser's version was part of it) is read again, with no request,
    and kept under ``keys``."""
    version = judge.parser_version
    cached = cache.get_many(set(keys), reread=judge.read_answers, parser=version)
    for legacy in judge.legacy_fingerprints():
        missing = {i: judgment_key(legacy, *texts[i]) for i, key in enumerate(keys) if key not in cached}
        if not missing:
            break
        # Read by a reader of another version (the lenient one keeps version 2, which they were read by).
        found = cache.get_many(set(missing.values()), reread=judge.read_answers, parser=-1, update=False)
        for i, old in missing.items():
            verdict = found.get(old)
            if verdict is not None:
                cached[keys[i]] = verdict
                cache.put(keys[i], verdict, fingerprint, version)
    return cached


def _ask_all(
    judge: Asker,
    texts: Sequence[tuple[str, str]],
    todo: list[int],
    keep: Callable[[int, Verdict], None],
    name: Callable[[int], str],
    counts: Counts,
    concurrency: int,
    retries: int,
    backoff: float,
) -> None:
    stop = threading.Event()
    lock = threading.Lock()
    secrets = judge.secrets
    judge.warm_up()

    def attempt(i: int, send: Callable[[], Verdict]) -> Verdict | None:
        """One request (``send``), retried on what a retry mends; ``None`` once the run is stopping."""
        attempt = 0
        while True:
            if stop.is_set():
                return None
            with lock:
                counts.requests += 1
                counts.retries += attempt > 0
            try:
                return send()
            except Exception as e:
                reason = retry_reason(e)
                if reason is None:
                    raise JudgeFailed(
                        f"the {judge.role} failed on {name(i)}: {type(e).__name__}: {_one_line(e, secrets)}"
                    ) from e
                if attempt >= retries:
                    if reason == "connection failed":
                        raise JudgeFailed(
                            f"cannot reach the {judge.role}{_where(judge)} ({_one_line(e, secrets)}) after {attempt + 1} "
                            "attempts"
                        ) from e
                    raise JudgeFailed(
                        f"the {judge.role} failed on {name(i)}: {reason} ({_one_line(e, secrets)}) after {attempt + 1} "
                        "attempts"
                    ) from e
                attempt += 1
                wait = _retry_after(e)
                if wait is None:
                    wait = min(backoff * 2 ** (attempt - 1), MAX_BACKOFF) * random.uniform(0.5, 1.0)
                stop.wait(wait)

    def ask(i: int) -> Verdict | None:
        """The pair's verdict: its answer, and when that is not in the form asked for, one re-ask."""
        first = attempt(i, lambda: judge.ask(*texts[i]))
        if first is None or first.label is not None or not judge.reask_count:
            return first
        return attempt(i, lambda: judge.reask(*texts[i], first))

    failure: str | None = None
    with ThreadPoolExecutor(max_workers=min(concurrency, len(todo))) as pool:
        futures = {pool.submit(ask, i): i for i in todo}
        try:
            for future in as_completed(futures):
                try:
                    verdict = future.result()
                except JudgeFailed as e:
                    stop.set()
                    failure = failure or str(e)
                    continue
                if verdict is not None:
                    keep(futures[future], verdict)
        except BaseException:  # Ctrl-C: start nothing more; the finished ones are kept already
            stop.set()
            for future in futures:
                future.cancel()
            raise
    if failure is not None:
        raise JudgeError(failure + "; the judgments made so far are kept (run again to go on)")


def wait_seconds(started: float) -> float:
    """Seconds since ``started`` (``time.perf_counter``), rounded to 3 decimals."""
    return round(time.perf_counter() - started, 3)


def jsonl_line(query_id: str, doc_id: str, verdict: Verdict, fingerprint: str, **extra: Any) -> str:
    """One line of ``judgments.jsonl`` (a re-asked pair: ``reask_raw``, the second answer, and ``label_from``,
    ``"reask"`` when the grade is the second answer's)."""
    row = {"query_id": query_id, "doc_id": doc_id, "label": verdict.label, "judge": fingerprint, "raw": verdict.raw}
    if verdict.reasked:
        row.update(reask_raw=verdict.reask_raw, label_from="reask" if verdict.from_reask else None)
    row.update(extra)
    return json_text(row, ensure_ascii=False) + "\n"


__all__ = ["MAX_BACKOFF", "Asker", "Counts", "jsonl_line", "judge_texts", "retry_reason"]
