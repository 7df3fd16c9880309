"""Routing with a gateway config's ``nexus.defaults``: the parameters they fill take no slot of a request.

    python bench/experiments/preset_defaults.py [--config examples/local.json] [--json OUT]

``eval routing`` reads no gateway config, so its everyday-local figure routes as if nothing were preset.
A sidecar in front of ``mcp-server-git`` sets ``repo_path`` (``examples/local.json``), and the gateway's
router then leaves that parameter out of the affordance signal (``RouteDoc.of_tool(…, preset=…)``). This
runs the eval's protocol over the local set (``bench/data/local-dev.jsonl``, the 50 tools of
``tests/fixtures/local_registry.json``, uncalibrated) both ways in one pass and prints the requests that
move (docs/routing.md, session 45).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nexus_gateway.cache import RegistryCache
from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import RoutingEvaluation, embed_queries, embed_tools, load_queries, load_registries
from nexus_gateway.routing import Calibration
from nexus_gateway.vectors import VectorStore

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default=str(ROOT / "examples" / "local.json"))
    parser.add_argument("--json")
    args = parser.parse_args()
    config = Path(args.config).resolve()
    shown = str(config.relative_to(ROOT)) if config.is_relative_to(ROOT) else str(config)
    defaults = json.loads(config.read_text()).get("nexus", {}).get("defaults", {})
    tools = load_registries([ROOT / "tests" / "fixtures" / "local_registry.json"])
    queries = load_queries(ROOT / "bench" / "data" / "local-dev.jsonl")
    embedder = Embedder()
    vectors = embed_tools(tools, embedder, VectorStore(RegistryCache(None), embedder.model_tag))
    query_vectors = embed_queries(embedder, queries)
    decisions: dict[str, list[dict]] = {}
    for label, preset in (("plain", False), ("defaults", True)):
        evaluation = RoutingEvaluation(
            tools, embedder, vectors, Calibration(), None, defaults=defaults if preset else None
        )
        decisions[label] = evaluation.run_size(queries, query_vectors, [], query_vectors[:0], None)["cases"]
    right = {label: sum(c["right"] for c in cases) for label, cases in decisions.items()}
    print(f"local set, n = {len(queries)}: plain {right['plain']}, with {shown}'s defaults {right['defaults']}")
    for before, after in zip(decisions["plain"], decisions["defaults"], strict=True):
        if before["right"] != after["right"]:
            state = "fixed" if after["right"] else "broken"
            print(f"  {state}: {after['query']!r}: {before['chosen']} -> {after['chosen']}")
    if args.json:
        document = {"n": len(queries), "config": shown, "defaults": defaults, "right": right}
        Path(args.json).write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
