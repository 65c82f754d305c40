"""What the docs' commands print and write at a git revision, and the differences between two revisions.

    python scripts/docs_outputs.py record --rev b3f33ef -o before.json
    python scripts/docs_outputs.py record --rev HEAD -o after.json --commands before.json
    python scripts/docs_outputs.py compare before.json after.json     # exit 1 when they differ

A refactor keeps what the commands of README.md and docs/*.md print and write byte for byte (issue 50);
tests/test_docs_outputs.py holds it to that from the start commit on. ``record`` runs the commands
tests/test_docs_commands.py runs by default, read with its functions from this checkout (so every revision
runs the same list; ``--commands A.json`` takes A's list as it was then): each page in a fresh sandbox folder
with its blocks in order, the same environment (a fresh cache, offline BEIR names with SciFact from the shared
data folder), dense blocks left out. The code is REV's: REV is checked out into a temporary ``git worktree``,
the sandbox's ``pipelines/``, ``examples/`` and ``haystack_irmetrics/`` link there, and every Python a command
starts puts that folder first on ``sys.path`` (the test's ``python -I -u -m haystack_irmetrics.cli`` becomes
``python -I -u -c LAUNCHER haystack_irmetrics.cli ...``; a probe checks that nothing is imported from this
checkout). The compiled scan is copied in where REV's ``_rank.c`` is this checkout's (``native`` in the
record); elsewhere the Python path computes the same values.

Recorded per command: its exit code and what it printed (stdout and stderr interleaved, the test's ``masked``
timing line); per page: the SHA-256 of each file its commands wrote in the sandbox (the text of those under
64 KB as it is, larger ones compressed, for a diff; an SQLite file as its tables' schema and rows), and the
checkout's files they changed (``git status``). Before hashing, text is normalised for what differs between
two runs of one revision, and nothing else (two records of one commit compare equal):

* the temporary folders (sandbox, checkout, cache, BEIR datasets, home) become ``<SANDBOX>``, ``<CHECKOUT>``...;
* a date and time within the recording, UTC or local (``2026-12-01T21:17:39Z``, ``2026-12-01 21:18``), becomes
  ``<NOW>``: when a file was written or a run finished (other dates, a click log's, stay);
* matplotlib's SVG figures (a ``.svg`` file, or a ``data:`` URI of a report, decoded for it): their ids, hashes
  salted with a fresh uuid4 per figure, numbered in order of appearance, and their ``dc:date`` (as above);
* the order of ``irmetrics judge``'s ``judgments.jsonl`` (a folder with ``summary.json``): a line is written as
  its answer comes, and concurrent answers come in any order; its lines are sorted;
* durations and memory: the numbers of ``irmetrics beir``'s timing phrase wherever it stands (the test masks
  the line), and the value of a JSON key of :data:`VOLATILE_KEYS` (``"seconds": 1.574``, ``"timings_s": {...}``,
  ``"peak_rss_mb": {...}``).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import difflib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import shared_data  # noqa: E402
from tests.docs_tabled import TABLED  # noqa: E402
from tests.test_docs_commands import (  # noqa: E402
    CLONE,
    PAGES,
    _parts,
    _rel,
    _run_one,
    _runs_here,
    background,
    blocks_of,
    masked,
    sandbox_env,
    start_server,
)

#: JSON keys whose value (a number, a string or a flat object) is a duration, a memory peak or a file's time: never
#: equal between two runs (summary.json's ``seconds``, ``timings_s``, ``peak_rss_mb`` and its inputs' ``mtime_ns``,
#: which each record writes or checks out anew; an assessor's ``seconds``).
VOLATILE_KEYS = ("seconds", "timings_s", "peak_rss_mb", "mtime_ns")
_KEYS = "|".join(VOLATILE_KEYS)
_VOLATILE = re.compile(rf'("(?:{_KEYS})"\s*:\s*)("(?:[^"\\]|\\.)*"|-?[\d.]+(?:[eE][-+]?\d+)?|\{{[^{{}}]*\}})')
_MOMENT = re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)?")
_TIMINGS = re.compile(r"indexing [\d.]+ s, retrieval [\d.]+ s \([\d.]+ ms/query\), evaluation [\d.]+ s, total [\d.]+ s")
SQLITE = b"SQLite format 3\x00"
_SVG_URI = re.compile(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)")
_SVG_ID = re.compile(r"\b[mp][0-9a-f]{10}\b")  # matplotlib's: a hash salted with a fresh uuid4 per figure
TEXT_KEPT = 64_000  # text files up to this size are kept in the record as they are; larger ones compressed
SOURCE_C = "haystack_irmetrics/core/_rank.c"


# ---------------------------------------------------------------------------------------------------
# The commands: those tests/test_docs_commands.py runs by default.


def plan() -> list[dict]:
    """Each page with commands the default test runs: ``{"page", "commands": [{"line", "text", "shown"}]}``."""
    pages = []
    for path in PAGES:
        page = _rel(path)
        blocks = [b for b in blocks_of(path.read_text(encoding="utf-8"), page) if _runs_here(b) and not b.slow]
        commands = [
            {"line": c.line, "text": c.text, "shown": c.shown}
            for b in blocks
            for c in b.commands
            if (c.page, c.text) not in TABLED
        ]
        if commands:
            pages.append({"page": page, "commands": commands})
    return pages


def plan_of(record: dict) -> list[dict]:
    """The command list a record ran."""
    return [
        {"page": p["page"], "commands": [{k: c[k] for k in ("line", "text", "shown")} for c in p["commands"]]}
        for p in record["pages"]
    ]


# ---------------------------------------------------------------------------------------------------
# The revision's code: a worktree, and the launchers that put it first on sys.path.


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@contextmanager
def checkout(rev: str, folder: Path) -> Iterator[tuple[str, bool]]:
    """REV checked out (detached) in ``folder`` for the block: ``(commit, whether the compiled scan is there)``."""
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    _git("worktree", "add", "--detach", "--quiet", str(folder), commit)
    try:
        yield commit, _copy_native(folder)
    finally:
        _git("worktree", "remove", "--force", str(folder))


def _copy_native(folder: Path) -> bool:
    """This checkout's compiled scan, copied where the revision's C source is the one it was built from."""
    built = sorted((ROOT / SOURCE_C).parent.glob("_rank.*.so"))
    source, theirs = ROOT / SOURCE_C, folder / SOURCE_C
    if not built or not theirs.is_file() or theirs.read_bytes() != source.read_bytes():
        return False
    if built[0].stat().st_mtime < source.stat().st_mtime:  # built from an older source
        return False
    shutil.copy2(built[0], theirs.parent / built[0].name)
    return True


@dataclass(frozen=True)
class Launch:
    """The argv the test would run, rewritten so that the revision's folder comes first on sys.path."""

    folder: Path

    def _head(self) -> str:
        return f"import sys; sys.path.insert(0, {str(self.folder)!r}); "

    @property
    def module(self) -> str:  # python -c MODULE NAME ARGS... = python -m NAME ARGS...
        return self._head() + "import runpy; runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"

    @property
    def code(self) -> str:  # python -c CODE_LAUNCHER CODE = python -c CODE, in a fresh __main__
        return self._head() + (
            "import types; m = types.ModuleType('__main__'); m.__builtins__ = __builtins__; m.__loader__ = __loader__; "
            "m.__annotations__ = {}; "
            "sys.modules['__main__'] = m; exec(compile(sys.argv.pop(1), '<string>', 'exec'), vars(m))"
        )

    def argv(self, argv: list[str]) -> list[str]:
        """For ``_run_one`` and ``start_server``, which add ``sys.executable -I`` (and ``-u`` to irmetrics)."""
        if argv[0] == "irmetrics":
            return ["python", "-u", "-c", self.module, "haystack_irmetrics.cli", *argv[1:]]
        if argv[0] in ("python", "python3") and argv[1] == "-m":
            return ["python", "-c", self.module, *argv[2:]]
        if argv[0] in ("python", "python3") and argv[1] == "-c":
            return ["python", "-c", self.code, *argv[2:]]
        return argv

    def probe(self, env: dict[str, str]) -> None:
        """Both launchers import the package from the revision's folder, never from this checkout."""
        runs = [
            [*self.argv(["irmetrics", "--version"])[1:]],
            [*self.argv(["python", "-c", "import haystack_irmetrics.cli"])[1:]],
        ]
        for argv in runs:
            done = subprocess.run([sys.executable, "-I", "-v", *argv], env=env, capture_output=True, text=True)
            mine, theirs = str(ROOT / "haystack_irmetrics"), str(self.folder / "haystack_irmetrics" / "cli")
            if done.returncode != 0 or mine in done.stderr or theirs not in done.stderr:
                raise SystemExit(f"the launcher does not run {self.folder}'s code:\n{done.stderr[-3000:]}")


# ---------------------------------------------------------------------------------------------------
# The sandbox, as tests/test_docs_commands.py's sandbox_env and _sandbox make it.


@dataclass(frozen=True)
class _Folders:
    """What ``sandbox_env`` asks of pytest's ``tmp_path_factory``: a new folder by name (here in the record's)."""

    tmp: Path

    def mktemp(self, name: str) -> Path:
        (self.tmp / name).mkdir()
        return self.tmp / name


def environment(tmp: Path) -> dict[str, str]:
    """The commands' environment: the test's ``sandbox_env`` (after the root conftest.py's settings) with a fresh
    cache and the offline BEIR names in ``tmp``."""
    spec = importlib.util.spec_from_file_location("_docs_outputs_conftest", ROOT / "conftest.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))  # sets the tests' os.environ
    cache = _Folders(tmp).mktemp("cache")
    return sandbox_env.__wrapped__(_Folders(tmp), cache)  # the fixture's own function


def _moment(since: float):
    """A ``_MOMENT`` match as ``<NOW>`` when it falls between ``since`` and now (read as UTC or as local time)."""

    def replace(match: re.Match) -> str:
        written = datetime.fromisoformat(match.group(0)[:19].replace(" ", "T"))
        stamps = (written.replace(tzinfo=timezone.utc).timestamp(), written.timestamp())
        return "<NOW>" if any(since - 120 <= t <= time.time() + 120 for t in stamps) else match.group(0)

    return replace


def normaliser(tmp: Path, sandbox: Path, since: float):
    """``text`` with the temporary folders named, and the moments, durations and memory of the run masked."""
    names = {sandbox: "<SANDBOX>", tmp / "checkout": "<CHECKOUT>", tmp / "cache": "<CACHE>"}
    names |= {tmp / "beir-datasets": "<BEIR>"}
    names |= {tmp / "home": "<HOME>", tmp: "<TMP>"}
    pairs = sorted(((str(p), n) for p, n in names.items()), key=lambda pair: -len(pair[0]))
    moment = _moment(since)

    def normal(text: str) -> str:
        for path, name in pairs:
            text = text.replace(path, name)
        text = _SVG_URI.sub(lambda m: "data:image/svg+xml;decoded," + base64.b64decode(m.group(1)).decode(), text)
        if "<svg" in text:
            ids: dict[str, str] = {}
            text = _SVG_ID.sub(lambda m: ids.setdefault(m.group(0), f"<ID{len(ids)}>"), text)
        text = _MOMENT.sub(moment, text)
        text = _TIMINGS.sub(lambda m: re.sub(r"\d+(\.\d+)?", "#", m.group(0)), text)
        return _VOLATILE.sub(r'\1"<VOLATILE>"', text)

    return normal


def files_of(sandbox: Path, normal) -> dict[str, dict]:
    """``{path: {"sha256", "text" or "bytes"}}`` of every file under ``sandbox`` but the clone's folders."""
    found = {}
    for folder, dirs, files in os.walk(sandbox):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not (here == sandbox and d in CLONE))
        for name in sorted(files):
            path = here / name
            data = path.read_bytes()
            try:
                text = normal(_sqlite_text(path) if data.startswith(SQLITE) else data.decode("utf-8"))
                if name == "judgments.jsonl" and (here / "summary.json").is_file():  # irmetrics judge's
                    text = "".join(sorted(text.splitlines(True)))
            except UnicodeDecodeError:
                entry = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
            else:
                entry = {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
                if len(text) <= TEXT_KEPT:
                    entry["text"] = text
                else:
                    entry["text_z"] = base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")
            found[path.relative_to(sandbox).as_posix()] = entry
    return found


def _sqlite_text(path: Path) -> str:
    """An SQLite file's tables: each one's schema, then its rows as JSON objects (its bytes vary with the
    order of writes and the free pages, which no reader sees)."""
    lines = []
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name"):
            lines.append(sql or f"{kind} {name}")
            if kind == "table":
                rows = db.execute(f'SELECT * FROM "{name}"')
                columns = [c[0] for c in rows.description]
                lines += [json.dumps(dict(zip(columns, row)), ensure_ascii=False) for row in rows]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------
# Running the pages.


def _wait_for_port(argv: list[str], seconds: float = 120.0) -> None:
    """A server's ``--port`` free (another run of the docs may hold it for a while)."""
    if "--port" not in argv:
        return
    port, until = int(argv[argv.index("--port") + 1]), time.monotonic() + seconds
    while time.monotonic() < until:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(1)


def run_chain(text: str, cwd: Path, env: dict[str, str], launch: Launch) -> tuple[int, str]:
    """An ``&&`` chain as the test runs it, stopping at the first command that fails: (exit code, output)."""
    output = ""
    for argv in _parts(text):
        try:
            code, out = _run_one(launch.argv(argv), cwd, env)
        except (OSError, UnicodeDecodeError, subprocess.TimeoutExpired) as error:
            code, out = -1, f"<{type(error).__name__}: {error}>\n"
        output += out
        if code != 0:
            break
    return code, output


def run_server(argv: list[str], cwd: Path, env: dict[str, str], launch: Launch, servers: list) -> tuple[int, str]:
    _wait_for_port(argv)
    try:
        servers.append(start_server(launch.argv(argv), cwd, env))
    except AssertionError as error:  # it stopped before printing its first line
        return -1, f"<server stopped: {error}>\n"
    return 0, ""


def run_page(page: dict, tmp: Path, env: dict[str, str], launch: Launch, since: float) -> dict:
    """One page's commands in a fresh sandbox: what each printed, then the files they wrote."""
    sandbox = tmp / "pages" / page["page"].replace("/", "_")
    sandbox.mkdir(parents=True)
    for name in CLONE:
        (sandbox / name).symlink_to(launch.folder / name, target_is_directory=True)
    normal, servers, steps = normaliser(tmp, sandbox, since), [], []
    try:
        for command in page["commands"]:
            started = time.perf_counter()
            server = background(command["text"])
            if server is not None:
                code, output = run_server(server, sandbox, env, launch, servers)
            else:
                code, output = run_chain(command["text"], sandbox, env, launch)
            seconds = time.perf_counter() - started
            shown = None if command["shown"] is None else masked(output) == masked(command["shown"])
            steps.append({**command, "exit": code, "output": masked(normal(output)), "shown_matches": shown})
            steps[-1]["seconds"] = round(seconds, 2)
            print(f"  {seconds:6.1f} s  exit {code:3d}  {page['page']}:{command['line']}: {command['text'][:80]}")
    finally:
        for server in servers:
            server.kill()
            server.wait()
    changed = _git("-C", str(launch.folder), "status", "--porcelain").splitlines()
    return {"page": page["page"], "commands": steps, "files": files_of(sandbox, normal), "checkout_changes": changed}


def _absent(page: dict) -> str | None:
    uses = any("scifact" in c["text"].split() for c in page["commands"])
    if uses and not (shared_data() / "scifact" / "corpus.jsonl").is_file():
        return f"SciFact is absent from the shared data folder {shared_data()}"
    return None


def record(rev: str, pages: list[dict] | None = None, keep: bool = False) -> dict:
    """What the docs' commands print and write with the code of ``rev`` (this checkout's command list by
    default, or ``pages``, a record's :func:`plan_of`)."""
    pages = plan() if pages is None else pages
    tmp = Path(tempfile.mkdtemp(prefix="docs-outputs-")).resolve()
    started, since = time.perf_counter(), time.time()
    try:
        env = environment(tmp)
        with checkout(rev, tmp / "checkout") as (commit, native):
            launch = Launch(tmp / "checkout")
            launch.probe(env)
            print(f"{rev} = {commit}: {sum(len(p['commands']) for p in pages)} commands (compiled scan: {native})")
            done = []
            for page in pages:
                reason = _absent(page)
                if reason:
                    done.append({"page": page["page"], "skipped": reason, "commands": page["commands"], "files": {}})
                else:
                    done.append(run_page(page, tmp, env, launch, since))
    finally:
        if keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    seconds = round(time.perf_counter() - started, 1)
    return {"rev": rev, "commit": commit, "native": native, "python": sys.version.split()[0], "seconds": seconds,
            "pages": done}  # fmt: skip


# ---------------------------------------------------------------------------------------------------
# Comparing two records.


@dataclass(frozen=True)
class Difference:
    page: str
    subject: str  # the command as written, "file PATH", "checkout changes" or "commands"
    detail: str  # what differs, printable


def _diff(a: str, b: str, name_a: str, name_b: str) -> str:
    lines = difflib.unified_diff(a.splitlines(True), b.splitlines(True), name_a, name_b)
    return "".join(line if line.endswith("\n") else line + "\n\\ no newline at end\n" for line in lines)


def _command_differences(page: str, a: dict, b: dict, names: tuple[str, str]) -> list[Difference]:
    found = []
    ours = {(c["text"], i): c for i, c in enumerate(b["commands"])}
    for i, before in enumerate(a["commands"]):
        after = ours.get((before["text"], i))
        if after is None:
            continue
        parts = []
        if before["exit"] != after["exit"]:
            parts.append(f"exit {before['exit']} -> {after['exit']}\n")
        if before["output"] != after["output"]:
            parts.append(_diff(before["output"], after["output"], *names))
        if parts:
            found.append(Difference(page, before["text"], "".join(parts)))
    return found


def _text(entry: dict) -> str | None:
    if "text_z" in entry:
        return zlib.decompress(base64.b64decode(entry["text_z"])).decode("utf-8")
    return entry.get("text")


def _file_differences(page: str, a: dict, b: dict, names: tuple[str, str]) -> list[Difference]:
    found = []
    for path in sorted(set(a["files"]) | set(b["files"])):
        before, after = a["files"].get(path), b["files"].get(path)
        if before is None or after is None:
            found.append(Difference(page, f"file {path}", f"written only at {names[before is None]}\n"))
        elif before["sha256"] != after["sha256"]:
            if _text(before) is not None and _text(after) is not None:
                detail = _diff(_text(before), _text(after), f"{names[0]}/{path}", f"{names[1]}/{path}")
            else:
                detail = f"sha256 {before['sha256']} ({before.get('bytes', '?')} bytes) -> {after['sha256']} "
                detail += f"({after.get('bytes', '?')} bytes)\n"
            found.append(Difference(page, f"file {path}", detail))
    return found


def differences(a: dict, b: dict) -> list[Difference]:
    """Every difference between two records, page by page in ``a``'s order."""
    names = (a["rev"], b["rev"]) if a["rev"] != b["rev"] else (f"{a['rev']} (a)", f"{b['rev']} (b)")
    found = []
    if plan_of(a) != plan_of(b):
        found.append(Difference("*", "commands", "the two records ran different command lists\n"))
    if a.get("native") != b.get("native"):
        found.append(Difference("*", "compiled scan", f"{a.get('native')} -> {b.get('native')}\n"))
    theirs = {p["page"]: p for p in b["pages"]}
    for page in a["pages"]:
        other = theirs.get(page["page"])
        if other is None or page.get("skipped") != other.get("skipped"):
            skipped = f"skipped: {page.get('skipped')} -> {other and other.get('skipped')}\n"
            found.append(Difference(page["page"], "page", skipped))
            continue
        found += _command_differences(page["page"], page, other, names)
        found += _file_differences(page["page"], page, other, names)
        if page.get("checkout_changes") != other.get("checkout_changes"):
            detail = f"{page.get('checkout_changes')} -> {other.get('checkout_changes')}\n"
            found.append(Difference(page["page"], "checkout changes", detail))
    return found


def describe(difference: Difference) -> str:
    body = "".join(f"    {line}" for line in difference.detail.splitlines(True))
    return f"== {difference.page}: {difference.subject}\n{body}"


# ---------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    rec = sub.add_parser("record", help="run the docs' commands with REV's code and write what they did")
    rec.add_argument("--rev", required=True, help="a git revision (a commit, HEAD, a branch)")
    rec.add_argument("-o", "--output", required=True, type=Path, help="the record (JSON)")
    rec.add_argument("--commands", type=Path, help="run the command list of this record, not the checkout's")
    rec.add_argument("--page", action="append", help="only this page (README.md, docs/x.md); may be repeated")
    rec.add_argument("--keep", action="store_true", help="keep the temporary folder (sandboxes, cache)")
    cmp = sub.add_parser("compare", help="print every difference between two records; exit 1 if any")
    cmp.add_argument("records", nargs=2, type=Path)
    args = parser.parse_args(argv)
    if args.action == "record":
        pages = plan_of(json.loads(args.commands.read_text(encoding="utf-8"))) if args.commands else plan()
        pages = [p for p in pages if not args.page or p["page"] in args.page]
        done = record(args.rev, pages, keep=args.keep)
        args.output.write_text(json.dumps(done, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        failed = sum(c.get("exit", 0) != 0 for p in done["pages"] for c in p["commands"])
        print(f"{done['commit']}: {done['seconds']} s, {failed} commands exited non-zero -> {args.output}")
        return 0
    a, b = (json.loads(path.read_text(encoding="utf-8")) for path in args.records)
    found = differences(a, b)
    for difference in found:
        print(describe(difference))
    print(f"{len(found)} differences between {a['rev']} ({a['commit'][:10]}) and {b['rev']} ({b['commit'][:10]})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
