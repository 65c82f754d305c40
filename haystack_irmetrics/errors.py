"""The exception hierarchy of haystack_irmetrics.

Every error the library raises on bad input is an :class:`IRMetricsError`, a subclass of
:class:`ValueError`, so ``except ValueError`` keeps working for callers that do not care about
the details. Each error names the query, document, file line or row it is about.

Every exception class of the package is defined here. Three are internal signals, bare :class:`Exception`
subclasses that a module raises and catches itself and that never reach a caller: :class:`NotStreamable`
(:mod:`~haystack_irmetrics.io._fast` to :mod:`~haystack_irmetrics.io.trec`: read the file line by line),
:class:`NotProduced` (:mod:`~haystack_irmetrics.integration.fastpath` to
:mod:`~haystack_irmetrics.integration.queries`: ``Pipeline.run`` takes over) and :class:`JudgeFailed`
(:mod:`~haystack_irmetrics.judges.batch`: a pair failed for good, said as a
:class:`JudgeError` once the requests in flight are done). They are not in ``__all__``.
"""

from __future__ import annotations

#: Longest echo of one input value (a line, an id, a vote) inside a message, in characters.
ECHO_LIMIT = 200
#: Longest message of any :class:`IRMetricsError`, in characters: a guard behind :func:`shorten`, so
#: no input (a 10 MB line, a huge id) can make an error message, or the CLI's stderr, large.
MESSAGE_LIMIT = 2000


def shorten(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters (its head, ``...`` and how much was left out).

    Every message that echoes an input value cuts it here.
    """
    if len(text) <= limit:
        return text
    note = f"... [{len(text):,} characters]"
    return text[: max(limit - len(note), 0)] + note


class IRMetricsError(ValueError):
    """Base class of every input error raised by haystack_irmetrics.

    A message longer than :data:`MESSAGE_LIMIT` characters is cut (its head and its tail are kept).
    """

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str) and len(args[0]) > MESSAGE_LIMIT:
            text = args[0]
            half = MESSAGE_LIMIT // 2 - 40
            args = (f"{text[:half]} ...[{len(text) - 2 * half:,} characters cut]... {text[-half:]}",)
        super().__init__(*args)


class InvalidCutoffError(IRMetricsError):
    """A cutoff k is not a positive integer (pytrec_eval crashes on k <= 0)."""


class DuplicateCutoffError(IRMetricsError):
    """The same cutoff was requested twice (BEIR silently doubles the value)."""


class UnknownMeasureError(IRMetricsError):
    """A measure name could not be parsed or is not registered."""


class InvalidPolicyError(IRMetricsError):
    """An unknown preset or policy value was passed."""


class InvalidArgumentError(IRMetricsError):
    """An argument that is no evaluation policy is out of range or malformed: a figure's size, dpi or
    file suffix, two systems given the same name."""


class InvalidScoreError(IRMetricsError):
    """A retrieval score is missing, non-numeric, NaN or infinite."""


class InvalidLabelError(IRMetricsError):
    """A relevance label is missing, non-numeric, NaN or infinite."""


class InvalidIdError(IRMetricsError):
    """A query or document id is not a string."""


class DuplicateDocumentError(IRMetricsError):
    """The same document appears twice for one query of a run or qrels."""


class SplitQueryError(IRMetricsError):
    """A run given in pieces has one query in two pieces (each piece must hold whole queries)."""


class EmptyInputError(IRMetricsError):
    """The qrels or the results contain no query at all."""


class InvalidDocumentsError(IRMetricsError):
    """An evaluator input is not a list of lists of Haystack ``Document`` objects."""


class LengthMismatchError(EmptyInputError):
    """Inputs that go together (ground truth, retrievals, query ids: one per query) differ in length.

    An :class:`EmptyInputError` too (what earlier versions raised), so ``except EmptyInputError`` keeps working.
    """


class NoOverlapError(IRMetricsError):
    """No query is shared by the results and the (non-empty) qrels."""


class ParseError(IRMetricsError):
    """A line of an input file is malformed; the message names the file and line number."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
        self.path = path
        self.line = line


class MissingDependencyError(IRMetricsError, ImportError):
    """An optional package a feature needs is not installed; the message names the pip extra to install.

    Also an :class:`ImportError`, so ``except ImportError`` keeps working.
    """


class FeedbackError(IRMetricsError):
    """Base class of the errors raised while reading, aggregating or scoring feedback logs."""


class MalformedRowError(FeedbackError):
    """A row of a feedback log cannot be used; the message names the source, row (and line) and column.

    ``row`` is the 1-based data row (header excluded), ``line`` the physical line of a CSV or JSONL
    file (``None`` for Parquet and in-memory tables).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        row: int | None = None,
        line: int | None = None,
        column: str | None = None,
    ) -> None:
        where = f"{source}: " if source else ""
        if row is not None:
            where += f"row {row}" + (f" (line {line})" if line is not None else "") + ": "
        super().__init__(where + message)
        self.source = source
        self.row = row
        self.line = line
        self.column = column


class FeedbackSchemaError(FeedbackError):
    """A configured column is missing from the log, or has a type that cannot hold its values."""


class UnknownStrategyError(FeedbackError):
    """An aggregation strategy, de-duplication mode or error policy is not one of the documented names."""


class SessionError(FeedbackError):
    """A session of a click log cannot be used: its positions repeat or skip, or it mixes queries.

    The message names the source, the session and the rows (1-based data rows) it is about.
    """

    def __init__(
        self, message: str, *, source: str | None = None, session: str | None = None, rows: list[int] | None = None
    ) -> None:
        where = f"{source}: " if source else ""
        if session is not None:
            where += f"session {shorten(repr(session))}"
            if rows:
                shown = ", ".join(map(str, rows[:10])) + (", ..." if len(rows) > 10 else "")
                where += f" (rows {shown})"
            where += ": "
        super().__init__(where + message)
        self.source = source
        self.session = session
        self.rows = rows


class ClickModelError(FeedbackError):
    """A click model cannot be fitted or scored as asked: an unknown model, no session to fit on or to
    test, a test fraction outside (0, 1), parameters that do not belong to the model."""


class InterleavingError(FeedbackError):
    """Interleaving cannot run or be credited: an unknown method, a team other than ``a``/``b``, a
    session without teams, a document shown twice in one interleaved list."""


# -- the BEIR runner ---------------------------------------------------------------------------------


class DatasetError(IRMetricsError):
    """A BEIR dataset folder is incomplete or inconsistent (the message says what and where)."""


class DatasetNotFoundError(DatasetError):
    """A dataset name or path could not be resolved to a folder, nor downloaded."""


class MissingDocumentsError(DatasetError):
    """The qrels judge documents that are not in the corpus (so no retriever can find them)."""


class EmptyQueryError(DatasetError):
    """A query of the evaluated split has no text."""


class PipelineError(IRMetricsError):
    """A retrieval or indexing pipeline cannot be used for a BEIR run (bad YAML, wrong sockets, bad output)."""


class OutputError(IRMetricsError):
    """The output folder of a BEIR run cannot be written (checked before the run starts)."""


class ConfigurationChangedError(OutputError):
    """An output folder holds results or a checkpoint of another configuration (pipeline, model, top_k,
    k, chunking, dataset files, package version); the message says what changed. Pass ``overwrite``
    (``--overwrite``) to start those datasets over."""


class CheckpointError(OutputError):
    """A resume checkpoint (``.partial/``) cannot be read; the message names the file."""


class StatsInputError(IRMetricsError):
    """Per-query values that cannot be tested: different lengths, too few queries, NaN or infinities."""


class InvalidSeedError(InvalidArgumentError, StatsInputError):
    """A seed that is not a whole number from 0 to 2**32 - 1 (``-1``, ``1.5``, ``True``, ``"7"``): one check
    for every function and command that takes a seed. A :class:`StatsInputError` too, as the statistical
    tests raised before."""


class FusionError(IRMetricsError):
    """A fusion cannot be done as asked: an unknown method or normalisation, weights that do not fit the
    runs, a trained method without qrels, or a tuned fusion Haystack's ``DocumentJoiner`` cannot reproduce."""


class FusionParameterError(FusionError, InvalidArgumentError):
    """A fusion's argument outside its stated range (RRF's k, rbc's phi, weights all zero or not finite, a
    grid value, a search grid past its size limit, folds): a :class:`FusionError` and an
    :class:`InvalidArgumentError`."""


class PoolingError(IRMetricsError):
    """A pool cannot be made or estimated as asked: an unknown strategy or parameter, a budget or depth out of
    range, a label that is not a number, a sample that does not come from the runs and options it is read with."""


class JudgeError(IRMetricsError):
    """A model judge cannot judge as asked: no generator or scorer, a server that cannot be reached or keeps
    failing after its retries, a query or document without its text, cut points that cannot be learned."""


class NoAnswerError(JudgeError):
    """A chat server's reply held no answer (no choices, or a choice with no text): a failed request, retried
    like a 5xx and never cached, never an unparseable answer."""


class UsefulnessError(JudgeError):
    """Usefulness labels cannot be made as asked: a question without reference answers, an answers file naming a
    query the queries lack, a measure or prompt that does not fit (the generator's own failures are
    :class:`JudgeError`, of which this is one)."""


class AssessError(IRMetricsError):
    """People's judging cannot go on as asked (``irmetrics assess``): a folder whose store holds another scale
    or is not a store, a pair or label the page did not offer, a prelabels file that does not fit."""


class StalePairError(AssessError):
    """A key for a pair the judging page no longer shows (pressed twice, or in a second tab): nothing was
    recorded, and the page is sent what it should show."""


class NoRelevantJudgmentWarning(UserWarning):
    """No judgment of the log reaches the relevance threshold: every binary metric (P, Recall, MAP, MRR,
    R_cap, ...) is 0 for every system. The message says what it takes to reach the threshold."""


class CacheWarning(UserWarning):
    """A cache entry could not be used (damaged: computed again) or written (the run goes on without it)."""


class ConvergenceWarning(UserWarning):
    """An iterative fit (a click model's EM) stopped at its iteration cap before converging: its parameters
    were still moving by more than its tolerance. The message names the model, the cap and the last change."""


class SkippedRowsWarning(UserWarning):
    """Rows or sessions of a log were malformed and left out (``on_error="skip"``, ``--on-error skip``): the
    message names the log, how many of each and the first sessions with their reasons; the job's files list
    them."""


class InputChoiceWarning(UserWarning):
    """Which input a command chose itself where none was given: the human qrels a judged folder records
    (``irmetrics report --judged DIR`` without ``--qrels``). Said once, so that the choice is never silent."""


class SuspiciousInputWarning(UserWarning):
    """Inputs that evaluate without an error but look wrong: qrels of another collection (no retrieved
    document is judged), or the qrels and the results passed the wrong way round."""


class NoRelevantLabelWarning(SuspiciousInputWarning):
    """No label of the qrels reaches the relevance threshold of a measure asked for (click-derived labels in
    [0, 1] under the default threshold 1): every measure that counts relevant documents at it (P, Recall, MAP,
    bpref, the precision-recall curve, ...) is 0. The message names the threshold and the labels' range."""


class NotStreamable(Exception):
    """Internal signal: the fast reader (``io._fast``) cannot take this file as it is; ``io.trec`` reads it with
    the line-by-line reader, which names any error."""


class NotProduced(Exception):
    """Internal signal: a component left out an output the next one reads (a router), so only ``Pipeline.run``
    knows what follows (``integration.fastpath`` to ``integration.queries``)."""


class JudgeFailed(Exception):
    """Internal signal of ``judges.batch``: a pair the judge could not judge (retries spent, or an error no
    retry mends); the batch stops and raises a :class:`JudgeError` with this message."""


__all__ = [
    "ECHO_LIMIT",
    "MESSAGE_LIMIT",
    "AssessError",
    "CacheWarning",
    "CheckpointError",
    "ClickModelError",
    "ConfigurationChangedError",
    "ConvergenceWarning",
    "DatasetError",
    "DatasetNotFoundError",
    "DuplicateCutoffError",
    "DuplicateDocumentError",
    "EmptyInputError",
    "EmptyQueryError",
    "FeedbackError",
    "FeedbackSchemaError",
    "FusionError",
    "FusionParameterError",
    "IRMetricsError",
    "InputChoiceWarning",
    "InterleavingError",
    "InvalidArgumentError",
    "InvalidCutoffError",
    "InvalidDocumentsError",
    "InvalidIdError",
    "InvalidLabelError",
    "InvalidPolicyError",
    "InvalidScoreError",
    "InvalidSeedError",
    "JudgeError",
    "LengthMismatchError",
    "MalformedRowError",
    "MissingDependencyError",
    "MissingDocumentsError",
    "NoAnswerError",
    "NoOverlapError",
    "NoRelevantJudgmentWarning",
    "NoRelevantLabelWarning",
    "OutputError",
    "ParseError",
    "PipelineError",
    "SessionError",
    "SkippedRowsWarning",
    "SplitQueryError",
    "StalePairError",
    "StatsInputError",
    "SuspiciousInputWarning",
    "UnknownMeasureError",
    "UnknownStrategyError",
    "UsefulnessError",
    "shorten",
]
