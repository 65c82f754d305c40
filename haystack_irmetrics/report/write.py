"""Write a report page: for runs, for a :class:`~.data.ReportData`, or for a feedback evaluation."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.plausibility import judgments_built_here
from ..errors import InvalidArgumentError
from ..io.output import write_text
from .data import ReportData, build_report
from .html import render


def write_report(
    runs: Mapping[str, Any] | Sequence[Any] | ReportData,
    path: str | os.PathLike[str],
    qrels: Any = None,
    **options: Any,
) -> Path:
    """Write one self-contained HTML page comparing ``runs`` (any number) against ``qrels``.

    :param runs: ``{name: run}`` or a list of runs (named by ``names=``, else by their files); a run is
        a TREC run file, a folder written by ``irmetrics beir --output`` (its qrels, queries and corpus
        then come from the dataset its ``summary.json`` names), a ``{qid: {doc: score}}`` dict, a core
        run, the output of :class:`~haystack_irmetrics.components.IRMetricsEvaluator` or a Haystack
        ``EvaluationRunResult`` (these two: per-query values, no ranked list). A :class:`ReportData`
        (from :func:`build_report`) is written as it is.
    :param path: the HTML file to write (its folders are created), whole or not at all: through a
        temporary file of the same folder renamed over it; an ``OSError`` (a full disk, say) raises
        :class:`~haystack_irmetrics.errors.OutputError` naming it and leaves what was there.
    :param qrels: a qrels file (TREC or BEIR TSV), ``{qid: {doc: label}}`` or a ``Qrels``.
    :param options: as :func:`build_report`: ``k_values``, ``measures``, ``names``, ``baseline`` (default:
        the first run), ``preset`` (``"beir"``, ``"trec"`` or a ``Preset``) and policy overrides,
        ``queries`` (file or ``{qid: text}``), ``corpus`` (a BEIR folder) or ``docs`` (JSONL or TSV) for
        titles and snippets, ``depth`` (documents per ranked list, 20), ``significance``, ``n_resamples``,
        ``seed``, ``confidence``, ``title``, ``judged`` (the output folder of ``irmetrics judge --ppi``:
        prediction-powered intervals beside the filled-qrels values), ``bounds`` (a grade: each mean's interval
        once its holes are judged 0 or that grade).
        ``sections``: more ``(id, title, html)`` sections after the page's own, linked in its navigation.
    :returns: the path written.

    Usage::

        >>> import tempfile, pathlib
        >>> qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 1}}
        >>> bm25 = {"q1": {"a": 0.9, "x": 0.8, "b": 0.1}, "q2": {"x": 0.9, "c": 0.3}, "q3": {"y": 1.0}}
        >>> dense = {"q1": {"b": 0.9, "a": 0.8}, "q2": {"c": 0.9}, "q3": {"d": 0.5, "y": 0.4}}
        >>> out = write_report({"bm25": bm25, "dense": dense}, pathlib.Path(tempfile.mkdtemp()) / "r.html",
        ...                    qrels, k_values=[1, 10], measures=["NDCG", "Recall"], n_resamples=100)
        >>> text = out.read_text(encoding="utf-8")
        >>> 'data-run="dense" data-measure="NDCG@10"' in text, "https://" in text
        (True, False)
    """
    sections = options.pop("sections", ())
    data = runs if isinstance(runs, ReportData) else build_report(runs, qrels, **options)
    out = Path(path)
    if out.is_dir():
        raise InvalidArgumentError(f"{out} is a folder: give the report's file name, e.g. {out / 'report.html'}")
    return write_text(out, render(data, sections))


#: Options of :func:`feedback_report` that score differently from the feedback evaluation (it then evaluates again).
_RESCORING = frozenset(
    {
        "k_values",
        "measures",
        "preset",
        "ties",
        "missing_queries",
        "ignore_identical_ids",
        "relevance_threshold",
        "no_relevant",
    }
)


def feedback_report(evaluation: Any, runs: Mapping[str, Any], path: str | os.PathLike[str], **options: Any) -> Path:
    """The report page of a feedback evaluation (:func:`~haystack_irmetrics.feedback.evaluate_feedback`):
    the rankings users saw (``logged``) and ``runs`` (the same ``{name: run}`` it scored) against the
    judgments aggregated from the log, with its settings (cutoffs, measures, threshold, preset, baseline,
    resamples) and the logged query texts; with windows (``evaluation.windows``), their section too."""
    from ..feedback.report import windows_html

    feedback, settings = evaluation.feedback, evaluation.settings
    systems: dict[str, Any] = {}
    for name in evaluation.systems:
        systems[name] = feedback.logged_run() if name == "logged" else runs[name]
    given = set(options)
    options = {
        "k_values": None,
        "measures": settings["measures"],
        "baseline": evaluation.baseline,
        "preset": evaluation.preset,  # the policy its scores used (feedback's preset)
        "queries": feedback.query_text(),
        "n_resamples": settings["n_resamples"],
        "seed": settings["seed"],
        "confidence": settings["confidence"],
        "title": f"Feedback evaluation: {feedback.source}",
        **options,
    }
    if not _RESCORING & given:  # the evaluation's own scores, not evaluated again
        scored = evaluation.overall.systems
        options["scores"] = {
            name: (
                scored[name].raw_means,
                {m: dict(zip(scored[name].queries, v.tolist())) for m, v in scored[name].values["full"].items()},
            )
            for name in systems
        }
    if getattr(evaluation, "windows", None):
        options["sections"] = [("windows", "Windows", windows_html(evaluation))]
    with judgments_built_here():  # the judgments come from the log: they cannot be a run given as qrels
        return write_report(systems, path, feedback.qrels(), **options)


__all__ = ["feedback_report", "write_report"]
