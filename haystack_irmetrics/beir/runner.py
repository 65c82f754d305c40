"""Run a Haystack retrieval pipeline over a BEIR dataset and report BEIR's numbers exactly."""

from __future__ import annotations

import json
import math
import operator
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from numbers import Real
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._settings import keywords_of
from ..core import Evaluation, EvaluationResult, evaluation_bounds
from ..core.ranking import in_trec_order
from ..core.validation import plain_ranking
from ..errors import ConfigurationChangedError, OutputError, PipelineError
from ..integration.corpus import corpus_table
from ..integration.fastpath import long_lived_objects_frozen
from ..io.tables import json_text
from ..io.trec import check_trec_ids, write_trec_run
from .checkpoint import PARTIAL, START_OVER, Checkpoint, QueryRecord, differences
from .dataset import BeirDataset, check_documents, load_beir, resolve_dataset, strict_docs_setting
from .outputs import make_folder, output_lock, write_atomic
from .pipelines import BeirPipelines, load_beir_pipelines, pipeline_digest
from .progress import Phases, bar
from .settings import DEFAULT_TOP_K, BeirSettings

if TYPE_CHECKING:  # pragma: no cover
    from haystack import Document

#: The measures ``summary.json`` bounds by the run's holes (the leaderboard's), where ``k_values`` hold their k.
BOUNDED_MEASURES = ("NDCG@10", "Recall@100")


@dataclass(frozen=True)
class BeirRun:
    """The outcome of :func:`run_beir` (frozen).

    :ivar results: ``{query_id: {corpus_id: score}}`` in the pipeline's order, one entry per corpus id
        (its best-ranked chunk), with the pipeline's scores; the input BEIR's evaluation takes.
    :ivar evaluation: the :class:`~haystack_irmetrics.core.evaluation.EvaluationResult` (``preset="beir"``):
        ``.means`` are BEIR's numbers for ``results``, bit for bit; ``.per_query`` the per-query values.
    :ivar timings: seconds for ``load`` (dataset and pipelines), ``indexing`` (with embedding the corpus),
        ``retrieval``, ``evaluation`` and ``total``, spent by this process.
    :ivar info: dataset, split, pipeline, top_k, counts, models and the configuration fingerprint, for reports.
    :ivar warnings: what a reader of the numbers should know.
    :ivar peak_rss_mb: peak resident memory (MB) of each phase (:mod:`haystack_irmetrics.beir.progress`);
        ``peak_rss_scope`` is ``"phase"`` (each phase's own peak) or ``"process"`` (the peak so far).
    :ivar queries_from_checkpoint: queries read from a checkpoint instead of retrieved by this process.
    :ivar finished_at: when the run ended, UTC (``2026-11-27T15:02:11Z``).
    :ivar holes: the run's holes: ``{"Judged@k": mean, "Hole@k": mean}`` for every k (BEIR's ``Hole@k``:
        the share of the top k that no query judged), and ``"bounds"``: for nDCG@10 and Recall@100, the
        interval the value lies in once the holes are judged (each 0 or 1; :func:`~haystack_irmetrics.core.bounds.hole_bounds`).
    """

    results: dict[str, dict[str, float]]
    evaluation: EvaluationResult
    timings: dict[str, float]
    info: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    peak_rss_mb: dict[str, float] = field(default_factory=dict)
    peak_rss_scope: str = "phase"
    queries_from_checkpoint: int = 0
    finished_at: str | None = None
    holes: dict[str, Any] = field(default_factory=dict)

    @property
    def means(self) -> dict[str, float]:
        """BEIR's numbers, rounded as BEIR rounds them (``round(x, 5)``), keyed like BEIR."""
        return self.evaluation.means

    def summary(self) -> dict[str, Any]:
        """Everything but the run and per-query values, as a JSON-ready dict.

        Only ``finished_at``, ``timings_s``, ``peak_rss_mb``, ``peak_rss_scope`` and ``queries_from_checkpoint``
        depend on how the run went (when, interrupted and resumed, machine load); the rest is the same for
        every run of a configuration.
        """
        return {
            **self.info,
            "finished_at": self.finished_at,
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "peak_rss_mb": {k: round(v, 1) for k, v in self.peak_rss_mb.items()},
            "peak_rss_scope": self.peak_rss_scope,
            "queries_from_checkpoint": self.queries_from_checkpoint,
            "metrics": dict(self.evaluation.means),
            "raw_metrics": dict(self.evaluation.raw_means),
            "n_queries_averaged": dict(self.evaluation.n_queries),
            "holes": {k: v for k, v in self.holes.items() if k != "bounds"},
            "hole_bounds": dict(self.holes.get("bounds", {})),
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
        :raises OutputError: naming the file when one cannot be written (a full disk...); no temporary file is left.
        """
        check_trec_ids(self.results, _tag(self.info.get("pipeline", "haystack")))  # before any file is written
        out = check_output_dir(output_dir)
        make_folder(out)
        paths = {
            "metrics": out / "metrics.json",
            "per_query": out / "per_query.json",
            "run": out / "run.trec",
            "summary": out / "summary.json",
            "table": out / "metrics.md",
        }
        # Each file through a unique temporary name and a rename; summary.json last: it marks the folder complete.
        write_atomic(paths["metrics"], json_text(self.evaluation.to_dict(), indent=2) + "\n")
        write_atomic(paths["per_query"], json_text(dict(self.evaluation.per_query.items()), indent=1) + "\n")
        tag = _tag(self.info.get("pipeline", "haystack"))
        write_trec_run(self.results, paths["run"], tag=tag, follow_link=False)
        write_atomic(paths["table"], self.markdown() + "\n")
        write_atomic(paths["summary"], json_text(self.summary(), indent=2) + "\n")
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
    output_dir: str | os.PathLike[str] | None = None,
    allow_missing_docs: bool | None = None,
    **options: Any,
) -> BeirRun:
    """Index a BEIR corpus with a Haystack pipeline, run every query, and evaluate as BEIR does.

    :param dataset: a BEIR folder, a BEIR dataset name (downloaded when absent), a
        :class:`~haystack_irmetrics.beir.BeirDataset`, or ``None`` for the shipped sample.
    :param retriever: ``"bm25"``, ``"dense"``, ``"hybrid"`` (``pipelines/beir_<name>.yaml``) or a pipeline YAML path.
    :param output_dir: also write the files of :meth:`BeirRun.write` there.
    :param allow_missing_docs: deprecated; ``False`` is ``strict_docs=True``.
    :param options: the fields of :class:`~haystack_irmetrics.beir.settings.BeirSettings` as keywords, below (a
        name that is none of them is a ``TypeError``); :func:`run_dataset` takes the settings as one value.
    :returns: a :class:`BeirRun`.
    :raises IRMetricsError: on bad data (:mod:`haystack_irmetrics.errors`, ``ParseError``), a
        pipeline that cannot be used (:class:`~haystack_irmetrics.errors.PipelineError`) or an
        ``output_dir`` that cannot be written (:class:`~haystack_irmetrics.errors.OutputError`,
        raised before the run starts, or naming the file that could not be written) or that another run
        is writing to (``OutputError``: ``output_dir`` is locked while a run writes there), a checkpoint of
        another configuration (:class:`~haystack_irmetrics.errors.ConfigurationChangedError`) or a
        damaged one (:class:`~haystack_irmetrics.errors.CheckpointError`), unless ``overwrite``.

    The keywords (``options``), the fields of :class:`~haystack_irmetrics.beir.settings.BeirSettings`:

    * ``split``: the qrels split.
    * ``k_values``: cutoffs of BEIR's six measures.
    * ``top_k``: documents (or chunks) retrieved per query, capped at the number indexed; ``None``
      keeps the pipeline's own ``top_k``.
    * ``model``: embedding model name or local folder for every SentenceTransformers embedder.
    * ``chunk_words``: split document texts into chunks of this many words (``None``: whole documents).
    * ``chunk_overlap``: words shared by consecutive chunks.
    * ``progress``: progress bars (default: when stderr is a terminal).
    * ``strict_docs``: refuse a dataset whose qrels judge documents absent from the corpus
      (:class:`~haystack_irmetrics.errors.MissingDocumentsError`). By default they are evaluated as BEIR
      does (relevant, unretrievable), with a warning and their count in ``summary.json``.
    * ``data_dir``: where named BEIR datasets are kept.
    * ``download``: download a named dataset that is not in ``data_dir``.
    * ``allowed_modules``: module patterns whose components a pipeline YAML may use (Haystack's
      deserialization allowlist; Haystack's own, haystack_integrations and haystack_irmetrics are allowed).
    * ``checkpoint_every``: with ``output_dir``, checkpoint the retrieved queries in batches of this
      many in ``output_dir/.partial/`` and continue from a checkpoint of the same configuration
      (:mod:`~haystack_irmetrics.beir.checkpoint`); the checkpoint is deleted once the outputs are written.
    * ``overwrite``: discard any checkpoint in ``output_dir`` (of this configuration or another, damaged
      or not) and start over.
    * ``no_index``: evaluate against the document stores the pipeline names as they are, filled
      beforehand (an Elasticsearch, OpenSearch, Qdrant, pgvector store...): nothing is indexed or written.
    * ``cache``: reuse and store corpus and query embeddings and bm25s indexes in ``$IRMETRICS_CACHE_DIR``
      (:mod:`~haystack_irmetrics.beir.cache`).
    * ``joiner``: a tuned fusion for the pipeline's one ``DocumentJoiner`` (the built-in ``hybrid`` has one):
      its init parameters, or the YAML file ``irmetrics fuse --joiner-yaml`` writes; the weights follow the
      order in which the joiner receives the lists, the order Haystack runs the retrievers in (``hybrid``:
      BM25, then dense: fuse the two runs in that order). The run is
      labelled ``<pipeline>+joiner`` and ``summary.json`` records the parameters.
    * ``batch_size``: the embedders' batch size; ``precision``: ``"float32"``, ``"float16"`` or ``"bfloat16"``;
      ``device``: ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"`` or several comma-separated; each ``None``: the
      pipeline's, else the default (:mod:`~haystack_irmetrics.beir.devices`).

    Usage::

        >>> from haystack_irmetrics.beir import run_beir
        >>> run = run_beir(progress=False)          # BM25 on the shipped sample
        >>> run.means["NDCG@10"], len(run.results)
        (0.76977, 40)
    """
    options = keywords_of(BeirSettings, options, "run_beir", taken=("retriever",))
    # the deprecated spelling, read here (its warning names the caller's line)
    options["strict_docs"] = strict_docs_setting(options.get("strict_docs", False), allow_missing_docs)
    return run_dataset(dataset, BeirSettings(retriever, **options), output_dir)


def run_dataset(
    dataset: str | os.PathLike[str] | BeirDataset | None,
    settings: BeirSettings,
    output_dir: str | os.PathLike[str] | None = None,
) -> BeirRun:
    """:func:`run_beir` with its configuration as one value: ``dataset`` run with ``settings``, the outputs
    written to ``output_dir`` (when given, it is checked first and locked while the run writes there)."""
    started = time.perf_counter()
    if output_dir is None:
        return _run(dataset, settings, None, started)
    check_output_dir(output_dir)  # an unwritable folder fails now, not after an hour of retrieval
    check_dataset_outputs(dataset, settings, output_dir)
    with output_lock(output_dir):  # one run at a time writes there
        if settings.overwrite and settings.checkpoint_every is not None:
            Checkpoint(Path(output_dir) / PARTIAL, {}).remove()  # damaged or not: never read
        return _run(dataset, settings, output_dir, started)


def check_dataset_outputs(
    dataset: str | os.PathLike[str] | BeirDataset | None, settings: BeirSettings, output_dir: str | os.PathLike[str]
) -> None:
    """Refuse an ``output_dir`` that holds the dataset's folder (its qrels, queries, corpus) or the pipeline YAML:
    a run writes its files there and ``overwrite`` clears them, so an input must not lie there
    (:func:`~haystack_irmetrics.io.output.check_outputs`). A named dataset not downloaded yet has no folder to check.

    :raises OutputError: naming the output folder and the input, before anything is written or deleted.
    """
    from ..errors import DatasetNotFoundError
    from ..io.output import check_outputs

    if isinstance(dataset, BeirDataset):
        folder = dataset.path
    else:
        try:
            folder = resolve_dataset(dataset, data_dir=settings.data_dir, download=False)
        except DatasetNotFoundError:  # downloaded later, into data_dir
            folder = None
    yaml = settings.retriever if Path(settings.retriever).is_file() else None
    check_outputs([folder, yaml], folders=[output_dir])


@dataclass
class _Loaded:
    """What the load phase gives the others: the dataset, its configuration, the checkpoint (with the
    queries it holds and the indexing it recorded) and the pipelines (``None`` when nothing is left to run)."""

    ds: BeirDataset
    configuration: dict[str, Any]
    checkpoint: Checkpoint | None
    done: dict[str, QueryRecord]
    state: dict[str, Any] | None
    pipes: BeirPipelines | None


@dataclass
class _Retrieved:
    """What the retrieval phase gives the evaluation: the results, their diagnostics and the query cache's
    ``(hits, misses)``."""

    results: dict[str, dict[str, float]]
    diagnostics: dict[str, Any]
    query_cache: tuple[int, int]


def _run(
    dataset: str | os.PathLike[str] | BeirDataset | None,
    settings: BeirSettings,
    output_dir: str | os.PathLike[str] | None,
    started: float,
) -> BeirRun:
    """:func:`run_dataset` once ``output_dir`` is locked: load, index, retrieve, evaluate, write."""
    phases = Phases()
    with phases.phase("load"):
        loaded = _load(dataset, settings, output_dir)
    pipes = loaded.pipes
    try:
        state = _index_phase(loaded, settings, phases)
        top_k = None if settings.top_k is None else min(settings.top_k, state["n_indexed"])
        with phases.phase("retrieval"):
            retrieved = _retrieve_phase(loaded, top_k, settings.progress)
    finally:
        if pipes is not None:
            pipes.close()
    results = retrieved.results
    if results and not any(results.values()):
        raise PipelineError(f"{state['pipeline_source']} retrieved no document for any of the {len(results)} queries")
    with phases.phase("evaluation"):
        ev = Evaluation(loaded.ds.qrels, retrieved.results, "beir")  # the run prepared once for all that follows
        evaluation = _evaluate(ev, retrieved.diagnostics, settings.k_values)
        holes = run_holes(ev, settings.k_values)
    run = _outcome(loaded, settings, state, top_k, retrieved, evaluation, holes, phases, started)
    if output_dir is not None:
        run.write(output_dir)
        if loaded.checkpoint is not None:
            loaded.checkpoint.remove()
    return run


def _load(
    dataset: str | os.PathLike[str] | BeirDataset | None,
    settings: BeirSettings,
    output_dir: str | os.PathLike[str] | None,
) -> _Loaded:
    """The load phase: the dataset, the configuration, the checkpoint and what it holds, and the pipelines
    unless every query is checkpointed with the indexing it needed."""
    ds = _dataset(dataset, settings.split, settings.strict_docs, settings.data_dir, settings.download)
    every = settings.checkpoint_every
    partial = Path(output_dir) / PARTIAL if output_dir is not None and every is not None else None
    configuration = settings.configuration(
        ds.path,
        ds.split,
        pipeline_digest(settings.retriever, settings.joiner),
        queries_sha256=_queries_digest(ds) if isinstance(dataset, BeirDataset) else None,
        previous=Checkpoint(partial, {}).recorded_configuration() if partial is not None else None,
    )
    checkpoint = None
    if output_dir is not None and every is not None:
        checkpoint = open_checkpoint(Path(output_dir), configuration, every, settings.overwrite)
    # a store filled beforehand may hold documents the corpus lacks: only an index built here is checked
    done = checkpoint.load(ds.queries, None if settings.no_index else ds.corpus) if checkpoint is not None else {}
    state = checkpoint.index_state() if checkpoint is not None else None
    pipes = None
    if state is None or any(q not in done for q in ds.queries):
        pipes = load_beir_pipelines(
            settings.retriever,
            model=settings.model,
            progress=settings.progress,
            allowed_modules=settings.allowed_modules,
            no_index=settings.no_index,
            cache=settings.cache,
            joiner=settings.joiner,
            batch_size=settings.batch_size,
            precision=settings.precision,
            device=settings.device,
        )
    return _Loaded(ds, configuration, checkpoint, done, state, pipes)


def _index_phase(loaded: _Loaded, settings: BeirSettings, phases: Phases) -> dict[str, Any]:
    """The indexing phase (the pipelines' warm-up counts as loading): what indexing found, recorded in the
    checkpoint; skipped when every query is checkpointed."""
    pipes = loaded.pipes
    if pipes is None:
        phases.skip("indexing")  # every query is checkpointed: nothing to index
        assert loaded.state is not None
        return loaded.state
    with phases.phase("load"):
        pipes.warm_up()
    with phases.phase("indexing"):
        if settings.no_index:
            n_indexed = pipes.count_indexed()
        else:
            documents = corpus_table(  # a Document made when read: the dense path reads none
                loaded.ds.corpus, chunk_words=settings.chunk_words, chunk_overlap=settings.chunk_overlap
            )
            n_indexed = _index(pipes, documents, settings.progress, loaded.ds.name)
            pipes.finish_indexing()
            del documents
    hits, misses = pipes.embedding_cache_hits()
    state: dict[str, Any] = {"n_indexed": n_indexed, "pipeline_source": pipes.source, "models": pipes.models}
    if hits or misses:
        state["embedding_cache"] = {"hits": hits, "misses": misses}
    if loaded.checkpoint is not None:
        loaded.checkpoint.save_index_state(state)
    return state


def _retrieve_phase(loaded: _Loaded, top_k: int | None, progress: bool | None) -> _Retrieved:
    """The retrieval phase: the queries not checkpointed, then every query's results in order."""
    results, diagnostics = _retrieve(loaded.pipes, loaded.ds, loaded.done, top_k, progress, loaded.checkpoint)
    query_cache = loaded.pipes.embedding_cache_hits(queries=True) if loaded.pipes is not None else (0, 0)
    return _Retrieved(results, diagnostics, query_cache)


def _evaluate(ev: Evaluation, diagnostics: dict[str, Any], k_values: Sequence[int]) -> EvaluationResult:
    """The evaluation phase: BEIR's numbers; where ties reordered queries, the means that differ in the
    pipeline's order go to the diagnostics."""
    evaluation = ev.result(None, k_values)
    if diagnostics["queries_reordered_by_ties"]:
        as_ranked = ev.with_preset(ties="stable").result(None, k_values)
        diagnostics["means_in_pipeline_order"] = {m: v for m, v in as_ranked.means.items() if v != evaluation.means[m]}
    return evaluation


def run_holes(ev: Evaluation, k_values: Sequence[int]) -> dict[str, Any]:
    """Judged@k and BEIR's Hole@k for every k, and the hole bounds of :data:`BOUNDED_MEASURES` (grade 1), of
    the run's BEIR evaluation."""
    names = [f"{family}@{k}" for k in k_values for family in ("Judged", "Hole")]
    out: dict[str, Any] = dict(ev.result(names).means)
    wanted = [m for m in BOUNDED_MEASURES if int(m.split("@")[1]) in k_values]
    bounds = evaluation_bounds(ev, wanted) if wanted else None
    out["bounds"] = bounds.to_dict()["measures"] if bounds is not None else {}
    return out


def _outcome(
    loaded: _Loaded,
    settings: BeirSettings,
    state: dict[str, Any],
    top_k: int | None,
    retrieved: _Retrieved,
    evaluation: EvaluationResult,
    holes: dict[str, Any],
    phases: Phases,
    started: float,
) -> BeirRun:
    """The :class:`BeirRun`: its timings, the info ``summary.json`` holds, in its order, its evaluation and its
    holes (:func:`run_holes`)."""
    ds, diagnostics, query_cache = loaded.ds, retrieved.diagnostics, retrieved.query_cache
    timings = {name: phases.seconds.get(name, 0.0) for name in ("load", "indexing", "retrieval", "evaluation")}
    timings["total"] = time.perf_counter() - started
    info = {
        "dataset": ds.name,
        "dataset_path": str(ds.path) if ds.path is not None else None,
        "split": ds.split,
        "pipeline": str(settings.retriever) + ("+joiner" if settings.joiner is not None else ""),
        "joiner": settings.joiner,
        "pipeline_source": state["pipeline_source"],
        "models": state["models"],
        "top_k": top_k,
        "chunk_words": settings.chunk_words,
        "chunk_overlap": settings.chunk_overlap if settings.chunk_words else None,
        "n_documents": len(ds.corpus),
        "n_indexed": state["n_indexed"],
        "embedding_cache": state.get("embedding_cache"),
        "query_embedding_cache": dict(zip(("hits", "misses"), query_cache)) if any(query_cache) else None,
        "n_queries": len(ds.queries),
        "n_queries_in_file": ds.n_queries_in_file,
        **ds.missing_documents_summary(),
        "k_values": list(settings.k_values),
        **diagnostics,
        "configuration": loaded.configuration,
    }
    return BeirRun(
        results=retrieved.results,
        evaluation=evaluation,
        timings=timings,
        info=info,
        warnings=_warnings(ds, diagnostics),
        peak_rss_mb=dict(phases.peak_rss_mb),
        peak_rss_scope="phase" if phases.exact else "process",
        queries_from_checkpoint=sum(1 for q in ds.queries if q in loaded.done),
        finished_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        holes=holes,
    )


def open_checkpoint(output_dir: Path, configuration: dict[str, Any], every: int, overwrite: bool = False) -> Checkpoint:
    """The checkpoint of ``output_dir`` for ``configuration``: a checkpoint of another configuration
    raises :class:`~haystack_irmetrics.errors.ConfigurationChangedError`; with ``overwrite`` any
    checkpoint there is deleted unread."""
    checkpoint = Checkpoint(output_dir / PARTIAL, configuration, every)
    if overwrite:
        checkpoint.remove()
        return checkpoint
    recorded = checkpoint.recorded_configuration()
    if recorded is not None:
        changed = differences(recorded, configuration)
        if changed:
            raise ConfigurationChangedError(
                f"{output_dir} holds a checkpoint of another configuration ({'; '.join(changed)}); "
                f"{START_OVER}, or use another output folder"
            )
    return checkpoint


def _queries_digest(ds: BeirDataset) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(list(ds.queries)).encode("utf-8")).hexdigest()


#: Queries prepared together (:meth:`BeirPipelines.prepare_queries`) before they run one by one.
QUERY_BATCH = 1000
#: Documents per call of the indexing pipeline (the bar advances per batch; BM25 statistics are per document).
INDEX_BATCH = 10_000


def _index(pipes: BeirPipelines, documents: Sequence[Document], progress: bool | None, name: str) -> int:
    """Index ``documents`` in batches: streamed (:mod:`~haystack_irmetrics.beir.dense`) or through the pipeline."""
    what = "embedding + indexing" if pipes.models else "indexing"
    n_indexed = 0
    with bar(len(documents), f"{name}: {what}", "doc", progress, leave=False) as b:
        streamed = pipes.streamed_indexing() if len(documents) else None
        if streamed is not None:
            streamed.run(documents, INDEX_BATCH, b.update)
            return pipes.count_written(len(documents))
        for start in range(0, len(documents), INDEX_BATCH):
            batch = list(documents[start : start + INDEX_BATCH])
            n_indexed = pipes.index(batch)
            b.update(len(batch))
    return n_indexed


def _dataset(
    dataset: str | os.PathLike[str] | BeirDataset | None,
    split: str,
    strict_docs: bool,
    data_dir: str | os.PathLike[str] | None,
    download: bool,
) -> BeirDataset:
    if isinstance(dataset, BeirDataset):
        if strict_docs:
            check_documents(dataset.qrels, dataset.corpus, f"the {dataset.split} qrels", "the corpus")
        return dataset
    folder = resolve_dataset(dataset, data_dir=data_dir, download=download)
    name = "sample" if dataset is None or str(dataset) == "sample" else None
    return load_beir(folder, split, strict_docs=strict_docs, name=name)


def _retrieve(
    pipes: BeirPipelines | None,
    ds: BeirDataset,
    done: dict[str, QueryRecord],
    top_k: int | None,
    progress: bool | None,
    checkpoint: Checkpoint | None,
) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """Run the queries not in ``done`` (checkpointing them), then build the results in query order."""
    records: dict[str, QueryRecord] = {}
    todo = [q for q in ds.queries if q not in done]
    with (
        bar(len(ds.queries), f"{ds.name}: retrieval", "q", progress, initial=len(ds.queries) - len(todo)) as b,
        long_lived_objects_frozen(),  # each query makes and drops ~1000 Documents: full collections skip the corpus
    ):
        ranked: list[tuple[list[str], list[float]]] | None = None
        for i, qid in enumerate(todo):
            assert pipes is not None
            if i % QUERY_BATCH == 0:  # ranked at once (dense), or embedded or scored in batches, then run one by one
                batch = [ds.queries[q] for q in todo[i : i + QUERY_BATCH]]
                ranked = pipes.rank_batch(batch, top_k)
                if ranked is None:
                    pipes.prepare_queries(batch, top_k)
            if ranked is not None:
                record = QueryRecord(*_best_of(*ranked[i % QUERY_BATCH]))
            elif (ids := pipes.retrieve_ids(ds.queries[qid], top_k)) is not None and plain_ranking(*ids):
                record = QueryRecord(*_best_of(*ids))  # ids and scores (bm25): no Document per hit
            else:  # Documents, read and checked one by one where they are not plain
                record = QueryRecord(*_best_per_corpus_id(pipes.retrieve(ds.queries[qid], top_k), pipes.source, qid))
            records[qid] = record
            if checkpoint is not None:
                checkpoint.add(qid, record)
            b.update()
    if checkpoint is not None:
        checkpoint.flush()
    results: dict[str, dict[str, float]] = {}
    empty = unsorted = reordered = chunks_merged = 0
    for qid in ds.queries:
        record = records[qid] if qid in records else done[qid]
        ranked = record.ranked
        results[qid] = ranked
        chunks_merged += record.merged
        empty += not ranked
        unsorted += not record.is_sorted
        reordered += not in_trec_order(ranked)
    return results, {
        "queries_without_results": empty,
        "queries_not_sorted_by_score": unsorted,
        "queries_reordered_by_ties": reordered,
        "chunks_merged": chunks_merged,
    }


def _best_per_corpus_id(docs: list[Document], source: str, qid: str) -> tuple[dict[str, float], int, bool]:
    """``{corpus_id: score}`` of each corpus id's first (best-ranked) document, in output order; how many
    later documents of a corpus id were merged into it; whether the scores never increase.

    Reads a thousand Documents a query: the common case (string ids, float scores, every id once) is read
    in whole-list passes, and anything else goes through :func:`_check_document`, which names the document.
    """
    from haystack import Document  # a Haystack run is under way: already imported

    if not isinstance(docs, list) or not (
        set(map(type, docs)) <= {Document} or all(isinstance(d, Document) for d in docs)
    ):
        raise PipelineError(
            f"{source} returned {type(docs).__name__} for query {qid!r} where a list of Documents was expected: "
            "name the retriever's documents output with metadata.irmetrics.output: 'component.socket'"
        )
    metas = [d.meta for d in docs]
    scores = [d.score for d in docs]
    try:
        cids = [meta["beir_id"] for meta in metas]
    except (KeyError, TypeError):
        cids = []
    if not plain_ranking(cids, scores) or len(cids) != len(docs):
        checked = [_check_document(doc, source, qid) for doc in docs]
        cids, scores = [c for c, _ in checked], [s for _, s in checked]
    return _best_of(cids, scores)


def _best_of(cids: list[str], scores: list[float]) -> tuple[dict[str, float], int, bool]:
    """:func:`_best_per_corpus_id` of a ranking given as its corpus ids and (finite) scores, best first."""
    is_sorted = all(map(operator.ge, scores, scores[1:]))
    ranked = dict(zip(cids, scores))
    if len(ranked) < len(cids):  # chunks of one corpus id: the first (best-ranked) one counts
        ranked = {}
        for cid, score in zip(cids, scores):
            ranked.setdefault(cid, score)
    return ranked, len(cids) - len(ranked), is_sorted


def _check_document(doc: Document, source: str, qid: str) -> tuple[str, float]:
    """A returned document's corpus id (as a string) and score (as a float).

    :raises PipelineError: naming the document and the query, when it has no ``meta["beir_id"]`` or its
        score is not a finite number.
    """
    cid = (doc.meta or {}).get("beir_id")
    if cid is None:
        raise PipelineError(
            f"{source} returned document {doc.id!r} for query {qid!r} without meta['beir_id']: "
            "the indexing pipeline must keep the documents' meta"
        )
    score = doc.score
    try:
        value = float(score) if isinstance(score, Real) else math.nan
    except OverflowError:  # an int too large for a float
        value = math.nan
    if not math.isfinite(value):
        raise PipelineError(f"{source} returned document {doc.id!r} for query {qid!r} with score {score!r}")
    return str(cid), value


def _warnings(ds: BeirDataset, diagnostics: dict[str, Any]) -> list[str]:
    out = list(ds.warnings)
    missing = ds.missing_documents_warning()
    if missing is not None and missing not in out:  # a dataset built in memory: said once all the same
        out.insert(0, missing)
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


__all__ = [
    "DEFAULT_TOP_K",
    "BeirRun",
    "BeirSettings",
    "check_dataset_outputs",
    "check_output_dir",
    "open_checkpoint",
    "run_beir",
    "run_dataset",
]
