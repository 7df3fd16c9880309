"""Compiled schema blocks (.atb) and the KV splice, on the real default model.

Fidelity is asserted where it must be exact: at Δpos 0 the spliced cells and the next-token logits are
bit-identical to a prefill, in both V layouts; with the whole block repaired, at any depth. Greedy
argument generation gives identical tokens spliced and prefilled. Speed is benchmarked, not tested
(``nexus-gateway bench splice``).
"""

from __future__ import annotations

import dataclasses
import json
import struct
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import anyio
import numpy as np
import pytest
from conftest import TESTS, node_server, result_text, stdio_gateway, write_config

from nexus_gateway import block_arena, kv_state, rope
from nexus_gateway.arguments import (
    ArgumentGenerator,
    ir_block_key,
    request_text,
    schema_text,
    tool_blocks,
    turn_parts,
)
from nexus_gateway.atb import BlockCorrupt, BlockMismatch, anchor_of, check_compatible, read_block, write_block
from nexus_gateway.block_store import SchemaBlocks
from nexus_gateway.cache import RegistryCache, schema_key
from nexus_gateway.cache_survey import survey
from nexus_gateway.engine import SCRATCH_SEQ, EngineSettings, LlamaEngine
from nexus_gateway.kv_splice import RepairPolicy, Splicer, compile_block
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path

REGISTRY = json.loads((TESTS / "fixtures" / "local_registry.json").read_text())
TOOLS = {tool["name"]: tool for tool in REGISTRY}
PREFIX = "<|im_start|>system\nYou fill in JSON arguments for tools.<|im_end|>\n<|im_start|>user\n"
REQUEST = request_text("read the file notes/todo.txt", "")  # follows a tool's form, which ends with its label


def open_engine(flash_attn: bool | None = None) -> LlamaEngine:
    return LlamaEngine(EngineSettings(str(model_path(lookup(DEFAULT_MODEL))), n_threads=1, flash_attn=flash_attn))


@pytest.fixture(scope="module")
def engine() -> Iterator[LlamaEngine]:
    engine = open_engine()
    yield engine
    engine.close()


def tool_tokens(engine: LlamaEngine, name: str) -> list[int]:
    tool = TOOLS[name]
    return engine.tokenize(schema_text(tool["name"], tool["inputSchema"], tool.get("description")))


def cells(engine: LlamaEngine, seq: int) -> kv_state.SequenceState:
    state = kv_state.parse(engine.state_get(seq))
    assert state is not None
    return state


@pytest.mark.parametrize("flash_attn", [True, False], ids=["v-rows", "v-transposed"])
def test_splice_at_dpos_0_is_bit_identical_to_prefill_in_both_v_layouts(flash_attn: bool) -> None:
    engine = open_engine(flash_attn)
    try:
        assert engine.geometry().v_trans is (not flash_attn)
        prefix, block_tokens = engine.tokenize(PREFIX), tool_tokens(engine, "read_text_file")
        request = engine.tokenize(REQUEST)
        block = compile_block(engine, prefix, block_tokens)
        cursor = engine.cursor(prefix, logits=False)
        cursor.feed(block_tokens)
        expected_logits = cursor.feed(request)
        expected = cells(engine, cursor.seq)

        cursor = engine.cursor(prefix, logits=False)
        Splicer(engine).splice(cursor, block, repair=0)
        logits = cursor.feed(request)
        spliced = cells(engine, cursor.seq)
        assert np.array_equal(spliced.positions, expected.positions)
        assert np.array_equal(spliced.k.view(np.uint16), expected.k.view(np.uint16))
        assert np.array_equal(spliced.v.view(np.uint16), expected.v.view(np.uint16))
        assert np.array_equal(logits, expected_logits)

        # a turn that shows earlier turns between the tool and the request's label splices the block's
        # head, the form without the label: the cells a prefill of the whole form computes (attention is
        # causal), bit for bit; a prefill of the head alone, another batch, differs only in rounding
        tool = TOOLS["read_text_file"]
        form = schema_text(tool["name"], tool["inputSchema"], tool.get("description"))
        head, rest = turn_parts(form, "read it again", 'Earlier:\n1. "read notes/todo.txt" → read_text_file')
        head_tokens, rest_tokens = engine.tokenize(head), engine.tokenize(rest)
        assert head_tokens == block_tokens[: len(head_tokens)] and len(head_tokens) < len(block_tokens)
        cursor = engine.cursor(prefix, logits=False)
        cursor.feed(block_tokens)
        cursor.rewind(len(block_tokens) - len(head_tokens), np.empty(0))
        expected_logits = cursor.feed(rest_tokens)
        expected = cells(engine, cursor.seq)
        cursor = engine.cursor(prefix, logits=False)
        report = Splicer(engine).place(cursor, block, head_tokens, anchor_of(prefix), rest_tokens)
        assert report.path == "splice" and report.repaired == 0, report
        assert cursor.position == len(prefix) + len(head_tokens) + len(rest_tokens)
        spliced = cells(engine, cursor.seq)
        assert np.array_equal(spliced.k.view(np.uint16), expected.k.view(np.uint16))
        assert np.array_equal(spliced.v.view(np.uint16), expected.v.view(np.uint16))
        assert np.array_equal(cursor.logits, expected_logits)
        plain = engine.cursor(prefix, logits=False)
        plain.feed(head_tokens)
        assert np.argmax(plain.feed(rest_tokens)) == np.argmax(expected_logits)

        # when place() prefills instead (no block yet, or a load predicted slower), it feeds the batches
        # a splice leaves, so the path never changes what the model writes
        cursor = engine.cursor(prefix, logits=False)
        report = Splicer(engine).place(cursor, None, block_tokens, anchor_of(prefix), request)
        assert report.path == "prefill" and np.array_equal(cursor.logits, logits)
        slow_disk = Splicer(engine)
        slow_disk.costs.prefill_ms_per_token, slow_disk.costs.load_ms_per_mb = 1e-6, 1e6
        cursor = engine.cursor(prefix, logits=False)
        report = slow_disk.place(cursor, block, head_tokens, anchor_of(prefix), rest_tokens)
        assert report.path == "prefill" and report.reason == "prefill predicted cheaper"
        assert cursor.position == len(prefix) + len(head_tokens) + len(rest_tokens)
        assert np.array_equal(cursor.logits, expected_logits)
        cursor = engine.cursor(prefix, logits=False)  # no block compiled yet: its whole text, cut back
        report = Splicer(engine).place(cursor, None, head_tokens, anchor_of(prefix), rest_tokens, block_tokens)
        assert report.path == "prefill" and np.array_equal(cursor.logits, expected_logits)
    finally:
        engine.close()


def test_state_blob_round_trips_byte_for_byte(engine: LlamaEngine) -> None:
    cursor = engine.cursor(engine.tokenize(PREFIX))
    cursor.feed(engine.tokenize("Tool: echo"))
    blob = engine.state_get(cursor.seq)
    state = kv_state.parse(blob)
    assert state is not None and state.n_cells == cursor.position
    assert kv_state.build(cursor.seq, state) == blob


def test_rerotation_matches_llama_cpp_k_shift_and_native_matches_numpy(engine: LlamaEngine) -> None:
    geometry = engine.geometry()
    tokens = engine.tokenize(PREFIX + "Tool: echo")
    with engine.lock:
        engine.drop(SCRATCH_SEQ)
        engine.decode_at(tokens, SCRATCH_SEQ, range(len(tokens)), want_logits=False)
        before = cells(engine, SCRATCH_SEQ)
        delta = 300  # llama.cpp's own K-shift: seq_add, applied to every cell on the next decode
        engine._ll.llama_memory_seq_add(engine._memory, SCRATCH_SEQ, 0, -1, delta)
        engine.decode_at(engine.tokenize(" x"), SCRATCH_SEQ, [len(tokens) + delta], want_logits=False)
        shifted = cells(engine, SCRATCH_SEQ).k[:, : len(tokens)]
        engine.drop(SCRATCH_SEQ)
    ours = before.k.copy()
    rope.rerotate(ours, delta, geometry, use_native=False)
    ulp = np.abs(ours.view(np.int16).astype(np.int32) - shifted.view(np.int16).astype(np.int32))
    assert ulp.max() <= 1 and (ulp > 0).mean() < 1e-3
    if rope.backend() == "native":
        native = before.k.copy()
        rope.rerotate(native, delta, geometry, use_native=True)
        assert np.array_equal(native.view(np.uint16), ours.view(np.uint16))
    back = ours.copy()
    rope.rerotate(back, -delta, geometry)
    assert np.abs(back.astype(np.float32) - before.k.astype(np.float32)).max() < 0.05


def test_full_repair_at_depth_equals_prefill(engine: LlamaEngine) -> None:
    """Deeper than the anchor, re-decoding the whole block reproduces the prefill exactly; the policy's
    partial repair leaves the cursor consistent (same positions, next-token logits)."""
    prefix, block_tokens = engine.tokenize(PREFIX), tool_tokens(engine, "write_file")
    between = engine.tokenize("Earlier: the user listed the notes folder and read todo.txt.\n")
    request = engine.tokenize(REQUEST)
    block = compile_block(engine, prefix, block_tokens)
    cursor = engine.cursor(prefix, logits=False)
    cursor.feed(between)
    cursor.feed(block_tokens)
    expected = cursor.feed(request)

    splicer = Splicer(engine, RepairPolicy(k=2))
    cursor = engine.cursor(prefix, logits=False)
    cursor.feed(between)
    splicer.splice(cursor, block, repair=len(block_tokens))
    assert np.array_equal(cursor.feed(request), expected)

    cursor = engine.cursor(prefix, logits=False)
    cursor.feed(between)
    repair = splicer.policy.tokens(len(between), len(block_tokens))
    assert 0 < repair < len(block_tokens)
    splicer.splice(cursor, block, repair=repair)
    assert cursor.position == len(prefix) + len(between) + len(block_tokens)
    partial = cursor.feed(request)
    assert partial.shape == expected.shape and np.isfinite(partial).all()
    assert np.array_equal(cells(engine, cursor.seq).positions, np.arange(cursor.position))


def test_repair_policy_grows_with_depth_and_clamps() -> None:
    policy = RepairPolicy(r_base=5, m=256, k=4)
    assert policy.tokens(0, 200) == 0
    assert policy.percent(100) == 5 and policy.percent(256) == 5
    assert policy.percent(256 + 256 * 3) == 100 and policy.percent(10_000) == 100
    assert policy.percent(512) == pytest.approx(5 + 256 / 768 * 95)
    assert policy.tokens(10, 200) == 10


def test_block_file_rejects_other_models_layouts_prefixes_and_corruption(engine: LlamaEngine, tmp_path: Path) -> None:
    prefix = engine.tokenize(PREFIX)
    block = compile_block(engine, prefix, tool_tokens(engine, "echo"))
    path = tmp_path / "echo.atb"
    write_block(path, block)
    loaded = read_block(path)
    live, anchor = engine.geometry(), anchor_of(prefix)
    check_compatible(loaded.header, live, anchor)
    assert np.array_equal(loaded.k, block.k) and np.array_equal(loaded.v, block.v)
    data_bytes = block.nbytes + block.tokens.nbytes
    assert path.stat().st_size < data_bytes + 4 * 4096  # sections on pages: no gap larger than a page

    old = tmp_path / "version-1.atb"  # what earlier builds wrote: 2 MiB sections; still read, not recompiled
    write_block(old, block, align=2 * 1024 * 1024)
    rewrite_as_version(old, 1, (len(block.tokens) * 4, block.k.nbytes, block.v.nbytes))
    assert old.stat().st_size > 4 * 1024 * 1024
    loaded = read_block(old)
    assert np.array_equal(loaded.k, block.k) and np.array_equal(loaded.v, block.v)
    future = tmp_path / "version-3.atb"
    future.write_bytes(old.read_bytes()[:4] + struct.pack("<H", 3) + old.read_bytes()[6:])
    with pytest.raises(BlockMismatch, match="version 3"):
        read_block(future)

    variants = {
        "model": dataclasses.replace(live, fingerprint=bytes(16)),
        "freq_base": dataclasses.replace(live, freq_base=10000.0),
        "freq_scale": dataclasses.replace(live, freq_scale=0.5),
        "v_trans": dataclasses.replace(live, v_trans=not live.v_trans),
        "k_type": dataclasses.replace(live, k_type=8),
    }
    for field, other in variants.items():
        with pytest.raises(BlockMismatch, match=field):
            check_compatible(loaded.header, other, anchor)
    with pytest.raises(BlockMismatch, match="prefix"):
        check_compatible(loaded.header, live, anchor_of([*prefix, 1]))

    data = bytearray(path.read_bytes())
    overlapping = bytearray(data)
    struct.pack_into("<I", overlapping, 104, 64)  # K inside the header
    (tmp_path / "overlapping.atb").write_bytes(bytes(overlapping))
    with pytest.raises(BlockCorrupt, match="offsets"):
        read_block(tmp_path / "overlapping.atb")
    truncated = tmp_path / "truncated.atb"
    truncated.write_bytes(data[: len(data) - 100])
    with pytest.raises(BlockCorrupt, match="truncated"):
        read_block(truncated)
    data[-1] ^= 0x40
    flipped = tmp_path / "flipped.atb"
    flipped.write_bytes(bytes(data))
    with pytest.raises(BlockCorrupt, match="checksum"):
        read_block(flipped)


def rewrite_as_version(path: Path, version: int, sizes: tuple[int, int, int]) -> None:
    """Set a block file's version field and recompute its checksum (header with the checksum zeroed,
    then the sections at the header's offsets), as a build of that version would have written it."""
    data = bytearray(path.read_bytes())
    struct.pack_into("<H", data, 4, version)
    struct.pack_into("<Q", data, 112, 0)
    crc = zlib.crc32(bytes(data[:128]))
    for offset, size in zip(struct.unpack_from("<III", data, 100), sizes, strict=True):
        crc = zlib.crc32(bytes(data[offset : offset + size]), crc)
    struct.pack_into("<Q", data, 112, crc)
    path.write_bytes(bytes(data))


def test_mismatched_block_falls_back_to_prefill_and_says_why(engine: LlamaEngine) -> None:
    prefix, block_tokens = engine.tokenize(PREFIX), tool_tokens(engine, "echo")
    block = compile_block(engine, prefix, block_tokens)
    splicer = Splicer(engine)
    cursor = engine.cursor(prefix, logits=False)
    report = splicer.place(cursor, block, block_tokens, anchor_of([*prefix, 1]))
    assert report.path == "prefill" and "prefix" in report.reason
    assert cursor.position == len(prefix) + len(block_tokens)
    other = dataclasses.replace(block, tokens=block.tokens[::-1].copy())
    report = splicer.place(engine.cursor(prefix, logits=False), other, block_tokens, anchor_of(prefix))
    assert report.path == "prefill" and "other text" in report.reason
    report = splicer.place(engine.cursor(prefix, logits=False), block, block_tokens, anchor_of(prefix))
    assert report.path == "splice" and report.dpos == 0 and report.repaired == 0


def test_deeper_than_the_anchor_the_default_prefills_exactly(engine: LlamaEngine) -> None:
    """No partial repair is exact, so by default place() prefills there, giving a plain prompt's logits;
    only an explicitly approximate policy splices and repairs."""
    prefix, block_tokens = engine.tokenize(PREFIX), tool_tokens(engine, "write_file")
    between, request = engine.tokenize("Earlier: the user read todo.txt.\n"), engine.tokenize(REQUEST)
    block = compile_block(engine, prefix, block_tokens)
    cursor = engine.cursor(prefix, logits=False)
    cursor.feed(between)
    cursor.feed(block_tokens)
    expected = cursor.feed(request)

    cursor = engine.cursor(prefix, logits=False)
    cursor.feed(between)
    report = Splicer(engine).place(cursor, block, block_tokens, anchor_of(prefix), request)
    assert report.path == "prefill" and "not exact" in report.reason
    assert np.array_equal(cursor.logits, expected)

    cursor = engine.cursor(prefix, logits=False)
    cursor.feed(between)
    approximate = Splicer(engine, RepairPolicy(approximate=True))
    report = approximate.place(cursor, block, block_tokens, anchor_of(prefix), request)
    assert report.path == "splice" and report.dpos == len(between) and report.repaired > 0
    assert cursor.position == len(prefix) + len(between) + len(block_tokens) + len(request)


def test_block_store_compiles_once_and_recompiles_a_corrupt_file(engine: LlamaEngine, tmp_path: Path) -> None:
    blocks = SchemaBlocks(engine, engine.tokenize(PREFIX), RegistryCache(tmp_path))
    items = [(schema_key(TOOLS[name]), tool_tokens(engine, name)) for name in ("echo", "get-sum")]
    seen: list[tuple[int, int]] = []
    assert blocks.compile_missing(items, lambda done, total: seen.append((done, total))) == 2
    assert seen[-1] == (2, 2)
    assert blocks.compile_missing(items) == 0
    fresh = SchemaBlocks(engine, engine.tokenize(PREFIX), RegistryCache(tmp_path))  # from disk this time
    assert fresh.compile_missing(items) == 0
    path = fresh.path(items[0][0])
    data = bytearray(path.read_bytes())
    data[-5] ^= 1
    path.write_bytes(bytes(data))
    again = SchemaBlocks(engine, engine.tokenize(PREFIX), RegistryCache(tmp_path))
    assert again.get(items[0][0]) is None and not path.exists()
    assert again.compile_missing(items) == 1


def test_the_system_prefix_starts_warm_from_its_own_block_bit_for_bit(tmp_path: Path) -> None:
    """The first start prefills the generator's prefix and keeps it as a block compiled at position 0;
    the next start splices it there instead of prefilling (seconds on two cores): the arena then holds
    the same cells, bit for bit, and a call after it comes out the same."""
    first, second = open_engine(), open_engine()
    try:
        generators = [ArgumentGenerator(first), ArgumentGenerator(second)]
        prefix = generators[0].prefix_tokens
        compiled = SchemaBlocks(first, prefix, RegistryCache(tmp_path)).warm_prefix()
        loaded = SchemaBlocks(second, prefix, RegistryCache(tmp_path)).warm_prefix()
        assert (compiled.path, loaded.path) == ("prefill", "splice"), (compiled, loaded)
        assert list((tmp_path / "tools").glob("system-prefix.*.atb"))
        warm = []
        for engine in (first, second):
            slot, length = engine.arena.longest_prefix(prefix)
            assert length == len(prefix)
            warm.append(cells(engine, engine.arena.seq(slot)))
        assert np.array_equal(warm[0].positions, warm[1].positions)
        assert np.array_equal(warm[0].k, warm[1].k) and np.array_equal(warm[0].v, warm[1].v)
        schema, description = TOOLS["get-sum"]["inputSchema"], TOOLS["get-sum"].get("description")
        calls = [g.generate("get-sum", schema, description, "add 17 and 25") for g in generators]
        assert calls[0].raw == calls[1].raw == {"a": 17, "b": 25}
        assert calls[0].computed_tokens == calls[1].computed_tokens
    finally:
        first.close()
        second.close()


INTENTS = [
    ("read_text_file", "show me the first 5 lines of notes/todo.txt"),
    ("write_file", "write 'hello world' to greetings/hello.txt"),
    ("edit_file", "in app/config.py replace DEBUG = True with DEBUG = False"),
    ("search_files", "find every .md file under docs"),
    ("move_file", "rename drafts/a.txt to final/a.txt"),
    ("get-sum", "what is 17 plus 25"),
    ("echo", "echo back the words good morning"),
    ("create_entities", "remember that Ada is a person who works at Acme"),
    ("git_log", "show the last 3 commits of the repository at /srv/app"),
    ("list_directory", "what is in the src folder"),
]


@pytest.fixture(scope="module")
def generators(
    engine: LlamaEngine, tmp_path_factory: pytest.TempPathFactory
) -> tuple[ArgumentGenerator, ArgumentGenerator]:
    plain = ArgumentGenerator(engine)
    spliced = ArgumentGenerator(engine)
    spliced.blocks = SchemaBlocks(engine, spliced.prefix_tokens, RegistryCache(tmp_path_factory.mktemp("blocks")))
    items = []
    for name, _ in INTENTS:
        tool = TOOLS[name]
        text = schema_text(tool["name"], tool["inputSchema"], tool.get("description"))
        items.append((schema_key(tool), engine.tokenize(text)))
    spliced.blocks.compile_missing(items)
    return plain, spliced


def run(generator: ArgumentGenerator, name: str, intent: str) -> tuple[dict[str, object], dict[str, object] | None]:
    tool = TOOLS[name]
    generation = generator.generate(
        name, tool["inputSchema"], tool.get("description"), intent, full_schema=True, block_key=schema_key(tool)
    )
    return generation.raw, generation.schema_placement


def test_greedy_generations_are_identical_spliced_and_prefilled(
    generators: tuple[ArgumentGenerator, ArgumentGenerator],
) -> None:
    plain, spliced = generators
    for name, intent in INTENTS:
        expected, no_placement = run(plain, name, intent)
        got, placement = run(spliced, name, intent)
        assert no_placement is None
        assert placement is not None and placement["path"] == "splice", placement
        assert got == expected, name


def test_the_ir_spliced_from_its_block_gives_the_same_call_and_computes_only_the_request(
    engine: LlamaEngine, tmp_path: Path
) -> None:
    """The default path: the tool's compressed IR sits right after the fixed prefix, where its block was
    compiled, so a turn splices it exactly and computes only the window and the request."""
    plain, spliced = ArgumentGenerator(engine), ArgumentGenerator(engine)
    spliced.blocks = SchemaBlocks(engine, spliced.prefix_tokens, RegistryCache(tmp_path))
    for name, intent in INTENTS[-4:]:
        tool = TOOLS[name]
        key, schema, description = schema_key(tool), tool["inputSchema"], tool.get("description")
        forms = tool_blocks(key, name, schema, description, full_schema=False)
        spliced.blocks.compile_missing((k, engine.tokenize(text)) for k, text in forms)
        expected = plain.generate(name, schema, description, intent)
        got = spliced.generate(name, schema, description, intent, block_key=key)
        assert got.schema_placement is not None and got.schema_placement["path"] == "splice", got.schema_placement
        assert got.raw == expected.raw, name
        assert got.prompt_tokens == expected.prompt_tokens
        assert got.computed_tokens == len(engine.tokenize(request_text(intent, ""))) < expected.computed_tokens


def test_a_new_rendering_of_the_ir_gets_its_own_block_key() -> None:
    """The schema key does not change when the IR is written differently (a new gateway version); were
    the block key the schema key alone, the old block would be found, refused as other text, and never
    compiled again: every call would prefill."""
    tool = TOOLS[INTENTS[0][0]]
    key = schema_key(tool)
    [(block_key, text)] = tool_blocks(
        key, tool["name"], tool["inputSchema"], tool.get("description"), full_schema=False
    )
    assert block_key == ir_block_key(key, text) and block_key.startswith(key)
    assert ir_block_key(key, text.replace("Tool:", "Tool :")) != block_key


def test_four_threads_calling_concurrently_match_the_serial_results(
    generators: tuple[ArgumentGenerator, ArgumentGenerator],
) -> None:
    _, spliced = generators
    work = INTENTS[:8]
    serial = [run(spliced, name, intent)[0] for name, intent in work]
    results: dict[int, dict[str, object]] = {}

    def worker(offset: int) -> None:
        for index in range(offset, len(work), 4):
            results[index] = run(spliced, *work[index])[0]

    threads = [threading.Thread(target=worker, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[i] for i in range(len(work))] == serial


@pytest.mark.anyio
@pytest.mark.parametrize("schema", ["ir", "full"])
async def test_the_gateway_splices_compiled_blocks(tmp_path: Path, schema: str) -> None:
    """Blocks compile in the background after the model loads (the IR's in the default mode, the full
    schema's too in `nexus.schema: full`); until a tool's block exists its form is prefilled, afterwards
    spliced; the trace says which ran, the result is the same. (The gateway once compiled blocks only
    outside the default mode, so every default call prefilled its IR.)"""
    files = tmp_path / "files"
    files.mkdir()
    (files / "shopping.txt").write_text("oat milk, lemons\n")
    servers = {"filesystem": {"command": node_server("mcp-server-filesystem"), "args": [str(files)]}}
    config = write_config(
        tmp_path / "config.json", servers, routing={"calibration": None}, model_threads=1, schema=schema
    )
    paths = []
    async with stdio_gateway(config, tmp_path / "cache") as session:
        with anyio.fail_after(400):
            while "splice" not in paths:
                result = await session.call_tool("call", {"intent": f"read the text file {files / 'shopping.txt'}"})
                trace = (result.meta or {}).get("io.nexus-gateway/trace") or {}
                schema = trace.get("generation", {}).get("schema")
                if schema:
                    assert not result.is_error and "oat milk, lemons" in result_text(result), result_text(result)
                    paths.append(schema["path"])
                    if schema["path"] == "splice":
                        assert schema["dpos"] == 0 and schema["repaired_tokens"] == 0
                await anyio.sleep(1)
    assert list((tmp_path / "cache" / "tools").glob("*.atb"))
    assert list((tmp_path / "cache" / "tools").glob("system-prefix.*.atb"))  # the next start splices it
    surveyed = survey(tmp_path / "cache")  # `nexus-gateway cache` knows every file and keeps them all
    assert {f.kind for f in surveyed} >= {"tool entry", "vectors", "IR block", "system-prefix block"}
    assert [(f.path.name, f.kind, f.stale) for f in surveyed if f.stale or f.kind == "other"] == []


@pytest.mark.parametrize("native", [True, False], ids=["native", "numpy"])
def test_block_arena_four_threads_load_read_and_evict_without_torn_blocks(native: bool) -> None:
    if native and block_arena.backend() != "native":
        pytest.skip("the C arena is not built (no compiler); the numpy arena is tested")
    arena = block_arena.BlockArena(slots=6, slot_bytes=64 * 1024, native=native)
    stats = arena.stats()
    assert stats["pages_address"] % 4096 == 0 and stats["slot_bytes"] % 4096 == 0
    if native:
        assert stats["lock_address"] % 128 == 0

    def pattern(key: int) -> np.ndarray:
        return np.random.default_rng(key).integers(0, 255, size=1000 + 37 * key, dtype=np.uint8)

    failures: list[str] = []

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        out = np.empty(64 * 1024, dtype=np.uint8)
        for _ in range(3000):
            key = int(rng.integers(1, 12))
            action = rng.random()
            if action < 0.4:
                arena.put(key, pattern(key))
            elif action < 0.9:
                size = arena.get_into(key, out)
                if size >= 0 and not np.array_equal(out[:size], pattern(key)):
                    failures.append(f"torn or foreign block for key {key}")
            else:
                arena.evict(key)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:3]
    stats = arena.stats()
    assert stats["used"] <= 6 and stats["hits"] > 0 and stats["misses"] > 0 and stats["evictions"] > 0

    arena = block_arena.BlockArena(slots=2, slot_bytes=4096, native=native)
    out = np.empty(4096, dtype=np.uint8)
    arena.put(1, pattern(1))
    arena.put(2, pattern(2))
    assert arena.get_into(1, out) == pattern(1).size  # 1 is now the most recently used
    arena.put(3, pattern(3))  # evicts 2, the least recently used
    assert arena.get_into(2, out) == -1 and arena.get_into(1, out) == pattern(1).size
    with pytest.raises(ValueError, match="does not fit"):
        arena.put(4, np.zeros(5000, dtype=np.uint8))
