"""The output folder of a BEIR run, written safely: one run at a time, whole files only, nothing left behind.

- **One run per folder.** :func:`output_lock` takes an exclusive, non-blocking ``flock`` on
  ``<folder>/.irmetrics.lock`` for as long as a run writes there; a second run on the same folder
  stops at once with an :class:`~haystack_irmetrics.errors.OutputError` naming the folder, instead
  of the two interleaving files. The lock file stays (empty): deleting it would race with a run
  that opened it.
- **Whole files.** :func:`writing` writes through a temporary file of a unique name in the same
  folder and renames it over the target (``os.replace``; :mod:`haystack_irmetrics.io.output`, the
  one way the package writes a file whole), so a reader, a kill or a second writer never sees half a file.
- **Named failures.** An ``OSError`` while writing (a full disk, a read-only folder) removes the
  temporary file and raises :class:`~haystack_irmetrics.errors.OutputError` naming the file and the
  system's reason.
- **No deleting through links.** :func:`remove_tree` deletes a folder without following a symbolic
  link to it, and :func:`check_not_linked` refuses a dataset folder reached through one.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputError
from ..io.output import replacing_path, write_text

#: The lock file a run holds in each folder it writes (``DIR`` and ``DIR/<name>``).
LOCK_FILE = ".irmetrics.lock"
#: flock errors of file systems that do not lock (then the run goes on unlocked, with a logged warning).
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS)


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def make_folder(folder: Path) -> None:
    """``mkdir -p``; an ``OSError`` becomes an :class:`OutputError` naming the folder."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create the output folder {folder}: {_reason(e)}") from None


@contextmanager
def writing(path: Path) -> Iterator[Path]:
    """Write ``path`` whole or not at all: the block fills the temporary file of the same folder it gets,
    which is then renamed to ``path`` (:func:`~haystack_irmetrics.io.output.replacing_path`; a link at
    ``path`` is replaced, never written through).

    :raises OutputError: on an ``OSError`` (disk full, no permission...), naming ``path``; the
        temporary file is removed first.
    """
    make_folder(path.parent)
    with replacing_path(path, follow_link=False) as tmp:
        yield tmp


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all, as :func:`writing` does."""
    make_folder(path.parent)
    write_text(path, text, follow_link=False)


@contextmanager
def output_lock(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``<folder>/.irmetrics.lock`` (created with the folder when absent) for the block.

    On a file system that cannot lock (some network mounts) the block runs unlocked, with a logged warning.

    :raises OutputError: at once when another process holds it (another run writes to ``folder``),
        or when the folder or the lock file cannot be created.
    """
    path = Path(folder)
    make_folder(path)
    lock = path / LOCK_FILE
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield path
        return
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as e:
        raise OutputError(f"cannot create the lock file {lock}: {_reason(e)}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputError(
                f"output folder {path} is in use by another irmetrics beir run (it holds {lock}); "
                "wait for that run to end, or write to another folder"
            ) from None
        except OSError as e:
            if e.errno not in _NO_LOCKS:
                raise OutputError(f"cannot lock {lock}: {_reason(e)}") from None
            # a file system without locks (some network mounts): run, but say it is unguarded
            logging.getLogger(__name__).warning(
                "%s cannot be locked (%s): runs writing there are not kept apart", lock, _reason(e)
            )
        yield path
    finally:
        os.close(fd)  # closing releases the lock


def check_not_linked(root: Path, name: str) -> Path:
    """``root/name``, refusing it when it, or a folder between ``root`` and it, is a symbolic link
    (deleting there would delete in the folder the link points to).

    :raises OutputError: naming the link.
    """
    path = root
    for part in Path(name).parts:
        path = path / part
        if path.is_symlink():
            raise OutputError(
                f"{path} is a symbolic link (to {os.readlink(path)}); irmetrics beir never deletes through a link: "
                "remove the link, or write to another folder"
            )
    return path


def remove_tree(folder: Path) -> None:
    """Delete ``folder`` and what it holds; a symbolic link is removed itself, never followed.

    :raises OutputError: when something cannot be deleted.
    """
    try:
        if folder.is_symlink() or folder.is_file():
            folder.unlink()
        elif folder.exists():
            shutil.rmtree(folder)  # removes links inside it as links
    except FileNotFoundError:
        pass
    except OSError as e:
        raise OutputError(f"cannot delete {folder}: {_reason(e)}") from None


def remove_file(path: Path) -> None:
    """Delete a file (a link: the link itself), if present.

    :raises OutputError: when it cannot be deleted.
    """
    try:
        path.unlink(missing_ok=True)
    except IsADirectoryError:
        remove_tree(path)
    except OSError as e:
        raise OutputError(f"cannot delete {path}: {_reason(e)}") from None


__all__ = [
    "LOCK_FILE",
    "check_not_linked",
    "make_folder",
    "output_lock",
    "remove_file",
    "remove_tree",
    "write_atomic",
    "writing",
]
