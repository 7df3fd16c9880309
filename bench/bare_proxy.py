"""The floor of any SDK-based proxy: a bare ``mcp`` server that forwards ``tools/call`` to one upstream.

No registry, no validation, no reconnects: just the SDK's stdio server in front of the SDK's stdio
client. ``gateway_overhead.py`` runs it beside the real gateway to separate what the SDK hop costs
from what the gateway adds on top.

    python bench/bare_proxy.py UPSTREAM_COMMAND [ARGS...]
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def main(command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as upstream:
        await upstream.initialize()
        listed = await upstream.list_tools()

        async def list_tools(ctx: ServerRequestContext[Any], p: Any) -> types.ListToolsResult:
            return listed

        async def call_tool(ctx: ServerRequestContext[Any], p: types.CallToolRequestParams) -> Any:
            return await upstream.call_tool(p.name, p.arguments)

        server: Server[Any] = Server("bare-proxy", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (host_read, host_write):
            await server.run(host_read, host_write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
