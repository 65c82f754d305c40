"""Every shell command of README.md and docs/*.md runs as written, and prints what the page shows.

The commands are read from the pages' ```bash, ```sh and ```console blocks, and from any other block
whose lines start with ``$ `` (a transcript): a ``\\`` at a line's end joins the next line, and a ``#``
outside quotes starts a comment. Each command is either

* **run**: ``irmetrics ...`` (through ``python -m haystack_irmetrics.cli``, never an ``irmetrics`` found on
  PATH), ``python -c ...`` and ``cat FILE``; ``&&`` chains them. Each page runs in its own sandbox folder
  where ``pipelines/``, ``examples/`` and ``haystack_irmetrics/`` are reachable as in a clone, with
  ``$IRMETRICS_CACHE_DIR``, ``$IRMETRICS_BEIR_DIR`` and ``$HOME`` in temporary folders; its blocks run
  in page order (a later command reads what an earlier one wrote) and every command must exit 0. The
  BEIR names resolve offline: ``$IRMETRICS_BEIR_DIR`` holds ``scifact`` (the real SciFact of the shared
  data folder; pages using it skip where it is absent) and tiny generated folders for the others;
* or **tabled** in ``tests/docs_tabled.py``'s :data:`TABLED` (installs, builds, servers, downloads), with why it is not run here
  and the test that covers it; the table's checks assert that what it names exists (a Makefile target,
  an extra, a script option, a test function).

A command that is neither fails :func:`test_every_command_in_the_docs_is_run_here_or_tabled`.

**What a page shows is what the command prints** (stdout and stderr as a terminal interleaves them):
in a transcript, the lines after each ``$`` command; after a bash block, a ```text block introduced by
a line ``prints`` is the output of the block's last command; :data:`SHOWN_TABLES` names the markdown
tables that are a command's printed table. The one masked part: the numbers of the timing line
``indexing ... s, ..., total ... s`` of ``irmetrics beir``, which vary run to run.

A block that runs a dense or hybrid retriever embeds a corpus (minutes for SciFact): it runs only with
``-m slow``; the default run of a page leaves such blocks out.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .conftest import ROOT, shared_data
from .docs_tabled import SHOWN_TABLES, TABLED, WRITES

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCKS = ("bash", "sh", "shell")
# Folders of a clone the commands name.
CLONE = ("pipelines", "examples", "haystack_irmetrics")
# BEIR names the docs use, made here as tiny BEIR folders (scifact is the real one); cqadupstack has
# one sub-folder per forum, as the real one has 12.
TINY_DATASETS = {"nfcorpus": None, "fiqa": None, "cqadupstack": ("android", "english")}
DENSE = {"dense", "hybrid", "dense-qdrant"}
TIMING = re.compile(r"^indexing .*, total [\d.]+ s$")
TIMEOUT = 1800


@dataclass(frozen=True)
class Command:
    page: str  # "README.md", "docs/beir.md"
    line: int
    text: str  # as written, continuation lines joined, the comment dropped, blanks collapsed
    shown: str | None = None  # the output the page shows for it


@dataclass
class Block:
    page: str
    line: int
    commands: list[Command] = field(default_factory=list)

    @property
    def slow(self) -> bool:
        return any(_retriever(c.text) & DENSE for c in self.commands)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def strip_comment(line: str) -> str:
    """``line`` without its ``# comment`` (a ``#`` outside quotes, at the start or after a blank)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _joined(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``(line number, command)``: continuation lines joined, comments dropped, blank lines left out."""
    out: list[tuple[int, str]] = []
    start, parts = 0, []
    for number, raw in lines:
        text = strip_comment(raw).rstrip()
        if not parts:
            start = number
        if text.endswith("\\"):
            parts.append(text[:-1])
            continue
        parts.append(text)
        command = " ".join(" ".join(parts).split())
        parts = []
        if command:
            out.append((start, command))
    return out


def blocks_of(text: str, page: str) -> list[Block]:
    """The command blocks of a page, with the output it shows for each command that has one."""
    lines = text.splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^( *)```(\S*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        indent, lang, start = len(fence.group(1)), fence.group(2), i + 1
        end = next(j for j in range(start, len(lines)) if lines[j].lstrip().startswith("```"))
        body = [(n + 1, lines[n][indent:]) for n in range(start, end)]
        i = end + 1
        if lang == "console" or (lang in ("", "text") and any(t.startswith("$ ") for _, t in body)):
            found.append(_transcript(body, page, start))
        elif lang in SHELL_BLOCKS:
            block = Block(page, start, [Command(page, n, t) for n, t in _joined(body)])
            shown, i = _printed_after(lines, i)
            if shown is not None and block.commands:
                last = block.commands[-1]
                block.commands[-1] = Command(last.page, last.line, last.text, shown)
            found.append(block)
    return found


def _transcript(body: list[tuple[int, str]], page: str, start: int) -> Block:
    block = Block(page, start)
    command: tuple[int, str] | None = None
    output: list[str] = []
    for number, text in [*body, (0, "$ ")]:
        if text.startswith("$ "):
            if command and command[1]:
                shown = "".join(f"{line}\n" for line in output)
                block.commands.append(Command(page, command[0], _joined([command])[0][1], shown))
            command, output = (number, text[2:]), []
        else:
            output.append(text)
    return block


def _printed_after(lines: list[str], i: int) -> tuple[str | None, int]:
    """The ```text block after a line ``prints`` that follows a command block, if there is one."""
    j = i
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j >= len(lines) or lines[j].strip() not in ("prints", "prints:"):
        return None, i
    j += 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j >= len(lines) or lines[j] != "```text":
        return None, i
    end = next(k for k in range(j + 1, len(lines)) if lines[k].startswith("```"))
    return "".join(f"{line}\n" for line in lines[j + 1 : end]), end + 1


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks_of(page.read_text(encoding="utf-8"), _rel(page))]


def _parts(text: str) -> list[list[str]] | None:
    """The commands of an ``&&`` chain as argument lists, or None when the shell would be needed."""
    try:
        tokens = shlex.split(text)
    except ValueError:
        return None
    if any(t in ("|", "||", ";", ">", ">>", "<", "&") or t.startswith(("$", "`")) for t in tokens):
        return None
    chain, current = [], []
    for token in [*tokens, "&&"]:
        if token == "&&":
            if not current:
                return None
            chain.append(current)
            current = []
        else:
            current.append(token)
    return chain


def _runnable(argv: list[str]) -> bool:
    if argv[0] == "irmetrics":
        return True
    if argv[0] == "cat":
        return len(argv) == 2
    return argv[0] in ("python", "python3") and len(argv) == 3 and argv[1] == "-c"


#: Servers a page may start in the background (``... &``) for the commands after it; stopped when the page ends.
SERVERS = (
    ("python", "-m", "haystack_irmetrics.judges.server"),
    ("python", "-m", "haystack_irmetrics.usefulness.server"),
)


def background(text: str) -> list[str] | None:
    """The argv of a server command ``... &`` (one of :data:`SERVERS`), else None."""
    if not text.rstrip().endswith(" &") or text.rstrip().endswith("&&"):
        return None
    chain = _parts(text.rstrip()[:-1])
    if chain is None or len(chain) != 1 or not any(tuple(chain[0][: len(s)]) == s for s in SERVERS):
        return None
    return chain[0]


def runnable(text: str) -> bool:
    chain = _parts(text)
    return background(text) is not None or (chain is not None and all(_runnable(argv) for argv in chain))


def _retriever(text: str) -> set[str]:
    tokens = text.split()
    return {tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t in ("-r", "--retriever")}


# ---------------------------------------------------------------------------------------------------
# The sandbox and the runs.


def _write_tiny(folder: Path, tag: str) -> None:
    """A BEIR folder of 8 documents and 3 queries, each judging one document."""
    import json

    words = ["apple", "river", "stone", "cloud", "music", "garden", "engine", "planet"]
    (folder / "qrels").mkdir(parents=True)
    docs = [
        {"_id": f"{tag}-d{i}", "title": f"{w} notes", "text": f"{w} {words[(i + 1) % 8]} {words[(i + 3) % 8]} of {tag}"}
        for i, w in enumerate(words)
    ]
    queries = [{"_id": f"{tag}-q{i}", "text": f"{words[i]} {words[i + 1]}"} for i in range(3)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    judged = "".join(f"{tag}-q{i}\t{tag}-d{i}\t1\n" for i in range(3))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + judged, encoding="utf-8")


@pytest.fixture(scope="session")
def sandbox_env(tmp_path_factory, private_cache) -> dict[str, str]:
    """The environment of every command: the session's cache (shared, as a user's; the folder of
    ``$IRMETRICS_TEST_CACHE_DIR`` when set, see conftest.py), BEIR names resolving offline."""
    beir = tmp_path_factory.mktemp("beir-datasets")
    scifact = shared_data() / "scifact"
    if (scifact / "corpus.jsonl").is_file():
        (beir / "scifact").symlink_to(scifact, target_is_directory=True)
    for name, subs in TINY_DATASETS.items():
        for sub in subs or [None]:
            _write_tiny(beir / name / sub if sub else beir / name, sub or name)
    env = dict(os.environ)
    env.update(
        IRMETRICS_CACHE_DIR=str(private_cache),
        IRMETRICS_BEIR_DIR=str(beir),
        HOME=str(tmp_path_factory.mktemp("home")),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        COLUMNS="100",
    )
    return env


def _sandbox(folder: Path) -> Path:
    for name in CLONE:
        (folder / name).symlink_to(ROOT / name, target_is_directory=True)
    return folder


def _run_one(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    if argv[0] == "cat":
        return 0, (cwd / argv[1]).read_text(encoding="utf-8")
    if argv[0] == "irmetrics":
        # -I: the sandbox folder is not on sys.path (as for the installed entry point); -u: stdout and
        # stderr interleaved as on a terminal.
        argv = [sys.executable, "-I", "-u", "-m", "haystack_irmetrics.cli", *argv[1:]]
    else:
        argv = [sys.executable, "-I", *argv[1:]]
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    return done.returncode, done.stdout.decode("utf-8")


def masked(text: str) -> str:
    """``text`` with the numbers of ``irmetrics beir``'s timing line replaced by ``#``."""
    return "\n".join(re.sub(r"\d+(\.\d+)?", "#", t) if TIMING.match(t) else t for t in text.split("\n"))


def start_server(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    """Start a background server of the page; returns once it printed its first line (it is listening)."""
    server = subprocess.Popen(
        [sys.executable, "-I", *argv[1:]], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    ready = server.stdout.readline()
    assert server.poll() is None, f"{' '.join(argv)} stopped: {ready.decode()}{server.stdout.read().decode()}"
    return server


def run_command(command: Command, cwd: Path, env: dict[str, str]) -> str:
    chain = _parts(command.text)
    assert chain is not None
    output = ""
    for argv in chain:
        code, out = _run_one(argv, cwd, env)
        output += out
        where = f"{command.page}:{command.line}: {command.text}"
        assert code == 0, f"{where}\nexited {code} (in {' '.join(argv)}):\n{out[-4000:]}"
    return output


def _tables_after(page: str, block_line: int) -> str:
    """The first markdown table after line ``block_line`` of ``page``."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()[block_line:]
    start = next(i for i, t in enumerate(lines) if t.startswith("| "))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "".join(f"{t}\n" for t in lines[start:end])


def _page_runs() -> list:
    params = []
    for page in PAGES:
        blocks = [b for b in blocks_of(page.read_text(encoding="utf-8"), _rel(page)) if _runs_here(b)]
        if any(not b.slow for b in blocks):
            params.append(pytest.param(_rel(page), "default", id=f"{_rel(page)}-default"))
        if any(b.slow for b in blocks):
            params.append(pytest.param(_rel(page), "slow", id=f"{_rel(page)}-slow", marks=pytest.mark.slow))
    return params


def _runs_here(block: Block) -> bool:
    return any(runnable(c.text) and (c.page, c.text) not in TABLED for c in block.commands)


@pytest.mark.parametrize(("page", "mode"), _page_runs())
def test_the_commands_of_each_page_run_and_print_what_it_shows(page, mode, sandbox_env, tmp_path):
    blocks = [b for b in blocks_of((ROOT / page).read_text(encoding="utf-8"), page) if _runs_here(b)]
    if mode == "default":
        blocks = [b for b in blocks if not b.slow]
    else:
        pytest.importorskip("haystack_integrations.components.embedders.sentence_transformers", reason="dense extra")
    commands = [c for b in blocks for c in b.commands if (c.page, c.text) not in TABLED]
    if any("scifact" in c.text.split() for c in commands) and not (shared_data() / "scifact").is_dir():
        pytest.skip(f"SciFact is absent from the shared data folder {shared_data()} (set IRMETRICS_SHARED_DATA)")
    cwd = _sandbox(tmp_path)
    started = time.perf_counter()
    servers: list[subprocess.Popen] = []
    try:
        _run_page(blocks, cwd, sandbox_env, servers)
    finally:
        for server in servers:
            server.kill()
            server.wait()
    print(f"{page} ({mode}): {len(commands)} commands in {time.perf_counter() - started:.1f} s")


def _run_page(blocks: list[Block], cwd: Path, env: dict[str, str], servers: list[subprocess.Popen]) -> None:
    for block in blocks:
        for command in block.commands:
            if (command.page, command.text) in TABLED:
                continue
            if background(command.text) is not None:
                servers.append(start_server(background(command.text), cwd, env))
                continue
            t0 = time.perf_counter()
            output = run_command(command, cwd, env)
            print(f"  {time.perf_counter() - t0:5.1f} s  {command.text[:90]}")
            where = f"{command.page}:{command.line}: {command.text}"
            if command.shown is not None:
                assert masked(output) == masked(command.shown), f"{where}\nprinted:\n{output}"
            if (command.page, command.text) in SHOWN_TABLES:
                table = _tables_after(command.page, block.line)
                assert output.split("\n\n")[0] + "\n" == table, f"{where}\nprinted:\n{output}"
            for path in WRITES.get((command.page, command.text), []):
                assert (cwd / path).is_file(), f"{where}\ndid not write {path}"


def test_every_command_in_the_docs_is_run_here_or_tabled():
    missing = [
        f"{c.page}:{c.line}: {c.text}"
        for b in all_blocks()
        for c in b.commands
        if not runnable(c.text) and (c.page, c.text) not in TABLED
    ]
    assert not missing, (
        "these commands of the docs are neither run by this test nor tabled: make them runnable as written, or "
        "add each to TABLED in tests/docs_tabled.py with why it is not run and the test that covers it:\n"
        + "\n".join(missing)
    )


def test_every_tabled_command_is_in_the_docs_and_names_an_existing_test_and_target():
    written = {(c.page, c.text) for b in all_blocks() for c in b.commands}
    stale = sorted(set(TABLED) - written)
    assert not stale, f"TABLED lists commands the docs no longer have: {stale}"
    for (page, text), covered in TABLED.items():
        path, _, name = covered.test.partition("::")
        assert (ROOT / path).is_file(), f"{page}: {text}: {path} does not exist"
        assert re.search(rf"^def {re.escape(name)}\(", (ROOT / path).read_text(encoding="utf-8"), re.M), (
            f"{page}: {text}: {covered.test} does not exist"
        )
        assert covered.reason
        covered.check()
    for key in (*SHOWN_TABLES, *WRITES):
        assert key in written and runnable(key[1]), f"{key} is not a runnable command of the docs"


def test_the_doc_pages_run_some_commands_and_show_their_outputs():
    """The extraction finds what the pages hold: transcripts, 'prints' blocks, continuation lines."""
    commands = [c for b in all_blocks() for c in b.commands]
    shown = {(c.page, c.text.split(" ")[1]) for c in commands if c.shown is not None}
    assert {("README.md", "beir"), ("docs/beir.md", "compare"), ("docs/statistics.md", "compare")} <= shown
    assert ("docs/cli.md", "--version") in shown and ("docs/cli.md", "examples/data/sample_run.trec") in shown
    assert len([c for c in commands if runnable(c.text)]) >= 25


def test_the_extraction_rules():
    page = "\n".join(
        [
            "```bash",
            "irmetrics beir scifact \\",
            '    -o "a b"   # a comment with a \\',
            "pip install x  # why",
            "```",
            "",
            "prints",
            "",
            "```text",
            "done",
            "```",
            "",
            "```console",
            "$ irmetrics --version",
            "irmetrics 0.1.0",
            "$ cat x.txt",
            "```",
            "",
            "```",
            "usage: irmetrics [-h]",
            "```",
            "- in a list:",
            "  ```bash",
            "  irmetrics beir -o x",
            "  ```",
        ]
    )
    got = [(c.line, c.text, c.shown) for b in blocks_of(page, "p.md") for c in b.commands]
    assert got == [
        (2, 'irmetrics beir scifact -o "a b"', None),
        (4, "pip install x", "done\n"),
        (14, "irmetrics --version", "irmetrics 0.1.0\n"),
        (16, "cat x.txt", ""),
        (24, "irmetrics beir -o x", None),
    ]
    assert strip_comment("echo '# not a comment' # one") == "echo '# not a comment' "
    assert runnable("irmetrics beir -o a && irmetrics beir -o b") and not runnable("irmetrics beir > out.txt")
    assert background("python -m haystack_irmetrics.judges.server --port 8765 &") == [
        "python",
        "-m",
        "haystack_irmetrics.judges.server",
        "--port",
        "8765",
    ]
    assert background("irmetrics beir &") is None and not runnable("python -m http.server &")
    assert not runnable("irmetrics beir && make demo") and runnable('python -c "import sys"')
    assert _retriever("irmetrics beir -r dense -o x") == {"dense"}
    assert masked("indexing 0.7 s, retrieval 0.5 s (1.6 ms/query), evaluation 0.01 s, total 1.4 s") == (
        "indexing # s, retrieval # s (# ms/query), evaluation # s, total # s"
    )


def test_the_shipped_feedback_data_is_what_make_feedback_data_writes(tmp_path):
    """examples/data/feedback_log.csv and new.trec are examples/make_feedback_data.py's output, byte for byte."""
    import runpy

    written = runpy.run_path(str(ROOT / "examples" / "make_feedback_data.py"), run_name="not_main")["main"](tmp_path)
    for path in written:
        shipped = ROOT / "examples" / "data" / path.name
        assert shipped.read_bytes() == path.read_bytes(), f"{shipped} is not what make_feedback_data.py writes"
        assert shipped.stat().st_size < 50_000
    header = (ROOT / "examples" / "data" / "feedback_log.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",") == ["query_id", "doc_id", "position", "vote", "user_id", "ts", "device"]
