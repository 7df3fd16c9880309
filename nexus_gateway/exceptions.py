"""Every error the gateway raises on purpose.

    NexusError
    ├── ConfigError               bad config file or flag; names the server and field
    ├── RegistryError
    │   └── ToolNotFound          an id no upstream serves
    ├── ArgumentError             arguments that fail the tool's JSON schema; names the field
    ├── CacheCorrupt              a registry-cache file failed its checksum (caught, rebuilt)
    └── UpstreamError             carries ``.upstream`` (the server name)
        ├── UpstreamUnavailable   not connected, or the connection died mid-call
        ├── UpstreamTimeout       no answer within the per-call timeout
        └── UpstreamProtocolError the upstream answered with a JSON-RPC error

The host-facing server is the only place these turn into MCP error results; the CLI is the
only place they turn into an exit code and a one-line message.
"""

from __future__ import annotations


class NexusError(Exception):
    """Base of every deliberate gateway error."""


class ConfigError(NexusError):
    """The configuration is invalid; the message names the server and the field."""


class RegistryError(NexusError):
    """Something is wrong with the tool registry."""


class ToolNotFound(RegistryError):
    """No upstream serves a tool with this id."""

    def __init__(self, tool_id: str, suggestions: list[str] | None = None) -> None:
        self.tool_id = tool_id
        self.suggestions = suggestions or []
        hint = f" Did you mean: {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"Unknown tool {tool_id!r}.{hint} Use search_tools to find tool ids.")


class ToolHeld(ToolNotFound):
    """The tool's definition changed upstream since it was pinned, and ``nexus.pin_tools`` holds it."""

    def __init__(self, tool_id: str, server: str) -> None:
        NexusError.__init__(
            self,
            f"{tool_id} is held: its server changed its description or schema since it was pinned. "
            f"`nexus-gateway pins` shows the change; `nexus-gateway pins --accept {server}` trusts it.",
        )
        self.tool_id = tool_id
        self.suggestions = []


class ArgumentError(NexusError):
    """Arguments do not satisfy the tool's input schema."""

    def __init__(self, tool_id: str, field: str, problem: str) -> None:
        self.tool_id = tool_id
        self.field = field
        self.problem = problem
        super().__init__(f"Invalid arguments for {tool_id}: field {field!r}: {problem}")


class CacheCorrupt(NexusError):
    """A registry-cache file is truncated or fails its checksum."""


class UpstreamError(NexusError):
    """An upstream server failed; ``upstream`` names it."""

    def __init__(self, upstream: str, message: str) -> None:
        self.upstream = upstream
        super().__init__(f"upstream {upstream!r}: {message}")


class UpstreamUnavailable(UpstreamError):
    """The upstream is not connected, or its connection died during the call."""


class UpstreamTimeout(UpstreamError):
    """The upstream gave no answer within the per-call timeout."""


class UpstreamProtocolError(UpstreamError):
    """The upstream answered with a JSON-RPC error."""
