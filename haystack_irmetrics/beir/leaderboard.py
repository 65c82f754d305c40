"""The leaderboard of a BEIR suite: each dataset's numbers, their average, and published references.

``leaderboard.json`` holds every measure of every dataset (as ``metrics.json`` rounds it: 5 decimals)
and their average; ``leaderboard.md`` shows nDCG@10 and Recall@100 beside the published figures
for the same dataset and retriever family (``references.json``, shipped with the package, each
source cited) and the difference.

A dataset folder holding sub-datasets (CQADupStack's 12 forums) is one row: the mean of its
members, as BEIR reports it; its members are listed under ``groups``. A row's value, and the
average, are means of the unrounded values (``raw_metrics`` of each ``summary.json``), then rounded;
a single dataset's row is its ``metrics.json``.

A row whose qrels judge documents its corpus lacks (ArguAna's do) is marked ``†`` in ``leaderboard.md``
with a note giving the count: those documents count as relevant and unretrievable, as in BEIR's
evaluation and the published figures (``judged_documents_missing_from_corpus`` in ``leaderboard.json``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..checks import is_number
from ..io.tables import json_text, markdown_cell

#: The measures ``leaderboard.md`` shows.
LEADERBOARD_MEASURES = ("NDCG@10", "Recall@100")
#: Configuration keys the leaderboard repeats (those every dataset of a suite shares).
_SHARED = ("model", "top_k", "k_values", "chunk_words", "chunk_overlap", "engine", "package_version")


@cache
def load_references() -> dict[str, Any]:
    """The published figures shipped with the package: ``{"sources": {key: {label, family, model,
    setup, citation, values: {dataset: {measure: value}}}}}``."""
    return json.loads((Path(__file__).resolve().parent / "references.json").read_text(encoding="utf-8"))


def _same_model(published: str, used: str) -> bool:
    tail = published.rsplit("/", 1)[-1].lower()
    used = used.rstrip("/").lower()
    return used == published.lower() or used.rsplit("/", 1)[-1] == tail


#: The built-in retrievers of the BM25 family (compared with the published BM25 figures).
BM25_RETRIEVERS = ("bm25", "haystack-bm25")


def reference_sources(retriever: str, models: Sequence[str]) -> list[str]:
    """The reference sources for a retriever: BM25's for the built-in BM25 engines (``bm25``, bm25s;
    ``haystack-bm25``, Haystack's in-memory BM25: other analysis, same family); a dense source whose
    model is one the pipeline uses (not for ``hybrid``, which fuses two retrievers); else none."""
    sources = load_references()["sources"]
    if retriever in BM25_RETRIEVERS:
        return [key for key, src in sources.items() if src["family"] == "bm25"]
    if retriever == "hybrid":
        return []
    return [key for key, src in sources.items() if src["model"] and any(_same_model(src["model"], m) for m in models)]


@dataclass(frozen=True)
class Leaderboard:
    """One row per dataset (a group of sub-datasets is one row) and their average.

    :ivar datasets: ``{row: {measure: value}}``, rounded to 5 decimals.
    :ivar average: ``{measure: mean over the rows}``, rounded to 5 decimals.
    :ivar groups: ``{group: {member: {measure: value}}}`` for rows that average sub-datasets.
    :ivar configuration: what every dataset of the suite shares (retriever, model, top_k, k, ...).
    :ivar references: ``{source: {row: {measure: published value}}}`` for the retriever's family.
    :ivar missing_documents: ``{row: judged documents missing from its corpus}`` for the rows that have any
        (a group: the sum over its members).
    :ivar holes: ``{row: {"Hole@10": share, ...}}``: BEIR's hole at the shown measures' k (a group: the mean
        of its members); ``hole_bounds``: ``{row: {measure: [low, high]}}``, where the value lies once the
        holes are judged 0 or 1 (a group: the means of its members' bounds). Rows of summaries written
        before these existed have none.
    """

    datasets: dict[str, dict[str, float]]
    average: dict[str, float]
    groups: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    configuration: dict[str, Any] = field(default_factory=dict)
    references: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    missing_documents: dict[str, int] = field(default_factory=dict)
    holes: dict[str, dict[str, float]] = field(default_factory=dict)
    hole_bounds: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        sources = load_references()["sources"]
        return {
            "datasets": self.datasets,
            "average": self.average,
            "n_datasets": len(self.datasets),
            "groups": self.groups,
            "configuration": self.configuration,
            "references": {
                key: {"label": sources[key]["label"], "citation": sources[key]["citation"], "values": values}
                for key, values in self.references.items()
            },
            "judged_documents_missing_from_corpus": dict(self.missing_documents),
            "holes": self.holes,
            "hole_bounds": self.hole_bounds,
        }

    def to_json(self) -> str:
        return json_text(self.to_dict(), indent=2) + "\n"

    def markdown(self) -> str:
        """nDCG@10 and Recall@100 per row and on average, beside the published references and the difference."""
        sources = load_references()["sources"]
        config = self.configuration
        lines = [
            "# BEIR leaderboard",
            "",
            f"Retriever `{config.get('pipeline')}`"
            + (f", model `{config['model']}`" if config.get("model") else "")
            + f", top_k {config.get('top_k')}, {len(self.datasets)} dataset{'' if len(self.datasets) == 1 else 's'}"
            + (
                f" ({', '.join(f'{g}: mean of its {len(m)} sub-datasets' for g, m in self.groups.items())})"
                if self.groups
                else ""
            )
            + ". BEIR's numbers, 5 decimals; Δ = this run − the reference.",
            "",
        ]
        header, align = ["dataset"], ["---"]
        columns: list[tuple[str, str | None]] = []  # (measure, source or None for ours)
        for measure in LEADERBOARD_MEASURES:
            columns.append((measure, None))
            header.append(measure)
            align.append("---:")
            for key, values in self.references.items():
                if any(measure in row for row in values.values()):
                    columns.append((measure, key))
                    header += [sources[key]["label"], "Δ"]
                    align += ["---:", "---:"]
        bounded = [m for m in LEADERBOARD_MEASURES if any(m in b for b in self.hole_bounds.values())]
        hole_names = list(dict.fromkeys("Hole@" + m.split("@")[1] for m in bounded))
        header += hole_names + [f"{m} if holes judged" for m in bounded]
        align += ["---:"] * (len(hole_names) + len(bounded))
        lines += ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
        for row, values in [*self.datasets.items(), ("**average**", self.average)]:
            name = row if row == "**average**" else markdown_cell(row)  # a dataset's name: its folder's
            cells = [f"{name} †" if row in self.missing_documents else name]
            for measure, key in columns:
                ours = values.get(measure)
                if key is None:
                    cells.append("—" if ours is None else f"{ours:.5f}")
                    continue
                ref = self._reference_average(key, measure) if row == "**average**" else None
                if row != "**average**":
                    ref = self.references[key].get(row, {}).get(measure)
                cells.append("—" if ref is None else f"{ref:g}")
                cells.append("—" if ref is None or ours is None else f"{ours - ref:+.4f}")
            holes = self._average_holes() if row == "**average**" else self.holes.get(row, {})
            cells += ["—" if name not in holes else f"{holes[name]:.5f}" for name in hole_names]
            bounds = self._average_bounds() if row == "**average**" else self.hole_bounds.get(row, {})
            cells += ["—" if m not in bounds else f"[{bounds[m][0]:.5f}, {bounds[m][1]:.5f}]" for m in bounded]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        if self.missing_documents:
            counts = ", ".join(f"{row} {n:,}" for row, n in self.missing_documents.items())
            lines += [
                f"† Judged documents missing from the corpus: {counts}. They count as relevant and unretrievable, "
                "as in BEIR's evaluation and the published figures.",
                "",
            ]
        if bounded:
            lines += [
                f"{', '.join(hole_names)}: the share of the top k that no query judged (BEIR's hole). "
                '"If holes judged": the interval the value lies in once each unjudged document of a query\'s top k '
                "is judged 0 or 1 (a hole judged relevant can also lower nDCG).",
                "",
            ]
        if self.references:
            lines.append("References (a reference average is shown when every row has that reference):")
            lines.append("")
            for key in self.references:
                src = sources[key]
                lines.append(f"- {src['label']}: {src['setup']}. Source: {src['citation']}.")
        else:
            lines.append(
                "No published reference for this retriever: references are shipped for BM25 (the built-in `bm25`) "
                "and for dense models with published BEIR figures (Contriever, Contriever-msmarco, BGE-base-en-v1.5)."
            )
        return "\n".join(lines) + "\n"

    def _average_holes(self) -> dict[str, float]:
        rows = list(self.holes.values())
        if len(rows) != len(self.datasets):
            return {}
        return {m: round(v, 5) for m, v in _mean(rows).items()} if rows else {}

    def _average_bounds(self) -> dict[str, list[float]]:
        rows = list(self.hole_bounds.values())
        if not rows or len(rows) != len(self.datasets):
            return {}
        names = [m for m in rows[0] if all(m in r for r in rows)]
        return {m: [round(math.fsum(r[m][i] for r in rows) / len(rows), 5) for i in (0, 1)] for m in names}

    def _reference_average(self, key: str, measure: str) -> float | None:
        values = [self.references[key].get(row, {}).get(measure) for row in self.datasets]
        if not values or any(v is None for v in values):
            return None
        return round(math.fsum(values) / len(values), 4)


def build_leaderboard(
    summaries: Mapping[str, Mapping[str, Any]], groups: Mapping[str, Sequence[str]] | None = None
) -> Leaderboard:
    """The leaderboard of a suite from its datasets' ``summary.json`` contents.

    :param summaries: ``{dataset name: summary}`` in the suite's order (a sub-dataset is ``group/member``).
    :param groups: ``{group: [dataset names]}`` of rows that average sub-datasets.
    """
    member_of = {name: group for group, names in (groups or {}).items() for name in names}
    rows: dict[str, list[str]] = {}
    for name in summaries:
        rows.setdefault(member_of.get(name, name), []).append(name)
    datasets: dict[str, dict[str, float]] = {}
    raw: dict[str, dict[str, float]] = {}
    grouped: dict[str, dict[str, dict[str, float]]] = {}
    for row, names in rows.items():
        if row not in (groups or {}):
            datasets[row] = dict(summaries[row]["metrics"])
            raw[row] = dict(summaries[row]["raw_metrics"])
            continue
        raw[row] = _mean([summaries[n]["raw_metrics"] for n in names])
        datasets[row] = {m: round(v, 5) for m, v in raw[row].items()}
        grouped[row] = {n.split("/", 1)[-1]: dict(summaries[n]["metrics"]) for n in names}
    missing = {
        row: n
        for row, names in rows.items()
        if (n := sum(int(summaries[m].get("judged_documents_missing_from_corpus") or 0) for m in names))
    }
    average = {m: round(v, 5) for m, v in _mean(list(raw.values())).items()} if raw else {}
    holes: dict[str, dict[str, float]] = {}
    bounds: dict[str, dict[str, list[float]]] = {}
    for row, names in rows.items():
        found = [summaries[n].get("holes") for n in names]
        if found and all(isinstance(h, dict) and h for h in found):
            numbers = [{m: v for m, v in h.items() if is_number(v)} for h in found]
            holes[row] = {m: round(v, 5) for m, v in _mean(numbers).items() if m.startswith("Hole@")}
        pairs = [summaries[n].get("hole_bounds") for n in names]
        if pairs and all(isinstance(b, dict) and b for b in pairs):
            common = [m for m in pairs[0] if all(_interval(b.get(m)) for b in pairs)]
            bounds[row] = {
                m: [round(math.fsum(b[m][key] for b in pairs) / len(pairs), 5) for key in ("low", "high")]
                for m in common
            }
    first = next(iter(summaries.values()), {})
    recorded = first.get("configuration") or {}
    configuration = {
        "pipeline": first.get("pipeline"),
        "pipeline_source": first.get("pipeline_source"),
        "models": first.get("models"),
        "split": first.get("split"),
        **{key: recorded.get(key) for key in _SHARED},
        "pipeline_sha256": (recorded.get("pipeline") or {}).get("sha256"),
    }
    return Leaderboard(
        datasets=datasets,
        average=average,
        groups=grouped,
        configuration=configuration,
        references=_references(rows, groups or {}, str(first.get("pipeline")), first.get("models") or []),
        missing_documents=missing,
        holes=holes,
        hole_bounds=bounds,
    )


def _interval(value: Any) -> bool:
    """Whether a summary's bound is ``{"low": number, "high": number}`` (an older or edited file may differ)."""
    return isinstance(value, Mapping) and all(is_number(value.get(key)) for key in ("low", "high"))


def _mean(rows: list[Mapping[str, float]]) -> dict[str, float]:
    return {m: math.fsum(r[m] for r in rows) / len(rows) for m in rows[0] if all(m in r for r in rows)}


def _references(
    rows: Mapping[str, list[str]], groups: Mapping[str, Sequence[str]], retriever: str, models: Sequence[str]
) -> dict[str, dict[str, dict[str, float]]]:
    sources = load_references()["sources"]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for key in reference_sources(retriever, models):
        values = sources[key]["values"]
        found: dict[str, dict[str, float]] = {}
        for row, names in rows.items():
            name = row.lower()
            if name in values:
                found[row] = dict(values[name])
            elif row in groups:  # e.g. cqadupstack: the mean of cqadupstack-<forum> when every forum is published
                forums = [values.get(f"{name}-{n.split('/', 1)[-1].lower()}") for n in names]
                if forums and all(forums):
                    found[row] = {m: round(v, 4) for m, v in _mean(forums).items()}
        if found:
            out[key] = found
    return out


__all__ = ["LEADERBOARD_MEASURES", "Leaderboard", "build_leaderboard", "load_references", "reference_sources"]
