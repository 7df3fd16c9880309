"""Experiment: would an inverted-file (IVF) coarse partition bring the SLB scan of 100k tools under 1 ms
without losing answers? (docs/routing.md, "What did not help").

The exact INT8 scan of 100k rows reads 38 MB per query and is memory-bound here (~5 ms). IVF scans only
the rows of the ``nprobe`` k-means cells nearest the query. Its recall is measured on a 100k corpus built
from the 3,872 real tool vectors of the three registries (the real rows plus near-duplicates: a real
vector with a little noise, or a mix of two real tools), against the real dev queries (all 166 GitHub
requests and every fourth BFCL request), top-10 of IVF against top-10 of the exact scan.

    python bench/experiments/ivf_recall.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from nexus_gateway.cache import RegistryCache
from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import embed_queries, embed_tools, load_queries, load_registries
from nexus_gateway.slb import quantize
from nexus_gateway.vectors import VectorStore

S = Path(__file__).resolve().parents[3] / "shared" / "data"
N = 100_000


def corpus(real: np.ndarray, kind: str, rng: np.random.Generator) -> np.ndarray:
    first, second = rng.integers(0, len(real), N), rng.integers(0, len(real), N)
    if kind == "noise":
        rows = real[first] + rng.uniform(0.01, 0.04, N)[:, None] * rng.standard_normal((N, real.shape[1]))
    else:
        share = rng.uniform(0.5, 1.0, N)[:, None]
        rows = share * real[first] + (1 - share) * real[second] + 0.01 * rng.standard_normal((N, real.shape[1]))
    rows[: len(real)] = real
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def kmeans(rows: np.ndarray, cells: int, rng: np.random.Generator, iterations: int = 10) -> np.ndarray:
    sample = rows[rng.choice(len(rows), 20_000, replace=False)]
    centroids = sample[rng.choice(len(sample), cells, replace=False)].copy()
    for _ in range(iterations):
        assigned = np.argmax(sample @ centroids.T, axis=1)
        for cell in range(cells):
            members = sample[assigned == cell]
            if len(members):
                centroids[cell] = members.mean(axis=0)
        centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    return centroids


def real_vectors() -> tuple[np.ndarray, np.ndarray]:
    """The 3,872 real tool vectors of the three registries and the 405 real dev queries' vectors."""
    embedder = Embedder()
    tools = load_registries(
        [str(S / "registries" / f) for f in ("github-mcp.json", "mcp-pool.json", "bfcl-functions.json")]
    )
    real = embed_tools(tools, embedder, VectorStore(RegistryCache(), embedder.model_tag)).astype(np.float32)
    queries = load_queries(S / "queries/github-dev.jsonl") + load_queries(S / "queries/bfcl-dev.jsonl")[::4]
    return real, embed_queries(embedder, queries).astype(np.float32)


def main() -> int:
    rng = np.random.default_rng(0)
    real, query_vectors = real_vectors()
    print(f"{len(real)} real tool vectors, {len(query_vectors)} queries, N = {N:,}")
    for kind in ("noise", "mix"):
        rows = corpus(real, kind, rng)
        codes, scales = quantize(rows)
        exact_scores = [(codes.astype(np.int32) @ quantize(q)[0][0].astype(np.int32)) * scales for q in query_vectors]
        exact_top = [set(np.argsort(-s)[:10]) for s in exact_scores]
        for cells in (256, 512):
            centroids = kmeans(rows, cells, rng)
            assigned = np.argmax(rows @ centroids.T, axis=1)
            for nprobe in (8, 16, 32):
                recall, same_first, scanned = [], [], []
                for vector, scores, top in zip(query_vectors, exact_scores, exact_top, strict=True):
                    probed = np.flatnonzero(np.isin(assigned, np.argsort(-(centroids @ vector))[:nprobe]))
                    found = probed[np.argsort(-scores[probed])[:10]]
                    recall.append(len(top & set(found)) / 10)
                    same_first.append(found[0] == max(top, key=lambda i: scores[i]))
                    scanned.append(len(probed) / N)
                print(
                    f"{kind:<6} cells {cells:>4} nprobe {nprobe:>3}: recall@10 {np.mean(recall):.3f}, "
                    f"same top-1 {np.mean(same_first):.3f}, rows scanned {100 * np.mean(scanned):.1f}%"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
