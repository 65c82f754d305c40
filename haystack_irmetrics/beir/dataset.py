"""BEIR datasets: the folder layout ``beir.datasets.data_loader.GenericDataLoader`` reads.

A folder holds ``corpus.jsonl`` (``{"_id", "title", "text"}`` per line), ``queries.jsonl``
(``{"_id", "text"}``) and ``qrels/<split>.tsv`` (a header row, then ``query-id corpus-id score``
separated by tabs, whole-number scores), each read by :mod:`haystack_irmetrics.io.beir_data`.
:func:`load_beir` returns what ``GenericDataLoader(folder).load(split)`` returns for the same folder,
in the same order (queries filtered to the split's qrels, in qrels order; ``int`` labels, a label
written ``1.0`` read as 1, as ``irmetrics evaluate`` reads it; a missing ``title`` or ``text`` is
``None``), and raises a clear error where ``GenericDataLoader`` would crash or silently lose data: a
malformed line (file and line number), a duplicate id or judgment, a qrels query absent from
``queries.jsonl`` and a query without text.

Judged documents absent from the corpus (ArguAna's qrels name a few) stay in the qrels, as BEIR
keeps them: they count as relevant and unretrievable, so Recall's and NDCG's denominators include
them, as in every published BEIR figure. A warning gives their count and examples;
``strict_docs=True`` (``--strict-docs``) refuses such a dataset instead.

:func:`resolve_dataset` turns a folder path or a BEIR dataset name into a folder, downloading the
named dataset with beir's own utility when the network allows, and :func:`sample_path` is the
small BEIR-format sample shipped with the package.
"""

from __future__ import annotations

import os
import warnings as _warnings
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from .._extras import require
from ..errors import DatasetError, DatasetNotFoundError, EmptyQueryError, MissingDocumentsError
from ..io.beir_data import read_beir_corpus, read_beir_qrels_tsv, read_beir_queries

#: The BEIR datasets that can be downloaded publicly (beir's README table).
BEIR_DATASETS = (
    "arguana",
    "climate-fever",
    "cqadupstack",
    "dbpedia-entity",
    "fever",
    "fiqa",
    "hotpotqa",
    "msmarco",
    "nfcorpus",
    "nq",
    "quora",
    "scidocs",
    "scifact",
    "trec-covid",
    "webis-touche2020",
)

#: Where beir's examples download the datasets from.
BEIR_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/{name}.zip"

_EXAMPLES = 5


@dataclass(frozen=True)
class BeirDataset:
    """One split of a BEIR dataset, as ``GenericDataLoader.load(split)`` returns it.

    :ivar corpus: ``{doc_id: {"text": str | None, "title": str | None}}`` in file order.
    :ivar queries: ``{query_id: text}`` for the queries of the split's qrels, in qrels order.
    :ivar qrels: ``{query_id: {doc_id: int label}}`` in file order.
    :ivar name: a short name for reports (the folder name).
    :ivar path: the dataset folder, or ``None`` for a dataset built in memory.
    :ivar split: the qrels split (``test``, ``dev``, ``train``...).
    :ivar n_queries_in_file: queries in ``queries.jsonl`` (the split keeps ``len(queries)`` of them).
    :ivar warnings: things a reader of the numbers should know (judged documents missing from the
        corpus, documents without text).
    """

    corpus: dict[str, dict[str, str | None]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    name: str = "dataset"
    path: Path | None = None
    split: str = "test"
    n_queries_in_file: int = 0
    warnings: tuple[str, ...] = field(default=())

    @cached_property
    def missing_documents(self) -> tuple[tuple[str, str, int], ...]:
        """``(query id, document id, label)`` of every judgment whose document is not in the corpus."""
        return tuple(_missing_documents(self.qrels, self.corpus))

    def missing_documents_summary(self) -> dict[str, Any]:
        """What ``summary.json`` records about :attr:`missing_documents`: how many distinct documents
        (``judged_documents_missing_from_corpus``), judgments, relevant judgments and queries, and examples."""
        missing = self.missing_documents
        return {
            "judged_documents_missing_from_corpus": len({d for _, d, _ in missing}),
            "judgments_missing_from_corpus": len(missing),
            "relevant_judgments_missing_from_corpus": sum(1 for _, _, label in missing if label > 0),
            "judged_documents_missing_examples": [
                {"query": q, "document": d, "label": label} for q, d, label in missing[:_EXAMPLES]
            ],
        }

    def missing_documents_warning(self) -> str | None:
        """The warning about :attr:`missing_documents` (count and examples), or ``None`` when there are none."""
        if not self.missing_documents:
            return None
        root = self.path
        qrels_file = root / "qrels" / f"{self.split}.tsv" if root is not None else Path(f"the {self.split} qrels")
        corpus_file = root / "corpus.jsonl" if root is not None else Path("the corpus")
        return (
            _missing_docs_message(list(self.missing_documents), qrels_file, corpus_file)
            + "; they count as relevant and unretrievable, as in BEIR's evaluation and its published figures "
            "(--strict-docs refuses such a dataset)"
        )

    def subset(self, query_ids: Iterable[str]) -> BeirDataset:
        """The same corpus with only the given queries (and their qrels); unknown ids raise.

        :param query_ids: ids of queries of this split, e.g. ``list(ds.queries)[:50]``.
        :returns: a new :class:`BeirDataset` (its missing-documents warning counts its own queries).
        """
        ids = list(query_ids)
        unknown = [q for q in ids if q not in self.queries]
        if unknown:
            raise DatasetError(f"{len(unknown)} query ids are not in split {self.split!r}, e.g. {unknown[:_EXAMPLES]}")
        old = self.missing_documents_warning()
        sub = replace(
            self,
            queries={q: self.queries[q] for q in ids},
            qrels={q: self.qrels[q] for q in ids},
        )
        new = sub.missing_documents_warning()
        kept = tuple(w for w in self.warnings if w != old)
        return replace(sub, warnings=((new,) if new else ()) + kept)


def sample_path() -> Path:
    """The BEIR-format sample dataset shipped with haystack_irmetrics (360 documents, 40 test queries)."""
    return Path(__file__).resolve().parent.parent / "datasets" / "sample"


def default_data_dir() -> Path:
    """Where named BEIR datasets live: ``$IRMETRICS_BEIR_DIR``, else ``~/.cache/haystack_irmetrics/beir``."""
    env = os.environ.get("IRMETRICS_BEIR_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "haystack_irmetrics" / "beir"


def resolve_dataset(
    dataset: str | os.PathLike[str] | None, *, data_dir: str | os.PathLike[str] | None = None, download: bool = True
) -> Path:
    """Turn a folder path, a BEIR dataset name, ``"sample"`` or ``None`` into a dataset folder.

    A path to an existing folder wins. ``None`` and ``"sample"`` mean the shipped sample. A BEIR
    name (``scifact``, ``nfcorpus``, ...; see :data:`BEIR_DATASETS`) means ``DATA_DIR/<name>``,
    downloaded and unzipped there with ``beir.util.download_and_unzip`` when absent.

    :param dataset: the folder, the name, or ``None``.
    :param data_dir: where named datasets are kept (default :func:`default_data_dir`).
    :param download: try to download a named dataset that is not in ``data_dir``.
    :returns: the folder.
    :raises DatasetNotFoundError: if the folder does not exist, the name is unknown, or the download
        failed (the message says where to put the unzipped folder).
    """
    if dataset is None:
        return sample_path()
    path = Path(dataset).expanduser()
    if path.is_dir():
        return path
    name = str(dataset)
    if name == "sample":
        return sample_path()
    if name.lower() not in BEIR_DATASETS:
        raise DatasetNotFoundError(
            f"{name!r} is neither a folder nor a BEIR dataset name; pass a folder holding corpus.jsonl, "
            f"queries.jsonl and qrels/<split>.tsv, or one of: {', '.join(BEIR_DATASETS)}"
        )
    name = name.lower()
    root = Path(data_dir).expanduser() if data_dir is not None else default_data_dir()
    target = root / name
    if (target / "corpus.jsonl").is_file() or (target.is_dir() and any(target.glob("*/corpus.jsonl"))):
        return target
    url = BEIR_URL.format(name=name)
    where = (
        f"Without network access, download {url} elsewhere and unzip it into {root} so that "
        f"{target / 'corpus.jsonl'} exists (or unzip it anywhere and pass that folder as the dataset)."
    )
    if not download:
        raise DatasetNotFoundError(f"BEIR dataset {name!r} is not in {root} and downloading is off. {where}")
    require("beir", purpose=f"downloading BEIR dataset {name!r} (beir's utility)", hint=where)
    try:
        _download(url, root)
    except Exception as e:  # network errors come in many types (requests, OSError, BadZipFile...)
        raise DatasetNotFoundError(
            f"BEIR dataset {name!r} is not in {root} and could not be downloaded ({type(e).__name__}: {e}). {where}"
        ) from e
    if not target.is_dir():
        raise DatasetNotFoundError(f"downloaded {url} but it did not unzip to {target}. {where}")
    return target


def _download(url: str, root: Path) -> None:
    """``beir.util.download_and_unzip``, removing a partial or corrupt zip when it fails."""
    from beir import util  # imports torch: only when a download is needed

    root.mkdir(parents=True, exist_ok=True)
    zip_file = root / url.rsplit("/", 1)[-1]
    try:
        util.download_and_unzip(url, str(root))
    except BaseException:
        zip_file.unlink(missing_ok=True)
        raise


def strict_docs_setting(strict_docs: bool, allow_missing_docs: bool | None) -> bool:
    """``strict_docs``, or the deprecated ``allow_missing_docs`` it replaces (``allow_missing_docs=False``
    meant strict; a DeprecationWarning says so).

    :raises DatasetError: when both are given and disagree.
    """
    if allow_missing_docs is None:
        return bool(strict_docs)
    _warnings.warn(
        "allow_missing_docs is deprecated: judged documents missing from the corpus are evaluated as BEIR "
        "does by default; pass strict_docs=True to refuse them",
        DeprecationWarning,
        stacklevel=3,
    )
    if strict_docs and allow_missing_docs:
        raise DatasetError("strict_docs=True and allow_missing_docs=True contradict each other: pass strict_docs only")
    return bool(strict_docs) or not allow_missing_docs


def load_beir(
    folder: str | os.PathLike[str],
    split: str = "test",
    *,
    strict_docs: bool = False,
    allow_missing_docs: bool | None = None,
    name: str | None = None,
) -> BeirDataset:
    """Load one split of a BEIR folder exactly as ``GenericDataLoader(folder).load(split)`` does.

    :param folder: the dataset folder.
    :param split: the qrels file ``qrels/<split>.tsv`` to evaluate on.
    :param strict_docs: refuse a dataset whose qrels judge documents absent from the corpus. By
        default they stay in the qrels and count as relevant and unretrievable, as BEIR evaluates
        them; a warning (:attr:`BeirDataset.warnings`) gives their count and examples.
    :param allow_missing_docs: deprecated; ``False`` is ``strict_docs=True``.
    :param name: a name for reports (default: the folder name).
    :returns: a :class:`BeirDataset`.
    :raises ParseError: on a malformed line (file and line number) or a duplicate id or judgment.
    :raises DatasetError: on missing files, qrels queries absent from ``queries.jsonl``, no judgments.
    :raises EmptyQueryError: if a query of the split has no text.
    :raises MissingDocumentsError: with ``strict_docs``, if judged documents are absent from the corpus.

    Usage::

        >>> from haystack_irmetrics.beir import load_beir, sample_path
        >>> ds = load_beir(sample_path(), "test")
        >>> len(ds.corpus), len(ds.queries), ds.qrels["q01"]["doc0159"]
        (360, 40, 2)
    """
    strict = strict_docs_setting(strict_docs, allow_missing_docs)
    root = Path(folder)
    corpus_file, query_file, qrels_file = root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv"
    missing = [p for p in (corpus_file, query_file, qrels_file) if not p.is_file()]
    if missing:
        raise DatasetError(_missing_files_message(root, split, missing))
    corpus = read_beir_corpus(corpus_file)
    all_queries = read_beir_queries(query_file)
    qrels = read_beir_qrels_tsv(qrels_file)
    warnings: list[str] = []

    absent = [q for q in qrels if q not in all_queries]
    if absent:
        raise DatasetError(
            f"{len(absent)} of the {len(qrels)} query ids in {qrels_file} are not in {query_file}, "
            f"e.g. {absent[:_EXAMPLES]} (GenericDataLoader stops with a KeyError on them)"
        )
    queries = {qid: all_queries[qid] for qid in qrels}
    empty = [q for q, text in queries.items() if text is None or not str(text).strip()]
    if empty:
        raise EmptyQueryError(
            f"{len(empty)} queries of split {split!r} have no text in {query_file}, e.g. {empty[:_EXAMPLES]}; "
            "a retriever cannot run them and dropping them would change the mean"
        )

    if strict:
        check_documents(qrels, corpus, qrels_file, corpus_file)
    n_empty = sum(
        1 for doc in corpus.values() if not (doc.get("title") or "").strip() and not (doc.get("text") or "").strip()
    )
    if n_empty:
        warnings.append(f"{n_empty} documents of {corpus_file} have neither title nor text")
    ds = BeirDataset(
        corpus=corpus,
        queries=queries,
        qrels=qrels,
        name=name or root.resolve().name,
        path=root,
        split=split,
        n_queries_in_file=len(all_queries),
    )
    missing = ds.missing_documents_warning()
    return replace(ds, warnings=((missing,) if missing else ()) + tuple(warnings))


def check_documents(qrels: dict[str, dict[str, int]], corpus: dict, qrels_file: object, corpus_file: object) -> None:
    """``strict_docs``: refuse qrels that judge documents absent from the corpus.

    :raises MissingDocumentsError: with the count and examples.
    """
    missing = _missing_documents(qrels, corpus)
    if missing:
        raise MissingDocumentsError(
            _missing_docs_message(missing, qrels_file, corpus_file)
            + "; without --strict-docs (strict_docs=True) they are evaluated as BEIR does: relevant and unretrievable"
        )


def _missing_files_message(root: Path, split: str, missing: list[Path]) -> str:
    if not root.is_dir():
        return f"dataset folder {root} does not exist"
    text = f"{root} is not a complete BEIR dataset folder: missing {', '.join(str(p) for p in missing)}"
    splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
    if splits and root / "qrels" / f"{split}.tsv" in missing:
        text += f" (splits here: {', '.join(splits)})"
    nested = sorted(p.parent.name for p in root.glob("*/corpus.jsonl"))
    if nested:
        text += f" (sub-datasets here: {', '.join(nested)}; pass one of those folders)"
    return text


def _missing_documents(qrels: dict[str, dict[str, int]], corpus: dict) -> list[tuple[str, str, int]]:
    return [(q, d, label) for q, docs in qrels.items() for d, label in docs.items() if d not in corpus]


def _missing_docs_message(missing: list[tuple[str, str, int]], qrels_file: object, corpus_file: object) -> str:
    docs = list(dict.fromkeys(d for _, d, _ in missing))
    relevant = sum(1 for _, _, label in missing if label > 0)
    queries = len({q for q, _, _ in missing})
    examples = ", ".join(f"{q}/{d}" for q, d, _ in missing[:_EXAMPLES])
    return (
        f"{len(missing)} judgments in {qrels_file} ({relevant} of them relevant, for {queries} queries) name "
        f"{len(docs)} documents absent from {corpus_file}, e.g. (query/document) {examples}"
    )


__all__ = [
    "BEIR_DATASETS",
    "BEIR_URL",
    "BeirDataset",
    "default_data_dir",
    "load_beir",
    "resolve_dataset",
    "sample_path",
    "strict_docs_setting",
]
