"""The judge's tests' server: the package's local OpenAI-compatible server
(:mod:`haystack_irmetrics.judges.server`) with the tests' fault plan, and the process entry point of the
benchmark (``python tests/judge_server.py PORT LABELS.json DELAY``). Haystack's ``OpenAIChatGenerator`` reaches
it over HTTP: the real client path.
"""

from __future__ import annotations

import json
import sys

from haystack_irmetrics.judges.server import USER, JudgeServer, answer_text, completion, stable_hash

__all__ = ["USER", "JudgeServer", "answer_text", "completion", "mixed_faults", "stable_hash"]


def mixed_faults(query: str, document: str, attempt: int) -> str | None:
    """The tests' plan: about 1 pair in 8 gets a 429 first, 1 in 8 a 500, 1 in 16 a time-out, 1 in 16 a
    garbage answer (always: it stays unparseable); the retried attempt answers."""
    h = stable_hash(query, document) % 16
    if h == 15:
        return "garbage"
    if attempt == 0:
        return {0: "429", 1: "429", 2: "500", 3: "500", 4: "timeout"}.get(h)
    return None


def main(argv: list[str]) -> None:
    """Serve in this process: ``PORT LABELS.json DELAY`` (labels: a list of ``[query, document, grade]``)."""
    port, labels_file, delay = int(argv[0]), argv[1], float(argv[2])
    with open(labels_file, encoding="utf-8") as f:
        labels = {(q, d): g for q, d, g in json.load(f)}
    server = JudgeServer(labels, delay=delay, port=port)
    print(server.url, flush=True)
    server.httpd.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
