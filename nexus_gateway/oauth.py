"""OAuth for remote upstreams: one ``nexus-gateway login SERVER`` in a browser, then tokens the gateway
keeps and refreshes by itself.

Remote MCP servers (GitHub's, Linear's, Notion's, …) increasingly take no static token but OAuth 2.1:
discovery, dynamic client registration, a browser consent with PKCE, short access tokens and refresh
tokens. The ``mcp`` SDK's :class:`OAuthClientProvider` does all of it as an ``httpx`` auth; what a
gateway adds is where the person is. ``serve`` runs under a host with no terminal and no browser, so it
never starts a consent: it uses the tokens a login stored and refreshes them, and a server that still
asks for a login fails to connect saying which command to run. ``login`` runs the consent at a terminal:
it prints the authorization URL (and opens it in a browser unless told not to), takes the redirect on a
loopback listener, and stores the tokens.

Tokens live in one file per server and URL in the cache folder's ``auth/`` (``nexus.cache_dir``),
written atomically and readable by the user alone; removing the file is a logout. A server with an
``Authorization`` header in the config is left to that header.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from pathlib import Path
from typing import Any, NoReturn

import anyio
import httpx2
import orjson
import uvicorn
from filelock import FileLock, Timeout
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from .cache import read_json_object, write_atomic
from .config import UpstreamConfig
from .exceptions import NexusError

logger = logging.getLogger(__name__)

CLIENT_NAME = "Nexus Gateway"
LOGIN_TIMEOUT_S = 300.0  # how long `login` waits for the person to consent in the browser
REFRESH_LOCK_S = 30.0  # how long a refresh waits for another gateway's refresh of the same login
REFRESH_RACE_S = 2.0  # how long a refused refresh waits for another gateway's refreshed tokens to be stored
EXPIRY_MARGIN_S = 60.0  # a stored access token counts as expired this much early (a tenth of a short one's life)
# the redirect a gateway that only refreshes registers with: never visited (serve starts no consent)
NO_REDIRECT = "http://127.0.0.1/nexus-gateway/no-login-here"


class LoginRequired(NexusError):
    """The upstream wants a consent in a browser, which only ``nexus-gateway login`` can give."""

    def __init__(self, server: str) -> None:
        super().__init__(f"the server asks for a login: run `nexus-gateway login {server}` (with the same config)")


def auth_folder(cache_root: Path) -> Path:
    return cache_root / "auth"


def token_path(folder: Path, upstream: UpstreamConfig) -> Path:
    """One file per server name and URL: a server moved to another URL is a new login."""
    digest = hashlib.sha256((upstream.url or "").encode()).hexdigest()[:12]
    return folder / f"{upstream.name}-{digest}.json"


def has_static_authorization(upstream: UpstreamConfig) -> bool:
    return any(key.lower() == "authorization" for key in upstream.headers)


class TokenFile:
    """The SDK's ``TokenStorage`` over one JSON file: the tokens and the registered client."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        return read_json_object(self.path)

    def _write(self, **values: Any) -> None:
        stored = self._read() | values
        try:
            write_atomic(self.path, orjson.dumps(stored))
            os.chmod(self.path, 0o600)
        except OSError as exc:
            raise NexusError(f"cannot store the login in {self.path}: {exc.strerror or exc}") from None

    async def get_tokens(self) -> OAuthToken | None:
        raw = self._read().get("tokens")
        return OAuthToken.model_validate(raw) if raw else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = None
        if tokens.expires_in is not None:  # a little early: the server's clock may run ahead of ours
            expires_at = time.time() + tokens.expires_in - min(EXPIRY_MARGIN_S, tokens.expires_in / 10)
        self._write(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires_at)

    def expires_at(self) -> float | None:
        """When the stored access token expires (the token's ``expires_in`` counts from when it came)."""
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = self._read().get("client_info")
        return OAuthClientInformationFull.model_validate(raw) if raw else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._write(client_info=client_info.model_dump(mode="json", exclude_none=True))


class StoredLoginProvider(OAuthClientProvider):
    """The SDK's provider over a stored login that other gateway processes share and refresh too.

    Claude Desktop and Cursor each start a gateway over the same config, so two processes hold one
    login. Authorization servers rotate refresh tokens (OAuth 2.1: each works once), so the process that
    refreshes second would spend a used refresh token, be refused, and fail its call with a login
    request, though the file already holds good tokens. So an expired token is first looked for in the
    file (another process may have refreshed it), a refresh runs under the file's inter-process lock (two
    gateways never refresh one login at once), and where that lock cannot be had a refused refresh is
    answered from the file when another process's refresh landed meanwhile."""

    def __init__(self, server_url: str, metadata: OAuthClientMetadata, stored: TokenFile, **handlers: Any) -> None:
        super().__init__(server_url, metadata, stored, **handlers)
        self._stored = stored
        self._loaded = False

    # The SDK re-reads storage whenever ``_initialized`` is false; an expired token makes it so.
    @property
    def _initialized(self) -> bool:
        return self._loaded and self.context.is_token_valid()

    @_initialized.setter
    def _initialized(self, value: bool) -> None:
        self._loaded = value

    async def _initialize(self) -> None:
        await super()._initialize()
        # The SDK learns a token's expiry only when it receives one; a token read back from storage would
        # count as valid forever, be sent after it expired, and the 401 would start a consent instead of
        # the refresh it needs. Told when it expires, the provider refreshes it first.
        self.context.token_expiry_time = self._stored.expires_at()

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        # An expired token is refreshed under the login file's inter-process lock: two gateways refreshing
        # at once would send the same refresh token twice, and servers that detect reuse revoke the whole
        # grant for it. The lock is held until the flow sends the request it authorizes (a refresh and its
        # stored answer come before that), so a second gateway waits, then finds fresh tokens in the file.
        lock = await self._refresh_lock() if not self.context.is_token_valid() else None
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                if lock is not None and outgoing is request:
                    lock.release()
                    lock = None
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            if lock is not None:
                lock.release()
            await flow.aclose()

    async def _refresh_lock(self) -> FileLock | None:
        """The login file's lock, waited for without blocking the event loop; None (and go on without it)
        when another process holds it past ``REFRESH_LOCK_S`` or the folder takes no lock file."""
        lock = FileLock(f"{self._stored.path}.lock")
        with anyio.move_on_after(REFRESH_LOCK_S):
            while True:
                try:
                    lock.acquire(timeout=0)
                    return lock
                except Timeout:
                    await anyio.sleep(0.05)
                except OSError as exc:
                    logger.warning("refreshing the login without its lock (%s)", exc)
                    return None
        logger.warning("refreshing the login without its lock: another process held it for %gs", REFRESH_LOCK_S)
        return None

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        spent = self.context.current_tokens.refresh_token if self.context.current_tokens else None
        if await super()._handle_refresh_response(response):
            return True
        # Refused: if another gateway refreshed with the same token a moment ago, its tokens are (or are
        # about to be) in the file.
        with anyio.move_on_after(REFRESH_RACE_S):
            while True:
                tokens = await self._stored.get_tokens()
                if tokens is not None and tokens.refresh_token != spent:
                    self.context.current_tokens = tokens
                    self.context.token_expiry_time = self._stored.expires_at()
                    self._loaded = True
                    logger.info("another gateway refreshed the login first; using its tokens")
                    return True
                await anyio.sleep(0.1)
        return False


def _metadata(redirect: str) -> OAuthClientMetadata:
    return OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[AnyUrl(redirect)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )


Refused = Callable[[str], None]


class LoginGate(httpx2.Auth):
    """An upstream with no stored login: requests go out as configured, and a 401 answer fails the
    connection saying what to do (the SDK's transport would only say "Server returned an error
    response")."""

    def __init__(self, upstream: UpstreamConfig, refused: Refused | None = None) -> None:
        self.upstream = upstream
        self.refused = refused

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        response = yield request
        if response.status_code != 401:
            return
        if has_static_authorization(self.upstream):
            _refuse(NexusError("the server refused the Authorization header of the config (HTTP 401)"), self.refused)
        _refuse(LoginRequired(self.upstream.name), self.refused)


def _refuse(error: NexusError, refused: Refused | None) -> NoReturn:
    """Fail the connection with ``error``, telling ``refused`` first: the error ends the transport's task
    group, so what the connection's calls hear is whatever reason they were given before it unwound."""
    if refused is not None:
        refused(str(error))
    raise error


def upstream_auth(upstream: UpstreamConfig, folder: Path, refused: Refused | None = None) -> httpx2.Auth:
    """What ``serve`` connects an HTTP upstream with: the stored login's tokens, refreshed when they
    expire; without a stored login, a :class:`LoginGate`. ``refused`` hears why a connection is about to
    fail for want of a login."""
    path = token_path(folder, upstream)
    if has_static_authorization(upstream) or not path.exists():
        return LoginGate(upstream, refused)

    async def refuse_redirect(url: str) -> None:
        _refuse(LoginRequired(upstream.name), refused)

    async def refuse_callback() -> AuthorizationCodeResult:
        _refuse(LoginRequired(upstream.name), refused)

    return StoredLoginProvider(
        upstream.url or "",
        _metadata(NO_REDIRECT),
        TokenFile(path),
        redirect_handler=refuse_redirect,
        callback_handler=refuse_callback,
    )


async def login(upstream: UpstreamConfig, folder: Path, show: Callable[[str], Awaitable[None]]) -> None:
    """Run the OAuth consent for one HTTP/SSE upstream and store its tokens: a fresh registration each
    time (the loopback redirect's port changes between logins), the consent page's address handed to
    ``show`` (a terminal prints it and opens a browser; a host is asked to send its user there), the code
    taken from the redirect, tokens stored for ``serve``."""
    if upstream.transport == "stdio":
        raise NexusError(f"{upstream.name} is a stdio server: it has no login (its env holds its credentials)")
    if has_static_authorization(upstream):
        raise NexusError(f"{upstream.name} sends an Authorization header from the config: it needs no login")
    path = token_path(folder, upstream)
    path.unlink(missing_ok=True)
    port = _free_port()
    redirect = f"http://127.0.0.1:{port}/callback"
    received: list[AuthorizationCodeResult] = []
    arrived = anyio.Event()

    async def callback(request: Request) -> HTMLResponse:
        code, state = request.query_params.get("code"), request.query_params.get("state")
        if not code:
            error = request.query_params.get("error_description") or request.query_params.get("error") or "no code"
            return HTMLResponse(f"<p>The login did not complete: {error}. Run the login again.</p>", 400)
        received.append(AuthorizationCodeResult(code=code, state=state, iss=request.query_params.get("iss")))
        arrived.set()
        return HTMLResponse("<p>Nexus Gateway is logged in. You can close this tab.</p>")

    async def wait_for_code() -> AuthorizationCodeResult:
        with anyio.fail_after(LOGIN_TIMEOUT_S):
            await arrived.wait()
        return received[0]

    listener = uvicorn.Server(
        uvicorn.Config(
            Starlette(routes=[Route("/callback", callback)]),
            host="127.0.0.1",
            port=port,
            log_config=None,
            access_log=False,
        )
    )
    provider = OAuthClientProvider(
        upstream.url or "", _metadata(redirect), TokenFile(path), redirect_handler=show, callback_handler=wait_for_code
    )
    async with anyio.create_task_group() as group:
        group.start_soon(listener.serve)
        try:
            await _connect(upstream, provider)
        except TimeoutError:
            raise NexusError(f"no login arrived within {LOGIN_TIMEOUT_S:g}s; run the login again") from None
        finally:
            listener.should_exit = True
    if not path.exists():
        raise NexusError(f"{upstream.name} connected without asking for a login: it needs none")


async def _connect(upstream: UpstreamConfig, auth: OAuthClientProvider) -> None:
    """One MCP handshake with ``auth``: the server's 401 starts the consent, the handshake proves the token."""
    if upstream.transport == "sse":
        async with (
            sse_client(upstream.url or "", headers=upstream.headers or None, auth=auth) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
        return
    async with (
        create_mcp_http_client(headers=upstream.headers or None, auth=auth) as http,
        streamable_http_client(upstream.url or "", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
