"""What the tests of ``irmetrics assess`` share: a small BEIR dataset whose texts hold markup (to show that the
page draws text, never markup), a pairs file, and the judging server started as a user starts it (the CLI in a
subprocess on a free port), its address read from what it prints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

#: A document whose text would load a remote image and run a script if it were drawn as markup.
HOSTILE = '<img src="http://evil.example/pixel.png" onerror="alert(1)"><script>alert("x")</script> bicycle tube'
#: A long document without a title: paragraphs, and a token too long for a line (it must wrap, not widen the page).
LONG = (
    "\n\n".join(
        f"Paragraph {i}: gears and cassettes wear together; when the chain skips under load, check the hanger, "
        "the cable tension and the chainring bolts before replacing parts. " * 3
        for i in range(1, 9)
    )
    + "\n\nhttps://example.org/"
    + "a-very-long-path-segment-" * 12
)
QUERIES = {
    "q1": "how do I fix a slow leak in a bicycle tube",
    "q2": "why does my chain skip when I pedal hard",
}
CORPUS = {
    "d1": {"title": "Patching a slow puncture", "text": "Find the leak in the tube with a bowl of water."},
    "d2": {"title": "Composting at home", "text": "Meat and dairy attract pests to a compost bin."},
    "d3": {"title": "<b>Tube</b> & tyre", "text": HOSTILE},
    "d4": {"title": "Chain wear", "text": "A stretched chain skips under load when you pedal hard."},
    "d5": {"title": "", "text": LONG},
}
PAIRS = [("q1", "d1"), ("q1", "d2"), ("q1", "d3"), ("q2", "d4"), ("q2", "d5")]


def write_dataset(folder: Path) -> Path:
    """``folder`` with ``queries.jsonl``, ``corpus.jsonl`` and ``pairs.tsv`` (the pairs above, in order)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, **doc}) + "\n" for d, doc in CORPUS.items()))
    write_pairs(folder / "pairs.tsv", PAIRS)
    return folder


def write_pairs(path: Path, pairs: list[tuple[str, str]]) -> Path:
    path.write_text("query_id\tdoc_id\tprobability\n" + "".join(f"{q}\t{d}\t1\n" for q, d in pairs))
    return path


def cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``irmetrics ARGS`` run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "haystack_irmetrics.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )


class Server:
    """``irmetrics assess`` running in a subprocess (its own process group), ``url`` read from its output."""

    def __init__(self, folder: Path, *args: str, port: int = 0) -> None:
        self.folder = folder
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "haystack_irmetrics.cli",
                "assess",
                str(folder / "pairs.tsv"),
                "--queries",
                str(folder),
                "--corpus",
                str(folder),
                "--port",
                str(port),
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        self.url = self._wait_for_url()

    def _wait_for_url(self, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(
                    f"the server ended: {self.lines} {self.proc.stderr.read() if self.proc.stderr else ''}"
                )
            self.lines.append(line.rstrip("\n"))
            if line.startswith("judging page: "):
                return line.split()[2]
        raise AssertionError(f"no address printed within {timeout} s: {self.lines}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> tuple[int, str, str]:
        """Send ``sig`` and wait: ``(exit status, the rest of stdout, stderr)``."""
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def kill(self) -> None:
        """``kill -9``: no handler runs, nothing is exported."""
        self.proc.kill()
        self.proc.communicate(timeout=60)
