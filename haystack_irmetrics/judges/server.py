"""A local OpenAI-compatible chat server that answers the judge's default prompt from known labels: for trying
``irmetrics judge`` end to end with no model (what it asks, what it costs, the files it writes, PPI's intervals
with a judge whose error rate you set), and the server the tests judge against.

Run it with what the package installs::

    python -m haystack_irmetrics.judges.server --qrels QRELS --queries QUERIES --corpus CORPUS --port 8766

It prints the URL to give ``irmetrics judge --api-base-url``, then answers ``POST /v1/chat/completions`` (and
``GET /v1/models``) on 127.0.0.1 until stopped. It reads the pair back from the judge's default user message
(the texts between ``<query>`` and ``<passage>`` tags; any other prompt is a 400) and answers the pair's label
in the qrels, in one of the answer forms the judge reads (a bare digit, JSON, a reason and a final ``Grade:``
line; JSON alone when the request carries ``response_format``). With
``--error-rate P`` a share P of the pairs (chosen by a hash of the pair and ``--seed``, the same in every run)
gets another grade, like a judge that errs; a pair the qrels do not judge gets ``--unjudged`` (``0``, or
``none``: an answer with no grade). It is the standard library's ``http.server``, one thread per connection:
a stand-in, not a model server.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..io.tables import json_text
from .grades import REMINDER

#: The port it listens on by default: not the judging page's (``irmetrics assess``, 8765), so both run side by side.
DEFAULT_PORT = 8766
#: The judge's default user message, read back: the query and the passage between their tags.
USER = re.compile(r"\A<query>\n(.*?)\n</query>\n\n<passage>\n(.*)\n</passage>\n\nGrade \(0, 1, 2 or 3\):\Z", re.S)
#: ``(query, document, attempt) -> None`` (answer) or a fault: ``"429"``, ``"500"``, ``"timeout"``, ``"garbage"``.
Fault = Callable[[str, str, int], str | None]
#: ``(query, document, attempt, user message) -> (status, JSON body, headers)``, or ``None`` to answer as usual.
Respond = Callable[[str, str, int, str], "tuple[int, dict, dict[str, str]] | None"]


#: What the server can be told to do unlike a model bound by the request (``JudgeServer(quirks=...)``).
QUIRKS = frozenset({"free_text_first", "refuse_response_format"})


def stable_hash(*texts: str) -> int:
    """A hash of the texts that is the same in every process."""
    return int.from_bytes(hashlib.sha256("\0".join(texts).encode("utf-8", "surrogatepass")).digest()[:8], "little")


def answer_text(label: int, query: str, document: str) -> str:
    """The label in one of the answer forms the judge reads (:mod:`.grades`): bare, JSON, a reason and a final
    ``Grade:`` line."""
    form = stable_hash(document, query) % 3
    if form == 0:
        return str(label)
    if form == 1:
        return json_text({"grade": label, "reason": "as judged"})
    return f"The passage relates to the query as judged.\nGrade: {label}"


def free_text(label: int) -> str:
    """The label in free text that names other numbers too, as a chat model answers when no form binds it: no
    reader of the contract reads it."""
    return f"I'd give it a {label} rather than a {label + 1}."


def _reminded(messages: list[Any]) -> bool:
    """Whether the conversation ends with the judge's reminder of the answer form (a re-ask)."""
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return isinstance(content, str) and content.startswith(REMINDER.split("{", 1)[0])


def completion(text: str | None, model: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat completion holding one answer (``text`` ``None``: a choice with no content)."""
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": usage or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class JudgeServer:
    """The server: ``labels[(query text, document text)] -> grade``; ``delay`` seconds per answer; ``faults`` a
    fault plan, ``respond`` a hook that answers instead; ``quirks`` of :data:`QUIRKS` (``free_text_first``:
    answer in free text no reader reads unless the request binds the answer form, ``response_format``, or
    reminds of it, a re-ask; ``refuse_response_format``: answer 400 to a request carrying ``response_format``, as
    a server without structured output does); ``trickle`` seconds between the bytes of each answer's ``"body"``
    and of its ``"headers"``, as a server that sends slowly; ``unjudged`` what a pair without a label gets (a
    grade, or ``None``: an answer with no grade). ``requests`` lists each request's pair and attempt, in arrival
    order. A subclass may read another prompt (``user``: its groups the query and the document) and answer each
    pair in place of a grade (``answers``): a stand-in of another asker, :mod:`haystack_irmetrics.usefulness.server`.
    """

    #: The user message read back: its groups, the query and the document (the judge's default prompt).
    user: re.Pattern[str] = USER
    #: ``(query, document) -> answer`` in place of a grade, or ``None``.
    answers: Callable[[str, str], str] | None = None

    def __init__(
        self,
        labels: Mapping[tuple[str, str], int],
        *,
        delay: float = 0.0,
        faults: Fault | None = None,
        respond: Respond | None = None,
        timeout_delay: float = 2.0,
        trickle: Mapping[str, float] | None = None,
        unjudged: int | None = None,
        port: int = 0,
        quirks: Sequence[str] = (),
    ) -> None:
        self.labels = labels
        self.delay = delay
        self.faults = faults
        self.respond = respond
        self.timeout_delay = timeout_delay
        self.trickle = {"body": 0.0, "headers": 0.0, **(trickle or {})}
        self.unjudged = unjudged
        unknown = set(quirks) - QUIRKS
        if unknown:
            raise ValueError(f"unknown quirks {sorted(unknown)}: the server knows {sorted(QUIRKS)}")
        self.free_text_first = "free_text_first" in quirks
        self.refuse_response_format = "refuse_response_format" in quirks
        #: Each request's ``response_format`` (``None`` where it carried none) and whether it was a re-ask.
        self.response_formats: list[object] = []
        self.reasks: list[bool] = []
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

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": "local", "object": "model"}]}, {})
                else:
                    self._send(404, {"error": {"message": "no route"}}, {})

            def do_POST(self) -> None:
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                except ValueError:
                    body = {}
                self._send(*server.answer(self.path, body if isinstance(body, dict) else {}))

            def _send(self, status: int, payload: dict, headers: dict[str, str]) -> None:
                data = json_text(payload).encode()
                head = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}"]
                head += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
                head += [f"{k}: {v}" for k, v in headers.items()]
                raw_head = ("\r\n".join(head) + "\r\n\r\n").encode()
                try:
                    server._write(self.wfile, raw_head, server.trickle["headers"])
                    server._write(self.wfile, data, server.trickle["body"])
                except OSError:  # the client gave up (a time-out)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread: threading.Thread | None = None

    @staticmethod
    def _write(out: Any, data: bytes, pause: float) -> None:
        if not pause:
            out.write(data)
            return
        for i in range(len(data)):
            out.write(data[i : i + 1])
            out.flush()
            time.sleep(pause)

    def answer(self, path: str, body: dict) -> tuple[int, dict, dict[str, str]]:
        """The status, JSON body and headers of the answer to a request of ``body`` at ``path``."""
        if path.rstrip("/") != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}, {}
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        user = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), {})
        content = user.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        match = self.user.match(content if isinstance(content, str) else "")
        if not match:
            return 400, {"error": {"message": "not the prompt this server reads"}}, {}
        query, document = match.group(1), match.group(2)
        with self._lock:
            attempt = self._attempts.get((query, document), 0)
            self._attempts[query, document] = attempt + 1
            self.requests.append((query, document, attempt))
            self.models.append(body.get("model"))
            self.temperatures.append(body.get("temperature"))
            self.response_formats.append(body.get("response_format"))
            self.reasks.append(_reminded(messages))
        if self.refuse_response_format and "response_format" in body:
            message = "Unrecognized request argument supplied: response_format"
            return 400, {"error": {"message": message, "type": "invalid_request_error"}}, {}
        if self.respond is not None:
            answered = self.respond(query, document, attempt, content)
            if answered is not None:
                return answered
        fault = self.faults(query, document, attempt) if self.faults else None
        if self.delay:
            time.sleep(self.delay)
        if fault == "429":
            return 429, {"error": {"message": "rate limited", "type": "rate_limit_exceeded"}}, {"retry-after": "0"}
        if fault == "500":
            return 500, {"error": {"message": "the model crashed", "type": "server_error"}}, {}
        if fault == "timeout":
            time.sleep(self.timeout_delay)
        label = self.labels.get((query, document), self.unjudged)
        if self.answers is not None:
            text = self.answers(query, document)
        elif fault == "garbage" or label is None:
            text = "I would need more context to say."
        elif body.get("response_format") or _reminded(messages):
            text = json_text({"grade": label})  # the form the request binds, or the reminder asks for
        elif self.free_text_first:
            text = free_text(label)
        else:
            text = answer_text(label, query, document)
        usage = {"prompt_tokens": len(content.split()), "completion_tokens": 3, "total_tokens": 0}
        return 200, completion(text, body.get("model", "m"), usage), {}

    def serve(self) -> None:
        """Answer in this thread until stopped (Ctrl-C), then close the socket: a server's ``main``."""
        try:
            self.httpd.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self.httpd.server_close()

    def __enter__(self) -> JudgeServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def labels_from_files(qrels: str, queries: str, corpus: str, error_rate: float = 0.0, seed: int = 0) -> dict:
    """``{(query text, document text): grade}`` of a qrels file, the texts from BEIR's queries and corpus as the
    judge sends them (a document's title and text), a share ``error_rate`` of the pairs given another grade
    (the next one up, the top grade down to 0), chosen by a hash of the pair and ``seed``."""
    from ..integration.corpus import corpus_documents
    from ..io import read_qrels
    from ..io.beir_data import beir_file, read_beir_corpus, read_beir_queries
    from .prompt import sendable

    judged = read_qrels(qrels).data
    query_text = read_beir_queries(beir_file(queries, "queries"))
    docs = read_beir_corpus(beir_file(corpus, "corpus"))
    wanted = {d: docs[d] for q in judged for d in judged[q] if d in docs}
    content = {d.id: d.content or "" for d in corpus_documents(wanted)}
    top = max((int(g) for q in judged.values() for g in q.values()), default=3)
    out = {}
    for q, row in judged.items():
        for d, grade in row.items():
            if q in query_text and d in content and query_text[q]:
                grade = int(grade)
                if error_rate and (stable_hash(q, d, str(seed)) % 10_000) < error_rate * 10_000:
                    grade = grade + 1 if grade < top else 0
                out[sendable(query_text[q]), sendable(content[d])] = max(grade, 0)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m haystack_irmetrics.judges.server``: serve known labels until stopped."""
    p = argparse.ArgumentParser(
        prog="python -m haystack_irmetrics.judges.server",
        description="A local OpenAI-compatible chat server answering the judge's default prompt from a qrels file.",
    )
    p.add_argument("--qrels", required=True, help="the labels to answer (TREC or BEIR TSV)")
    p.add_argument("--queries", required=True, help="BEIR queries.jsonl, or a BEIR folder")
    p.add_argument("--corpus", required=True, help="BEIR corpus.jsonl, or a BEIR folder")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port on 127.0.0.1 (0: any free port)")
    p.add_argument("--error-rate", type=float, default=0.0, help="share of pairs answered with another grade")
    p.add_argument("--seed", type=int, default=0, help="which pairs get another grade")
    p.add_argument("--unjudged", default="none", help="the answer to a pair the qrels do not judge: a grade or none")
    p.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = p.parse_args(argv)
    if not 0 <= args.error_rate <= 1:
        p.error(f"--error-rate must be between 0 and 1, got {args.error_rate}")
    unjudged = None if args.unjudged.lower() == "none" else int(args.unjudged)
    labels = labels_from_files(args.qrels, args.queries, args.corpus, args.error_rate, args.seed)
    server = JudgeServer(labels, delay=args.delay, unjudged=unjudged, port=args.port)
    print(f"serving {len(labels)} labelled pairs at {server.url}", flush=True)
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "DEFAULT_PORT",
    "USER",
    "JudgeServer",
    "answer_text",
    "completion",
    "labels_from_files",
    "main",
    "stable_hash",
]
