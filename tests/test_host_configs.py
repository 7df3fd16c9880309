"""Config files written for other hosts (Cline, Roo Code, Cursor, Windsurf, Gemini CLI, VS Code) are
fronted as they are: their own fields take effect instead of being refused."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import fault_server, node_server, result_json, result_text, stdio_gateway

from nexus_gateway.config import load_config, parse_config
from nexus_gateway.exceptions import ConfigError

pytestmark = pytest.mark.anyio


async def test_a_cline_config_runs_with_its_timeouts_approvals_hidden_tools_and_env_file(tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    (tmp_path / ".env").write_text('FROM_FILE="read from the env file"\nBOTH=file\n')
    config = tmp_path / "cline_mcp_settings.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {
                        "command": node_server("mcp-server-filesystem"),
                        "args": [str(files)],
                        "autoApprove": ["write_file"],
                        "disabled": False,
                    },
                    "fault": {**fault_server(), "timeout": 1, "disabledTools": ["crash"], "alwaysAllow": []},
                    "everything": {
                        "command": node_server("mcp-server-everything"),
                        "args": ["stdio"],
                        "envFile": ".env",  # relative to the config file
                        "env": {"BOTH": "env wins"},
                    },
                },
                "nexus": {"routing": {"calibration": None}, "generate": False},
            }
        )
    )
    async with stdio_gateway(config, tmp_path / "cache") as host:
        started = time.monotonic()
        hung = await host.call_tool("call_tool", {"tool": "fault__hang", "arguments": {}})
        assert hung.is_error and "no answer within 1s" in result_text(hung), result_text(hung)
        assert time.monotonic() - started < 10  # the server's own timeout, not nexus.call_timeout's 60 s

        refused = await host.call_tool("call_tool", {"tool": "fault__crash", "arguments": {}})
        assert refused.is_error and "Unknown tool" in result_text(refused)
        assert "fault__echo" in result_text(await host.call_tool("search_tools", {"query": "echo text back"}))

        target = files / "approved.txt"
        arguments = {"path": str(target), "content": "written without asking\n"}
        intent = "overwrite the file approved.txt with new text"
        ran = await host.call_tool("call", {"intent": intent, "arguments": arguments})
        # write_file says destructiveHint: true, so `call` would hold it back; the user approved it already
        assert not ran.is_error and target.read_text() == "written without asking\n", result_text(ran)

        env = result_text(await host.call_tool("call_tool", {"tool": "everything__get-env", "arguments": {}}))
        assert "read from the env file" in env and "env wins" in env


async def test_without_the_approval_the_same_write_waits_for_confirmation(tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    config = tmp_path / "config.json"
    servers = {"files": {"command": node_server("mcp-server-filesystem"), "args": [str(files)]}}
    config.write_text(
        json.dumps({"mcpServers": servers, "nexus": {"routing": {"calibration": None}, "generate": False}})
    )
    async with stdio_gateway(config, tmp_path / "cache") as host:
        arguments = {"path": str(files / "held.txt"), "content": "x\n"}
        answer = await host.call_tool("call", {"intent": "overwrite the file held.txt", "arguments": arguments})
        assert result_json(answer)["status"] == "needs_confirmation"
        assert not (files / "held.txt").exists()


def test_the_url_and_transport_fields_of_other_hosts() -> None:
    raw = {
        "mcpServers": {
            "windsurf": {"serverUrl": "https://example.com/mcp"},
            "gemini": {"httpUrl": "https://example.com/mcp", "timeout": 30},
            "cline": {"url": "https://example.com/sse", "transportType": "sse", "watchPaths": ["/tmp"]},
        }
    }
    windsurf, gemini, cline = parse_config(raw, environ={}).upstreams
    assert (windsurf.transport, windsurf.url) == ("http", "https://example.com/mcp")
    assert (gemini.transport, gemini.call_timeout) == ("http", 30.0)
    assert cline.transport == "sse"


def test_a_vscode_mcp_json_is_read_with_its_variables(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    (workspace / ".vscode").mkdir(parents=True)
    path = workspace / ".vscode" / "mcp.json"
    servers = {"git": {"type": "stdio", "command": "mcp-server-git", "args": ["--repository", "${workspaceFolder}"]}}
    servers["gh"] = {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${env:GH_TOKEN}"}}
    path.write_text(json.dumps({"inputs": [], "servers": servers}))
    git, gh = load_config(path, environ={"GH_TOKEN": "t0k"}).upstreams
    assert git.args == ("--repository", str(workspace))
    assert gh.headers == {"Authorization": "Bearer t0k"}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"servers": {"gh": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${input:token}"}}}},
            "servers.gh.headers.Authorization: ${input:token} is a VS Code input prompt",
        ),
        ({"mcpServers": {"a": {"command": "x", "timeout": "1m"}}}, "mcpServers.a.timeout: must be a positive number"),
        ({"mcpServers": {"a": {"command": "x", "autoApprove": "all"}}}, "mcpServers.a.autoApprove: must be a list"),
        ({"mcpServers": {"a": {"command": "x", "envFile": "/no/such.env"}}}, "mcpServers.a.envFile: '/no/such.env'"),
        ({"mcpServers": {"a": {"url": "https://x", "serverUrl": "https://y"}}}, "give one of url, serverUrl"),
        ({"mcpServer": {"a": {"command": "x"}}}, "no mcpServers"),
    ],
)
def test_other_hosts_fields_are_checked_too(raw: object, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(raw, environ={})
    assert message in str(info.value)
