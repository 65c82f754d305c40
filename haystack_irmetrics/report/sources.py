"""What a report is made of, read from files and objects: runs with their names, qrels, query texts and
document titles and texts.

A run is a TREC run file, a folder written by ``irmetrics beir --output`` (its ``run.trec``; its
``summary.json`` names the dataset, whose qrels, queries and corpus the report then uses unless told
otherwise), a ``{qid: {doc: score}}`` dict, a core run object, the output of
:class:`~haystack_irmetrics.components.IRMetricsEvaluator` or a Haystack ``EvaluationRunResult``. The
last two carry per-query values but no ranking: a report shows their numbers and no ranked lists.

Every file is read by the package's readers (:mod:`haystack_irmetrics.io.text`; JSONL by
:mod:`haystack_irmetrics.io.beir_data`), under the limits of :mod:`haystack_irmetrics.io.limits`: a line
over ``IRMETRICS_MAX_LINE_BYTES`` (1 MiB), a byte that is not UTF-8, JSON nested too deeply or a file
that cannot be opened raises :class:`~haystack_irmetrics.errors.ParseError` naming the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError, ParseError
from ..io.beir_data import ID_KEYS
from ..io.beir_data import read_jsonl as io_read_jsonl
from ..io.beir_outputs import read_run_dataset
from ..io.run_names import run_name, run_names
from ..io.text import text_lines

RunSource = Any

#: Characters of a document's text kept as its snippet.
SNIPPET_CHARS = 240


@dataclass
class Scored:
    """A system given as per-query values only (an evaluator output or an ``EvaluationRunResult``).

    ``values[measure][qid]``: the unrounded per-query values; ``means[measure]``: their unrounded mean.
    """

    values: dict[str, dict[str, float]]
    means: dict[str, float]


@dataclass
class Source:
    """One system of a report: its name and either a run (``run``) or per-query values (``scored``)."""

    name: str
    run: Any = None
    scored: Scored | None = None
    dataset: dict[str, Any] = field(default_factory=dict)


def _is_evaluator_output(value: Any) -> bool:
    return isinstance(value, Mapping) and {"query_ids", "raw_means", "individual_scores"} <= set(value)


def _is_run_result(value: Any) -> bool:
    return all(hasattr(value, a) for a in ("run_name", "inputs", "results")) and not isinstance(value, Mapping)


def _scored_from_output(name: str, output: Mapping[str, Any]) -> Scored:
    qids = [str(q) for q in output["query_ids"]]
    values: dict[str, dict[str, float]] = {}
    for measure, scores in output["individual_scores"].items():
        if len(scores) != len(qids):
            raise InvalidArgumentError(
                f"run {name!r}: {measure} has {len(scores)} individual scores for {len(qids)} query_ids"
            )
        values[measure] = {q: float(v) for q, v in zip(qids, scores) if v == v}  # nan: the query was left out
    return Scored(values, {m: float(v) for m, v in output["raw_means"].items() if m in values})


def _scored_from_run_result(name: str, result: Any) -> Scored:
    inputs = result.inputs
    qids = inputs.get("query_id") or inputs.get("query_ids")
    if qids is None:
        raise InvalidArgumentError(
            f"run {name!r}: the EvaluationRunResult has no 'query_id' input column to name its queries "
            f"(its columns: {sorted(inputs)}); build it with to_evaluation_run_result"
        )
    output = {
        "query_ids": qids,
        "raw_means": {m: r["score"] for m, r in result.results.items()},
        "individual_scores": {m: r["individual_scores"] for m, r in result.results.items()},
    }
    return _scored_from_output(name, output)


def _beir_folder(path: Path) -> dict[str, Any]:
    """The dataset a BEIR run folder was made from (``summary.json``: ``dataset_path``, ``split``), if known;
    read as ``irmetrics compare`` reads it (:func:`~haystack_irmetrics.io.beir_outputs.read_run_dataset`)."""
    found = read_run_dataset(path)
    if found is None:
        return {}
    return {"dataset_path": None if found.path is None else str(found.path), "split": found.split}


def _run_folder(path: Path) -> Path:
    """The folder holding ``run.trec``: ``path`` itself (one dataset's outputs), or the one dataset folder
    of an ``irmetrics beir --output`` suite (``OUTPUT/NAME/run.trec``)."""
    if (path / "run.trec").is_file():
        return path
    inside = sorted(p for p in path.iterdir() if (p / "run.trec").is_file())
    if len(inside) == 1:
        return inside[0]
    if inside:
        raise InvalidArgumentError(
            f"{path} holds the runs of {len(inside)} datasets ({', '.join(p.name for p in inside[:6])}): give one "
            f"dataset's folder, e.g. {inside[0]}"
        )
    raise InvalidArgumentError(f"{path}: a run folder needs run.trec (written by 'irmetrics beir --output')")


def load_source(name: str | None, value: RunSource) -> Source:
    """One system: ``name`` (``None``: :func:`~haystack_irmetrics.io.run_names.run_name` of a path, or the
    result's run name) and its data."""
    from ..io import read_run

    if isinstance(value, str | os.PathLike):
        path = Path(value)
        if path.is_dir():
            folder = _run_folder(path)
            return Source(name or run_name(path), read_run(folder / "run.trec"), dataset=_beir_folder(folder))
        return Source(name or run_name(path), read_run(path))
    if _is_evaluator_output(value):
        return Source(name or "run", scored=_scored_from_output(name or "run", value))
    if _is_run_result(value):
        label = name or str(value.run_name)
        return Source(label, scored=_scored_from_run_result(label, value))
    return Source(name or "run", value)


def load_sources(
    runs: Mapping[str, RunSource] | Sequence[RunSource], names: Sequence[str] | None = None
) -> list[Source]:
    """Every system, named: ``{name: run}`` keeps its keys; a list takes ``names`` or each run's own name."""
    if isinstance(runs, Mapping) and not _is_evaluator_output(runs):
        if names is not None:
            raise InvalidArgumentError("names: give either {name: run} or a list of runs with names, not both")
        pairs = [(str(k), v) for k, v in runs.items()]
    else:
        items = [runs] if _is_evaluator_output(runs) else list(runs)
        if names is not None and len(names) != len(items):
            raise InvalidArgumentError(f"{len(names)} names for {len(items)} runs: {list(names)}")
        pairs = [(None if names is None else str(n), v) for n, v in zip(names or [None] * len(items), items)]
    if not pairs:
        raise InvalidArgumentError("a report needs at least one run")
    named = run_names([v for _, v in pairs], [n for n, _ in pairs])  # every command's naming rule
    sources = [load_source(label, v) for label, (_, v) in zip(named, pairs)]
    seen: dict[str, int] = {}
    for s in sources:
        seen[s.name] = seen.get(s.name, 0) + 1
    twice = [n for n, c in seen.items() if c > 1]
    if twice:
        raise InvalidArgumentError(f"two runs are named {twice[0]!r}: give each its own name (--names a,b,...)")
    return sources


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of each non-blank line of a JSONL file of objects with an ``_id`` (or ``id``):
    :func:`haystack_irmetrics.io.beir_data.read_jsonl`.

    :raises ParseError: naming the file and line: a line that is no such object, and as :func:`text_lines`.
    """
    return io_read_jsonl(path, ids=ID_KEYS)


def _tsv(path: Path) -> Iterator[tuple[int, list[str]]]:
    for lineno, line in text_lines(path):
        parts = line.rstrip("\n").split("\t")
        if not line.strip() or (lineno == 1 and parts[0].lower() in ("id", "_id", "qid", "query-id", "docid")):
            continue  # a header row
        if len(parts) < 2:
            raise ParseError("expected 'id<TAB>text'", path=path, line=lineno)
        yield lineno, parts


def _is_jsonl(path: Path) -> bool:
    return path.suffix.lower() in (".jsonl", ".json", ".ndjson")


def read_queries(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{qid: text}`` of a BEIR ``queries.jsonl`` (``_id``, ``text``) or a ``qid<TAB>text`` file."""
    p = Path(path)
    if _is_jsonl(p):
        return {str(o.get("_id", o.get("id"))): str(o.get("text") or "") for _, o in read_jsonl(p)}
    return {parts[0]: parts[1] for _, parts in _tsv(p)}


def read_documents(path: str | os.PathLike[str], wanted: Collection[str]) -> dict[str, tuple[str, str]]:
    """``{doc: (title, snippet)}`` of the ``wanted`` documents of a BEIR ``corpus.jsonl`` (``_id``, ``title``,
    ``text``) or a ``doc<TAB>text[<TAB>title]`` file; the file is streamed, only those are kept."""
    p = Path(path)
    out: dict[str, tuple[str, str]] = {}
    if _is_jsonl(p):
        for _, o in read_jsonl(p):
            doc = str(o.get("_id", o.get("id")))
            if doc in wanted:
                out[doc] = (str(o.get("title") or ""), _snippet(str(o.get("text") or "")))
    else:
        for _, parts in _tsv(p):
            if parts[0] in wanted:
                out[parts[0]] = (parts[2] if len(parts) > 2 else "", _snippet(parts[1]))
    return out


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


def beir_files(folder: str | os.PathLike[str], split: str = "test") -> dict[str, Path]:
    """The qrels, queries and corpus files of a BEIR dataset folder (``qrels/SPLIT.tsv``, ``queries.jsonl``,
    ``corpus.jsonl``); a missing one raises :class:`InvalidArgumentError` naming it."""
    root = Path(folder)
    files = {
        "qrels": root / "qrels" / f"{split}.tsv",
        "queries": root / "queries.jsonl",
        "corpus": root / "corpus.jsonl",
    }
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise InvalidArgumentError(f"{root} is not a BEIR dataset folder: {', '.join(missing)} missing")
    return files


__all__ = [
    "Scored",
    "Source",
    "beir_files",
    "load_source",
    "load_sources",
    "read_documents",
    "read_jsonl",
    "read_queries",
    "text_lines",
]
