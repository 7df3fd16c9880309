"""Config parsing: Claude Desktop's shape, ${VAR} expansion, errors that name server and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nexus_gateway.config import load_claude_desktop, load_config, parse_config
from nexus_gateway.exceptions import ConfigError


def test_claude_desktop_shape_with_all_transports() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "time": {
                    "command": "uvx",
                    "args": ["mcp-server-time"],
                    "env": {"TZ": "${ZONE}"},
                    "cwd": "/tmp",
                },
                "github": {"url": "https://api.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
                "legacy": {"url": "http://localhost:9/sse", "transport": "sse"},
            },
            "nexus": {"call_timeout": 5, "expose": ["time/*"], "search_limit": 4},
        },
        environ={"ZONE": "UTC", "TOKEN": "abc"},
    )
    time, github, legacy = config.upstreams
    assert (time.transport, time.command, time.args, time.env, time.cwd) == (
        "stdio",
        "uvx",
        ("mcp-server-time",),
        {"TZ": "UTC"},
        "/tmp",
    )
    assert (github.transport, github.headers) == ("http", {"Authorization": "Bearer abc"})
    assert legacy.transport == "sse"
    assert config.settings.call_timeout == 5.0 and config.settings.expose == ("time/*",)


def test_default_expansion() -> None:
    config = parse_config({"mcpServers": {"a": {"command": "${CMD:-echo}"}}}, environ={})
    assert config.upstreams[0].command == "echo"


def test_argument_defaults_per_server() -> None:
    raw = {"mcpServers": {"git": {"command": "x"}}, "nexus": {"defaults": {"git": {"repo_path": "${REPO}", "n": 3}}}}
    config = parse_config(raw, environ={"REPO": "/work/app"})
    assert config.settings.defaults == {"git": {"repo_path": "/work/app", "n": 3}}
    assert parse_config({"mcpServers": {}}).settings.defaults == {}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"mcpServers": {"gh": {"url": "ftp://x"}}}, "mcpServers.gh.url"),
        ({"mcpServers": {"gh": {}}}, "mcpServers.gh: missing 'command'"),
        ({"mcpServers": {"gh": {"command": "x", "args": "not a list"}}}, "mcpServers.gh.args"),
        ({"mcpServers": {"gh": {"command": "x", "env": {"A": 1}}}}, "mcpServers.gh.env"),
        (
            {"mcpServers": {"gh": {"url": "http://x", "transport": "carrier-pigeon"}}},
            "mcpServers.gh.transport",
        ),
        ({"mcpServers": {"gh": {"command": "x", "comand": "typo"}}}, "mcpServers.gh.comand: unknown field"),
        ({"mcpServers": {"gh": {"command": "${MISSING_VAR}"}}}, "MISSING_VAR is not set"),
        ({"mcpServers": {"bad name!": {"command": "x"}}}, "mcpServers.bad name!"),
        ({"mcpServers": {}, "nexus": {"call_timeout": -1}}, "nexus.call_timeout"),
        ({"mcpServers": {}, "nexus": {"unprefixed": "ghost"}}, "nexus.unprefixed"),
        ({"mcpServers": {}, "nexus": {"expose": "all"}}, "nexus.expose"),
        ({"mcpServers": {}, "nexus": {"hide": ["ok", 3]}}, "nexus.hide: must be a list"),
        ({"mcpServers": {"gh": {"command": "x", "disabled": "yes"}}}, "mcpServers.gh.disabled: must be true or false"),
        ({"mcpServers": {}, "nexus": {"speed": 11}}, "nexus.speed: unknown setting"),
        ({"mcpServers": {}, "nexus": {"model": 5}}, "nexus.model: must be a GGUF path or a model name"),
        ({"mcpServers": {}, "nexus": {"model_threads": 0}}, "nexus.model_threads"),
        ({"mcpServers": {}, "nexus": {"generate": "yes"}}, "nexus.generate: must be true or false"),
        ({"mcpServers": {}, "nexus": {"judge": 1}}, "nexus.judge: must be true, false or null (as calibrated)"),
        ({"mcpServers": {}, "nexus": {"ask_user": "no"}}, "nexus.ask_user: must be true or false"),
        ({"mcpServers": {}, "nexus": {"schema": "json"}}, "nexus.schema: must be one of ir, ir-focused, full, auto"),
        ({"mcpServers": {}, "nexus": {"defaults": {"git": {"repo_path": "."}}}}, "nexus.defaults.git: 'git' is not"),
        ({"mcpServers": {"git": {"command": "x"}}, "nexus": {"defaults": {"git": "."}}}, "nexus.defaults.git: must be"),
        ({"mcpServers": {}, "nexus": {"defaults": []}}, "nexus.defaults: must be an object"),
        ({"mcpServers": {}, "nexus": {"journal": 1}}, "nexus.journal: must be true, false or a file path"),
        ({"mcpServers": {}, "nexus": {"pin_tools": "yes"}}, "nexus.pin_tools: must be one of warn, hold, off"),
        ([], "top level must be a JSON object"),
    ],
)
def test_invalid_config_names_server_and_field(raw: object, message: str) -> None:
    with pytest.raises(ConfigError, match=None) as info:
        parse_config(raw, environ={})
    assert message in str(info.value)


def test_a_disabled_server_is_left_out() -> None:
    raw = {"mcpServers": {"on": {"command": "a"}, "off": {"command": "b", "disabled": True}}, "nexus": {}}
    assert [u.name for u in parse_config(raw, environ={}).upstreams] == ["on"]


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(broken)


def test_from_claude_desktop_skips_the_gateway_itself(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "nexus": {
                        "command": "nexus-gateway",
                        "args": ["serve", "--from-claude-desktop", str(path)],
                    },
                    "time": {"command": "mcp-server-time"},
                },
                "globalShortcut": "Ctrl+Space",
            }
        )
    )
    config = load_claude_desktop(path)
    assert [u.name for u in config.upstreams] == ["time"]
