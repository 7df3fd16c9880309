"""Experiment: the local LLM as judge among the router's top candidates (``nexus.judge``), per policy.

For every request: the router's top 5 and margin, and the model's pick among the top 3 and among the
top 5 (``ArgumentGenerator.choose_tool``, constrained to the candidates' names). Reported: the router
alone; the judge on every decision; the judge only where the margin is below τ (the gateway's policy,
``routed_call.py``). Two request sets: the everyday local servers (``bench/data/local-dev.jsonl`` over
the 50 tools of ``tests/fixtures/local_registry.json``, uncalibrated as a new gateway routes) and the
odd half of the GitHub dev requests at N = 250 with the stored calibration.

    python bench/experiments/judge_policies.py --model qwen2.5-coder-1.5b [--set local|github] --json OUT
        [--mood-filter none|gateway|keep-first]

``--mood-filter``: which candidates the judge is shown. ``none`` (the default, as sessions 30–55 ran
it): all of them; ``gateway``: those whose mood does not contradict the request's
(``mood.not_opposed``, as ``routed_call`` did in sessions 48–55); ``keep-first``: the same, but the
router's own first choice always among them (``mood.judge_candidates``, the gateway since session 56).
With one candidate left, the router's choice stands.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from shipped import S, shipped

from nexus_gateway.arguments import ArgumentGenerator
from nexus_gateway.cache import RegistryCache
from nexus_gateway.embedder import Embedder
from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.evaluation import RoutingEvaluation, embed_tools, load_queries, load_registries, wilson
from nexus_gateway.ir import choice_ir
from nexus_gateway.model_store import lookup, model_path
from nexus_gateway.mood import not_opposed
from nexus_gateway.routing import Calibration
from nexus_gateway.vectors import VectorStore

ROOT = Path(__file__).resolve().parents[2]


def gateway_id(tool: Any) -> str:
    """The id the gateway shows the judge: ``server__name`` (``routed_call.py`` passes ``ToolEntry.id``)."""
    return f"{tool.server}__{tool.name}"


def local_setup() -> tuple[list[Any], Calibration, list[dict[str, Any]]]:
    tools = load_registries([str(ROOT / "tests/fixtures/local_registry.json")])
    embedder = Embedder()
    vectors = embed_tools(tools, embedder, VectorStore(RegistryCache(), embedder.model_tag))
    calibration = Calibration(floor=-9.0)  # never abstain: every request has a right tool here
    router = RoutingEvaluation(tools, embedder, vectors, calibration, None).router(list(range(len(tools))))
    queries = load_queries(ROOT / "bench/data/local-dev.jsonl")
    return tools, Calibration(), [{"query": q, "router": router, "accepted": None} for q in queries]


def github_setup() -> tuple[list[Any], Calibration, list[dict[str, Any]]]:
    setup = shipped(["github-mcp.json", "mcp-pool.json"], floor=-9.0)
    rows = []
    for query in load_queries(S / "queries/github-dev.jsonl")[1::2]:
        registry, accepted = setup.evaluation.protocol.registry(query, 250)
        rows.append({"query": query, "router": setup.evaluation.router(registry), "accepted": accepted})
    return setup.tools, setup.calibration, rows


def warm_generator(model: str, threads: int) -> ArgumentGenerator:
    """The chooser on a warm engine of the named model."""
    generator = ArgumentGenerator(LlamaEngine(EngineSettings(str(model_path(lookup(model))), n_threads=threads)))
    generator.warm()
    return generator


def shown_candidates(request: str, best: list[Any], policy: str) -> list[Any]:
    """The candidates the judge is shown under ``policy`` (the module docstring)."""
    if policy == "none":
        return best
    kept = not_opposed(request, best)
    if policy == "keep-first" and best[0] not in kept:
        kept = [best[0], *kept]
    return kept


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--set", choices=["local", "github"], default="local")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", required=True)
    parser.add_argument("--mood-filter", choices=["none", "gateway", "keep-first"], default="none")
    args = parser.parse_args()
    tools, calibration, rows = local_setup() if args.set == "local" else github_setup()
    generator = warm_generator(args.model, args.threads)
    records = []
    for row in rows:
        query = row["query"]
        result = row["router"].route(query["query"], limit=5, allow_rerank=False)
        ids = [int(c.id) for c in result.candidates[:5]]

        def right(i: int, query: dict[str, Any] = query, accepted: Any = row["accepted"]) -> bool:
            return i in accepted if accepted is not None else tools[i].name in query["acceptable_tools"]

        picks, seconds = {}, []
        for k in (3, 5):
            shown = shown_candidates(query["query"], [tools[i] for i in ids[:k]], args.mood_filter)
            if len(shown) < 2:  # nothing to choose: the router's choice stands
                picks[k], _ = ids[0], seconds.append(0.0)
                continue
            candidates = [(gateway_id(t), choice_ir(t.name, t.schema, t.description)) for t in shown]
            started = time.perf_counter()
            picks[k] = ids[
                [tools[i] for i in ids].index(shown[generator.choose_tool(query["query"], candidates).index])
            ]
            seconds.append(time.perf_counter() - started)
        records.append(
            {
                "id": query["id"],
                "margin": result.margin,
                "router": right(ids[0]),
                "judge3": right(picks[3]),
                "judge5": right(picks[5]),
                "seconds": seconds,
            }
        )
        print(json.dumps(records[-1]), flush=True)
    n, tau = len(records), calibration.tau
    print(f"{args.set}, {args.model}, n = {n}, τ = {tau:.3g} ({sum(r['margin'] < tau for r in records)} below)")
    summary = {}
    for label, ok in (
        ("router", lambda r: r["router"]),
        ("judge top-3, every decision", lambda r: r["judge3"]),
        ("judge top-5, every decision", lambda r: r["judge5"]),
        ("judge top-3 below τ (the gateway)", lambda r: r["judge3"] if r["margin"] < tau else r["router"]),
        ("judge top-5 below τ", lambda r: r["judge5"] if r["margin"] < tau else r["router"]),
    ):
        hits = sum(bool(ok(r)) for r in records)
        fixed = sum(bool(ok(r)) and not r["router"] for r in records)
        broken = sum(r["router"] and not ok(r) for r in records)
        low, high = wilson(hits, n)
        summary[label] = {"top1": hits / n, "ci": [low, high], "fixed": fixed, "broken": broken}
        print(
            f"  {label:<36} {100 * hits / n:5.1f}% [{100 * low:.1f}, {100 * high:.1f}]  fixed {fixed}, broken {broken}"
        )
    Path(args.json).write_text(
        json.dumps({"set": args.set, "model": args.model, "tau": tau, "summary": summary, "records": records}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
