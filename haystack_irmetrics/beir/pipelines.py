"""Haystack pipelines for BEIR runs: resolve, load, index a corpus, run queries.

A BEIR pipeline is an ordinary Haystack retrieval pipeline YAML with an optional
``metadata.irmetrics`` block (see ``pipelines/beir_bm25.yaml``):

- ``indexing``: an indexing pipeline, inline or as a YAML path relative to the file. Its open
  ``documents`` inputs receive the corpus as :class:`haystack.Document` objects. Without it, the
  documents are written straight into the retrievers' document stores (enough for BM25; a pipeline
  with an embedding retriever must say how documents are embedded).
- ``query_inputs``, ``top_k_inputs``: ``"component.socket"`` lists; default: every open input named
  ``query`` or ``text`` (of type ``str``), and every open input named ``top_k``.
- ``output``: ``"component.socket"`` of the ranked documents; default: the one unconnected output
  named ``documents``.

Every ``InMemoryDocumentStore`` index named in either pipeline (``None`` included) is renamed to an
index private to the run and made ``shared``, so that the indexing pipeline and every retriever see
the same documents and two runs never see each other's. Haystack is imported inside functions only.
"""

from __future__ import annotations

import copy
import os
import sys
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._extras import require
from ..checks import choice, is_number, whole
from ..errors import PipelineError
from ..integration.corpus import corpus_documents
from ..integration.queries import QueryRunner
from ..integration.sockets import BEIR_NAMING, PipelineSockets, find_sockets, nest, parse_sockets
from ..integration.sockets import document_inputs as find_document_inputs
from ..integration.stores import BM25S_HINT, BM25S_MODULES, FAISS_MODULES, store_attribute, stores_of, unique_stores
from ._builtin import BUILTIN_PIPELINES, builtin_pipeline
from .devices import EmbedderOptions
from .models import LazyModel, embedding_dim, model_hint, model_loading_bars, resolve_model
from .specs import _PRIVATE_STORES, _ST_EMBEDDERS, guessed_names, rewrite_spec

if TYPE_CHECKING:  # pragma: no cover
    from haystack import Document, Pipeline

    from .dense import StreamedIndexing

_ST_MODULE = "haystack_integrations.components.embedders.sentence_transformers"
_QDRANT_MODULES = (
    "haystack_integrations.document_stores.qdrant",
    "haystack_integrations.components.retrievers.qdrant",
)
#: Component modules loaded with sentence-transformers and torch imported at their first use (:func:`_load`).
_DEFERRING = ("haystack.", "haystack_irmetrics.", _ST_MODULE, *_QDRANT_MODULES)


def pipelines_dir() -> Path:
    """The repository's ``pipelines/`` folder (present in a source checkout or editable install)."""
    return Path(__file__).resolve().parents[2] / "pipelines"


@dataclass
class BeirPipelines:
    """A loaded retrieval pipeline, its indexing pipeline, and how to feed and read them.

    :ivar retrieval: the query pipeline.
    :ivar indexing: the indexing pipeline.
    :ivar source: where the retrieval pipeline came from (YAML path or ``builtin:<name>``).
    :ivar sockets: where the query text and ``top_k`` go and where the ranked documents come out
        (:class:`~haystack_irmetrics.integration.sockets.PipelineSockets`: the rules every pipeline caller shares).
    :ivar document_inputs: ``(component, socket)`` pairs of the indexing pipeline that receive documents.
    :ivar models: the embedding models the pipelines load (after :func:`resolve_model`).
    :ivar progress: show progress bars (the embedders' and the model loader's).
    :ivar direct_run: run a retrieval pipeline whose components form one chain by calling them in order
        (:class:`~haystack_irmetrics.integration.fastpath.DirectRun`: the same outputs without ``Pipeline.run``'s
        bookkeeping), and the dense path of :mod:`~haystack_irmetrics.beir.dense`; ``False`` runs every query
        through ``Pipeline.run`` and the corpus through the indexing pipeline.
    :ivar runner: the queries -> ranked Documents loop (:class:`~haystack_irmetrics.integration.queries.QueryRunner`).
    """

    retrieval: Pipeline
    indexing: Pipeline
    source: str
    sockets: PipelineSockets
    document_inputs: list[tuple[str, str]]
    models: list[str] = field(default_factory=list)
    progress: bool = True
    cache: bool = True
    _retrieval_stores: list[Any] = field(default_factory=list, repr=False)
    _private_stores: list[Any] = field(default_factory=list, repr=False)
    #: Embedders whose device was guessed without torch (:func:`~haystack_irmetrics.beir.devices.guessed_device`).
    _guessed_devices: list[Any] = field(default_factory=list, repr=False)
    _warm: bool = field(default=False, repr=False)
    _ranked: Any = field(default=None, repr=False)
    direct_run: bool = True
    runner: QueryRunner = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.runner = QueryRunner(
            self.retrieval,
            self.sockets,
            source=self.source,
            direct_run=self.direct_run,
            output_hint="name the retriever's documents output with metadata.irmetrics.output: 'component.socket'",
        )

    @property
    def query_inputs(self) -> list[tuple[str, str]]:
        """``(component, socket)`` pairs that receive the query text."""
        return list(self.sockets.query)

    @property
    def top_k_inputs(self) -> list[tuple[str, str]]:
        """``(component, socket)`` pairs that receive ``top_k``."""
        return list(self.sockets.top_k)

    @property
    def output(self) -> tuple[str, str]:
        """``(component, socket)`` of the ranked documents."""
        return self.sockets.output

    def warm_up(self) -> None:
        """Load models (embedders) of both pipelines.

        With the cache on, every SentenceTransformers embedder reads and writes the embedding cache
        (:class:`~haystack_irmetrics.beir.cache.CachingEmbeddingBackend`: corpus batches and query
        batches), and loads its model at its first cache miss only: a run whose embeddings are all
        cached loads no model.
        """
        if self._warm:
            return
        if self.cache:
            from .cache import CachingEmbeddingBackend, embedding_cache_folder

            for pipe in (self.indexing, self.retrieval):
                for _, comp in pipe.walk():
                    if type(comp).__name__ in _ST_EMBEDDERS and getattr(comp, "embedding_backend", 0) is None:
                        find = any(comp is g for g in self._guessed_devices)
                        lazy = LazyModel(comp, self.source, self.models, self.progress, find_device=find)
                        comp.embedding_backend = CachingEmbeddingBackend(lazy, embedding_cache_folder(comp))
        # the embedders' models load later (LazyModel, with its own switch): transformers is not imported for it
        show = self.progress or not self.models or (self.cache and "transformers" not in sys.modules)
        try:
            with model_loading_bars(show):
                self.indexing.warm_up()
                self.retrieval.warm_up()
        except Exception as e:
            raise PipelineError(
                model_hint(f"warming up the pipeline from {self.source} failed: {e}", self.models)
            ) from e
        self._warm = True

    def finish_indexing(self) -> None:
        """Build the indexes of stores that build lazily (``BM25sDocumentStore.build_index``) now, so that
        building counts as indexing, not as the first query."""
        for store in self._retrieval_stores:
            build = getattr(store, "build_index", None)
            if callable(build):
                build(progress=self.progress)

    def embedding_cache_hits(self, queries: bool = False) -> tuple[int, int]:
        """``(hits, misses)``: the embedders' calls answered from the cache and computed, of the document
        embedders (indexing), or with ``queries`` of the query embedders (one call per batch of queries)."""
        pipe = self.retrieval if queries else self.indexing
        backends = [getattr(comp, "embedding_backend", None) for _, comp in pipe.walk()]
        counted = [b for b in backends if hasattr(b, "hits") and hasattr(b, "misses")]
        return sum(b.hits for b in counted), sum(b.misses for b in counted)

    def prepare_queries(self, queries: list[str], top_k: int | None) -> None:
        """Work on ``queries`` in batches before they run one by one through the pipeline: every
        SentenceTransformers text embedder embeds them (the one-query runs read the vectors back) and
        hands the vectors to the components it feeds that have a ``prefetch_embeddings(vectors, top_k)``
        method (:class:`~haystack_irmetrics.integration.stores.faiss_store.FaissEmbeddingRetriever`), and every component
        with a ``prefetch(queries, top_k)`` method (:class:`~haystack_irmetrics.integration.stores.bm25s_store.BM25sRetriever`)
        scores them, when the query goes straight to it."""
        from .cache import embed_queries_in_batches

        self.warm_up()
        for name, comp in self.retrieval.walk():
            if type(comp).__name__ == _ST_EMBEDDERS[1] and getattr(comp, "embedding_backend", None) is not None:
                vectors = embed_queries_in_batches(comp, queries)
                for _, receiver in self.retrieval.graph.out_edges(name):
                    prefetch = getattr(self.retrieval.get_component(receiver), "prefetch_embeddings", None)
                    if callable(prefetch):
                        prefetch(vectors, top_k)
        self.runner.prefetch(queries, top_k)

    def count_indexed(self) -> int:
        """How many documents the retrieval pipeline's document stores hold (the largest count)."""
        try:
            counts = [store.count_documents() for store in self._retrieval_stores]
        except Exception as e:
            raise PipelineError(f"cannot count the documents of {self.source}'s document store: {e}") from e
        if not counts:
            raise PipelineError(
                f"{self.source} has no component with a document_store: --no-index needs a retriever whose "
                "document store holds the corpus"
            )
        if max(counts) == 0:
            raise PipelineError(
                f"--no-index: the document store of {self.source} is empty; fill it first, or run without --no-index"
            )
        return max(counts)

    def index(self, documents: list[Document]) -> int:
        """Run the indexing pipeline on ``documents``; returns how many the retrievers' stores hold.

        An indexing pipeline of unconnected components (the writers of the BM25 pipelines) has each
        component run on the documents directly: ``Pipeline.run`` would deep-copy every document twice
        first, most of the indexing time of a large corpus.
        """
        self.warm_up()
        data = nest(self.document_inputs, documents)
        try:
            if self.indexing.graph.number_of_edges() == 0:
                for comp, inputs in data.items():
                    self.indexing.get_component(comp).run(**inputs)
            else:
                self.indexing.run(data)
        except Exception as e:
            raise PipelineError(f"the indexing pipeline of {self.source} failed: {e}") from e
        return self.count_written(len(documents))

    def streamed_indexing(self) -> StreamedIndexing | None:
        """The corpus embedded and indexed as a bounded pipeline
        (:class:`~haystack_irmetrics.beir.dense.StreamedIndexing`), when the indexing pipeline is an embedder
        feeding this package's stores; None: :meth:`index` runs the indexing pipeline."""
        from .dense import StreamedIndexing

        self.warm_up()
        return StreamedIndexing.plan(self)

    def rank_batch(self, queries: list[str], top_k: int | None) -> list[tuple[list[str], list[float]]] | None:
        """Each query's ranked corpus ids and scores, the batch embedded and searched at once without a
        Document per hit, when the retrieval pipeline is the built-in dense chain
        (:class:`~haystack_irmetrics.beir.dense.RankedQueries`); None: the queries run one by one
        (:meth:`prepare_queries`, then :meth:`retrieve`)."""
        from .dense import RankedQueries

        self.warm_up()
        if self._ranked is None:
            self._ranked = RankedQueries.plan(self) or False
        return self._ranked.rank(queries, top_k) if self._ranked else None

    def count_written(self, n_documents: int) -> int:
        """How many documents the retrieval pipeline's stores hold after ``n_documents`` were indexed.

        :raises PipelineError: when one of them is empty (the indexing pipeline wrote elsewhere).
        """
        counts = [store.count_documents() for store in self._retrieval_stores]
        if counts and min(counts) == 0:
            raise PipelineError(
                f"after indexing {n_documents} documents, a document store of the retrieval pipeline "
                f"({self.source}) is empty: the indexing pipeline must write into an InMemoryDocumentStore "
                "with the same index name"
            )
        return max(counts) if counts else n_documents

    def retrieve(self, query: str, top_k: int | None) -> list[Document]:
        """Run the retrieval pipeline for one query; returns the ranked documents of :attr:`output`."""
        self.warm_up()  # the embedding cache goes in first; done once
        return self.runner.run(query, top_k)

    def retrieve_ids(self, query: str, top_k: int | None) -> tuple[list, list] | None:
        """One query's ranked corpus ids (each document's ``meta["beir_id"]``) and scores, without a Document per
        hit, where the retrieval pipeline answers so (:meth:`QueryRunner.ranked_meta`: the built-in ``bm25``);
        None otherwise: :meth:`retrieve` gives the Documents. A BEIR run calls it once for every query it runs."""
        self.warm_up()
        return self.runner.ranked_meta("beir_id", query, top_k)

    def close(self) -> None:
        """Empty the run's private in-memory document stores (frees the corpus and its embeddings).

        Only the ``InMemoryDocumentStore`` indexes renamed for this run are emptied; other document
        stores a user pipeline names are left as they are.
        """
        for store in self._private_stores:
            store.delete_all_documents()


def load_beir_pipelines(
    retriever: str | os.PathLike[str] = "bm25",
    *,
    model: str | None = None,
    progress: bool | None = None,
    allowed_modules: Iterable[str] = (),
    no_index: bool = False,
    cache: bool = True,
    joiner: Mapping[str, Any] | None = None,
    batch_size: int | None = None,
    precision: str | None = None,
    device: str | None = None,
) -> BeirPipelines:
    """Load a built-in (``bm25``, ``haystack-bm25``, ``dense``, ``dense-qdrant``, ``hybrid``) or user YAML pipeline for a BEIR run.

    :param retriever: a built-in name or the path of a pipeline YAML.
    :param model: embedding model name or local folder for every SentenceTransformers embedder.
    :param progress: show the document embedder's progress bar (default: when stderr is a terminal).
    :param allowed_modules: module patterns (e.g. ``"mypkg.*"``) whose components the YAML may use,
        besides Haystack's, haystack_integrations' and haystack_irmetrics'.
    :param no_index: the retrievers' stores are filled already: keep their index names as the YAML gives
        them (no private index) and never write into them.
    :param cache: read and write corpus and query embeddings in the cache (:mod:`haystack_irmetrics.beir.cache`).
    :param joiner: ``DocumentJoiner`` init parameters for the pipeline's one joiner (a tuned fusion:
        :func:`read_joiner` reads ``irmetrics fuse --joiner-yaml``'s file); its weights follow the order in
        which the joiner receives the lists (the built-in ``hybrid``: BM25, then dense).
    :param batch_size: texts per forward pass of every SentenceTransformers embedder (default: the
        pipeline's, else the device's, :data:`~haystack_irmetrics.beir.devices.DEFAULT_BATCH_SIZE`).
    :param precision: ``float32``, ``float16`` or ``bfloat16`` for every embedder (default: the model's own).
    :param device: ``cpu``, ``cuda``, ``cuda:N``, ``mps``, or several comma-separated (the corpus is
        embedded on each), for every embedder (default: the pipeline's, else the device found).
    :returns: :class:`BeirPipelines`, with private document stores (call :meth:`BeirPipelines.close`).
    :raises PipelineError: if the YAML cannot be read or loaded, or its inputs and outputs are unclear, or
        the device is not there.
    """
    spec, source, base = _read_spec(retriever, joiner)
    options = EmbedderOptions(batch_size, precision, device)
    config = _irmetrics_config(spec, source)
    indexing_spec = _indexing_spec(config.get("indexing"), base, source)
    specs = [spec] + ([indexing_spec] if indexing_spec is not None else [])
    index_map: dict[Any, str] | None = None if no_index else {}
    show = sys.stderr.isatty() if progress is None else progress
    models, by_guess = _rewrite_specs(specs, index_map, model, show, cache, options)

    allowed = list(allowed_modules)
    retrieval = _load(spec, source, allowed)
    stores = stores_of(retrieval)
    if indexing_spec is not None:
        indexing = _load(indexing_spec, f"{source} (metadata.irmetrics.indexing)", allowed)
        _share_stores(indexing, stores)
    elif no_index:  # nothing is indexed: no indexing pipeline is needed
        from haystack import Pipeline

        indexing = Pipeline()
    else:
        indexing = _writer_pipeline(retrieval, stores, source)
    return BeirPipelines(
        retrieval=retrieval,
        indexing=indexing,
        source=source,
        sockets=_retrieval_sockets(retrieval, config, source),
        document_inputs=[] if no_index else find_document_inputs(indexing, source),
        models=list(dict.fromkeys(models)),
        progress=show,
        cache=cache,
        _retrieval_stores=stores,
        _private_stores=_run_stores(stores, indexing, set((index_map or {}).values()), cache),
        _guessed_devices=[retrieval.get_component(n) for n in by_guess[0]]
        + [indexing.get_component(n) for n in (by_guess[1] if indexing_spec is not None else [])],
    )


def _irmetrics_config(spec: Mapping[str, Any], source: str) -> Mapping[str, Any]:
    """The pipeline's ``metadata.irmetrics`` mapping (empty when it has none)."""
    metadata = spec.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise PipelineError(f"metadata of {source} must be a mapping, got {type(metadata).__name__}")
    config = metadata.get("irmetrics") or {}
    if not isinstance(config, Mapping):
        raise PipelineError(f"metadata.irmetrics of {source} must be a mapping")
    return config


def _rewrite_specs(
    specs: list[dict[str, Any]],
    index_map: dict[Any, str] | None,
    model: str | None,
    show: bool,
    cache: bool,
    options: EmbedderOptions,
) -> tuple[list[str], list[list[str]]]:
    """Each spec rewritten for this run (:func:`rewrite_spec`): the models its embedders load, and per spec the
    components whose device is guessed."""
    dim = embedding_dim(resolve_model(model)) if model else None
    run_id = uuid.uuid4().hex[:12]
    models: list[str] = []
    # with the cache, a model may never load: the device is guessed without torch, and found when one loads
    guessed: list[dict[str, Any]] | None = [] if cache else None
    for s in specs:
        rewrite_spec(s, index_map, run_id, model, show, models, dim, options, guessed)
    if models:  # a device asked for is checked once the pipelines are known to embed
        options.check()
    return models, [guessed_names(s, guessed or []) for s in specs]


def _run_stores(stores: list[Any], indexing: Pipeline, private: set[str], cache: bool) -> list[Any]:
    """The in-memory stores renamed for this run (``private`` index names), which :meth:`BeirPipelines.close`
    empties; without ``cache``, the stores that cache their own index (BM25sDocumentStore) are told not to."""
    every = unique_stores([*stores, *stores_of(indexing)])
    if not cache:  # --no-cache: stores that cache their own index neither read nor write it
        for store in every:
            if type(store).__name__ == "BM25sDocumentStore":
                store.cache = False
    return [s for s in every if type(s).__name__ in _PRIVATE_STORES and getattr(s, "index", None) in private]


def _retrieval_sockets(retrieval: Pipeline, config: Mapping[str, Any], source: str) -> PipelineSockets:
    """The retrieval pipeline's query, ``top_k`` and output sockets, as ``metadata.irmetrics`` names them."""
    named = {key: config[key] for key in ("query_inputs", "top_k_inputs", "output") if key in config}
    for key, value in named.items():
        if value is None:  # written but empty: refused, not read as "use the default"
            parse_sockets(value, f"metadata.irmetrics.{key}", source)
    return find_sockets(
        retrieval,
        query=named.get("query_inputs"),
        top_k=named.get("top_k_inputs"),
        output=named.get("output"),
        source=source,
        naming=BEIR_NAMING,
    )


def pipeline_digest(retriever: str | os.PathLike[str] = "bm25", joiner: Mapping[str, Any] | None = None) -> str:
    """SHA-256 of a pipeline's content: the retrieval YAML (or built-in dict) and its indexing pipeline.

    Part of a run's configuration fingerprint (:mod:`haystack_irmetrics.beir.checkpoint`): editing the
    YAML, or the indexing YAML it names, changes it; moving or touching the files does not.

    :raises PipelineError: if the YAML cannot be read.
    """
    import hashlib
    import json

    spec, source, base = _read_spec(retriever, joiner)
    config = (spec.get("metadata") or {}).get("irmetrics") if isinstance(spec.get("metadata"), Mapping) else None
    indexing = config.get("indexing") if isinstance(config, Mapping) else None
    indexing_spec = _indexing_spec(indexing, base, source) if isinstance(indexing, str) else None
    text = json.dumps([spec, indexing_spec], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read_spec(
    retriever: str | os.PathLike[str], joiner: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], str, Path | None]:
    spec, source, base = _read_retrieval_spec(retriever)
    if joiner is not None:
        spec = with_joiner(spec, joiner, source)
    return spec, source, base


def _read_retrieval_spec(retriever: str | os.PathLike[str]) -> tuple[dict[str, Any], str, Path | None]:
    name = os.fspath(retriever)
    if name in BUILTIN_PIPELINES:
        path = pipelines_dir() / f"beir_{name}.yaml"
        if not path.is_file():
            return builtin_pipeline(name), f"builtin:{name}", None
    else:
        path = Path(name).expanduser()
        if not path.is_file():
            raise PipelineError(
                f"--retriever {name!r} is neither a built-in pipeline ({', '.join(BUILTIN_PIPELINES)}) "
                "nor an existing pipeline YAML file"
            )
    spec = _read_yaml(path, str(path))
    if not isinstance(spec, dict) or not isinstance(spec.get("components"), dict):
        raise PipelineError(f"{path} is not a Haystack pipeline YAML (no 'components' mapping)")
    return spec, str(path), path.parent


#: What a tuned joiner may set: ``DocumentJoiner``'s init parameters.
JOINER_PARAMETERS = frozenset({"join_mode", "weights", "top_k", "sort_by_score"})
JOINER_MODES = ("concatenate", "merge", "reciprocal_rank_fusion", "distribution_based_rank_fusion")
_JOINER_TYPE = "haystack.components.joiners.document_joiner.DocumentJoiner"


def read_joiner(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``DocumentJoiner`` init parameters of a joiner YAML (as ``irmetrics fuse --joiner-yaml`` writes it:
    ``type`` and ``init_parameters``; a bare mapping of init parameters is read too).

    :raises PipelineError: naming the file, when it cannot be read or is not a ``DocumentJoiner``.
    """
    data = _read_yaml(Path(path), os.fspath(path))
    if isinstance(data, Mapping) and "init_parameters" in data:
        if data.get("type", _JOINER_TYPE) != _JOINER_TYPE:
            raise PipelineError(
                f"{os.fspath(path)} holds a {data.get('type')!r}, not a DocumentJoiner ({_JOINER_TYPE})"
            )
        data = data["init_parameters"]
    return check_joiner(data, os.fspath(path))


def check_joiner(parameters: Any, source: str = "joiner") -> dict[str, Any]:
    """``parameters`` as a ``DocumentJoiner``'s init parameters, checked (a copy).

    :raises PipelineError: for anything else than a mapping of ``join_mode``, ``weights``, ``top_k`` and
        ``sort_by_score`` with values ``DocumentJoiner`` takes.
    """
    if not isinstance(parameters, Mapping):
        raise PipelineError(
            f"{source}: expected DocumentJoiner init parameters (a mapping), got {type(parameters).__name__}"
        )
    unknown = sorted(set(map(str, parameters)) - JOINER_PARAMETERS)
    if unknown:
        raise PipelineError(
            f"{source}: {', '.join(map(repr, unknown))} is no DocumentJoiner parameter ({', '.join(sorted(JOINER_PARAMETERS))})"
        )
    out = dict(parameters)
    mode = out.get("join_mode", "concatenate")
    choice(mode, f"{source}: join_mode", JOINER_MODES, error=PipelineError)
    weights = out.get("weights")
    if weights is not None and (
        not isinstance(weights, list | tuple) or not weights or not all(is_number(w) and w >= 0 for w in weights)
    ):
        raise PipelineError(f"{source}: weights must be a list of non-negative numbers, got {weights!r}")
    if out.get("top_k") is not None:  # null: the joiner keeps every document
        whole(out["top_k"], f"{source}: top_k", least=1, error=PipelineError)
    return out


def with_joiner(spec: dict[str, Any], joiner: Mapping[str, Any], source: str) -> dict[str, Any]:
    """A copy of the retrieval ``spec`` whose one ``DocumentJoiner`` takes ``joiner``'s parameters (a tuned
    fusion, ``irmetrics fuse --joiner-yaml``); a ``top_k`` the joiner leaves unset keeps the pipeline's.

    :raises PipelineError: when the pipeline has no ``DocumentJoiner`` or several, or the weights do not
        match the number of lists it joins.
    """
    joiner = check_joiner(joiner, f"the joiner for {source}")
    found = [
        name
        for name, comp in spec["components"].items()
        if isinstance(comp, Mapping) and comp.get("type") == _JOINER_TYPE
    ]
    if len(found) != 1:
        raise PipelineError(
            f"a tuned joiner needs a pipeline with exactly one DocumentJoiner; {source} has {len(found)} "
            "(the built-in hybrid pipeline has one)"
        )
    name = found[0]
    senders = [c for c in spec.get("connections") or [] if str(c.get("receiver", "")).split(".")[0] == name]
    weights = joiner.get("weights")
    if weights is not None and len(weights) != len(senders):
        raise PipelineError(
            f"the joiner's {len(weights)} weights do not match the {len(senders)} lists {name} of {source} joins"
        )
    out = copy.deepcopy(spec)
    component = out["components"][name]
    params = dict(component.get("init_parameters") or {})
    top_k = joiner.get("top_k") if joiner.get("top_k") is not None else params.get("top_k")
    component["init_parameters"] = {**params, **joiner, "top_k": top_k}
    return out


def _indexing_spec(value: Any, base: Path | None, source: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return copy.deepcopy(dict(value))
    if isinstance(value, str):
        path = Path(value).expanduser()
        if not path.is_absolute() and base is not None:
            path = base / path
        if not path.is_file():
            raise PipelineError(f"metadata.irmetrics.indexing of {source} names {path}, which does not exist")
        spec = _read_yaml(path, f"{path} (metadata.irmetrics.indexing of {source})")
        if not isinstance(spec, dict):
            raise PipelineError(f"{path} is not a Haystack pipeline YAML")
        return spec
    raise PipelineError(f"metadata.irmetrics.indexing of {source} must be a pipeline mapping or a YAML path")


def _read_yaml(path: Path, name: str) -> Any:
    """A pipeline YAML file's data, bounded (alias bombs, deep nesting: :func:`read_pipeline_yaml`)."""
    from ..integration.loading import read_pipeline_yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PipelineError(
            f"cannot read pipeline YAML {name}: it is not readable YAML ({' '.join(str(e).split())})"
        ) from None
    return read_pipeline_yaml(text, name)


def _load(spec: dict[str, Any], source: str, allowed_modules: list[str]) -> Pipeline:
    """The pipeline of ``spec``; sentence-transformers and torch are imported when an embedder first loads its
    model (a run whose vectors are all cached loads none)."""
    from contextlib import ExitStack

    from .lazy_torch import deferred_import

    types = [c.get("type") for c in (spec.get("components") or {}).values() if isinstance(c, dict)]
    with ExitStack() as stack:
        # only modules known to use sentence-transformers and torch through names they call (a user's component
        # may subclass torch.nn.Module or import torch's submodules when it is imported)
        if all(isinstance(t, str) and t.startswith(_DEFERRING) for t in types):
            stack.enter_context(deferred_import("sentence_transformers"))
            stack.enter_context(deferred_import("torch", names=False))
        return _load_now(spec, source, allowed_modules)


def _load_now(spec: dict[str, Any], source: str, allowed_modules: list[str]) -> Pipeline:
    from haystack.marshal import YamlMarshaller

    from ..integration.loading import load_pipeline

    types = [c.get("type") for c in (spec.get("components") or {}).values() if isinstance(c, dict)]
    if any(isinstance(t, str) and t.startswith(_ST_MODULE) for t in types):
        require(_ST_MODULE, purpose=f"{source} (SentenceTransformers embedders)", extra="dense")
    if any(isinstance(t, str) and t.startswith(_QDRANT_MODULES) for t in types):
        require(_QDRANT_MODULES[0], purpose=f"{source} (the Qdrant vector store)", extra="dense")
    if any(isinstance(t, str) and t.startswith(BM25S_MODULES) for t in types):
        require("bm25s", "Stemmer", purpose=f"{source} (the bm25s BM25 engine)", extra="bm25", hint=BM25S_HINT)
    if any(isinstance(t, str) and t.startswith(FAISS_MODULES) for t in types):
        require("faiss", purpose=f"{source} (FAISS vector search)", extra="dense")
    try:
        return load_pipeline(YamlMarshaller().marshal(spec), allowed_modules=allowed_modules)
    except Exception as e:
        hint = ""
        if "allowed_modules" in str(e) or "not allowed" in str(e):
            hint = " (with irmetrics beir: --allow-module '<package>.*'; in Python: run_beir(..., allowed_modules=['<package>.*']))"
        raise PipelineError(f"cannot load the pipeline of {source}: {_one_line(e)}{hint}") from e


def _one_line(error: Exception) -> str:
    """Haystack's load error on one line: the component's own error, not the dump of its init parameters
    that Haystack puts before it (the CLI prints one line per error)."""
    import re

    text = str(error)
    found = re.match(r"Couldn't deserialize component '([^']*)' of class '([^']*)'", text)
    if found and error.__cause__ is not None:
        text = f"component {found[1]!r} ({found[2]}): {error.__cause__}"
    return " ".join(text.split())


def _share_stores(indexing: Pipeline, stores: list[Any]) -> None:
    """Give the indexing pipeline's components the retrieval pipeline's store instance wherever both name
    the same store (equal ``to_dict()``): an embedded store in memory (Qdrant ``:memory:``, Chroma without
    ``persist_path``, FAISS without ``index_path``) exists once per instance, and a local one (Qdrant
    ``path``, Milvus Lite) may be opened by one client at a time."""
    import json

    def key(store: Any) -> str | None:
        try:
            return json.dumps(store.to_dict(), sort_keys=True, default=str)
        except Exception:  # a store that cannot describe itself is left alone
            return None

    by_key = {key(store): store for store in stores}
    by_key.pop(None, None)
    for _, comp in indexing.walk():
        attr = store_attribute(comp)
        store = getattr(comp, attr) if attr else None
        if store is not None and not any(store is s for s in stores):
            twin = by_key.get(key(store))
            if twin is not None:
                setattr(comp, attr, twin)


def _writer_pipeline(retrieval: Pipeline, stores: list[Any], source: str) -> Pipeline:
    from haystack import Pipeline
    from haystack.components.writers import DocumentWriter

    embedding = [name for name, comp in retrieval.walk() if "Embedding" in type(comp).__name__]
    if embedding:
        raise PipelineError(
            f"{source} has embedding retrievers ({', '.join(embedding)}) but no metadata.irmetrics.indexing "
            "pipeline to embed the corpus with"
        )
    if not stores:
        raise PipelineError(
            f"{source} has no component with a document_store and no metadata.irmetrics.indexing pipeline: "
            "nothing to index the corpus into"
        )
    pipe = Pipeline()
    for i, store in enumerate(stores):
        pipe.add_component(f"writer_{i}", DocumentWriter(document_store=store))
    return pipe


__all__ = [
    "BeirPipelines",
    "corpus_documents",
    "load_beir_pipelines",
    "pipeline_digest",
    "pipelines_dir",
    "resolve_model",
]
