"""The output folder of a BEIR run, written safely: one run at a time, whole files only, nothing left behind.

- **One run per folder.** :func:`output_lock` takes an exclusive, non-blocking ``flock`` on
  ``<folder>/.irmetrics.lock`` for as long as a run writes there (the lock of :mod:`haystack_irmetrics.io.output`,
  which ``irmetrics judge`` takes too); a second run on the same folder
  stops at once with an :class:`~haystack_irmetrics.errors.OutputError` naming the folder, instead
  of the two interleaving files. The lock file stays (empty): deleting it would race with a run
  that opened it.
- **Whole files.** :func:`write_atomic` (and :func:`~haystack_irmetrics.io.trec.write_trec_run` for
  ``run.trec``) writes through a temporary file of a unique name in the same folder and renames it over the
  target (``os.replace``; :mod:`haystack_irmetrics.io.output`, the one way the package writes a file whole), so
  a reader, a kill or a second writer never sees half a file.
- **Named failures.** An ``OSError`` while writing (a full disk, a read-only folder) removes the
  temporary file and raises :class:`~haystack_irmetrics.errors.OutputError` naming the file and the
  system's reason.
- **No deleting through links.** :func:`remove_tree` deletes a folder without following a symbolic
  link to it, and :func:`check_not_linked` refuses a dataset folder reached through one.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputError
from ..io.output import LOCK_FILE, make_folder, write_text
from ..io.output import output_lock as io_output_lock


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all: a temporary file of the same folder, renamed to
    ``path`` (:func:`~haystack_irmetrics.io.output.write_text`; a link at ``path`` is replaced, never written
    through).

    :raises OutputError: on an ``OSError`` (disk full, no permission...), naming ``path``; the
        temporary file is removed first.
    """
    make_folder(path.parent)
    write_text(path, text, follow_link=False)


@contextmanager
def output_lock(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``<folder>/.irmetrics.lock`` for the block (:func:`haystack_irmetrics.io.output.output_lock`, the one
    lock of every command's output folder).

    :raises OutputError: at once when another run holds it, or when the folder or the lock file cannot be created.
    """
    with io_output_lock(folder, "irmetrics beir") as path:
        yield path


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
]
