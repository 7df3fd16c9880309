"""Experiment: a session's follow-up turns stay with the server its earlier turns used.

Short follow-ups ("close it as a duplicate of the top match", "label it bug", "open that file") carry
little of their own: among many servers they go to whichever tool shares a word. The gateway knows the
servers of a session's earlier routed turns (its window); each tool of a server that served the window
gains ``w`` × that server's share of the window's turns.

Benefit: the GitHub dialogues routed among all 1,317 tools (GitHub + pool), each turn after the first
with a window of the earlier turns as routed (or as labelled, an upper bound). Cost: every GitHub dev
request routed after one turn on another server: the server of the request's best non-GitHub candidate
(the likeliest rival), or a pool server drawn at random.

    python bench/experiments/session_server.py [--weights 0.05,0.1,0.2,0.3] [--window 3]
"""

from __future__ import annotations

import argparse
import random
from typing import Any

import numpy as np
import orjson
from shipped import S, shipped

from nexus_gateway.affordance import query_slots
from nexus_gateway.evaluation import load_queries
from nexus_gateway.window import refers_back


def prior(servers: np.ndarray, window: list[str], weight: float, text: str, gated: bool) -> np.ndarray | float:
    """``weight`` × the share of the window's turns each tool's server served; ``gated``: only for a
    request that points back at earlier turns ("close it", "same for …", ``window.refers_back``)."""
    if not window or (gated and not (refers_back(text) and not query_slots(text))):
        return 0.0
    bonus = np.zeros(len(servers), dtype=np.float32)
    for server in set(window):
        bonus[servers == server] = weight * window.count(server) / len(window)
    return bonus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", default="0.05,0.1,0.15,0.2,0.3")
    parser.add_argument("--window", type=int, default=3)
    args = parser.parse_args()
    weights = [0.0] + [float(w) for w in args.weights.split(",")]
    setup = shipped(["github-mcp.json", "mcp-pool.json"])
    tools, embedder = setup.tools, setup.embedder
    router = setup.whole_router()
    rows = np.array([int(i) for i in router.slb.ids])
    servers = np.array([tools[i].server for i in rows])
    github = np.array([tools[i].file == 0 for i in rows])

    def fused(text: str) -> np.ndarray:
        return router.fuse(text, router.slb.scores(embedder.embed_query(text)))[1]

    def right(score: np.ndarray, acceptable: list[str]) -> bool:
        best = int(np.argmax(score))
        return bool(github[best] and tools[rows[best]].name in acceptable)

    dialogues = [orjson.loads(line) for line in (S / "queries/github-dialogues-dev.jsonl").read_bytes().splitlines()]
    turns = [[(turn, fused(turn["query"])) for turn in d["turns"]] for d in dialogues]
    print("GitHub dialogues among all 1,317 tools, turns after the first right (window as routed / as labelled):")
    for weight, gated in [(w, g) for g in (False, True) for w in weights]:
        counts = {"routed": 0, "labelled": 0}
        total = 0
        for dialogue in turns:
            for kind in counts:
                window: list[str] = []
                for index, (turn, score) in enumerate(dialogue):
                    adjusted = score + prior(servers, window[-args.window :], weight, turn["query"], gated)
                    if index:
                        counts[kind] += right(adjusted, turn["acceptable_tools"])
                    chosen = servers[int(np.argmax(adjusted))]
                    window.append("github" if kind == "labelled" else str(chosen))
            total += len(dialogue) - 1
        label = "only when the request points back" if gated else "every turn"
        print(
            f"  w = {weight}, {label}: {counts['routed']} / {total} as routed, {counts['labelled']} / {total} labelled"
        )

    queries = load_queries(S / "queries/github-dev.jsonl")
    pool_servers = sorted({t.server for t in tools if t.file == 1})
    rng = random.Random(0)
    scored: list[tuple[dict[str, Any], np.ndarray, str, str]] = []
    for query in queries:
        score = fused(query["query"])
        rival = str(servers[int(np.argmax(np.where(github, -np.inf, score)))])
        scored.append((query, score, rival, rng.choice(pool_servers)))
    print("All 166 GitHub dev requests among all 1,317 tools after one turn on another server:")
    alone = sum(right(s, q["acceptable_tools"]) for q, s, _, _ in scored)
    print(f"  no window: {alone}; {sum(refers_back(q['query']) for q in queries)} requests point back")
    for weight, gated in [(w, g) for g in (False, True) for w in weights[1:]]:
        rival = sum(
            right(s + prior(servers, [r], weight, q["query"], gated), q["acceptable_tools"]) for q, s, r, _ in scored
        )
        drawn = sum(
            right(s + prior(servers, [p], weight, q["query"], gated), q["acceptable_tools"]) for q, s, _, p in scored
        )
        label = "only when the request points back" if gated else "every turn"
        print(f"  w = {weight}, {label}: after the rival's server {rival}, after a random one {drawn}")


if __name__ == "__main__":
    main()
