"""Compare two runs on the same qrels: BEIR's numbers side by side (``irmetrics compare``)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core import DEFAULT_K_VALUES, EvaluationResult, Qrels, Run, evaluate
from ..errors import InvalidPolicyError

RunSource = str | os.PathLike[str] | Mapping[str, Mapping[str, float]] | Run


@dataclass(frozen=True)
class CompareResult:
    """Two evaluations of runs on the same qrels.

    :ivar names: the two runs' labels.
    :ivar a: evaluation of the first run (``preset="beir"`` unless told otherwise).
    :ivar b: evaluation of the second run.
    :ivar notes: differences in the queries the two runs answered (which BEIR's NDCG, MAP, Recall
        and P leave out of their means).
    """

    names: tuple[str, str]
    a: EvaluationResult
    b: EvaluationResult
    notes: tuple[str, ...] = field(default=())

    def rows(self) -> list[tuple[str, float, float, float]]:
        """``(measure, value A, value B, B - A)`` for each measure, in the evaluation's order."""
        return [
            (name, self.a.means[name], self.b.means[name], round(self.b.means[name] - self.a.means[name], 5))
            for name in self.a.means
        ]

    def markdown(self) -> str:
        """A markdown table: one row per measure, the two runs and their difference as columns."""
        a, b = self.names
        lines = [f"| measure | {a} | {b} | {b} − {a} |", "|---|---:|---:|---:|"]
        lines += [f"| {m} | {va:.5f} | {vb:.5f} | {d:+.5f} |" for m, va, vb, d in self.rows()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "runs": list(self.names),
            "metrics": {m: {self.names[0]: va, self.names[1]: vb, "delta": d} for m, va, vb, d in self.rows()},
            "notes": list(self.notes),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)


def compare_runs(
    run_a: RunSource,
    run_b: RunSource,
    qrels: str | os.PathLike[str] | Mapping[str, Mapping[str, float]] | Qrels,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    *,
    measures: Sequence[str] | None = None,
    names: tuple[str, str] | None = None,
    preset: str = "beir",
) -> CompareResult:
    """Evaluate two runs against the same qrels.

    :param run_a: a TREC run file, a folder written by ``irmetrics beir --output`` (its ``run.trec``),
        or a ``{qid: {doc_id: score}}`` dict.
    :param run_b: the same for the second run.
    :param qrels: a qrels file (TREC or BEIR TSV) or dict.
    :param k_values: cutoffs.
    :param measures: families or names (default: BEIR's six).
    :param names: labels for the two runs (default: the file or folder names, else ``A`` and ``B``).
    :param preset: ``"beir"`` or ``"trec"``.
    :returns: a :class:`CompareResult`.
    """
    from ..io import read_qrels, read_run

    label_a, loaded_a = _load_run(run_a, "A", read_run)
    label_b, loaded_b = _load_run(run_b, "B", read_run)
    if names is None:
        names = (label_a, label_b) if label_a != label_b else (f"A:{label_a}", f"B:{label_b}")
        if "delta" in names:  # the JSON keys each measure by both labels and "delta"
            names = tuple(f"{side}:{name}" for side, name in zip("AB", names))
    names = tuple(names)
    if len(names) != 2 or len(set(names)) != 2 or "delta" in names:
        raise InvalidPolicyError(
            f"the two runs need two different labels, neither of them 'delta' (the JSON keys each measure by "
            f"both labels and 'delta'), got {list(names)}"
        )
    q = read_qrels(qrels) if isinstance(qrels, str | os.PathLike) else qrels
    ev_a = evaluate(q, loaded_a, k_values, measures=measures, preset=preset)
    ev_b = evaluate(q, loaded_b, k_values, measures=measures, preset=preset)
    return CompareResult(names=names, a=ev_a, b=ev_b, notes=tuple(_notes(names, loaded_a, loaded_b, q)))


def _load_run(source: RunSource, default: str, read_run) -> tuple[str, Any]:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.is_dir():
            return path.name, read_run(path / "run.trec")
        return path.name, read_run(path)
    return default, source


def _answered(run: Any) -> set[str]:
    """Query ids with at least one document, for a dict, a Run or a columnar run from the readers."""
    if isinstance(run, Mapping):
        return {q for q, docs in run.items() if len(docs)}
    qids, offsets = getattr(run, "qids", None), getattr(run, "offsets", None)
    if qids is not None and offsets is not None:
        return {q for q, n in zip(qids, np.diff(offsets).tolist(), strict=True) if n}
    return {q for q, docs in run.data.items() if len(docs)}


def _notes(names: tuple[str, str], a: Any, b: Any, qrels) -> list[str]:
    q = Qrels.from_dict(qrels)
    judged = {qid for qid in q.qids if q.judged(qid)}
    qa, qb = _answered(a) & judged, _answered(b) & judged
    notes = []
    if qa - qb:
        notes.append(f"{len(qa - qb)} judged queries are answered by {names[0]} only, e.g. {sorted(qa - qb)[:5]}")
    if qb - qa:
        notes.append(f"{len(qb - qa)} judged queries are answered by {names[1]} only, e.g. {sorted(qb - qa)[:5]}")
    if notes:
        notes.append(
            "BEIR's NDCG, MAP, Recall and P average over answered queries only, so those means cover different queries"
        )
    return notes


__all__ = ["CompareResult", "compare_runs"]
