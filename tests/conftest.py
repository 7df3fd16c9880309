"""Shared test plumbing: real upstream servers, a real gateway process, a real MCP client.

Nothing here mocks MCP. The gateway runs as ``python -m nexus_gateway serve`` in a child process and
is driven over stdio or streamable HTTP by the SDK's own client. Upstreams are the real PyPI servers
(``mcp-server-time``, ``mcp-server-git``), the real npm servers (installed by ``npm ci --prefix
tests/servers``) and ``tests/fixtures/fault_server.py`` for fault injection.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
sys.path.insert(0, str(REPO / "bench"))
from procs import free_port, gateway_command, running  # noqa: E402  (shared with bench/)

NODE_BIN = TESTS / "servers" / "node_modules" / ".bin"
FIXTURES = TESTS / "fixtures"
FAULT_SERVER = FIXTURES / "fault_server.py"
PY_BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


def node_server(name: str) -> str:
    path = NODE_BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: install the test servers with `npm ci --prefix tests/servers`")
    return str(path)


def python_server(name: str) -> str:
    path = PY_BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: install the test extras with `pip install -e '.[test]'`")
    return str(path)


def fault_server(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FAULT_SERVER), *args]}


def real_servers(workdir: Path) -> dict[str, Any]:
    """The five real upstream servers, each as Claude Desktop would configure it."""
    repo = workdir / "repo"
    if not repo.exists():
        repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / "README.md").write_text("hello\n")
        subprocess.run(["git", "-C", str(repo), "add", "README.md"], check=True)
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"],
            check=True,
        )
    files = workdir / "files"
    files.mkdir(exist_ok=True)
    (files / "notes.txt").write_text("nexus gateway notes\n")
    return {
        "time": {"command": python_server("mcp-server-time"), "args": ["--local-timezone", "UTC"]},
        "git": {"command": python_server("mcp-server-git"), "args": ["--repository", str(repo)]},
        "filesystem": {"command": node_server("mcp-server-filesystem"), "args": [str(files)]},
        "memory": {
            "command": node_server("mcp-server-memory"),
            "env": {"MEMORY_FILE_PATH": str(workdir / "memory.jsonl")},
        },
        "everything": {"command": node_server("mcp-server-everything"), "args": ["stdio"]},
    }


def write_config(path: Path, servers: dict[str, Any], **nexus: Any) -> Path:
    path.write_text(json.dumps({"mcpServers": servers, "nexus": nexus}))
    return path


def gateway_env(cache_dir: Path) -> dict[str, str]:
    return {"NEXUS_CACHE_DIR": str(cache_dir), "PYTHONUNBUFFERED": "1", "NEXUS_LOG_LEVEL": "INFO"}


@asynccontextmanager
async def stdio_gateway(config: Path, cache_dir: Path, **client: Any) -> AsyncIterator[ClientSession]:
    """A gateway child process on stdio, and an initialised client session to it (``client``: the
    session's callbacks, for a host that answers sampling or elicitation)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nexus_gateway", "serve", "--config", str(config)],
        env=gateway_env(cache_dir),
        cwd=str(REPO),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write, **client) as session:
        with anyio.fail_after(60):
            await session.initialize()
        yield session


@asynccontextmanager
async def http_gateway_process(
    config: Path, cache_dir: Path, *extra: str, env: dict[str, str] | None = None
) -> AsyncIterator[str]:
    """A gateway child process serving streamable HTTP; yields its MCP endpoint URL."""
    port = free_port()
    command = gateway_command(config, "--http", f"127.0.0.1:{port}", *extra)
    with running(command, port, env={**gateway_env(cache_dir), **(env or {})}, cwd=str(REPO)):
        yield f"http://127.0.0.1:{port}/mcp"


def run_cli(*args: str, cache: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``nexus-gateway ARGS`` as a user runs it; stdout and stderr captured apart."""
    env = {**os.environ, **(gateway_env(cache) if cache else {}), "NEXUS_LOG_LEVEL": "WARNING"}
    return subprocess.run(
        [sys.executable, "-m", "nexus_gateway", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(REPO),
        env=env,
    )


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None, **client: Any) -> AsyncIterator[ClientSession]:
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, **client) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
        yield session


def result_json(result: Any) -> Any:
    """The structured content of a surface tool's result (search_tools, describe_tool)."""
    assert not result.is_error, result.content
    return result.structured_content


def result_text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)
