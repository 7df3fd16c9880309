"""Experiment (not part of the product yet): let a local LLM choose among the router's top-K under a
grammar that only admits the candidates' names, on the odd half of the GitHub dev queries.

Needs llama-cpp-python and a GGUF (issue 4 adds both to the package):
    python bench/experiments/llm_choice.py MODEL.gguf [K] [N]
Results so far are in docs/routing.md ("What did not help").
"""

import json
import sys
import time
from pathlib import Path

from llama_cpp import Llama, LlamaGrammar

from nexus_gateway.cache import RegistryCache
from nexus_gateway.calibration import load_calibration
from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import (
    RoutingEvaluation,
    embed_queries,
    embed_tools,
    load_queries,
    load_registries,
)
from nexus_gateway.signature import signature
from nexus_gateway.vectors import VectorStore

S = str(Path(__file__).resolve().parents[3] / "shared" / "data") + "/"
MODEL = sys.argv[1]
K = int(sys.argv[2]) if len(sys.argv) > 2 else 5
N = int(sys.argv[3]) if len(sys.argv) > 3 else 250
regs = [S + "registries/github-mcp.json", S + "registries/mcp-pool.json"]
tools = load_registries(regs)
qs = load_queries(S + "queries/github-dev.jsonl")[1::2]
E = Embedder()
cache = RegistryCache()
V = embed_tools(tools, E, VectorStore(cache, E.model_tag))
cal = load_calibration(cache, regs, E.model_tag)
ev = RoutingEvaluation(tools, E, V, cal, None)
QV = embed_queries(E, qs)
llm = Llama(MODEL, n_ctx=4096, n_threads=2, verbose=False)
ok_r = ok_l = ok_any = ok_g = 0
t_total = 0
gated = 0
for q, v in zip(qs, QV, strict=True):
    reg, acc = ev.protocol.registry(q, N)
    res = ev.router(reg).route_vector(q["query"], v, limit=K, allow_rerank=False)
    cands = [int(c.id) for c in res.candidates[:K]]
    ok_r += cands[0] in acc
    ok_any += any(c in acc for c in cands)
    names = [f"{tools[c].server.split('/')[-1]}.{tools[c].name}" for c in cands]
    lines = "\n".join(
        f"- {n}: {signature(tools[c].name, tools[c].schema, tools[c].description)[:220]}"
        for n, c in zip(names, cands, strict=True)
    )
    sysmsg = "You pick the single tool that best serves the user's request. Answer with the tool name only."
    user = f"Tools:\n{lines}\n\nRequest: {q['query']}\nTool:"
    prompt = f"<|im_start|>system\n{sysmsg}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    gram = "root ::= " + " | ".join(json.dumps(n) for n in names)
    g = LlamaGrammar.from_string(gram, verbose=False)
    t = time.perf_counter()
    out = llm(prompt, grammar=g, max_tokens=32, temperature=0.0)["choices"][0]["text"].strip()
    t_total += time.perf_counter() - t
    pick = cands[names.index(out)] if out in names else cands[0]
    ok_l += pick in acc
    if res.margin < cal.tau:
        gated += 1
        ok_g += pick in acc
    else:
        ok_g += cands[0] in acc
n = len(qs)
summary = f"N={N} K={K} n={n}: router top1 {ok_r / n:.3f}, LLM choice {ok_l / n:.3f}, "
summary += f"gated LLM {ok_g / n:.3f} ({gated} gated), oracle@K {ok_any / n:.3f}, {t_total / n * 1000:.0f} ms/decision"
print(summary)
