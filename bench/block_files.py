"""Compiled block files on disk: sections on pages (``.atb`` version 2) vs on 2 MiB boundaries (version 1).

The gateway compiles every tool's compressed-IR block in the background at start; this compiles those of
the GitHub MCP server's 117 tools (0.5B model), writes each block in both layouts side by side and
reports, per layout: the files' apparent size, the bytes they take on this disk (holes are free on a
file system with sparse files), the bytes a plain copy of the folder takes (``shutil.copy2``: a copy
reads holes as zeros and writes them), and the time to read and check one block (``read_block``: map,
checksum, views; median with a bootstrap 95% CI over the files, page cache warm). Needs ``../shared``.

    python bench/block_files.py [--schema ir|full] [--limit N] [--threads 2] [--json bench/results/block_files.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from stats import bootstrap_median_ci

from nexus_gateway.arguments import ArgumentGenerator, ir_text, schema_text
from nexus_gateway.atb import SECTION_ALIGN, read_block, write_block
from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.ir import compressed_ir
from nexus_gateway.kv_splice import compile_block
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
LAYOUTS = {"version 1: 2 MiB sections": 2 * 1024 * 1024, "version 2: page sections": SECTION_ALIGN}


def folder_bytes(folder: Path) -> tuple[int, int]:
    """Apparent and allocated bytes of the files in ``folder``."""
    files = [path.stat() for path in folder.iterdir()]
    return sum(s.st_size for s in files), sum(s.st_blocks * 512 for s in files)


def read_times_ms(folder: Path, rounds: int = 5) -> list[float]:
    """Per file, the best of ``rounds`` reads (map, checksum, views): the format's cost, not the disk's."""
    times = []
    for path in sorted(folder.iterdir()):
        best = float("inf")
        for _ in range(rounds):
            started = time.perf_counter()
            read_block(path)
            best = min(best, time.perf_counter() - started)
        times.append(best * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--registry", default=str(SHARED / "registries" / "github-mcp.json"))
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--schema", choices=("ir", "full"), default="ir", help="what each block holds")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tools")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", default="bench/results/block_files.json")
    args = parser.parse_args()
    tools = json.loads(Path(args.registry).read_text())[: args.limit]
    engine = LlamaEngine(EngineSettings(args.model, n_threads=args.threads))
    prefix = ArgumentGenerator(engine).prefix_tokens
    engine.cursor(prefix, logits=False)  # warm, as the gateway keeps it
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        folders = {name: Path(scratch) / f"align-{align}" for name, align in LAYOUTS.items()}
        for folder in folders.values():
            folder.mkdir()
        for done, tool in enumerate(tools, 1):
            if args.schema == "ir":
                text = ir_text(compressed_ir(tool["name"], tool["inputSchema"]))
            else:
                text = schema_text(tool)
            block = compile_block(engine, prefix, engine.tokenize(text))
            for name, align in LAYOUTS.items():
                write_block(folders[name] / f"{tool['name']}.atb", block, align=align)
            print(f"\rcompiled {done}/{len(tools)}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        for name, folder in folders.items():
            apparent, allocated = folder_bytes(folder)
            copied = Path(scratch) / f"copy-of-{folder.name}"
            shutil.copytree(folder, copied, copy_function=shutil.copy2)
            _, copied_allocated = folder_bytes(copied)
            shutil.rmtree(copied)
            times = read_times_ms(folder)
            median, (low, high) = statistics.median(times), bootstrap_median_ci(times)
            rows[name] = {
                "apparent_mb": apparent / 1e6,
                "on_disk_mb": allocated / 1e6,
                "copied_mb": copied_allocated / 1e6,
                "read_ms": median,
                "read_ms_ci": [low, high],
            }
    old, new = rows[next(iter(LAYOUTS))], rows[list(LAYOUTS)[1]]
    ratios = {key: old[key] / new[key] for key in ("apparent_mb", "on_disk_mb", "copied_mb", "read_ms")}
    print(f"{len(tools)} GitHub tools, {args.schema} blocks, {Path(args.model).name}")
    print(f"{'layout':<28} {'apparent MB':>12} {'on disk MB':>11} {'copied MB':>10} {'read ms (median, 95% CI)':>28}")
    for name, row in rows.items():
        ci = f"{row['read_ms']:.3f} [{row['read_ms_ci'][0]:.3f}, {row['read_ms_ci'][1]:.3f}]"
        print(f"{name:<28} {row['apparent_mb']:>12.1f} {row['on_disk_mb']:>11.1f} {row['copied_mb']:>10.1f} {ci:>28}")
    print("version 1 / version 2: " + ", ".join(f"{key} {value:.2f}×" for key, value in ratios.items()))
    document = {
        "tools": len(tools),
        "schema": args.schema,
        "model": Path(args.model).name,
        "layouts": rows,
        "ratio_v1_over_v2": ratios,
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(document, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
