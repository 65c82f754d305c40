"""The bound on one line of an input file, shared by every reader.

A file without line ends (``/dev/zero``, a truncated download, a gzip bomb of NULs) would otherwise
be read whole as one line. Every reader of ours stops at the first line longer than
:func:`max_line_bytes` and raises a :class:`~haystack_irmetrics.errors.ParseError` naming the file
and line: memory stays bounded by the limit, not by the file.

The limit is 1 MiB by default; set the environment variable ``IRMETRICS_MAX_LINE_BYTES`` (a whole
number of bytes) to change it. It counts the bytes of a line as stored (after gzip decompression),
without its line end; ``\\n``, ``\\r\\n`` and a lone ``\\r`` all end a line, as the readers split them.
"""

from __future__ import annotations

import codecs
import io
import os

from ..checks import whole
from ..errors import InvalidPolicyError, ParseError

DEFAULT_MAX_LINE_BYTES = 1 << 20
ENV_VAR = "IRMETRICS_MAX_LINE_BYTES"


def max_line_bytes() -> int:
    """The longest line a reader takes, in bytes: ``$IRMETRICS_MAX_LINE_BYTES`` or 1 MiB.

    :raises InvalidPolicyError: if the variable is set to anything but a whole number >= 1.
    """
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_MAX_LINE_BYTES
    try:
        value: int | str = int(raw)
    except ValueError:
        value = raw  # refused below as written
    return whole(value, ENV_VAR, least=1, error=InvalidPolicyError)  # bytes


def line_too_long(path: str | os.PathLike[str], line: int | None, limit: int) -> ParseError:
    """The error every reader raises for a line over the limit."""
    return ParseError(
        f"a line longer than {limit:,} bytes (the limit on one line; set {ENV_VAR} to change it)",
        path=os.fspath(path),
        line=line,
    )


def _first_end(data: bytes | bytearray, start: int, end: int) -> int:
    """Index of the first ``\n`` or ``\r`` in ``data[start:end]`` (memchr scans), or -1."""
    n, r = data.find(b"\n", start, end), data.find(b"\r", start, end)
    return r if n == -1 else n if r == -1 else min(n, r)


def _last_end(data: bytes | bytearray, start: int, end: int) -> int:
    return max(data.rfind(b"\n", start, end), data.rfind(b"\r", start, end))


class LineLimit:
    """Tracks the open line's length across pieces of a byte stream.

    Exact as long as no piece is longer than the limit: a line that starts and ends inside one piece
    is then shorter than the limit, so only the line open across pieces needs counting.
    """

    __slots__ = ("limit", "open")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0  # bytes of the line that is not ended yet

    def cut(self, data: bytes | bytearray, start: int = 0, end: int | None = None) -> int | None:
        """Feed the next piece, ``data[start:end]`` (at most ``limit`` bytes). None while every line
        fits; else the index in ``data`` where the piece must end so that it ends inside the line that
        grew over the limit."""
        end = len(data) if end is None else end
        first = _first_end(data, start, end)
        if first == -1:
            self.open += end - start
            return end if self.open > self.limit else None
        if self.open + (first - start) > self.limit:
            return first
        self.open = end - 1 - _last_end(data, start, end)
        return None


class CappedRaw(io.RawIOBase):
    """A raw byte stream that ends early (reads as EOF) once a line grows over the limit.

    Readers built on it (through :func:`capped`) read the lines before the long one as usual, then
    see :attr:`overlong` set: the last line they got is the long one, cut short, and they report it
    at its line number.

    With ``quote`` (a CSV quote character), it also ends at the first line end that falls inside a
    quoted field (an odd number of quote characters before it; a doubled quote counts twice), and
    :attr:`quoted_line_end` is that line end's offset in the stream: readers that do not take fields
    spanning lines refuse the file there, where line numbers would otherwise go wrong.
    """

    def __init__(self, inner: io.BufferedIOBase, limit: int, quote: bytes | None = None, utf8: bool = False) -> None:
        super().__init__()
        self._inner = inner
        self._limit = LineLimit(limit)
        self._quote = None if quote is None else quote[0]
        self._odd = False  # an odd number of quote characters so far
        self._utf8 = codecs.getincrementaldecoder("utf-8")() if utf8 else None
        self._pos = 0  # bytes handed out so far
        self.overlong = False
        self.quoted_line_end: int | None = None
        self.not_utf8: tuple[int, str] | None = None  # (offset, reason) of the first byte that is not UTF-8

    @property
    def limit(self) -> int:
        return self._limit.limit

    @property
    def position(self) -> int:
        """Bytes handed out so far (after an overlong stop, the last one is inside the long line)."""
        return self._pos

    @property
    def stopped(self) -> bool:
        """Whether the stream ended early (a line over the limit, a line end inside quotes, a byte
        that is not UTF-8)."""
        return self.overlong or self.quoted_line_end is not None or self.not_utf8 is not None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.stopped:
            return 0
        piece = self._inner.read(min(len(buffer), self._limit.limit))
        if piece and self._utf8 is not None:
            piece = self._check_utf8(piece)
        if piece and self._quote is not None:
            piece = self._check_quotes(piece)
        if piece and (end := self._limit.cut(piece)) is not None:
            self.overlong = True  # the stream ends inside the long line: it is the last line read
            piece = piece[:end]
        buffer[: len(piece)] = piece
        self._pos += len(piece)
        return len(piece)

    def _check_utf8(self, piece: bytes) -> bytes:
        decoder = self._utf8
        if decoder is None:
            return piece
        pending = len(decoder.getstate()[0])  # a sequence cut by the previous piece
        try:
            decoder.decode(piece)
        except UnicodeDecodeError as e:
            at = max(e.start - pending, 0)
            self.not_utf8 = (self._pos + at, e.reason)
            return piece[: piece.rfind(b"\n", 0, at) + 1]  # up to the line before it
        return piece

    def _check_quotes(self, piece: bytes) -> bytes:
        if not self._odd and piece.find(self._quote) == -1:  # memchr: the usual piece has no quote
            return piece
        import numpy as np

        a = np.frombuffer(piece, np.uint8)
        quotes = np.flatnonzero(a == self._quote)
        ends = np.flatnonzero((a == 0x0A) | (a == 0x0D))
        inside = (np.searchsorted(quotes, ends) + self._odd) & 1
        if inside.any():
            at = int(ends[np.argmax(inside)])
            self.quoted_line_end = self._pos + at
            return piece[:at]
        self._odd = bool((quotes.size + self._odd) & 1)
        return piece

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
        super().close()


def capped(
    inner: io.BufferedIOBase, limit: int | None = None, quote: bytes | None = None, utf8: bool = False
) -> io.BufferedReader:
    """``inner`` read through :class:`CappedRaw` (its ``.raw``), buffered again for fast line reads."""
    raw = CappedRaw(inner, max_line_bytes() if limit is None else limit, quote, utf8)
    return io.BufferedReader(raw, buffer_size=min(raw.limit, 1 << 20))


def line_at(stream: io.BufferedIOBase, offset: int) -> int:
    """The 1-based line holding byte ``offset`` of ``stream`` (read from its start; ``\n``,
    ``\r\n`` and a lone ``\r`` each end one line). For error messages only: it reads up to ``offset``."""
    line, pos, after_cr = 1, 0, False
    while pos < offset:
        piece = stream.read(min(1 << 20, offset - pos))
        if not piece:
            break
        line += piece.count(b"\n") + piece.count(b"\r") - piece.count(b"\r\n")
        if after_cr and piece[:1] == b"\n":
            line -= 1  # a \r\n split between two pieces
        after_cr = piece[-1:] == b"\r"
        pos += len(piece)
    return line
