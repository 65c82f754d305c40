"""TREC qrels/run files and BEIR qrels TSV: their readers, and the one writer of each format.

* TREC qrels: ``qid iter docid rel`` (rel int or float).
* TREC run: ``qid Q0 docid rank score tag``; the rank column is ignored, the score decides.
* BEIR qrels: ``query-id<TAB>corpus-id<TAB>score`` with a header row (``qrels/<split>.tsv``).

:func:`write_trec_run` writes runs and :func:`write_qrels` qrels in either layout (``layout="beir"`` or
``"trec"``), each file whole or not at all; what they write reads back as it was. A run is written in trec_eval's
order, :func:`~haystack_irmetrics.core.ranking.trec_order` (re-exported here with ``in_trec_order``).

Files may be gzip-compressed (detected from the magic bytes). Lines starting with ``#`` and
blank lines are skipped, as trec_eval does. Files are read in blocks of lines and split in C;
a block whose fields do not line up falls back to a line-by-line pass that names the bad line.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from ..core.evaluation import DEFAULT_K_VALUES, EvaluationResult, evaluate, evaluate_chunks
from ..core.inputs import ColumnarRun, Qrels, QrelsDict, Run, as_run
from ..core.ranking import in_trec_order, trec_order
from ..core.validation import finite_floats, is_finite_number, shown
from ..errors import InvalidArgumentError, InvalidIdError, InvalidScoreError, ParseError, shorten
from . import _fast
from .limits import line_too_long
from .output import replacing_file
from .text import checked_lines, first_line, not_utf8_error, open_text, overlong, reading

__all__ = [
    "BEIR_QRELS_HEADER",
    "QRELS_LAYOUTS",
    "check_trec_ids",
    "checked_lines",
    "evaluate_run_file",
    "float_texts",
    "in_trec_order",
    "not_utf8_error",
    "overlong",
    "read_beir_qrels",
    "read_qrels",
    "read_run",
    "read_trec_qrels",
    "read_trec_run",
    "trec_order",
    "write_qrels",
    "write_trec_run",
]

_BLOCK = 1 << 24  # characters of text per block

PathLike = str | os.PathLike


# What str.split() takes as whitespace besides C's isspace (trec_eval's separators): in an id, these
# are id characters, as they are to trec_eval and to the polars reader.
_ASCII_SPACE = re.compile("[ \t\n\r\x0b\x0c]+")
_OTHER_SPACE = "\x1c\x1d\x1e\x1f"
_NON_ASCII_SPACE = (
    "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _not_utf8(text: str, lines: list[str], first: int, path: PathLike) -> tuple[int, ParseError] | None:
    """The index of the first of ``lines`` (read with surrogateescape; ``text`` is them joined) holding
    a byte that is not UTF-8, and the error naming it; None if every line is UTF-8."""
    try:  # UTF-8 text decodes to no surrogate, and only a surrogate fails to encode: one C-level pass
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as e:
        at = e.start
    j = text.count("\n", 0, at)  # lines end in \n (the text reader translates \r and \r\n)
    try:
        lines[j].encode("utf-8", "surrogateescape").decode("utf-8")
        reason = "invalid byte"
    except UnicodeDecodeError as e:
        reason = e.reason
    return j, not_utf8_error(reason, path, first + j)


def _fields(text: str) -> list[str]:
    """The fields of ``text`` separated by runs of ASCII whitespace (C's isspace), as trec_eval splits."""
    others = _OTHER_SPACE if text.isascii() else _OTHER_SPACE + _NON_ASCII_SPACE
    if not any(c in text for c in others):  # the usual case: str.split() splits the same way, in C
        return text.split()
    return [f for f in _ASCII_SPACE.split(text) if f]


def _blocks(
    path: PathLike, n_fields: int, skip_header: bool = False, extra_ok: bool = False
) -> Iterator[tuple[list[str], list[int] | int, ParseError | None]]:
    """Yield (tokens, line info, error) per block: tokens hold n_fields per data line.

    Line info is the first line number of the block when every line of the block is a data line,
    else the list of line numbers of the block's data lines. ``error``: the block's first line with
    the wrong number of fields, its tokens being the data lines before it; the caller checks those
    first, so the first bad line of the file is the one reported.
    """
    lineno = 0
    # Bytes that are not UTF-8 are decoded to escapes and reported at their line, after the lines
    # before them were checked (a strict decoder fails a whole block at once).
    with reading(path, lambda: lineno), open_text(path, errors="surrogateescape") as f:
        if skip_header:
            f.readline()
            lineno = 1
        long_line = None
        while long_line is None:
            lines = f.readlines(_BLOCK)
            if overlong(f):  # the file's bytes end inside a line over the limit: its last line read
                lines += f.readlines()  # what the text reader still holds (at most a buffer or two)
                long_line = lineno + len(lines)
                del lines[-1:]
            if not lines:
                break
            first = lineno + 1
            lineno += len(lines)
            text = "".join(lines)
            bad = None if text.isascii() else _not_utf8(text, lines, first, path)
            if bad is not None:
                j, error = bad
                tokens, numbers, earlier = _slow_block(lines[:j], first, n_fields, path, extra_ok)
                yield tokens, numbers, earlier or error
                return
            tokens = _block_tokens(lines, n_fields, text)
            if tokens is not None:
                yield tokens, first, None
                continue
            yield _slow_block(lines, first, n_fields, path, extra_ok)
    if long_line is not None:  # after the lines before it were checked
        raise line_too_long(path, max(long_line, 1), f.buffer.raw.limit)


_LINE_END = "\x00"  # a token of its own at each line end while a block is split (no field is one)


def _block_tokens(lines: list[str], n_fields: int, text: str) -> list[str] | None:
    """The fields of ``lines`` split in one C-level pass, if every line has exactly ``n_fields`` and
    none is blank or a comment; else None (the slow path reads them line by line).

    Each line end becomes a marker token, so a line short of a field and a later one with a field
    too many cannot pass for two good lines.
    """
    if _LINE_END in text:  # text: the lines joined
        return None
    if not text.endswith("\n"):
        text += "\n"
    tokens = _fields(text.replace("\n", f" {_LINE_END} "))
    stride = n_fields + 1
    if len(tokens) != stride * len(lines) or tokens[n_fields::stride].count(_LINE_END) != len(lines):
        return None
    if "#" in text and any(t.startswith("#") for t in tokens[::stride]):
        return None  # a comment line, maybe indented
    del tokens[n_fields::stride]
    return tokens


def _slow_block(
    lines: list[str], first: int, n_fields: int, path: PathLike, extra_ok: bool
) -> tuple[list[str], list[int], ParseError | None]:
    tokens: list[str] = []
    numbers: list[int] = []
    for i, line in enumerate(lines, first):
        fields = _fields(line)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != n_fields and not (extra_ok and len(fields) > n_fields):
            error = ParseError(
                f"expected {n_fields} whitespace-separated fields, found {len(fields)}: {shorten(repr(line.rstrip()))}",
                path=str(path),
                line=i,
            )
            return tokens, numbers, error
        tokens.extend(fields[:n_fields])
        numbers.append(i)
    return tokens, numbers, None


def _plain_numbers(text: str) -> bool:
    return text.isascii() and "_" not in text


def _columns(
    path: PathLike,
    n_fields: int,
    cols: tuple[int, int, int],
    what: str,
    skip_header: bool = False,
    extra_ok: bool = False,
) -> tuple[list[str], list[str], np.ndarray, np.ndarray | None]:
    qids: list[str] = []
    docs: list[str] = []
    values: list[np.ndarray] = []
    lines: list[np.ndarray] = []
    contiguous = True
    qc, dc, vc = cols
    for tokens, info, error in _blocks(path, n_fields, skip_header, extra_ok):
        n = len(tokens) // n_fields
        raw = tokens[vc::n_fields]
        try:
            vals = np.array(raw, dtype=np.float64)
        except ValueError:
            vals = None
        # Python's float() (which numpy calls) also takes "1_000" and non-ASCII digits; a C reader does not.
        if vals is not None and not _plain_numbers("".join(raw)):
            vals = None
        numbers = np.arange(info, info + n) if isinstance(info, int) else np.asarray(info)
        if isinstance(info, list):
            contiguous = False
        if vals is None or not np.isfinite(vals).all():
            for j, v in enumerate(raw):
                try:
                    ok = _plain_numbers(v) and np.isfinite(float(v))
                except ValueError:
                    ok = False
                if not ok:
                    raise ParseError(
                        f"{what} {shorten(repr(v))} is not a finite number", path=str(path), line=int(numbers[j])
                    )
        if error is not None:  # after the lines before it were checked
            raise error
        qids.extend(tokens[qc::n_fields])
        docs.extend(tokens[dc::n_fields])
        values.append(vals)
        lines.append(numbers)
    if not qids:
        raise ParseError(f"no {what} lines found (empty file?)", path=str(path))
    line_numbers = None if contiguous and not skip_header else np.concatenate(lines)
    return qids, docs, np.concatenate(values), line_numbers


def read_trec_run(path: PathLike, *, fast: bool = True) -> Run | ColumnarRun:
    """Read a TREC run ``qid Q0 docid rank score tag``; a repeated doc in one query raises.

    Fields after the sixth are ignored, as trec_eval does (its test file ``results.trunc`` has them).
    With polars installed (extra ``columnar``) a well-formed file is parsed natively into a
    :class:`~haystack_irmetrics.core.inputs.ColumnarRun`; otherwise, or when the file needs it
    (comments, irregular spacing, errors to report by line), lines are read in Python.
    """
    if fast and _fast.available():
        try:
            p = Path(path)
            if p.is_file():
                columnar = _fast.read_trec_run_fast(p)
                if columnar is not None:
                    return columnar
        except OSError:
            pass
    qids, docs, scores, lines = _columns(path, 6, (0, 2, 4), "score", extra_ok=True)
    return Run.from_columns(qids, docs, scores, source=str(path), line_numbers=lines)


def evaluate_run_file(
    qrels: QrelsDict | Qrels, path: PathLike, k_values: Sequence[int] | None = DEFAULT_K_VALUES, **options: Any
) -> EvaluationResult:
    """:func:`~haystack_irmetrics.core.evaluation.evaluate` of a TREC run file, streamed when possible.

    With polars installed a plain, well-formed file is read in pieces of whole queries and scored
    with :func:`~haystack_irmetrics.core.evaluation.evaluate_chunks`: memory stays bounded whatever
    the file's size, and the result is the same. A compressed or irregular file, or one with a
    query in two separate blocks, is read whole with :func:`read_trec_run` instead. ``options``:
    the keyword arguments of ``evaluate``.
    """
    p = Path(path)
    if _fast.available() and p.is_file():
        try:
            return evaluate_chunks(qrels, _fast.iter_trec_run_chunks(p), k_values, **options)
        except (_fast.NotStreamable, OSError):
            pass
    return evaluate(qrels, read_trec_run(path), k_values, **options)


def read_trec_qrels(path: PathLike) -> Qrels:
    """Read TREC qrels ``qid iter docid rel``; labels may be int or float."""
    qids, docs, labels, lines = _columns(path, 4, (0, 2, 3), "label")
    return Qrels.from_columns(qids, docs, _int_if_integral(labels), source=str(path), line_numbers=lines)


def read_beir_qrels(path: PathLike) -> Qrels:
    """Read BEIR's ``qrels/<split>.tsv`` (header row, then ``query-id corpus-id score``, tab-separated).

    The one BEIR qrels reader, :func:`~haystack_irmetrics.io.beir_data.read_beir_qrels_tsv` (fields split on
    tabs only, as ``GenericDataLoader`` reads them, so an id may hold a space; a label is a finite number, a
    whole one read as an int, ``1.0`` as 1), here also for a gzip file.
    """
    from .beir_data import read_beir_qrels_tsv

    return Qrels.from_dict(read_beir_qrels_tsv(path, decompress=True))


def read_qrels(path: PathLike) -> Qrels:
    """Read qrels in either format: BEIR TSV when the first line is its header (its first field ``query-id``),
    else TREC. A TREC judgment of a query named ``query-id`` (four fields, the last a number) is TREC's."""
    fields = _fields(first_line(path))
    if fields[:1] == ["query-id"] and not (len(fields) == 4 and _is_number(fields[3])):
        return read_beir_qrels(path)
    return read_trec_qrels(path)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_run(path: PathLike) -> Run | ColumnarRun:
    """Read a TREC run file (alias of :func:`read_trec_run`)."""
    return read_trec_run(path)


def _int_if_integral(labels: np.ndarray) -> np.ndarray:
    if labels.size and (labels == np.round(labels)).all() and np.abs(labels).max() < 2**53:
        return labels.astype(np.int64)
    return labels


def check_trec_ids(results: Mapping[str, Mapping[str, Any]], tag: str = "haystack_irmetrics") -> None:
    """Raise :class:`InvalidIdError` unless every id (and ``tag``) fits a TREC file's field and reads back as
    written: text with no whitespace (which separates fields), writable as UTF-8, and a query id (a line's
    first field) that does not start with ``#`` (the readers skip such a line as a comment) or a byte order mark
    (dropped from a file's first line)."""
    ids = chain([tag], results, chain.from_iterable(results.values()))
    try:
        text = " ".join(ids)
        text.encode("utf-8")
        clean = len(_fields(text)) == 1 + len(results) + sum(map(len, results.values()))  # none empty or split
        clean = clean and not any(q[:1] in _LINE_OPENERS for q in results)
    except (TypeError, UnicodeEncodeError):  # a non-str id, or one UTF-8 cannot hold
        clean = False
    if clean:
        return
    for q, docs in results.items():
        if isinstance(q, str) and q[:1] in _LINE_OPENERS:
            raise InvalidIdError(
                f"query id {shown(q)} cannot be written to a TREC file: a line opening with {q[:1]!r} "
                "does not read back (a comment line, or a byte order mark)"
            )
        for what, value in [
            (f"query id {shown(q)}", q),
            *((f"document id {shown(d)} of query {q!r}", d) for d in docs),
        ]:
            if not _trec_field(value):
                raise InvalidIdError(
                    f"{what} cannot be written to a TREC file: ids there are text (str) with no whitespace, in UTF-8"
                )
    raise InvalidIdError(f"tag {shown(tag)} cannot be written to a TREC file: no whitespace, UTF-8 text")


#: What a query id may not start with in a TREC file: ``#`` opens a comment line, which every reader
#: skips; a byte order mark opening the file is dropped by the readers (``utf-8-sig``).
_LINE_OPENERS = ("#", "\ufeff")


def _trec_field(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return _fields(value) == [value]


def write_trec_run(
    results: Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[str]] | Run | ColumnarRun,
    path: PathLike,
    tag: str = "haystack_irmetrics",
    *,
    follow_link: bool = True,
) -> Path:
    """Write a run as a TREC run file, ``qid Q0 docid rank score tag`` (one space between fields), whole or not
    at all (:func:`~haystack_irmetrics.io.output.replacing_file`: its folders are created). Each query's
    documents are written in trec_eval's order (:func:`~haystack_irmetrics.core.ranking.trec_order`), the rank
    column their position, a score as ``repr(float(score))``. The one writer of TREC runs. Returns ``path``.

    :param results: ``{qid: {docid: score}}``, ranked lists ``{qid: [docid, ...]}`` (written with
        scores ``n - position``), or a :class:`~haystack_irmetrics.core.inputs.Run` /
        :class:`~haystack_irmetrics.core.inputs.ColumnarRun` (what :func:`read_run` returns).
    :param follow_link: as :func:`~haystack_irmetrics.io.output.replacing_file`: ``False`` replaces a symbolic
        link at ``path`` instead of writing where it points.
    :raises InvalidIdError: before anything is written, if an id cannot be a TREC field (:func:`check_trec_ids`).
    :raises InvalidScoreError: before anything is written, if a score is not a finite number.
    :raises OutputError: the file cannot be written (a full disk, a file where a folder should be...).
    """
    data = as_run(results).data
    check_trec_ids(data, tag)
    for q, docs in data.items():
        if not finite_floats(list(docs.values())) and not all(map(is_finite_number, docs.values())):
            d, score = next((d, s) for d, s in docs.items() if not is_finite_number(s))
            raise InvalidScoreError(
                f"score {shown(score)} of document {d!r} in query {q!r} cannot be written to a TREC file: "
                "scores there are finite numbers"
            )
    with replacing_file(path, follow_link=follow_link) as f:
        for q, docs in data.items():
            f.write(_trec_lines(q, docs, tag).encode("utf-8"))
    return Path(path)


def _trec_lines(q: str, docs: Mapping[str, Any], tag: str) -> str:
    """One query's lines of a TREC run, in trec_eval's order (:func:`.trec_order`; the rank column its
    position), as one string; a score is written as ``repr(float(score))``."""
    ids = trec_order(docs)
    scores = list(docs.values() if ids == list(docs) else map(docs.__getitem__, ids))
    n = len(ids)
    # The lines' pieces side by side in one list, joined once (no string made per line but the score's repr).
    pieces: list[str] = [""] * (5 * n)
    pieces[0::5] = [f"{q} Q0 "] * n
    pieces[1::5] = ids
    pieces[2::5] = _ranks(n)
    pieces[3::5] = float_texts(scores if set(map(type, scores)) <= {float} else list(map(float, scores)))
    pieces[4::5] = [f" {tag}\n"] * n
    return "".join(pieces)


#: Floats whose shortest round-trip digits orjson writes as ``repr`` does (checked over 13.7 million values and
#: in ``tests/test_io_writers.py``): zero and magnitudes in [1e-4, 1e16). Outside, the two differ in notation only
#: (``1e-05`` against ``0.00001``, ``1e+16`` against ``1e16``), and ``repr`` writes them.
_ORJSON_RANGE = (1e-4, 1e16)
#: Checked against ``repr`` before orjson is trusted (another orjson version could format otherwise).
_PROBES = [0.0, -0.0, 1e-4, 0.30000000000000004, 1 / 3, 2 / 3, 1.0, 100.0, 12.345678329467773, -7.5e-3,
           123456789012345.67, 9999999999999998.0, 0.1, 5e15, 33.33333206176758]  # fmt: skip


@functools.lru_cache(maxsize=1)
def _orjson() -> Any:
    try:
        import orjson
    except ImportError:  # a dependency of ours; absent, every number goes through repr
        return None
    if orjson.dumps(_PROBES).decode("ascii")[1:-1].split(",") != list(map(repr, _PROBES)):
        return None
    return orjson


def float_texts(values: list[float]) -> list[str]:
    """``repr(v)`` of each float of ``values``, the shortest text that reads back to it (how a TREC run's
    scores are written). A thousand at a time, orjson writes the same digits about five times faster than
    ``repr``; a value out of its range (:data:`_ORJSON_RANGE`) or not finite goes through ``repr``."""
    orjson = _orjson()
    if orjson is None or len(values) < 32:
        return list(map(repr, values))
    texts = orjson.dumps(values).decode("ascii")[1:-1].split(",")  # NaN and infinities come out as null
    size = np.abs(np.asarray(values, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        outside = ~(((size >= _ORJSON_RANGE[0]) & (size < _ORJSON_RANGE[1])) | (size == 0))
    for i in np.flatnonzero(outside).tolist():
        texts[i] = repr(values[i])
    return texts


@functools.lru_cache(maxsize=4)
def _ranks(n: int) -> tuple[str, ...]:
    """``" 1 "``, ``" 2 "``, ... ``" n "``: the rank column with its separators, made once per length."""
    return tuple(f" {rank} " for rank in range(1, n + 1))


#: The layouts :func:`write_qrels` writes: BEIR's ``qrels/<split>.tsv`` and TREC's qrels.
QRELS_LAYOUTS = ("beir", "trec")
#: The header line of BEIR's qrels layout.
BEIR_QRELS_HEADER = "query-id\tcorpus-id\tscore"


def write_qrels(qrels: QrelsDict | Qrels, path: PathLike, *, layout: str, follow_link: bool = True) -> Path:
    """Write judgments ``{qid: {docid: label}}`` as a qrels file whole or not at all
    (:func:`~haystack_irmetrics.io.output.replacing_file`: its folders are created); the one writer of qrels.
    Lines come in the order of ``qrels`` (each query's documents in theirs); an int label is written as the
    integer, a float as ``repr(float(label))``, the shortest text that reads back to the same value.
    :func:`read_qrels` reads either layout back to the same judgments (an empty ``qrels`` writes BEIR's header
    alone, or an empty file, which it refuses). Returns ``path``.

    :param layout: ``"beir"``: BEIR's ``qrels/<split>.tsv``, the header ``query-id<TAB>corpus-id<TAB>score``
        then ``qid<TAB>docid<TAB>label`` (an id may hold spaces; one holding a tab or opening with ``"`` is
        quoted as the ``csv`` module quotes, which is how BEIR's loader reads the file);
        ``"trec"``: TREC's ``qid 0 docid label``, one space between fields, as NIST's qrels and trec_eval's
        own test files are written (every TREC reader splits on any whitespace).
    :param follow_link: as :func:`~haystack_irmetrics.io.output.replacing_file`.
    :raises InvalidLabelError: a label that is not a finite number (:meth:`Qrels.from_dict`).
    :raises InvalidIdError: before anything is written, an id the layout cannot hold so that it reads back:
        not text or not UTF-8; for ``"beir"`` a line break in it; for ``"trec"`` whitespace in it, or a query id
        opening with ``#`` (:func:`check_trec_ids`).
    :raises InvalidArgumentError: an unknown ``layout``.
    :raises OutputError: the file cannot be written.

        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.tsv"
        >>> _ = write_qrels({"q1": {"d 1": 2, "d2": 0.5}}, path, layout="beir")
        >>> path.read_text().splitlines()
        ['query-id\\tcorpus-id\\tscore', 'q1\\td 1\\t2', 'q1\\td2\\t0.5']
        >>> read_qrels(path).data
        {'q1': {'d 1': 2, 'd2': 0.5}}
    """
    if layout not in QRELS_LAYOUTS:
        raise InvalidArgumentError(f"unknown qrels layout {layout!r}: one of {', '.join(map(repr, QRELS_LAYOUTS))}")
    # ids str, labels finite numbers: checked once, for both layouts. No judgment at all (a model that labelled
    # nothing) writes a file without one, which the readers refuse as they refuse any empty qrels.
    data = {} if isinstance(qrels, Mapping) and not qrels else Qrels.from_dict(qrels).data
    if layout == "trec":
        check_trec_ids(data, "0")
        line = "{} 0 {} {}\n".format
    else:
        _check_beir_ids(data)
        line = "{}\t{}\t{}\n".format
    quote = _beir_field if layout == "beir" else str
    with replacing_file(path, follow_link=follow_link) as f:
        if layout == "beir":
            f.write(f"{BEIR_QRELS_HEADER}\n".encode())
        for q, docs in data.items():
            qid = quote(q)
            text = "".join(line(qid, quote(d), _label_text(label)) for d, label in docs.items())
            f.write(text.encode("utf-8"))
    return Path(path)


def _label_text(label: Any) -> str:
    """A label as written: an integer as one, any other number as its shortest exact float text."""
    if isinstance(label, int | np.integer):
        return str(int(label))
    return repr(float(label))


def _beir_field(value: str) -> str:
    """``value`` as the ``csv`` module writes a field of a tab-separated file: quoted (its quotes doubled) when it
    holds a tab or opens with a quote, which BEIR's loader (``csv.reader``) would otherwise read differently."""
    if "\t" in value or value[:1] == '"':
        return '"' + value.replace('"', '""') + '"'
    return value


def _check_beir_ids(data: Mapping[str, Mapping[str, Any]]) -> None:
    """:raises InvalidIdError: an id that cannot be a field of BEIR's layout and read back: one not UTF-8, or one
    holding a line break (the readers read line by line)."""
    text = "".join(chain(data, chain.from_iterable(data.values())))
    try:
        text.encode("utf-8")
        if "\n" not in text and "\r" not in text:
            return
    except UnicodeEncodeError:
        pass
    for q, docs in data.items():
        for what, value in [
            (f"query id {shown(q)}", q),
            *((f"document id {shown(d)} of query {q!r}", d) for d in docs),
        ]:
            try:
                value.encode("utf-8")
                ok = "\n" not in value and "\r" not in value
            except UnicodeEncodeError:
                ok = False
            if not ok:
                raise InvalidIdError(
                    f"{what} cannot be written to a BEIR qrels file: ids there are UTF-8 text without a line break"
                )
