"""Experiment: the local LLM choosing among the router's top-K under a name constraint (a trie over
the candidates' names, `ArgumentGenerator.choose_tool`), on the odd half of the GitHub dev queries.

    python bench/experiments/llm_choice.py [--model GGUF] [--k 3] [--size 250] [--all]

Without ``--all`` the model decides only where the gate would escalate (margin < calibrated τ).
Results are in docs/routing.md ("What did not help").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from shipped import S, shipped

from nexus_gateway.arguments import ArgumentGenerator
from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.evaluation import (
    embed_queries,
    load_queries,
    wilson,
)
from nexus_gateway.ir import choice_ir
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--size", type=int, default=250)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--all", action="store_true", help="let the model decide every request")
    args = parser.parse_args()
    setup = shipped(["github-mcp.json", "mcp-pool.json"])
    tools, embedder, calibration, evaluation = setup.tools, setup.embedder, setup.calibration, setup.evaluation
    queries = load_queries(S / "queries/github-dev.jsonl")[1::2]
    query_vectors = embed_queries(embedder, queries)
    generator = ArgumentGenerator(LlamaEngine(EngineSettings(args.model, n_threads=args.threads)))
    generator.warm()
    router_ok = judged_ok = asked = 0
    times = []
    for query, vector in zip(queries, query_vectors, strict=True):
        registry, accepted = evaluation.protocol.registry(query, args.size)
        result = evaluation.router(registry).route_vector(query["query"], vector, limit=args.k, allow_rerank=False)
        ids = [int(c.id) for c in result.candidates[: args.k]]
        router_ok += ids[0] in accepted
        pick = ids[0]
        if args.all or result.margin < calibration.tau:
            asked += 1
            started = time.perf_counter()
            candidates = [(tools[i].name, choice_ir(tools[i].name, tools[i].schema, tools[i].description)) for i in ids]
            pick = ids[generator.choose_tool(query["query"], candidates).index]
            times.append((time.perf_counter() - started) * 1000)
        judged_ok += pick in accepted
    n = len(queries)
    print(f"model {Path(args.model).name}  K={args.k}  N={args.size}  n={n}  asked={asked}")
    print(f"router top-1      {router_ok / n:.3f} {wilson(router_ok, n)}")
    print(f"with LLM choice   {judged_ok / n:.3f} {wilson(judged_ok, n)}")
    if times:
        times.sort()
        print(f"choice ms p50 {times[len(times) // 2]:.0f}  max {times[-1]:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
