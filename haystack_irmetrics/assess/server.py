"""The judging page served on 127.0.0.1: a Starlette app over one :class:`~.session.JudgingSession`, run by
uvicorn (``pip install 'haystack-irmetrics[assess]'``).

Routes: ``GET /`` (the page), ``GET /api/state``, ``POST /api/label`` (``query_id``, ``doc_id``, ``label``, and
optionally ``note`` and ``unsure``), ``POST /api/skip`` (``query_id``, ``doc_id``), ``POST /api/undo``, ``POST
/api/open`` (a pair judged before, shown again), ``POST /api/back`` (the pair judged before the one named) and ``POST /api/relabel`` (as label, for a pair judged before).
Each answer is the state the page shows next, sent after the keypress is committed to the store; with
``history`` true in the body (``?history=1`` on the state), it holds the assessor's history too; with ``history``
the ``history_version`` the page holds, only what changed since (the page keeps its history up to date with it).

**Safety.** The server listens on 127.0.0.1 only, and answers only requests addressed to it by that name
(``Host`` 127.0.0.1 or localhost: a DNS-rebound name is refused). The page loads nothing: its style and script
are inline, allowed by a per-response nonce in a Content-Security-Policy that also forbids any other source,
frames and forms. Every API request carries the folder's token (``X-Assess-Token``, written into the page, kept
in the store so a page outlives a restart) and a POST from another origin (``Origin``, ``Sec-Fetch-Site``) is
refused, so another site open in the browser cannot judge for the person. The folder is locked while a server
judges into it (:func:`~.store.judging_folder`): a second server on
it stops at once, before reading or changing anything there.

**Stopping.** Ctrl-C or SIGTERM stops the server normally, and the folder's ``qrels.tsv`` and
``judgments.jsonl`` are written (:func:`~.export.export`); a killed server loses nothing either, as the store
holds every keypress, but its files are written by the next stop or by ``irmetrics assess export``.
"""

from __future__ import annotations

import hmac
import json
import secrets
import signal
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from .._extras import require
from ..checks import whole
from ..errors import AssessError, StalePairError
from .export import Exported, export
from .page import render_page
from .session import HISTORY_VERSION, JudgingSession

#: The only address the server listens on.
HOST = "127.0.0.1"
#: The names a request may address the server by (``Host``).
ALLOWED_HOSTS = ("127.0.0.1", "localhost")
#: The largest request body read (a keypress is a few dozen bytes).
MAX_BODY = 16_384
#: Headers of every answer.
SAFE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
#: The policy of answers other than the page: nothing may load from them.
API_POLICY = "default-src 'none'; frame-ancestors 'none'"


def page_policy(nonce: str) -> str:
    """The page's Content-Security-Policy: its own inline style and script (by ``nonce``), requests to its
    own origin, nothing else."""
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
        "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def require_server() -> None:
    """Starlette and uvicorn, the ``assess`` extra."""
    require("starlette", "uvicorn", purpose="the judging page (irmetrics assess)", extra="assess")


class _SafeHeaders:
    """ASGI middleware: :data:`SAFE_HEADERS` on every answer, and :data:`API_POLICY` where no policy is set."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                from starlette.datastructures import MutableHeaders

                headers = MutableHeaders(scope=message)
                for name, value in SAFE_HEADERS.items():
                    headers[name] = value
                if "content-security-policy" not in headers:
                    headers["Content-Security-Policy"] = API_POLICY
            await send(message)

        await self.app(scope, receive, with_headers)


def create_app(
    session: JudgingSession,
    token: str,
    allowed_hosts: tuple[str, ...] = ALLOWED_HOSTS,
    on_start: Callable[[], None] | None = None,
) -> Any:
    """The Starlette app of the judging page over ``session``; API requests must carry ``token``; ``on_start``
    is called once the server runs (its lifespan's start)."""
    require_server()
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route

    async def index(request: Request) -> HTMLResponse:
        nonce = secrets.token_urlsafe(18)
        page = render_page(token, nonce, session.assessor, session.options.guidelines)
        return HTMLResponse(page, headers={"Content-Security-Policy": page_policy(nonce)})

    def api(action: Callable[[dict], dict]) -> Callable:
        async def endpoint(request: Request) -> JSONResponse:
            why = _refused(request, token)
            if why is not None:
                return _refuse(403, why)
            try:
                data = await _read_body(request) if request.method == "POST" else dict(request.query_params)
                return JSONResponse({"state": action(data)})
            except StalePairError as e:
                return _refuse(409, f"not saved: {e} (the page now shows the current one)", session.state())
            except AssessError as e:
                return _refuse(400, f"not saved: {e}", session.state())

        return endpoint

    def marked(data: dict) -> tuple[Any, Any]:
        return data.get("note"), data.get("unsure", False)

    def listed(data: dict) -> bool | str:
        held = data.get("history")
        if isinstance(held, str) and HISTORY_VERSION.fullmatch(held):
            return held  # the version the page holds: it is sent what changed since
        return held in (True, "1")

    routes = [
        Route("/", index, methods=["GET"]),
        Route("/api/state", api(lambda data: session.state(history=listed(data))), methods=["GET"]),
        Route(
            "/api/label",
            api(lambda data: session.label(*_pair_of(data), data.get("label"), marked(data), listed(data))),
            methods=["POST"],
        ),
        Route(
            "/api/relabel",
            api(lambda data: session.relabel(*_pair_of(data), data.get("label"), marked(data), listed(data))),
            methods=["POST"],
        ),
        Route("/api/back", api(lambda data: session.back(*_maybe_pair(data), listed(data))), methods=["POST"]),
        Route("/api/open", api(lambda data: session.open(*_pair_of(data), listed(data))), methods=["POST"]),
        Route("/api/skip", api(lambda data: session.skip(*_pair_of(data), listed(data))), methods=["POST"]),
        Route("/api/undo", api(lambda data: session.undo(listed(data))), methods=["POST"]),
    ]
    middleware = [Middleware(_SafeHeaders), Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        if on_start is not None:
            on_start()
        yield

    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def _refuse(status: int, error: str, state: dict | None = None) -> Any:
    """The JSON answer refusing a request: its ``error`` and, where the page must redraw, the ``state``."""
    from starlette.responses import JSONResponse

    return JSONResponse({"error": error, **({"state": state} if state is not None else {})}, status_code=status)


def _refused(request: Any, token: str) -> str | None:
    """Why the request is refused (no page token; a POST from another origin or site), or ``None``."""
    given = request.headers.get("x-assess-token", "")
    if not hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8")):
        return "refused: the request does not carry this page's token (reload the page)"
    if request.method == "POST":
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
            return f"refused: a request from another origin ({origin})"
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return "refused: a request from another site"
    return None


async def _read_body(request: Any) -> dict:
    """The request's JSON object, at most :data:`MAX_BODY` bytes."""
    body = await request.body()
    if len(body) > MAX_BODY:
        raise AssessError(f"a request of {len(body)} bytes (at most {MAX_BODY})")
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        raise AssessError("the request is not JSON") from None
    except RecursionError:  # nested deeper than the parser goes: 16 KB of "[" is enough
        raise AssessError("the request is JSON nested too deep to read") from None
    if not isinstance(data, dict):
        raise AssessError("the request is not a JSON object")
    return data


def _pair_of(data: dict) -> tuple[str, str]:
    q, d = data.get("query_id"), data.get("doc_id")
    if not isinstance(q, str) or not isinstance(d, str):
        raise AssessError("the request names no pair (query_id, doc_id)")
    return q, d


def _maybe_pair(data: dict) -> tuple[str | None, str | None]:
    """The pair a request names, or ``(None, None)`` when it names none."""
    return _pair_of(data) if "query_id" in data or "doc_id" in data else (None, None)


def check_port(port: int) -> int:
    """``port`` as the page's: a whole number from 0 (a free port) to 65535.

    :raises AssessError: naming it.
    """
    return whole(port, "--port", least=0, most=65535, error=AssessError)


def listen(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port`` (0: a free port), for :func:`serve`: bound before the
    judging folder is made, so a port in use changes nothing.

    :raises AssessError: a port out of range, or one that cannot be bound (in use), named.
    """
    check_port(port)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError as e:
        sock.close()
        raise AssessError(
            f"cannot listen on {HOST}:{port}: {e.strerror or e} (give another --port, or --port 0 for a free one)"
        ) from None
    return sock


def serve(
    session: JudgingSession,
    *,
    port: int = 0,
    announce: Callable[[str], None] = print,
    sock: socket.socket | None = None,
) -> Exported | None:
    """Serve the judging page of ``session`` until stopped (Ctrl-C, SIGTERM), then export its folder. Call it
    inside :func:`judging_folder`.

    :param announce: told the page's address once the server runs (the page answers from then on).
    :param sock: a socket :func:`listen` made (``port`` is then not used); closed when the server stops.
    :returns: what the export on stopping wrote (``None`` when nothing is labelled yet).
    :raises AssessError: the port cannot be bound.
    """
    require_server()
    import uvicorn

    sock = listen(port) if sock is None else sock
    url = f"http://{HOST}:{sock.getsockname()[1]}/"
    app = create_app(session, session.store.token(), on_start=lambda: announce(url))
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)

    def stop(*_: Any) -> None:
        # SIGTERM before uvicorn took the signals over (it handles SIGINT and SIGTERM while it runs, then raises
        # them again): stop as uvicorn would, and let the export run
        server.should_exit = True

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    if not session.store.judgments():
        return None
    return export(session.store.path.parent)


__all__ = ["ALLOWED_HOSTS", "HOST", "check_port", "create_app", "listen", "page_policy", "serve"]
