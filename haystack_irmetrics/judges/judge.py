"""The two kinds of model judge: a chat model asked for a grade (:class:`ChatJudge`), and a component that
scores (query, document) pairs, its scores turned into grades by cut points learned on pairs people labelled
(:class:`ScoreJudge`, :func:`learn_cut_points`).

Each judge has a ``fingerprint``: the SHA-256 of its settings (the generator's or scorer's serialized
parameters but its API key and its client's time-out and retries, the server's URL without credentials, the
prompt, the grade scale, the temperature, the cut points). The judgment cache is keyed by it, so a changed prompt,
model or server misses: two servers may serve different models under one name. How an answer is read is not in
it: the cache keeps each raw answer, and a judge reads cached answers again (:meth:`ChatJudge.read`) when the
parser changed (:data:`PARSER_VERSION`), with no new request. What is asked for is: the answer form
(``response_format``, sent or not), the re-ask count and the lenient reader, when chosen.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..checks import is_whole, number, whole
from ..errors import JudgeError, NoAnswerError
from .grades import MAX_ANSWER_CHARS, REMINDER, answer_form, response_format
from .prompt import SYSTEM_PROMPT_V2, USER_TEMPLATE, fill, parse_grade, sendable
from .prompt import system_prompt as default_system_prompt

#: Bumped when the reading of answers changes what an answer reads as: cached answers of another version are
#: read again from their raw text (version 2: the free-text grammar, now :mod:`.lenient`; version 3: the
#: contract of :mod:`.grades`).
PARSER_VERSION = 3
#: The version of the lenient reader (``lenient=True``): the free-text grammar of version 2, unchanged.
LENIENT_PARSER_VERSION = 2
#: The settings a judge of version 2 did not have: left out, they give its fingerprint, under which its cached
#: answers are found and read again (:meth:`ChatJudge.legacy_fingerprints`).
CONTRACT_SETTINGS = ("response_format", "reask", "reader")
#: Query parameters of a server URL that are kept as they are when the URL is recorded (every other value may be
#: a key, and is recorded as ``***``).
PUBLIC_QUERY_PARAMETERS = frozenset({"api-version", "api_version", "version"})
#: A chat generator's parameters that change how it is reached, not what it answers: left out of the
#: fingerprint (the API key is never written anywhere). The server's URL is in it, as ``server`` (see
#: :func:`server_of`): two servers may serve different models under the same name.
NOT_IN_FINGERPRINT = frozenset(
    {"api_key", "api_base_url", "timeout", "max_retries", "http_client_kwargs", "streaming_callback"}
)


def redact_url(url: str) -> str:
    """``url`` as it may be written anywhere: without a user name and password, each query value but the API
    version as ``***``, no fragment.

    >>> redact_url("http://user:pw@host:8000/v1?key=sk-1&api-version=2024-06-01#x")
    'http://host:8000/v1?key=%2A%2A%2A&api-version=2024-06-01'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL one can take apart: nothing of it is written
        return "(a server URL that cannot be read)"
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    query = urlencode(
        [(k, v if k.lower() in PUBLIC_QUERY_PARAMETERS else "***") for k, v in parse_qsl(parts.query, True)]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def url_secrets(url: str | None) -> list[str]:
    """The parts of ``url`` that must never be written: its user name and password and its query values (but the
    API version), longest first, so that :func:`scrub` removes each from a message."""
    if not url:
        return []
    try:
        parts = urlsplit(str(url))
        found = [parts.username, parts.password, parts.netloc.rpartition("@")[0]]
        found += [v for k, v in parse_qsl(parts.query, True) if k.lower() not in PUBLIC_QUERY_PARAMETERS]
    except ValueError:
        found = [str(url)]
    return sorted({x for x in found if x}, key=len, reverse=True)


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with each of ``secrets`` (and its URL-quoted form) replaced by ``***``."""
    from urllib.parse import quote

    for secret in secrets:
        for form in {secret, quote(secret, safe="")}:
            text = text.replace(form, "***")
    return text


def server_of(params: dict[str, Any]) -> str | None:
    """The server a generator's parameters name (``api_base_url`` without credentials and without a trailing
    ``/``, :func:`redact_url`), or ``None``.

    >>> server_of({"api_base_url": "http://localhost:8000/v1/"}), server_of({"model": "gpt-4o-mini"})
    ('http://localhost:8000/v1', None)
    """
    url = params.get("api_base_url")
    return redact_url(str(url)).rstrip("/") if url else None


@dataclass(frozen=True)
class Verdict:
    """One judgment: the grade (``None`` when the answer held none), the raw answer and the tokens the server
    reported (``{"prompt": .., "completion": ..}``, empty when it reported none). ``reask_raw`` is the answer to
    the reminder when the first was not in the contract, and ``from_reask`` whether the grade was read from it."""

    label: int | None
    raw: str | None
    tokens: dict[str, int] = field(default_factory=dict)
    reask_raw: str | None = None
    from_reask: bool = False

    @property
    def reasked(self) -> bool:
        """Whether the judge was asked a second time for this pair."""
        return self.reask_raw is not None


def token_counts(usage: Any) -> dict[str, int]:
    """The prompt and completion tokens a server reported, each kept only when it is a whole number >= 0 (a server
    may send anything there)."""
    if not isinstance(usage, dict):
        return {}
    out = {}
    for name, key in (("prompt", "prompt_tokens"), ("completion", "completion_tokens")):
        value = usage.get(key)
        if is_whole(value) and value >= 0:
            out[name] = int(value)
    return out


def serialized(component: Any, name: str) -> dict[str, Any]:
    """``component`` as Haystack serializes it (``type`` and ``init_parameters``). A key given as a token
    (which Haystack refuses to serialize) is serialized as an unset variable: settings never hold a key; the HTTP
    client's settings are left out (they say how the server is reached, not what it answers)."""
    import copy

    from haystack.core.serialization import component_to_dict
    from haystack.utils import Secret

    if getattr(component, "http_client_kwargs", None):
        # How the server is reached (a transport object Haystack cannot serialize), never part of the settings.
        component = copy.copy(component)
        component.http_client_kwargs = None
    try:
        return component_to_dict(component, name)
    except ValueError:
        if not isinstance(getattr(component, "api_key", None), Secret):
            raise
        shown = copy.copy(component)
        shown.api_key = Secret.from_env_var("IRMETRICS_JUDGE_KEY_NOT_SHOWN", strict=False)
        return component_to_dict(shown, name)


def fingerprint_of(settings: dict[str, Any]) -> str:
    """SHA-256 (hex) of ``settings`` as canonical JSON."""
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def add_tokens(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    """Two requests' token counts added."""
    return {name: a.get(name, 0) + b.get(name, 0) for name in {**a, **b}}


def _refuses_format(error: BaseException) -> bool:
    """Whether ``error`` is a server's 400 that names ``response_format`` (a server without structured output)."""
    return getattr(error, "status_code", None) == 400 and "response_format" in str(error)


def _check_grade_scale(max_grade: Any) -> int:
    return whole(max_grade, "max_grade", least=1, most=9, error=JudgeError)


class ChatAsker:
    """What every asker of a chat generator shares (the judge; :mod:`haystack_irmetrics.usefulness`'s asker): the
    generator, its part of a fingerprint, its server's URL as written and its secrets, one warm-up, one request's
    answer. ``role`` is what messages call it (:func:`~.batch.judge_texts`)."""

    role = "judge"

    def __init__(self, generator: Any, error: type[Exception] = JudgeError) -> None:
        if not callable(getattr(generator, "run", None)):
            raise error(f"the {self.role} must be a Haystack chat generator, got {type(generator).__name__}")
        self.generator = generator
        self._takes_kwargs = "generation_kwargs" in inspect.signature(generator.run).parameters
        self._warm = False

    def generator_settings(self) -> dict[str, Any]:
        """The generator's part of a fingerprint: ``generator`` (no API key) and ``server``, when it names one (one
        with no server keeps the fingerprint it had before the server was in it: its cached answers still answer)."""
        data = serialized(self.generator, "generator")
        given = data.get("init_parameters") or {}
        params = {k: v for k, v in given.items() if k not in NOT_IN_FINGERPRINT}
        server = server_of(given)
        return {
            **({"server": server} if server else {}),
            "generator": {"type": data.get("type"), "init_parameters": params},
        }

    @property
    def secrets(self) -> list[str]:
        """What of the generator's server URL must never be written (:func:`url_secrets`)."""
        return url_secrets(getattr(self.generator, "api_base_url", None))

    @property
    def server(self) -> str | None:
        """The generator's server URL as it may be written (:func:`redact_url`), or ``None``."""
        url = getattr(self.generator, "api_base_url", None)
        return redact_url(str(url)) if url else None

    def warm_up(self) -> None:
        """Warm the generator up once (Haystack components that load a model do it here)."""
        if not self._warm:
            if callable(getattr(self.generator, "warm_up", None)):
                self.generator.warm_up()
            self._warm = True

    def _run(self, messages: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        extra = {"generation_kwargs": kwargs} if kwargs else {}
        return self.generator.run(messages=messages, **extra).get("replies") or []

    @staticmethod
    def _answer(replies: list[Any], empty: bool = False) -> tuple[str, dict[str, int]]:
        """The first reply's text (cut to :data:`~.grades.MAX_ANSWER_CHARS`) and tokens. A reply with no choices is a
        failed request (retried), never an answer; so is a choice with no text, unless ``empty`` (then ``""``)."""
        reply = replies[0] if replies else None
        text = reply if isinstance(reply, str) else getattr(reply, "text", None)
        if not replies or (not empty and (not isinstance(text, str) or not text.strip())):
            raise NoAnswerError("the server's reply held no answer" + ("" if replies else " (no choices)"))
        meta = getattr(reply, "meta", None)
        tokens = token_counts(meta.get("usage") if isinstance(meta, dict) else None)
        text = text if isinstance(text, str) else ""
        return sendable(text[:MAX_ANSWER_CHARS]), tokens  # kept in the cache and its files: UTF-8 must carry it


class ChatJudge(ChatAsker):
    """Ask a Haystack chat generator for a grade of each pair, one request per pair (and at most ``reask`` more
    when an answer is not in the form asked for).

    :param generator: any chat generator (``run(messages=...)`` returning ``replies``), e.g. Haystack's
        ``OpenAIChatGenerator`` with ``api_base_url`` for an OpenAI-compatible server.
    :param system_prompt: the system message (default :func:`~.prompt.system_prompt`, which asks for the answer
        form of :mod:`.grades`; a prompt of one's own must ask for one of the forms read).
    :param user_template: the user message with ``{query}`` and ``{document}`` (default
        :data:`~.prompt.USER_TEMPLATE`).
    :param max_grade: the top grade (answers above it are unparseable).
    :param temperature: passed as ``generation_kwargs={"temperature": ...}`` on each call when the generator
        takes ``generation_kwargs``; ``None`` leaves the generator's own.
    :param max_document_chars: a longer document is cut to its first this many characters before it is sent
        (a server with a short context refuses the whole request otherwise); ``None`` sends it whole.
    :param response_format: send the answer form as ``response_format`` (a JSON schema, :func:`.grades.response_format`)
        with each request, when the generator takes ``generation_kwargs``; a server answering 400 naming it is
        asked again without it, and so is every later request (:attr:`format_refused`).
    :param reask: how many more requests an answer outside the contract gets, each with a reminder of the form
        (0 or 1).
    :param lenient: read answers with the free-text grammar of :mod:`.lenient` (opt-in: it can misread).
    """

    kind = "chat"

    def __init__(
        self,
        generator: Any,
        *,
        system_prompt: str | None = None,
        user_template: str | None = None,
        max_grade: int = 3,
        temperature: float | None = 0.0,
        max_document_chars: int | None = None,
        response_format: bool = True,
        reask: int = 1,
        lenient: bool = False,
    ) -> None:
        super().__init__(generator)
        self.max_grade = _check_grade_scale(max_grade)
        self._default_prompt = system_prompt is None
        self.system_prompt = default_system_prompt(self.max_grade) if system_prompt is None else system_prompt
        self.user_template = USER_TEMPLATE if user_template is None else user_template
        for placeholder in ("{query}", "{document}"):
            if placeholder not in self.user_template:
                raise JudgeError(f"the judge's user template has no {placeholder} placeholder")
        self.temperature = temperature
        if max_document_chars is not None:
            whole(max_document_chars, "max_document_chars", least=1, error=JudgeError)
        self.max_document_chars = max_document_chars
        for name, value in (("response_format", response_format), ("lenient", lenient)):
            if not isinstance(value, bool):
                raise JudgeError(f"{name} must be true or false, got {value!r}")
        if isinstance(reask, bool) or reask not in (0, 1):
            raise JudgeError(f"reask must be 0 or 1 (the re-asks an answer outside the form gets), got {reask!r}")
        self.response_format = response_format and self._takes_kwargs
        self.reask_count = reask
        self.lenient = lenient
        #: Whether the server refused ``response_format`` (a 400 naming it): later requests go without it.
        self.format_refused = False

    @property
    def parser_version(self) -> int:
        """The version of this judge's reader (:data:`PARSER_VERSION`, or :data:`LENIENT_PARSER_VERSION`)."""
        return LENIENT_PARSER_VERSION if self.lenient else PARSER_VERSION

    def settings(self) -> dict[str, Any]:
        """What the fingerprint is made of (no API key)."""
        return {
            **self.generator_settings(),
            "kind": self.kind,
            "system_prompt": self.system_prompt,
            "user_template": self.user_template,
            "max_grade": self.max_grade,
            "temperature": self.temperature,
            "max_document_chars": self.max_document_chars,
            "response_format": response_format(self.max_grade) if self.response_format else None,
            "reask": self.reask_count,
            **({"reader": "lenient"} if self.lenient else {}),
        }

    def fingerprint(self) -> str:
        """The SHA-256 of :meth:`settings`."""
        return fingerprint_of(self.settings())

    def legacy_fingerprints(self) -> list[str]:
        """The fingerprints this judge had before: without the answer form, the re-ask and the reader (version 2),
        and with the parser's version in it (version 1). Judgments cached then are found under them and read
        again by this judge's reader, with no request."""
        before = {k: v for k, v in self.settings().items() if k not in CONTRACT_SETTINGS}
        if self._default_prompt:
            before["system_prompt"] = SYSTEM_PROMPT_V2  # version 2's default prompt, whatever the scale
        return [fingerprint_of(before), fingerprint_of({**before, "parser": 1})]

    def read(self, raw: str | None) -> int | None:
        """The grade of one answer (:func:`~.prompt.parse_grade` on this judge's scale, by its reader)."""
        return parse_grade(raw, self.max_grade, lenient=self.lenient)

    def read_answers(self, raw: str | None, reask_raw: str | None) -> tuple[int | None, bool]:
        """The grade of a pair's answers (the first, then the re-asked one) and whether it came from the second."""
        label = self.read(raw)
        if label is None and reask_raw is not None:
            again = self.read(reask_raw)
            return again, again is not None
        return label, False

    def _messages(self, query: str, document: str) -> list[Any]:
        from haystack.dataclasses import ChatMessage

        return [
            ChatMessage.from_system(sendable(self.system_prompt)),
            ChatMessage.from_user(sendable(fill(self.user_template, query, document[: self.max_document_chars]))),
        ]

    def _send(self, messages: list[Any]) -> tuple[str, dict[str, int]]:
        """One request: the answer's text (cut to :data:`~.grades.MAX_ANSWER_CHARS`) and its tokens. A 400 naming
        ``response_format`` is sent once more without it (and every later request goes without it)."""
        kwargs: dict[str, Any] = {}
        if self._takes_kwargs and self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.response_format and not self.format_refused:
            kwargs["response_format"] = response_format(self.max_grade)
        self.warm_up()
        try:
            replies = self._run(messages, kwargs)
        except Exception as e:
            if "response_format" not in kwargs or not _refuses_format(e):
                raise
            self.format_refused = True
            replies = self._run(messages, {k: v for k, v in kwargs.items() if k != "response_format"})
        return self._answer(replies)

    def ask(self, query: str, document: str) -> Verdict:
        """One request: the grade of ``document`` for ``query``. Errors of the generator (a refused
        connection, a 429, a time-out) are raised as they come; the batch runner retries them."""
        text, tokens = self._send(self._messages(query, document))
        return Verdict(self.read(text), text, tokens)

    def grade(self, query: str, document: str) -> Verdict:
        """:meth:`ask`, then :meth:`reask` when the answer is not in the contract and the judge re-asks."""
        verdict = self.ask(query, document)
        if verdict.label is None and self.reask_count:
            verdict = self.reask(query, document, verdict)
        return verdict

    def reask(self, query: str, document: str, first: Verdict) -> Verdict:
        """One more request after ``first``, an answer outside the contract: the conversation so far and a reminder
        of the form (:data:`~.grades.REMINDER`). The verdict keeps both answers; its grade is the second's."""
        from haystack.dataclasses import ChatMessage

        messages = [
            *self._messages(query, document),
            ChatMessage.from_assistant(first.raw or ""),
            ChatMessage.from_user(REMINDER.format(form=answer_form(self.max_grade))),
        ]
        text, tokens = self._send(messages)
        label = self.read(text)
        return Verdict(label, first.raw, add_tokens(first.tokens, tokens), text, label is not None)


def learn_cut_points(scores: Sequence[float], labels: Sequence[int], max_grade: int = 3) -> list[float]:
    """Cut points ``t_1 <= ... <= t_max_grade`` that turn a score into a grade (``grade = #{j: score >= t_j}``),
    chosen to agree with the most human labels (exact matches), by dynamic programming over the distinct
    scores in order (equal scores always get one grade). A cut sits halfway between the two scores it
    separates; a grade no score reaches gets ``inf``, a grade every score reaches ``-inf``.

    :raises JudgeError: fewer than two pairs, lengths that differ, a score that is not finite, a label that is
        not a whole number in ``0..max_grade``.

    Usage::

        >>> learn_cut_points([0.1, 0.2, 0.5, 0.6, 0.9], [0, 0, 1, 1, 3])
        [0.35, 0.75, 0.75]
    """
    max_grade = _check_grade_scale(max_grade)
    if len(scores) != len(labels):
        raise JudgeError(f"{len(scores)} scores but {len(labels)} labels to learn cut points from")
    if len(scores) < 2:
        raise JudgeError("cut points need at least two human-labelled pairs")
    pairs = []
    for i, (s, g) in enumerate(zip(scores, labels)):
        number(s, f"the score of labelled pair {i}", error=JudgeError)
        whole(g, f"the label of labelled pair {i}", least=0, most=max_grade, error=JudgeError)
        pairs.append((float(s), g))
    pairs.sort()
    values: list[float] = []
    counts: list[list[int]] = []
    for s, g in pairs:
        if not values or s != values[-1]:
            values.append(s)
            counts.append([0] * (max_grade + 1))
        counts[-1][g] += 1
    grades = range(max_grade + 1)
    best = [list(counts[0])]
    for row in counts[1:]:
        prev, run_max = best[-1], -1
        cur = []
        for g in grades:
            run_max = max(run_max, prev[g])
            cur.append(run_max + row[g])
        best.append(cur)
    # Walk back: the grade of each distinct score, the highest best grade last (ties: the lower grade).
    assigned = [0] * len(values)
    g = max(grades, key=lambda x: (best[-1][x], -x))
    for i in range(len(values) - 1, -1, -1):
        assigned[i] = g
        if i:
            g = max(range(g + 1), key=lambda x: (best[i - 1][x], -x))
    cuts = []
    for grade in range(1, max_grade + 1):
        first = next((i for i, a in enumerate(assigned) if a >= grade), None)
        if first is None:
            cuts.append(math.inf)
        elif first == 0:
            cuts.append(-math.inf)
        else:
            cuts.append((values[first - 1] + values[first]) / 2)
    return cuts


def grade_of(score: float, cut_points: Sequence[float]) -> int | None:
    """The grade of ``score``: how many cut points it reaches; ``None`` (unparseable) when the score is not a
    number (NaN): a score that says nothing is never grade 0."""
    if score != score:
        return None
    return sum(1 for t in cut_points if score >= t)


def check_cut_points(cut_points: Sequence[Any], max_grade: int) -> list[float]:
    """``cut_points`` as floats: ``max_grade`` numbers, none NaN, in increasing order (a cut may equal the one
    before it: that grade is skipped). ``inf`` is a grade no score reaches and ``-inf`` one every score reaches,
    as :func:`learn_cut_points` gives them; they are written in JSON as the strings ``"inf"`` and ``"-inf"``,
    which are read back here.

    :raises JudgeError: otherwise, naming the first wrong cut point.
    """
    if isinstance(cut_points, (str, bytes)) or not isinstance(cut_points, Sequence):
        raise JudgeError(f"cut_points must be a list of {max_grade} numbers, got {cut_points!r}")
    if len(cut_points) != max_grade:
        raise JudgeError(f"cut_points must be {max_grade} numbers (one per grade above 0), got {len(cut_points)}")
    out: list[float] = []
    for i, t in enumerate(cut_points):
        value = t
        if isinstance(t, str) and t.strip().lower() in ("inf", "+inf", "-inf"):
            value = float(t)
        number(value, f"cut point {i + 1}", finite=False, error=JudgeError)
        if out and value < out[-1]:
            raise JudgeError(f"cut point {i + 1} ({t!r}) is below the one before it ({out[-1]!r}): they must increase")
        out.append(float(value))
    return out


def cut_points_json(cut_points: Sequence[float]) -> list[float | str]:
    """Cut points as JSON holds them: a finite cut as a number, an infinite one as ``"inf"`` or ``"-inf"``."""
    return [t if math.isfinite(t) else ("inf" if t > 0 else "-inf") for t in cut_points]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    import numpy as np

    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y / norm) if norm else 0.0


class ScoreJudge:
    """Grade pairs with a component that scores them: a Haystack ranker (``run(query, documents)``, the
    documents' ``score``), a document embedder (``run(documents)``: the query embedded as a Document too) or a
    text embedder (``run(text)``); an embedder's score is the cosine of the two embeddings. Scores become
    grades through ``cut_points`` (:func:`learn_cut_points`, or :meth:`fit`).
    """

    kind = "scores"
    role = "judge"

    def __init__(self, scorer: Any, *, cut_points: Sequence[float] | None = None, max_grade: int = 3) -> None:
        run = getattr(scorer, "run", None)
        if not callable(run):
            raise JudgeError(f"the judge's scorer must be a Haystack component, got {type(scorer).__name__}")
        params = inspect.signature(run).parameters
        if "query" in params and "documents" in params:
            self.mode = "ranker"
        elif "documents" in params:
            self.mode = "document_embedder"
        elif "text" in params:
            self.mode = "text_embedder"
        else:
            raise JudgeError(
                f"{type(scorer).__name__} scores no (query, document) pair: it is neither a ranker "
                "(run(query, documents)) nor an embedder (run(documents) or run(text))"
            )
        self._top_k = "top_k" in params
        self.scorer = scorer
        self.max_grade = _check_grade_scale(max_grade)
        self.cut_points = None if cut_points is None else check_cut_points(cut_points, self.max_grade)
        self._warm = False

    def settings(self) -> dict[str, Any]:
        """What the fingerprint is made of."""
        data = serialized(self.scorer, "scorer")
        return {
            "kind": self.kind,
            "scorer": data,
            "cut_points": [repr(t) for t in self.cut_points or []],
            "max_grade": self.max_grade,
        }

    def fingerprint(self) -> str:
        """The SHA-256 of :meth:`settings`."""
        return fingerprint_of(self.settings())

    def legacy_fingerprints(self) -> list[str]:
        """None: a score judge's fingerprint never held the parser's version."""
        return []

    #: A score judge asks no question: nothing to re-ask, no answer form, one reader.
    reask_count = 0
    response_format = False
    format_refused = False
    lenient = False
    parser_version = PARSER_VERSION

    def read_answers(self, raw: str | None, reask_raw: str | None) -> tuple[int | None, bool]:
        """The grade of a cached score (:meth:`read`); a score is never re-asked."""
        return self.read(raw), False

    def read(self, raw: str | None) -> int | None:
        """The grade of a cached score (its ``repr``), by the cut points: ``None`` for a score that is not a
        number."""
        try:
            score = float(raw) if raw is not None else math.nan
        except ValueError:
            return None
        return grade_of(score, self.cut_points or [])

    #: A scorer reaches no server: nothing to keep out of messages, no server to record.
    secrets: ClassVar[list[str]] = []
    server: ClassVar[str | None] = None

    def warm_up(self) -> None:
        """Warm the scorer up once (loads its model)."""
        if not self._warm:
            if callable(getattr(self.scorer, "warm_up", None)):
                self.scorer.warm_up()
            self._warm = True

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """The scorer's score of each document for ``query``."""
        from haystack import Document

        self.warm_up()
        docs = [Document(id=str(i), content=text) for i, text in enumerate(documents)]
        if self.mode == "ranker":
            kwargs = {"top_k": len(docs)} if self._top_k else {}
            out = self.scorer.run(query=query, documents=docs, **kwargs)["documents"]
            by_id = {d.id: d.score for d in out}
            missing = [i for i in range(len(docs)) if by_id.get(str(i)) is None]
            if missing:
                raise JudgeError(f"{type(self.scorer).__name__} gave no score to {len(missing)} of the documents")
            return [float(by_id[str(i)]) for i in range(len(docs))]
        if self.mode == "document_embedder":
            out = self.scorer.run(documents=[Document(id="query", content=query), *docs])["documents"]
            vectors = {d.id: d.embedding for d in out}
            return [_cosine(vectors["query"], vectors[str(i)]) for i in range(len(docs))]
        q = self.scorer.run(text=query)["embedding"]
        return [_cosine(q, self.scorer.run(text=text)["embedding"]) for text in documents]

    def fit(self, pairs: Sequence[tuple[str, str]], labels: Sequence[int]) -> list[float]:
        """Learn the cut points from human-labelled ``(query text, document text)`` pairs; returns them."""
        scores = self.score_pairs(pairs)
        self.cut_points = learn_cut_points(scores, labels, self.max_grade)
        return self.cut_points

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The score of each ``(query text, document text)`` pair: a ranker scores the pairs of one query
        together; an embedder embeds each distinct text once."""
        if self.mode != "ranker" and pairs:
            return self._cosines(pairs)
        by_query: dict[str, list[int]] = {}
        for i, (q, _) in enumerate(pairs):
            by_query.setdefault(q, []).append(i)
        out = [0.0] * len(pairs)
        for q, rows in by_query.items():
            for row, value in zip(rows, self.score(q, [pairs[r][1] for r in rows])):
                out[row] = value
        return out

    def _cosines(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        from haystack import Document

        self.warm_up()
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        if self.mode == "document_embedder":
            docs = [Document(id=str(i), content=text) for i, text in enumerate(texts)]
            out = self.scorer.run(documents=docs)["documents"]
            by_id = {d.id: d.embedding for d in out}
            vectors = {text: by_id[str(i)] for i, text in enumerate(texts)}
        else:
            vectors = {text: self.scorer.run(text=text)["embedding"] for text in texts}
        return [_cosine(vectors[q], vectors[d]) for q, d in pairs]

    def judge_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        """A verdict per pair: its grade, and its score as the raw answer."""
        if self.cut_points is None:
            raise JudgeError("the score judge has no cut points: learn them on human-labelled pairs first (fit)")
        return [Verdict(grade_of(s, self.cut_points), repr(s)) for s in self.score_pairs(pairs)]


def make_judge(
    generator: Any = None,
    scorer: Any = None,
    *,
    cut_points: Sequence[float] | None = None,
    max_grade: int = 3,
    system_prompt: str | None = None,
    user_template: str | None = None,
    temperature: float | None = 0.0,
    response_format: bool = True,
    reask: int = 1,
    lenient: bool = False,
) -> ChatJudge | ScoreJudge:
    """The judge of a generator or a scorer (exactly one of them).

    :raises JudgeError: both or neither given.
    """
    if (generator is None) == (scorer is None):
        raise JudgeError(
            "a RelevanceJudge needs exactly one of 'generator' (a chat generator) and 'scorer' (a ranker or "
            f"embedder), got {'both' if generator is not None else 'neither'}"
        )
    if generator is not None:
        return ChatJudge(
            generator,
            system_prompt=system_prompt,
            user_template=user_template,
            max_grade=max_grade,
            temperature=temperature,
            response_format=response_format,
            reask=reask,
            lenient=lenient,
        )
    return ScoreJudge(scorer, cut_points=cut_points, max_grade=max_grade)


__all__ = ["ChatJudge", "ScoreJudge", "Verdict", "grade_of", "learn_cut_points", "make_judge"]
