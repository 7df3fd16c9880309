"""Requests that ask for several changes, routed with and without ``compound.lift_complete_tools``, and
the changes a call to the chosen tool would leave undone (``routed_call.changes_left_over``).

    python bench/experiments/compound_probe.py

The dev sets hold five GitHub requests that set fields in two clauses; these were written to probe where
a rule for them goes wrong: operations joined ("merge … and delete the branch"), a field and an operation
("update the body … and close it"), and fields the consolidated tool alone sets. Each is routed over the
GitHub tools and the pool (all 1,317; `bench/results/calibration-github.json`'s weights, no
cross-encoder), and the script prints the router's best three both ways and the clauses a call would
report as undone (docs/routing.md, session 46). They were not labelled and no figure is made of them: what
the rule should do with most of them is a judgement, which the printout leaves to the reader. Then every
dev request (GitHub over its tools and the pool, BFCL over its functions) with two change clauses: the
tool it is routed to, whether the labels accept it, and the clauses the call would report as undone; a
request routed right should report none.
"""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import anyio

from nexus_gateway import routing
from nexus_gateway.cache import RegistryCache
from nexus_gateway.compound import change_clauses, requested_fields
from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import RoutingEvaluation, embed_tools, load_registries
from nexus_gateway.routed_call import changes_left_over
from nexus_gateway.routing import Calibration, Router, RouteResult
from nexus_gateway.vectors import VectorStore

ROOT = Path(__file__).resolve().parents[2]
S = ROOT.parent / "shared" / "data"
PROBES = [
    "Create a pull request in acme/app from feature/login into main and request a review from bob",
    "Close issue 12 in acme/app and leave a comment saying 'fixed in #14'",
    "Open an issue in acme/app titled 'Crash on start' and assign it to bob",
    "Merge PR 5 in acme/app and delete the branch",
    "star octo-org/app and fork it into my account",
    "rename the label bug in acme/app to defect and change its color to red",
    "close PR 77 in acme/app and lock the conversation",
    "update the body of issue 9 in acme/app to 'see #10' and close it as not planned",
    "create a branch release/2.0 in acme/app and push README.md to it",
    "add the label urgent to issue 4 in acme/app and assign it to carol",
    "approve PR 31 in acme/app and merge it with squash",
]


def routed(registries: list[str], calibration: str) -> tuple[list, Router]:
    """The router over every tool of the registry files, with the weights of a stored calibration."""
    tools = load_registries([S / "registries" / name for name in registries])
    embedder = Embedder()
    vectors = embed_tools(tools, embedder, VectorStore(RegistryCache(None), embedder.model_tag))
    weights = Calibration(**json.loads((ROOT / "bench" / "results" / calibration).read_text()))
    return tools, RoutingEvaluation(tools, embedder, vectors, weights, None).router(list(range(len(tools))))


def undone(router: Router, tools: list, request: str, tool_id: str) -> list[str]:
    async def route(clause: str, slots: frozenset[str]) -> RouteResult:
        return router.route(clause, carried=slots, allow_rerank=False)

    tool = tools[int(tool_id)]
    return anyio.run(changes_left_over, route, request, tool_id, tool.name, tool.schema)


def main() -> None:
    tools, router = routed(["github-mcp.json", "mcp-pool.json"], "calibration-github.json")

    def best(request: str) -> str:
        result = router.route(request, allow_rerank=False)
        return ", ".join(f"{tools[int(c.id)].name} {c.score:.3f}" for c in result.candidates[:3])

    for request in PROBES:
        with mock.patch.object(routing, "lift_complete_tools", lambda _request, fused, *_: fused):
            before = best(request)
        chosen = router.route(request, allow_rerank=False).chosen
        print(request)
        print(f"  fields per clause: {[sorted(f) for f in requested_fields(request)] or 'none (left as it is)'}")
        print(f"  without the lift:  {before}")
        print(f"  with it:           {best(request)}")
        print(f"  left undone:       {undone(router, tools, request, chosen) if chosen else 'abstains'}")
    print()
    for registries, calibration, queries in (
        (["github-mcp.json", "mcp-pool.json"], "calibration-github.json", "github-dev.jsonl"),
        (["bfcl-functions.json"], "calibration-bfcl.json", "bfcl-dev.jsonl"),
    ):
        tools, router = routed(registries, calibration)
        for line in (S / "queries" / queries).read_text().splitlines():
            query = json.loads(line)
            if not change_clauses(query["query"]):
                continue
            chosen = router.route(query["query"], allow_rerank=False).chosen
            name = tools[int(chosen)].name if chosen else None
            right = "right" if name in query["acceptable_tools"] else "wrong"
            left = undone(router, tools, query["query"], chosen) if chosen else []
            print(f"{query['id']} -> {name} ({right}), left undone: {left}")


if __name__ == "__main__":
    main()
