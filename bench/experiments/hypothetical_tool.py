"""Experiment: HyDE-style routing. The local LLM writes the API function a request needs
("create_repo(name, visibility) — Create a new repository with specified visibility"), and the router
scores the request plus that hypothetical tool text: fused(request) + w · fused(hypothesis).

    python bench/experiments/hypothetical_tool.py --model GGUF --out OUT.json [--size 250]

The prompt's three examples are from other domains (weather, Slack, calendar), not the dev set. The
generations are cached in OUT.json.gen.json; accuracy is printed for every w on both halves (choose on
the even half, read the odd half). Results are in docs/routing.md ("What did not help").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
from shipped import S, shipped

from nexus_gateway.evaluation import embed_queries, load_queries

SYSTEM = (
    "You name the API function that would carry out a user's request. Answer with one line: "
    "function_name(arg, ...) — a short description of what the function does. Use general, "
    "conventional names."
)
SHOTS = [
    (
        "what's it going to be like in Paris tomorrow, should I bring an umbrella?",
        "get_weather_forecast(city, date) — Get the weather forecast for a city on a date",
    ),
    ("tell Bob on Slack I'm running 10 min late", "send_slack_message(channel, text) — Post a message to a Slack user"),
    (
        "which of my calendar events clash with the offsite next week?",
        "list_calendar_events(start, end) — List calendar events in a time range",
    ),
]
WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 100.0)


def hypothesis(llm: llama_cpp.Llama, request: str, max_tokens: int) -> str:
    messages = [{"role": "system", "content": SYSTEM}]
    for user, assistant in SHOTS:
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    messages.append({"role": "user", "content": request})
    out: Any = llm.create_chat_completion(messages, temperature=0.0, max_tokens=max_tokens, stop=["\n"])
    return str(out["choices"][0]["message"]["content"]).strip()


def accuracy(rows: list[dict[str, Any]], weight: float) -> float:
    right = sum(r["ok"][int(np.argmax(r["request"] + weight * r["hypothesis"]))] for r in rows)
    return right / len(rows)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--size", type=int, default=250)
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    queries = load_queries(S / "queries/github-dev.jsonl")
    cache = Path(args.out + ".gen.json")
    texts: dict[str, str] = json.loads(cache.read_text()) if cache.exists() else {}
    if len(texts) < len(queries):
        llm = llama_cpp.Llama(args.model, n_ctx=1024, n_threads=args.threads, verbose=False)
        started = time.time()
        for i, query in enumerate(queries):
            texts.setdefault(query["id"], hypothesis(llm, query["query"], args.max_tokens))
            sys.stderr.write(f"\r{i + 1}/{len(queries)} {(time.time() - started) / (i + 1):.2f} s per request")
        cache.write_text(json.dumps(texts))
    setup = shipped(
        ["github-mcp.json", "mcp-pool.json"], calibrated=False, lexical_weight=0.3, affordance_weight=0.2, floor=-9
    )
    embedder, evaluation = setup.embedder, setup.evaluation
    rows = []
    for query, vector in zip(queries, embed_queries(embedder, queries), strict=True):
        registry, accepted = evaluation.protocol.registry(query, args.size)
        router = evaluation.router(registry)
        text = texts[query["id"]]
        plain = router.route_vector(query["query"], vector, limit=len(registry), allow_rerank=False)
        hyde = router.route_vector(text, embedder.embed_document(text), limit=len(registry), allow_rerank=False)
        by_request = {int(c.id): c.score for c in plain.candidates}
        by_hypothesis = {int(c.id): c.score for c in hyde.candidates}
        ids = sorted(by_request)
        rows.append(
            {
                "request": np.array([by_request[i] for i in ids]),
                "hypothesis": np.array([by_hypothesis.get(i, 0.0) for i in ids]),
                "ok": [i in accepted for i in ids],
            }
        )
    print("\nweight  all    even   odd")
    for weight in WEIGHTS:
        halves = (accuracy(rows, weight), accuracy(rows[0::2], weight), accuracy(rows[1::2], weight))
        print(f"{weight:>6} " + " ".join(f"{a:.3f}" for a in halves))
    written = [{"query": q["query"], "hypothesis": texts[q["id"]]} for q in queries]
    Path(args.out).write_text(json.dumps(written, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
