"""The gateway in front of the five real upstream servers, driven over stdio by a real MCP client."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from conftest import fault_server, real_servers, result_json, result_text, stdio_gateway, write_config
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.anyio

SURFACE = ["search_tools", "describe_tool", "call_tool", "call"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("real")


@pytest.fixture(scope="module")
async def gateway(workdir: Path) -> AsyncIterator[ClientSession]:
    config = write_config(workdir / "config.json", real_servers(workdir))
    async with stdio_gateway(config, workdir / "cache") as session:
        yield session


async def search(session: ClientSession, query: str, limit: int = 3) -> list[str]:
    result = await session.call_tool("search_tools", {"query": query, "limit": limit})
    return [r["tool"] for r in result_json(result)["results"]]


async def test_fixed_surface(gateway: ClientSession) -> None:
    listed = await gateway.list_tools()
    assert [t.name for t in listed.tools] == SURFACE
    for tool in listed.tools:
        assert tool.input_schema["type"] == "object"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("convert a time between timezones", "time__convert_time"),
        ("show the working tree status of the repository", "git__git_status"),
        ("list the files in a directory", "filesystem__list_directory"),
        ("create entities in the knowledge graph", "memory__create_entities"),
        ("echo a message back", "everything__echo"),
        ("add two numbers together", "everything__get-sum"),
    ],
)
async def test_search_finds_each_servers_tool(gateway: ClientSession, query: str, expected: str) -> None:
    assert (await search(gateway, query))[0] == expected


async def test_search_results_carry_signature_and_first_sentence(gateway: ClientSession) -> None:
    result = await gateway.call_tool("search_tools", {"query": "convert time", "limit": 1})
    [hit] = result_json(result)["results"]
    assert hit["signature"].startswith("convert_time(source_timezone: string, time: string, target_timezone: string)")
    assert "\n" not in hit["description"] and hit["score"] > 0


async def test_describe_returns_full_upstream_schema(gateway: ClientSession) -> None:
    result = await gateway.call_tool("describe_tool", {"tool": "time__convert_time"})
    described = result_json(result)
    assert described["server"] == "time" and described["name"] == "convert_time"
    assert set(described["inputSchema"]["required"]) == {"source_timezone", "time", "target_timezone"}


async def direct_call(command: list[str], tool: str, arguments: dict[str, object]) -> types.CallToolResult:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        result = await session.call_tool(tool, arguments)
        assert isinstance(result, types.CallToolResult)
        return result


@pytest.mark.parametrize(
    ("server", "tool", "arguments"),
    [
        (
            "time",
            "convert_time",
            {"source_timezone": "UTC", "time": "12:30", "target_timezone": "Asia/Tokyo"},
        ),
        ("everything", "get-sum", {"a": 2, "b": 40}),
        ("everything", "echo", {"message": "héllo through the gateway"}),
        ("filesystem", "read_text_file", {"path": "notes.txt"}),
        ("git", "git_log", {"repo_path": "repo", "max_count": 1}),
    ],
)
async def test_call_tool_matches_direct_call(
    gateway: ClientSession, workdir: Path, server: str, tool: str, arguments: dict[str, object]
) -> None:
    spec = real_servers(workdir)[server]
    # Paths are relative in the parametrisation so ids stay readable; make them real here.
    if server == "filesystem":
        arguments = {"path": str(workdir / "files" / "notes.txt")}
    if server == "git":
        arguments = {**arguments, "repo_path": str(workdir / "repo")}
    direct = await direct_call([spec["command"], *spec.get("args", [])], tool, arguments)
    through = await gateway.call_tool("call_tool", {"tool": f"{server}__{tool}", "arguments": arguments})
    assert through.is_error == direct.is_error
    assert through.structured_content == direct.structured_content
    if server == "git":  # the log carries commit times and hashes that match; compare whole text
        assert result_text(through) == result_text(direct)
    else:
        assert [c.model_dump() for c in through.content] == [c.model_dump() for c in direct.content]


async def test_stateful_upstream_keeps_state_across_calls(gateway: ClientSession) -> None:
    entity = {"name": "nexus", "entityType": "project", "observations": ["routes tools"]}
    created = await gateway.call_tool(
        "call_tool", {"tool": "memory__create_entities", "arguments": {"entities": [entity]}}
    )
    assert not created.is_error, result_text(created)
    graph = await gateway.call_tool("call_tool", {"tool": "memory__read_graph", "arguments": {}})
    assert "routes tools" in result_text(graph)


async def test_invalid_arguments_name_the_field(gateway: ClientSession) -> None:
    result = await gateway.call_tool("call_tool", {"tool": "everything__get-sum", "arguments": {"a": "two", "b": 3}})
    assert result.is_error
    assert "field 'a'" in result_text(result) and "number" in result_text(result)
    missing = await gateway.call_tool("call_tool", {"tool": "time__convert_time", "arguments": {"time": "10:00"}})
    assert missing.is_error and "'source_timezone'" in result_text(missing) and "required" in result_text(missing)


async def test_unknown_tool_id_suggests_close_ids(gateway: ClientSession) -> None:
    result = await gateway.call_tool("call_tool", {"tool": "time__convert_tme", "arguments": {}})
    assert result.is_error
    assert "Unknown tool 'time__convert_tme'" in result_text(result) and "time__convert_time" in result_text(result)
    direct = await gateway.call_tool("no_such_surface_tool", {})
    assert direct.is_error and "search_tools" in result_text(direct) and "call." in result_text(direct)


async def test_malformed_surface_request_is_an_error_result(gateway: ClientSession) -> None:
    result = await gateway.call_tool("search_tools", {"limit": 3})
    assert result.is_error and "'query'" in result_text(result)
    result = await gateway.call_tool("search_tools", {"query": "time", "limit": "many"})
    assert result.is_error and "'limit'" in result_text(result)
    # and the gateway keeps serving
    assert (await search(gateway, "current time"))[0] == "time__get_current_time"


async def test_resources_and_prompts_pass_through_namespaced(gateway: ClientSession) -> None:
    resources = await gateway.list_resources()
    uris = [r.uri for r in resources.resources]
    assert all(u.startswith(("nexus://everything/", "nexus://memory/")) for u in uris)
    everything = [u for u in uris if u.startswith("nexus://everything/")]
    assert everything
    read = await gateway.read_resource(everything[0])
    assert read.contents and read.contents[0].uri == everything[0]
    prompts = await gateway.list_prompts()
    names = [p.name for p in prompts.prompts]
    assert "everything__simple-prompt" in names
    prompt = await gateway.get_prompt("everything__simple-prompt")
    assert prompt.messages


async def test_concurrent_calls_all_answered_correctly(gateway: ClientSession) -> None:
    answers: dict[int, str] = {}

    async def one(i: int) -> None:
        result = await gateway.call_tool("call_tool", {"tool": "everything__get-sum", "arguments": {"a": i, "b": 1000}})
        answers[i] = result_text(result)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for i in range(50):
                group.start_soon(one, i)
    assert len(answers) == 50
    for i, text in answers.items():
        assert str(i + 1000) in text, text


async def test_hidden_tools_can_be_neither_found_nor_called(tmp_path: Path) -> None:
    servers = {"fault": fault_server(), "other": fault_server()}
    config = write_config(tmp_path / "config.json", servers, hide=["fault__crash", "other/*"])
    async with stdio_gateway(config, tmp_path / "cache") as host:
        assert "fault__echo" in await search(host, "echo the given text back", 5)
        found = await search(host, "exit the server process immediately, mid-call", 50)
        assert "fault__crash" not in found and not [t for t in found if t.startswith("other__")], found
        for surface_tool, arguments in (
            ("call_tool", {"tool": "fault__crash", "arguments": {}}),
            ("describe_tool", {"tool": "other__echo"}),
        ):
            refused = await host.call_tool(surface_tool, arguments)
            assert refused.is_error and "Unknown tool" in result_text(refused), result_text(refused)
        routed = await host.call_tool("call", {"intent": "exit the server process immediately", "arguments": {}})
        assert re.search(r"fault__crash\b", result_text(routed)) is None, result_text(routed)
