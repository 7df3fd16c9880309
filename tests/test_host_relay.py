"""What an upstream sends its client reaches the host through the gateway: its own requests during a
call (sampling, elicitation) and its notices that a subscribed resource changed.

The real ``server-everything`` offers its sampling and elicitation tools only to a client that declares
those capabilities, and sends the request back while the tool call is in flight; the host here is a real
MCP client over stdio or streamable HTTP with its own callbacks.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import (
    http_gateway_process,
    http_session,
    node_server,
    result_json,
    result_text,
    stdio_gateway,
    write_config,
)
from mcp import ClientSession, MCPDeprecationWarning

pytestmark = pytest.mark.anyio


def everything_only(workdir: Path, call_timeout: float) -> Path:
    servers = {"everything": {"command": node_server("mcp-server-everything"), "args": ["stdio"]}}
    return write_config(workdir / "config.json", servers, call_timeout=call_timeout)


class Host:
    """A host that answers sampling with its "model" and elicitation with its "user", slowly."""

    def __init__(self, think: float = 0.0) -> None:
        self.prompts: list[str] = []
        self.think = think

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.prompts.extend(getattr(m.content, "text", "") for m in params.messages)
        text = types.TextContent(type="text", text="a haiku from the host's model")
        return types.CreateMessageResult(role="assistant", content=text, model="host-model")

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        await anyio.sleep(self.think)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})

    def callbacks(self) -> dict[str, Any]:
        return {"sampling_callback": self.sample, "elicitation_callback": self.elicit}


async def sample_and_elicit(gateway: ClientSession, host: Host) -> None:
    sampled = await gateway.call_tool(
        "call_tool",
        {"tool": "everything__trigger-sampling-request", "arguments": {"prompt": "write a haiku", "maxTokens": 20}},
    )
    assert not sampled.is_error, result_text(sampled)
    assert "a haiku from the host's model" in result_text(sampled)
    assert any("write a haiku" in prompt for prompt in host.prompts)

    elicited = await gateway.call_tool("call_tool", {"tool": "everything__trigger-elicitation-request"})
    assert not elicited.is_error, result_text(elicited)
    assert "Name: Ada Lovelace" in result_text(elicited)
    assert "Agreed to terms: true" in result_text(elicited)


async def test_sampling_and_elicitation_from_an_upstream_reach_the_host(tmp_path: Path) -> None:
    """Over stdio; the person takes longer to answer the form than the call's whole timeout."""
    host = Host(think=3)
    config = everything_only(tmp_path, call_timeout=2)
    async with stdio_gateway(config, tmp_path / "cache", **host.callbacks()) as gateway:
        await sample_and_elicit(gateway, host)


async def test_relayed_requests_ride_the_http_hosts_own_request_stream(tmp_path: Path) -> None:
    host = Host()
    config = everything_only(tmp_path, call_timeout=20)
    async with (
        http_gateway_process(config, tmp_path / "cache") as url,
        http_session(url, **host.callbacks()) as gateway,
    ):
        await sample_and_elicit(gateway, host)


async def test_a_host_without_sampling_is_told_why_the_upstream_request_failed(tmp_path: Path) -> None:
    config = everything_only(tmp_path, call_timeout=20)
    async with stdio_gateway(config, tmp_path / "cache") as host:
        result = await host.call_tool(
            "call_tool", {"tool": "everything__trigger-sampling-request", "arguments": {"prompt": "hi"}}
        )
        assert result.is_error
        assert "does not support sampling" in result_text(result)


async def test_a_routed_call_that_may_destroy_data_is_confirmed_by_the_hosts_user(tmp_path: Path) -> None:
    """A host that can show its user a form (elicitation) gets the question there, not in its model's
    hands: yes runs the call, no runs nothing and says so."""
    files = tmp_path / "files"
    files.mkdir()
    asked: list[str] = []
    answers = iter([True, False])

    async def user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"run": next(answers)})

    servers = {"filesystem": {"command": node_server("mcp-server-filesystem"), "args": [str(files)]}}
    config = write_config(tmp_path / "config.json", servers, routing={"calibration": None}, generate=False)
    async with stdio_gateway(config, tmp_path / "cache", elicitation_callback=user) as gateway:
        target = files / "confirmed.txt"
        arguments = {"path": str(target), "content": "written after the user said yes\n"}
        intent = "overwrite the file confirmed.txt with new text"
        ran = await gateway.call_tool("call", {"intent": intent, "arguments": arguments})
        assert not ran.is_error, result_text(ran)
        assert target.read_text() == "written after the user said yes\n"
        assert "filesystem__write_file" in asked[0] and "delete or overwrite" in asked[0] and str(target) in asked[0]
        assert (ran.meta or {})["io.nexus-gateway/trace"]["confirmed_by_user"] is True

        again = {"path": str(target), "content": "never written\n"}
        declined = result_json(await gateway.call_tool("call", {"intent": intent, "arguments": again}))
        assert declined["status"] == "declined" and declined["tool"] == "filesystem__write_file", declined
        assert target.read_text() == "written after the user said yes\n" and len(asked) == 2


async def test_a_subscribed_resource_update_reaches_the_host_under_the_gateways_uri(tmp_path: Path) -> None:
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    async with stdio_gateway(everything_only(tmp_path, 20), tmp_path / "cache", message_handler=on_message) as host:
        uri = next(str(r.uri) for r in (await host.list_resources()).resources)
        assert uri.startswith("nexus://everything/")
        with warnings.catch_warnings():  # 2026-07-28 replaces subscriptions; today's hosts still subscribe
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await host.subscribe_resource(uri)
        toggled = await host.call_tool("call_tool", {"tool": "everything__toggle-subscriber-updates"})
        assert not toggled.is_error, result_text(toggled)
        with anyio.fail_after(15):  # the server sends one at once, then every 5 s
            await arrived.wait()
        assert updated[0] == uri
