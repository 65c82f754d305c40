"""A time-out for a whole request of the judge, not for each read.

An HTTP client's time-out bounds each wait for the network: a server that sends its headers and then one byte a
second never trips it, and one request would hold the judge for as long as the server pleases. The judge's
client (Haystack's ``OpenAIChatGenerator`` built by ``irmetrics judge``, through its ``http_client_kwargs``)
gets :class:`DeadlineTransport` instead: each request has a deadline, ``timeout`` seconds after it starts, and
every connect, write and read of it waits at most until then (httpcore's network backend, the public seam
under httpx), the response's body included. A request past its deadline fails as a time-out (httpx's
``ReadTimeout``), which the judge retries like any time-out.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpcore
import httpx

from ..checks import number
from ..errors import JudgeError

_local = threading.local()


def _left(timeout: float | None) -> float | None:
    """What is left of this thread's request deadline, at most ``timeout``; a time-out when nothing is left."""
    deadline = getattr(_local, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout(f"no complete answer within the request's time-out ({_local.timeout:g} s)")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A connection whose every read and write waits at most until the request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> _Stream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's own blocking backend, its connections made :class:`_Stream`."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> _Stream:
        return _Stream(self._inner.connect_tcp(host, port, _left(timeout), local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> _Stream:
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's transport with a deadline per request: ``timeout`` seconds from its start to its last byte.

    :raises JudgeError: ``timeout`` not a positive, finite number of seconds.
    """

    def __init__(self, timeout: float) -> None:
        check_timeout(timeout)
        super().__init__()
        self.timeout = float(timeout)
        # The pool httpx builds by default (its limits: 100 connections, 20 kept alive for 5 s), on a backend
        # that honours the deadline.
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=_Backend(),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        _local.deadline, _local.timeout = time.monotonic() + self.timeout, self.timeout
        try:
            response = super().handle_request(request)
            try:
                response.read()  # the body within the deadline too
            except BaseException:
                response.close()
                raise
            return response
        finally:
            _local.deadline = None


def check_timeout(timeout: Any) -> float:
    """``timeout`` as seconds: a positive, finite number.

    :raises JudgeError: otherwise.
    """
    return float(number(timeout, "the request time-out (seconds)", 0, None, closed="neither", error=JudgeError))


def deadline_client_kwargs(timeout: float) -> dict[str, Any]:
    """``http_client_kwargs`` for Haystack's OpenAI generators: every request ends within ``timeout`` seconds."""
    return {"transport": DeadlineTransport(timeout)}


def bound_requests(generator: Any) -> None:
    """Give an OpenAI generator of a YAML that has a time-out and no client settings of its own a client whose
    time-out bounds whole requests (:func:`deadline_client_kwargs`); any other generator is left as it is.

    :raises JudgeError: a time-out that is not a positive number.
    """
    timeout = getattr(generator, "timeout", None)
    if generator is not None and getattr(generator, "http_client_kwargs", False) is None and timeout is not None:
        generator.http_client_kwargs = deadline_client_kwargs(check_timeout(timeout))


__all__ = ["DeadlineTransport", "bound_requests", "check_timeout", "deadline_client_kwargs"]
