"""A Haystack component for the resume tests: passes documents on after a pause, so a run lasts long
enough to be killed mid-retrieval (``irmetrics beir --allow-module 'tests.*'``)."""

from __future__ import annotations

import time

from haystack import Document, component


@component
class Delay:
    """Returns its documents unchanged after ``seconds``."""

    def __init__(self, seconds: float = 0.03) -> None:
        self.seconds = seconds

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        time.sleep(self.seconds)
        return {"documents": documents}
