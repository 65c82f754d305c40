"""A Haystack component for the concurrency tests: the first query that reaches it creates ``reached``,
then every query waits until ``release`` exists, so a test holds a run mid-retrieval for as long as it
needs (``irmetrics beir --allow-module 'tests.*'``)."""

from __future__ import annotations

import time
from pathlib import Path

from haystack import Document, component


@component
class Gate:
    """Passes its documents on once ``release`` exists (at most ``timeout`` seconds after the first query)."""

    def __init__(self, reached: str, release: str, timeout: float = 120.0) -> None:
        self.reached = reached
        self.release = release
        self.timeout = timeout

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        Path(self.reached).touch()
        deadline = time.monotonic() + self.timeout
        while not Path(self.release).exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return {"documents": documents}
