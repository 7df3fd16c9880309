"""The gateway: upstream pool → registry → the operations the host-facing surface offers.

:class:`Gateway` owns the objects and wires the one-way data flow. The MCP server (``server.py``)
and the CLI (``cli.py``) both drive it; neither talks to upstreams or the registry directly.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote, unquote

import anyio
import anyio.abc
import mcp_types as types

from .affordance import SLOT_KINDS
from .cache import RegistryCache
from .config import GatewayConfig
from .embedder import whole_words
from .exceptions import NexusError, ToolNotFound, UpstreamError
from .generation_service import GenerationService
from .host_relay import HostLink
from .journal import CallJournal, JournalCall, journal_path
from .metrics import GatewayMetrics
from .oauth import auth_folder
from .pins import PINS_FILE, ToolPins
from .registry import Registry, SearchHit, ToolEntry, matches_any
from .router_service import RouterService
from .routing import RouteResult
from .upstream import PoolChange, UpstreamPool, UpstreamState
from .validation import BLANK_QUERY, require_words, validate_arguments

logger = logging.getLogger(__name__)

RESOURCE_SCHEME = "nexus"


@dataclass(frozen=True)
class Namespaced:
    """An upstream-owned name (prompt) or URI (resource) as the host sees it."""

    server: str
    original: str


def disabled_tools(config: GatewayConfig) -> dict[str, frozenset[str]]:
    """Per server, the tool names its config entry hides (``disabledTools``)."""
    return {u.name: frozenset(u.disabled_tools) for u in config.upstreams if u.disabled_tools}


class Gateway:
    """Everything behind the host-facing surface, for one configuration."""

    def __init__(self, config: GatewayConfig, cache: RegistryCache | None = None) -> None:
        self.config = config
        self.settings = config.settings
        self.cache = cache if cache is not None else RegistryCache(self.settings.cache_dir)
        self.pins = ToolPins(self.cache.root / PINS_FILE) if self.settings.pin_tools != "off" else None
        # each changed tool's definition as last reported: the cached tools at start, the connect and
        # every later review list the same change again, and it is said once
        self._reported_pins: dict[tuple[str, str], str] = {}
        self.journal = CallJournal(journal_path(self.settings.journal, self.cache.root))
        self.registry = Registry(
            self.cache, unprefixed=self.settings.unprefixed, hide=self.settings.hide, disabled=disabled_tools(config)
        )
        self.pool = UpstreamPool(
            list(config.upstreams),
            self.settings,
            self._on_tools,
            self._on_resource_updated,
            self._on_list_changed,
            auth_dir=auth_folder(self.cache.root),
        )
        # the host side's listeners for `notifications/resources/updated`, given the gateway's URI
        self.resource_listeners: list[Callable[[str], Awaitable[None]]] = []
        # the host side's listeners for a change of what its lists come from: "tools" (the registry: the
        # tools `expose` lists may change), "resources" or "prompts" (an upstream's, or the set of upstreams)
        self.list_listeners: list[Callable[[str], Coroutine[Any, Any, None]]] = []
        self._group: anyio.abc.TaskGroup | None = None
        self.routing = RouterService(
            self.registry, self.cache, self.settings.routing, preset=lambda entry: self.defaults(entry).keys()
        )
        # below which margin the local LLM picks among the best candidates: the config's on (the gate's
        # τ) or off, else the calibration's (``calibrate --judge``; 0: never)
        judge, calibration = self.settings.judge, self.routing.calibration
        self.judge_margin = calibration.judge_margin if judge is None else calibration.tau if judge else 0.0
        self.metrics = GatewayMetrics()  # served at GET /metrics by the HTTP transports
        self.metrics.watch_upstreams(self.pool.statuses, lambda: len(self.registry))
        self.generation = GenerationService(
            self.settings.model,
            self.settings.model_threads,
            self.settings.generate,
            schema_mode=self.settings.schema,
            cache=self.cache,
            judge=self.judge_margin > 0,
            known_words=lambda: whole_words(self.routing.embedder_spec()),
        )
        for upstream in config.upstreams:
            if self._load_cached_server(upstream.name):
                logger.info(
                    "upstream %s: %d tools from the registry cache",
                    upstream.name,
                    len(self.registry.entries(upstream.name)),
                )

    def reload(self, config: GatewayConfig) -> PoolChange:
        """Apply an edited configuration while serving: upstreams added, removed or changed take effect
        at once (the others keep their connections); the ``nexus`` settings need a restart, and the log
        says so when they changed."""
        if config.settings != self.settings:
            logger.warning("config %s: the nexus settings changed; restart the gateway to apply them", config.source)
        change = self.pool.apply(list(config.upstreams))
        self.config = replace(self.config, upstreams=config.upstreams)
        self.registry.disabled = disabled_tools(config)  # applied as the changed servers load again below
        for server in change.removed + change.restarted:
            self.registry.remove_server(server)
        for server in change.restarted + change.added:
            self._load_cached_server(server)  # searchable before it has connected, as at start
        if change:
            self._tools_changed()
        if change.removed or change.restarted:  # an added one announces its lists once it connects
            self._announce("resources", "prompts")
        return change

    def _load_cached_server(self, server: str) -> bool:
        """A server's tools as last listed, before it connects (held back again if they were)."""
        loaded = self.registry.load_cached_server(server)
        if loaded:
            self._review_pins(server, self.registry.raw_tools(server))
        return loaded

    def _tools_changed(self) -> None:
        self.routing.notify_changed()
        self.generation.notify_tools_changed()
        self._announce("tools")

    def _announce(self, *kinds: str) -> None:
        if self._group is not None:
            for kind in kinds:
                for listener in self.list_listeners:
                    self._group.start_soon(listener, kind)

    async def _on_list_changed(self, server: str, kind: str) -> None:
        """An upstream's resources or prompts changed (it said so, or it has just connected)."""
        if server in self.pool.upstreams:
            self._announce(kind)

    def _on_tools(self, server: str, tools: list[dict[str, Any]]) -> None:
        if server not in self.pool.upstreams:  # removed from the configuration while it was listing
            return
        self._review_pins(server, tools)
        computed = self.registry.set_server_tools(server, tools)
        logger.debug("registry: %s has %d tools (%d newly ingested)", server, len(tools), computed)
        self._tools_changed()

    def _review_pins(self, server: str, tools: list[dict[str, Any]]) -> bool:
        """Tools whose definition changed since they were pinned: logged, and held in ``hold`` mode;
        whether that changed which of ``server``'s tools are held."""
        if self.pins is None:
            return False
        changes = self.pins.review(server, tools)
        news = [c for c in changes if self._reported_pins.get((server, c.tool)) != c.current_fingerprint]
        self._reported_pins.update({(server, c.tool): c.current_fingerprint for c in changes})
        if news:  # one line per server: a server whose dependencies moved changes every tool's schema at once
            logger.warning(
                "upstream %s changed %s since %s pinned%s: %s; review with `nexus-gateway pins`",
                server,
                "1 tool" if len(news) == 1 else f"{len(news)} tools",
                "it was" if len(news) == 1 else "they were",
                ": held from hosts" if self.settings.pin_tools == "hold" else "",
                ", ".join(f"{change.tool} ({', '.join(change.fields())})" for change in news),
            )
        return self.settings.pin_tools == "hold" and self.registry.hold(server, {change.tool for change in changes})

    def review_pins(self) -> None:
        """Apply decisions taken since (``nexus-gateway pins --accept``) to every server's current tools."""
        released = [self._review_pins(server, self.registry.raw_tools(server)) for server in self.registry.servers()]
        if any(released):
            self._tools_changed()

    async def _on_resource_updated(self, server: str, uri: str) -> None:
        """An upstream says a subscribed resource changed: tell the host under the gateway's name for it."""
        for listener in list(self.resource_listeners):
            await listener(self.resource_uri(server, uri))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Gateway]:
        """Connect every upstream (concurrently, each bounded by its timeout), serve, then shut down."""
        async with anyio.create_task_group() as group:
            self._group = group
            await group.start(self.routing.run)
            await group.start(self.pool.run)
            group.start_soon(self._start_generation)  # the LLM loads in the background; `call` waits for it
            await self.routing.wait_ready(self.settings.routing.startup_wait)
            try:
                yield self
            finally:
                self.generation.stop()
                group.cancel_scope.cancel()
                self.journal.close()

    async def _start_generation(self) -> None:
        await self.generation.start()
        # every mode but the per-request focused IR splices the tool's form from its compiled block
        await self.generation.compile_blocks(self.registry.entries)

    def health(self) -> dict[str, Any]:
        """What a sidecar's health check reports (``GET /healthz``): ``ok`` when every upstream is
        connected, ``degraded`` when some are not, ``unavailable`` when none is (with upstreams configured);
        each upstream's state and error, and whether routing and argument generation are up."""
        statuses = self.pool.statuses()
        connected = sum(s.state is UpstreamState.CONNECTED for s in statuses)
        status = "ok" if connected == len(statuses) else "degraded" if connected else "unavailable"
        return {
            "status": status,
            "upstreams": [
                {"name": s.name, "state": s.state.value, "tools": s.tool_count, "error": s.error} for s in statuses
            ],
            "tools": len(self.registry),
            "routing": "ready" if self.routing.ready else self.routing.error or "loading",
            "generation": "ready" if self.generation.ready else self.generation.error or "loading",
        }

    # ##### Tools #####

    async def search(self, query: str, limit: int | None = None) -> tuple[list[SearchHit], RouteResult | None]:
        """Routed ranking when the models are up; BM25 alone otherwise (and said so in the trace)."""
        require_words("search_tools", "query", query, BLANK_QUERY)
        limit = limit or self.settings.search_limit
        # A search describes a capability ("add two numbers together"), not a call: no slot it leaves
        # out counts against a tool.
        result = await self._route("search", query, limit=limit, given=frozenset(SLOT_KINDS))
        if result is None:
            return self.registry.search(query, limit), None
        hits = []
        for candidate in result.candidates[:limit]:
            try:
                hits.append(SearchHit(self.registry.get(candidate.id), candidate.score))
            except ToolNotFound:
                continue  # removed since the router was built
        return hits, result

    async def route(
        self,
        intent: str,
        limit: int = 5,
        given: frozenset[str] = frozenset(),
        carried: frozenset[str] = frozenset(),
    ) -> RouteResult | None:
        return await self._route("call", intent, limit=limit, given=given, carried=carried)

    async def _route(self, surface: str, intent: str, **options: Any) -> RouteResult | None:
        started = time.perf_counter()
        result = await self.routing.route(intent, **options)
        if result is not None:
            self.metrics.routed(surface, not result.abstained, result.escalated, time.perf_counter() - started)
        return result

    def describe(self, tool_id: str) -> ToolEntry:
        return self.registry.get(tool_id)

    def defaults(self, entry: ToolEntry) -> dict[str, Any]:
        """The configured defaults (``nexus.defaults``) that apply to this tool: those its schema takes."""
        configured = self.settings.defaults.get(entry.server, {})
        return {key: value for key, value in configured.items() if key in entry.parameter_names}

    def with_defaults(self, entry: ToolEntry, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` with every configured default it leaves out; a value the caller gave wins."""
        return {**self.defaults(entry), **arguments}

    async def call(
        self,
        tool_id: str,
        arguments: dict[str, Any] | None,
        *,
        host: HostLink | None = None,
        validate: bool = True,
        via: str = "call_tool",
        intent: str | None = None,
    ) -> dict[str, Any]:
        """Fill in the configured defaults, validate, forward, return the upstream result unchanged (wire
        form: content, isError, …). What is sent, and how it ends, goes into the call journal: ``via``
        says which door the call came through (``call_tool``, ``call`` with its ``intent``, an exposed
        tool, the command line)."""
        entry = self.registry.get(tool_id)
        arguments = self.with_defaults(entry, arguments if arguments is not None else {})
        if validate:
            validate_arguments(tool_id, entry.input_schema, arguments)
        upstream = self.pool[entry.server]
        host_name = host.host if host is not None else None

        def ended(record: JournalCall) -> None:
            self.metrics.call_ended(entry.server, via, record.outcome, record.seconds())

        with self.journal.call(tool_id, arguments, via=via, host=host_name, intent=intent, ended=ended) as record:
            result = await upstream.call_tool(entry.name, arguments, host=host, repeatable=entry.repeatable)
            record.answered(result)
        return result

    def always_allowed(self, entry: ToolEntry) -> bool:
        """The user runs this tool without confirming it (its server's ``autoApprove`` / ``alwaysAllow``),
        so ``call`` does not hold it back for confirmation either."""
        upstream = self.pool.upstreams.get(entry.server)
        return upstream is not None and entry.name in upstream.config.always_allow

    def exposed(self) -> list[ToolEntry]:
        """Upstream tools the config lists directly under their ids (``nexus.expose``)."""
        patterns = self.settings.expose
        if not patterns:
            return []
        return [e for e in self.registry.entries() if matches_any(patterns, e)]

    def exposed_entry(self, tool_id: str) -> ToolEntry | None:
        try:
            entry = self.registry.get(tool_id)
        except ToolNotFound:
            return None
        return entry if matches_any(self.settings.expose, entry) else None

    # ##### Resources and prompts (passthrough, namespaced) #####

    def _connected(self, capability: str) -> list[str]:
        names = []
        for name, upstream in self.pool.upstreams.items():
            caps = upstream.capabilities
            if upstream.state is UpstreamState.CONNECTED and caps is not None and getattr(caps, capability):
                names.append(name)
        return names

    def resource_uri(self, server: str, uri: str) -> str:
        if server == self.settings.unprefixed:
            return uri
        return f"{RESOURCE_SCHEME}://{server}/{quote(uri, safe='')}"

    def resource_template_uri(self, server: str, template: str) -> str:
        if server == self.settings.unprefixed:
            return template
        return f"{RESOURCE_SCHEME}://{server}/{template}"

    def parse_resource_uri(self, uri: str) -> Namespaced:
        prefix = f"{RESOURCE_SCHEME}://"
        if uri.startswith(prefix):
            server, _, rest = uri[len(prefix) :].partition("/")
            if server in self.pool.upstreams:
                return Namespaced(server, unquote(rest))
        if self.settings.unprefixed:
            return Namespaced(self.settings.unprefixed, uri)
        raise NexusError(f"unknown resource {uri!r}: gateway resource URIs look like nexus://<server>/<uri>")

    def prompt_name(self, server: str, name: str) -> str:
        return name if server == self.settings.unprefixed else f"{server}__{name}"

    def parse_prompt_name(self, name: str) -> Namespaced:
        server, sep, rest = name.partition("__")
        if sep and server in self.pool.upstreams:
            return Namespaced(server, rest)
        if self.settings.unprefixed:
            return Namespaced(self.settings.unprefixed, name)
        raise NexusError(f"unknown prompt {name!r}: gateway prompt names look like <server>__<prompt>")

    async def list_resources(self) -> list[types.Resource]:
        resources: list[types.Resource] = []
        for server in self._connected("resources"):
            for item in await self._all_pages(server, "list_resources", "resources"):
                resources.append(item.model_copy(update={"uri": self.resource_uri(server, item.uri)}))
        return resources

    async def list_resource_templates(self) -> list[types.ResourceTemplate]:
        templates: list[types.ResourceTemplate] = []
        for server in self._connected("resources"):
            for item in await self._all_pages(server, "list_resource_templates", "resource_templates"):
                uri = self.resource_template_uri(server, item.uri_template)
                templates.append(item.model_copy(update={"uri_template": uri}))
        return templates

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        target = self.parse_resource_uri(uri)

        async def send(session: Any) -> Any:
            return await session.read_resource(target.original)

        result: types.ReadResourceResult = await self.pool[target.server].request(
            send, what=f"resources/read {target.original}", repeatable=True
        )
        contents = [c.model_copy(update={"uri": uri}) for c in result.contents]
        return result.model_copy(update={"contents": contents})

    async def subscribe_resource(self, uri: str, subscribe: bool) -> None:
        target = self.parse_resource_uri(uri)
        await self.pool[target.server].subscribe(target.original, subscribe)

    async def list_prompts(self) -> list[types.Prompt]:
        prompts: list[types.Prompt] = []
        for server in self._connected("prompts"):
            for item in await self._all_pages(server, "list_prompts", "prompts"):
                prompts.append(item.model_copy(update={"name": self.prompt_name(server, item.name)}))
        return prompts

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        target = self.parse_prompt_name(name)

        async def send(session: Any) -> Any:
            return await session.get_prompt(target.original, arguments)

        result: types.GetPromptResult = await self.pool[target.server].request(
            send, what=f"prompts/get {target.original}", repeatable=True
        )
        return result

    async def _all_pages(self, server: str, method: str, field: str) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(100):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None

            async def send(session: Any, params: Any = params) -> Any:
                return await getattr(session, method)(params=params)

            try:
                page = await self.pool[server].request(send, what=method, repeatable=True)
            except UpstreamError as exc:
                logger.warning("%s", exc)
                break
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            if not cursor:
                break
        return items
