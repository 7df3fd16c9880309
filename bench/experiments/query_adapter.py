"""Experiment: a linear adapter on the query embedding, learned from labelled requests of *another* domain.

bge-small embeds a request and a tool's document in one space, but requests ("close #12 in
octo/app") and tool documents ("issue write: Create or update an issue…") are written differently.
A matrix W (384 × 384, started at the identity, pulled back to it by an L2 penalty) is trained so that
W·q lands nearer its labelled tools than the others (softmax cross-entropy over every tool of the
registry, temperature τ), then the router's cosine is replaced by cos(W·q, d).

Trained on BFCL's labelled requests (956, a different domain: math, finance, travel functions) and
reported on the GitHub dev queries, whose labels it never sees; and on BFCL's odd half, trained on its
even half. The figures are the shipped router's fused score with only the cosine swapped, split by
whether the request's tool has a labelled request in the training half (docs/routing.md).

    python bench/experiments/query_adapter.py [--steps 300] [--penalty 0.1,1,10]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from shipped import S, shipped

from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import (
    embed_queries,
    load_queries,
)


def normalised(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)


def train(
    queries: np.ndarray, positives: list[list[int]], tools: np.ndarray, penalty: float, steps: int, tau: float
) -> np.ndarray:
    """Full-batch Adam on mean cross-entropy (every positive shares the target mass) + penalty·‖W − I‖²."""
    dim = queries.shape[1]
    weights = np.eye(dim, dtype=np.float64)
    target = np.zeros((len(queries), len(tools)))
    for row, pos in enumerate(positives):
        target[row, pos] = 1.0 / len(pos)
    m = np.zeros_like(weights)
    v = np.zeros_like(weights)
    lr, b1, b2 = 1e-3, 0.9, 0.999
    for step in range(1, steps + 1):
        mapped = queries @ weights.T
        norms = np.linalg.norm(mapped, axis=1, keepdims=True)
        unit = mapped / norms
        logits = unit @ tools.T / tau
        logits -= logits.max(axis=1, keepdims=True)
        prob = np.exp(logits)
        prob /= prob.sum(axis=1, keepdims=True)
        d_logits = (prob - target) / len(queries) / tau
        d_unit = d_logits @ tools
        # through the normalisation: d mapped = (d_unit − unit·(unit·d_unit)) / ‖mapped‖
        d_mapped = (d_unit - unit * (unit * d_unit).sum(axis=1, keepdims=True)) / norms
        grad = d_mapped.T @ queries + 2 * penalty * (weights - np.eye(dim))
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad**2
        weights -= lr * (m / (1 - b1**step)) / (np.sqrt(v / (1 - b2**step)) + 1e-8)
    return weights.astype(np.float32)


def dense_top1(queries: np.ndarray, positives: list[list[int]], tools: np.ndarray, weights: np.ndarray | None) -> float:
    mapped = queries if weights is None else queries @ weights.T
    best = np.argmax(normalised(mapped) @ tools.T, axis=1)
    return float(np.mean([b in p for b, p in zip(best, positives, strict=True)]))


def rows_for(registry_files: list[str], query_file: str, size: int | None) -> list[dict[str, Any]]:
    """The shipped router's fused score per request (as ``routing_signals.features``), any registry."""
    setup = shipped(registry_files)
    embedder, evaluation = setup.embedder, setup.evaluation
    queries = load_queries(S / "queries" / query_file)
    rows = []
    for query, vector in zip(queries, embed_queries(embedder, queries), strict=True):
        registry, accepted = evaluation.protocol.registry(query, size)
        router = evaluation.router(registry)
        ids = np.array([int(i) for i in router.slb.ids])
        base = router.fuse(query["query"], router.slb.scores(vector))[1]
        rows.append({"ids": ids, "base": base, "acc": accepted, "qv": vector, "router": router})
    return rows


def labelled(
    registry_files: list[str], query_file: str, embedder: Embedder
) -> tuple[np.ndarray, list[list[int]], np.ndarray]:
    """Query vectors, each query's acceptable tool rows, and every tool's unit vector."""
    setup = shipped(registry_files, embedder)
    queries = load_queries(S / "queries" / query_file)
    vectors = setup.vectors
    protocol = setup.evaluation.protocol
    positives = [protocol.acceptable(q) for q in queries]
    return embed_queries(embedder, queries).astype(np.float64), positives, normalised(vectors.astype(np.float64))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--penalty", default="0.003,0.03")
    parser.add_argument("--tau", default="0.05,0.1")
    args = parser.parse_args()
    settings = [(float(p), float(t)) for p in args.penalty.split(",") for t in args.tau.split(",")]
    embedder = Embedder()
    bfcl = labelled(["bfcl-functions.json"], "bfcl-dev.jsonl", embedder)
    github = labelled(["github-mcp.json", "mcp-pool.json"], "github-dev.jsonl", embedder)
    print(f"BFCL dense alone, odd half: plain {dense_top1(bfcl[0][1::2], bfcl[1][1::2], bfcl[2], None):.3f}")
    adapters: dict[str, dict[tuple[float, float], np.ndarray]] = {"BFCL even": {}, "GitHub even": {}, "BFCL all": {}}
    for penalty, tau in settings:
        for name, (queries, positives, tools), part in (
            ("BFCL even", bfcl, slice(0, None, 2)),
            ("GitHub even", github, slice(0, None, 2)),
            ("BFCL all", bfcl, slice(None)),
        ):
            adapters[name][penalty, tau] = train(queries[part], positives[part], tools, penalty, args.steps, tau)
        weights = adapters["BFCL even"][penalty, tau]
        print(f"  penalty {penalty}, τ {tau}: {dense_top1(bfcl[0][1::2], bfcl[1][1::2], bfcl[2], weights):.3f}")

    report("BFCL, all 2,555 functions", rows_for(["bfcl-functions.json"], "bfcl-dev.jsonl", None), bfcl[1], adapters,
           ["BFCL even"])  # fmt: skip
    for size in (117, 250, None):
        rows = rows_for(["github-mcp.json", "mcp-pool.json"], "github-dev.jsonl", size)
        report(f"GitHub N = {size or 'all'}", rows, github[1], adapters, ["GitHub even", "BFCL all"])


def report(
    title: str,
    rows: list[dict[str, Any]],
    positives: list[list[int]],
    adapters: dict[str, dict[tuple[float, float], np.ndarray]],
    which: list[str],
) -> None:
    """Top-1 on the odd half, split by whether the request's tool has a request in the even half."""
    seen = {tool for pos in positives[0::2] for tool in pos}
    known = np.array([bool(seen & set(pos)) for pos in positives[1::2]])

    def line(weights: np.ndarray | None) -> str:
        right = np.array([routed_right(row, weights) for row in rows[1::2]])
        return (
            f"odd {right.mean():.3f}; tool seen in the even half {right[known].mean():.3f} (n = {known.sum()}), "
            f"unseen {right[~known].mean():.3f} (n = {(~known).sum()})"
        )

    print(f"{title}: router {line(None)}")
    for name in which:
        for (penalty, tau), weights in adapters[name].items():
            print(f"  adapter trained on {name}, penalty {penalty}, τ {tau}: {line(weights)}")


def routed_right(row: dict[str, Any], weights: np.ndarray | None) -> bool:
    """The router's fused score with its cosine swapped for the adapted query's."""
    score = row["base"]
    if weights is not None:
        tools = row["router"].slb
        score = score - tools.scores(row["qv"]) + tools.scores(normalised(weights @ row["qv"]))
    return bool(row["ids"][int(np.argmax(score))] in row["acc"])


if __name__ == "__main__":
    main()
