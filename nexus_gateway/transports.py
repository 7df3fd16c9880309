"""Serving the host-facing MCP server over stdio, streamable HTTP or legacy SSE.

HTTP endpoints validate ``Host`` and ``Origin`` against the bind address (DNS-rebinding protection)
and, when a token is configured, require ``Authorization: Bearer <token>``. Uvicorn logs go to stderr
through our logging setup; stdout stays reserved for the stdio transport.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import signal
import socket
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .exceptions import ConfigError
from .in_flight import InFlight
from .metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE

logger = logging.getLogger(__name__)

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def parse_bind(text: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` → (host, port)."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "", text
    host = host.strip("[]") or default_host
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(f"--http/--sse: expected HOST:PORT, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise ConfigError(f"--http/--sse: port must be 0-65535, got {port}")
    return host, port


def bind_address(host: str, port: int) -> socket.socket:
    """The socket ``--http``/``--sse`` serve on, bound before the gateway connects its upstreams and loads
    its models: a port another process holds, or an address this machine does not have, is then one line
    at once, where uvicorn's own bind failed after the start-up with an exception group's traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"--http/--sse: cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def security_settings(host: str, extra_origins: tuple[str, ...] = ()) -> TransportSecuritySettings:
    """Accept only Host/Origin values that name this endpoint (plus any origins the user allowed)."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        shown = f"[{host}]" if ":" in host else host
        hosts += [f"{shown}:*", shown]
        origins += [f"http://{shown}:*", f"https://{shown}:*"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=origins + list(extra_origins),
    )


class BearerTokenMiddleware:
    """Reject every HTTP request that lacks ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            supplied = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(supplied, self.expected):
                response = JSONResponse(
                    {"error": "unauthorized", "detail": "missing or wrong bearer token"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def warn_if_exposed(host: str, token: str | None) -> None:
    if not is_loopback(host) and not token:
        logger.warning(
            "listening on %s without a token: anyone who can reach this address can call every upstream "
            "tool. Pass --token or set NEXUS_TOKEN.",
            host,
        )


Health = Callable[[], dict[str, Any]]


def health_route(health: Health) -> Route:
    """``GET /healthz``: the gateway's :meth:`~nexus_gateway.gateway.Gateway.health` as JSON; 503 when no
    upstream is connected, so a container orchestrator can tell a sidecar that serves nothing."""

    async def endpoint(request: Request) -> Response:
        report = health()
        return JSONResponse(report, status_code=503 if report["status"] == "unavailable" else 200)

    return Route("/healthz", endpoint=endpoint, methods=["GET"])


Metrics = Callable[[], bytes]


def metrics_route(metrics: Metrics) -> Route:
    """``GET /metrics``: the gateway's Prometheus metrics (``metrics.py``), behind the same token as the
    rest of the endpoint."""

    async def endpoint(request: Request) -> Response:
        return Response(metrics(), media_type=METRICS_CONTENT_TYPE)

    return Route("/metrics", endpoint=endpoint, methods=["GET"])


def service_routes(health: Health | None, metrics: Metrics | None) -> list[Route]:
    """What a service manager reads beside the MCP endpoint: ``/healthz`` and ``/metrics``."""
    return [*([health_route(health)] if health else []), *([metrics_route(metrics)] if metrics else [])]


def http_app(
    server: Server[Any],
    host: str,
    token: str | None,
    origins: tuple[str, ...] = (),
    json_response: bool = False,
    health: Health | None = None,
    metrics: Metrics | None = None,
) -> ASGIApp:
    """Streamable HTTP at ``/mcp``. By default each request is answered on its own event stream, which
    carries a call's progress and the requests an upstream relays to the host during it; with
    ``json_response`` each is one JSON body: 1.3× the calls per second here (``docs/benchmarks.md``),
    but nothing can reach the host in the middle of a call."""
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path="/mcp",
        host=host,
        json_response=json_response,
        transport_security=security_settings(host, origins),
        custom_starlette_routes=service_routes(health, metrics) or None,
    )
    return BearerTokenMiddleware(app, token) if token else app


def sse_app(
    server: Server[Any],
    host: str,
    token: str | None,
    origins: tuple[str, ...] = (),
    health: Health | None = None,
    metrics: Metrics | None = None,
) -> ASGIApp:
    transport = SseServerTransport("/messages/", security_settings=security_settings(host, origins))

    async def handle_sse(request: Request) -> Response:
        async with transport.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return Response()

    app: ASGIApp = Starlette(
        routes=[
            Route("/sse", endpoint=handle_sse, methods=["GET"]),
            Mount("/messages/", app=transport.handle_post_message),
            *service_routes(health, metrics),
        ]
    )
    return BearerTokenMiddleware(app, token) if token else app


# After the calls in flight have answered, how long the hosts' idle event streams get to close.
STREAMS_GRACE_S = 3
# Legacy SSE answers a call on the host's event stream, not on the call's own request: time to flush it.
SSE_FLUSH_S = 0.25


class RequestsInFlight:
    """ASGI middleware counting the HTTP requests being answered, the long-lived ``GET`` event streams
    aside: a streamable-HTTP call's request ends once its answer is written, so none in flight means
    every answer has left."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests = InFlight()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") == "GET":
            await self.app(scope, receive, send)
            return
        with self.requests.one():
            await self.app(scope, receive, send)


class _UvicornServer(uvicorn.Server):
    """uvicorn without its own signal handlers: SIGTERM would end every event stream at once (through
    ``sse_starlette``), a call's answer with it. :func:`serve_asgi` handles the signals instead."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_asgi(
    app: ASGIApp,
    sock: socket.socket,
    drain: Callable[[], Awaitable[None]] | None = None,
    drain_s: float = 600.0,
) -> None:
    """Serve on ``sock`` (:func:`bind_address`) until SIGTERM or SIGINT; then stop taking calls, wait (up
    to ``drain_s``) for the calls in flight to answer (``drain``) and for their answers to leave, and only
    then shut the server down, so a restart loses no answer a host is waiting for. A second signal stops
    at once."""
    counted = RequestsInFlight(app)
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(
        counted,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=STREAMS_GRACE_S,
    )
    server = _UvicornServer(config)
    logger.info("serving MCP on http://%s:%d", host, port)

    async def drained() -> None:
        with anyio.move_on_after(drain_s):
            if drain is not None:
                await drain()
            await counted.requests.idle()
            await anyio.sleep(SSE_FLUSH_S)

    async with anyio.create_task_group() as group:
        group.start_soon(_stop_on_signal, server, drained)
        await server.serve(sockets=[sock])
        group.cancel_scope.cancel()


async def _stop_on_signal(server: uvicorn.Server, drained: Callable[[], Awaitable[None]]) -> None:
    try:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
            await _stop_when_signalled(received, server, drained)
    except NotImplementedError:  # no signal handlers on this platform (Windows): Ctrl+C stops at once
        return


async def _stop_when_signalled(
    received: AsyncIterator[int], server: uvicorn.Server, drained: Callable[[], Awaitable[None]]
) -> None:
    async def drain_then_exit() -> None:
        await drained()
        _end_event_streams()
        server.should_exit = True

    async with anyio.create_task_group() as group:
        async for _ in received:
            logger.info("stopping once the calls in flight have answered (send the signal again to stop now)")
            group.start_soon(drain_then_exit)
            async for _ in received:  # a second signal: stop now
                logger.warning("stopping now: calls in flight are cut off")
                server.should_exit = server.force_exit = True
                _end_event_streams()
                group.cancel_scope.cancel()
                return


def _streams_closing(record: logging.LogRecord) -> bool:
    """uvicorn reports each event stream closed at shutdown as an unfinished response; it is not one."""
    return "returned without completing response" not in record.getMessage()


def _end_event_streams() -> None:
    """Tell ``sse_starlette`` (the SDK's event streams) to close the idle streams hosts hold open for
    notifications; uvicorn would otherwise wait ``STREAMS_GRACE_S`` for them."""
    logging.getLogger("uvicorn.error").addFilter(_streams_closing)
    try:
        from sse_starlette.sse import AppStatus
    except ImportError:  # the SDK no longer uses it: the grace period still bounds the wait
        return
    AppStatus.should_exit = True


class PipeLines:
    """Lines from a pipe, read on the event loop (the SDK's default reads stdin in a worker thread).

    Every thread hop costs the gateway latency on each call; a pipe can be waited on directly.
    """

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.fd = fd
        self.partial = b""
        self.lines: deque[bytes] = deque()

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while not self.lines:
            await anyio.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                if self.partial:
                    line, self.partial = self.partial, b""
                    return line.decode("utf-8", "replace")
                raise StopAsyncIteration
            *complete, self.partial = (self.partial + chunk).split(b"\n")
            self.lines.extend(complete)
        return self.lines.popleft().decode("utf-8", "replace")


class PipeWriter:
    """Writes to a pipe on the event loop, waiting only when the pipe is full."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.fd = fd

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                written = os.write(self.fd, data)
            except BlockingIOError:
                await anyio.wait_writable(self.fd)
                continue
            data = data[written:]

    async def flush(self) -> None:
        return None


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode) or stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False


@contextmanager
def claimed_stdio() -> Iterator[tuple[int, int] | None]:
    """Take fds 0/1 for the wire and point them at /dev/null and stderr, so stray prints miss the wire.

    Yields private duplicates of the wire fds, or None when they are not pipes (a file or a tty),
    in which case the SDK's own threaded stdio transport is used.
    """
    if not (_is_pipe(0) and _is_pipe(1)):
        yield None
        return
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    try:
        yield wire_in, wire_out
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out, wire_in, wire_out):
            os.close(fd)


async def serve_stdio(server: Server[Any]) -> None:
    with claimed_stdio() as wire:
        if wire is None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            return
        stdin, stdout = PipeLines(wire[0]), PipeWriter(wire[1])
        async with stdio_server(stdin, stdout) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())
