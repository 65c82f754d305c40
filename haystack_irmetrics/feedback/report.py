"""Stage 6 of the feedback path: :class:`FeedbackEvaluation`, the result, and its renderings -- markdown,
CSV and JSON tables, PNG plots.

Markers: ``*`` / ``**`` after a system's mean when its difference from the baseline is significant at
0.05 / 0.01 after Holm's correction over the metrics of that system and list variant (the test named in
the settings, paired randomization by default). Full-list and condensed-list scores and Judged@k are
always reported side by side.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import Preset
from ..core.results import bounded, short_list
from ..errors import FeedbackError
from ..io.output import write_text
from ..io.tables import json_ready, json_text, markdown_cell, write_csv
from ..stats.compare import format_p
from ..stats.windows import Window
from .judgments import ALL, AggregatedFeedback
from .scoring import VARIANTS, SegmentResult, feedback_preset

MAX_SKIPPED_LISTED = 20


@dataclass(frozen=True)
class FeedbackEvaluation:
    """Result of :func:`~.evaluate.evaluate_feedback` (frozen); render it with :meth:`to_markdown` or
    :meth:`write_report`."""

    feedback: AggregatedFeedback
    settings: dict[str, Any]
    systems: list[str]
    baseline: str
    metrics: list[str]
    overall: SegmentResult
    segments: list[SegmentResult] = field(default_factory=list)
    #: The logged rankings' measures per time window (:func:`~.windows.feedback_windows`), when asked for
    #: (:func:`~.job.run_feedback` with ``windows``); ``window`` is their width (``"1d"``), ``window_alpha`` the
    #: adjusted p below which a drop is flagged.
    #: The markdown, JSON, report files and :func:`~haystack_irmetrics.report.feedback_report` show them.
    windows: list[Window] = field(default_factory=list)
    window: str | None = None
    window_alpha: float = 0.05

    def __repr__(self) -> str:
        """Short whatever the size of the log: source, strategy, queries, systems, metrics, segments."""
        return bounded(
            f"FeedbackEvaluation(source={self.feedback.source!r}, strategy={self.feedback.strategy.name!r}, "
            f"queries={len(self.overall.queries)}, systems={short_list(self.systems)}, baseline={self.baseline!r}, "
            f"metrics={short_list(self.metrics)}, segments={len(self.segments)})"
        )

    @property
    def preset(self) -> Preset:
        """The preset every score of this evaluation used (:func:`~.scoring.feedback_preset`): the report page
        of it evaluates with this one."""
        return feedback_preset(self.settings["preset"], self.settings["threshold"])

    @property
    def variants(self) -> tuple[str, ...]:
        return VARIANTS if self.settings["condensed"] else VARIANTS[:1]

    def means(self, variant: str = "full", segment: SegmentResult | None = None) -> dict[str, dict[str, float]]:
        """``{system: {metric: mean}}`` (unrounded) for one variant."""
        part = segment or self.overall
        return {name: s.means(variant) for name, s in part.systems.items()}

    def to_markdown(self, **options: Any) -> str:
        return to_markdown(self, **options)

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)

    def write_report(
        self, directory: str | os.PathLike[str], *, plots: bool | None = None, per_query: bool = True
    ) -> list[Path]:
        """Write report.md, report.json, scores.csv, comparisons.csv, segments (if any), per_query.csv,
        skipped_rows.csv, qrels.txt and, when matplotlib is installed (or ``plots=True``), PNG plots."""
        return write_report(self, directory, plots=plots, per_query=per_query)


def _fmt(x: float, digits: int = 4) -> str:
    return "nan" if x != x else f"{x:.{digits}f}"


def _marker(ev: FeedbackEvaluation, part: SegmentResult, system: str, variant: str, metric: str) -> str:
    for c in part.comparisons.get(system, {}).get(variant, []):
        if c.metric[2] == metric:
            return c.marker(ev.settings["test"])
    return ""


def _scores_table(ev: FeedbackEvaluation, part: SegmentResult, with_ci: bool = False) -> list[str]:
    head = "| metric | " + " | ".join(map(markdown_cell, ev.systems)) + " |"
    lines = [head, "|---|" + "---:|" * len(ev.systems)]
    k_values = ev.settings["k_values"]
    for k in k_values:
        key = f"Judged@{k}"
        cells = [_fmt(part.systems[s].judged[key].mean()) for s in ev.systems]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    for variant in ev.variants:
        for m in ev.metrics:
            cells = []
            for s in ev.systems:
                mean = float(part.systems[s].values[variant][m].mean())
                cell = _fmt(mean) + _marker(ev, part, s, variant, m)
                if with_ci:
                    lo, hi = part.intervals[s][variant][m]
                    cell += f" [{_fmt(lo, 3)}, {_fmt(hi, 3)}]"
                cells.append(cell)
            name = m if variant == "full" else f"{m} condensed"
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _comparison_table(ev: FeedbackEvaluation, part: SegmentResult) -> list[str]:
    pct = f"{ev.settings['confidence']:.0%}"
    lines = [
        f"| system | metric | list | {markdown_cell(ev.baseline)} | system | delta | {pct} CI | p (t) | p (rand.) | p Holm (t) | p Holm (rand.) |",
        "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for system, by_variant in part.comparisons.items():
        for variant, comps in by_variant.items():
            for c in comps:
                lines.append(
                    f"| {markdown_cell(system)} | {c.metric[2]} | {variant} | {_fmt(c.mean_b)} | {_fmt(c.mean_a)} | "
                    f"{c.delta:+.4f}{c.marker(ev.settings['test'])} | [{c.ci_low:+.4f}, {c.ci_high:+.4f}] | "
                    + " | ".join(map(format_p, (c.p_t, c.p_randomization, c.p_t_holm, c.p_randomization_holm)))
                    + " |"
                )
    return lines


def to_markdown(ev: FeedbackEvaluation, *, intervals: bool = True, skipped: int = MAX_SKIPPED_LISTED) -> str:
    """The report as markdown: inputs and counts, scores, comparisons, segments, skipped rows."""
    s = ev.feedback.summary(ev.settings["threshold"])
    st = ev.settings
    part = ev.overall
    n_tests = len(ev.metrics)
    test = "paired randomization" if st["test"] == "randomization" else "paired t-test"
    out = [
        f"# Feedback evaluation: {s['source']}",
        "",
        f"- Log: {s['rows']:,} rows, {s['usable_rows']:,} usable, **{s['skipped_rows']:,} skipped as malformed**"
        + (" (listed below and in skipped_rows.csv)" if s["skipped_rows"] else ""),
        f"- Judgments: {s['strategy']}",
        f"- {s['votes']:,} votes; {s['judged_pairs']:,} judged (query, document) pairs of {s['shown_pairs']:,} "
        f"shown ({s['unjudged_shown_pairs']:,} shown but unjudged); {s['relevant_pairs']:,} relevant at "
        f"threshold {st['threshold']:g}",
        f"- Queries scored: {len(part.queries):,} with judgments ({part.queries_with_relevant:,} with a relevant "
        f"document); every system is scored on these, a query it does not answer scores 0",
        f"- NDCG uses the labels as gains; P, Recall, MAP, MRR and R_cap count a label >= {st['threshold']:g} as "
        "relevant. Full lists count unjudged documents as not relevant; condensed lists drop them first; "
        "Judged@k is the share of the top k that has a judgment.",
        f"- Significance: {test} vs `{ev.baseline}`, Holm-adjusted over the {n_tests} metrics of each system and "
        f"list; `*` p < 0.05, `**` p < 0.01. Intervals: {st['confidence']:.0%} percentile bootstrap over queries "
        f"({st['n_resamples']:,} resamples, seed {st['seed']}).",
        *(
            ["- With one query there is nothing to resample or test: intervals are the value itself, no comparison."]
            if len(part.queries) < 2
            else []
        ),
        "",
        f"## Scores ({len(part.queries):,} queries)",
        "",
        *_scores_table(ev, part, with_ci=intervals),
    ]
    if part.comparisons:
        out += ["", f"## Differences from `{ev.baseline}`", "", *_comparison_table(ev, part)]
    if ev.segments:
        out += ["", "## Per segment", ""]
        out.append("| segment | queries | metric | " + " | ".join(map(markdown_cell, ev.systems)) + " |")
        out.append("|---|---:|---|" + "---:|" * len(ev.systems))
        for seg in ev.segments:
            for k in st["k_values"]:
                key = f"Judged@{k}"
                cells = [_fmt(seg.systems[n].judged[key].mean()) for n in ev.systems]
                out.append(f"| {markdown_cell(seg.label)} | {len(seg.queries):,} | {key} | " + " | ".join(cells) + " |")
            for m in ev.metrics:
                cells = [
                    _fmt(float(seg.systems[n].values["full"][m].mean())) + _marker(ev, seg, n, "full", m)
                    for n in ev.systems
                ]
                out.append(f"| {markdown_cell(seg.label)} | {len(seg.queries):,} | {m} | " + " | ".join(cells) + " |")
    if ev.windows:
        out += windows_markdown(ev)
    if s["skipped_rows"]:
        sk = ev.feedback.skipped
        out += [
            "",
            f"## Skipped rows ({sk.height:,})",
            "",
            "| row | line | column | value | reason |",
            "|---:|---:|---|---|---|",
        ]
        for r in sk.head(skipped).iter_rows(named=True):
            line = "" if r["line"] is None else r["line"]
            value = "" if r["value"] is None else markdown_cell(r["value"])
            cells = (markdown_cell(r["column"] or ""), value, markdown_cell(r["reason"]))
            out.append(f"| {r['row']} | {line} | " + " | ".join(cells) + " |")
        if sk.height > skipped:
            out.append(f"\n... and {sk.height - skipped:,} more (skipped_rows.csv lists all).")
    return "\n".join(out) + "\n"


def _segment_rows(ev: FeedbackEvaluation) -> list[tuple[str, SegmentResult]]:
    return [("all", ev.overall)] + [(seg.label, seg) for seg in ev.segments]


def score_rows(ev: FeedbackEvaluation) -> list[dict[str, Any]]:
    """One row per (segment, system, list, metric): mean, interval, query count."""
    rows = []
    for label, part in _segment_rows(ev):
        for name, s in part.systems.items():
            n = len(s.queries)
            for k, values in s.judged.items():
                lo, hi = part.judged_intervals[name][k]
                rows.append(_score_row(label, name, "judged", k, float(values.mean()), lo, hi, n))
            for variant in ev.variants:
                for m in ev.metrics:
                    lo, hi = part.intervals[name][variant][m]
                    rows.append(_score_row(label, name, variant, m, float(s.values[variant][m].mean()), lo, hi, n))
    return rows


def _score_row(
    segment: str, system: str, variant: str, metric: str, mean: float, lo: float, hi: float, n: int
) -> dict[str, Any]:
    return {
        "segment": segment,
        "system": system,
        "list": variant,
        "metric": metric,
        "mean": mean,
        "ci_low": lo,
        "ci_high": hi,
        "queries": n,
    }


def comparison_rows(ev: FeedbackEvaluation) -> list[dict[str, Any]]:
    """One row per (segment, system, list, metric) compared with the baseline."""
    rows = []
    for label, part in _segment_rows(ev):
        for system, by_variant in part.comparisons.items():
            for variant, comps in by_variant.items():
                for c in comps:
                    row = {"segment": label, "system": system, "baseline": ev.baseline, "list": variant}
                    row.update(c.to_dict())
                    row["metric"] = c.metric[2]
                    row["marker"] = c.marker(ev.settings["test"])
                    rows.append(row)
    return rows


def to_dict(ev: FeedbackEvaluation) -> dict[str, Any]:
    """Everything in the report as JSON-ready data (unrounded numbers)."""
    sk = ev.feedback.skipped
    return {
        "summary": ev.feedback.summary(ev.settings["threshold"]),
        "settings": ev.settings,
        "systems": ev.systems,
        "baseline": ev.baseline,
        "scores": score_rows(ev),
        "comparisons": comparison_rows(ev),
        "segments": [{"segment": seg.label, "queries": len(seg.queries)} for seg in ev.segments],
        "skipped_rows": sk.to_dicts(),
        **({"windows": [w.to_dict() for w in ev.windows]} if ev.windows else {}),
    }


#: ``value`` with non-finite floats as ``None`` and tuples as lists (strict JSON): the package's one
#: :func:`~haystack_irmetrics.io.tables.json_ready`, under the name this module has exported.
jsonable = json_ready


def _write_csv(path: Path, rows: list[dict[str, Any]], fields: list[str] | None = None) -> Path:
    # the package's one CSV writer: no formula a spreadsheet would run, the file written whole
    write_csv(path, fields or (list(rows[0]) if rows else []), rows)
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def write_report(
    ev: FeedbackEvaluation, directory: str | os.PathLike[str], *, plots: bool | None = None, per_query: bool = True
) -> list[Path]:
    """Write the report files into ``directory`` (created); returns the paths written.

    ``plots=None`` draws the plots when matplotlib is installed; ``True`` requires it.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "report.md"]
    write_text(written[0], to_markdown(ev))  # whole or not at all, as every file of the report
    data = to_dict(ev)
    path = out / "report.json"
    write_text(path, json_text(data, indent=2) + "\n")
    written.append(path)
    written.append(_write_csv(out / "scores.csv", data["scores"]))
    if data["comparisons"]:
        written.append(_write_csv(out / "comparisons.csv", data["comparisons"]))
    written.append(
        _write_csv(out / "skipped_rows.csv", data["skipped_rows"], ["row", "line", "column", "value", "reason"])
    )
    if ev.windows:
        written.append(_write_csv(out / "windows.csv", data["windows"]))
    if per_query:
        written.append(_write_per_query(ev, out / "per_query.csv"))
    try:
        ev.feedback.write_trec_qrels(out / "qrels.txt", ALL)
        written.append(out / "qrels.txt")
    except FeedbackError as e:  # ids with whitespace: the report still stands without the qrels file
        write_text(out / "qrels.txt.skipped", f"{e}\n")
        written.append(out / "qrels.txt.skipped")
    if plots is not False:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            if plots:
                raise
        else:
            written.extend(write_plots(ev, out / "plots"))
            written.extend(write_window_plots(ev, out / "plots"))
    return written


def _write_per_query(ev: FeedbackEvaluation, path: Path) -> Path:
    """Wide per-query table of the whole log: ``query`` then one column per (system, list, metric)."""
    part = ev.overall
    cols: dict[str, Any] = {"query": part.queries}
    for name, s in part.systems.items():
        for k, v in s.judged.items():
            cols[f"{name}|{k}"] = v
        for variant in ev.variants:
            for m in ev.metrics:
                cols[f"{name}|{variant}|{m}"] = s.values[variant][m]
    write_csv(path, list(cols), zip(*cols.values(), strict=True))
    return path


def primary_metric(ev: FeedbackEvaluation) -> str:
    """The metric the plots focus on: NDCG at 10 (or the largest cutoff below), else the first metric."""
    ndcg = [m for m in ev.metrics if m.startswith("NDCG@")]
    if not ndcg:
        return ev.metrics[0]
    ks = sorted(int(m.split("@")[1]) for m in ndcg)
    below = [k for k in ks if k <= 10]
    return f"NDCG@{below[-1] if below else ks[0]}"


def write_plots(ev: FeedbackEvaluation, directory: str | os.PathLike[str], metric: str | None = None) -> list[Path]:
    """Per-query delta histograms (each system vs the baseline), metric-vs-k curves, score distributions."""
    from ..plots import plot_delta_histogram, plot_metric_vs_k, plot_score_distribution

    out = Path(directory)
    part = ev.overall
    metric = metric or primary_metric(ev)
    paths = []
    base = part.systems[ev.baseline].values["full"][metric]
    for name in ev.systems:
        if name == ev.baseline:
            continue
        values = part.systems[name].values["full"][metric]
        paths.append(
            plot_delta_histogram(
                values, base, out / f"delta_{_slug(name)}_{_slug(metric)}.png", metric=metric, names=(name, ev.baseline)
            )
        )
    families = list(dict.fromkeys(m.split("@")[0] for m in ev.metrics))
    for family in families:
        series: dict[str, dict[int, float]] = {}
        styles: dict[str, dict[str, str]] = {}
        for i, name in enumerate(ev.systems):
            for variant in ev.variants:
                label = name if variant == "full" else f"{name} (condensed)"
                series[label] = {
                    int(m.split("@")[1]): float(part.systems[name].values[variant][m].mean())
                    for m in ev.metrics
                    if m.split("@")[0] == family
                }
                styles[label] = {"color": f"C{i % 10}", "linestyle": "-" if variant == "full" else "--"}
        paths.append(plot_metric_vs_k(series, out / f"metric_vs_k_{_slug(family)}.png", family=family, styles=styles))
    dist = {name: part.systems[name].values["full"][metric] for name in ev.systems}
    paths.append(plot_score_distribution(dist, out / f"distribution_{_slug(metric)}.png", metric=metric))
    return paths


def _by_measure(ev: FeedbackEvaluation) -> dict[str, list[Window]]:
    out: dict[str, list[Window]] = {}
    for w in ev.windows:
        out.setdefault(w.measure, []).append(w)
    return out


def windows_markdown(ev: FeedbackEvaluation) -> list[str]:
    """The ``## Windows`` section: each measure per window with its interval, change and Holm p; ``drop``
    marks a flagged window."""
    lines = [
        "",
        f"## Windows ({ev.window or 'time windows'}, the logged rankings)",
        "",
        "| measure | window | queries | mean | ci_low | ci_high | delta | p (Holm) | flagged |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in ev.windows:
        delta = "" if r.delta is None else f"{r.delta:+.4f}"
        p = "" if r.p_holm is None else format_p(r.p_holm)
        cells = [markdown_cell(r.measure), r.start, str(r.size), _fmt(r.mean), _fmt(r.ci_low), _fmt(r.ci_high)]
        lines.append("| " + " | ".join([*cells, delta, p, "drop" if r.flagged else ""]) + " |")
    return lines


def write_window_plots(ev: FeedbackEvaluation, directory: str | os.PathLike[str]) -> list[Path]:
    """One trend plot per measure of ``ev.windows`` (:func:`~haystack_irmetrics.plots.windows.plot_windows`):
    ``windows_<measure>.png``."""
    from ..plots.windows import plot_windows

    out = Path(directory)
    return [plot_windows(rows, out / f"windows_{_slug(m)}.png") for m, rows in _by_measure(ev).items()]


def windows_html(ev: FeedbackEvaluation) -> str:
    """The report page's ``<section id="windows">``: per measure, its trend plot (an inlined SVG, as the page
    inlines its other figures; none without matplotlib) and its table, flagged windows marked ``drop``
    (``<tr class="flagged">``)."""
    import base64
    import html
    import importlib.util
    import tempfile

    e = html.escape
    drawn = importlib.util.find_spec("matplotlib") is not None
    pct = f"{ev.settings['confidence'] * 100:g}%"
    parts = [
        '<section id="windows"><h2>Windows</h2>',
        "<style>#windows tr.flagged td { background: #ffebe9; font-weight: 600; }</style>",
        f'<p class="notes">The rankings users saw, scored per {e(ev.window or "time window")} window (aligned to the '
        f"epoch, UTC) against the judgments of the whole log: each measure's mean over the window's judged queries "
        f"with its {pct} percentile bootstrap interval; each window against the previous one or the baseline window "
        "by Welch's t-test, Holm-adjusted across the windows; <b>drop</b>: worse than its reference at an adjusted "
        f"p below {ev.window_alpha:g}.</p>",
    ]
    with tempfile.TemporaryDirectory(prefix="irmetrics-windows-") as tmp:
        for measure, rows in _by_measure(ev).items():
            parts.append(f"<h3>{e(measure)}</h3>")
            if drawn:
                from ..plots.windows import plot_windows

                svg = plot_windows(rows, Path(tmp) / f"{len(parts)}.svg").read_text(encoding="utf-8")
                uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
                caption = e(f"{measure} per window")
                parts.append(
                    f'<div class="curves"><figure><img alt="{caption}" src="{uri}">'
                    f"<figcaption>{caption}</figcaption></figure></div>"
                )
            head = ["queries", "mean", f"{pct} CI", "delta", "p", "p Holm", "flagged"]
            cells = '<th class="name">window</th><th class="name">end</th>' + "".join(f"<th>{h}</th>" for h in head)
            parts.append(f'<table class="windows"><thead><tr>{cells}</tr></thead><tbody>')
            for r in rows:
                delta = "" if r.delta is None else f"{r.delta:+.4f}"
                sign = "" if not r.delta else (' class="neg"' if r.delta < 0 else ' class="pos"')
                cells = [
                    f'<td class="name">{e(r.start)}</td><td class="name">{e(r.end)}</td><td>{r.size:,}</td>',
                    f"<td>{_fmt(r.mean)}</td><td>[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]</td><td{sign}>{delta}</td>",
                    f"<td>{'' if r.p_value is None else format_p(r.p_value)}</td>",
                    f"<td>{'' if r.p_holm is None else format_p(r.p_holm)}</td><td>{'drop' if r.flagged else ''}</td>",
                ]
                row = '<tr class="flagged">' if r.flagged else "<tr>"
                parts.append(row + "".join(cells) + "</tr>")
            parts.append("</tbody></table>")
    parts.append("</section>")
    return "\n".join(parts)


__all__ = [
    "FeedbackEvaluation",
    "comparison_rows",
    "jsonable",
    "primary_metric",
    "score_rows",
    "to_dict",
    "to_markdown",
    "windows_html",
    "windows_markdown",
    "write_plots",
    "write_report",
    "write_window_plots",
]
