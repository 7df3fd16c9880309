"""Requests an upstream sends back while it serves a call, relayed to the host that made the call.

An MCP server may ask its client for an LLM completion (``sampling/createMessage``) or for the user's
input (``elicitation/create``) in the middle of a tool call. Behind the gateway that client is the
gateway, which has neither the host's model nor its user. So every upstream connection declares both
capabilities, and such a request is sent on to the host request whose call is in flight on that
connection, on that request's own channel (on streamable HTTP, the POST's response stream); the
host's answer goes back upstream unchanged.

What cannot be relayed is refused with a message that says why, never left hanging: no host request in
flight (the command line's ``call`` and ``ask`` have no host), calls from several host sessions in
flight at once (the request does not say which one it belongs to), or a host that lacks the
capability. Roots are not relayed: a server that reads the client's roots (the filesystem server)
would replace the directories its own command line gave it with the host's, which is not what a user
who configured the gateway asked for.

While the host answers, the call's timeout stands still: an elicitation waits for a person, and the
upstream call should not time out behind their back.

The same :class:`HostLink` lets the gateway ask the host's user a question of its own
(``confirmation.confirmed_by_user``: run a routed call that may destroy data?).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server.session import ServerSession
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel

logger = logging.getLogger(__name__)

ResultT = TypeVar("ResultT", bound=BaseModel)


@dataclass(frozen=True)
class HostLink:
    """The host request a forwarded call serves: where its progress and the upstream's own requests go."""

    session: ServerSession  # request-scoped in the ``mcp`` SDK: requests on it ride this request's channel
    request_id: types.RequestId
    host: str  # which host connection ("stdio", an HTTP session id): calls of one host may share a relay
    progress: ProgressFnT | None = None  # set only when the host asked for progress

    def can(self, what: str, request: Any) -> bool:
        """Whether the host declared what relaying ``request`` needs (the SDK's own check ignores the
        elicitation modes: a bare ``elicitation: {}`` means forms only)."""
        have = self.session.client_capabilities
        if have is None:
            return False
        if what == "sampling":
            return have.sampling is not None and (not request.params.tools or have.sampling.tools is not None)
        if isinstance(request.params, types.ElicitRequestURLParams):
            return have.elicitation is not None and have.elicitation.url is not None
        return self.asks_forms()

    def asks_forms(self) -> bool:
        """The host can put a form in front of its user (MCP elicitation, form mode)."""
        have = self.session.client_capabilities
        return have is not None and have.elicitation is not None

    async def ask_user(self, message: str, schema: dict[str, Any]) -> types.ElicitResult:
        """Put a form in front of the host's user, on this request's channel; waits as long as they take."""
        metadata = ServerMessageMetadata(related_request_id=self.request_id)
        request = types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))
        return await self.session.send_request(request, types.ElicitResult, metadata=metadata)

    def client_name(self) -> str:
        params = self.session.client_params
        return params.client_info.name if params is not None else "the host"


InflightCalls = Callable[[], Mapping[anyio.CancelScope, HostLink | None]]


class UpstreamRequests:
    """One upstream connection's callbacks for the requests it sends its client (the gateway)."""

    def __init__(self, upstream: str, inflight: InflightCalls) -> None:
        self.upstream = upstream
        self.inflight = inflight

    async def sampling(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        request = types.CreateMessageRequest(params=params)
        if params.tools:
            return await self._relay("sampling", request, types.CreateMessageResultWithTools)
        return await self._relay("sampling", request, types.CreateMessageResult)

    async def elicitation(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        return await self._relay("elicitation", types.ElicitRequest(params=params), types.ElicitResult)

    async def _relay(self, what: str, request: Any, result_type: type[ResultT]) -> ResultT | types.ErrorData:
        calls = dict(self.inflight())
        links = [link for link in calls.values() if link is not None]
        if not links:
            return self._refuse(what, "no host request is in flight to relay it to (the command line has no host)")
        if len({link.host for link in links}) > 1:
            return self._refuse(what, "calls of several host sessions are in flight, and it does not say whose")
        link = links[-1]
        if not link.can(what, request):
            return self._refuse(what, f"the host ({link.client_name()}) does not support {what}")
        waiting = [scope for scope, owner in calls.items() if owner is not None and owner.host == link.host]
        logger.info("upstream %s: relaying a %s request to %s", self.upstream, what, link.client_name())
        try:
            with deadlines_paused(waiting):
                metadata = ServerMessageMetadata(related_request_id=link.request_id)
                return await link.session.send_request(request, result_type, metadata=metadata)
        except MCPError as exc:
            return types.ErrorData(code=exc.error.code, message=f"the host answered: {exc.error.message}")
        except Exception as exc:  # the host went away, or answered something that is no valid result
            return self._refuse(what, f"relaying it to the host failed ({type(exc).__name__}: {exc})")

    def _refuse(self, what: str, why: str) -> types.ErrorData:
        message = f"nexus-gateway cannot relay this {what} request from {self.upstream}: {why}"
        logger.warning("%s", message)
        return types.ErrorData(code=types.INVALID_REQUEST, message=message)


@contextmanager
def deadlines_paused(scopes: list[anyio.CancelScope]) -> Iterator[None]:
    """Stop the scopes' clocks while the body runs; each deadline moves on by the time it took."""
    saved = {scope: scope.deadline for scope in scopes}
    started = anyio.current_time()
    for scope in scopes:
        scope.deadline = math.inf
    try:
        yield
    finally:
        waited = anyio.current_time() - started
        for scope, deadline in saved.items():
            scope.deadline = deadline + waited
