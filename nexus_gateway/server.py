"""The host-facing MCP server: a small, fixed tool surface over the whole registry.

Hosts handle ``tools/list_changed`` badly, so the surface never changes when upstreams do: the host sees
``search_tools``, ``describe_tool``, ``call_tool`` and ``call``, plus any tools the config exposes
directly (only those come and go, announced with ``tools/list_changed``). This module is the only place
where gateway errors become MCP results: every failure of a surface tool is an ``isError`` result with a
one-line explanation, never a traceback, and the server keeps serving.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
import orjson
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession

from .exceptions import ArgumentError, NexusError, UpstreamError, UpstreamProtocolError
from .gateway import Gateway
from .host_relay import HostLink
from .in_flight import InFlight
from .list_viewers import KINDS, ListViewers
from .routed_call import call_intent, no_tools_message, result_text
from .validation import validate_arguments

logger = logging.getLogger(__name__)

SERVER_NAME = "nexus-gateway"
INSTRUCTIONS = (
    "Nexus Gateway fronts many MCP servers. Say what you want with `call` (one sentence), or find a tool "
    "with search_tools, check it with describe_tool if the signature is not enough, and run it with call_tool."
)

SEARCH_TOOLS = types.Tool(
    name="search_tools",
    description=(
        "Search every tool of every connected MCP server by what it does. Returns ranked tool ids with a "
        "compact typed signature and a one-sentence description. Use an id with describe_tool or call_tool."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "description": "What you want to do, in a few words.",
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many results."},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
)
DESCRIBE_TOOL = types.Tool(
    name="describe_tool",
    description="The full upstream definition of one tool (its JSON input schema), by id from search_tools.",
    input_schema={
        "type": "object",
        "properties": {
            "tool": {"type": "string", "minLength": 1, "description": "A tool id, e.g. time__convert_time."}
        },
        "required": ["tool"],
        "additionalProperties": False,
    },
    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
)
CALL_TOOL = types.Tool(
    name="call_tool",
    description=(
        "Run one upstream tool by id with arguments matching its schema. Arguments are checked before "
        "anything is sent; the upstream result is returned unchanged."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "tool": {"type": "string", "minLength": 1, "description": "A tool id from search_tools."},
            "arguments": {"type": "object", "description": "The tool's arguments."},
        },
        "required": ["tool"],
        "additionalProperties": False,
    },
)
CALL_INTENT = types.Tool(
    name="call",
    description=(
        "Do something with one sentence: the gateway picks the tool for the intent, fills in its arguments "
        "from the sentence and the earlier calls of this session, and returns the tool's result. With "
        "`arguments`, those are used as given. When the sentence lacks a required value, the answer names it "
        "so you can supply it. If no tool fits confidently, the closest candidates are returned instead. A "
        "tool that may delete or overwrite data, or a change where other tools fit almost as well, is not run: "
        "the answer shows the tool and arguments it would use, to run with call_tool if right. With "
        "`dry_run`, nothing runs: the answer is the tool and arguments it would use."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "intent": {"type": "string", "minLength": 1, "description": "What to do, in plain words."},
            "arguments": {"type": "object", "description": "Arguments for the chosen tool, if known."},
            "dry_run": {"type": "boolean", "description": "Only say which tool and arguments it would use."},
        },
        "required": ["intent"],
        "additionalProperties": False,
    },
)
SURFACE = (SEARCH_TOOLS, DESCRIBE_TOOL, CALL_TOOL, CALL_INTENT)


def host_session(ctx: ServerRequestContext[Any]) -> str:
    """Which host session a request belongs to: the MCP session id over streamable HTTP, the SSE
    session over SSE, the process itself over stdio (one host per stdio gateway). The SDK builds a new
    ``ServerSession`` object per request, so it cannot serve as the key."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is not None:
        session_id = headers.get("mcp-session-id")
        if session_id:
            return f"http:{session_id}"
        query = getattr(request, "query_params", None)
        if query is not None and query.get("session_id"):
            return f"sse:{query.get('session_id')}"
    return "stdio"


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def json_result(value: dict[str, Any]) -> types.CallToolResult:
    text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=value)


def host_link(ctx: ServerRequestContext[Any]) -> HostLink:
    """The host request a forwarded call serves: upstream progress goes back to it (only when the host
    asked for progress), and so do the upstream's own sampling and elicitation requests."""
    meta = ctx.meta or {}
    wants_progress = meta.get("progress_token") is not None or meta.get("progressToken") is not None

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        await ctx.session.report_progress(progress, total, message)

    request_id = ctx.request_id if ctx.request_id is not None else 0
    return HostLink(ctx.session, request_id, host_session(ctx), forward if wants_progress else None)


class _SurfaceServer(Server[Any]):
    """The SDK's server, declaring ``listChanged`` for tools, resources and prompts on every transport
    (stdio, SSE and streamable HTTP each build the initialisation options themselves): the tools
    ``expose`` lists, the resources and the prompts come and go with their upstreams."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(
            tools_changed=True, resources_changed=True, prompts_changed=True
        )
        return super().create_initialization_options(options, experimental_capabilities, extensions)


class HostSurface:
    """Handlers of the host-facing MCP server, bound to one :class:`Gateway`."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.surface = {tool.name: tool for tool in SURFACE}
        # resource URI -> host connection -> a session of that connection to notify when it changes
        self.subscribers: dict[str, dict[str, ServerSession]] = {}
        gateway.resource_listeners.append(self.resource_updated)
        # who to tell when the exposed tools, the resources or the prompts change
        self.viewers = {kind: ListViewers(kind) for kind in KINDS}
        gateway.list_listeners.append(self.list_changed)
        self.calls = InFlight()
        self.draining = False

    def build(self) -> Server[Any]:
        server: Server[Any] = _SurfaceServer(
            SERVER_NAME,
            version="0.1.0",
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,  # type: ignore[arg-type]  # a wire dict is a valid HandlerResult
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
            on_subscribe_resource=self.subscribe,
            on_unsubscribe_resource=self.unsubscribe,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
        )
        server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self.set_level)
        return server

    # ##### Tools #####

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = list(SURFACE)
        exposed = self.gateway.exposed()
        for entry in exposed:
            raw = dict(entry.raw)
            raw["name"] = entry.id
            tools.append(types.Tool.model_validate(raw))
        if self.gateway.settings.expose:  # only then can the list change
            self.viewers["tools"].saw(host_session(ctx), ctx.session, tuple(e.id for e in exposed))
        return types.ListToolsResult(tools=tools)

    async def list_changed(self, kind: str) -> None:
        """Something a host's list of ``kind`` came from changed. Tools: tell the hosts whose tools no
        longer hold what ``expose`` lists (the fixed surface never changes, so without ``expose`` none is
        told). Resources and prompts: tell every host that listed them."""
        if kind == "tools":
            await self.viewers["tools"].changed(tuple(e.id for e in self.gateway.exposed()))
        else:
            await self.viewers[kind].changed()

    async def drain(self) -> None:
        """Refuse new tool calls and return once the calls in flight have all answered (a graceful stop:
        the host gets every answer it is waiting for)."""
        self.draining = True
        if self.calls.count:
            logger.info("stopping: waiting for %d call(s) in flight", self.calls.count)
        await self.calls.idle()

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | dict[str, Any]:
        if self.draining:
            return error_result("The gateway is shutting down; nothing ran. Call again once it is back.")
        with self.calls.one():
            return await self._call_tool(ctx, params)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | dict[str, Any]:
        name, arguments = params.name, dict(params.arguments or {})
        surface_tool = self.surface.get(name)
        try:
            if surface_tool is not None:
                validate_arguments(name, surface_tool.input_schema, arguments)
                return await self._surface_call(ctx, name, arguments)
            entry = self.gateway.exposed_entry(name)
            if entry is None:
                offered = ", ".join(tool.name for tool in SURFACE)
                return error_result(f"Unknown tool {name!r}. This gateway offers {offered}.")
            return await self._forward_exposed(ctx, name, arguments)
        except ArgumentError as exc:
            return error_result(str(exc))
        except UpstreamProtocolError as exc:
            return error_result(str(exc))
        except NexusError as exc:
            return error_result(str(exc))

    async def _surface_call(
        self, ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult | dict[str, Any]:
        if name == "call":
            dry_run = bool(arguments.get("dry_run", False))
            return await self._routed_call(ctx, arguments["intent"], arguments.get("arguments"), dry_run)
        if name == "search_tools":
            hits, _ = await self.gateway.search(arguments["query"], arguments.get("limit"))
            results = [
                {
                    "tool": hit.entry.id,
                    "signature": hit.entry.signature,
                    "description": hit.entry.summary,
                    "score": round(hit.score, 4),
                }
                for hit in hits
            ]
            found: dict[str, Any] = {"query": arguments["query"], "results": results}
            if not results and not self.gateway.registry.entries():
                found["note"] = no_tools_message(self.gateway)
            return json_result(found)
        if name == "describe_tool":
            entry = self.gateway.describe(arguments["tool"])
            described = {
                "tool": entry.id,
                "server": entry.server,
                "name": entry.name,
                "signature": entry.signature,
                "description": entry.description,
                "inputSchema": entry.input_schema,
            }
            if "outputSchema" in entry.raw:
                described["outputSchema"] = entry.raw["outputSchema"]
            if "annotations" in entry.raw:  # readOnlyHint, destructiveHint: what `call` confirms first
                described["annotations"] = entry.raw["annotations"]
            if defaults := self.gateway.defaults(entry):
                described["defaults"] = defaults  # filled in when a call leaves them out
            return json_result(described)
        tool_id, tool_arguments = arguments["tool"], arguments.get("arguments") or {}
        result = await self.gateway.call(tool_id, tool_arguments, host=host_link(ctx))
        released = self.gateway.generation.release_held(host_session(ctx), tool_id)
        if released is not None and not result.get("isError"):
            # the host confirmed a call that `call` held back: the turn joins the session's window
            window, held = released
            sent = self.gateway.with_defaults(self.gateway.describe(tool_id), tool_arguments)
            window.add(held.intent, held.tool, sent, result_text(result))
        return result

    async def _routed_call(
        self, ctx: ServerRequestContext[Any], intent: str, arguments: dict[str, Any] | None, dry_run: bool
    ) -> types.CallToolResult | dict[str, Any]:
        outcome = await call_intent(self.gateway, intent, arguments, host_session(ctx), host_link(ctx), dry_run=dry_run)
        if outcome.forwarded is not None:
            return outcome.forwarded
        return json_result(outcome.report or {})

    async def _forward_exposed(
        self, ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """Exposed tools behave exactly as the upstream's own: its validation, its errors."""
        try:
            return await self.gateway.call(name, arguments, host=host_link(ctx), validate=False, via="exposed")
        except UpstreamProtocolError as exc:
            cause = exc.__cause__
            if isinstance(cause, MCPError):
                raise MCPError(code=cause.error.code, message=cause.error.message, data=cause.error.data) from None
            raise

    # ##### Resources, prompts, logging #####

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self.viewers["resources"].saw(host_session(ctx), ctx.session)
        return types.ListResourcesResult(resources=await self.gateway.list_resources())

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=await self.gateway.list_resource_templates())

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await _as_mcp_error(self.gateway.read_resource(str(params.uri)))

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        await _as_mcp_error(self.gateway.subscribe_resource(str(params.uri), True))
        self.subscribers.setdefault(str(params.uri), {})[host_session(ctx)] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        hosts = self.subscribers.get(uri, {})
        hosts.pop(host_session(ctx), None)
        if not hosts:  # the upstream subscription serves every host connection: leave it with the last one
            self.subscribers.pop(uri, None)
            await _as_mcp_error(self.gateway.subscribe_resource(uri, False))
        return types.EmptyResult()

    async def resource_updated(self, uri: str) -> None:
        """Pass an upstream's `resources/updated` on to each host connection subscribed to the resource (on
        its connection's own channel: the request that subscribed is long answered)."""
        for host, session in list(self.subscribers.get(uri, {}).items()):
            try:
                await session.send_resource_updated(uri)
            except Exception as exc:  # that host is gone: forget its subscriptions to this resource
                logger.info("resource %s: host %s no longer listens (%s)", uri, host, type(exc).__name__)
                self.subscribers[uri].pop(host, None)

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self.viewers["prompts"].saw(host_session(ctx), ctx.session)
        return types.ListPromptsResult(prompts=await self.gateway.list_prompts())

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await _as_mcp_error(self.gateway.get_prompt(params.name, params.arguments))

    async def set_level(self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams) -> types.EmptyResult:
        logger.debug("host asked for log level %s", params.level)
        return types.EmptyResult()


async def _as_mcp_error(awaitable: Any) -> Any:
    """Non-tool requests fail as JSON-RPC errors; keep the upstream's own code where there is one."""
    try:
        return await awaitable
    except UpstreamProtocolError as exc:
        cause = exc.__cause__
        if isinstance(cause, MCPError):
            raise MCPError(code=cause.error.code, message=cause.error.message, data=cause.error.data) from None
        raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
    except UpstreamError as exc:
        raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
    except NexusError as exc:
        raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
