"""Experiment: re-rank the router's top-K by how likely the local LLM finds the request given each tool
(UPR-style query likelihood: log P(request | tool name and description)), fused with the router's score.

    python bench/experiments/query_likelihood.py [--model GGUF] [--k 5] [--size 250] [--json OUT]

Scores every GitHub dev request (166) at N = 250 with the router as calibrated for GitHub with the pool
(its stored calibration, abstention off); the tool is shown by its typed signature and description. The
fusion weight is chosen on the even half and reported on the odd half. Results are in docs/routing.md
("What did not help"): the 1.5B model (``--model …1.5b… --k 3``) adds two or three decisions of 83 on
each half, the 0.5B model at most two.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import llama_cpp
import numpy as np
from shipped import S, shipped

from nexus_gateway.evaluation import embed_queries, load_queries
from nexus_gateway.ir import compressed_ir
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path


def log_likelihood(llm: llama_cpp.Llama, prefix: str, text: str) -> float:
    context = llm.tokenize(prefix.encode(), add_bos=False, special=False)
    target = llm.tokenize(text.encode(), add_bos=False, special=False)
    llm.reset()
    llm.eval(context + target)
    logits = np.array(llm.scores[: len(context) + len(target)], dtype=np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    logits -= np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return float(sum(logits[len(context) - 1 + i, token] for i, token in enumerate(target)))


def accuracy(rows: list[list[dict[str, float]]], weight: float) -> float:
    right = 0
    for candidates in rows:
        likelihood = np.array([c["lp"] / c["n"] for c in candidates])
        fused = np.array([c["fused"] for c in candidates]) + weight * (likelihood - likelihood.max())
        right += bool(candidates[int(fused.argmax())]["ok"])
    return right / len(rows)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--size", type=int, default=250)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    setup = shipped(["github-mcp.json", "mcp-pool.json"], floor=-9.0)
    tools, embedder, evaluation = setup.tools, setup.embedder, setup.evaluation
    queries = load_queries(S / "queries/github-dev.jsonl")
    llm = llama_cpp.Llama(args.model, n_ctx=1024, n_threads=2, logits_all=True, verbose=False)
    rows = []
    for query, vector in zip(queries, embed_queries(embedder, queries), strict=True):
        registry, accepted = evaluation.protocol.registry(query, args.size)
        result = evaluation.router(registry).route_vector(query["query"], vector, limit=args.k, allow_rerank=False)
        candidates = []
        for candidate in result.candidates[: args.k]:
            tool = tools[int(candidate.id)]
            description = " ".join(tool.description.split())[:300]
            typed = compressed_ir(tool.name, tool.schema).split(" — ")[0]
            prefix = f'Tool: {typed}\nWhat it does: {description}\nA user asked for exactly this tool: "'
            lp = log_likelihood(llm, prefix, query["query"] + '"')
            n = len(llm.tokenize((query["query"] + '"').encode(), add_bos=False))
            candidates.append({"fused": float(candidate.score), "lp": lp, "n": n, "ok": int(candidate.id) in accepted})
        rows.append(candidates)
        sys.stderr.write(f"\r{len(rows)}/{len(queries)}")
    even, odd = rows[0::2], rows[1::2]
    weights = [0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 100.0]
    best = max(weights, key=lambda w: accuracy(even, w))
    print(f"\nrouter alone (odd half): {accuracy(odd, 0.0):.3f}; likelihood alone: {accuracy(odd, 100.0):.3f}")
    print(f"fused, weight {best} chosen on the even half: {accuracy(odd, best):.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
