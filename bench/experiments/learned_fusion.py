"""Experiment: the fusion weights learned by a listwise (softmax) loss over more features than the
shipped grid search sees, fitted on one half of the GitHub dev queries and reported on the other.

    python bench/experiments/learned_fusion.py [--size 250] [--top 30]

The shipped router adds five signals with weights chosen on a grid (``calibrate``). Here the signals
are kept apart and BM25 is split by field (name, description, parameter names, enum values; BM25F's
idea that a word in the name says more than one in a long description), the weights fitted by
gradient descent on the softmax of each request's top candidates. Results in docs/routing.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np
from shipped import S, shipped

from nexus_gateway.affordance import SLOT_KINDS, filled_slots, query_slots
from nexus_gateway.evaluation import embed_queries, load_queries
from nexus_gateway.lexical import BM25Index, LexicalDocument, tokenize
from nexus_gateway.mood import request_mood

FIELDS = ("name", "description", "parameters", "enums")
NAMES = ["base", "cosine", "bm25", *(f"bm25_{f}" for f in FIELDS), "namecov", "affordance", "unfilled", "mood"]


def field_tokens(tool: Any) -> dict[str, list[str]]:
    doc = LexicalDocument.of_tool(tool.name, tool.description, tool.schema)
    return {
        "name": tokenize(doc.name),
        "description": tokenize(doc.description),
        "parameters": tokenize(" ".join(doc.parameters)),
        "enums": tokenize(" ".join(doc.enum_values)),
    }


def normalised(scores: np.ndarray) -> np.ndarray:
    peak = float(scores.max()) if scores.size else 0.0
    return scores / peak if peak > 0 else scores


def build(size: int, top: int) -> list[dict[str, Any]]:
    setup = shipped(["github-mcp.json", "mcp-pool.json"])
    tools, embedder, evaluation = setup.tools, setup.embedder, setup.evaluation
    queries = load_queries(S / "queries/github-dev.jsonl")
    fields = [field_tokens(t) for t in tools]
    indexes: dict[tuple[int, ...], dict[str, BM25Index]] = {}
    rows = []
    for query, vector in zip(queries, embed_queries(embedder, queries), strict=True):
        text = query["query"]
        registry, accepted = evaluation.protocol.registry(query, size)
        router = evaluation.router(registry)
        ids = np.array([int(i) for i in router.slb.ids])
        cosine = router.slb.scores(vector)
        lexical, base = router.fuse(text, cosine)
        terms = router.bm25.query_terms(text)
        key = tuple(ids.tolist())
        if key not in indexes:
            indexes[key] = {f: BM25Index([fields[i][f] for i in ids]) for f in FIELDS}
        slots = query_slots(text)
        affordance = (
            sum(router.affords[k] for k in slots) / np.float32(len(slots)) if slots else np.zeros(len(ids), np.float32)
        )
        filled = filled_slots(text, slots)
        missing = [router.requires[k] for k in SLOT_KINDS if k not in filled]
        unfilled = np.logical_or.reduce(missing).astype(np.float32) if missing else np.zeros(len(ids), np.float32)
        wanted = request_mood(text)
        mood = (
            np.zeros(len(ids), np.float32)
            if wanted is None
            else np.nan_to_num(np.abs(router.moods - np.float32(wanted)), nan=0.0)
        )
        columns = [base, cosine, lexical]
        columns += [normalised(indexes[key][f].term_scores(terms)) for f in FIELDS]
        columns += [router.names.scores(terms), affordance, unfilled, mood]
        matrix = np.stack(columns, axis=1).astype(np.float64)
        order = np.argsort(-base, kind="stable")[:top]
        labels = np.array([ids[i] in accepted for i in order])
        rows.append({"x": matrix[order], "y": labels, "base_right": bool(labels[0])})
    return rows


def fit(rows: list[dict[str, Any]], l2: float, steps: int = 1500, rate: float = 0.02) -> np.ndarray:
    """Softmax over each request's candidates, maximising the probability of its acceptable tools;
    starts from the shipped score (weight 1 on ``base``), L2 pulls the rest towards 0."""
    usable = [r for r in rows if r["y"].any()]
    w = np.zeros(len(NAMES))
    w[0] = 1.0
    prior = w.copy()
    scale = 20.0  # a temperature: fused scores differ by hundredths
    for _ in range(steps):
        grad = np.zeros_like(w)  # plain gradient descent: 11 weights, a few thousand candidates
        for r in usable:
            s = scale * (r["x"] @ w)
            p = np.exp(s - s.max())
            p /= p.sum()
            q = p * r["y"]
            q /= q.sum()
            grad += scale * ((p - q) @ r["x"])
        grad = grad / len(usable) + l2 * (w - prior)
        w -= rate * grad
    return w


def top1(rows: list[dict[str, Any]], w: np.ndarray) -> float:
    return float(np.mean([r["y"][int(np.argmax(r["x"] @ w))] for r in rows]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=250)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    rows = build(args.size, args.top)
    halves = {"even": rows[0::2], "odd": rows[1::2]}
    shipped = np.zeros(len(NAMES))
    shipped[0] = 1.0
    print(f"N = {args.size}: router even {top1(halves['even'], shipped):.3f} odd {top1(halves['odd'], shipped):.3f}")
    for l2 in (0.0, 0.01, 0.1, 1.0):
        for train, test in (("even", "odd"), ("odd", "even")):
            w = fit(halves[train], l2)
            weights = " ".join(f"{n}={v:+.2f}" for n, v in zip(NAMES, w, strict=True))
            print(
                f"l2 {l2}: fit on {train} {top1(halves[train], w):.3f}, held-out {test} "
                f"{top1(halves[test], w):.3f}  [{weights}]"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
