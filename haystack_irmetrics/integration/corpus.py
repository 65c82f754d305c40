"""A corpus as Haystack Documents (one per document, or per chunk of its text), and written into a
pipeline's document stores: the one place ``irmetrics beir`` and ``irmetrics feedback --corpus`` turn a
corpus into Documents."""

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
    from haystack import Document

    def content(title: str, text: str) -> str:
        return f"{title} {text}".strip()

    if chunk_words is None:
        return [
            Document(
                id=cid,
                content=content(doc.get("title") or "", doc.get("text") or ""),
                meta={"beir_id": cid, "title": doc.get("title") or ""},
            )
            for cid, doc in corpus.items()
        ]
    if chunk_words < 1 or chunk_overlap < 0 or chunk_overlap >= chunk_words:
        raise PipelineError(
            f"need chunk_words >= 1 and 0 <= chunk_overlap < chunk_words, got {chunk_words}, {chunk_overlap}"
        )
    from haystack.components.preprocessors import DocumentSplitter

    splitter = DocumentSplitter(split_by="word", split_length=chunk_words, split_overlap=chunk_overlap)
    with_text = [
        Document(id=cid, content=doc["text"], meta={"beir_id": cid})
        for cid, doc in corpus.items()
        if (doc.get("text") or "").strip()
    ]
    chunks: dict[str, list[str]] = {}
    for chunk in splitter.run(documents=with_text)["documents"]:
        chunks.setdefault(chunk.meta["beir_id"], []).append(chunk.content or "")
    out = []
    for cid, doc in corpus.items():
        title = doc.get("title") or ""
        for i, piece in enumerate(chunks.get(cid) or [""]):
            out.append(
                Document(
                    id=f"{cid}#{i}",
                    content=content(title, piece.strip()),
                    meta={"beir_id": cid, "title": title, "chunk": i},
                )
            )
    return out


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


__all__ = ["corpus_documents", "write_into_stores"]
