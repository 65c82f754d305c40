"""One HTML page comparing any number of runs (``irmetrics report``), and its LaTeX, CSV and markdown exports.

* :mod:`.sources` reads what a report is made of (runs and their names, qrels, query texts, documents);
* :mod:`.data` evaluates every run once (an :class:`~haystack_irmetrics.Evaluation`) and compares each with the
  baseline (:mod:`haystack_irmetrics.stats`): :func:`build_report` returns a :class:`ReportData` (what to show:
  a :class:`ReportSettings`);
* :mod:`.judged` adds what the report says about the judgments under its numbers: each run's Judged@k and
  Hole@k, the prediction-powered intervals of a folder of ``irmetrics judge --ppi`` and each mean's hole
  bounds (the measures the summary shows by default, :mod:`.columns`);
* :mod:`.html` renders the page (figures drawn by :mod:`haystack_irmetrics.plots`, style and script from
  :mod:`.assets`), :mod:`.exports` the tables, :mod:`.write` writes them;
* :mod:`.browser` opens a written page in a system Chromium through Playwright, for tests of reports (ours and
  users').

Importing this package loads numpy only; matplotlib and scipy are imported when a report is built.
"""

from .data import DEFAULT_DEPTH, UNJUDGED, ReportData, ReportSettings, build_report
from .exports import rows, to_csv, to_latex, to_markdown
from .html import payload, render
from .write import feedback_report, write_report

__all__ = [
    "DEFAULT_DEPTH",
    "UNJUDGED",
    "ReportData",
    "ReportSettings",
    "build_report",
    "feedback_report",
    "payload",
    "render",
    "rows",
    "to_csv",
    "to_latex",
    "to_markdown",
    "write_report",
]
