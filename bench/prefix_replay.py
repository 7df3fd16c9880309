"""Radix prefix arena: time to first token on a replay of multi-turn sessions, warm arena vs cold prefill.

Each turn of the GitHub dialogues is rendered exactly as ``ArgumentGenerator`` prompts it (system prefix
with its worked examples + the session window of earlier turns + the tool's compressed IR + the request),
the sessions interleaved turn by turn as concurrent hosts would send them. Three engines, same model,
same run:

- ``arena``: the prefix arena (32 slots, longest common prefix, LRU) as the gateway runs it;
- ``prefix_only``: only the fixed system prefix is warm (every other slot forgotten before each turn);
- ``cold``: nothing warm, the whole prompt prefilled;
- ``blocks``: the gateway's default path since session 14: the prefix warm, the tool's compressed IR
  spliced from its compiled block at Δpos 0, the window and the request computed (the blocks are
  compiled before the replay, as the gateway compiles them in the background at start).

TTFT here is the prompt's processing up to the first next-token logits (``engine.cursor``).

    python bench/prefix_replay.py [--dialogues ../shared/data/queries/github-dialogues-dev.jsonl]
                                  [--registry ../shared/data/registries/github-mcp.json] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from stats import bootstrap_median_ci

from nexus_gateway.arguments import ArgumentGenerator, ir_block_key, ir_text, turn_parts, turn_text
from nexus_gateway.block_store import SchemaBlocks
from nexus_gateway.cache import RegistryCache, schema_key
from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.ir import compressed_ir
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path
from nexus_gateway.window import SessionWindow

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def forget_all(engine: LlamaEngine) -> None:
    while engine.arena.evict_lru():
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dialogues", default=str(SHARED / "queries" / "github-dialogues-dev.jsonl"))
    parser.add_argument("--registry", default=str(SHARED / "registries" / "github-mcp.json"))
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", default="bench/results/prefix_replay.json")
    args = parser.parse_args()
    tools = {t["name"]: t for t in json.loads(Path(args.registry).read_text())}
    dialogues = [json.loads(line) for line in Path(args.dialogues).read_text().splitlines() if line.strip()]
    settings = EngineSettings(args.model, n_ctx=8192, n_threads=args.threads)
    engines = {name: LlamaEngine(settings) for name in ("arena", "prefix_only", "cold", "blocks")}
    prefix = ArgumentGenerator(engines["arena"]).prefix_tokens
    engines["arena"].cursor(prefix)  # the gateway warms its prefix at start
    blocks = SchemaBlocks(engines["blocks"], prefix, RegistryCache())
    tokenize = engines["blocks"].tokenize
    used = {turn["gold_tool"] for dialogue in dialogues for turn in dialogue["turns"]}
    irs = {name: compressed_ir(name, tools[name]["inputSchema"]) for name in used}
    block_keys = {name: ir_block_key(schema_key(tools[name]), ir_text(irs[name])) for name in used}
    ir_tokens = {name: tokenize(ir_text(irs[name])) for name in used}
    blocks.compile_missing((block_keys[name], ir_tokens[name]) for name in sorted(used))
    windows = [SessionWindow() for _ in dialogues]
    ttft: dict[str, list[float]] = {name: [] for name in engines}
    tokens: list[int] = []
    spliced = 0
    depth = max(len(d["turns"]) for d in dialogues)
    for turn_index in range(depth):
        for dialogue, window in zip(dialogues, windows, strict=True):
            if turn_index >= len(dialogue["turns"]):
                continue
            turn = dialogue["turns"][turn_index]
            tool = tools[turn["gold_tool"]]
            ir = irs[tool["name"]]
            shown = window.render(turn["query"])  # as the generator renders it for this request
            prompt = prefix + engines["arena"].tokenize(turn_text(ir, turn["query"], shown))
            tokens.append(len(prompt))
            for name, engine in engines.items():
                if name == "blocks":
                    started = time.perf_counter()
                    cursor = engine.cursor(prefix, logits=False)
                    head, rest = turn_parts(ir_text(ir), turn["query"], shown)
                    report = blocks.place(cursor, block_keys[tool["name"]], tokenize(head), tokenize(rest))
                    ttft[name].append((time.perf_counter() - started) * 1000)
                    spliced += report.path == "splice"
                    continue
                if name != "arena":
                    forget_all(engine)
                    if name == "prefix_only":
                        engine.cursor(prefix)
                started = time.perf_counter()
                engine.cursor(prompt)
                ttft[name].append((time.perf_counter() - started) * 1000)
            window.add(turn["query"], tool["name"], turn["gold_arguments"], turn.get("result"))
            sys.stderr.write(f"\rprefix replay: {len(tokens)} turns")
    sys.stderr.write("\n")
    arena = engines["arena"].arena
    document: dict[str, object] = {
        "model": Path(args.model).name,
        "threads": args.threads,
        "sessions": len(dialogues),
        "turns": len(tokens),
        "prompt_tokens_median": statistics.median(tokens),
        "arena_hit_rate": arena.hit_tokens / arena.total_tokens,
        "blocks_spliced": spliced,
        "ttft_ms": {},
    }
    cold = statistics.median(ttft["cold"])
    print(f"{len(dialogues)} sessions, {len(tokens)} turns, prompt median {statistics.median(tokens):.0f} tokens")
    print(f"arena hit rate (prompt tokens served warm): {document['arena_hit_rate']:.1%}")
    print(f"blocks: the IR spliced on {spliced} of {len(tokens)} turns")
    print(f"{'path':<12} {'TTFT p50 ms':>12} {'95% CI':>18} {'vs cold':>8}")
    for name, values in ttft.items():
        median = statistics.median(values)
        low, high = bootstrap_median_ci(values)
        document["ttft_ms"][name] = {"p50": median, "ci": [low, high], "speedup_vs_cold": cold / median}  # type: ignore[index]
        print(f"{name:<12} {median:>12.0f} {f'[{low:.0f}, {high:.0f}]':>18} {cold / median:>7.1f}×")
    if args.json:
        Path(args.json).write_text(json.dumps(document, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
