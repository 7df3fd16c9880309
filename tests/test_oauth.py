"""A remote upstream behind OAuth 2.1: refused with the command to run, logged in once at a terminal, then
served with tokens the gateway refreshes by itself (``tests/fixtures/oauth_server.py``: the SDK's own
authorization server routes, consent given at once)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from conftest import FIXTURES, REPO, gateway_env, result_text, run_cli, stdio_gateway, write_config
from mcp import ClientSession
from procs import free_port, running

OAUTH_SERVER = FIXTURES / "oauth_server.py"
TOKEN_SECONDS = 2


def log_in_as_the_browser_would(config: Path, cache: Path) -> None:
    """``nexus-gateway login remote --no-browser``, with this test opening the address it prints."""
    login = subprocess.Popen(
        [sys.executable, "-m", "nexus_gateway", "login", "remote", "--config", str(config), "--no-browser"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=str(REPO),
        env={**os.environ, **gateway_env(cache)},
    )
    assert login.stderr is not None
    try:
        for line in login.stderr:
            if found := re.match(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)", line.strip()):
                with urllib.request.urlopen(found.group(1), timeout=30) as consent:  # follows the redirects
                    assert "logged in" in consent.read().decode()
                break
        assert login.wait(30) == 0, login.stderr.read()
    finally:
        login.kill()


@contextmanager
def oauth_upstream(tmp_path: Path, *, logged_in: bool = True) -> Iterator[tuple[Path, Path]]:
    """The fixture server running with short tokens, and a config and cache folder for it (logged in)."""
    port = free_port()
    server = [sys.executable, str(OAUTH_SERVER), "--port", str(port), "--token-seconds", str(TOKEN_SECONDS)]
    with running(server, port):
        config = write_config(
            tmp_path / "config.json", {"remote": {"url": f"http://127.0.0.1:{port}/mcp"}}, connect_timeout=10
        )
        cache = tmp_path / "cache"
        if logged_in:
            log_in_as_the_browser_would(config, cache)
        yield config, cache


async def whoami(host: ClientSession) -> types.CallToolResult:
    return await host.call_tool("call_tool", {"tool": "remote__whoami", "arguments": {}})


@pytest.mark.anyio
async def test_a_server_behind_oauth_is_logged_in_once_and_its_tokens_refreshed(tmp_path: Path) -> None:
    with oauth_upstream(tmp_path, logged_in=False) as (config, cache):
        refused = run_cli("status", "--config", str(config), cache=cache)
        assert refused.returncode == 3 and "run `nexus-gateway login remote`" in refused.stdout, refused.stdout

        log_in_as_the_browser_would(config, cache)
        (stored,) = (cache / "auth").iterdir()
        assert stored.stat().st_mode & 0o777 == 0o600  # credentials: the user's alone

        async with stdio_gateway(config, cache) as host:
            first = await whoami(host)
            assert not first.is_error and "authorized as" in result_text(first), result_text(first)
            await anyio.sleep(TOKEN_SECONDS + 1.5)  # the access token expires under the running gateway
            again = await whoami(host)
            assert not again.is_error and result_text(again) == result_text(first), result_text(again)

        time.sleep(TOKEN_SECONDS + 1)  # expired in the file as well: a new process refreshes it first
        called = run_cli("call", "remote__whoami", "--config", str(config), cache=cache)
        assert called.returncode == 0 and "authorized as" in called.stdout, called.stderr

        assert run_cli("logout", "remote", "--config", str(config), cache=cache).returncode == 0
        assert not stored.exists()
        assert run_cli("status", "--config", str(config), cache=cache).returncode == 3


def test_login_refuses_servers_that_have_no_oauth(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "config.json",
        {"local": {"command": "mcp-server-time"}, "keyed": {"url": "https://x/mcp", "headers": {"Authorization": "k"}}},
    )
    local = run_cli("login", "local", "--config", str(config), cache=tmp_path)
    assert local.returncode != 0 and "stdio server: it has no login" in local.stderr
    keyed = run_cli("login", "keyed", "--config", str(config), cache=tmp_path)
    assert keyed.returncode != 0 and "Authorization header" in keyed.stderr
    unknown = run_cli("login", "ghost", "--config", str(config), cache=tmp_path)
    assert unknown.returncode != 0 and "no upstream named 'ghost'" in unknown.stderr


@pytest.mark.anyio
async def test_gateways_sharing_a_login_follow_each_others_refreshes(tmp_path: Path) -> None:
    """Claude Desktop and Cursor each run a gateway over the same config, so two processes hold the same
    stored login. The authorization server rotates refresh tokens (each works once), so the gateway that
    refreshes second must take the tokens the first stored instead of spending the used refresh token and
    being told to log in again."""
    with oauth_upstream(tmp_path) as (config, cache):
        async with stdio_gateway(config, cache) as first, stdio_gateway(config, cache) as second:
            for host in (first, second):
                called = await whoami(host)
                assert not called.is_error, result_text(called)
            answers: list[str] = []

            async def answer(host: ClientSession) -> None:
                called = await whoami(host)
                answers.append("" if called.is_error else result_text(called))

            await anyio.sleep(TOKEN_SECONDS + 1.5)  # one gateway refreshes, then the other reads the file
            await answer(first)
            await answer(second)
            # never a spent refresh token sent: servers that detect reuse revoke the whole login for it
            refused = await first.call_tool("call_tool", {"tool": "remote__refused_refreshes", "arguments": {}})
            assert result_text(refused) == "0", result_text(refused)
            await anyio.sleep(TOKEN_SECONDS + 1.5)  # both at once: one refreshes, the other waits for its tokens
            async with anyio.create_task_group() as calls:
                calls.start_soon(answer, first)
                calls.start_soon(answer, second)
            assert len(answers) == 4 and all("authorized as" in a for a in answers), answers
            refused = await second.call_tool("call_tool", {"tool": "remote__refused_refreshes", "arguments": {}})
            assert result_text(refused) == "0", result_text(refused)


@pytest.mark.anyio
async def test_a_login_that_ends_under_a_running_gateway_says_how_to_log_in_again(tmp_path: Path) -> None:
    """The refresh token revoked, or the login removed with ``logout``: the next call after the access
    token expires cannot be authorized, and the host must hear what to run, not "connection lost"."""
    with oauth_upstream(tmp_path) as (config, cache):
        async with stdio_gateway(config, cache) as host:
            called = await whoami(host)
            assert not called.is_error, result_text(called)
            assert run_cli("logout", "remote", "--config", str(config), cache=cache).returncode == 0
            await anyio.sleep(TOKEN_SECONDS + 1.5)
            refused = await whoami(host)
            assert refused.is_error and "run `nexus-gateway login remote`" in result_text(refused), result_text(refused)
