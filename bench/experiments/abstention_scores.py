"""Experiment: which score best tells an irrelevant request from an answerable one (docs/routing.md,
"Other abstention scores").

    python bench/experiments/abstention_scores.py

All 166 GitHub dev requests (answerable) and the 20 of ``irrelevant-dev.jsonl``, routed among the 117
GitHub tools with the stored calibration (run ``bench/run_routing_eval.sh`` first). For each score: the
AUC of answerable over irrelevant, and the share of irrelevant requests below the floor at which 3% of
answerable ones abstain (the calibration's operating point). Then the irrelevant requests the fused
floor lets through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from shipped import S, shipped

from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import embed_queries, load_queries

Features = dict[str, float]


def github_router() -> tuple[list[Any], Embedder, Any]:
    """The 117 GitHub tools, the embedder and the router with their stored calibration (the abstention
    set-up of this script and of ``abstention_judge.py``)."""
    github = shipped(["github-mcp.json"])
    return github.tools, github.embedder, github.whole_router()


def main() -> None:
    _, embedder, router = github_router()

    def features(text: str, vector: np.ndarray) -> Features:
        result = router.route_vector(text, vector, limit=3, allow_rerank=False)
        terms = router.bm25.query_terms(text)
        return {
            "fused": result.candidates[0].score,
            "cosine": float(router.slb.scores(vector).max()),
            "bm25": float(router.bm25.term_scores(terms).max()),
            "name": float(router.names.scores(terms).max()),
        }

    answerable = load_queries(S / "queries/github-dev.jsonl")
    irrelevant = load_queries(S / "queries/irrelevant-dev.jsonl", answerable=False)
    kept = [features(q["query"], v) for q, v in zip(answerable, embed_queries(embedder, answerable), strict=True)]
    other = [features(q["query"], v) for q, v in zip(irrelevant, embed_queries(embedder, irrelevant), strict=True)]

    def report(label: str, score: Callable[[Features], float]) -> None:
        a, i = np.array([score(d) for d in kept]), np.array([score(d) for d in other])
        auc = (a[:, None] > i[None, :]).mean() + 0.5 * (a[:, None] == i[None, :]).mean()
        caught = (i < np.quantile(a, 0.03)).mean()
        print(f"{label:32s} AUC {auc:.3f}, irrelevant caught at 3% answerable abstaining {caught:.0%}")

    for key in ("fused", "cosine", "bm25", "name"):
        report(key, lambda d, k=key: d[k])
    for weight in (0.01, 0.02, 0.03, 0.05):
        report(f"cosine + {weight} x raw bm25", lambda d, w=weight: d["cosine"] + w * d["bm25"])
    for weight in (0.1, 0.2, 0.3):
        report(f"fused + {weight} x name coverage", lambda d, w=weight: d["fused"] + w * d["name"])
    print(f"n = {len(kept)} answerable, {len(other)} irrelevant; let through by the fused floor:")
    floor = np.quantile([d["fused"] for d in kept], 0.03)
    for query, d in zip(irrelevant, other, strict=True):
        if d["fused"] >= floor:
            print(f"  {d['fused']:.3f} {query['query'][:90]}")


if __name__ == "__main__":
    main()
