"""How long ``Splicer.place`` takes to decide, before it feeds anything: the live geometry, the header
check against it and the token comparison (docs/kv-splice.md: "a compatibility check of ~30 µs").

    python bench/experiments/place_decision.py [--model GGUF] [--n 2000]
"""

from __future__ import annotations

import argparse
import sys
import timeit

import numpy as np

from nexus_gateway.arguments import ArgumentGenerator, schema_text
from nexus_gateway.atb import anchor_of, check_compatible
from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.kv_splice import compile_block
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    engine = LlamaEngine(EngineSettings(args.model, n_threads=2))
    generator = ArgumentGenerator(engine)
    generator.warm()
    tokens = engine.tokenize(schema_text("write_file", SCHEMA, "Write a file"))
    block = compile_block(engine, generator.prefix_tokens, tokens)
    anchor = anchor_of(generator.prefix_tokens)

    def decide() -> None:
        geometry = engine.geometry()
        geometry.why_not_spliceable()
        check_compatible(block.header, geometry, anchor)
        np.array_equal(block.tokens, tokens)

    seconds = timeit.timeit(decide, number=args.n) / args.n
    print(f"place() decision: {seconds * 1e6:.1f} µs (mean of {args.n})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
