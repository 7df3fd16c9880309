"""Experiment: the local LLM picks the *server* first, the router the tool within it.

Session 37. Among everyday local servers many misses cross servers ("remember that Alice works at
Acme" → git's ``git_diff_unstaged`` by "works" ~ "working"; no memory tool in the top 6), so the tool
judge among the router's top 3 never sees the right tool. Here the model (``choose_tool``, constrained to
the names) picks among servers, each shown with the names of its tools; the final choice is the router's
best-ranked tool of that server. Local: all servers, all their tools listed. GitHub odd half at N =
250 / all: the servers of the router's top 10, each with its tools among those 10.

    python bench/experiments/server_judge.py --set local|github [--size 250|all] --model M --json OUT
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from judge_policies import local_setup, warm_generator
from shipped import S, shipped

from nexus_gateway.evaluation import load_queries, wilson


def github_rows(size: str) -> tuple[list[Any], list[dict[str, Any]]]:
    setup = shipped(["github-mcp.json", "mcp-pool.json"], floor=-9.0)
    rows = []
    for query in load_queries(S / "queries/github-dev.jsonl")[1::2]:
        registry, accepted = setup.evaluation.protocol.registry(query, None if size == "all" else int(size))
        rows.append({"query": query, "router": setup.evaluation.router(registry), "accepted": accepted})
    return setup.tools, rows


def words(name: str) -> str:
    return name.replace("_", " ").replace("-", " ")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--set", choices=["local", "github"], default="local")
    parser.add_argument("--size", default="all")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    if args.set == "local":
        tools, _, rows = local_setup()
    else:
        tools, rows = github_rows(args.size)
    generator = warm_generator(args.model, args.threads)
    records = []
    for row in rows:
        query = row["query"]
        result = row["router"].route(
            query["query"], limit=len(tools) if args.set == "local" else 10, allow_rerank=False
        )
        ranked = [int(c.id) for c in result.candidates]

        def right(i: int, query: dict[str, Any] = query, accepted: Any = row["accepted"]) -> bool:
            return i in accepted if accepted is not None else tools[i].name in query["acceptable_tools"]

        shown = ranked if args.set == "local" else ranked[:10]
        servers: dict[str, list[int]] = {}
        for i in shown:
            servers.setdefault(tools[i].server, []).append(i)
        if args.set == "local":  # every tool of the server, in registry order
            servers = {s: [t.uid for t in tools if t.server == s] for s in servers}
        candidates = [(s, ", ".join(words(tools[i].name) for i in ids)) for s, ids in servers.items()]
        started = time.perf_counter()
        server = candidates[generator.choose_tool(query["query"], candidates).index][0]
        seconds = time.perf_counter() - started
        pick = next(i for i in ranked if tools[i].server == server)
        records.append(
            {
                "id": query["id"],
                "margin": result.margin,
                "router": right(ranked[0]),
                "server": server,
                "judged": right(pick),
                "servers": len(candidates),
                "seconds": seconds,
            }
        )
        print(json.dumps(records[-1]), flush=True)
    n = len(records)
    summary = {}
    for label, key in (("router", "router"), ("server judge, then the router", "judged")):
        hits = sum(r[key] for r in records)
        fixed = sum(r[key] and not r["router"] for r in records)
        broken = sum(r["router"] and not r[key] for r in records)
        low, high = wilson(hits, n)
        summary[label] = {"top1": hits / n, "ci": [low, high], "fixed": fixed, "broken": broken}
        print(
            f"  {label:<32} {100 * hits / n:5.1f}% [{100 * low:.1f}, {100 * high:.1f}]  fixed {fixed}, broken {broken}"
        )
    Path(args.json).write_text(
        json.dumps(
            {"set": args.set, "size": args.size, "model": args.model, "summary": summary, "records": records}, indent=1
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
