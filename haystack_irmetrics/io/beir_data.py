"""BEIR's dataset files, read as ``beir.datasets.data_loader.GenericDataLoader`` reads them: ``corpus.jsonl``
(``{"_id", "title", "text"}`` per line), ``queries.jsonl`` (``{"_id", "text"}``) and ``qrels/<split>.tsv``
(a header row, then ``query-id<TAB>corpus-id<TAB>score``).

Each file is read by one reader here, under the line limit (:mod:`.limits`) and with every error naming the
file and line (:mod:`.text`): :func:`read_jsonl` (any JSONL file of objects: what the report and
``irmetrics feedback --corpus`` read), :func:`read_beir_corpus`, :func:`read_beir_queries` and
:func:`read_beir_qrels_tsv` (what :func:`~haystack_irmetrics.beir.load_beir` reads).

**Labels.** One rule for both readers of BEIR qrels (this module's and
:func:`~haystack_irmetrics.io.trec.read_beir_qrels`, which ``irmetrics evaluate`` uses): a label is a
plain ASCII finite number (no ``_``, no other digits); a whole value reads as an int, so ``1``, ``+1``,
``1.0`` and ``1e0`` all read as ``1``, and a fraction as the float it is (``0.5``), as TREC qrels read
(:func:`beir_label`). ``GenericDataLoader`` reads ``int(score)``, which takes ``1`` and refuses ``1.0`` and
``0.5``; a file written with ``1.0`` loses nothing when read as 1, a fraction is a graded label (the
click-derived ``qrels.tsv`` of ``irmetrics clicks fit`` holds them), and one file passes (or fails)
``irmetrics evaluate`` and ``irmetrics beir`` alike. A label not finite or not a number is refused by both,
naming the line.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import DatasetError, ParseError
from .text import text_lines

PathLike = str | os.PathLike

#: The keys that name an object of a JSONL file read by the report (``_id`` as BEIR writes it, or ``id``).
ID_KEYS = ("_id", "id")


def read_jsonl(path: PathLike, ids: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of each non-blank line of a JSONL file (UTF-8, not compressed).

    :param ids: when given, each object must hold one of these keys (e.g. :data:`ID_KEYS`).
    :raises ParseError: naming the file and line: a line that is not JSON, nested too deeply, not an object
        or without one of ``ids``, and as :func:`~haystack_irmetrics.io.text.text_lines` (a line over the
        limit, a byte that is not UTF-8, a file that cannot be opened). The lines before are yielded first.
    """
    for lineno, line in text_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ParseError(f"invalid JSON ({e.msg} at column {e.colno})", path=str(path), line=lineno) from None
        except RecursionError:  # json's decoder recurses once per nested array or object
            raise ParseError("invalid JSON (nested too deeply)", path=str(path), line=lineno) from None
        if not isinstance(obj, dict):
            raise ParseError(f"expected a JSON object, found {type(obj).__name__}", path=str(path), line=lineno)
        if ids and not any(k in obj for k in ids):
            keys = f"{ids[0]!r}" + "".join(f" (or {k!r})" for k in ids[1:])
            raise ParseError(f"expected a JSON object with an {keys}", path=str(path), line=lineno)
        yield lineno, obj


def _id_of(obj: dict, path: PathLike, lineno: int) -> str:
    if "_id" not in obj:
        raise ParseError("no '_id' field", path=str(path), line=lineno)
    value = obj["_id"]
    if not isinstance(value, str):
        raise ParseError(
            f"'_id' must be a string (qrels ids are strings), found {type(value).__name__} {value!r}",
            path=str(path),
            line=lineno,
        )
    return value


def _text_field(obj: dict, key: str, path: PathLike, lineno: int) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise ParseError(f"{key!r} must be a string, found {type(value).__name__}", path=str(path), line=lineno)
    return value


def _first_line_of(path: PathLike, key: str) -> int:
    for lineno, obj in read_jsonl(path):
        if obj.get("_id") == key:
            return lineno
    return 0  # pragma: no cover - only called for an id that is in the file


def _objects(path: PathLike, what: str, seen: dict) -> Iterator[tuple[str, dict, int]]:
    """``(id, object, line)`` of each object of a BEIR JSONL file; an id already in ``seen`` (what the caller
    built so far) raises, naming both lines (the first found by reading the file again)."""
    for lineno, obj in read_jsonl(path):
        key = _id_of(obj, path, lineno)
        if key in seen:
            raise ParseError(
                f"{what} id {key!r} appears twice (first on line {_first_line_of(path, key)})",
                path=str(path),
                line=lineno,
            )
        yield key, obj, lineno


def read_beir_corpus(path: PathLike) -> dict[str, dict[str, str | None]]:
    """``{doc_id: {"text": str | None, "title": str | None}}`` of a BEIR ``corpus.jsonl``, in file order.

    :raises ParseError: naming the file and line: as :func:`read_jsonl`, no string ``_id``, an id twice, a
        ``text`` or ``title`` that is not a string, or no document at all.
    """
    corpus: dict[str, dict[str, str | None]] = {}
    for doc_id, obj, lineno in _objects(path, "document", corpus):
        corpus[doc_id] = {
            "text": _text_field(obj, "text", path, lineno),
            "title": _text_field(obj, "title", path, lineno),
        }
    if not corpus:
        raise ParseError("no documents (empty file?)", path=str(path))
    return corpus


def read_beir_queries(path: PathLike) -> dict[str, str | None]:
    """``{query_id: text}`` of a BEIR ``queries.jsonl`` in file order (``None`` where a query has no text).

    :raises ParseError: naming the file and line: as :func:`read_jsonl`, no string ``_id``, an id twice or a
        ``text`` that is not a string.
    """
    queries: dict[str, str | None] = {}
    for qid, obj, lineno in _objects(path, "query", queries):
        queries[qid] = _text_field(obj, "text", path, lineno)
    return queries


def beir_label(text: str) -> int | float | None:
    """The label a BEIR qrels score field holds, or None when it is not one: see the module's rule
    (a plain ASCII finite number, an int when its value is whole; surrounding blanks are ignored)."""
    text = text.strip(" \t\r\n\x0b\x0c")
    if not text.isascii() or "_" in text:
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(value) if value == round(value) else value


def read_beir_qrels_tsv(path: PathLike, *, decompress: bool = False) -> dict[str, dict[str, int | float]]:
    """``{query_id: {doc_id: label}}`` of a BEIR ``qrels/<split>.tsv`` (tab-separated CSV, as BEIR's loader
    reads it: its header row skipped), in file order; labels by :func:`beir_label`.

    :raises ParseError: naming the file and line: a first line that is a judgment, not a header; a line with
        fewer than 3 fields; a label that is not a finite number; a document judged twice for one query.
    :param decompress: read a gzip file too (``irmetrics evaluate``; BEIR's loader reads plain text only).
    :raises DatasetError: if the file has a header but no judgments.
    """
    qrels: dict[str, dict[str, int | float]] = {}
    lines: dict[tuple[str, str], int] = {}
    # Line by line (utf-8-sig, line-capped; no gzip by default, as BEIR's loader): a bad line before a byte
    # that is not UTF-8 is reported first, as every reader of the package does.
    reader = csv.reader(
        (line for _, line in text_lines(path, decompress=decompress)), delimiter="\t", quoting=csv.QUOTE_MINIMAL
    )
    try:
        header = next(reader)
    except StopIteration:
        raise ParseError("empty file (expected a header row 'query-id corpus-id score')", path=str(path)) from None
    if len(header) >= 3 and beir_label(header[2]) is not None:
        raise ParseError(
            "the first line is a judgment, not a header; BEIR's loader skips the first line, "
            "so add the header 'query-id<TAB>corpus-id<TAB>score'",
            path=str(path),
            line=1,
        )
    for row in reader:
        lineno = reader.line_num
        if not row or not "".join(row).strip():
            continue
        if len(row) < 3:
            raise ParseError(
                f"expected 3 tab-separated fields (query-id, corpus-id, score), found {len(row)}: {row!r}",
                path=str(path),
                line=lineno,
            )
        query_id, corpus_id, score = row[0], row[1], row[2]
        label = beir_label(score)
        if label is None:
            raise ParseError(f"score {score!r} is not a finite number", path=str(path), line=lineno)
        key = (query_id, corpus_id)
        if key in lines:
            raise ParseError(
                f"document {corpus_id!r} is judged twice for query {query_id!r} (first on line {lines[key]})",
                path=str(path),
                line=lineno,
            )
        lines[key] = lineno
        qrels.setdefault(query_id, {})[corpus_id] = label
    if not qrels:
        raise DatasetError(f"{Path(path)} has a header but no judgments")
    return qrels


def beir_file(path: str | os.PathLike[str], name: str) -> Path:
    """``path/NAME.jsonl`` when ``path`` is a BEIR folder, else ``path`` itself: what a command that takes
    ``--queries`` or ``--corpus`` as a file or a BEIR folder reads (``name``: ``queries``, ``corpus``)."""
    p = Path(path)
    return p / f"{name}.jsonl" if p.is_dir() else p


__all__ = [
    "ID_KEYS",
    "beir_file",
    "beir_label",
    "read_beir_corpus",
    "read_beir_qrels_tsv",
    "read_beir_queries",
    "read_jsonl",
]
