"""Experiment: an exact top-k over 100k tools that reads fewer bytes (docs/routing.md, "What did not help").

The exact INT8 scan of 100k rows is bound by memory (38 MB a query, ~1 ms on two threads). Rotating every
vector by the principal axes of the real tool vectors keeps every dot product and moves most of each
vector's weight into its first dimensions; the scan could then read only the first ``d`` of them, bound the
rest of each row's score by Cauchy–Schwarz (``|q_rest|·|x_rest|``, a norm stored per row), take the k-th
best exact score among the best k partial ones as a floor, and read the rest only of the rows whose bound
reaches the floor. The answer stays exact (asserted here); what decides is how many rows survive. Same
100k corpus and queries as ``ivf_recall.py``.

    python bench/experiments/pruned_scan.py
"""

from __future__ import annotations

import sys

import numpy as np
from ivf_recall import corpus, real_vectors

from nexus_gateway.slb import quantize


def main() -> int:
    rng = np.random.default_rng(0)
    real, query_vectors = real_vectors()
    _, _, axes = np.linalg.svd(real, full_matrices=False)  # uncentred: scores are raw dot products
    for kind in ("noise", "mix"):
        codes, scales = quantize(corpus(real, kind, rng) @ axes.T)
        rows = codes.astype(np.int32)
        for k in (10, 32):
            for d in (48, 64, 96, 128):
                rest_norms = np.linalg.norm(rows[:, d:].astype(np.float32), axis=1)
                survived = []
                for vector in query_vectors:
                    query = quantize(vector @ axes.T)[0][0].astype(np.int32)
                    partial = rows[:, :d] @ query[:d]
                    exact = (rows @ query) * scales
                    floor = np.sort(exact[np.argpartition(-(partial * scales), k)[:k]])[-k]
                    survivors = (partial + np.linalg.norm(query[d:].astype(np.float32)) * rest_norms) * scales >= floor
                    assert survivors[np.argpartition(-exact, k)[:k]].all()  # exact: no true top-k row pruned
                    survived.append(survivors.mean())
                print(
                    f"{kind:<6} k {k:>2} first {d:>3} dims: rows read whole, median "
                    f"{100 * np.median(survived):.1f}%, p95 {100 * np.percentile(survived, 95):.1f}%"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
