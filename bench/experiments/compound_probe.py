"""Requests that ask for several changes, routed with and without ``compound.lift_complete_tools``.

    python bench/experiments/compound_probe.py

The dev sets hold five GitHub requests that set fields in two clauses; these were written to probe where
a rule for them goes wrong: operations joined ("merge … and delete the branch"), a field and an operation
("update the body … and close it"), and fields the consolidated tool alone sets. Each is routed over the
GitHub tools and the pool (all 1,317; `bench/results/calibration-github.json`'s weights, no
cross-encoder), and the script prints the router's best three both ways (docs/routing.md, session 46).
They were not labelled and no figure is made of them: what the rule should do with most of them is a
judgement, which the printout leaves to the reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

from nexus_gateway import routing
from nexus_gateway.cache import RegistryCache
from nexus_gateway.compound import requested_fields
from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import RoutingEvaluation, embed_tools, load_registries
from nexus_gateway.routing import Calibration
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


def main() -> None:
    tools = load_registries([S / "registries" / "github-mcp.json", S / "registries" / "mcp-pool.json"])
    embedder = Embedder()
    vectors = embed_tools(tools, embedder, VectorStore(RegistryCache(None), embedder.model_tag))
    calibration = Calibration(**json.loads((ROOT / "bench" / "results" / "calibration-github.json").read_text()))
    router = RoutingEvaluation(tools, embedder, vectors, calibration, None).router(list(range(len(tools))))

    def best(request: str) -> str:
        result = router.route(request, allow_rerank=False)
        return ", ".join(f"{tools[int(c.id)].name} {c.score:.3f}" for c in result.candidates[:3])

    for request in PROBES:
        with mock.patch.object(routing, "lift_complete_tools", lambda _request, fused, *_: fused):
            before = best(request)
        print(request)
        print(f"  fields per clause: {[sorted(f) for f in requested_fields(request)] or 'none (left as it is)'}")
        print(f"  without the lift:  {before}")
        print(f"  with it:           {best(request)}")


if __name__ == "__main__":
    main()
