"""Experiment: example requests per tool written at ingest by the local LLM, as extra evidence for routing.

    python bench/experiments/example_requests.py [--model GGUF] [--size 117] [--per-tool 4] [--cache FILE]

For every tool that appears in a GitHub dev request's registry at ``--size``, the model writes a few
requests a user might type for it (from the tool's typed signature and description only; the prompt's
one worked example is a calendar tool, so nothing of the dev set leaks in). Each example is embedded as
a query; a tool's bonus is its best example's cosine to the request. Fused with the calibrated router as
``fused + w · (bonus − max bonus)``, the weight chosen on the even half and reported on the odd half.
The examples are cached in ``--cache`` so a re-run only re-scores. The 0.5B model's examples did not
help (docs/routing.md); this measures the 1.5B model's.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from routing_signals import features, top1

from nexus_gateway.lexical import BM25Index, tokenize
from nexus_gateway.model_store import lookup, model_path
from nexus_gateway.signature import signature

SYSTEM = "You write the messages users type to an AI assistant that can call tools."
EXAMPLE_TOOL = (
    "create_event(calendar_id, title, start: datetime, end?: datetime, attendees?: string[]) — "
    "Create an event in a calendar"
)
EXAMPLE_REQUESTS = [
    "put a 30 min sync with dana and lee on my work calendar tomorrow at 10",
    "Can you book the team offsite for March 3rd in the Shared calendar?",
    "block out Friday 2-4pm for focus time",
    "schedule 'Quarterly review' next Monday 9am, invite ops@example.com",
]


def prompt_messages(tool_line: str, count: int) -> list[dict[str, str]]:
    ask = (
        "Tool: {tool}\n\nWrite {count} different messages a user might send that this tool would serve. "
        "Vary them: casual or formal, a question or a command, short or long, with concrete made-up names, "
        "numbers and values. Do not repeat the tool's own wording. One message per line, nothing else."
    )
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": ask.format(tool=EXAMPLE_TOOL, count=len(EXAMPLE_REQUESTS))},
        {"role": "assistant", "content": "\n".join(EXAMPLE_REQUESTS)},
        {"role": "user", "content": ask.format(tool=tool_line, count=count)},
    ]


def generate(tools: list[Any], wanted: list[int], model: str, count: int, cache: Path) -> dict[str, list[str]]:
    examples: dict[str, list[str]] = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [i for i in wanted if tools[i].name + "@" + tools[i].server not in examples]
    if not todo:
        return examples
    import llama_cpp

    llm = llama_cpp.Llama(model_path=model, n_ctx=2048, n_threads=2, verbose=False, seed=0)
    started = time.perf_counter()
    for done, i in enumerate(todo, 1):
        tool = tools[i]
        line = signature(tool.name, tool.schema, tool.description)
        reply = llm.create_chat_completion(prompt_messages(line, count), temperature=0.0, max_tokens=40 * count)
        text = reply["choices"][0]["message"]["content"] or ""
        lines = [s.strip().lstrip("-*0123456789. ").strip() for s in text.splitlines()]
        examples[tool.name + "@" + tool.server] = [s for s in lines if s][:count]
        if done % 10 == 0 or done == len(todo):
            cache.write_text(json.dumps(examples, indent=1))
            rate = (time.perf_counter() - started) / done
            print(
                f"[{done}/{len(todo)}] {rate:.1f} s/tool  {tool.name}: {examples[tool.name + '@' + tool.server][:2]}",
                file=sys.stderr,
            )
    return examples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=str(model_path(lookup("qwen2.5-coder-1.5b"))))
    parser.add_argument("--size", type=int, default=117)
    parser.add_argument("--per-tool", type=int, default=4)
    parser.add_argument("--cache", default="bench/results/example_requests.json")
    parser.add_argument("--limit", type=int, default=0, help="generate for the first N tools only (timing)")
    args = parser.parse_args()
    tools, rows, embedder, _ = features(args.size)
    wanted = sorted({int(i) for row in rows for i in row["ids"]})
    if args.limit:
        wanted = wanted[: args.limit]
    examples = generate(tools, wanted, args.model, args.per_tool, Path(args.cache))
    if args.limit:
        return 0
    vectors: dict[int, np.ndarray] = {}
    for i in wanted:
        texts = examples.get(tools[i].name + "@" + tools[i].server, [])
        if texts:
            vectors[i] = np.stack([embedder.embed_query(t) for t in texts])
    for row in rows:
        ids = [int(i) for i in row["ids"]]
        row["dense"] = np.array(
            [float((vectors[i] @ row["qv"]).max()) if i in vectors else 0.0 for i in ids], dtype=np.float32
        )
        texts = [" ".join(examples.get(tools[i].name + "@" + tools[i].server, [])) for i in ids]
        lexical = BM25Index([tokenize(t) for t in texts]).scores(row["q"]["query"])
        row["lexical"] = lexical / max(float(lexical.max()), 1e-9)
    even, odd = rows[0::2], rows[1::2]
    print(f"router: even {top1(even):.3f} odd {top1(odd):.3f}  (n = {len(even)} / {len(odd)})")
    for key in ("dense", "lexical"):
        alone = lambda row, k=key: 100.0 * row[k] - row["base"]  # noqa: E731
        print(f"{key} examples alone: even {top1(even, alone):.3f} odd {top1(odd, alone):.3f}")
    results = []
    for dense, lexical in itertools.product((0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0), (0, 0.05, 0.1, 0.2, 0.3)):

        def extra(row: dict[str, Any], d: float = dense, x: float = lexical) -> np.ndarray:
            return d * row["dense"] + x * row["lexical"]

        results.append((top1(even, extra), top1(odd, extra), dense, lexical))
        print(f"dense {dense} lexical {lexical}: even {results[-1][0]:.3f} odd {results[-1][1]:.3f}")
    best = max(results, key=lambda r: (r[0], -r[2] - r[3]))
    print(f"best on the even half: dense {best[2]} lexical {best[3]} -> even {best[0]:.3f} odd {best[1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
