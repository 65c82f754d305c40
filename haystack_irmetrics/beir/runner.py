"""Run a Haystack retrieval pipeline over a BEIR dataset and report BEIR's numbers exactly."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import DEFAULT_K_VALUES, EvaluationResult, evaluate
from ..errors import OutputError, PipelineError
from ..io.trec import check_trec_ids, trec_order, write_trec_run
from .dataset import BeirDataset, load_beir, resolve_dataset
from .pipelines import BeirPipelines, corpus_documents, load_beir_pipelines

if TYPE_CHECKING:  # pragma: no cover
    from haystack import Document

#: Documents retrieved per query unless told otherwise (capped at the number of indexed documents).
DEFAULT_TOP_K = 1000


@dataclass
class BeirRun:
    """The outcome of :func:`run_beir`.

    :ivar results: ``{query_id: {corpus_id: score}}`` in the pipeline's order, one entry per corpus id
        (its best-ranked chunk), with the pipeline's scores; the input BEIR's evaluation takes.
    :ivar evaluation: the :class:`~haystack_irmetrics.core.evaluate.EvaluationResult` (``preset="beir"``):
        ``.means`` are BEIR's numbers for ``results``, bit for bit; ``.per_query`` the per-query values.
    :ivar timings: seconds for ``load`` (dataset and pipelines), ``indexing``, ``retrieval``, ``evaluation``.
    :ivar info: dataset, split, pipeline, top_k, counts and models, for reports.
    :ivar warnings: what a reader of the numbers should know.
    """

    results: dict[str, dict[str, float]]
    evaluation: EvaluationResult
    timings: dict[str, float]
    info: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def means(self) -> dict[str, float]:
        """BEIR's numbers, rounded as BEIR rounds them (``round(x, 5)``), keyed like BEIR."""
        return self.evaluation.means

    def summary(self) -> dict[str, Any]:
        """Everything but the run and per-query values, as a JSON-ready dict."""
        return {
            **self.info,
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "metrics": dict(self.evaluation.means),
            "raw_metrics": dict(self.evaluation.raw_means),
            "n_queries_averaged": dict(self.evaluation.n_queries),
            "warnings": list(self.warnings),
        }

    def markdown(self) -> str:
        """The metrics as a markdown table (families as rows, cutoffs as columns)."""
        from ..io.tables import markdown_table

        return markdown_table(self.evaluation)

    def write(self, output_dir: str | os.PathLike[str]) -> dict[str, Path]:
        """Write ``metrics.json`` (BEIR keys), ``per_query.json``, ``run.trec``, ``summary.json`` and ``metrics.md``.

        :param output_dir: created if needed.
        :returns: ``{kind: path}`` of the files written.
        """
        check_trec_ids(self.results, _tag(self.info.get("pipeline", "haystack")))  # before any file is written
        out = check_output_dir(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {
            "metrics": out / "metrics.json",
            "per_query": out / "per_query.json",
            "run": out / "run.trec",
            "summary": out / "summary.json",
            "table": out / "metrics.md",
        }
        paths["metrics"].write_text(self.evaluation.to_json(indent=2) + "\n", encoding="utf-8")
        paths["per_query"].write_text(
            json.dumps(dict(self.evaluation.per_query.items()), indent=1) + "\n", encoding="utf-8"
        )
        write_trec_run(self.results, paths["run"], tag=_tag(self.info.get("pipeline", "haystack")))
        paths["summary"].write_text(json.dumps(self.summary(), indent=2) + "\n", encoding="utf-8")
        paths["table"].write_text(self.markdown() + "\n", encoding="utf-8")
        return paths


def check_output_dir(output_dir: str | os.PathLike[str]) -> Path:
    """Check that ``output_dir`` is, or can be created as, a writable folder; return it as a Path.

    :raises OutputError: when it, or the nearest part of it that exists, is not a writable folder.
    """
    out = Path(output_dir)
    existing = out
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        where = "is" if existing == out else f"would be created under {existing}, which is"
        raise OutputError(f"output folder {str(out)!r} {where} not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == out else f" (it would be created in {existing})"
        raise OutputError(f"output folder {str(out)!r} is not writable{where}")
    return out


def run_beir(
    dataset: str | os.PathLike[str] | BeirDataset | None = None,
    retriever: str | os.PathLike[str] = "bm25",
    *,
    split: str = "test",
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    top_k: int | None = DEFAULT_TOP_K,
    model: str | None = None,
    chunk_words: int | None = None,
    chunk_overlap: int = 0,
    output_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    allow_missing_docs: bool = False,
    data_dir: str | os.PathLike[str] | None = None,
    download: bool = True,
    allowed_modules: Sequence[str] = (),
) -> BeirRun:
    """Index a BEIR corpus with a Haystack pipeline, run every query, and evaluate as BEIR does.

    :param dataset: a BEIR folder, a BEIR dataset name (downloaded when absent), a
        :class:`~haystack_irmetrics.beir.BeirDataset`, or ``None`` for the shipped sample.
    :param retriever: ``"bm25"``, ``"dense"``, ``"hybrid"`` (``pipelines/beir_<name>.yaml``) or a pipeline YAML path.
    :param split: the qrels split.
    :param k_values: cutoffs of BEIR's six measures.
    :param top_k: documents (or chunks) retrieved per query, capped at the number indexed; ``None``
        keeps the pipeline's own ``top_k``.
    :param model: embedding model name or local folder for every SentenceTransformers embedder.
    :param chunk_words: split document texts into chunks of this many words (``None``: whole documents).
    :param chunk_overlap: words shared by consecutive chunks.
    :param output_dir: also write the files of :meth:`BeirRun.write` there.
    :param progress: progress bars (default: when stderr is a terminal).
    :param allow_missing_docs: evaluate although judged documents are missing from the corpus.
    :param data_dir: where named BEIR datasets are kept.
    :param download: download a named dataset that is not in ``data_dir``.
    :param allowed_modules: module patterns whose components a pipeline YAML may use (Haystack's
        deserialization allowlist; Haystack's own, haystack_integrations and haystack_irmetrics are allowed).
    :returns: a :class:`BeirRun`.
    :raises IRMetricsError: on bad data (:mod:`haystack_irmetrics.errors`, ``ParseError``), a
        pipeline that cannot be used (:class:`~haystack_irmetrics.errors.PipelineError`) or an
        ``output_dir`` that cannot be written (:class:`~haystack_irmetrics.errors.OutputError`,
        raised before the run starts).

    Usage::

        >>> from haystack_irmetrics.beir import run_beir
        >>> run = run_beir(progress=False)          # BM25 on the shipped sample
        >>> run.means["NDCG@10"], len(run.results)
        (0.74698, 40)
    """
    started = time.perf_counter()
    for name, value in (("top_k", top_k), ("chunk_words", chunk_words)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise PipelineError(f"{name} must be a positive integer or None, got {value!r}")
    if isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int):
        raise PipelineError(f"chunk_overlap must be an int, got {chunk_overlap!r}")
    if output_dir is not None:
        check_output_dir(output_dir)  # an unwritable folder fails now, not after an hour of retrieval
    ds = _dataset(dataset, split, allow_missing_docs, data_dir, download)
    pipes = load_beir_pipelines(retriever, model=model, progress=progress, allowed_modules=allowed_modules)
    try:
        pipes.warm_up()
        loaded = time.perf_counter()
        documents = corpus_documents(ds.corpus, chunk_words=chunk_words, chunk_overlap=chunk_overlap)
        n_indexed = pipes.index(documents)
        indexed = time.perf_counter()
        effective_k = None if top_k is None else min(top_k, n_indexed)
        results, diagnostics = _retrieve(pipes, ds, effective_k, progress)
        retrieved = time.perf_counter()
    finally:
        pipes.close()
    if results and not any(results.values()):
        raise PipelineError(f"{pipes.source} retrieved no document for any of the {len(results)} queries")
    evaluation = evaluate(ds.qrels, results, k_values, preset="beir")
    evaluated = time.perf_counter()
    if diagnostics["queries_reordered_by_ties"]:
        as_ranked = evaluate(ds.qrels, results, k_values, preset="beir", ties="stable")
        diagnostics["means_in_pipeline_order"] = {m: v for m, v in as_ranked.means.items() if v != evaluation.means[m]}
    timings = {
        "load": loaded - started,
        "indexing": indexed - loaded,
        "retrieval": retrieved - indexed,
        "evaluation": evaluated - retrieved,
        "total": evaluated - started,
    }
    info = {
        "dataset": ds.name,
        "dataset_path": str(ds.path) if ds.path is not None else None,
        "split": ds.split,
        "pipeline": str(retriever),
        "pipeline_source": pipes.source,
        "models": pipes.models,
        "top_k": effective_k,
        "chunk_words": chunk_words,
        "chunk_overlap": chunk_overlap if chunk_words else None,
        "n_documents": len(ds.corpus),
        "n_indexed": n_indexed,
        "n_queries": len(ds.queries),
        "n_queries_in_file": ds.n_queries_in_file,
        "k_values": list(k_values),
        **diagnostics,
    }
    run = BeirRun(
        results=results, evaluation=evaluation, timings=timings, info=info, warnings=_warnings(ds, diagnostics)
    )
    if output_dir is not None:
        run.write(output_dir)
    return run


def _dataset(
    dataset: str | os.PathLike[str] | BeirDataset | None,
    split: str,
    allow_missing_docs: bool,
    data_dir: str | os.PathLike[str] | None,
    download: bool,
) -> BeirDataset:
    if isinstance(dataset, BeirDataset):
        return dataset
    folder = resolve_dataset(dataset, data_dir=data_dir, download=download)
    name = "sample" if dataset is None or str(dataset) == "sample" else None
    return load_beir(folder, split, allow_missing_docs=allow_missing_docs, name=name)


def _retrieve(
    pipes: BeirPipelines, ds: BeirDataset, top_k: int | None, progress: bool | None
) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    from tqdm.auto import tqdm

    results: dict[str, dict[str, float]] = {}
    empty = unsorted = reordered = chunks_merged = 0
    disable = None if progress is None else not progress
    for qid, text in tqdm(ds.queries.items(), total=len(ds.queries), desc="queries", unit="q", disable=disable):
        docs = pipes.retrieve(text, top_k)
        ranked, merged, is_sorted = _best_per_corpus_id(docs, pipes.source, qid)
        results[qid] = ranked
        chunks_merged += merged
        empty += not ranked
        unsorted += not is_sorted
        reordered += trec_order(ranked) != list(ranked)
    return results, {
        "queries_without_results": empty,
        "queries_not_sorted_by_score": unsorted,
        "queries_reordered_by_ties": reordered,
        "chunks_merged": chunks_merged,
    }


def _best_per_corpus_id(docs: list[Document], source: str, qid: str) -> tuple[dict[str, float], int, bool]:
    """``{corpus_id: score}`` of each corpus id's first (best-ranked) document, in output order."""
    ranked: dict[str, float] = {}
    merged = 0
    previous = np.inf
    is_sorted = True
    from haystack import Document  # a Haystack run is under way: already imported

    if not isinstance(docs, list) or not all(isinstance(d, Document) for d in docs):
        raise PipelineError(
            f"{source} returned {type(docs).__name__} for query {qid!r} where a list of Documents was expected: "
            "name the retriever's documents output with metadata.irmetrics.output: 'component.socket'"
        )
    for doc in docs:
        cid = (doc.meta or {}).get("beir_id")
        if cid is None:
            raise PipelineError(
                f"{source} returned document {doc.id!r} for query {qid!r} without meta['beir_id']: "
                "the indexing pipeline must keep the documents' meta"
            )
        if doc.score is None or not np.isfinite(doc.score):
            raise PipelineError(f"{source} returned document {doc.id!r} for query {qid!r} with score {doc.score!r}")
        score = float(doc.score)
        if score > previous:
            is_sorted = False
        previous = score
        if cid in ranked:
            merged += 1
            continue
        ranked[str(cid)] = score
    return ranked, merged, is_sorted


def _warnings(ds: BeirDataset, diagnostics: dict[str, Any]) -> list[str]:
    out = list(ds.warnings)
    n = len(ds.queries)
    if diagnostics["queries_without_results"]:
        out.append(
            f"{diagnostics['queries_without_results']} of {n} queries retrieved no document: BEIR leaves them out of "
            "NDCG, MAP, Recall and P (pytrec_eval never sees them) and counts them as 0 in MRR and R_cap"
        )
    if diagnostics["queries_not_sorted_by_score"]:
        out.append(
            f"the pipeline's output is not sorted by score for {diagnostics['queries_not_sorted_by_score']} queries; "
            "each corpus id keeps its first document, and BEIR ranks by score"
        )
    changed = diagnostics.get("means_in_pipeline_order")
    if changed:
        shown = ", ".join(f"{m} {v:.5f}" for m, v in list(changed.items())[:4])
        out.append(
            f"{diagnostics['queries_reordered_by_ties']} of {n} queries have scores that tie in float32; BEIR ranks "
            f"tied documents by id (descending), not in the pipeline's order, which changes {len(changed)} means "
            f"(in the pipeline's order: {shown}{', ...' if len(changed) > 4 else ''})"
        )
    return out


def _tag(name: str) -> str:
    tag = Path(name).stem if name.endswith((".yaml", ".yml")) else name
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in tag) or "haystack"


__all__ = ["DEFAULT_TOP_K", "BeirRun", "run_beir"]
