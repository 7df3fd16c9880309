"""Experiment: the local LLM's own hidden states as a second embedder (PromptEOL-style: a prompt that asks
for the request's or the tool's operation "in one word", the last token's final hidden state as the
vector), its cosine added to the router's fused score (docs/routing.md, "What did not help").

    python bench/experiments/llm_embeddings.py --model GGUF [--size 117] [--threads 2]

Tool vectors are cached per (model, template) in ``--cache`` so weights can be re-scored without the LLM.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from routing_signals import features

TEMPLATES = {
    "eol": (
        'This API request: "{q}" means in one word:"',
        'This API function: "{name}: {desc}" means in one word:"',
    ),
    "op": (
        "User request: {q}\nIn one word, the operation this request needs is:",
        "API function {name}: {desc}\nIn one word, the operation this function performs is:",
    ),
}


def first_sentences(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text[:limit]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--size", default="117")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--templates", default="eol,op")
    parser.add_argument("--cache", default="/tmp/llm_embeddings.json")
    args = parser.parse_args()
    import llama_cpp

    size = args.size if args.size == "all" else int(args.size)
    tools, rows, _, _ = features(size)
    used = sorted({int(i) for row in rows for i in row["ids"]})
    llm = llama_cpp.Llama(
        args.model,
        embedding=True,
        pooling_type=llama_cpp.LLAMA_POOLING_TYPE_LAST,
        n_ctx=1024,
        n_batch=1024,
        n_ubatch=1024,
        n_threads=args.threads,
        verbose=False,
    )
    cache_path = Path(args.cache)
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    tag = Path(args.model).name
    halves = {"even": [r for k, r in enumerate(rows) if k % 2 == 0], "odd": [r for k, r in enumerate(rows) if k % 2]}
    router = {h: sum(r["ids"][int(np.argmax(r["base"]))] in r["acc"] for r in rs) for h, rs in halves.items()}
    print(f"router alone: even {router['even']}/83, odd {router['odd']}/83")
    for name in args.templates.split(","):
        query_template, tool_template = TEMPLATES[name]
        key = f"{tag}:{name}"
        stored = cache.setdefault(key, {})
        for n, index in enumerate(used):
            tool = tools[index]
            if str(index) not in stored:
                text = tool_template.format(name=tool.name, desc=first_sentences(tool.description))
                stored[str(index)] = list(map(float, llm.embed(text, normalize=True)))
            sys.stderr.write(f"\r{name}: tool {n + 1}/{len(used)}")
        sys.stderr.write("\n")
        cache_path.write_text(json.dumps(cache))
        matrix = {int(k): np.asarray(v, dtype=np.float32) for k, v in stored.items()}
        # the hidden states share one large direction (every cosine near 1): centre on the tools' mean
        centre = np.mean([matrix[i] for i in used], axis=0)
        matrix = {i: (v - centre) / np.linalg.norm(v - centre) for i, v in matrix.items()}
        for row in rows:
            vector = np.asarray(llm.embed(query_template.format(q=row["q"]["query"]), normalize=True)) - centre
            row["llm"] = vector / np.linalg.norm(vector)
        print(f"template {name}:")
        for weight in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, "alone"):
            cells = []
            for half, rs in halves.items():
                right = 0
                for row in rs:
                    cos = np.array([float(matrix[int(i)] @ row["llm"]) for i in row["ids"]])
                    score = cos if weight == "alone" else row["base"] + float(weight) * cos
                    right += row["ids"][int(np.argmax(score))] in row["acc"]
                cells.append(f"{half} {right}/83")
            print(f"  weight {weight}: {', '.join(cells)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
