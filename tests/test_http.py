"""The gateway over streamable HTTP and SSE, and HTTP/SSE upstreams, with real clients and servers."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from conftest import (
    FAULT_SERVER,
    REPO,
    fault_server,
    gateway_env,
    http_gateway_process,
    http_session,
    node_server,
    result_json,
    result_text,
    write_config,
)
from mcp import ClientSession
from mcp.client.sse import sse_client
from procs import free_port, gateway_command, running, start, stop  # bench/procs.py, on the path via conftest

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def http_upstream() -> Iterator[tuple[int, list[subprocess.Popen[bytes]]]]:
    """A fault server over streamable HTTP; the list lets a test restart it on the same port."""
    port = free_port()
    processes = [start([sys.executable, str(FAULT_SERVER), "--http", str(port)], port)]
    yield port, processes
    for process in processes:
        if process.poll() is None:
            stop(process)


@pytest.mark.parametrize("flags", [(), ("--json-response",)], ids=["event-streams", "json-bodies"])
async def test_gateway_over_streamable_http(tmp_path: Path, flags: tuple[str, ...]) -> None:
    config = write_config(tmp_path / "config.json", {"fault": fault_server()})
    async with http_gateway_process(config, tmp_path / "cache", *flags) as url, http_session(url) as session:
        tools = await session.list_tools()
        assert [t.name for t in tools.tools] == ["search_tools", "describe_tool", "call_tool", "call"]
        found = result_json(await session.call_tool("search_tools", {"query": "echo the text back"}))
        assert found["results"][0]["tool"] == "fault__echo"
        echoed = await session.call_tool("call_tool", {"tool": "fault__echo", "arguments": {"text": "over http"}})
        assert result_text(echoed) == "over http"
        async with httpx2.AsyncClient() as http:  # how the answer came: its own event stream, or one body
            answer = await http.post(url, json=INITIALIZE, headers=HEADERS)
        expected = "application/json" if flags else "text/event-stream"
        assert answer.status_code == 200 and answer.headers["content-type"].startswith(expected)


async def test_http_rejects_foreign_origin_and_host(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.json", {"fault": fault_server()})
    async with http_gateway_process(config, tmp_path / "cache") as url, httpx2.AsyncClient() as http:
        evil = await http.post(url, json=INITIALIZE, headers={**HEADERS, "Origin": "http://evil.example"})
        assert evil.status_code == 403
        rebound = await http.post(url, json=INITIALIZE, headers={**HEADERS, "Host": "evil.example:80"})
        assert rebound.status_code in (403, 421)
        same = await http.post(url, json=INITIALIZE, headers={**HEADERS, "Origin": url.rsplit("/", 1)[0]})
        assert same.status_code == 200


async def test_http_token_is_required_when_configured(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.json", {"fault": fault_server()})
    async with http_gateway_process(config, tmp_path / "cache", env={"NEXUS_TOKEN": "s3cret"}) as url:
        async with httpx2.AsyncClient() as http:
            anonymous = await http.post(url, json=INITIALIZE, headers=HEADERS)
            assert anonymous.status_code == 401
            wrong = await http.post(url, json=INITIALIZE, headers={**HEADERS, "Authorization": "Bearer nope"})
            assert wrong.status_code == 401
        async with http_session(url, headers={"Authorization": "Bearer s3cret"}) as session:
            assert len((await session.list_tools()).tools) == 4
        async with httpx2.AsyncClient() as http:  # the health check tells upstream names and errors
            health = url.rsplit("/", 1)[0] + "/healthz"
            assert (await http.get(health)).status_code == 401
            assert (await http.get(health, headers={"Authorization": "Bearer s3cret"})).status_code == 200


@pytest.mark.parametrize("flag", ["--http", "--sse"])
def test_healthz_reports_each_upstream_and_fails_when_none_serves(tmp_path: Path, flag: str) -> None:
    broken = {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no token')"]}
    for servers, code, status in (
        ({"fault": fault_server(), "broken": broken}, 200, "degraded"),
        ({"broken": broken}, 503, "unavailable"),
    ):
        config = write_config(tmp_path / "config.json", servers)
        port = free_port()
        with running(gateway_command(config, flag, f"127.0.0.1:{port}"), port, env=gateway_env(tmp_path / "cache")):
            answer = httpx2.get(f"http://127.0.0.1:{port}/healthz")
        report = answer.json()
        assert answer.status_code == code and report["status"] == status, report
        states = {u["name"]: u for u in report["upstreams"]}
        assert states["broken"]["state"] == "failed" and "no token" in states["broken"]["error"]
        if "fault" in states:
            assert states["fault"]["state"] == "connected" and states["fault"]["tools"] >= 8


async def test_metrics_count_calls_by_outcome_routes_and_upstreams_up(tmp_path: Path) -> None:
    """``GET /metrics``: what Prometheus scrapes from a gateway run as a service."""
    from prometheus_client.parser import text_string_to_metric_families

    broken = {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no token')"]}
    config = write_config(tmp_path / "config.json", {"fault": fault_server(), "broken": broken}, generate=False)
    async with http_gateway_process(config, tmp_path / "cache") as url, http_session(url) as host:
        base = url.rsplit("/", 1)[0]
        async with httpx2.AsyncClient() as http:
            await host.call_tool("call_tool", {"tool": "fault__crash", "arguments": {}})
            with anyio.fail_after(120):  # the crashed upstream restarted; the embedder loaded in the background
                while (health := (await http.get(f"{base}/healthz")).json())["routing"] != "ready" or not any(
                    u["name"] == "fault" and u["state"] == "connected" for u in health["upstreams"]
                ):
                    await anyio.sleep(0.2)
            for text in ("one", "two"):
                await host.call_tool("call_tool", {"tool": "fault__echo", "arguments": {"text": text}})
            await host.call_tool("search_tools", {"query": "echo some text"})
            intent = "echo this text back unchanged"
            routed = await host.call_tool("call", {"intent": intent, "arguments": {"text": "3"}})
            assert not routed.is_error, result_text(routed)
            scraped = await http.get(f"{base}/metrics")
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(scraped.text)
        for s in family.samples
    }
    assert samples[("nexus_upstream_up", (("server", "fault"),))] == 1
    assert samples[("nexus_upstream_up", (("server", "broken"),))] == 0
    assert samples[("nexus_calls_total", (("outcome", "ok"), ("server", "fault"), ("via", "call_tool")))] == 2
    assert samples[("nexus_calls_total", (("outcome", "failed"), ("server", "fault"), ("via", "call_tool")))] == 1
    assert samples[("nexus_calls_total", (("outcome", "ok"), ("server", "fault"), ("via", "call")))] == 1
    assert samples[("nexus_call_seconds_count", (("server", "fault"),))] == 4
    assert samples[("nexus_routes_total", (("decision", "chosen"), ("escalated", "no"), ("surface", "search")))] == 1
    assert samples[("nexus_routes_total", (("decision", "chosen"), ("escalated", "no"), ("surface", "call")))] == 1
    assert samples[("nexus_intents_total", (("outcome", "forwarded"),))] == 1
    assert samples[("nexus_registry_tools", ())] >= 8


def test_non_loopback_bind_without_token_warns(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.json", {})
    port = free_port()
    command = gateway_command(config, "--http", f"0.0.0.0:{port}")
    with running(command, port, env=gateway_env(tmp_path / "cache"), stderr=subprocess.PIPE, cwd=str(REPO)) as process:
        pass
    assert process.stderr is not None
    stderr = process.stderr.read()
    assert b"without a token" in stderr


def test_a_taken_port_is_one_line_before_the_gateway_starts(tmp_path: Path) -> None:
    """uvicorn's own bind failed after the upstreams had started and the models had loaded, with an
    exception group's traceback; the address is now bound first."""
    config = write_config(tmp_path / "config.json", {"echo": fault_server()})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(gateway_command(config, "--http", f"127.0.0.1:{port}"), capture_output=True, text=True,
                              timeout=60, env=gateway_env(tmp_path / "cache"), cwd=str(REPO))  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"--http/--sse: cannot serve on 127.0.0.1:{port}: Address already in use" in done.stderr


async def test_http_upstream_drop_fails_inflight_then_reconnects(
    tmp_path: Path, http_upstream: tuple[int, list[subprocess.Popen[bytes]]]
) -> None:
    port, processes = http_upstream
    config = write_config(
        tmp_path / "config.json",
        {"remote": {"url": f"http://127.0.0.1:{port}/mcp", "transport": "http"}},
        call_timeout=8,
        connect_timeout=8,
    )
    async with http_gateway_process(config, tmp_path / "cache") as url, http_session(url) as session:
        ok = await session.call_tool("call_tool", {"tool": "remote__echo", "arguments": {"text": "one"}})
        assert result_text(ok) == "one"
        started = time.monotonic()
        dropped = await session.call_tool("call_tool", {"tool": "remote__crash", "arguments": {}})
        assert dropped.is_error and "remote" in result_text(dropped)
        assert time.monotonic() - started < 8
        processes.append(start([sys.executable, str(FAULT_SERVER), "--http", str(port)], port))
        with anyio.fail_after(30):
            while True:
                again = await session.call_tool("call_tool", {"tool": "remote__echo", "arguments": {"text": "two"}})
                if not again.is_error:
                    break
                await anyio.sleep(0.2)
        assert result_text(again) == "two"


async def test_sse_upstream_and_sse_gateway(tmp_path: Path) -> None:
    upstream_port = free_port()
    upstream_command = [node_server("mcp-server-everything"), "sse"]
    with running(upstream_command, upstream_port, env={"PORT": str(upstream_port)}):
        config = write_config(
            tmp_path / "config.json",
            {"legacy": {"url": f"http://127.0.0.1:{upstream_port}/sse", "transport": "sse"}},
        )
        port = free_port()
        command = gateway_command(config, "--sse", f"127.0.0.1:{port}")
        with running(command, port, env=gateway_env(tmp_path / "cache"), cwd=str(REPO)):
            async with (
                sse_client(f"http://127.0.0.1:{port}/sse") as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                summed = await session.call_tool(
                    "call_tool", {"tool": "legacy__get-sum", "arguments": {"a": 20, "b": 22}}
                )
                assert "42" in result_text(summed)


async def test_sigterm_lets_the_calls_in_flight_answer_before_the_gateway_stops(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.json", {"fault": fault_server()})
    port = free_port()
    gateway = start(gateway_command(config, "--http", f"127.0.0.1:{port}"), port, env=gateway_env(tmp_path / "cache"))
    try:
        answers: dict[str, str] = {}
        async with http_session(f"http://127.0.0.1:{port}/mcp") as host:

            async def slow() -> None:  # 3 s of work, still running when the signal comes
                arguments = {"steps": 6, "interval": 0.5}
                done = await host.call_tool("call_tool", {"tool": "fault__progress", "arguments": arguments})
                answers["slow"] = result_text(done)

            async with anyio.create_task_group() as group:
                group.start_soon(slow)
                await anyio.sleep(1.0)
                gateway.send_signal(signal.SIGTERM)
                await anyio.sleep(0.5)
                late = await host.call_tool("call_tool", {"tool": "fault__echo", "arguments": {"text": "late"}})
                answers["late"] = result_text(late)
        assert answers["slow"] == "done"
        assert "shutting down" in answers["late"]  # refused, not started: nothing ran
        assert await anyio.to_thread.run_sync(gateway.wait, 15) == 0
    finally:
        stop(gateway)
