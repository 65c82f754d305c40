"""The report's summary as a LaTeX table (booktabs, significance superscripts as ranx prints them), CSV
and markdown, from the same :class:`~.data.ReportData` as the page.

Superscripts: each run has a letter (a, b, c, ... in the order given); a mean carries the letter of
the run it is significantly better than (Holm-adjusted randomization p < ``level``). Runs are tested
against the baseline only, so a run's superscript can be the baseline's letter, and the baseline's
the letters of the runs it beats.

Names are written so each format stays intact: LaTeX's special characters are escaped, markdown cells
escape ``|`` (:func:`~haystack_irmetrics.io.tables.markdown_cell`), and a CSV text cell a spreadsheet
would run as a formula gets a leading ``'`` (:func:`~haystack_irmetrics.io.tables.csv_cell`).
"""

from __future__ import annotations

import string

from ..io.output import printable
from ..io.tables import csv_text, markdown_cell
from ..stats.compare import format_p
from .data import ReportData, lower_is_better
from .judged import JUDGED_NOTE

CSV_FIELDS = (
    "run",
    "measure",
    "mean",
    "baseline",
    "delta",
    "ci_low",
    "ci_high",
    "p_t",
    "p_randomization",
    "p_t_holm",
    "p_randomization_holm",
    "wins",
    "ties",
    "losses",
    # Given bounds (a grade): the interval the mean lies in once the run's holes are judged.
    "bounds_low",
    "bounds_high",
    # Given judged qrels (irmetrics judge --ppi): the mean with the filled qrels and the PPI estimate.
    "filled",
    "ppi_estimate",
    "ppi_low",
    "ppi_high",
)


def _letters(data: ReportData) -> dict[str, str]:
    alphabet = string.ascii_lowercase
    return {n: alphabet[i % 26] * (1 + i // 26) for i, n in enumerate(data.names)}


def _beats(data: ReportData, run: str, measure: str, level: float) -> list[str]:
    """The runs ``run`` is significantly better than on ``measure`` (a Hole or RBP_residual mean is better when lower)."""
    lower = lower_is_better(measure)
    out = []
    for other in data.others:
        c = data.comparisons.get(other, {}).get(measure)
        if c is None or c.p_randomization_holm >= level or c.delta == 0:
            continue
        other_better = (c.delta < 0) if lower else (c.delta > 0)
        if run == other and other_better:
            out.append(data.baseline)
        elif run == data.baseline and not other_better:
            out.append(other)
    return out


_TEX = {
    "\\": r"\textbackslash{}",
    "_": r"\_",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "$": r"\$",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _tex(text: str) -> str:
    # A lone surrogate becomes its escape's text first, so its backslash is escaped like any other.
    return "".join(_TEX.get(ch, ch) for ch in printable(text))


def to_latex(data: ReportData, *, digits: int = 4, level: float = 0.05, caption: str | None = None) -> str:
    """A booktabs table: one row per run, one column per measure, the best mean of each column in bold,
    ranx's superscripts (see the module's docstring)."""
    letters = _letters(data)
    cols = "c|l|" + "c" * len(data.measures)
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        rf"\caption{{{_tex(caption or data.title)}. Superscripts: significantly better than that run (paired "
        rf"randomization test, Holm-adjusted over runs $\times$ measures, $p < {level:g}$; each run tested against "
        rf"the baseline {_tex(data.baseline)}).}}",
        rf"\begin{{tabular}}{{{cols}}}",
        r"\toprule",
        r"\textbf{\#} & \textbf{Run} & " + " & ".join(rf"\textbf{{{_tex(m)}}}" for m in data.measures) + r" \\",
        r"\midrule",
    ]
    for n in data.names:
        cells = []
        for m in data.measures:
            v = data.means[n][m]
            text = f"{v:.{digits}f}"
            if v == data.best(m):
                text = rf"\textbf{{{text}}}"
            beats = "".join(letters[o] for o in _beats(data, n, m, level))
            cells.append(text + (rf"$^{{{beats}}}$" if beats else ""))
        lines.append(f"{letters[n]} & {_tex(n)} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def rows(data: ReportData) -> list[dict[str, object]]:
    """One dict per (run, measure): the mean and, for every run but the baseline, the comparison."""
    out: list[dict[str, object]] = []
    for n in data.names:
        for m in data.measures:
            row: dict[str, object] = {"run": n, "measure": m, "mean": data.means[n][m], "baseline": data.baseline}
            c = data.comparisons.get(n, {}).get(m)
            if c is not None:
                row.update(
                    delta=c.delta,
                    ci_low=c.ci_low,
                    ci_high=c.ci_high,
                    p_t=c.p_t,
                    p_randomization=c.p_randomization,
                    p_t_holm=c.p_t_holm,
                    p_randomization_holm=c.p_randomization_holm,
                )
            elif n != data.baseline:
                row["delta"] = data.means[n][m] - data.means[data.baseline][m]
            if n in data.wtl:
                row["wins"], row["ties"], row["losses"] = data.wtl[n][m]
            if (b := data.bounds.get(n, {}).get(m)) is not None:
                row["bounds_low"], row["bounds_high"] = b
            if (j := data.judged.get(n, {}).get(m)) is not None:
                row.update(filled=j["filled"], ppi_estimate=j["estimate"], ppi_low=j["low"], ppi_high=j["high"])
            out.append(row)
    return out


def to_csv(data: ReportData) -> str:
    """:func:`rows` as CSV (RFC 4180: ``\\r\\n`` line ends; unrounded numbers; empty where a field does not
    apply); a name a spreadsheet would read as a formula (``=...``, ``+``, ``-``, ``@``) starts with ``'``
    (:func:`~haystack_irmetrics.io.tables.csv_cell`): the package's one CSV writer,
    :func:`~haystack_irmetrics.io.tables.csv_text`."""
    return csv_text(CSV_FIELDS, rows(data))


def to_markdown(data: ReportData, *, digits: int = 4) -> str:
    """The means (best in bold, ``*``/``**`` where a run differs from the baseline) and the comparisons."""
    md = markdown_cell
    lines = ["| run | " + " | ".join(md(m) for m in data.measures) + " |", "|---|" + "---:|" * len(data.measures)]
    for n in data.names:
        cells = []
        for m in data.measures:
            v = data.means[n][m]
            c = data.comparisons.get(n, {}).get(m)
            text = f"{v:.{digits}f}"
            marker = c.marker().replace("*", "\\*") if c is not None else ""
            cells.append((f"**{text}**" if v == data.best(m) else text) + marker)
        lines.append(f"| {md(n)}{' (baseline)' if n == data.baseline else ''} | " + " | ".join(cells) + " |")
    if data.others:
        pct = f"{data.confidence * 100:g}%"
        lines += [
            "",
            f"| run | measure | Δ | {pct} CI | p (t, Holm) | p (rand., Holm) | wins | ties | losses |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in rows(data):
            if row["run"] == data.baseline:
                continue
            if "p_t_holm" in row:
                stats = (
                    f"[{row['ci_low']:+.{digits}f}, {row['ci_high']:+.{digits}f}] | {format_p(row['p_t_holm'])} | "
                    f"{format_p(row['p_randomization_holm'])}"
                )
            else:
                stats = "— | — | —"
            lines.append(
                f"| {md(row['run'])} | {md(row['measure'])} | {row['delta']:+.{digits}f} | {stats} | {row['wins']} | "
                f"{row['ties']} | {row['losses']} |"
            )
        lines += ["", f"Against the baseline {md(data.baseline)}; p-values Holm-adjusted over runs × measures; "
                  "`*` p < 0.05, `**` p < 0.01 (randomization)."]  # fmt: skip
    return "\n".join(lines + _holes_markdown(data, digits)) + "\n"


def _holes_markdown(data: ReportData, digits: int) -> list[str]:
    """The page's holes tables: each run's Judged@k and Hole@k, the bounds given a grade, the PPI rows."""
    md = markdown_cell
    lines: list[str] = []
    names = list(dict.fromkeys(name for cov in data.coverage.values() for name in cov))
    if names:
        lines += ["", "| run | " + " | ".join(md(n) for n in names) + " |", "|---|" + "---:|" * len(names)]
        for run, cov in data.coverage.items():
            lines.append(
                f"| {md(run)} | " + " | ".join(f"{cov[n]:.{digits}f}" if n in cov else "—" for n in names) + " |"
            )
        lines += ["", "Judged@k: the share of the top k the query judged; Hole@k (BEIR's): the share no query judged."]
    if data.bounds:
        lines += ["", "| run | measure | mean | low | high |", "|---|---|---:|---:|---:|"]
        for run, per_measure in data.bounds.items():
            for m, (low, high) in per_measure.items():
                lines.append(
                    f"| {md(run)} | {md(m)} | {data.means[run][m]:.{digits}f} | {low:.{digits}f} | {high:.{digits}f} |"
                )
        lines += ["", f"Low and high: the mean once every hole of the top k is judged 0 or {data.bounds_grade:g}."]
    if data.judged:
        head = "| run | measure | human qrels | filled qrels | PPI estimate | PPI interval | queries (human, filled, PPI) |"
        lines += ["", head, "|---|---|---:|---:|---:|---:|---:|"]
        for run, per_measure in data.judged.items():
            for m, r in per_measure.items():
                lines.append(
                    f"| {md(run)} | {md(m)} | {r['human']:.{digits}f} | {r['filled']:.{digits}f} | "
                    f"{r['estimate']:.{digits}f} | [{r['low']:.{digits}f}, {r['high']:.{digits}f}] | "
                    f"{r['human_queries']}, {r['filled_queries']}, {r['n']} + {r['N']} |"
                )
        lines += ["", JUDGED_NOTE]
    return lines


__all__ = ["CSV_FIELDS", "rows", "to_csv", "to_latex", "to_markdown"]
