"""The output folder of ``irmetrics usefulness``, written whole file by file (:func:`write_folder`), the summary last.

``DIR/qrels.tsv`` (BEIR's layout: each labelled pair's label, 0 or 1, or the F1 with ``repr``'s digits),
``DIR/generations.jsonl`` (one line per labelled pair: ``query_id``, ``doc_id``, ``answer``, ``label``),
``DIR/metrics.json`` (per run: each measure's mean and per-query values; with ``--end-to-end`` the end-to-end
scores and the correlations), ``DIR/end_to_end.jsonl`` (with ``--end-to-end``: ``run``, ``query_id``, ``docs``,
``answer``, ``score``) and ``DIR/summary.json``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .endtoend import EndToEnd, correlation_json
from .labelling import UsefulnessResult

#: Every file the command writes in its folder (end_to_end.jsonl with --end-to-end).
FILES = ("qrels.tsv", "generations.jsonl", "metrics.json", "summary.json", "end_to_end.jsonl")
#: The files that, all present, show a folder is this command's.
SIGNATURE = ("generations.jsonl", "summary.json")


def write_folder(output: str | os.PathLike[str], result: UsefulnessResult) -> None:
    """Write ``result`` into ``output`` (made by the caller's lock), each file whole or not at all; a stale
    ``end_to_end.jsonl`` of an earlier run is removed when this one has none."""
    from ..io.output import write_text
    from ..io.tables import json_text
    from ..io.trec import write_qrels

    folder = Path(output)
    write_qrels(result.labels, folder / FILES[0], layout="beir")
    rows = [
        {"query_id": q, "doc_id": d, "answer": answer, "label": result.labels[q][d]}
        for (q, d), answer in result.generations.items()
    ]
    write_text(folder / FILES[1], "".join(json_text(row, ensure_ascii=False) + "\n" for row in rows))
    write_text(folder / FILES[2], json_text(metrics_json(result), indent=2) + "\n")
    if result.end_to_end is not None:
        write_text(folder / FILES[4], "".join(_together_lines(result.end_to_end)))
    else:
        (folder / FILES[4]).unlink(missing_ok=True)
    write_text(folder / FILES[3], json_text(result.summary, indent=2) + "\n")


def _together_lines(runs: dict[str, EndToEnd]) -> list[str]:
    from ..io.tables import json_text

    return [
        json_text(
            {"run": name, "query_id": q, "docs": list(e2e.docs[q]), "answer": answer, "score": e2e.per_query[q]},
            ensure_ascii=False,
        )
        + "\n"
        for name, e2e in runs.items()
        for q, answer in e2e.answers.items()
    ]


def metrics_json(result: UsefulnessResult) -> dict[str, Any]:
    """``metrics.json``: ``runs`` (per run ``means``, ``per_query`` and, end to end, ``end_to_end``: ``top``,
    ``mean``, ``per_query``, ``empty_generations`` and ``correlation`` across queries, per measure
    ``{"kendall": ..., "spearman": ...}``, each ``{"statistic", "pvalue", "n"}``) and ``across_runs`` (3 runs or
    more, end to end)."""
    runs: dict[str, Any] = {}
    for name, scores in result.scores.items():
        runs[name] = {"means": scores.means, "per_query": scores.per_query}
        if result.end_to_end is not None:
            e2e = result.end_to_end[name]
            runs[name]["end_to_end"] = {
                "top": e2e.top,
                "mean": e2e.mean,
                "per_query": e2e.per_query,
                "empty_generations": e2e.empty,
                "correlation": _coefficients(e2e.correlation),
            }
    out: dict[str, Any] = {"answer_metric": result.summary["answer_metric"], "runs": runs}
    if result.across_runs is not None:
        out["across_runs"] = _coefficients(result.across_runs)
    return out


def _coefficients(by_measure: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        m: {method: correlation_json(c) for method, c in coefficients.items()} for m, coefficients in by_measure.items()
    }


__all__ = ["FILES", "SIGNATURE", "metrics_json", "write_folder"]
