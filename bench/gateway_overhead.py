"""Gateway overhead: the same ``tools/call`` against the same upstream, direct and through the gateway.

Calls alternate (direct, gateway, direct, …) in one run so that both see the same machine load. For
stdio the upstream is a stdio child; for HTTP the upstream serves streamable HTTP and the gateway
serves streamable HTTP too. Throughput is measured with concurrent callers over HTTP.

    python bench/gateway_overhead.py [--calls 2000] [--concurrency 16] [--seconds 5] [--json OUT]

Prints a table and writes JSON (default ``bench/results/gateway_overhead.json``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import orjson
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from procs import free_port, gateway_command, running
from stats import bootstrap_median_ci

ROOT = Path(__file__).resolve().parent.parent
FAULT_SERVER = ROOT / "tests" / "fixtures" / "fault_server.py"
Call = Callable[[], Awaitable[Any]]


@asynccontextmanager
async def stdio_session(command: list[str], env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        yield session


@asynccontextmanager
async def http_session(url: str) -> AsyncIterator[ClientSession]:
    async with (
        create_mcp_http_client() as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        yield session


@asynccontextmanager
async def _quiet(context: Any) -> AsyncIterator[None]:
    """A synchronous process context used inside ``async with``."""
    with context:
        yield


def write_config(path: Path, upstream: dict[str, Any]) -> Path:
    # call_tool needs no local model; one loading in the background would share the cores with the calls
    nexus = {"call_timeout": 30, "generate": False}
    path.write_text(orjson.dumps({"mcpServers": {"up": upstream}, "nexus": nexus}).decode())
    return path


async def interleaved(calls: int, *paths: Call, warmup: int = 50) -> list[np.ndarray]:
    """Latency in ms of each path, calling them in turn so that all see the same machine state."""
    for _ in range(warmup):
        for path in paths:
            await path()
    times: list[list[float]] = [[] for _ in paths]
    for _ in range(calls):
        for index, path in enumerate(paths):
            start = time.perf_counter()
            await path()
            times[index].append(time.perf_counter() - start)
    return [np.array(t) * 1000 for t in times]


async def throughput(call: Call, concurrency: int, seconds: float) -> float:
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    return done / (time.perf_counter() - start)


def summarise(direct: np.ndarray, gateway: np.ndarray) -> dict[str, Any]:
    p50_d, p50_g = float(np.median(direct)), float(np.median(gateway))
    added = gateway - direct
    return {
        "n": len(direct),
        "direct_p50_ms": p50_d,
        "direct_p50_ci": bootstrap_median_ci(direct),
        "direct_p99_ms": float(np.percentile(direct, 99)),
        "gateway_p50_ms": p50_g,
        "gateway_p50_ci": bootstrap_median_ci(gateway),
        "gateway_p99_ms": float(np.percentile(gateway, 99)),
        "added_p50_ms": float(np.median(added)),
        "added_p50_ci": bootstrap_median_ci(added),
        "ratio_p50": p50_g / p50_d,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="nexus-bench-"))
    env = {"NEXUS_CACHE_DIR": str(work / "cache"), "NEXUS_LOG_LEVEL": "WARNING"}
    echo = {"text": "benchmark payload"}
    results: dict[str, Any] = {}

    # stdio: client → upstream  vs  client → gateway → upstream  (vs a bare SDK proxy, the floor)
    upstream = [sys.executable, str(FAULT_SERVER)]
    bare = [sys.executable, str(ROOT / "bench" / "bare_proxy.py"), *upstream]
    config = write_config(work / "stdio.json", {"command": upstream[0], "args": upstream[1:]})
    async with (
        stdio_session(upstream) as direct,
        stdio_session(gateway_command(config), env=env) as gateway,
        stdio_session(bare) as proxy,
    ):

        async def d() -> Any:
            return await direct.call_tool("echo", echo)

        async def g() -> Any:
            return await gateway.call_tool("call_tool", {"tool": "up__echo", "arguments": echo})

        async def b() -> Any:
            return await proxy.call_tool("echo", echo)

        t_direct, t_gateway, t_bare = await interleaved(args.calls, d, g, b)
        results["stdio"] = summarise(t_direct, t_gateway)
        results["stdio_bare_sdk_proxy"] = summarise(t_direct, t_bare)

    # HTTP: the upstream and the gateway both serve streamable HTTP; the gateway twice, answering on an
    # event stream per request (the default) and with one JSON body (`serve --json-response`).
    up_port, gw_port, json_port = free_port(), free_port(), free_port()
    config = write_config(work / "http.json", {"url": f"http://127.0.0.1:{up_port}/mcp"})
    json_gateway = gateway_command(config, "--http", f"127.0.0.1:{json_port}", "--json-response")
    async with (
        _quiet(running([*upstream, "--http", str(up_port)], up_port)),
        _quiet(running(gateway_command(config, "--http", f"127.0.0.1:{gw_port}"), gw_port, env)),
        _quiet(running(json_gateway, json_port, env)),
        http_session(f"http://127.0.0.1:{up_port}/mcp") as direct,
        http_session(f"http://127.0.0.1:{gw_port}/mcp") as gateway,
        http_session(f"http://127.0.0.1:{json_port}/mcp") as json_body,
    ):

        async def hd() -> Any:
            return await direct.call_tool("echo", echo)

        async def hg() -> Any:
            return await gateway.call_tool("call_tool", {"tool": "up__echo", "arguments": echo})

        async def hj() -> Any:
            return await json_body.call_tool("call_tool", {"tool": "up__echo", "arguments": echo})

        t_direct, t_gateway, t_json = await interleaved(max(args.calls // 4, 100), hd, hg, hj)
        results["http"] = summarise(t_direct, t_gateway)
        results["http_json_response"] = summarise(t_direct, t_json)
        for _ in range(2):  # alternate the three, so that each sees the machine's slow and fast spells
            for name, call in (("direct", hd), ("gateway", hg), ("json_response", hj)):
                rates = results["http"].setdefault(f"{name}_rates", [])
                rates.append(await throughput(call, args.concurrency, args.seconds / 2))
        for name in ("direct", "gateway", "json_response"):
            results["http"][f"{name}_calls_per_s"] = float(np.mean(results["http"].pop(f"{name}_rates")))
        results["http"]["concurrency"] = args.concurrency

    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    return results


def print_table(results: dict[str, Any]) -> None:
    print(
        f"{'path':20}  {'n':>5}  {'direct p50':>10}  {'gateway p50':>11}  {'added p50 [95% CI]':>24}  "
        f"{'direct p99':>10}  {'gateway p99':>11}  {'ratio':>5}"
    )
    for name in ("stdio", "stdio_bare_sdk_proxy", "http", "http_json_response"):
        r = results[name]
        ci = r["added_p50_ci"]
        print(
            f"{name:20}  {r['n']:>5}  {r['direct_p50_ms']:>8.2f}ms  {r['gateway_p50_ms']:>9.2f}ms  "
            f"{r['added_p50_ms']:>8.2f}ms [{ci[0]:.2f}, {ci[1]:.2f}]  {r['direct_p99_ms']:>8.2f}ms  "
            f"{r['gateway_p99_ms']:>9.2f}ms  {r['ratio_p50']:>5.2f}"
        )
    h = results["http"]
    print(
        f"HTTP throughput at concurrency {h['concurrency']}: direct {h['direct_calls_per_s']:.0f} calls/s, "
        f"gateway {h['gateway_calls_per_s']:.0f} calls/s, gateway with --json-response "
        f"{h['json_response_calls_per_s']:.0f} calls/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "gateway_overhead.json"))
    args = parser.parse_args()
    results = anyio.run(run, args, backend_options={"use_uvloop": True})
    print_table(results)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
