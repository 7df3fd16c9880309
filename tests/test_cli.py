"""The command line, run as users run it: a real process, real upstreams, stdout and stderr apart."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, fault_server, gateway_env, node_server, python_server, run_cli, write_config

from nexus_gateway.cache import RegistryCache
from nexus_gateway.progress import ProgressPrinter


def run(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cache=cache, timeout=120)


def test_status_table_and_exit_code(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "c.json",
        {
            "time": {"command": python_server("mcp-server-time")},
            "broken": {"command": str(tmp_path / "missing")},
            "off": {"command": str(tmp_path / "missing"), "disabled": True},
        },
        connect_timeout=5,
        hide=["time__convert_time"],
    )
    done = run("status", "--config", str(config), cache=tmp_path)
    assert done.returncode == 3
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["upstream", "transport", "state", "tools", "connect", "error"]
    time_row = next(line for line in lines if line.startswith("time "))
    assert "connected" in time_row and " 2 (1 hidden) " in time_row
    off_row = next(line for line in lines if line.startswith("off "))  # switched off, not failed
    assert off_row.split()[:3] == ["off", "-", "disabled"]
    broken_row = next(line for line in lines if line.startswith("broken "))
    assert "failed" in broken_row and "cannot start the command" in broken_row and "missing" in broken_row


def test_ask_with_no_upstream_tools_says_why_instead_of_guessing(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.json", {"broken": {"command": str(tmp_path / "missing")}}, connect_timeout=5)
    done = run("ask", "--config", str(config), "what time is it in Tokyo?", cache=tmp_path)
    assert done.returncode == 4, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "no_tools"
    assert report["message"].startswith("No upstream tools are available: broken failed (cannot start the command")
    assert "Traceback" not in done.stderr


def test_an_upstreams_stderr_is_logged_under_its_name_and_explains_its_failure(tmp_path: Path) -> None:
    """A server that dies at start says why on stderr; the status table passes it on. Its lines are
    logged at INFO under its name, so a one-shot command stays quiet unless asked."""
    dies = "import sys; sys.stderr.write('error: GITHUB_TOKEN is not set\\n'); sys.exit(1)"
    servers = {
        "time": {"command": python_server("mcp-server-time")},
        "broken": {"command": sys.executable, "args": ["-c", dies]},
    }
    config = write_config(tmp_path / "c.json", servers, connect_timeout=5)
    quiet = run("status", "--config", str(config), cache=tmp_path)
    broken_row = next(line for line in quiet.stdout.splitlines() if line.startswith("broken "))
    assert "(its stderr: error: GITHUB_TOKEN is not set)" in broken_row
    assert " says: " not in quiet.stderr
    loud = run("--log-level", "INFO", "status", "--config", str(config), cache=tmp_path)
    assert "upstream broken says: error: GITHUB_TOKEN is not set" in loud.stderr


def test_an_upstream_that_keeps_failing_is_warned_about_once(tmp_path: Path) -> None:
    """A server that cannot start fails the same way on every retry: one WARNING says why, the
    retries after it go to INFO with their attempt number, so the log stays readable."""
    dies = "import sys; sys.stderr.write('fatal: not a git repository\\n'); sys.exit(1)"
    config = write_config(tmp_path / "c.json", {"broken": {"command": sys.executable, "args": ["-c", dies]}})
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        gateway = subprocess.Popen(
            [sys.executable, "-m", "nexus_gateway", "serve", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env={**os.environ, **gateway_env(tmp_path / "cache")},
            cwd=str(REPO),
        )
        try:
            deadline = time.monotonic() + 60
            while "still failing (attempt 3)" not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            gateway.terminate()
            gateway.wait(timeout=30)
    lines = log.read_text().splitlines()
    warned = [line for line in lines if " WARNING " in line and "upstream broken:" in line]
    assert len(warned) == 1 and "fatal: not a git repository" in warned[0], lines
    assert any("upstream broken: still failing (attempt 3)" in line and " INFO " in line for line in lines), lines


def test_an_upstreams_log_messages_go_to_stderr_under_its_name(tmp_path: Path) -> None:
    """server-everything sends a log message (MCP ``notifications/message``, a random level) as it turns its
    simulated logging on; it lands in the gateway's log, never on stdout, which holds the result alone."""
    servers = {"everything": {"command": node_server("mcp-server-everything"), "args": ["stdio"]}}
    config = write_config(tmp_path / "c.json", servers)
    done = run("--log-level", "DEBUG", "call", "--config", str(config), "everything__toggle-simulated-logging",
               cache=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    logged = [line for line in done.stderr.splitlines() if "upstream everything logs: " in line]
    assert logged and "level" in logged[0].lower(), done.stderr  # "Info-level message", "Alert level-message"
    assert "logs:" not in done.stdout and json.loads(done.stdout)["content"]


def test_tools_search_and_call(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.json", {"fault": fault_server()})
    listed = run("tools", "--config", str(config), "--json", cache=tmp_path)
    assert listed.returncode == 0, listed.stderr
    ids = [t["tool"] for t in json.loads(listed.stdout)]
    assert "fault__echo" in ids and "fault__strict" in ids
    found = run("search", "--config", str(config), "echo the text", cache=tmp_path)
    assert found.stdout.splitlines()[2].split()[1] == "fault__echo"
    called = run("call", "--config", str(config), "fault__echo", "--args", '{"text": "hi"}', cache=tmp_path)
    assert called.returncode == 0
    assert json.loads(called.stdout)["content"][0]["text"] == "hi"


def test_user_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.json", {"fault": fault_server()})
    bad_args = run("call", "--config", str(config), "fault__strict", "--args", '{"owner": 1}', cache=tmp_path)
    assert bad_args.returncode == 1
    assert "field 'owner'" in bad_args.stderr and "Traceback" not in bad_args.stderr
    not_json = run("call", "--config", str(config), "fault__echo", "--args", "{oops", cache=tmp_path)
    assert not_json.returncode == 2 and "--args: not valid JSON" in not_json.stderr
    blank = run("ask", "--config", str(config), "  ", cache=tmp_path)  # would still route to some tool
    assert blank.returncode == 1 and "field 'intent': is blank" in blank.stderr and blank.stdout == ""
    blank_search = run("search", "--config", str(config), "", cache=tmp_path)
    assert blank_search.returncode == 1 and "field 'query': is blank" in blank_search.stderr
    no_hits = run("search", "--config", str(config), "--limit", "0", "echo", cache=tmp_path)
    assert no_hits.returncode == 2 and "--limit: must be a positive integer, got 0" in no_hits.stderr
    budget = run("eval", "args", "--registry", "r.json", "--queries", "q.jsonl", "--ir-budget", "-1", cache=tmp_path)
    assert budget.returncode == 2 and "--ir-budget: must be 0 or a positive integer, got -1" in budget.stderr
    json_on_sse = run("serve", "--config", str(config), "--sse", "127.0.0.1:0", "--json-response", cache=tmp_path)
    assert json_on_sse.returncode == 2 and "--json-response applies to --http only" in json_on_sse.stderr
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"mcpServers": {"gh": {"url": "ftp://nope"}}}))
    invalid = run("status", "--config", str(broken), cache=tmp_path)
    assert invalid.returncode == 2
    assert invalid.stderr.strip() == (
        "nexus-gateway: error: mcpServers.gh.url: must start with http:// or https://, got 'ftp://nope'"
    )
    assert invalid.stdout == ""


def test_the_config_comes_from_nexus_config_or_the_error_names_claude_desktops(tmp_path: Path) -> None:
    """A sidecar sets NEXUS_CONFIG once; a Claude Desktop user who passes nothing is shown where their
    Claude Desktop config is and how to front it."""
    home = tmp_path / "home"
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    desktop.parent.mkdir(parents=True)
    desktop.write_text(json.dumps({"mcpServers": {"fault": fault_server()}}))
    env = {**os.environ, **gateway_env(tmp_path), "HOME": str(home), "NEXUS_LOG_LEVEL": "WARNING"}
    env.pop("NEXUS_CONFIG", None)

    def status(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "nexus_gateway", "status"], capture_output=True, text=True,
                              timeout=120, cwd=str(REPO), env={**env, **extra})  # fmt: skip

    missing = status()
    assert missing.returncode == 2 and f"--from-claude-desktop '{desktop}'" in missing.stderr
    found = status(NEXUS_CONFIG=str(write_config(tmp_path / "c.json", {"fault": fault_server()})))
    assert found.returncode == 0 and "fault" in found.stdout and "connected" in found.stdout, found.stderr


def test_model_flag_overrides_the_configured_model(tmp_path: Path) -> None:
    """Issue 4: ``--model PATH`` takes any other GGUF, as ``nexus.model`` does; a file llama.cpp cannot
    load turns generation off with the reason, and the gateway still routes."""
    config = write_config(tmp_path / "c.json", {"fault": fault_server()}, model="qwen2.5-coder-0.5b")
    fake = tmp_path / "other.gguf"
    fake.write_bytes(b"GGUF" + bytes(64))
    done = run("ask", "--config", str(config), "--model", str(fake), "echo back hello", cache=tmp_path)
    assert f"argument generation off: llama.cpp could not load {fake}" in done.stderr, done.stderr
    assert "nothing called (needs_arguments)" in done.stderr and "Traceback" not in done.stderr


def test_ask_routes_fills_in_the_arguments_and_calls(tmp_path: Path) -> None:
    """`ask` is `call(intent)` from the terminal, with the real default model: the upstream result on
    stdout, the tool and its arguments on stderr; a request that leaves a required value out gets the
    report of what is missing and exit status 4, nothing invented."""
    time_server = {"command": python_server("mcp-server-time"), "args": ["--local-timezone", "UTC"]}
    config = write_config(tmp_path / "c.json", {"time": time_server}, routing={"calibration": None}, model_threads=1)
    now = run("ask", "--config", str(config), "what time is it in Tokyo right now?", cache=tmp_path)
    assert now.returncode == 0, now.stderr
    assert json.loads(now.stdout)["structuredContent"]["timezone"] == "Asia/Tokyo"
    assert 'time__get_current_time {"timezone":"Asia/Tokyo"}' in now.stderr
    converted = run("ask", "--config", str(config), "what's 3pm Lisbon time in Tokyo?", cache=tmp_path)
    assert converted.returncode == 0, converted.stderr
    trace = json.loads(converted.stdout)["_meta"]["io.nexus-gateway/trace"]
    assert trace["arguments"] == {"source_timezone": "Europe/Lisbon", "time": "15:00", "target_timezone": "Asia/Tokyo"}
    vague = run("ask", "--config", str(config), "convert 9am to another time zone", cache=tmp_path)
    assert vague.returncode == 4, vague.stderr
    report = json.loads(vague.stdout)
    assert report["status"] == "needs_arguments" and "source_timezone" in report["missing"]
    assert "nothing called (needs_arguments)" in vague.stderr and "Traceback" not in vague.stderr


def ask_to_overwrite(tmp_path: Path) -> tuple[list[str], Path]:
    """``ask`` to overwrite a file, in front of the real filesystem server (whose write_file is destructive)."""
    files = tmp_path / "files"
    files.mkdir()
    servers = {"filesystem": {"command": node_server("mcp-server-filesystem"), "args": [str(files)]}}
    config = write_config(tmp_path / "c.json", servers, routing={"calibration": None}, generate=False)
    return ["ask", "--config", str(config), "overwrite todo.txt with a new list"], files / "todo.txt"


def test_ask_shows_a_destructive_call_and_runs_it_only_with_yes(tmp_path: Path) -> None:
    """From the terminal too: a routed tool that may destroy data is printed, not run (exit status 4),
    until the person at the terminal says ``--yes``."""
    call, target = ask_to_overwrite(tmp_path)
    arguments = json.dumps({"path": str(target), "content": "milk\n"})
    shown = run(*call, "--args", arguments, cache=tmp_path)
    assert shown.returncode == 4, shown.stderr
    report = json.loads(shown.stdout)
    assert report["status"] == "needs_confirmation" and report["tool"] == "filesystem__write_file"
    assert "nothing called (needs_confirmation)" in shown.stderr and not target.exists()
    assert "to run it: nexus-gateway call filesystem__write_file --args" in shown.stderr
    planned = run(*call, "--args", arguments, "--yes", "--dry-run", cache=tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["status"] == "planned" and "dry run: nothing ran" in planned.stderr
    assert not target.exists()
    done = run(*call, "--args", arguments, "--yes", cache=tmp_path)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "milk\n"


def ask_at_a_terminal(command: list[str], cache: Path, answer: str) -> tuple[int, str, str]:
    """Run ``nexus-gateway COMMAND`` with stdin and stderr on a pseudo-terminal, as a person runs it;
    type ``answer`` when it asks. Returns the exit status, stdout and what the terminal showed."""
    leader, follower = os.openpty()
    env = {**os.environ, **gateway_env(cache), "NEXUS_LOG_LEVEL": "WARNING"}
    process = subprocess.Popen(
        [sys.executable, "-m", "nexus_gateway", *command],
        stdin=follower, stdout=subprocess.PIPE, stderr=follower, cwd=str(REPO), env=env,
    )  # fmt: skip
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + 120
    while b"[y/N]" not in shown and time.monotonic() < deadline and process.poll() is None:
        if select.select([leader], [], [], 1)[0]:
            shown += os.read(leader, 4096)
    os.write(leader, answer.encode() + b"\n")
    stdout, _ = process.communicate(timeout=120)
    while select.select([leader], [], [], 0.2)[0]:
        try:
            shown += os.read(leader, 4096)
        except OSError:  # the terminal's other end closed
            break
    os.close(leader)
    return process.returncode, stdout.decode(), shown.decode(errors="replace")


def test_ask_at_a_terminal_asks_the_person_before_a_destructive_call(tmp_path: Path) -> None:
    call, target = ask_to_overwrite(tmp_path)
    status, stdout, shown = ask_at_a_terminal([*call, "--args", json.dumps({"path": str(target), "content": "no\n"})],
                                              tmp_path, "n")  # fmt: skip
    assert "chose filesystem__write_file" in shown and "may delete or overwrite data. Run it? [y/N]" in shown
    assert status == 4 and json.loads(stdout)["status"] == "declined" and not target.exists()
    status, stdout, shown = ask_at_a_terminal([*call, "--args", json.dumps({"path": str(target), "content": "eggs\n"})],
                                              tmp_path, "y")  # fmt: skip
    assert status == 0, shown
    assert target.read_text() == "eggs\n" and json.loads(stdout)["content"]


def test_cache_shows_what_is_stale_and_prune_removes_only_that(tmp_path: Path) -> None:
    """A gateway's own files stay; a tool no upstream lists, an IR block of an earlier rendering, blocks
    compiled after an earlier system prompt and an unfinished write go, and only with --prune."""
    config = write_config(tmp_path / "c.json", {"time": {"command": python_server("mcp-server-time")}})
    cache = tmp_path / "cache"
    assert run("tools", "--config", str(config), cache=cache).returncode == 0  # ingests: entries, server list
    tools = cache / "tools"
    listed = RegistryCache(cache).load_server("time")
    assert listed
    live, gone = listed[0], "0" * 64
    old_prefix, new_prefix = (
        tools / "system-prefix.aaaaaaaaaaaa-11111111-r.atb",
        tools / "system-prefix.aaaaaaaaaaaa-22222222-r.atb",
    )
    names = {
        f"{live}.0123456789ab.vec": None,
        f"{gone}.0123456789ab.vec": "no upstream lists this tool",
        f"{live}.ir-0000000000.aaaaaaaaaaaa-22222222-r.atb": "an earlier rendering of the IR",
        f"{live}.aaaaaaaaaaaa-22222222-r.atb": None,
        f"{live}.aaaaaaaaaaaa-11111111-r.atb": "compiled after an earlier system prompt",
        f"{live}.bbbbbbbbbbbb-11111111-r.atb": None,  # another model: no prefix block says which prompt is live
        f".{live}.json.x1y2.tmp": "a write that did not finish",
    }
    for name in names:
        (tools / name).write_bytes(b"x" * 5000)
    old_prefix.write_bytes(b"x")
    new_prefix.write_bytes(b"x")
    hours_ago = time.time() - 7200
    for path in (old_prefix, tools / f".{live}.json.x1y2.tmp"):
        os.utime(path, (hours_ago, hours_ago))
    (tools / f".{live}.json.fresh.tmp").write_bytes(b"x")  # a write in progress right now
    before = {p.name for p in tools.iterdir()}

    shown = run("cache", "--config", str(config), "--json", cache=cache)
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    stale = {Path(row["path"]).name: row["why"] for row in document["stale"]}
    expected = {name: why for name, why in names.items() if why} | {
        old_prefix.name: "compiled after an earlier system prompt"
    }
    assert stale == expected
    entries = document["kinds"]["tool entry"]
    assert entries["stale_files"] == 0 and entries["files"] == len(listed) and document["removed"] is None
    assert {p.name for p in tools.iterdir()} == before  # showing removes nothing

    table = run("cache", "--config", str(config), cache=cache)
    assert f"{len(expected)} stale files" in table.stdout and "nexus-gateway cache --prune" in table.stdout
    assert "1 IR block: an earlier rendering of the IR" in table.stdout

    stuck = tools / f"{'1' * 64}.0123456789ab.vec"  # stale by name, but a folder: no unlink removes it
    (stuck / "inside").mkdir(parents=True)
    pruned = run("cache", "--config", str(config), "--prune", cache=cache)
    assert pruned.returncode == 0 and f"removed {len(expected)} stale files" in pruned.stdout, pruned.stderr
    assert f"cannot remove {stuck}" in pruned.stderr and "Traceback" not in pruned.stderr  # named, kept, no traceback
    assert {p.name for p in tools.iterdir()} == before - set(expected) | {stuck.name}
    (stuck / "inside").rmdir()
    stuck.rmdir()
    again = run("cache", "--config", str(config), cache=cache)
    assert "nothing stale" in again.stdout


def test_progress_cut_short_says_so_and_ends_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A one-shot ``ask`` is done before the registry's blocks are compiled: the bar's line ends with
    where it stopped, and the command's own line starts on a line of its own."""
    progress = ProgressPrinter("compiling tool blocks")
    progress(1, 41)
    progress.stopped(3, 41, "the rest compile while the gateway runs")
    err = capsys.readouterr().err
    assert err == (
        "compiling tool blocks: 1/41\n"
        "compiling tool blocks: stopped at 3/41 (the rest compile while the gateway runs)\n"
    )
