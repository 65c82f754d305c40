"""The report page: one self-contained HTML file (style, script, data and figures inlined; it fetches
nothing) rendered from a :class:`~.data.ReportData`.

The test contract (documented in ``docs/report.md``): every cell of the means table carries
``data-run``, ``data-measure`` (BEIR's name) and ``data-value`` (the unrounded mean); every row of the
per-query table carries ``data-qid``; clicking a row opens an element with ``data-drilldown="<qid>"``
whose ranked documents carry ``data-run``, ``data-rank``, ``data-doc`` and ``data-judgment`` (the
qrels label as written, or ``unjudged``).
"""

from __future__ import annotations

import base64
import html
import importlib.util
import re
import tempfile
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ..io.tables import json_text
from ..stats.compare import format_p
from .assets import CSS, JS
from .columns import MAX_SUMMARY_COLUMNS, SUMMARY_CUTOFF, SUMMARY_EXTRA, summary_columns
from .columns import parsed as _parsed
from .data import ReportData, family_of, label_text, paired_values
from .judged import JUDGED_NOTE

#: Cutoffs of the measure-against-k curves, besides the report's own.
CURVE_KS = (1, 3, 5, 10, 20, 50, 100)
# Inside <script>, the HTML parser reads "</script", "<!--" and "<script" in the JSON's strings as markup
# (a query text "<!--<script>" makes the rest of the page script: it goes blank), and U+2028/U+2029
# end a line in older JavaScript: each is written as its \u escape, which JSON.parse reads back as it was.
_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_UNSAFE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def _script_escape(match: re.Match[str]) -> str:
    ch = match.group()
    # A lone surrogate (UTF-8 cannot hold it) becomes the text "\ud800", as everywhere else on the page.
    return _SCRIPT_ESCAPES.get(ch) or f"\\\\u{ord(ch):04x}"


def script_json(value: Any) -> str:
    r"""``value`` as JSON safe inside an HTML ``<script>`` element: no ``<``, ``>`` or ``&`` (written
    ``\u003c``, ``\u003e``, ``\u0026``), no U+2028/U+2029 (``\u2028``, ``\u2029``); a lone
    surrogate becomes the text of its backslash escape (:func:`~haystack_irmetrics.io.output.printable`).

        >>> print(script_json({"q": "<!--<script>&", "s": "a\ud800"}))
        {"q":"\u003c!--\u003cscript\u003e\u0026","s":"a\\ud800"}
    """
    blob = json_text(value, separators=(",", ":"), ensure_ascii=False)
    return _SCRIPT_UNSAFE.sub(_script_escape, blob)


def payload(data: ReportData) -> dict[str, Any]:
    """The page's JSON: document ids interned once; per query and run a flat ``[doc, label, doc, label, ...]``
    list of indices (label -1: unjudged); per run and measure one value per query (``null``: not scored)."""
    docs: dict[str, int] = {}
    labels: dict[str, int] = {}

    def doc(d: str) -> int:
        return docs.setdefault(d, len(docs))

    def code(qid: str, d: str) -> int:
        label = data.qrels.get(qid, {}).get(d)
        return -1 if label is None else labels.setdefault(label_text(label), len(labels))

    def flat(qid: str, ranked: list[str]) -> list[int]:
        out: list[int] = []
        for d in ranked:
            out += (doc(d), code(qid, d))
        return out

    lists = [[flat(q, data.lists[n].get(q, [])) for q in data.qids] if n in data.lists else None for n in data.names]
    missed = [flat(q, data.missed.get(q, [])) for q in data.qids]
    values = [[[_number(data.values[n][m].get(q)) for q in data.qids] for m in data.measures] for n in data.names]
    ids = list(docs)
    documents = data.documents
    return {
        "runs": data.names,
        "baseline": data.names.index(data.baseline),
        "measures": data.measures,
        "start": data.measures.index(summary_columns(data.measures)[0]),  # the per-query table's first measure
        "fill": [f.missing_value if (f := family_of(m)) is not None else 0.0 for m in data.measures],
        "qids": data.qids,
        "text": [data.query_text.get(q, "") for q in data.qids] if data.query_text else [],
        "values": values,
        "docs": ids,
        "titles": [documents.get(d, ("", ""))[0] for d in ids] if documents else [],
        "snippets": [documents.get(d, ("", ""))[1] for d in ids] if documents else [],
        "labels": list(labels),
        "relevant": [float(x) >= data.threshold for x in labels],
        "lists": lists,
        "missed": missed,
    }


def _number(x: float | None) -> float | None:
    return None if x is None or x != x else x


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _off(m: str, shown: list[str]) -> str:
    """The class of a column switched off by default (the script switches it on)."""
    return "" if m in shown else " off"


def _column_chooser(data: ReportData, shown: list[str]) -> str:
    """One checkbox per column of means (grouped by measure), with the default and every column a click away."""
    if len(shown) == len(data.measures):
        return ""
    groups: dict[str, list[tuple[str, str]]] = {}
    for m in data.measures:
        measure = _parsed(m)
        stem, at = (m.rpartition("@")[0], m.rpartition("@")[2]) if measure and measure.cutoff and "@" in m else (m, m)
        groups.setdefault(stem, []).append((m, at))
    boxes = "".join(
        f'<span class="group"><b>{_e(stem)}</b>'
        + "".join(
            f'<label><input type="checkbox" data-column="{_e(m)}"{" data-default" if m in shown else ""}'
            f"{' checked' if m in shown else ''}>{_e(at) if at != stem else 'on'}</label>"
            for m, at in members
        )
        + "</span>"
        for stem, members in groups.items()
    )
    return (
        f'<div id="columns" class="columns"><span class="notes">columns ({len(shown)} of {len(data.measures)} shown):'
        f'</span>{boxes}<button type="button" id="columns-default">default</button>'
        '<button type="button" id="columns-all">all</button></div>'
    )


def _means_table(data: ReportData, shown: list[str]) -> str:
    head = "".join(f'<th class="m{_off(m, shown)}" data-measure="{_e(m)}">{_e(m)}</th>' for m in data.measures)
    rows = []
    for n in data.names:
        cells = []
        for m in data.measures:
            v = data.means[n][m]
            best = v == data.best(m)
            c = data.comparisons.get(n, {}).get(m)
            marker = c.marker() if c is not None else ""
            # The direction with the mark: a significant loss is marked too, in another colour.
            side = "better" if c is not None and c.delta > 0 else "worse"
            sig = f'<sup class="sig {side}" title="significantly {side} than {_e(data.baseline)}: p &lt; ' \
                  f'{0.05 if marker == "*" else 0.01} (randomization, Holm)">{marker}</sup>' if marker else ""  # fmt: skip
            cells.append(
                f'<td class="{"best" if best else ""}{_off(m, shown)}" data-run="{_e(n)}" data-measure="{_e(m)}" '
                f'data-value="{v!r}">{v:.4f}{sig}{_bounds(data, n, m)}</td>'
            )
        label = f"{_e(n)}{' (baseline)' if n == data.baseline else ''}"
        rows.append(f'<tr><td class="name">{label}</td>{"".join(cells)}</tr>')
    return f'<table id="means"><thead><tr><th class="name">run</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _bounds(data: ReportData, run: str, measure: str) -> str:
    """The interval a mean lies in once its holes are judged, where there are holes (low < high)."""
    low, high = data.bounds.get(run, {}).get(measure, (None, None))
    if low is None or high is None or not low < high:
        return ""
    title = f"once every unjudged document of the top k is judged, each 0 or {data.bounds_grade:g}"
    return (
        f' <span class="bounds" data-low="{low!r}" data-high="{high!r}" title="{_e(title)}">'
        f"[{low:.4f}, {high:.4f}]</span>"
    )


def _comparison_table(data: ReportData, shown: list[str]) -> str:
    if not data.others:
        return "<p class='notes'>One run: nothing to compare.</p>"
    pct = f"{data.confidence * 100:g}%"
    head = (
        "<tr><th class='name'>run</th><th class='name'>measure</th><th>Δ</th>"
        f"<th>{pct} CI</th><th>p (t, Holm)</th><th>p (rand., Holm)</th><th>wins</th><th>ties</th><th>losses</th></tr>"
    )
    rows = []
    for n in data.others:
        for m in data.measures:
            w, t, loss = data.wtl[n][m]
            c = data.comparisons.get(n, {}).get(m)
            attrs = f'class="m{_off(m, shown)}" data-run="{_e(n)}" data-measure="{_e(m)}"'
            if c is None:
                stats = "<td>—</td><td>—</td><td>—</td><td>—</td>"
                delta = data.means[n][m] - data.means[data.baseline][m]
            else:
                attrs += (
                    f' data-delta="{c.delta!r}" data-ci-low="{c.ci_low!r}" data-ci-high="{c.ci_high!r}" '
                    f'data-p-t="{c.p_t_holm!r}" data-p-randomization="{c.p_randomization_holm!r}"'
                )
                delta = c.delta
                stats = (
                    f"<td>[{c.ci_low:+.4f}, {c.ci_high:+.4f}]</td><td>{format_p(c.p_t_holm)}</td>"
                    f"<td>{format_p(c.p_randomization_holm)}{c.marker()}</td>"
                )
            log = " (log)" if m in data.log_scale and c is not None else ""
            cls = "pos" if delta > 0 else "neg" if delta < 0 else ""
            rows.append(
                f'<tr {attrs} data-wins="{w}" data-ties="{t}" data-losses="{loss}"><td class="name">{_e(n)}</td>'
                f'<td class="name">{_e(m)}{log}</td><td class="{cls}">{delta:+.4f}</td>{stats}'
                f"<td>{w}</td><td>{t}</td><td>{loss}</td></tr>"
            )
    return f'<table id="comparisons"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _coverage_table(data: ReportData) -> str:
    """Each ranked run's Judged@k and Hole@k (cells: ``data-run``, ``data-coverage``, ``data-value``)."""
    if not data.coverage:
        return ""
    names = list(next(iter(data.coverage.values())))
    head = "".join(f"<th>{_e(m)}</th>" for m in names)
    rows = "".join(
        f'<tr><td class="name">{_e(n)}</td>'
        + "".join(
            f'<td data-run="{_e(n)}" data-coverage="{_e(m)}" data-value="{v!r}">{v:.4f}</td>'
            for m, v in data.coverage[n].items()
        )
        + "</tr>"
        for n in data.coverage
    )
    return (
        "<h3>Judgments under the numbers</h3><p class='notes'>Judged@k: the share of a run's top k judged for the "
        "query; Hole@k: the share judged for no query at all (BEIR's hole). An unjudged document counts as "
        "non-relevant in every measure above: where the holes are many, a system's value may be low only because "
        "nobody judged what it found."
        + (
            f" Beside a mean, [low, high]: the interval it lies in once every unjudged document of each query's top "
            f"k is judged, each 0 or {data.bounds_grade:g} (for the columns shown by default)."
            if data.bounds_grade is not None
            else ""
        )
        + "</p>"
        f'<table id="coverage"><thead><tr><th class="name">run</th>{head}</tr></thead><tbody>{rows}</tbody></table>'
    )


def _judged_table(data: ReportData, shown: list[str]) -> str:
    """Each run's measures with the human qrels, with the filled qrels of ``irmetrics judge --ppi`` and their
    prediction-powered estimate and interval (rows: ``data-run``, ``data-measure``, ``data-human``,
    ``data-filled``, ``data-estimate``, ``data-low``, ``data-high``)."""
    if not data.judged:
        return ""
    rows = []
    level = ""
    for n, measures in data.judged.items():
        for m, row in measures.items():
            level = f"{(1 - row['alpha']) * 100:g}%"
            attrs = " ".join(
                f'data-{key}="{_attr(row[key])}"' for key in ("human", "filled", "estimate", "low", "high")
            )
            rows.append(
                f'<tr class="m{_off(m, shown)}" data-run="{_e(n)}" data-measure="{_e(m)}" {attrs}>'
                f'<td class="name">{_e(n)}</td><td class="name">{_e(m)}</td><td>{_fmt(row["human"])}</td>'
                f"<td>{_fmt(row['filled'])}</td><td>{_fmt(row['estimate'])}</td>"
                f"<td>[{_fmt(row['low'])}, {_fmt(row['high'])}]</td><td>{row['human_queries']}, "
                f"{row['filled_queries']}, {row['n']} + {row['N']}</td></tr>"
            )
    note = (
        f"Judged by a model: the folder {_e(data.judged_folder)} of irmetrics judge --ppi. Human: the measure with "
        "the human qrels alone; filled: with the model's labels for the holes (the naive value); PPI: the "
        "prediction-powered estimate and its interval (Angelopoulos et al., 2023), the queries whose pool people "
        "judged in full as the labelled set. The interval holds if those queries are a random sample of all of "
        f"them. {_e(JUDGED_NOTE)}"
    )
    head = (
        "<tr><th class='name'>run</th><th class='name'>measure</th><th>human</th><th>filled</th>"
        f"<th>PPI estimate</th><th>PPI {level} interval</th><th>queries (human, filled, PPI)</th></tr>"
    )
    return (
        f"<h3>Model-judged holes: prediction-powered intervals</h3><p class='notes'>{note}</p>"
        f'<table id="judged"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _attr(x: float | None) -> str:
    """A number as a ``data-*`` attribute: its repr (read back exactly), empty for none."""
    return "" if x is None or x != x else repr(x)


def _fmt(x: float | None) -> str:
    return "—" if x is None or x != x else f"{x:.4f}"


#: Measures that get a figure of per-query differences (the first ones, in the evaluation's order).
MAX_DIFFERENCE_FIGURES = 12


def curve_images(data: ReportData) -> list[tuple[str, str]]:
    """``(caption, SVG text)`` of each figure, drawn by :mod:`haystack_irmetrics.plots`: every measure
    family against k, interpolated precision-recall, and the per-query differences to the baseline."""
    from ..core import measure_at_k
    from ..plots import plot_metric_vs_k, plot_pr_curves, plot_sorted_differences

    out: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="irmetrics-report-") as tmp:
        folder = Path(tmp)

        def svg(caption: str, draw: Any) -> None:
            path = folder / f"{len(out)}.svg"
            draw(path)
            out.append((caption, path.read_text(encoding="utf-8")))

        cutoffs: dict[str, dict[str, int]] = {}  # {stem: {measure: k}} of the measures that take a cutoff
        for m in data.measures:
            measure = _parsed(m)
            if measure is not None and measure.cutoff is not None:
                cutoffs.setdefault(m.rpartition("@")[0], {})[m] = measure.cutoff
        for stem, own in cutoffs.items():
            series: dict[str, dict[int, float]] = {}
            for n in data.names:
                if n in data.runs:
                    ks = sorted(set(CURVE_KS) | set(own.values()))
                    curve = measure_at_k(data.qrels, data.runs[n], stem, ks, preset=data.preset)
                    series[n] = dict(zip(curve.ks.tolist(), curve.mean.tolist()))
                else:
                    series[n] = {k: data.means[n][m] for m, k in own.items()}
            svg(f"{stem} against k", lambda p, s=series, f=stem: plot_metric_vs_k(s, p, family=f))
        ranked = {n: data.runs[n] for n in data.names if n in data.runs}
        if ranked:
            svg("Interpolated precision-recall", lambda p: plot_pr_curves(data.qrels, ranked, p, preset=data.preset))
        # Every run's per-query differences to the baseline, one figure per measure the summary shows by
        # default (all runs in it): 36 measures would bury the page in figures.
        for m in summary_columns(data.measures)[:MAX_DIFFERENCE_FIGURES] if data.others else ():
            diffs = {n: np.subtract(*paired_values(data, n, m, log=False)) for n in data.others}
            svg(
                f"{m}: per-query differences to {data.baseline}",
                lambda p, d=diffs, m=m: plot_sorted_differences(d, p, metric=m, baseline=data.baseline),
            )
    return out


def _curves(data: ReportData) -> str:
    if importlib.util.find_spec("matplotlib") is None:
        return "<p class='notes'>No curves: matplotlib is not installed (pip install 'haystack-irmetrics[plots]').</p>"
    figures = []
    for caption, svg in curve_images(data):
        uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
        figures.append(f'<figure><img alt="{_e(caption)}" src="{uri}"><figcaption>{_e(caption)}</figcaption></figure>')
    return f'<div class="curves">{"".join(figures)}</div>'


def render(data: ReportData, sections: Sequence[tuple[str, str, str]] = ()) -> str:
    """The page's HTML text; ``sections``: more ``(id, title, html)`` sections after the page's own, each
    linked in the navigation (the feedback report's windows)."""
    blob = script_json(payload(data))
    shown = summary_columns(data.measures)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    notes = "".join(f"<li>{_e(n)}</li>" for n in data.notes)
    sig = (
        f"Against the baseline {_e(data.baseline)}, per measure over the queries either run is scored on: Δ = run − "
        f"baseline, its {data.confidence * 100:g}% percentile bootstrap interval ({data.n_resamples:,} resamples), "
        "two-sided paired t-test and randomization p-values, Holm-adjusted over every run × measure tested; "
        "<sup class='sig better'>*</sup> p &lt; 0.05, <sup class='sig better'>**</sup> p &lt; 0.01 (randomization; "
        "<sup class='sig worse'>**</sup>: significantly worse than the baseline). Wins, ties and "
        "losses count queries. Bold: the best mean of each column."
    )
    links = "".join(f'<a href="#{_e(key)}">{_e(title)}</a>' for key, title, _ in sections)
    more = "\n".join(body for _, _, body in sections)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(data.title)}</title>
<style>{CSS}</style>
</head><body>
<header><h1>{_e(data.title)}</h1>
<p>{len(data.names)} runs · {len(data.qids):,} judged queries · preset {_e(data.preset.name)} · baseline {_e(data.baseline)} ·
generated {when} by haystack-irmetrics</p></header>
<nav><a href="#summary">Summary</a><a href="#curves">Curves</a><a href="#queries">Per query</a>{links}</nav>
<main>
<section id="summary"><h2>Summary</h2>
{_column_chooser(data, shown)}
{_means_table(data, shown)}
<h3>Against the baseline</h3>
<p class="notes">{sig}</p>
{_comparison_table(data, shown)}
{_coverage_table(data)}
{_judged_table(data, shown)}
{f'<ul class="notes">{notes}</ul>' if notes else ""}
</section>
<section id="curves"><h2>Curves</h2>{_curves(data)}</section>
<section id="queries"><h2>Per query</h2>
<div class="controls"><label>measure <select id="pq-measure"></select></label>
<label>filter <input id="pq-filter" type="search" placeholder="query id or text"></label>
<label>rows <select id="pq-size"><option>25</option><option selected>50</option><option>100</option><option>500</option></select></label>
<span id="pq-pager"></span></div>
<p class="notes legend">Click a row for its ranked lists (top {data.depth}):
<span style="color:var(--rel)">■ judged relevant</span><span style="color:var(--non)">■ judged non-relevant</span>
<span style="color:var(--unj)">■ unjudged</span>; hover a document to find it in the other runs.</p>
<table id="pq"><thead></thead><tbody></tbody></table>
</section>
{more}
</main>
<script id="report-data" type="application/json">{blob}</script>
<script>{JS}</script>
</body></html>
"""


__all__ = [
    "CURVE_KS",
    "MAX_SUMMARY_COLUMNS",
    "SUMMARY_CUTOFF",
    "SUMMARY_EXTRA",
    "curve_images",
    "payload",
    "render",
    "script_json",
    "summary_columns",
]
