"""The upstream pool: one long-lived, self-healing MCP client connection per upstream server.

Each :class:`Upstream` runs ``serve()`` for the gateway's lifetime: connect (stdio, streamable HTTP or
SSE, through the ``mcp`` SDK), initialise, read the whole paginated tool list, hand it to the registry,
then watch the connection. A connection is *lost* when the transport reaches end of stream (a stdio
child died), a transport error surfaces (an HTTP upstream dropped), or a keep-alive ping fails. On loss
every in-flight call is cancelled at once and answered with :class:`UpstreamUnavailable`, and the
upstream reconnects with exponential backoff. One failing upstream never blocks or breaks another.
"""

from __future__ import annotations

import enum
import logging
import math
import os
import threading
import time
import warnings
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.abc
import mcp_types as types
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession, MCPDeprecationWarning, MCPError, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter

from .config import GatewaySettings, UpstreamConfig
from .exceptions import UpstreamError, UpstreamProtocolError, UpstreamTimeout, UpstreamUnavailable
from .host_relay import HostLink, UpstreamRequests
from .oauth import upstream_auth

logger = logging.getLogger(__name__)

CLIENT_INFO = types.Implementation(name="nexus-gateway", version="0.1.0")
FIRST_BACKOFF = 0.2
PING_TIMEOUT = 10.0
MAX_TOOL_PAGES = 1000
WIRE_RESULT: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
MCP_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

ToolsCallback = Callable[[str, list[dict[str, Any]]], None]
# (server, the resource's URI as the upstream names it), when the upstream says a subscribed resource changed
ResourceCallback = Callable[[str, str], Coroutine[Any, Any, None]]
# (server, "resources" or "prompts"), when the upstream says that list changed, or has just connected
ListCallback = Callable[[str, str], Coroutine[Any, Any, None]]


class UpstreamState(enum.Enum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    FAILED = "failed"
    STOPPED = "stopped"


@dataclass(frozen=True)
class UpstreamStatus:
    """A snapshot for ``nexus-gateway status`` and logs."""

    name: str
    transport: str
    state: UpstreamState
    tool_count: int
    error: str | None
    connect_ms: float | None
    attempts: int


def tool_to_wire(tool: types.Tool) -> dict[str, Any]:
    """The tool as it travels in ``tools/list`` (camelCase, no nulls)."""
    return tool.model_dump(by_alias=True, mode="json", exclude_none=True)


def describe_error(exc: BaseException, command: str | None = None) -> str:
    """One line for a status table: the innermost meaningful message of an exception (group); a command
    that cannot start is named (the stdio client's error often carries no file name)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    if isinstance(exc, TimeoutError):
        text = "timed out while connecting"
    elif isinstance(exc, FileNotFoundError | PermissionError):
        named = exc.filename or command
        text = f"cannot start the command{f' {named!r}' if named else ''}: {exc.strerror}"
    return " ".join(text.split())[:300]


class StderrLog:
    """A stdio upstream's stderr, line by line into our log under the upstream's name (at INFO: a
    one-shot command at its default level stays quiet, ``serve`` shows it), the last lines kept so that
    a failure can say what the server said before it went."""

    def __init__(self, name: str, keep: int = 3) -> None:
        self.name = name
        self.last: deque[str] = deque(maxlen=keep)

    @asynccontextmanager
    async def pipe(self) -> AsyncIterator[TextIO]:
        self.last.clear()  # each connection attempt speaks for itself
        read_fd, write_fd = os.pipe()
        reader = threading.Thread(target=self._pump, args=(read_fd,), name=f"stderr-{self.name}", daemon=True)
        reader.start()
        writer = os.fdopen(write_fd, "w")
        try:
            yield writer
        finally:
            writer.close()  # the reader sees the end once the server's copy is closed too
            with anyio.CancelScope(shield=True):  # so a failure's message has the last lines
                await anyio.to_thread.run_sync(reader.join, 0.5)

    def _pump(self, read_fd: int) -> None:
        with os.fdopen(read_fd, "rb") as lines:
            for raw in lines:
                line = raw.decode("utf-8", errors="replace").rstrip()
                if line:
                    self.last.append(line)
                    logger.info("upstream %s says: %s", self.name, line)

    def explain(self, error: str) -> str:
        """The error, with the server's own last words when it left any."""
        return f"{error} (its stderr: {self.last[-1][:200]})" if self.last else error


@dataclass
class CallClock:
    """One request's deadline. It starts ``timeout`` away; each progress report of the upstream pushes it
    to ``timeout`` after the report (MCP lets a client reset its timeout on progress: a long build that
    says how it is doing is not cut off), but never past ``limit`` (``max_call_timeout`` after the start),
    so a tool that keeps reporting cannot hold a call forever. The host's time answering a request the
    upstream relays moves it on too (``host_relay.deadlines_paused``)."""

    timeout: float
    started: float
    deadline: float
    limit: float
    progressed: int = 0
    scope: anyio.CancelScope | None = None  # the attempt in flight, whose deadline this moves

    @classmethod
    def start(cls, timeout: float, longest: float) -> CallClock:
        now = anyio.current_time()
        return cls(timeout, now, now + timeout, now + max(longest, timeout))

    def progress(self) -> None:
        self.progressed += 1
        pushed = min(anyio.current_time() + self.timeout, self.limit)
        scope = self.scope
        if scope is None:
            self.deadline = max(self.deadline, pushed)
        elif not math.isinf(scope.deadline):  # infinite: paused while the host answers
            scope.deadline = max(scope.deadline, pushed)

    def expired(self, what: str) -> str:
        if self.progressed and self.deadline >= self.limit:
            return f"{what}: still running after {self.limit - self.started:g}s, the longest a call may take"
        if self.progressed:
            return f"{what}: no answer within {self.timeout:g}s of its last progress report"
        return f"{what}: no answer within {self.timeout:g}s"


class _LostMidCall(Exception):
    """The connection died while a request was in flight."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Connection:
    """One live session plus the calls in flight on it: each call's cancel scope, and the host request
    it serves (where the upstream's own requests during the call are relayed, ``host_relay.py``)."""

    def __init__(self, session: ClientSession, on_lost: Callable[[_Connection], None]) -> None:
        self.session = session
        self.on_lost = on_lost
        self.inflight: dict[anyio.CancelScope, HostLink | None] = {}
        self.lost = anyio.Event()
        self.lost_reason = ""
        self._drained: anyio.Event | None = None

    def ended(self, scope: anyio.CancelScope) -> None:
        """A call on this connection ended; the last one to end wakes whoever waits in :meth:`drained`."""
        self.inflight.pop(scope, None)
        if not self.inflight and self._drained is not None:
            self._drained.set()

    async def drained(self) -> None:
        """Return once no call is in flight here (a lost connection cancels its calls, so it drains too)."""
        while self.inflight:
            if self._drained is None or self._drained.is_set():
                self._drained = anyio.Event()  # shared by every waiter until it fires
            await self._drained.wait()

    def lose(self, reason: str) -> None:
        if self.lost.is_set():
            return
        self.lost_reason = reason
        self.lost.set()
        self.on_lost(self)
        for scope in list(self.inflight):
            scope.cancel()


class Upstream:
    """One upstream server: connection loop, tool ingest, calls with timeout and loss handling."""

    def __init__(
        self,
        config: UpstreamConfig,
        settings: GatewaySettings,
        on_tools: ToolsCallback,
        on_resource_updated: ResourceCallback | None = None,
        on_list_changed: ListCallback | None = None,
        auth_dir: Path | None = None,
    ) -> None:
        self.config = config
        self.settings = settings
        self.auth_dir = auth_dir  # where `nexus-gateway login` stored OAuth tokens (oauth.py); None: no OAuth
        self.on_tools = on_tools
        self.on_resource_updated = on_resource_updated
        self.on_list_changed = on_list_changed
        self.name = config.name
        self.state = UpstreamState.CONNECTING
        self.error: str | None = None
        self.connect_ms: float | None = None
        # set when the config removed or replaced this upstream: it answers the calls in flight, takes no
        # new ones (the pool no longer hands it out) and no longer feeds the registry
        self.retiring = False
        # why the transport is failing, when it says so before it unwinds (a login that ended, oauth.py):
        # the connection's calls are told this instead of a generic loss
        self._refused: str | None = None
        self.attempts = 0
        self.tool_count = 0
        self.first_attempt = anyio.Event()
        self._connection: _Connection | None = None
        self._ready = anyio.Event()
        self.stderr = StderrLog(self.name)
        # The upstream's resources some host is subscribed to (by the upstream's own URIs)
        self.subscriptions: set[str] = set()

    @property
    def call_timeout(self) -> float:
        """How long one of this server's calls may go without an answer or a progress report: its own
        ``timeout`` (as Cline and Roo Code write it) or ``nexus.call_timeout``."""
        return self.config.call_timeout or self.settings.call_timeout

    # ##### Public API #####

    def status(self) -> UpstreamStatus:
        return UpstreamStatus(
            name=self.name,
            transport=self.config.transport,
            state=self.state,
            tool_count=self.tool_count,
            error=self.error,
            connect_ms=self.connect_ms,
            attempts=self.attempts,
        )

    @property
    def capabilities(self) -> types.ServerCapabilities | None:
        connection = self._connection
        return connection.session.server_capabilities if connection else None

    async def serve(self) -> None:
        """Keep a connection up until cancelled: connect, watch, reconnect with backoff."""
        backoff = FIRST_BACKOFF
        try:
            while True:
                self.attempts += 1
                was_connected = False
                try:
                    was_connected = await self._run_connection()
                except Exception as exc:
                    error = self.stderr.explain(describe_error(exc, self.config.command))
                    self._log_failure(error, repeated=error == self.error)
                    self.error = error
                self.state = UpstreamState.FAILED
                self.first_attempt.set()
                if was_connected:
                    backoff = FIRST_BACKOFF
                logger.info("upstream %s: reconnecting in %.1fs", self.name, backoff)
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, self.settings.max_backoff)
        finally:
            self.state = UpstreamState.STOPPED
            self.first_attempt.set()
            self._ready.set()  # a call waiting for a connection learns at once that none will come

    def _log_failure(self, error: str, *, repeated: bool) -> None:
        """A failure to connect, once at WARNING: a server that cannot start (a missing token, a folder
        that is no git repository) fails the same way on every retry, and a line per retry buries the
        rest of the log. The same error again goes to INFO with the attempt's number."""
        if repeated:
            logger.info("upstream %s: still failing (attempt %d): %s", self.name, self.attempts, error)
        else:
            logger.warning("upstream %s: %s (retrying; repeats are logged at INFO)", self.name, error)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        host: HostLink | None = None,
        repeatable: bool = False,
    ) -> dict[str, Any]:
        """Forward one ``tools/call``; answers within the call timeout whatever the upstream does (the time
        the host takes to answer a request the upstream relays through ``host`` aside; progress reports
        push it on, see :class:`CallClock`).

        ``repeatable``: the upstream marks the tool read-only or idempotent, so a call whose connection
        dies mid-way is sent once more on the next connection instead of failing (a restarting server
        loses no read). Any other call fails and says it may have run: repeating it could apply it twice.

        The result stays in wire form (the SDK still checks it against the protocol version): a
        proxy has no use for typed models, and building then dumping them on every call is most of
        what a forward would otherwise cost.
        """
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
        clock = CallClock.start(self.call_timeout, max(self.call_timeout, self.settings.max_call_timeout))
        to_host = host.progress if host is not None else None

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            clock.progress()
            if to_host is not None:
                await to_host(progress, total, message)

        async def send(session: ClientSession) -> dict[str, Any]:
            return await session.send_request(request, WIRE_RESULT, progress_callback=on_progress)  # type: ignore[type-var]

        result: dict[str, Any] = await self.request(
            send, clock=clock, what=f"tools/call {name}", host=host, repeatable=repeatable
        )
        return result

    def stop(self, reason: str) -> None:
        """Drop the connection for ``reason`` (the calls in flight fail saying it) before ``serve`` is
        cancelled."""
        if self._connection is not None:
            self._connection.lose(reason)

    async def subscribe(self, uri: str, on: bool) -> None:
        """Subscribe to one of the upstream's resources (or leave it), and remember it: a new connection
        is a new session that knows no subscription, so each connection makes them again."""

        async def send(session: ClientSession) -> Any:
            return await _subscription(session, uri, on)

        await self.request(send, what=f"resources/{'' if on else 'un'}subscribe {uri}", repeatable=True)
        if on:
            self.subscriptions.add(uri)
        else:
            self.subscriptions.discard(uri)

    async def request(
        self,
        send: Callable[[ClientSession], Awaitable[Any]],
        *,
        clock: CallClock | None = None,
        what: str,
        host: HostLink | None = None,
        repeatable: bool = False,
    ) -> Any:
        """Run ``send(session)`` on the live connection with timeout (``clock``; default: ``call_timeout``)
        and loss handling; a ``repeatable`` request whose connection is lost mid-way is sent once more,
        before the same deadline."""
        clock = clock or CallClock.start(self.call_timeout, self.call_timeout)
        try:
            return await self._send_once(send, clock, what, host)
        except _LostMidCall as lost:
            if not repeatable:
                raise UpstreamUnavailable(
                    self.name, f"{what}: connection lost during the call ({lost.reason}); it may have run"
                ) from None
            if clock.deadline <= anyio.current_time():
                raise UpstreamUnavailable(
                    self.name, f"{what}: connection lost during the call ({lost.reason})"
                ) from None
            logger.warning(
                "upstream %s: connection lost during %s (%s); sending it again (the tool is marked read-only "
                "or idempotent)",
                self.name,
                what,
                lost.reason,
            )
        try:
            return await self._send_once(send, clock, what, host)
        except _LostMidCall as lost:
            raise UpstreamUnavailable(
                self.name, f"{what}: connection lost during the call, twice ({lost.reason})"
            ) from None

    async def _send_once(
        self,
        send: Callable[[ClientSession], Awaitable[Any]],
        clock: CallClock,
        what: str,
        host: HostLink | None,
    ) -> Any:
        """One attempt before the clock's deadline: the answer, or :class:`_LostMidCall` when the connection
        died under it (the caller decides whether to repeat), or :class:`UpstreamTimeout`."""
        connection = self._connection
        if connection is None or connection.lost.is_set():
            remaining = max(clock.deadline - anyio.current_time(), 0.001)
            connection = await self._wait_connected(min(remaining, self.settings.connect_timeout))
        # One scope serves both the deadline and loss of the connection (cancelled by _Connection.lose).
        with anyio.CancelScope(deadline=clock.deadline) as scope:
            connection.inflight[scope] = host
            clock.scope = scope
            try:
                return await send(connection.session)
            except MCPError as exc:
                if exc.error.code == types.CONNECTION_CLOSED:
                    connection.lose("connection closed")
                    raise _LostMidCall("connection closed") from None
                raise UpstreamProtocolError(self.name, f"{what}: {exc.error.message}") from exc
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                connection.lose(describe_error(exc))
                raise _LostMidCall(describe_error(exc)) from None
            finally:
                connection.ended(scope)
                clock.scope = None
                clock.deadline = scope.deadline
        if connection.lost.is_set():
            raise _LostMidCall(connection.lost_reason)
        raise UpstreamTimeout(self.name, clock.expired(what))

    # ##### Connection #####

    def _forget(self, connection: _Connection) -> None:
        """At the moment ``connection`` is lost, so that a call arriving next (or repeated) waits for the
        next connection instead of finding the dead one still marked ready."""
        if self._connection is connection:
            self._connection = None
            self._ready = anyio.Event()

    async def _wait_connected(self, timeout: float) -> _Connection:
        if self.state is UpstreamState.STOPPED:  # removed from the configuration: no connection will come
            raise UpstreamUnavailable(self.name, "stopped (no longer in the configuration)")
        with anyio.move_on_after(timeout):
            await self._ready.wait()
        connection = self._connection
        if connection is None or connection.lost.is_set():
            detail = f": {self.error}" if self.error else ""
            raise UpstreamUnavailable(self.name, f"not connected ({self.state.value}{detail})")
        return connection

    def _refuse(self, reason: str) -> None:
        self._refused = reason
        if self._connection is not None:
            self._connection.lose(reason)

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        if config.transport == "stdio":
            params = StdioServerParameters(
                command=config.command or "", args=list(config.args), env=config.env, cwd=config.cwd
            )
            async with self.stderr.pipe() as errlog, stdio_client(params, errlog=errlog) as streams:
                yield streams
            return
        self._refused = None
        auth = upstream_auth(config, self.auth_dir, self._refuse) if self.auth_dir is not None else None
        if config.transport == "http":
            async with (
                create_mcp_http_client(headers=config.headers or None, auth=auth) as http,
                streamable_http_client(config.url or "", http_client=http) as streams,
            ):
                yield streams
        else:
            async with sse_client(config.url or "", headers=config.headers or None, auth=auth) as streams:
                yield streams

    async def _run_connection(self) -> bool:
        """One connection's whole life; returns whether it got as far as serving."""
        started = time.perf_counter()
        async with AsyncExitStack() as stack:
            raw_read, write = await stack.enter_async_context(self._transport())
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            send_end, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            eof = anyio.Event()
            group.start_soon(_pump, raw_read, send_end, eof)
            holder: list[_Connection] = []
            requests = UpstreamRequests(self.name, lambda: holder[0].inflight if holder else {})

            async def on_message(message: Any) -> None:
                await self._on_message(message, holder, group)

            session = await stack.enter_async_context(
                ClientSession(
                    read,
                    write,
                    message_handler=on_message,
                    client_info=CLIENT_INFO,
                    sampling_callback=requests.sampling,
                    elicitation_callback=requests.elicitation,
                    logging_callback=self._log,
                )
            )
            with anyio.fail_after(self.settings.connect_timeout):
                await session.initialize()
                tools = await self._list_tools(session)
                await self._subscribe_again(session)
            connection = _Connection(session, self._forget)
            holder.append(connection)
            self._ingest(tools)
            self.connect_ms = (time.perf_counter() - started) * 1000
            self.error = None
            self.stderr.last.clear()  # a start-up banner explains no later loss
            self._connection = connection
            self.state = UpstreamState.CONNECTED
            self._ready.set()
            self.first_attempt.set()
            logger.info("upstream %s: connected, %d tools (%.0f ms)", self.name, len(tools), self.connect_ms)
            capabilities = session.server_capabilities
            for kind in ("resources", "prompts"):  # what it serves joins the hosts' lists
                if self.on_list_changed is not None and capabilities is not None and getattr(capabilities, kind):
                    group.start_soon(self.on_list_changed, self.name, kind)
            try:
                group.start_soon(self._keepalive, connection)
                group.start_soon(_watch_eof, eof, connection)
                await connection.lost.wait()
                self.error = self.stderr.explain(connection.lost_reason)
                logger.warning("upstream %s: connection lost: %s", self.name, connection.lost_reason)
            finally:
                connection.lose(connection.lost_reason or self._refused or "gateway shutting down")
        return True

    async def _subscribe_again(self, session: ClientSession) -> None:
        """On a new connection, the subscriptions hosts made on an earlier one (a restarted server's
        resource updates would otherwise never reach them again)."""
        for uri in sorted(self.subscriptions):
            try:
                await _subscription(session, uri, on=True)
            except MCPError as exc:
                logger.warning("upstream %s: could not subscribe again to %s: %s", self.name, uri, exc.error.message)

    async def _list_tools(self, session: ClientSession) -> list[dict[str, Any]]:
        """Read every page of ``tools/list``."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_TOOL_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(tool_to_wire(t) for t in page.tools)
            cursor = page.next_cursor
            if not cursor or cursor in seen:
                break
            seen.add(cursor)
        return tools

    def _ingest(self, tools: list[dict[str, Any]]) -> None:
        self.tool_count = len(tools)
        if not self.retiring:  # a retiring upstream's tools are no longer the registry's (its successor's are)
            self.on_tools(self.name, tools)

    def busy(self) -> bool:
        """Whether calls are in flight on a live connection."""
        connection = self._connection
        return connection is not None and not connection.lost.is_set() and bool(connection.inflight)

    async def idle(self) -> None:
        """Return once :meth:`busy` is false: each call that ends looks, none is polled for."""
        while self.busy():
            assert self._connection is not None
            await self._connection.drained()

    async def _refresh_tools(self, connection: _Connection) -> None:
        try:
            with anyio.fail_after(self.settings.connect_timeout):
                tools = await self._list_tools(connection.session)
        except Exception as exc:
            logger.warning("upstream %s: re-reading tools after list_changed failed: %s", self.name, exc)
            return
        self._ingest(tools)
        logger.info("upstream %s: tool list changed, now %d tools", self.name, len(tools))

    async def _on_message(self, message: Any, holder: list[_Connection], group: anyio.abc.TaskGroup) -> None:
        if isinstance(message, Exception):
            logger.debug("upstream %s: transport reported %r", self.name, message)
            if holder and _is_connection_error(message):
                holder[0].lose(describe_error(message))
            return
        if isinstance(message, types.ToolListChangedNotification) and holder:
            group.start_soon(self._refresh_tools, holder[0])
        elif isinstance(message, types.ResourceUpdatedNotification) and self.on_resource_updated is not None:
            group.start_soon(self.on_resource_updated, self.name, str(message.params.uri))
        elif isinstance(message, types.ResourceListChangedNotification) and self.on_list_changed is not None:
            group.start_soon(self.on_list_changed, self.name, "resources")
        elif isinstance(message, types.PromptListChangedNotification) and self.on_list_changed is not None:
            group.start_soon(self.on_list_changed, self.name, "prompts")

    async def _log(self, params: types.LoggingMessageNotificationParams) -> None:
        """An upstream's own log message goes to the gateway's log (stderr) under the upstream's name, at its
        level: the place a user looks when a server misbehaves (Claude Desktop keeps it per server)."""
        source = f"{self.name}/{params.logger}" if params.logger else self.name
        data = params.data if isinstance(params.data, str) else orjson.dumps(params.data).decode()
        logger.log(MCP_LOG_LEVELS.get(params.level, logging.INFO), "upstream %s logs: %s", source, data)

    async def _keepalive(self, connection: _Connection) -> None:
        """Ping now and then so a silently dead HTTP upstream is noticed without a call failing."""
        while not connection.lost.is_set():
            await anyio.sleep(self.settings.ping_interval)
            try:
                with anyio.fail_after(PING_TIMEOUT):
                    await connection.session.send_ping()
            except Exception as exc:
                connection.lose(f"ping failed: {describe_error(exc)}")


async def _subscription(session: ClientSession, uri: str, on: bool) -> Any:
    """``resources/subscribe`` (or ``unsubscribe``) on one session."""
    with warnings.catch_warnings():  # 2026-07-28 drops subscriptions; handshake-era upstreams serve them
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        if on:
            return await session.subscribe_resource(uri)
        return await session.unsubscribe_resource(uri)


def _is_connection_error(exc: Exception) -> bool:
    name = type(exc).__name__
    return isinstance(exc, OSError | anyio.BrokenResourceError) or any(
        word in name for word in ("Connect", "RemoteProtocol", "ReadError", "NetworkError")
    )


async def _pump(
    source: MemoryObjectReceiveStream[SessionMessage | Exception],
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    eof: anyio.Event,
) -> None:
    """Forward transport messages to the session, and note when the transport ends."""
    try:
        async with sink:
            async for item in source:
                await sink.send(item)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        eof.set()


async def _watch_eof(eof: anyio.Event, connection: _Connection) -> None:
    await eof.wait()
    connection.lose("the upstream closed the connection")


@dataclass(frozen=True)
class PoolChange:
    """What applying a new list of upstream configurations did, by server name."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    restarted: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.restarted)

    def describe(self) -> str:
        parts = {"added": self.added, "removed": self.removed, "restarted": self.restarted}
        return (
            "; ".join(f"{what} {', '.join(names)}" for what, names in parts.items() if names) or "no upstream changed"
        )


class UpstreamPool:
    """Every configured upstream, started concurrently and independently; the set can change while the
    pool runs (:meth:`apply`, when the configuration file is edited)."""

    def __init__(
        self,
        configs: list[UpstreamConfig],
        settings: GatewaySettings,
        on_tools: ToolsCallback,
        on_resource_updated: ResourceCallback | None = None,
        on_list_changed: ListCallback | None = None,
        auth_dir: Path | None = None,
    ) -> None:
        self.settings = settings
        self.auth_dir = auth_dir
        self.on_tools = on_tools
        self.on_resource_updated = on_resource_updated
        self.on_list_changed = on_list_changed
        self.upstreams = {c.name: self._make(c) for c in configs}
        self._group: anyio.abc.TaskGroup | None = None
        self._scopes: dict[str, anyio.CancelScope] = {}

    def _make(self, config: UpstreamConfig) -> Upstream:
        return Upstream(
            config, self.settings, self.on_tools, self.on_resource_updated, self.on_list_changed, self.auth_dir
        )

    def __getitem__(self, name: str) -> Upstream:
        try:
            return self.upstreams[name]
        except KeyError:
            raise UpstreamError(name, "no such upstream in the configuration") from None

    def statuses(self) -> list[UpstreamStatus]:
        return [u.status() for u in self.upstreams.values()]

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start every upstream; report started once each has connected or failed once."""
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(anyio.sleep_forever)  # the pool outlives its last upstream: one may be added
            for upstream in self.upstreams.values():
                self._start(upstream)
            for upstream in self.upstreams.values():
                await upstream.first_attempt.wait()
            task_status.started()

    def _start(self, upstream: Upstream) -> None:
        assert self._group is not None, "the pool is not running"
        scope = self._scopes[upstream.name] = anyio.CancelScope()

        async def serve() -> None:
            with scope:
                await upstream.serve()

        self._group.start_soon(serve)

    def apply(self, configs: list[UpstreamConfig]) -> PoolChange:
        """Bring the running pool to ``configs``: start the new upstreams, retire the ones no longer listed,
        restart the ones whose configuration changed (a new upstream takes the new calls at once while the
        old one is retired); an unchanged upstream keeps its connection.

        A retired upstream answers the calls it has in flight before it stops: a call cut off mid-way
        may have run upstream with its answer lost, and the user who edited the config only meant the
        calls to come. Each such call still ends by its own deadline, so retiring never outlasts
        ``max_call_timeout``."""
        assert self._group is not None, "the pool is not running"
        wanted = {c.name: c for c in configs}
        removed = tuple(n for n in self.upstreams if n not in wanted)
        restarted = tuple(n for n, c in wanted.items() if n in self.upstreams and self.upstreams[n].config != c)
        added = tuple(n for n in wanted if n not in self.upstreams)
        for name in removed + restarted:
            why = "removed from the configuration" if name in removed else "its configuration changed"
            self._group.start_soon(self._retire, self.upstreams.pop(name), self._scopes.pop(name), why)
        for name in restarted + added:
            upstream = self.upstreams[name] = self._make(wanted[name])
            self._start(upstream)
        return PoolChange(added, removed, restarted)

    async def _retire(self, upstream: Upstream, scope: anyio.CancelScope, why: str) -> None:
        upstream.retiring = True
        if upstream.busy():
            logger.info("upstream %s (%s): answering the calls in flight before it stops", upstream.name, why)
        with anyio.move_on_after(max(upstream.call_timeout, self.settings.max_call_timeout)):
            await upstream.idle()
        upstream.stop(why)
        scope.cancel()
