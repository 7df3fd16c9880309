"""Experiment: ``calibrate --judge`` on one half of a request set, judged on the other.

The calibration half picks the margin below which the judge is asked (``judge_fit.judge_verdict``: the
most net fixes among the margins whose flips pass the Bonferroni-corrected sign test, else never); the
held-out half says what that margin does to requests it was not fitted on. Two sets: the everyday
local servers (``bench/data/local-dev.jsonl`` over ``tests/fixtures/local_registry.json``, the routing
weights calibrated on the same even half, as ``nexus-gateway calibrate --part even`` does) and GitHub's
dev requests at N = 250 with the pool as distractors (the stored calibration, fitted on the even half).

    python bench/experiments/judge_held_out.py --set local|github [--model qwen2.5-coder-1.5b] --json OUT
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from shipped import S, shipped

from nexus_gateway.cache import RegistryCache
from nexus_gateway.embedder import Embedder
from nexus_gateway.eval_cli import open_judge
from nexus_gateway.evaluation import (
    RoutingEvaluation,
    calibrate,
    embed_queries,
    embed_tools,
    load_queries,
    load_registries,
    wilson,
)
from nexus_gateway.judge_fit import judge_requests, judge_verdict, judged_below
from nexus_gateway.routing import Calibration
from nexus_gateway.vectors import VectorStore

ROOT = Path(__file__).resolve().parents[2]


def local_setup(embedder: Embedder) -> tuple[RoutingEvaluation, list[dict[str, Any]], int | None]:
    tools = load_registries([str(ROOT / "tests/fixtures/local_registry.json")])
    vectors = embed_tools(tools, embedder, VectorStore(RegistryCache(), embedder.model_tag))
    evaluation = RoutingEvaluation(tools, embedder, vectors, Calibration(), None)
    queries = load_queries(ROOT / "bench/data/local-dev.jsonl")
    even = queries[0::2]
    calibrate(evaluation, even, embed_queries(embedder, even), [None])
    return evaluation, queries, None


def github_setup(embedder: Embedder) -> tuple[RoutingEvaluation, list[dict[str, Any]], int | None]:
    setup = shipped(["github-mcp.json", "mcp-pool.json"], embedder=embedder)
    return setup.evaluation, load_queries(S / "queries/github-dev.jsonl"), 250


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", choices=["local", "github"], default="local")
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    embedder = Embedder()
    evaluation, queries, size = (local_setup if args.set == "local" else github_setup)(embedder)
    judge, model = open_judge(args.model, args.threads)
    halves = {"even": queries[0::2], "odd": queries[1::2]}
    judged = {
        part: judge_requests(evaluation, half, embed_queries(embedder, half), size, judge)
        for part, half in halves.items()
    }
    verdict = judge_verdict(len(halves["even"]), judged["even"])
    margin = verdict.margin
    print(f"{args.set}, {model}: p < {verdict.evidence_needed:.3g} needed on the even half")
    for policy in verdict.policies:
        kept = "  <- kept" if policy is verdict.chosen else ""
        print(
            f"  closest {policy.share:.0%} (margin < {policy.margin:.4g}): asked {policy.asked}, "
            f"fixed {policy.fixed}, broke {policy.broken}, p = {policy.p:.3g}{kept}"
        )
    held_out = judged["odd"]
    n = len(halves["odd"])  # an abstained request counts as a miss on both sides
    router = sum(j.router_right for j in held_out)
    with_judge = sum(j.judge_right if j.margin < margin else j.router_right for j in held_out)
    counted = judged_below(held_out, margin)
    rows = {}
    for label, hits in (("router", router), ("router + judge at the kept margin", with_judge)):
        low, high = wilson(hits, n)
        rows[label] = {"top1": hits / n, "ci": [low, high]}
        print(f"  odd half, {label:<34} {100 * hits / n:5.1f}% [{100 * low:.1f}, {100 * high:.1f}] (n = {n})")
    print(f"  odd half: judge asked {counted.asked}, fixed {counted.fixed}, broke {counted.broken}")
    document = {
        "set": args.set,
        "model": model,
        "calibration_half": verdict.to_json(),
        "held_out": {"n": n, **rows, "asked": counted.asked, "fixed": counted.fixed, "broken": counted.broken},
        "judged": {part: [vars(j) for j in rows_] for part, rows_ in judged.items()},
    }
    Path(args.json).write_text(json.dumps(document, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
