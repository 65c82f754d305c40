"""Opening and reading text files, shared by every reader of the package (TREC and BEIR files, feedback
logs, the report's queries and documents).

Every stream is read under the line limit of :mod:`.limits`, and what can go wrong while reading
(a file that cannot be opened, a line over the limit, a byte that is not UTF-8, corrupt gzip data)
raises a :class:`~haystack_irmetrics.errors.ParseError` naming the file and, where known, the line.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import ParseError
from .limits import capped, line_too_long

PathLike = str | os.PathLike


def open_binary(path: PathLike, decompress: bool = True, utf8: bool = False) -> io.BufferedReader:
    """The file's bytes (gunzipped as they are read, when ``decompress`` and the file is gzip), ending early
    at a line over the limit (see :mod:`.limits`: ``f.raw.overlong`` then says so, and the last line read is
    that line, cut) or, with ``utf8``, before the line holding the first byte that is not UTF-8.

    :raises ParseError: naming the file when it does not exist, is a folder or cannot be read.
    """
    p = Path(path)
    try:
        f = p.open("rb")
        try:
            magic = f.peek(2)[:2]  # the file is opened once: a plain file is read from this handle
        except BaseException:
            f.close()
            raise
    except FileNotFoundError:
        raise ParseError("file not found", path=str(path)) from None
    except IsADirectoryError:
        raise ParseError("is a directory, not a file", path=str(path)) from None
    except OSError as e:  # permission denied, say
        raise ParseError(f"cannot be read ({e.strerror or e})", path=str(path)) from None
    if decompress and magic == b"\x1f\x8b":
        f.close()
        return capped(gzip.open(p, "rb"), utf8=utf8)
    return capped(f, utf8=utf8)


def open_text(path: PathLike, errors: str = "strict", decompress: bool = True) -> io.TextIOWrapper:
    """:func:`open_binary` decoded as UTF-8 (``\\n``, ``\\r\\n`` and a lone ``\\r`` read as ``\\n``)."""
    # utf-8-sig: a byte order mark opening the file is no part of the first query id (polars drops it too).
    return io.TextIOWrapper(open_binary(path, decompress), encoding="utf-8-sig", errors=errors)


def not_utf8_error(reason: str, path: PathLike, line: int | None) -> ParseError:
    """The error for a byte that is not UTF-8 at ``line`` of ``path`` (every reader's wording)."""
    return ParseError(f"not UTF-8 text ({reason})", path=str(path), line=line)


@contextmanager
def reading(path: PathLike, lineno: Callable[[], int] = lambda: 0) -> Iterator[None]:
    """Turn what reading a file can raise into a :class:`ParseError` naming the file (and line)."""
    try:
        yield
    except UnicodeDecodeError as e:
        raise not_utf8_error(e.reason, path, undecodable_line(path)) from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise ParseError(
            f"compressed data is truncated or corrupt ({e})", path=str(path), line=lineno() or None
        ) from None


def undecodable_line(path: PathLike) -> int | None:
    """Number of the first line that is not UTF-8 (found again in bytes: the text reader reads ahead)."""
    try:
        with open_binary(path) as f:
            for i, line in enumerate(f, 1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError:
                    return i
    except (OSError, EOFError, zlib.error):
        pass
    return None


def overlong(f: io.TextIOWrapper | io.BufferedReader) -> bool:
    """Whether a stream of :func:`open_text` / :func:`open_binary` stopped at a line over the limit."""
    return (f.buffer if isinstance(f, io.TextIOWrapper) else f).raw.overlong


def checked_lines(f: io.TextIOWrapper, path: PathLike) -> Iterator[str]:
    """The lines of a text stream of :func:`open_text`; the one over the line limit raises, naming
    its line, in place of being yielded cut."""
    for lineno, line in enumerate(f, 1):
        if not line.endswith("\n") and overlong(f):  # the bytes ended inside this line
            raise line_too_long(path, lineno, f.buffer.raw.limit)
        yield line


def first_line(path: PathLike) -> str:
    """The first line, decoded alone (a text reader would decode, and fail on, the lines after it too).

    A lone ``\\r`` ends it too, as it ends a line for the text readers and pyarrow's CSV reader.
    """
    with reading(path), open_binary(path) as f:
        line = f.readline()
        if overlong(f) and b"\n" not in line and b"\r" not in line:
            raise line_too_long(path, 1, f.raw.limit)
    if (cr := line.find(b"\r")) != -1:
        line = line[: cr + 1]
    try:
        return line.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise not_utf8_error(e.reason, path, 1) from None


def text_lines(path: PathLike, *, decompress: bool = False) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 text file, not decompressed unless ``decompress`` (a byte order
    mark opening it dropped;
    ``\\n``, ``\\r\\n`` and ``\\r`` end a line, read as ``\\n``), under the line limit of :mod:`.limits`.

    :raises ParseError: naming the file (and line) when it cannot be opened, holds a line over the limit
        or a byte that is not UTF-8; the lines before that one are yielded first.
    """
    where = os.fspath(path)
    # The capped stream ends early (as at the end of the file) at a line over the limit or a byte that
    # is not UTF-8, before the text reader sees it: memory stays bounded and the line is known.
    with (
        reading(path),
        io.TextIOWrapper(open_binary(path, decompress=decompress, utf8=True), encoding="utf-8-sig") as f,
    ):
        stream = f.buffer.raw
        lineno = 0
        for lineno, line in enumerate(f, 1):
            if not line.endswith("\n") and stream.stopped:  # the stream ended inside this line
                _stopped(stream, where, lineno)
            yield lineno, line
        if stream.stopped:
            _stopped(stream, where, lineno + 1)


def _stopped(stream: Any, path: str, lineno: int) -> None:
    if stream.overlong:
        raise line_too_long(path, lineno, stream.limit)
    raise not_utf8_error(stream.not_utf8[1], path, lineno)


__all__ = [
    "checked_lines",
    "first_line",
    "not_utf8_error",
    "open_binary",
    "open_text",
    "overlong",
    "reading",
    "text_lines",
    "undecodable_line",
]
