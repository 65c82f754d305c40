"""Output files written whole or not at all, with any text: the one way the report, its exports and the
plots write a file.

- **Whole files.** :func:`write_file` writes a temporary file of a unique name in the target's folder
  and renames it over the target (``os.replace``) once it is complete and flushed to disk, so a full
  disk, a kill or a second writer never leaves half a page: the target is the old file or the new one.
- **Named failures.** An ``OSError`` (a full disk, a read-only folder, a folder in the way) removes the
  temporary file and raises :class:`~haystack_irmetrics.errors.OutputError` naming the file and the
  system's reason; the CLI prints it on one line and exits 2.
- **Any text.** A Python string can hold what UTF-8 cannot encode: a lone surrogate (``"\\ud800"``,
  from a ``{qid: text}`` dict or a JSON ``\\ud800`` escape). It is written as Python writes it in a
  ``repr``, the six characters ``\\ud800`` (:func:`printable`), in every file and format alike, so
  two ids that differ there still differ on the page.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ..errors import OutputError

PathLike = str | os.PathLike[str]


def printable(text: str) -> str:
    """``text`` with each lone surrogate (which UTF-8 cannot encode) written as its backslash escape
    (``"\\ud800"`` becomes the six characters ``\\ud800``); any other text is returned as it is.

        >>> printable("a\\ud800b") == "a\\\\ud800b", printable("naïve")
        (True, 'naïve')
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _target(path: PathLike) -> Path:
    """The file to replace: ``path``, or where it points when it is a symbolic link (the link stays)."""
    out = Path(path)
    return Path(os.path.realpath(out)) if out.is_symlink() else out


def _temporary(folder: Path, name: str) -> tuple[int, Path]:
    """A new file of a unique name in ``folder``, opened for writing. Mode 0666 less the umask, as
    ``open`` gives (``mkstemp``'s 0600 would leave a report unreadable to a web server)."""
    for _ in range(100):
        tmp = folder / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")  # pragma: no cover - 100 random names taken


@contextmanager
def _replacing(path: PathLike, follow_link: bool) -> Iterator[tuple[int, Path]]:
    """A new temporary file ``(fd, tmp)`` beside ``path`` that replaces it when the block ends without an
    error; on an error it is removed (an ``OSError`` becomes an :class:`OutputError` naming ``path``)."""
    out = _target(path) if follow_link else Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary(out.parent, out.name)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {_reason(e)}") from None
    try:
        yield fd, tmp
        os.replace(tmp, out)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: {_reason(e)}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def replacing_file(path: PathLike, *, follow_link: bool = True) -> Iterator[BinaryIO]:
    """The block writes a temporary file of ``path``'s folder, opened in binary mode; when it ends without an
    error the file is flushed to disk and renamed to ``path`` (its folders are created), else removed.
    The caller writes inside its own block (no callback: control stays with the caller). A ``path`` that is
    a symbolic link is written where it points, or with ``follow_link=False`` replaced by the file.

    :raises OutputError: on an ``OSError`` (disk full, no permission, ``path`` is a folder...), naming
        ``path``; the temporary file is removed first. Anything else the block raises is raised as it is,
        after the temporary file is removed.
    """
    with _replacing(path, follow_link) as (fd, _tmp), os.fdopen(fd, "wb") as f:
        yield f
        f.flush()
        os.fsync(f.fileno())  # a full disk can surface only here (delayed allocation, network mounts)


@contextmanager
def replacing_path(path: PathLike, *, follow_link: bool = True) -> Iterator[Path]:
    """:func:`replacing_file` for a writer that fills a file by its path: the block writes the temporary
    file whose path it gets, which is then flushed to disk and renamed to ``path``.

    :raises OutputError: as :func:`replacing_file`.
    """
    with _replacing(path, follow_link) as (fd, tmp):
        os.close(fd)
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_file(path: PathLike, write: Callable[[BinaryIO], None], *, follow_link: bool = True) -> Path:
    """Write ``path`` whole or not at all: ``write(f)`` fills ``f``, a temporary file of the same folder
    opened in binary mode, which is then flushed to disk and renamed to ``path`` (its folders are
    created). Returns ``path``. A ``path`` that is a symbolic link is written where it points, or with
    ``follow_link=False`` replaced by the file (nothing is written through the link).

    :raises OutputError: on an ``OSError`` (disk full, no permission, ``path`` is a folder...), naming
        ``path``; the temporary file is removed first. Anything else ``write`` raises is raised as it is,
        after the temporary file is removed.
    """
    with replacing_file(path, follow_link=follow_link) as f:
        write(f)
    return Path(path)


def write_path(path: PathLike, fill: Callable[[Path], None], *, follow_link: bool = True) -> Path:
    """:func:`write_file` for a writer that fills a file by its path: ``fill(tmp)`` writes the temporary
    file, which is flushed to disk and renamed to ``path``. Returns ``path``.

    :raises OutputError: as :func:`write_file`.
    """
    with replacing_path(path, follow_link=follow_link) as tmp:
        fill(tmp)
    return Path(path)


def write_text(path: PathLike, text: str, *, follow_link: bool = True) -> Path:
    """Write ``text`` as UTF-8 through :func:`write_file`; a lone surrogate is written as its backslash
    escape (:func:`printable`). Returns ``path``.

    :raises OutputError: as :func:`write_file`.
    """
    data = text.encode("utf-8", "backslashreplace")
    with replacing_file(path, follow_link=follow_link) as f:
        f.write(data)
    return Path(path)


__all__ = ["printable", "replacing_file", "replacing_path", "write_file", "write_path", "write_text"]
