"""Start-up: the generator's system prefix made warm from its compiled block vs prefilled.

Every turn's prompt begins with the same system prefix (instructions and worked examples, ~500 tokens).
The gateway used to prefill it at every start; it now keeps it as a block compiled at position 0 and
splices it there on later starts (``SchemaBlocks.warm_prefix``). Side by side on one engine, alternating,
the arena emptied before each run:

- ``prefill``: the prefix prefilled (every start before session 19);
- ``first start``: no block yet: prefilled, then kept as a block (state read, file written);
- ``later starts``: the block read from its file and spliced.

    python bench/prefix_start.py [--model GGUF] [--threads 2] [--runs 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from prefix_replay import forget_all
from stats import bootstrap_median_ci

from nexus_gateway.arguments import ArgumentGenerator
from nexus_gateway.block_store import SchemaBlocks
from nexus_gateway.cache import RegistryCache
from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", default="bench/results/prefix_start.json")
    args = parser.parse_args()
    engine = LlamaEngine(EngineSettings(args.model, n_threads=args.threads))
    prefix = ArgumentGenerator(engine).prefix_tokens
    times: dict[str, list[float]] = {"prefill": [], "first start": [], "later starts": []}
    with tempfile.TemporaryDirectory() as kept:
        for run in range(args.runs):
            for name in times:
                forget_all(engine)
                started = time.perf_counter()
                if name == "prefill":
                    engine.cursor(prefix)
                else:
                    with tempfile.TemporaryDirectory() as fresh:
                        root = Path(fresh if name == "first start" else kept)
                        report = SchemaBlocks(engine, prefix, RegistryCache(root)).warm_prefix()
                    expected = "prefill" if name == "first start" or run == 0 else "splice"
                    if report.path != expected:
                        raise SystemExit(f"{name}: the prefix took the {report.path} path ({report.reason})")
                if name != "later starts" or run > 0:  # run 0 of "later starts" compiles the kept block
                    times[name].append((time.perf_counter() - started) * 1000)
            sys.stderr.write(f"\rprefix start: run {run + 1}/{args.runs}")
    sys.stderr.write("\n")
    baseline = statistics.median(times["prefill"])
    document: dict[str, object] = {
        "model": Path(args.model).name,
        "threads": args.threads,
        "prefix_tokens": len(prefix),
        "ms": {},
    }
    print(f"system prefix of {len(prefix)} tokens, {Path(args.model).name}, {args.threads} threads")
    print(f"{'start':<14} {'median ms':>10} {'95% CI':>18} {'n':>3} {'vs prefill':>11}")
    for name, values in times.items():
        median = statistics.median(values)
        low, high = bootstrap_median_ci(values)
        document["ms"][name] = {"p50": median, "ci": [low, high], "n": len(values), "speedup": baseline / median}  # type: ignore[index]
        interval = f"[{low:.1f}, {high:.1f}]"
        print(f"{name:<14} {median:>10.1f} {interval:>18} {len(values):>3} {baseline / median:>10.1f}×")
    Path(args.json).write_text(json.dumps(document, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
