"""The jobs of ``irmetrics clicks`` and ``irmetrics interleave``, each one call: frozen settings in, a frozen result out.

:func:`fit_log` (``clicks fit``: the click qrels and ``model.json`` written), :func:`compare_log` (``clicks
compare``), :func:`estimate_log` and :func:`measure_log` (``clicks estimate``, ``clicks measure``),
:func:`windows_log` (``clicks windows``, the trend plot written) and :func:`interleave_log` (``interleave``)
read the log their :class:`LogSettings` name and do the whole job; the command line parses its options
into the settings and prints the result. Skipped rows and sessions (``on_error="skip"``) are said as a
:class:`~haystack_irmetrics.errors.SkippedRowsWarning` when the log is read.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..checks import choice, number, whole
from ..errors import ClickModelError, SkippedRowsWarning
from ..io.logs import ON_ERROR
from ..stats.significance import check_confidence, check_resamples, check_seed
from ..stats.windows import SCALE, Window, parse_window
from .counterfactual import LOGGED, MEASURES, Estimate, check_propensities, estimate_clicks, ips_measure
from .evaluation import ClickFit, HeldOut, compare_models, comparison_json, comparison_table, fit_model
from .interleaving import Outcome, check_method, outcome
from .log import ClickLog, Sessions
from .models import EMSettings, no_qrels_message
from .registry import entry
from .windows import MEASURES as WINDOW_MEASURES

#: The files :func:`fit_log` writes in its output folder (the skipped rows and sessions only when some are).
FIT_FILES = ("qrels.tsv", "model.json", "skipped_rows.csv", "skipped_sessions.csv")


@dataclass(frozen=True)
class LogSettings:
    """A click log and how to read it (:class:`~.log.ClickLog`'s options): ``columns`` ``{role: column}`` over
    the defaults; ``format_option``: how an error about the format names its setting (``--format`` on the
    command line)."""

    path: str
    columns: Mapping[str, str | None] = field(default_factory=dict)
    fmt: str | None = None
    on_error: str = "raise"
    position_base: int = 1
    max_rank: int | None = None
    format_option: str = "fmt"

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", MappingProxyType(dict(self.columns)))
        choice(self.on_error, "on_error", ON_ERROR, error=ClickModelError)
        whole(self.position_base, "position_base", least=0, most=1, error=ClickModelError)
        if self.max_rank is not None:
            whole(self.max_rank, "max_rank", least=1, error=ClickModelError)

    def read(self) -> tuple[ClickLog, Sessions]:
        """The log and its sessions; skipped rows and sessions said in a :class:`SkippedRowsWarning`."""
        from ..io.logs import detect_format

        fmt = self.fmt
        if fmt is None and Path(self.path).is_file():  # a missing path is the reader's error, named as read
            fmt = detect_format(self.path, option=self.format_option)
        log = ClickLog(
            self.path,
            columns=dict(self.columns),
            fmt=fmt,
            on_error=self.on_error,
            position_base=self.position_base,
            max_rank=self.max_rank,
        )
        sessions = log.sessions()
        rows, bad = log.skipped.height, log.skipped_sessions
        if rows or bad.height:
            listed = "; ".join(f"{s!r}: {reason}" for s, _, reason in bad.head(5).rows())
            more = f" (first: {listed})" if listed else ""
            message = f"{self.path}: skipped {rows} malformed rows and {bad.height} sessions{more}"
            warnings.warn(message, SkippedRowsWarning, stacklevel=2)
        return log, sessions


@dataclass(frozen=True)
class HeldOutSettings:
    """The held-out sessions: a second log (``test``), else a ``test_fraction`` of the log drawn with ``seed``."""

    test: LogSettings | None = None
    test_fraction: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.test_fraction is not None:  # checked even beside a test log, which takes its place
            number(self.test_fraction, "the test fraction", 0, 1, closed="neither", error=ClickModelError)
        check_seed(self.seed)

    def split(self) -> dict[str, Any]:
        """The held-out keywords of :func:`~.evaluation.fit_model` and :func:`~.evaluation.compare_models`."""
        test = self.test.read()[1] if self.test is not None else None
        return {"test": test, "test_fraction": None if test is not None else self.test_fraction, "seed": self.seed}


@dataclass(frozen=True)
class BootstrapSettings:
    """The percentile bootstrap of an estimate: its ``confidence``, ``n_resamples`` and ``seed``."""

    confidence: float = 0.95
    n_resamples: int = 10_000
    seed: int = 0

    def __post_init__(self) -> None:
        check_confidence(self.confidence)
        check_resamples(self.n_resamples)
        check_seed(self.seed)

    def options(self) -> dict[str, Any]:
        return {"confidence": self.confidence, "n_resamples": self.n_resamples, "seed": self.seed}


# -- fit and compare ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FitSettings:
    """``irmetrics clicks fit``: ``model`` fitted on ``log``, its qrels of pairs shown ``min_impressions`` times
    and ``model.json`` written to ``output``."""

    log: LogSettings
    model: str
    output: str
    min_impressions: int = 1
    held_out: HeldOutSettings = HeldOutSettings()
    em: EMSettings = field(default_factory=EMSettings)

    def __post_init__(self) -> None:
        entry(self.model)
        whole(self.min_impressions, "min_impressions", least=1, error=ClickModelError)


@dataclass(frozen=True)
class FitResult:
    """What :func:`fit_log` fitted and wrote: the fit (``model``, training and test scores), the two files and how
    many judgments ``qrels.tsv`` holds."""

    fit: ClickFit
    qrels_path: Path
    model_path: Path
    judgments: int


def fit_log(settings: FitSettings) -> FitResult:
    """Fit the model on the log and write ``qrels.tsv``, ``model.json`` (and the skipped rows and sessions,
    :data:`FIT_FILES`) in ``settings.output``.

    :raises ClickModelError: a model without per-document labels (before the log is read: its qrels would judge
        every document alike), an unknown model; the log's and the fit's errors.
    """
    from ..io.tables import write_csv

    model = entry(settings.model).make(**settings.em.options())
    if not model.per_document:
        raise ClickModelError(no_qrels_message(model.name))
    log, sessions = settings.log.read()
    fit = fit_model(model, sessions, **settings.held_out.split())
    qrels_path, model_path = fit.write(settings.output, min_impressions=settings.min_impressions)
    out = Path(settings.output)
    # the package's one CSV writer: the log's text may hold formulas (=HYPERLINK(...)) a spreadsheet would run
    if log.skipped.height:
        write_csv(out / "skipped_rows.csv", log.skipped.columns, log.skipped.iter_rows())
    if log.skipped_sessions.height:
        bad = log.skipped_sessions
        rows = (
            [" ".join(map(str, v)) if name == "rows" else v for name, v in zip(bad.columns, row, strict=True)]
            for row in bad.iter_rows()
        )
        write_csv(out / "skipped_sessions.csv", bad.columns, rows)
    judged = sum(len(d) for d in fit.judgments(settings.min_impressions).values())
    return FitResult(fit, qrels_path, model_path, judged)


@dataclass(frozen=True)
class ClickCompareSettings:
    """``irmetrics clicks compare``: each of ``models`` fitted on the same training sessions of ``log`` and scored
    on the same held-out ones."""

    log: LogSettings
    models: tuple[str, ...]
    held_out: HeldOutSettings = HeldOutSettings(test_fraction=0.2)
    em: EMSettings = field(default_factory=EMSettings)

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", tuple(self.models))
        if not self.models:
            raise ClickModelError("name at least one model to compare")
        for name in self.models:
            entry(name)
        if self.held_out.test is None and self.held_out.test_fraction is None:
            raise ClickModelError("comparing models needs held-out sessions: a test log or a test fraction")


@dataclass(frozen=True)
class ClickCompareResult:
    """Each model's held-out score, in the order asked, and the held-out sessions' count."""

    scores: Mapping[str, HeldOut]
    test_sessions: int

    def to_dict(self) -> dict[str, Any]:
        """``{"models": {name: {...}}, "test_sessions": n}`` (:func:`~.evaluation.comparison_json`)."""
        return comparison_json(self.scores)

    def markdown(self) -> str:
        """The table of :func:`~.evaluation.comparison_table`."""
        return comparison_table(self.scores)


def compare_log(settings: ClickCompareSettings) -> ClickCompareResult:
    """Fit and score every model of ``settings`` (:func:`~.evaluation.compare_models`)."""
    _, sessions = settings.log.read()
    scores = compare_models(settings.models, sessions, **settings.em.options(), **settings.held_out.split())
    return ClickCompareResult(MappingProxyType(scores), next(iter(scores.values())).sessions)


# -- a ranking from clicks ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EstimateSettings:
    """``irmetrics clicks estimate``: the expected clicks of ``run``'s top ``k`` from a log with propensities."""

    log: LogSettings
    run: str
    k: int = 10
    clip: float | None = None
    bootstrap: BootstrapSettings = BootstrapSettings()

    def __post_init__(self) -> None:
        whole(self.k, "k", least=1, error=ClickModelError)
        if self.clip is not None:
            number(self.clip, "clip", 0, closed="neither", finite=False, error=ClickModelError)


@dataclass(frozen=True)
class MeasureSettings:
    """``irmetrics clicks measure``: ``run``'s ``measure`` at ``k`` from the log's clicks, examination from
    ``propensities`` (a click model fitted on the log, or ``"log"``: its propensity column)."""

    log: LogSettings
    run: str
    k: int = 10
    measure: str = "dcg"
    propensities: str = "pbm"
    clip: float | None = None
    bootstrap: BootstrapSettings = BootstrapSettings()

    def __post_init__(self) -> None:
        choice(self.measure, "measure", MEASURES, error=ClickModelError)
        whole(self.k, "k", least=1, error=ClickModelError)
        if self.clip is not None:
            number(self.clip, "clip", 1, finite=False, error=ClickModelError)
        check_propensities(self.propensities)


@dataclass(frozen=True)
class EstimateResult:
    """The estimates (by estimator, in order) over ``impressions``, and what they estimate (``title``)."""

    estimates: Mapping[str, Estimate]
    impressions: int
    title: str

    def to_dict(self) -> dict[str, Any]:
        """``{estimator: {"value", "ci_low", "ci_high"}, ..., "impressions": n}``."""
        return {**{k: v.to_dict() for k, v in self.estimates.items()}, "impressions": self.impressions}


def _ranking(path: str, k: int | None) -> dict[str, list[str]]:
    """A TREC run's ranked lists in trec_eval's order (the top ``k``, or whole)."""
    from ..io.trec import read_trec_run, trec_order

    run = read_trec_run(path, fast=False).data
    return {q: trec_order(docs)[:k] for q, docs in run.items()}


def estimate_log(settings: EstimateSettings) -> EstimateResult:
    """IPS, SNIPS and DR of the run's expected clicks per impression (:func:`~.counterfactual.estimate_clicks`)."""
    _, sessions = settings.log.read()
    ranking = _ranking(settings.run, settings.k)
    got = estimate_clicks(sessions, ranking, k=settings.k, clip=settings.clip, **settings.bootstrap.options())
    title = f"expected clicks per impression of {settings.run} (top {settings.k})"
    return EstimateResult(MappingProxyType(got), sessions.n_sessions, title)


def measure_log(settings: MeasureSettings) -> EstimateResult:
    """IPS, clipped IPS and SNIPS of the run's measure from clicks (:func:`~.counterfactual.ips_measure`)."""
    _, sessions = settings.log.read()
    ranking = _ranking(settings.run, settings.k)
    got = ips_measure(
        sessions,
        ranking,
        k=settings.k,
        measure=settings.measure,
        propensities=settings.propensities,
        clip=settings.clip,
        **settings.bootstrap.options(),
    )
    title = f"{settings.measure}@{settings.k} of {settings.run} from clicks"
    return EstimateResult(MappingProxyType(got), sessions.n_sessions, title)


def reads_propensities(propensities: str) -> bool:
    """Whether :func:`measure_log` reads the log's propensity column for ``propensities``."""
    return propensities == LOGGED


# -- windows and interleaving ------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowsSettings:
    """``irmetrics clicks windows``: ``measure`` per impression in windows ``width`` long, each compared with the
    previous one (or ``baseline``); the trend drawn to ``plot`` when given."""

    log: LogSettings
    width: str = "1d"
    measure: str = "clicks"
    baseline: str | None = None
    unit: str = "us"
    alpha: float = 0.05
    bootstrap: BootstrapSettings = BootstrapSettings()
    plot: str | None = None

    def __post_init__(self) -> None:
        parse_window(self.width)
        choice(self.measure, "measure", WINDOW_MEASURES, error=ClickModelError)
        choice(self.unit, "unit", SCALE, error=ClickModelError)
        number(self.alpha, "alpha", 0, 1, closed="neither", error=ClickModelError)


@dataclass(frozen=True)
class WindowsResult:
    """The windows in time order, of ``measure`` over ``width``."""

    measure: str
    width: str
    windows: tuple[Window, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "windows": [w.to_dict() for w in self.windows]}


def windows_log(settings: WindowsSettings) -> WindowsResult:
    """The windows of the log (:func:`~.windows.windows`), their plot written when asked."""
    from .windows import windows

    _, sessions = settings.log.read()
    rows = windows(
        sessions,
        width=settings.width,
        measure=settings.measure,
        baseline=settings.baseline,
        unit=settings.unit,
        alpha=settings.alpha,
        **settings.bootstrap.options(),
    )
    if settings.plot:
        from ..plots.windows import plot_windows

        plot_windows(rows, settings.plot, measure=settings.measure)
    return WindowsResult(settings.measure, settings.width, tuple(rows))


@dataclass(frozen=True)
class InterleaveSettings:
    """``irmetrics interleave``: the log's impressions credited by ``method`` (balanced: over the two original
    rankings, TREC runs ``rankings``), one outcome or one per segment (``by_segment``)."""

    log: LogSettings
    method: str = "team-draft"
    rankings: tuple[str, str] | None = None
    by_segment: bool = False
    bootstrap: BootstrapSettings = BootstrapSettings()

    def __post_init__(self) -> None:
        check_method(self.method, self.rankings is not None)


@dataclass(frozen=True)
class InterleaveResult:
    """The outcome of a against b: ``{"all": outcome}``, or one per segment (``by_segment``)."""

    outcomes: Mapping[str, Outcome]
    by_segment: bool

    def to_dict(self) -> Any:
        if self.by_segment:
            return {k: v.to_dict() for k, v in self.outcomes.items()}
        return self.outcomes["all"].to_dict()


def interleave_log(settings: InterleaveSettings) -> InterleaveResult:
    """Credit and compare the two rankers of an interleaved log (:func:`~.interleaving.outcome`)."""
    rankings = None
    if settings.rankings is not None:
        rankings = (_ranking(settings.rankings[0], None), _ranking(settings.rankings[1], None))
    _, sessions = settings.log.read()
    result = outcome(
        sessions,
        method=settings.method,
        rankings=rankings,
        by_segment=settings.by_segment,
        **settings.bootstrap.options(),
    )
    table = result if isinstance(result, dict) else {"all": result}
    return InterleaveResult(MappingProxyType(table), isinstance(result, dict))


__all__ = [
    "FIT_FILES",
    "BootstrapSettings",
    "ClickCompareResult",
    "ClickCompareSettings",
    "EstimateResult",
    "EstimateSettings",
    "FitResult",
    "FitSettings",
    "HeldOutSettings",
    "InterleaveResult",
    "InterleaveSettings",
    "LogSettings",
    "MeasureSettings",
    "WindowsResult",
    "WindowsSettings",
    "compare_log",
    "estimate_log",
    "fit_log",
    "interleave_log",
    "measure_log",
    "reads_propensities",
    "windows_log",
]
