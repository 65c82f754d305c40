"""A real OpenAI-compatible chat server for the judge's tests and benchmark: ``http.server`` on 127.0.0.1 in a
thread (or a process: ``python tests/judge_server.py PORT LABELS.json DELAY``), answering
``POST /v1/chat/completions`` from known labels, with delays, 429s, 500s, time-outs and garbage mixed in as a
fault plan says. Haystack's ``OpenAIChatGenerator`` reaches it over HTTP: the real client path.

The server reads the pair back from the judge's default user message (``<query>...</query>`` and
``<passage>...</passage>``), so its
labels are keyed by ``(query text, document text)``.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USER = re.compile(r"\A<query>\n(.*?)\n</query>\n\n<passage>\n(.*)\n</passage>\n\nGrade \(0, 1, 2 or 3\):\Z", re.S)
Fault = Callable[[str, str, int], str | None]


def stable_hash(*texts: str) -> int:
    """A hash of the texts that is the same in every process."""
    return int.from_bytes(hashlib.sha256("\0".join(texts).encode("utf-8", "surrogatepass")).digest()[:8], "little")


def mixed_faults(query: str, document: str, attempt: int) -> str | None:
    """The tests' plan: about 1 pair in 8 gets a 429 first, 1 in 8 a 500, 1 in 16 a time-out, 1 in 16 a
    garbage answer (always: it stays unparseable); the retried attempt answers."""
    h = stable_hash(query, document) % 16
    if h == 15:
        return "garbage"
    if attempt == 0:
        return {0: "429", 1: "429", 2: "500", 3: "500", 4: "timeout"}.get(h)
    return None


def answer_text(label: int, query: str, document: str) -> str:
    """The label in one of the forms models answer in: bare, JSON, a sentence ending in it."""
    form = stable_hash(document, query) % 3
    if form == 0:
        return str(label)
    if form == 1:
        return json.dumps({"grade": label, "reason": "as judged"})
    return f"The passage relates to the query as judged, so I would grade it {label}."


class JudgeServer:
    """The server: ``labels[(query, document)] -> grade``; ``delay`` seconds per answer; ``faults`` the plan;
    ``timeout_delay`` how long a time-out holds the request. ``requests`` lists each request's pair and
    attempt, in arrival order."""

    def __init__(
        self,
        labels: dict[tuple[str, str], int],
        *,
        delay: float = 0.0,
        faults: Fault | None = None,
        timeout_delay: float = 2.0,
        port: int = 0,
    ) -> None:
        self.labels = labels
        self.delay = delay
        self.faults = faults
        self.timeout_delay = timeout_delay
        self.requests: list[tuple[str, str, int]] = []
        self.models: list[str] = []
        self.temperatures: list[object] = []
        self._attempts: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes: without this, Nagle's algorithm and the client's
                # delayed ACK hold every answer ~40 ms.
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                status, payload, headers = server.answer(self.path, body)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a time-out)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread: threading.Thread | None = None

    def answer(self, path: str, body: dict) -> tuple[int, dict, dict[str, str]]:
        if path.rstrip("/") != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}, {}
        user = next((m for m in body.get("messages", []) if m.get("role") == "user"), {})
        content = user.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        match = USER.match(content or "")
        if not match:
            return 400, {"error": {"message": "not the judge's prompt"}}, {}
        query, document = match.group(1), match.group(2)
        with self._lock:
            attempt = self._attempts.get((query, document), 0)
            self._attempts[query, document] = attempt + 1
            self.requests.append((query, document, attempt))
            self.models.append(body.get("model"))
            self.temperatures.append(body.get("temperature"))
        fault = self.faults(query, document, attempt) if self.faults else None
        if self.delay:
            time.sleep(self.delay)
        if fault == "429":
            return 429, {"error": {"message": "rate limited", "type": "rate_limit_exceeded"}}, {"retry-after": "0"}
        if fault == "500":
            return 500, {"error": {"message": "the model crashed", "type": "server_error"}}, {}
        if fault == "timeout":
            time.sleep(self.timeout_delay)
        label = self.labels.get((query, document))
        text = "I would need more context to say." if fault == "garbage" or label is None else None
        text = text or answer_text(label, query, document)
        return (
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "m"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(content.split()), "completion_tokens": 3, "total_tokens": 0},
            },
            {},
        )

    def __enter__(self) -> JudgeServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


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
