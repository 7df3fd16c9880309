"""Experiment (session 28): pseudo-relevance feedback and per-request cosine scaling on the shipped router.

    python bench/experiments/feedback.py [--sizes 250,all]

- rocchio: the query vector moved toward the mean vector of the router's own top k (by fused score),
  q' = q + beta * mean(top k), then the fused score recomputed with the new cosines;
- zscale: each request's cosines rescaled to a common spread (the mean over requests of the cosine's
  standard deviation across the registry), so a request whose cosines are all alike does not let the
  lexical and slot signals decide alone, and one whose cosines spread wide does not drown them.
Top-1 per half (even / odd) at each size, against the shipped router in the same run.
"""

from __future__ import annotations

import argparse
import itertools
from typing import Any

import numpy as np
from shipped import S, shipped

from nexus_gateway.evaluation import embed_queries, load_queries


def rows_for(setup: Any, size: int | None) -> list[dict[str, Any]]:
    queries = load_queries(S / "queries/github-dev.jsonl")
    rows = []
    for query, vector in zip(queries, embed_queries(setup.embedder, queries), strict=True):
        registry, accepted = setup.evaluation.protocol.registry(query, size)
        router = setup.evaluation.router(registry)
        ids = np.array([int(i) for i in router.slb.ids])
        assert list(ids) == list(registry)
        cosine = router.slb.scores(vector)
        base = router.fuse(query["query"], cosine)[1]
        rows.append(
            {
                "q": query,
                "ids": ids,
                "acc": accepted,
                "qv": vector,
                "router": router,
                "cos": cosine,
                "base": base,
                "tv": setup.vectors[registry],
            }
        )
    return rows


def right(row: dict[str, Any], score: np.ndarray) -> bool:
    return bool(row["ids"][int(np.argmax(score))] in row["acc"])


def report(name: str, rows: list[dict[str, Any]], scorer: Any) -> None:
    halves = []
    for part in (rows[0::2], rows[1::2]):
        fixed = broken = good = 0
        for row in part:
            new, old = right(row, scorer(row)), right(row, row["base"])
            good += new
            fixed += new and not old
            broken += old and not new
        halves.append(f"{good}/{len(part)} (+{fixed} -{broken})")
    print(f"  {name:32s} even {halves[0]:18s} odd {halves[1]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="250,all")
    args = parser.parse_args()
    setup = shipped(["github-mcp.json", "mcp-pool.json"])
    for size_text in args.sizes.split(","):
        size = None if size_text == "all" else int(size_text)
        rows = rows_for(setup, size)
        print(f"N = {size_text}")
        report("shipped", rows, lambda r: r["base"])
        for k, beta in itertools.product((1, 3, 5, 10), (0.1, 0.25, 0.5, 1.0)):

            def rocchio(row: dict[str, Any], k: int = k, beta: float = beta) -> np.ndarray:
                top = np.argsort(-row["base"])[:k]
                moved = row["qv"] + beta * row["tv"][top].mean(axis=0)
                moved = moved / np.linalg.norm(moved)
                cosine = row["router"].slb.scores(moved.astype(np.float32))
                return row["router"].fuse(row["q"]["query"], cosine)[1]

            report(f"rocchio k {k} beta {beta}", rows, rocchio)
        spread = float(np.mean([r["cos"].std() for r in rows]))
        for power in (0.5, 1.0):

            def zscale(row: dict[str, Any], power: float = power, spread: float = spread) -> np.ndarray:
                factor = (spread / max(float(row["cos"].std()), 1e-6)) ** power
                return row["base"] + (factor - 1.0) * (row["cos"] - row["cos"].mean())

            report(f"zscale power {power}", rows, zscale)


if __name__ == "__main__":
    main()
