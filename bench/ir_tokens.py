"""Length of the compressed IR in model tokens over a registry, against the host-facing signature and
the full JSON schema (what the oracle prompt holds).

    python bench/ir_tokens.py [--registry ../shared/data/registries/github-mcp.json]
        [--queries ../shared/data/queries/github-dev.jsonl] [--json OUT]

Forms: ``ir_budgeted`` is what the gateway shows by default: the compressed IR with every parameter, or
for a tool whose IR is longer than ``ir.IR_TOKEN_BUDGET`` tokens the focused form (for a request that
names none of its optional parameters: every tool once; ``ir_budgeted_per_request``: what each dev
request's prompt holds for its labelled tool); ``ir`` is the compressed IR of every tool with every
parameter; ``ir_focused`` is the focused form
(``nexus.schema: ir-focused``) for a request that names no optional parameter (every tool once);
``ir_focused_per_request`` is what each dev request's prompt holds in that form for its labelled tool;
``choice`` is a candidate's line when the model chooses among close tools (typed, quoted, described: the
default IR up to session 34).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.ir import choice_ir, compressed_ir, ir_is_long
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path
from nexus_gateway.signature import signature

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--registry", default=str(SHARED / "registries" / "github-mcp.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "github-dev.jsonl"))
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--json", default="bench/results/ir_tokens.json")
    args = parser.parse_args()
    tools = json.loads(Path(args.registry).read_text())
    engine = LlamaEngine(EngineSettings(args.model, n_threads=1, n_ctx=512))
    by_name = {t["name"]: t for t in tools}
    requests = [json.loads(line) for line in Path(args.queries).read_text().splitlines() if line.strip()]
    pairs = [(by_name[q["gold_tool"]], q["query"]) for q in requests if q.get("gold_tool") in by_name]

    def budgeted(tool: dict[str, Any], request: str) -> str:
        whole = compressed_ir(tool["name"], tool["inputSchema"])
        long = ir_is_long(whole, engine.tokenize)
        return compressed_ir(tool["name"], tool["inputSchema"], intent=request) if long else whole

    forms = {
        "ir_budgeted": lambda t: budgeted(t, ""),
        "ir_budgeted_per_request": None,
        "ir": lambda t: compressed_ir(t["name"], t["inputSchema"]),
        "ir_focused": lambda t: compressed_ir(t["name"], t["inputSchema"], intent=""),
        "ir_focused_per_request": None,
        "choice": lambda t: choice_ir(t["name"], t["inputSchema"], t["description"]),
        "signature": lambda t: signature(t["name"], t["inputSchema"], t["description"]),
        "full_schema": lambda t: json.dumps(
            {"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]}
        ),
    }
    result: dict[str, object] = {"registry": Path(args.registry).name, "n": len(tools), "model": Path(args.model).name}
    print(f"{'form':<24}{'median':>8}{'p90':>8}{'p99':>8}{'max':>8}{'mean':>8}")
    for name, render in forms.items():
        if name == "ir_budgeted_per_request":
            texts = [budgeted(t, q) for t, q in pairs]
        elif render is None:
            texts = [compressed_ir(t["name"], t["inputSchema"], intent=q) for t, q in pairs]
        else:
            texts = [render(t) for t in tools]
        counts = np.array([len(engine.tokenize(text)) for text in texts])
        row = {
            "n": len(counts),
            "median": float(np.median(counts)),
            "p90": float(np.percentile(counts, 90)),
            "p99": float(np.percentile(counts, 99)),
            "max": int(counts.max()),
            "mean": float(counts.mean()),
            "histogram": np.histogram(counts, bins=[0, 10, 20, 30, 40, 60, 80, 120, 200, 400, 10**6])[0].tolist(),
        }
        result[name] = row
        print(f"{name:<24}{row['median']:>8.0f}{row['p90']:>8.0f}{row['p99']:>8.0f}{row['max']:>8}{row['mean']:>8.1f}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    sys.stderr.write(f"wrote {args.json}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
