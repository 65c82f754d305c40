"""Two suites written by ``irmetrics beir --output`` compared dataset by dataset (``irmetrics compare A B``).

Each dataset both suites ran is compared on its own qrels, found through its ``summary.json``; a dataset
the two suites ran on different copies (another split, or files whose recorded SHA-256 differ) is never
scored on one suite's qrels for both: the comparison is refused before anything is evaluated.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._settings import settings_of
from ..core import DEFAULT_K_VALUES
from ..errors import DatasetError, InvalidArgumentError, ParseError
from ..io.beir_outputs import dataset_differences, read_json_object, read_run_dataset, shared_qrels
from ..io.tables import json_text, markdown_cell
from ..stats.compare import format_p
from .runs import CompareResult, CompareSettings, compare_runs


def is_suite(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder written by ``irmetrics beir --output`` (it holds ``leaderboard.json``)."""
    return (Path(path) / "leaderboard.json").is_file()


@dataclass(frozen=True)
class SuiteComparison:
    """Two suites compared dataset by dataset (:func:`compare_suites`).

    :ivar names: the two suites' labels.
    :ivar results: ``{dataset: CompareResult}`` for the datasets both suites ran, in the first suite's order.
    :ivar groups: ``{row: [datasets]}`` of rows that average sub-datasets (cqadupstack).
    :ivar notes: datasets only one suite ran, and the comparisons' own notes.
    """

    names: tuple[str, str]
    results: dict[str, CompareResult]
    groups: dict[str, list[str]] = field(default_factory=dict)
    notes: tuple[str, ...] = field(default=())

    def measures(self) -> list[str]:
        first = next(iter(self.results.values()), None)
        return list(first.a.means) if first is not None else []

    def _rows(self) -> dict[str, list[CompareResult]]:
        member_of = {d: g for g, ds in self.groups.items() for d in ds}
        rows: dict[str, list[CompareResult]] = {}
        for name, result in self.results.items():
            rows.setdefault(member_of.get(name, name), []).append(result)
        return rows

    def average(self) -> dict[str, tuple[float, float]]:
        """``{measure: (A, B)}``: the mean over the leaderboard rows (a group is the mean of its members)."""
        rows = self._rows()
        out = {}
        for m in self.measures():
            pairs = [
                (math.fsum(r.a.raw_means[m] for r in rs) / len(rs), math.fsum(r.b.raw_means[m] for r in rs) / len(rs))
                for rs in rows.values()
            ]
            out[m] = (
                round(math.fsum(a for a, _ in pairs) / len(pairs), 5),
                round(math.fsum(b for _, b in pairs) / len(pairs), 5),
            )
        return out

    def markdown(self) -> str:
        """One table: a row per dataset and measure (with the paired test when computed), then the averages."""
        a, b = (markdown_cell(n) for n in self.names)  # run and dataset names: from the folders
        lines = [
            f"| dataset | measure | {a} | {b} | {b} − {a} | paired Δ [CI] | p (t) | p (rand.) |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for dataset, result in self.results.items():
            tested = {c.metric: c for c in result.stats}
            for m, va, vb, d in result.rows():
                c = tested.get(m)
                stats = (
                    f"{c.delta:+.5f}{c.marker()} [{c.ci_low:+.4f}, {c.ci_high:+.4f}] | {format_p(c.p_t_holm)} | "
                    f"{format_p(c.p_randomization_holm)}"
                    if c is not None
                    else "— | — | —"
                )
                lines.append(f"| {markdown_cell(dataset)} | {m} | {va:.5f} | {vb:.5f} | {d:+.5f} | {stats} |")
        for m, (va, vb) in self.average().items():
            lines.append(f"| **average** | {m} | {va:.5f} | {vb:.5f} | {vb - va:+.5f} | — | — | — |")
        lines.append("")
        lines.append(
            "Each dataset's runs evaluated on its qrels; p-values Holm-adjusted over the measures of that dataset; "
            f"the average is over {len(self._rows())} rows (a group of sub-datasets, cqadupstack, counts as one row)."
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "suites": list(self.names),
            "datasets": {name: result.to_dict() for name, result in self.results.items()},
            "average": {m: {self.names[0]: va, self.names[1]: vb} for m, (va, vb) in self.average().items()},
            "groups": self.groups,
            "notes": list(self.notes),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json_text(self.to_dict(), indent=indent)


#: The measures a suite comparison shows unless told otherwise (those of the leaderboard).
SUITE_MEASURES = ("NDCG@10", "Recall@100")


def compare_suites(
    suite_a: str | os.PathLike[str],
    suite_b: str | os.PathLike[str],
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    *,
    measures: Sequence[str] | None = None,
    names: tuple[str, str] | None = None,
    settings: CompareSettings | None = None,
    **options: Any,
) -> SuiteComparison:
    """Compare two folders written by ``irmetrics beir --output``, dataset by dataset.

    Each dataset both suites ran is compared with :func:`~.runs.compare_runs` on its ``run.trec`` files
    and the qrels named by its ``summary.json`` (``dataset_path``, ``split``).

    :param measures: default ``NDCG@10`` and ``Recall@100``.
    :param names: labels (default: the folder names).
    :param settings: :func:`~.runs.compare_runs`'s settings (:class:`~.runs.CompareSettings`, its ``measures``
        replaced by ``measures``); ``options`` are its fields as keywords, ``preset``, ``significance``,
        ``n_resamples``, ``seed``, ``confidence``, each in place of the settings' own (another is a ``TypeError``).
    :raises DatasetError: when the two suites ran different copies of a dataset (another split, or a qrels,
        corpus or queries file whose SHA-256 differs: every such dataset is named, and nothing is compared),
        or when a dataset's qrels file is not where either summary says, or changed since the runs.
    :raises ParseError: when a ``leaderboard.json`` or ``summary.json`` is missing, not JSON or not laid
        out as ``irmetrics beir`` writes it (the message names the file).
    """
    settings = settings_of(CompareSettings, options, "compare_suites", base=settings)
    folders = (Path(suite_a), Path(suite_b))
    if names is None:
        names = (folders[0].name, folders[1].name)
        if names[0] == names[1]:
            names = (f"A:{names[0]}", f"B:{names[1]}")
    order_a, groups = _suite_datasets(folders[0])
    order_b, _ = _suite_datasets(folders[1])
    common = [d for d in order_a if d in set(order_b)]
    if not common:  # an empty table would read as "nothing differs"
        raise InvalidArgumentError(
            f"the suites {folders[0]} and {folders[1]} have no dataset in common (their leaderboard.json list "
            f"{', '.join(order_a) or 'none'} and {', '.join(order_b) or 'none'})"
        )
    notes = [
        f"{len(only)} datasets only in {label}: {', '.join(only)}"
        for label, only in (
            (names[0], [d for d in order_a if d not in set(order_b)]),
            (names[1], [d for d in order_b if d not in set(order_a)]),
        )
        if only
    ]
    # Every dataset's qrels before any evaluation: a mismatch anywhere refuses the whole comparison.
    hashes: dict[Path, str | None] = {}
    datasets = {d: [_dataset_of(folder, d) for folder in folders] for d in common}
    differ = {d: dataset_differences(a, b, hashes) for d, (a, b) in datasets.items()}
    differ = {d: reasons for d, reasons in differ.items() if reasons}
    if differ:
        listed = "; ".join(f"{d} ({', '.join(reasons)})" for d, reasons in differ.items())
        raise DatasetError(
            f"{names[0]} and {names[1]} ran different copies of {len(differ)} dataset(s), so no qrels scores both: "
            f"{listed}. Compare the dataset folders one by one with --qrels if that is what you want"
        )
    qrels = {d: shared_qrels(pair, hashes) for d, pair in datasets.items()}
    results: dict[str, CompareResult] = {}
    for dataset in common:
        result = compare_runs(
            folders[0] / dataset,
            folders[1] / dataset,
            qrels[dataset],
            k_values,
            measures=list(measures or SUITE_MEASURES),
            names=tuple(names),
            settings=settings,
        )
        results[dataset] = result
        notes += [f"{dataset}: {note}" for note in result.notes]
    kept = {g: [d for d in ds if d in results] for g, ds in groups.items()}
    return SuiteComparison(tuple(names), results, {g: ds for g, ds in kept.items() if ds}, tuple(notes))


def _dataset_of(suite: Path, dataset: str):
    found = read_run_dataset(suite / dataset)
    if found is None:
        raise ParseError(
            f"file not found (the suite's leaderboard.json lists {dataset})", path=str(suite / dataset / "summary.json")
        )
    return found


def _suite_datasets(folder: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The datasets of a suite in its leaderboard's order (a group's members in its place), and its groups."""
    path = folder / "leaderboard.json"
    board = read_json_object(path, "leaderboard")
    rows, groups_in = board.get("datasets"), board.get("groups", {})
    if not isinstance(rows, dict):
        raise ParseError("expected 'datasets': an object with one entry per dataset", path=str(path))
    if not isinstance(groups_in, dict | None):
        raise ParseError("expected 'groups': an object of {row: {sub-dataset: metrics}}", path=str(path))
    order: list[str] = []
    groups: dict[str, list[str]] = {}
    for row in rows:
        _check_name(row, path, "datasets")
        members = (groups_in or {}).get(row)
        if isinstance(members, dict):  # as irmetrics beir writes it: {sub-dataset: {measure: value}}
            members = list(members)
        if members:
            if not isinstance(members, list):
                raise ParseError(
                    f"groups.{row} should name the sub-datasets ({{name: metrics}} or a list)", path=str(path)
                )
            for m in members:
                _check_name(m, path, f"groups.{row}")
            groups[row] = [f"{row}/{m}" for m in members]
            order += groups[row]
        else:
            order.append(row)
    return order, groups


def _check_name(name: Any, path: Path, where: str) -> None:
    """A dataset name names a folder inside the suite: no separator, no ``..``."""
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name:
        raise ParseError(f"{where}: {name!r} is not a dataset folder name", path=str(path))


__all__ = ["SUITE_MEASURES", "SuiteComparison", "compare_suites", "is_suite"]
