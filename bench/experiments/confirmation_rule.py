"""Experiment: what ``nexus.confirm: auto`` holds back on the odd half of the GitHub dev queries
(``confirmation.py``; results in docs/routing.md, "Routed calls that wait for the host").

    python bench/experiments/confirmation_rule.py [--uncalibrated]

For each routed request whose chosen tool may write: was it the right tool, and would the rule hold it
back (the tool declares ``destructiveHint``, or the margin is below τ)? For a wrong one held back, is the
right tool among the three candidates the answer shows? Also which irrelevant requests clear the
abstention floor, and whether they are held back. Registries: the 117 GitHub tools alone (with the
irrelevant set), and GitHub with the pool at N = 250; each with its stored calibration (run
``bench/run_routing_eval.sh`` first) or, with ``--uncalibrated``, the defaults.
"""

from __future__ import annotations

import argparse
from collections import Counter

from shipped import S, shipped

from nexus_gateway.cache import RegistryCache
from nexus_gateway.confirmation import confirmation_reason
from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import embed_queries, load_queries
from nexus_gateway.mood import WRITE, tool_mood

SHOWN = 3  # candidates a needs_confirmation answer lists (routing.JUDGE_CANDIDATES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--uncalibrated", action="store_true", help="the default weights and tau")
    args = parser.parse_args()
    embedder, cache = Embedder(), RegistryCache()
    queries = load_queries(S / "queries/github-dev.jsonl")[1::2]
    irrelevant = load_queries(S / "queries/irrelevant-dev.jsonl", answerable=False)
    setups = (
        ("117 GitHub tools", ["github-mcp.json"], None),
        ("GitHub + pool", ["github-mcp.json", "mcp-pool.json"], 250),
    )
    for label, files, size in setups:
        setup = shipped(files, embedder, cache, calibrated=not args.uncalibrated)
        tools, evaluation, calibration = setup.tools, setup.evaluation, setup.calibration
        counts: Counter[str] = Counter()
        for query, vector in zip(queries, embed_queries(embedder, queries), strict=True):
            registry, accepted = evaluation.protocol.registry(query, size)
            result = evaluation.router(registry).route_vector(query["query"], vector)
            if result.abstained or result.chosen is None:
                continue
            tool = tools[int(result.chosen)]
            annotations = tool.raw.get("annotations")
            if tool_mood(tool.name, annotations) != WRITE:
                continue
            kind = "right" if int(result.chosen) in accepted else "wrong"
            counts[f"{kind} writes"] += 1
            if confirmation_reason("auto", tool.name, annotations, result.margin, calibration.tau):
                counts[f"{kind} writes held back"] += 1
                shown = [int(c.id) for c in result.candidates[:SHOWN]]
                counts[f"{kind} held back, an acceptable tool shown"] += any(i in accepted for i in shown)
        print(f"{label} (tau {calibration.tau:.4f}): {dict(sorted(counts.items()))}")
        if size is not None:
            continue  # abstention is measured against the GitHub tools alone
        for query, vector in zip(irrelevant, embed_queries(embedder, irrelevant), strict=True):
            registry, _ = evaluation.protocol.registry({"query": query["query"], "acceptable_tools": []}, size)
            result = evaluation.router(registry).route_vector(query["query"], vector)
            if result.abstained or result.chosen is None:
                continue
            tool = tools[int(result.chosen)]
            reason = confirmation_reason("auto", tool.name, tool.raw.get("annotations"), result.margin, calibration.tau)
            print(f"  irrelevant, passes the floor: {tool.name} → {reason or 'runs'}: {query['query'][:70]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
