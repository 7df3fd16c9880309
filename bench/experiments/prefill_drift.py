"""Does the same prefill get slower after the splice variants have run (the cache's layout), or does it
just drift on a shared machine? Times one prefill from the checkpoint before and after a suffix and a
scattered splice (docs/kv-splice.md, the 0.83x check run).

    python bench/experiments/prefill_drift.py [--dpos 1024] [--requests 2]
"""

from __future__ import annotations

import argparse
import sys
import time

from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.kv_splice import RepairPolicy, Splicer
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path
from nexus_gateway.splice_bench import SpliceBench


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dpos", type=int, default=1024)
    parser.add_argument("--requests", type=int, default=2)
    args = parser.parse_args()
    engine = LlamaEngine(EngineSettings(str(model_path(lookup(DEFAULT_MODEL))), n_ctx=4096, n_threads=2))
    bench = SpliceBench(engine, args.requests)
    between = bench.filler[: args.dpos]
    for request in bench.requests:
        name = request["tool"]
        block, text = bench.block(name), bench.texts[name]
        question = bench.question(request)
        with engine.lock:
            position = bench.checkpoint(between)
            before = [bench.timed_prefill(position, text + question)[1] for _ in range(2)]
            for variant in ("suffix", "scattered"):
                cursor = bench.resume(position)
                splicer = Splicer(engine, RepairPolicy(k=2))
                started = time.perf_counter()
                if variant == "suffix":
                    splicer.splice(cursor, block, len(text) - 1)
                else:
                    splicer.splice(cursor, block, 0, scattered=list(range(0, len(text), 3)))
                cursor.feed(question)
                spliced = (time.perf_counter() - started) * 1000
                after = [bench.timed_prefill(position, text + question)[1] for _ in range(2)]
                print(
                    f"{name}: prefill before {[round(x) for x in before]} ms; {variant} {spliced:.0f} ms; "
                    f"prefill after {[round(x) for x in after]} ms"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
