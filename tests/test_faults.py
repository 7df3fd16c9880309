"""Faults: crashing, hanging and changing upstreams, garbage input, corrupted cache, pagination."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import (
    REPO,
    fault_server,
    gateway_env,
    http_gateway_process,
    http_session,
    result_json,
    result_text,
    stdio_gateway,
    write_config,
)
from mcp import ClientSession, MCPDeprecationWarning
from procs import free_port, gateway_command, running  # bench/procs.py, on the path via conftest

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 4.0


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[ClientSession]:
    config = write_config(
        tmp_path / "config.json",
        {
            "fault": fault_server("--tools", "30", "--page-size", "7", "--marker", str(tmp_path / "calls")),
            "other": fault_server(),
        },
        call_timeout=CALL_TIMEOUT,
    )
    async with stdio_gateway(config, tmp_path / "cache") as session:
        yield session


async def call(session: ClientSession, tool: str, arguments: dict[str, object] | None = None) -> types.CallToolResult:
    result = await session.call_tool("call_tool", {"tool": tool, "arguments": arguments or {}})
    assert isinstance(result, types.CallToolResult)
    return result


async def search_ids(session: ClientSession, query: str) -> list[str]:
    result = await session.call_tool("search_tools", {"query": query, "limit": 5})
    return [r["tool"] for r in result_json(result)["results"]]


async def test_upstream_crash_mid_call_errors_fast_then_reconnects(gateway: ClientSession, tmp_path: Path) -> None:
    started = time.monotonic()
    crashed = await call(gateway, "fault__crash")
    elapsed = time.monotonic() - started
    assert crashed.is_error
    assert "connection lost" in result_text(crashed) or "closed" in result_text(crashed)
    # A tool not marked read-only or idempotent is never sent twice: the host is told it may have run.
    assert "may have run" in result_text(crashed)
    assert elapsed < CALL_TIMEOUT, f"crash answered after {elapsed:.1f}s, not at once"
    # The other upstream never noticed.
    assert result_text(await call(gateway, "other__echo", {"text": "still here"})) == "still here"
    # The next call to the crashed server succeeds once it has reconnected.
    recovered = await call(gateway, "fault__echo", {"text": "back"})
    assert not recovered.is_error, result_text(recovered)
    assert result_text(recovered) == "back"
    assert (tmp_path / "calls").read_text().splitlines() == ["crash"]


async def test_a_read_only_call_lost_with_its_connection_is_sent_again(gateway: ClientSession, tmp_path: Path) -> None:
    flag = tmp_path / "crashed-once"
    answered = await call(gateway, "fault__crash_once", {"flag": str(flag)})
    assert not answered.is_error, result_text(answered)
    assert result_text(answered) == "survived"
    # The first attempt really died with its server, and the answer came from the restarted one.
    assert flag.exists()
    assert (tmp_path / "calls").read_text().splitlines() == ["crash_once", "crash_once"]


async def test_hanging_call_times_out_and_upstream_sees_the_cancel(gateway: ClientSession) -> None:
    started = time.monotonic()
    hung = await call(gateway, "fault__hang")
    elapsed = time.monotonic() - started
    assert hung.is_error and "no answer within" in result_text(hung)
    assert CALL_TIMEOUT - 0.5 <= elapsed < CALL_TIMEOUT + 3
    with anyio.fail_after(5):
        while result_text(await call(gateway, "fault__cancelled")) != "1":
            await anyio.sleep(0.05)


async def test_host_cancellation_reaches_the_upstream(gateway: ClientSession) -> None:
    with anyio.move_on_after(0.5):
        await call(gateway, "fault__hang")
    with anyio.fail_after(5):
        while result_text(await call(gateway, "fault__cancelled")) != "1":
            await anyio.sleep(0.05)


async def test_list_changed_reingests_without_restart(gateway: ClientSession) -> None:
    surface_before = await gateway.list_tools()
    assert "fault__zebra_counter" not in await search_ids(gateway, "zebra counter")
    added = await call(gateway, "fault__add_tool", {"name": "zebra_counter"})
    assert not added.is_error
    with anyio.fail_after(10):
        while "fault__zebra_counter" not in await search_ids(gateway, "zebra counter"):
            await anyio.sleep(0.05)
    assert result_text(await call(gateway, "fault__zebra_counter")) == "zebra_counter ok"
    surface_after = await gateway.list_tools()
    assert surface_after.model_dump() == surface_before.model_dump()


async def test_invalid_arguments_never_reach_the_upstream(gateway: ClientSession) -> None:
    assert result_text(await call(gateway, "fault__count")) == "0"
    missing = await call(gateway, "fault__echo", {})
    assert missing.is_error and "'text'" in result_text(missing)
    wrong = await call(gateway, "fault__strict", {"owner": "octo", "repo": "hello", "count": 0})
    assert wrong.is_error and "'count'" in result_text(wrong)
    extra = await call(gateway, "fault__strict", {"owner": "octo", "repo": "hello", "colour": "red"})
    assert extra.is_error and "'colour'" in result_text(extra)
    assert result_text(await call(gateway, "fault__count")) == "0"
    assert result_text(await call(gateway, "fault__strict", {"owner": "octo", "repo": "hello"})) == "octo/hello"


async def test_paginated_tool_list_is_read_fully(gateway: ClientSession) -> None:
    assert (await search_ids(gateway, "filler tool number 29"))[0] == "fault__filler_029"
    assert result_text(await call(gateway, "fault__filler_029")) == "filler_029 ok"


async def test_progress_is_forwarded_to_the_host(gateway: ClientSession) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = await gateway.call_tool(
        "call_tool", {"tool": "fault__progress", "arguments": {"steps": 3}}, progress_callback=on_progress
    )
    assert result_text(result) == "done"
    assert [p for p, _, _ in seen] == [1, 2, 3]
    assert seen[-1][2] == "step 3"


async def test_failed_upstream_does_not_block_others(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "config.json",
        {"broken": {"command": str(tmp_path / "no-such-binary")}, "fault": fault_server()},
        call_timeout=CALL_TIMEOUT,
        connect_timeout=3,
    )
    async with stdio_gateway(config, tmp_path / "cache") as session:
        assert result_text(await call(session, "fault__echo", {"text": "ok"})) == "ok"


async def test_with_every_upstream_down_search_and_call_say_why(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "config.json", {"broken": {"command": str(tmp_path / "no-such-binary")}}, connect_timeout=3
    )
    async with stdio_gateway(config, tmp_path / "cache") as session:
        found = result_json(await session.call_tool("search_tools", {"query": "current time"}))
        assert found["results"] == [] and found["note"].startswith("No upstream tools are available: broken failed")
        assert "no-such-binary" in found["note"]
        routed = result_json(await session.call_tool("call", {"intent": "what time is it in Tokyo?"}))
        assert routed["status"] == "no_tools" and "no-such-binary" in routed["message"]


def test_garbage_line_on_stdio_keeps_serving(tmp_path: Path) -> None:
    """A host that writes junk must not take the gateway down."""
    config = write_config(tmp_path / "config.json", {"fault": fault_server()})
    process = subprocess.Popen(
        [sys.executable, "-m", "nexus_gateway", "serve", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**gateway_env(tmp_path / "cache"), "PATH": "/usr/bin:/bin"},
        cwd=str(REPO),
    )
    assert process.stdin and process.stdout
    initialize = types.JSONRPCRequest(
        jsonrpc="2.0",
        id=1,
        method="initialize",
        params={
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    lines = [
        initialize.model_dump_json(by_alias=True, exclude_none=True),
        types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized").model_dump_json(
            by_alias=True, exclude_none=True
        ),
        "this is not json at all {{{",
        '{"jsonrpc": "2.0", "id": 7, "method": 42}',
        types.JSONRPCRequest(jsonrpc="2.0", id=2, method="tools/list").model_dump_json(
            by_alias=True, exclude_none=True
        ),
    ]
    try:
        process.stdin.write(("\n".join(lines) + "\n").encode())
        process.stdin.flush()
        answers = {}
        deadline = time.monotonic() + 60
        while 2 not in answers and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if "id" in message:
                answers[message["id"]] = message
        assert 2 in answers, f"no tools/list answer after garbage; got {answers}"
        assert [t["name"] for t in answers[2]["result"]["tools"]] == [
            "search_tools",
            "describe_tool",
            "call_tool",
            "call",
        ]
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()


async def test_corrupted_cache_file_is_rebuilt(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.json", {"fault": fault_server()})
    cache = tmp_path / "cache"
    async with stdio_gateway(config, cache) as session:
        assert "fault__echo" in await search_ids(session, "echo text back")
    tool_files = sorted((cache / "tools").glob("*.json"))
    server_file = cache / "servers" / "fault.json"
    assert tool_files and server_file.exists()
    victim = tool_files[0]
    victim.write_bytes(victim.read_bytes()[: len(victim.read_bytes()) // 2])  # truncated
    server_file.write_bytes(server_file.read_bytes().replace(b"fault", b"faulT"))  # modified
    async with stdio_gateway(config, cache) as session:
        assert "fault__echo" in await search_ids(session, "echo text back")
    from nexus_gateway.cache import RegistryCache

    reread = RegistryCache(cache)
    assert reread.read_json(victim) is not None, "the truncated file was not rewritten"
    assert reread.load_server("fault") is not None


class Updates:
    """A host's view of `resources/updated`: the URIs, and a wait for the next one."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.arrived = anyio.Event()

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(str(message.params.uri))
            self.arrived.set()

    async def next(self, seconds: float = 10) -> str:
        with anyio.fail_after(seconds):
            await self.arrived.wait()
        self.arrived = anyio.Event()
        return self.uris[-1]


async def subscribe(host: ClientSession, uri: str, on: bool = True) -> None:
    with warnings.catch_warnings():  # 2026-07-28 replaces subscriptions; today's hosts still subscribe
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await (host.subscribe_resource(uri) if on else host.unsubscribe_resource(uri))


async def test_a_subscription_outlives_its_upstreams_restart(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.json", {"fault": fault_server()}, call_timeout=CALL_TIMEOUT)
    updates = Updates()
    async with stdio_gateway(config, tmp_path / "cache", message_handler=updates.on_message) as host:
        uri = next(str(r.uri) for r in (await host.list_resources()).resources)
        assert uri.startswith("nexus://fault/")
        await subscribe(host, uri)
        assert result_text(await call(host, "fault__touch")) == "announced"
        assert await updates.next() == uri
        assert (await call(host, "fault__crash")).is_error
        # The restarted server knows no subscription: the gateway makes it again on the new connection.
        assert result_text(await call(host, "fault__touch")) == "announced"
        assert await updates.next() == uri


async def test_one_host_leaving_a_subscription_leaves_it_for_the_others(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.json", {"fault": fault_server()})
    first, second = Updates(), Updates()
    async with (
        http_gateway_process(config, tmp_path / "cache") as url,
        http_session(url, message_handler=first.on_message) as one,
        http_session(url, message_handler=second.on_message) as other,
    ):
        uri = next(str(r.uri) for r in (await one.list_resources()).resources)
        await subscribe(one, uri)
        await subscribe(other, uri)
        await subscribe(one, uri, on=False)
        assert result_text(await call(other, "fault__touch")) == "announced"
        assert await second.next() == uri
        await subscribe(other, uri, on=False)  # the last one out: the upstream subscription ends
        assert result_text(await call(other, "fault__touch")) == "no subscriber"
        assert first.uris == []


async def until_answered(host: ClientSession, tool: str, seconds: float = 30) -> types.CallToolResult:
    """Call ``tool`` until it answers without error (an upstream the gateway is still starting)."""
    with anyio.fail_after(seconds):
        while (result := await call(host, tool, {"text": "hi"})).is_error:
            await anyio.sleep(0.2)
    return result


async def test_an_edited_config_reaches_the_running_gateway(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    write_config(path, {"fault": fault_server()})
    async with stdio_gateway(path, tmp_path / "cache") as host:
        assert result_text(await call(host, "fault__echo", {"text": "one"})) == "one"
        write_config(path, {"fault": fault_server(), "added": fault_server()})
        assert result_text(await until_answered(host, "added__echo")) == "hi"
        # The upstream the edit left alone kept its connection (and so its state: one echo so far).
        assert result_text(await call(host, "fault__count")) == "1"
        path.write_text('{"mcpServers": {"fault": ')  # half-way through an edit: keep serving
        await anyio.sleep(2.5)
        assert result_text(await call(host, "added__echo", {"text": "still"})) == "still"
        write_config(path, {"added": fault_server()})
        with anyio.fail_after(30):  # a call in flight at the moment of removal fails saying so
            while "Unknown tool 'fault__echo'" not in result_text(
                gone := await call(host, "fault__echo", {"text": "x"})
            ):
                assert not gone.is_error or "removed from the configuration" in result_text(gone), result_text(gone)
                await anyio.sleep(0.2)
        assert result_text(await call(host, "added__echo", {"text": "kept"})) == "kept"


async def test_sighup_reads_the_config_again(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    write_config(path, {"aaaaa": fault_server()})
    port = free_port()
    with running(gateway_command(path, "--http", f"127.0.0.1:{port}"), port, env=gateway_env(tmp_path / "cache")) as gw:
        async with http_session(f"http://127.0.0.1:{port}/mcp") as host:
            before = path.stat()  # the new file: the same size, and given the same time before it replaces
            edited = write_config(tmp_path / "edited.json", {"bbbbb": fault_server()})
            os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))
            os.replace(edited, path)
            await anyio.sleep(2.5)
            assert (await call(host, "bbbbb__echo", {"text": "hi"})).is_error  # polling saw no change
            gw.send_signal(signal.SIGHUP)
            assert result_text(await until_answered(host, "bbbbb__echo")) == "hi"


@pytest.mark.parametrize("edit", ["removed", "changed"])
async def test_a_call_in_flight_when_its_upstream_is_edited_away_is_still_answered(tmp_path: Path, edit: str) -> None:
    """The user edits the config while an agent's call runs on that server: the call was already running
    upstream, and cutting it off would lose its answer, not its effect. The old upstream answers what it
    has in flight; new calls see the edit at once (a removed server's tools are gone, a changed server's
    calls go to its new process)."""
    path = tmp_path / "config.json"
    write_config(path, {"fault": fault_server(), "other": fault_server()}, call_timeout=60)
    edited = {"other": fault_server()} if edit == "removed" else {"fault": fault_server("--tools", "9")}
    async with stdio_gateway(path, tmp_path / "cache") as host:
        assert result_text(await call(host, "fault__echo", {"text": "warm"})) == "warm"
        answers: list[types.CallToolResult] = []

        async def long_call() -> None:  # about 10 s (room for a slow machine), reporting progress as it goes
            answers.append(await call(host, "fault__progress", {"steps": 100, "interval": 0.1}))

        async with anyio.create_task_group() as group:
            group.start_soon(long_call)
            await anyio.sleep(0.5)
            write_config(path, edited, call_timeout=60)
            with anyio.fail_after(30):  # the edit is seen while the call still runs
                if edit == "removed":
                    while "Unknown tool" not in result_text(await call(host, "fault__echo", {"text": "x"})):
                        await anyio.sleep(0.1)
                else:
                    while result_text(await call(host, "fault__count")) != "0":  # the new process counts afresh
                        await anyio.sleep(0.1)
            assert not answers, "the edit was seen only after the call had ended"
        assert not answers[0].is_error and result_text(answers[0]) == "done", result_text(answers[0])


async def test_exposed_tools_that_arrive_later_are_announced_to_the_host(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    write_config(path, {"fault": fault_server()}, expose=["added__echo"])
    announced = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            announced.set()

    async with stdio_gateway(path, tmp_path / "cache", message_handler=on_message) as host:
        capabilities = host.server_capabilities
        assert capabilities is not None and capabilities.tools is not None and capabilities.tools.list_changed
        assert "added__echo" not in [t.name for t in (await host.list_tools()).tools]
        write_config(path, {"fault": fault_server(), "added": fault_server()}, expose=["added__echo"])
        with anyio.fail_after(30):
            await announced.wait()
        assert "added__echo" in [t.name for t in (await host.list_tools()).tools]
        assert result_text(await host.call_tool("added__echo", {"text": "direct"})) == "direct"


async def test_progress_reports_keep_a_long_call_alive_up_to_the_longest_a_call_may_take(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.json", {"fault": fault_server()}, call_timeout=1.0, max_call_timeout=4.0)
    async with stdio_gateway(config, tmp_path / "cache") as host:
        # 3 s in all, three times the timeout, but never 1 s without a report
        done = await call(host, "fault__progress", {"steps": 6, "interval": 0.5})
        assert not done.is_error and result_text(done) == "done", result_text(done)
        started = time.monotonic()
        endless = await call(host, "fault__progress", {"steps": 100, "interval": 0.5})
        elapsed = time.monotonic() - started
        assert endless.is_error and "the longest a call may take" in result_text(endless), result_text(endless)
        assert 3.5 <= elapsed < 6


async def test_resources_of_an_upstream_that_arrives_later_are_announced_to_the_host(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    write_config(path, {"fault": fault_server()})
    announcements = anyio.create_memory_object_stream[None](10)

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            await announcements[0].send(None)

    async with stdio_gateway(path, tmp_path / "cache", message_handler=on_message) as host:
        capabilities = host.server_capabilities
        assert capabilities is not None and capabilities.resources is not None and capabilities.resources.list_changed
        before = [str(r.uri) for r in (await host.list_resources()).resources]
        assert before == ["nexus://fault/fault%3A%2F%2Fnote"], before
        write_config(path, {"fault": fault_server(), "second": fault_server()})
        with anyio.fail_after(30):  # the host lists again each time it is told, until the new one is there
            while len(after := [str(r.uri) for r in (await host.list_resources()).resources]) < 2:
                await announcements[1].receive()
        assert sorted(after) == ["nexus://fault/fault%3A%2F%2Fnote", "nexus://second/fault%3A%2F%2Fnote"], after
