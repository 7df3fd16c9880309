"""Does the fusion-weight fit generalise better from the centre of a plateau than from its highest point?

    python bench/experiments/calibration_smoothing.py --set github-only|github|bfcl [--json OUT]

``calibrate`` picks the fusion weights (lexical, affordance, mood, name) as the grid point with the best
mean reciprocal rank on the fitting half; with 83 requests the best point moves by one request's rank
when the scores shift a little (session 46). This scores every grid point once on every request, then
for each fold (fit even → report odd, fit odd → report even) compares selection rules by the top-1 (the
first acceptable tool ranked first, no abstention) on the other half: the best point; the best mean over
the point and its grid neighbours (a 3×3×3×3 box); the most top-1 right (reciprocal rank breaking
ties); the reciprocal rank counted only in the top 3; and the defaults. The later stages of ``calibrate``
(unfilled, server) are held at their defaults for all rules. "best" is ``calibrate`` before session 63;
since then it counts the top 3 first and breaks their ties by the top 10 (``evaluation.fit_score``), which
this script's "mrr@3" breaks by the smaller weights instead (docs/routing.md).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from nexus_gateway.cache import RegistryCache
from nexus_gateway.embedder import Embedder, EmbedderSpec
from nexus_gateway.evaluation import (
    AFFORDANCE_GRID,
    LEXICAL_GRID,
    MOOD_GRID,
    NAME_GRID,
    RoutingEvaluation,
    embed_queries,
    embed_tools,
    load_queries,
    load_registries,
)
from nexus_gateway.routing import Calibration
from nexus_gateway.vectors import VectorStore

ROOT = Path(__file__).resolve().parents[2]
S = ROOT.parent / "shared" / "data"
SETS = {
    "github-only": (["github-mcp.json"], "github-dev.jsonl", [None]),
    "github": (["github-mcp.json", "mcp-pool.json"], "github-dev.jsonl", [250, None]),
    "bfcl": (["bfcl-functions.json"], "bfcl-dev.jsonl", [None]),
}
AXES = (LEXICAL_GRID, AFFORDANCE_GRID, MOOD_GRID, NAME_GRID)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", choices=SETS, default="github-only")
    parser.add_argument("--limit", type=int, default=0, help="only the first N requests (BFCL is large)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    registries, query_file, sizes = SETS[args.set]
    tools = load_registries([S / "registries" / r for r in registries])
    queries = load_queries(S / "queries" / query_file)
    if args.limit:
        queries = queries[: args.limit]
    embedder = Embedder(EmbedderSpec())
    vectors = embed_tools(tools, embedder, VectorStore(RegistryCache(None), embedder.model_tag))
    evaluation = RoutingEvaluation(tools, embedder, vectors, Calibration(), None)
    query_vectors = embed_queries(embedder, queries)
    cases = [(size, i) for size in sizes for i in range(len(queries))]
    registries_ = [evaluation.protocol.registry(queries[i], size) for size, i in cases]
    routers = [evaluation.router(registry) for registry, _ in registries_]
    shape = tuple(len(axis) for axis in AXES)
    ranks = np.full((*shape, len(cases)), 99, dtype=np.int16)
    base = Calibration()
    for point in itertools.product(*(range(n) for n in shape)):
        weights = [axis[k] for axis, k in zip(AXES, point, strict=True)]
        calibration = replace(
            base,
            lexical_weight=weights[0],
            affordance_weight=weights[1],
            mood_weight=weights[2],
            name_weight=weights[3],
            floor=-1e9,
        )
        for c, ((_, i), router, (_, accepted)) in enumerate(zip(cases, routers, registries_, strict=True)):
            router.calibration = calibration
            result = router.route_vector(queries[i]["query"], query_vectors[i], limit=10, allow_rerank=False)
            ranks[(*point, c)] = next((k for k, x in enumerate(result.candidates) if int(x.id) in accepted), 99)
        sys.stderr.write(f"\r{point}")
    sys.stderr.write("\n")
    reciprocal = np.where(ranks < 99, 1.0 / (1 + ranks.astype(np.float64)), 0.0)
    top1 = ranks == 0
    half = np.array([i % 2 for _, i in cases])  # 0: even line, 1: odd line
    total = np.array([sum(w) for w in itertools.product(*AXES)]).reshape(shape)
    default_point = tuple(
        axis.index(getattr(base, f)) if getattr(base, f) in axis else 0
        for axis, f in zip(AXES, ("lexical_weight", "affordance_weight", "mood_weight", "name_weight"), strict=True)
    )
    report: dict[str, dict[str, object]] = {}
    for fit, held in ((0, 1), (1, 0)):
        mrr = reciprocal[..., half == fit].sum(-1)
        held_top1 = top1[..., half == held].mean(-1)
        fit_top1 = top1[..., half == fit].mean(-1)
        padded = np.pad(mrr, 1, mode="edge")
        smooth = np.zeros_like(mrr)
        for offset in itertools.product((0, 1, 2), repeat=4):
            smooth += padded[tuple(slice(o, o + n) for o, n in zip(offset, shape, strict=True))]
        fit_top1_count = top1[..., half == fit].sum(-1)
        mrr3 = np.where(ranks < 3, reciprocal, 0.0)[..., half == fit].sum(-1)
        rules = {
            "best": np.unravel_index(np.lexsort((total.ravel(), -mrr.ravel()))[0], shape),
            "top1": np.unravel_index(np.lexsort((total.ravel(), -mrr.ravel(), -fit_top1_count.ravel()))[0], shape),
            "mrr@3": np.unravel_index(np.lexsort((total.ravel(), -mrr3.ravel()))[0], shape),
            "smoothed": np.unravel_index(np.lexsort((total.ravel(), -smooth.ravel()))[0], shape),
            "defaults": default_point,
        }
        name = f"fit {'even' if fit == 0 else 'odd'}"
        report[name] = {}
        for rule, point in rules.items():
            point = tuple(int(p) for p in point)
            weights = [axis[k] for axis, k in zip(AXES, point, strict=True)]
            report[name][rule] = {
                "weights": weights,
                "fit_top1": float(fit_top1[point]),
                "held_top1": float(held_top1[point]),
            }
            print(f"{name:9} {rule:9} {weights} fit {fit_top1[point]:.3f} held {held_top1[point]:.3f}")
        spread = f"max {held_top1.max():.3f}, median {np.median(held_top1):.3f}"
        print(f"{name:9} held-out top-1 over the whole grid: {spread}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
