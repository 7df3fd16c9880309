"""The call journal: what the gateway sent upstream and how each call ended, even across a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import (
    fault_server,
    gateway_env,
    http_gateway_process,
    http_session,
    python_server,
    result_text,
    run_cli,
    stdio_gateway,
    write_config,
)

from nexus_gateway.journal import JOURNAL_FILE, MAX_STRING, REDACTED, CallJournal, follow, read_journal, redacted

pytestmark = pytest.mark.anyio


def journalled(config: Path, cache: Path, *flags: str) -> list[dict[str, Any]]:
    """``nexus-gateway journal --json`` as a user runs it after the fact."""
    shown = run_cli("journal", "--config", str(config), "--json", *flags, cache=cache)
    assert shown.returncode == 0, shown.stderr
    calls: list[dict[str, Any]] = json.loads(shown.stdout)
    return calls


async def test_the_journal_says_what_was_sent_and_how_each_call_ended(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "config.json",
        {
            "fault": fault_server(),
            "time": {"command": python_server("mcp-server-time"), "args": ["--local-timezone", "UTC"]},
        },
        routing={"calibration": None},
        generate=False,
    )
    cache = tmp_path / "cache"
    long_text = "x" * (MAX_STRING + 50)
    async with stdio_gateway(config, cache) as host:
        for tool, arguments in (
            ("fault__echo", {"text": long_text}),
            ("fault__strict", {"owner": "octo", "repo": 5}),  # refused by validation: never sent
            ("time__convert_time", {"source_timezone": "UTC", "time": "25:99", "target_timezone": "UTC"}),
            ("fault__crash", {}),
        ):
            await host.call_tool("call_tool", {"tool": tool, "arguments": arguments})
        intent = "echo this text back unchanged"
        routed = await host.call_tool("call", {"intent": intent, "arguments": {"text": "hello"}})
        assert not routed.is_error, result_text(routed)
    calls = journalled(config, cache)
    assert [(c["tool"], c["via"], c["outcome"]) for c in calls] == [
        ("fault__echo", "call_tool", "ok"),
        ("time__convert_time", "call_tool", "error"),  # the tool said so: the call itself was answered
        ("fault__crash", "call_tool", "failed"),
        ("fault__echo", "call", "ok"),
    ]
    assert calls[3]["intent"] == intent and calls[3]["arguments"] == {"text": "hello"}
    assert calls[0]["arguments"]["text"].startswith("x" * MAX_STRING + "…(+50 chars)")
    assert calls[0]["host"] == "stdio" and calls[0]["ms"] is not None
    assert "Invalid time format" in calls[1]["error"]
    assert "may have run" in calls[2]["error"]


async def test_a_call_cut_off_by_a_gateway_crash_is_listed_as_unfinished(tmp_path: Path) -> None:
    marker = tmp_path / "calls"
    config = write_config(
        tmp_path / "config.json", {"fault": fault_server("--marker", str(marker))}, routing={"enabled": False}
    )
    cache = tmp_path / "cache"
    async with (
        http_gateway_process(config, cache) as url,
        http_session(url) as host,
        anyio.create_task_group() as group,
    ):

        async def hang() -> None:
            await host.call_tool("call_tool", {"tool": "fault__hang", "arguments": {}})

        group.start_soon(hang)
        with anyio.fail_after(30):
            while not marker.exists():
                await anyio.sleep(0.05)
        (waiting,) = journalled(config, cache)
        assert (waiting["tool"], waiting["outcome"]) == ("fault__hang", "in flight")
        sent = json.loads((cache / JOURNAL_FILE).read_text().splitlines()[0])
        os.kill(sent["pid"], signal.SIGKILL)  # the gateway dies before the upstream answers
        group.cancel_scope.cancel()
    (cut_off,) = journalled(config, cache, "--unfinished")
    assert (cut_off["tool"], cut_off["outcome"], cut_off["ms"]) == ("fault__hang", "unfinished", None)
    table = run_cli("journal", "--config", str(config), cache=cache)
    assert "fault__hang" in table.stdout and "unfinished" in table.stdout
    assert "may have run" in table.stderr


async def test_a_journal_that_cannot_be_written_loses_no_call(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()  # the journal's path is a folder: every write fails
    config = write_config(
        tmp_path / "config.json",
        {"fault": fault_server()},
        routing={"enabled": False},
        journal=str(tmp_path / "taken"),
    )
    async with stdio_gateway(config, tmp_path / "cache") as host:
        answered = await host.call_tool("call_tool", {"tool": "fault__echo", "arguments": {"text": "still sent"}})
        assert isinstance(answered, types.CallToolResult)
        assert not answered.is_error and result_text(answered) == "still sent"


def test_credentials_are_redacted_and_nesting_is_summarised() -> None:
    kept = redacted({"owner": "octo", "api_key": "k", "headers": {"Authorization": "Bearer t"}, "deep": [[[[[1]]]]]})
    assert kept["owner"] == "octo" and kept["api_key"] == REDACTED
    assert kept["headers"] == {"Authorization": REDACTED}
    assert kept["deep"] == [[["…(1 items)"]]]  # four levels kept, the fifth counted


def test_a_number_too_big_for_orjson_is_journalled_anyway(tmp_path: Path) -> None:
    journal = CallJournal(tmp_path / JOURNAL_FILE)
    with journal.call("s__t", {"id": 2**70}, via="call_tool") as record:  # JSON allows it; orjson refuses
        record.answered({"content": []})
    (call,) = read_journal(tmp_path / JOURNAL_FILE)
    assert call.arguments == {"id": 2**70} and call.outcome == "ok"


def test_a_rotated_journal_still_reads_whole(tmp_path: Path) -> None:
    journal = CallJournal(tmp_path / JOURNAL_FILE, max_bytes=600)
    for number in range(40):
        with journal.call("s__t", {"n": number}, via="call_tool") as record:
            record.answered({"content": [], "isError": False})
    journal.close()
    assert (tmp_path / (JOURNAL_FILE + ".1")).exists()
    assert (tmp_path / JOURNAL_FILE).stat().st_size < 600 + 16 * 100  # rotation is looked at every 16 lines
    calls = read_journal(tmp_path / JOURNAL_FILE)
    # the rotated file holds the earlier calls, the live one the later: together, in order, with none cut
    numbers = [c.arguments["n"] for c in calls]
    assert numbers == sorted(numbers) and numbers[-1] == 39
    assert all(c.outcome == "ok" for c in calls)


def test_a_call_unanswered_across_many_rotations_is_still_listed(tmp_path: Path) -> None:
    """A rotation drops the generation before; a call still waiting (or cut off by a crash) in it must not
    go with it: the one line that says it may have run is carried into the new file."""
    path = tmp_path / JOURNAL_FILE
    journal = CallJournal(path, max_bytes=600)
    with journal.call("s__slow", {"n": -1}, via="call_tool") as slow:
        for number in range(80):  # about 27 rotations
            with journal.call("s__t", {"n": number}, via="call_tool") as record:
                record.answered({"content": []})
        waiting = read_journal(path)
        assert waiting[0].tool == "s__slow" and waiting[0].ms is None  # listed first: it is the oldest
        assert min(c.arguments["n"] for c in waiting[1:]) > 40  # while the early answered calls are gone
        slow.answered({"content": []})
    journal.close()
    calls = read_journal(path)
    assert (calls[0].tool, calls[0].outcome) == ("s__slow", "ok")
    assert sum(c.tool == "s__slow" for c in calls) == 1
    for part in (path, tmp_path / (JOURNAL_FILE + ".1")):  # carried at each rotation, never piled up
        assert part.read_bytes().count(b'"carried":true') <= 1


async def test_following_the_journal_misses_no_line_across_rotations(tmp_path: Path) -> None:
    """``journal --follow`` reads the rotated file to its end before it turns to the new one (``tail -F``):
    a follower that reopened the path at each rotation would skip what was written since its last read."""
    path = tmp_path / JOURNAL_FILE
    journal = CallJournal(path, max_bytes=600)
    with journal.call("s__t", {"n": -1}, via="call_tool") as record:  # before the follower: not shown
        record.answered({"content": []})
    seen: list[dict[str, Any]] = []

    async def watch() -> None:
        async for line in follow(path, poll_s=0.05):
            seen.append(line)

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        await anyio.sleep(0.2)
        for batch in range(6):  # 16 lines a batch: one rotation check each, and each rotates
            for number in range(batch * 8, batch * 8 + 8):
                with journal.call("s__t", {"n": number}, via="call_tool") as record:
                    record.answered({"content": []})
            await anyio.sleep(0.3)
        group.cancel_scope.cancel()
    journal.close()
    assert (tmp_path / (JOURNAL_FILE + ".1")).exists()
    sent = [line["arguments"]["n"] for line in seen if line["event"] == "sent"]
    assert sent == list(range(48)), sent
    assert sum(line["event"] == "done" for line in seen) == 48


async def test_journal_follow_prints_each_call_as_it_is_sent_and_ends(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.json", {"fault": fault_server()}, generate=False)
    cache = tmp_path / "cache"
    async with stdio_gateway(config, cache) as host:
        await host.call_tool("call_tool", {"tool": "fault__echo", "arguments": {"text": "before"}})
        follower = subprocess.Popen(
            [sys.executable, "-m", "nexus_gateway", "journal", "--follow", "--config", str(config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **gateway_env(cache)},
        )
        try:
            assert follower.stdout is not None
            table = await anyio.to_thread.run_sync(follower.stdout.readline)  # the history first
            assert "at (UTC)" in table
            history = await anyio.to_thread.run_sync(follower.stdout.readline)
            history += await anyio.to_thread.run_sync(follower.stdout.readline)
            assert "before" in history
            await anyio.sleep(0.5)
            await host.call_tool("call_tool", {"tool": "fault__echo", "arguments": {"text": "live"}})
            await host.call_tool("call_tool", {"tool": "fault__crash", "arguments": {}})
            lines = []
            with anyio.fail_after(20):
                while len(lines) < 4:
                    lines.append(await anyio.to_thread.run_sync(follower.stdout.readline))
            assert "sent       fault__echo  via call_tool" in lines[0] and '"live"' in lines[0]
            assert "ok" in lines[1] and "fault__echo" in lines[1]
            assert "sent       fault__crash" in lines[2]
            assert lines[3].split()[1] in ("failed", "error") and "fault__crash" in lines[3], lines[3]
            follower.send_signal(signal.SIGINT)
            assert follower.wait(timeout=10) == 130  # Ctrl-C is the way out, as for tail -f
        finally:
            follower.kill()


def test_a_disabled_journal_still_says_how_each_call_ended() -> None:
    """``nexus.journal: false`` writes no file, but the metrics still count calls by the record's outcome."""
    journal, ended = CallJournal(None), []
    with journal.call("s__t", {}, via="call_tool", ended=ended.append) as record:
        record.answered({"content": [], "isError": True})
    with pytest.raises(RuntimeError), journal.call("s__t", {}, via="call_tool", ended=ended.append):
        raise RuntimeError("lost")
    assert [r.outcome for r in ended] == ["error", "failed"]
