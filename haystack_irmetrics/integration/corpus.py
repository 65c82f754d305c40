"""A corpus as Haystack Documents (one per document, or per chunk of its text), and written into a
pipeline's document stores: the one place ``irmetrics beir`` and ``irmetrics feedback --corpus`` turn a
corpus into Documents. :class:`CorpusTable` holds the same documents as columns and makes each Document
when it is read (a dense run embeds and indexes a corpus without a Document per entry)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import PipelineError
from .stores import stores_of

if TYPE_CHECKING:  # pragma: no cover
    from haystack import Document


def corpus_documents(
    corpus: Mapping[str, Mapping[str, str | None]],
    *,
    chunk_words: int | None = None,
    chunk_overlap: int = 0,
) -> list[Document]:
    """One :class:`haystack.Document` per corpus entry, or per chunk of its text.

    A document's content is ``title + " " + text`` (stripped), its id the BEIR id, and
    ``meta["beir_id"]`` the BEIR id. With ``chunk_words``, the text is split into chunks of that many
    words (Haystack's ``DocumentSplitter``, ``split_by="word"``), each chunk is prefixed with the title,
    and chunk ``i`` of document ``d`` gets id ``d#i`` and ``meta["chunk"] = i``.

    :param corpus: ``{doc_id: {"title": ..., "text": ...}}`` as :func:`~haystack_irmetrics.beir.load_beir` and
        :func:`~haystack_irmetrics.io.beir_data.read_beir_corpus` return.
    :param chunk_words: words per chunk, or ``None`` for whole documents.
    :param chunk_overlap: words shared by consecutive chunks.
    :returns: the documents, in corpus order.
    """
    return list(corpus_table(corpus, chunk_words=chunk_words, chunk_overlap=chunk_overlap))


class CorpusTable(Sequence["Document"]):
    """The documents :func:`corpus_documents` makes, as columns: each :class:`haystack.Document` is made
    when it is read (``table[i]``), so a corpus of a million documents is indexed without a million Documents
    held (their contents are read from the corpus mapping, or kept once per chunk).

    A slice is a table over the same columns. :attr:`ids` are the Documents' ids, :attr:`beir_ids` their
    ``meta["beir_id"]``; :meth:`contents` their contents, built for a range at a time.
    """

    def __init__(
        self,
        corpus: Mapping[str, Mapping[str, str | None]],
        ids: list[str],
        beir_ids: list[str],
        chunks: list[tuple[int, str]] | None = None,
        start: int = 0,
        stop: int | None = None,
    ) -> None:
        self._corpus = corpus
        self._ids = ids
        self._beir_ids = beir_ids
        self._chunks = chunks  # (chunk number, chunk text) per row, or None for whole documents
        self._start = start
        self._stop = len(ids) if stop is None else stop

    def __len__(self) -> int:
        return self._stop - self._start

    @property
    def ids(self) -> list[str]:
        """The Documents' ids (a list made for a slice, the table's own otherwise)."""
        return self._ids if (self._start, self._stop) == (0, len(self._ids)) else self._ids[self._start : self._stop]

    @property
    def beir_ids(self) -> list[str]:
        """``meta["beir_id"]`` of each Document."""
        whole = (self._start, self._stop) == (0, len(self._beir_ids))
        return self._beir_ids if whole else self._beir_ids[self._start : self._stop]

    def meta_column(self, field: str) -> list[Any]:
        """``meta[field]`` of each Document (None where it has none): ``beir_id`` is a column already."""
        if field == "beir_id":
            return self.beir_ids
        return [self[i].meta.get(field) for i in range(len(self))]

    def contents(self, start: int = 0, stop: int | None = None) -> list[str]:
        """The contents of rows ``start`` to ``stop`` of this table: what the Documents' ``content`` holds."""
        first, last = self._start + start, self._start + (len(self) if stop is None else stop)
        if self._chunks is None:
            corpus = self._corpus
            return [_content(corpus[cid]) for cid in self._beir_ids[first:last]]
        return [
            _join(self._corpus[cid].get("title") or "", text)
            for cid, (_, text) in zip(self._beir_ids[first:last], self._chunks[first:last])
        ]

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            stop = max(start, stop)
            return CorpusTable(
                self._corpus, self._ids, self._beir_ids, self._chunks, self._start + start, self._start + stop
            )
        i = range(len(self))[item]  # an IndexError beyond the end, negative positions counted from it
        return self._document(self._start + i)

    def _document(self, row: int) -> Document:
        from haystack import Document

        cid = self._beir_ids[row]
        title = self._corpus[cid].get("title") or ""
        if self._chunks is None:
            return Document(id=cid, content=_content(self._corpus[cid]), meta={"beir_id": cid, "title": title})
        number, text = self._chunks[row]
        return Document(
            id=self._ids[row], content=_join(title, text), meta={"beir_id": cid, "title": title, "chunk": number}
        )


def _join(title: str, text: str) -> str:
    return f"{title} {text}".strip()


def _content(doc: Mapping[str, str | None]) -> str:
    return _join(doc.get("title") or "", doc.get("text") or "")


def corpus_table(
    corpus: Mapping[str, Mapping[str, str | None]],
    *,
    chunk_words: int | None = None,
    chunk_overlap: int = 0,
) -> CorpusTable:
    """:func:`corpus_documents`'s documents as a :class:`CorpusTable` (made on demand, in corpus order).

    :raises PipelineError: when ``chunk_words`` and ``chunk_overlap`` do not make chunks.
    """
    if chunk_words is None:
        ids = list(corpus)
        return CorpusTable(corpus, ids, ids)
    if chunk_words < 1 or chunk_overlap < 0 or chunk_overlap >= chunk_words:
        raise PipelineError(
            f"need chunk_words >= 1 and 0 <= chunk_overlap < chunk_words, got {chunk_words}, {chunk_overlap}"
        )
    from haystack import Document
    from haystack.components.preprocessors import DocumentSplitter

    splitter = DocumentSplitter(split_by="word", split_length=chunk_words, split_overlap=chunk_overlap)
    with_text = [
        Document(id=cid, content=doc["text"], meta={"beir_id": cid})
        for cid, doc in corpus.items()
        if (doc.get("text") or "").strip()
    ]
    pieces: dict[str, list[str]] = {}
    for chunk in splitter.run(documents=with_text)["documents"]:
        pieces.setdefault(chunk.meta["beir_id"], []).append(chunk.content or "")
    ids, beir_ids, chunks = [], [], []
    for cid in corpus:
        for i, piece in enumerate(pieces.get(cid) or [""]):
            ids.append(f"{cid}#{i}")
            beir_ids.append(cid)
            chunks.append((i, piece.strip()))
    return CorpusTable(corpus, ids, beir_ids, chunks)


def write_into_stores(pipeline: Any, documents: Sequence[Document], source: str = "the pipeline") -> int:
    """Write ``documents`` into every document store of ``pipeline``'s components (each index once);
    returns how many stores were written.

    For a retrieval pipeline whose stores are filled by hand (``irmetrics feedback --corpus``); a BEIR
    run indexes through its indexing pipeline instead.

    :raises PipelineError: when no component of the pipeline has a document store.
    """
    stores = stores_of(pipeline)
    if not stores:
        raise PipelineError(f"{source} has no component with a document_store to write the corpus into")
    for store in stores:
        store.write_documents(list(documents))
    return len(stores)


__all__ = ["CorpusTable", "corpus_documents", "corpus_table", "write_into_stores"]
