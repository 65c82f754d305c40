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
- **No output replaces an input.** :func:`check_outputs` refuses, before any work, an output file that is
  one of a command's inputs or would replace one (symbolic links, ``..`` and hard links resolved), an
  output folder a command clears that holds an input, and two outputs that are one file; every
  ``irmetrics`` command declares what it reads and writes (:class:`Paths`) and the command line checks it
  before the command runs.
- **One writer per folder.** :func:`output_lock` holds ``<folder>/.irmetrics.lock`` while a command writes
  there (``irmetrics beir``, ``irmetrics judge``, ``irmetrics assess``): a second one on the same folder stops
  at once.
- **One command per folder.** An output folder is the command's that made it: the lock file names that
  command, and another command refuses the folder while it holds anything (:func:`check_folder_owner`, run
  by :func:`check_outputs` and by :func:`output_lock`). A folder that names no command (written before this
  rule, or by a command that takes no lock) is the command's own when it holds the command's signature files,
  and refused when it holds a file the command would write without them; re-running a command into its own
  folder (a resume) is never refused.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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


#: The lock file a command holds in each folder it writes (``irmetrics beir``: ``DIR`` and ``DIR/<name>``;
#: ``irmetrics judge``: ``DIR``).
LOCK_FILE = ".irmetrics.lock"
#: flock errors of file systems that do not lock (then the command goes on unlocked, with a logged warning).
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS)


def make_folder(folder: PathLike) -> None:
    """``mkdir -p``; an ``OSError`` becomes an :class:`OutputError` naming the folder."""
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create the output folder {folder}: {_reason(e)}") from None


@dataclass(frozen=True)
class OutputFolder:
    """A folder a command writes as its own (``irmetrics judge -o DIR``), for :func:`check_folder_owner`.

    :ivar path: the folder.
    :ivar command: the command, as its lock names it (``"irmetrics judge"``).
    :ivar files: the files it writes there.
    :ivar signature: the files that, all present, show a folder naming no command is this command's (one it
        wrote before folders named their command).
    """

    path: PathLike
    command: str
    files: tuple[str, ...] = ()
    signature: tuple[str, ...] = ()


def _contents(folder: Path) -> list[str]:
    """What ``folder`` holds that a command wrote: its entries, less hidden ones (the lock, temporary files)."""
    try:
        return sorted(name for name in os.listdir(folder) if not name.startswith("."))
    except OSError:  # absent, or not a folder: nothing to keep (writing there says what is wrong)
        return []


def folder_owner(folder: PathLike) -> str | None:
    """The command ``folder``'s lock file names (the command that made the folder), or ``None``."""
    try:
        return (Path(folder) / LOCK_FILE).read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def listed(names: list[str], most: int = 6) -> str:
    """The first ``most`` of ``names`` joined for a message, and how many more there are.

    >>> listed(["a", "b", "c"], 2)
    'a, b and 1 more'
    """
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def check_folder_owner(folder: OutputFolder) -> None:
    """Refuse, before anything is written, an output folder that holds another command's output: one whose lock
    names another command and holds anything, or one that names no command and holds a file ``folder.command``
    writes there without all of its :attr:`~OutputFolder.signature` files. A new or empty folder, or the
    command's own, passes.

    :raises OutputError: naming the folder, the command it is, and what it holds.
    """
    path = Path(folder.path)
    held = _contents(path)
    if not held:
        return
    owner = folder_owner(path)
    if owner is not None and owner != folder.command:
        raise OutputError(
            f"the output folder {path} is {owner}'s (it holds {listed(held)}): {folder.command} writes only into "
            "a new folder or one of its own; nothing was done; give another folder"
        )
    if owner is None and not all(name in held for name in folder.signature):
        clash = [name for name in held if name in folder.files]
        if clash:
            raise OutputError(
                f"the output folder {path} holds {listed(clash)}, not written by {folder.command} (it holds no "
                f"{' and '.join(folder.signature)}): {folder.command} would replace them; nothing was done; give "
                "another folder"
            )


def _claim(folder: Path, fd: int, command: str) -> None:
    """Name ``command`` in the lock file ``fd`` (held) as the folder's owner, unless another command owns it."""
    check_folder_owner(OutputFolder(folder, command))
    data = (command + "\n").encode("utf-8")
    if os.pread(fd, len(data) + 1, 0) != data:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)


@contextmanager
def output_lock(folder: PathLike, command: str = "irmetrics") -> Iterator[Path]:
    """Hold ``<folder>/.irmetrics.lock`` (created with the folder when absent) for the block: an exclusive,
    non-blocking ``flock``. The lock file stays, naming ``command`` as the folder's (deleting it would race with
    a command that opened it). On a file system that cannot lock (some network mounts) the block runs unlocked,
    with a logged warning.

    :param command: the command that writes there (``"irmetrics beir"``): the message names it to another
        writer, and the lock file names it as the folder's owner.
    :raises OutputError: at once when another process holds it (another command writes to ``folder``), when
        the folder holds another command's output (:func:`check_folder_owner`), or when the folder or the lock
        file cannot be created.
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
                f"output folder {path} is in use by another {command} run (it holds {lock}); "
                "wait for that run to end, or write to another folder"
            ) from None
        except OSError as e:
            if e.errno not in _NO_LOCKS:
                raise OutputError(f"cannot lock {lock}: {_reason(e)}") from None
            # a file system without locks (some network mounts): run, but say it is unguarded
            logging.getLogger(__name__).warning(
                "%s cannot be locked (%s): runs writing there are not kept apart", lock, _reason(e)
            )
        try:
            _claim(path, fd, command)
        except OSError as e:
            raise OutputError(f"cannot write the lock file {lock}: {_reason(e)}") from None
        yield path
    finally:
        os.close(fd)  # closing releases the lock


def _given(paths: Iterable[PathLike | None]) -> tuple[PathLike, ...]:
    return tuple(p for p in paths if p is not None and str(p) != "")


@dataclass(frozen=True)
class Paths:
    """What a command reads and writes, declared before it runs, for :func:`check_outputs`.

    :ivar reads: the files it reads (a folder: the folder, for :attr:`folders`).
    :ivar writes: the files it creates or replaces.
    :ivar folders: the folders it writes in at will and may clear (``irmetrics beir``'s ``DIR/<name>``): no
        input may lie in one.
    :ivar owned: the output folders it writes as its own (:class:`OutputFolder`): another command's is refused.

    ``None`` entries (an option not given) are left out.
    """

    reads: tuple[PathLike, ...] = ()
    writes: tuple[PathLike, ...] = ()
    folders: tuple[PathLike, ...] = ()
    owned: tuple[OutputFolder, ...] = ()

    def __post_init__(self) -> None:
        for name in ("reads", "writes", "folders"):
            object.__setattr__(self, name, _given(getattr(self, name)))
        object.__setattr__(self, "owned", tuple(f for f in self.owned if f is not None))

    def check(self) -> None:
        """:func:`check_outputs` of these paths."""
        check_outputs(self.reads, self.writes, self.folders, self.owned)


def _identity(path: PathLike) -> tuple[str, tuple[int, int] | None]:
    """``path`` as the file system finds it: its real path (symbolic links, ``.`` and ``..`` resolved, from the
    working folder) and, when it exists, its device and inode (two hard links are one file)."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return real, None
    return real, (st.st_dev, st.st_ino)


def _same(a: tuple[str, tuple[int, int] | None], b: tuple[str, tuple[int, int] | None]) -> bool:
    return a[0] == b[0] or (a[1] is not None and a[1] == b[1])


def _both(a: PathLike, b: PathLike, real_a: str, real_b: str) -> str:
    """What a message adds when two different spellings are one file: where it really is."""
    if real_a != real_b:
        return " (hard links to one file)"
    return "" if os.path.abspath(a) == os.path.abspath(b) == real_a else f" (both are {real_a})"


def check_outputs(
    reads: Iterable[PathLike | None],
    writes: Iterable[PathLike | None] = (),
    folders: Iterable[PathLike | None] = (),
    owned: Iterable[OutputFolder] = (),
) -> None:
    """Refuse, before anything is written, an output that would replace an input: a file of ``writes`` that is a
    file of ``reads`` (through a symbolic link, a relative path or a hard link alike), a folder of ``folders``
    (written in at will and cleared) that holds a file or folder of ``reads``, or two ``writes`` that are one
    file (the second would replace the first); then an output folder of ``owned`` that holds another command's
    output (:func:`check_folder_owner`).

        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> (folder / "a.trec").write_text("q1 Q0 d1 1 1.0 x")
        16
        >>> (folder / "link.trec").symlink_to(folder / "a.trec")
        >>> check_outputs([folder / "a.trec"], [folder / "fused.trec"])
        >>> check_outputs([folder / "a.trec"], [folder / "link.trec"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        haystack_irmetrics.errors.OutputError: the output .../link.trec would replace the input .../a.trec (both are .../a.trec)...

    :raises OutputError: naming both paths (and the file they both are, when they are spelt differently).
    """
    reads, writes, folders = _given(reads), _given(writes), _given(folders)
    _check_inputs(reads, writes, folders)
    for folder in owned:
        check_folder_owner(folder)


def _check_inputs(reads: tuple[PathLike, ...], writes: tuple[PathLike, ...], folders: tuple[PathLike, ...]) -> None:
    """:func:`check_outputs`'s check of outputs against inputs."""
    if not writes and not folders:
        return
    inputs = [(path, _identity(path)) for path in reads]
    outputs: list[tuple[PathLike, tuple[str, tuple[int, int] | None]]] = []
    for out in writes:
        where = _identity(out)
        for path, read in inputs:
            if _same(where, read):
                raise OutputError(
                    f"the output {out} would replace the input {path}{_both(out, path, where[0], read[0])}: nothing "
                    "was done; write the output to another path"
                )
        for other, written in outputs:
            if _same(where, written):
                raise OutputError(
                    f"the outputs {other} and {out} are one file{_both(other, out, written[0], where[0])}: the second "
                    "would replace the first; give each output its own path"
                )
        outputs.append((out, where))
    for folder in folders:
        owned = Path(_identity(folder)[0])
        for path, (real, _) in inputs:
            if Path(real).is_relative_to(owned):
                raise OutputError(
                    f"the output folder {folder} holds the input {path} (it is {real}): the command writes and clears "
                    "files there; nothing was done; write to another folder"
                )


__all__ = [
    "LOCK_FILE",
    "OutputFolder",
    "Paths",
    "check_folder_owner",
    "check_outputs",
    "folder_owner",
    "listed",
    "make_folder",
    "output_lock",
    "printable",
    "replacing_file",
    "replacing_path",
    "write_file",
    "write_path",
    "write_text",
]
