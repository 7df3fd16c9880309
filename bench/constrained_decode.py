"""Cost of the schema constraint per generated token: our grammar walker (forced tokens fed without
sampling, closed choices over a trie, one masked argmax otherwise) vs llama.cpp's GBNF grammar sampler
on the same grammar (``schema_grammar``), vs unconstrained greedy decoding. Same model, same prompts.

    python bench/constrained_decode.py [--n 20] [--threads 2] [--json bench/results/constrained_decode.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import llama_cpp
import numpy as np

from nexus_gateway.arguments import ArgumentGenerator, system_prefix, turn_text
from nexus_gateway.decoding import schema_grammar
from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.evaluation import bootstrap_median_ci
from nexus_gateway.ir import compressed_ir
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--json", default="bench/results/constrained_decode.json")
    args = parser.parse_args()
    tools = {t["name"]: t for t in json.loads((SHARED / "registries/github-mcp.json").read_text())}
    queries = [json.loads(x) for x in (SHARED / "queries/github-dev.jsonl").read_text().splitlines()][1::2][: args.n]
    generator = ArgumentGenerator(LlamaEngine(EngineSettings(args.model, n_threads=args.threads)))
    generator.warm()
    llm = llama_cpp.Llama(args.model, n_ctx=4096, n_threads=args.threads, verbose=False)
    rows = {"walker": [], "gbnf_sampler": [], "unconstrained": []}
    for query in queries:
        tool = tools[query["gold_tool"]]
        done = generator.generate(tool["name"], tool["inputSchema"], tool["description"], query["query"])
        tokens = done.chosen_tokens + done.forced_tokens
        rows["walker"].append(done.timings_ms["decode"] / max(tokens, 1))
        prompt = system_prefix() + turn_text(compressed_ir(tool["name"], tool["inputSchema"]), query["query"], "")
        grammar = llama_cpp.LlamaGrammar.from_string(schema_grammar(tool["inputSchema"]), verbose=False)
        for name, kwargs in (("gbnf_sampler", {"grammar": grammar}), ("unconstrained", {})):
            llm(prompt, max_tokens=1, temperature=0.0)  # prefill (cached by Llama for the next call)
            started = time.perf_counter()
            out = llm(prompt, max_tokens=48, temperature=0.0, **kwargs)
            elapsed = (time.perf_counter() - started) * 1000
            rows[name].append(elapsed / max(out["usage"]["completion_tokens"], 1))
        sys.stderr.write(f"{query['id']}: walker {rows['walker'][-1]:.1f} gbnf {rows['gbnf_sampler'][-1]:.1f} "
                         f"free {rows['unconstrained'][-1]:.1f} ms/token\n")  # fmt: skip
    result = {"n": len(queries), "threads": args.threads, "model": Path(args.model).name, "ms_per_token": {}}
    print(f"{'decoder':<16}{'median ms/token':>16}{'95% CI':>20}")
    for name, values in rows.items():
        median = float(np.median(values))
        low, high = bootstrap_median_ci(values)
        result["ms_per_token"][name] = {"median": median, "ci": [low, high]}
        print(f"{name:<16}{median:>16.1f}{f'[{low:.1f}, {high:.1f}]':>20}")
    walker = result["ms_per_token"]["walker"]["median"]
    result["gbnf_over_walker"] = result["ms_per_token"]["gbnf_sampler"]["median"] / walker
    print(f"GBNF sampler / walker: {result['gbnf_over_walker']:.2f}x")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
