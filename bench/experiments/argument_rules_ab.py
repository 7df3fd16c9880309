"""A paired A/B of the rules that run after decoding (grounding, placement, one use per value): each
request is generated once with the labelled tool, and the raw output goes through the rules of a git
revision and through the working tree's. Decoding is greedy and the rules only read its output, so the
two columns differ by the rules alone and cost one generation (docs/arguments.md, session 40).

    python bench/experiments/argument_rules_ab.py --rev HEAD~1 --part odd \\
        [--registry …/github-mcp.json --queries …/github-dev.jsonl] [--limit 100] [--json OUT]

Prints each request whose arguments differ, then right / total arguments for both.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from labelled import add_options, labelled

from nexus_gateway import arguments
from nexus_gateway.eval_args import score_arguments
from nexus_gateway.evaluation import gold_tool

REPO = Path(__file__).resolve().parents[2]


def module_at(rev: str, name: str) -> ModuleType:
    """``nexus_gateway.<name>`` as it was at ``rev``, importable beside today's (its relative imports
    resolve to today's package)."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:nexus_gateway/{name}.py"], capture_output=True, text=True, check=True
    ).stdout
    spec = importlib.util.spec_from_loader(f"nexus_gateway._{name}_at_rev", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "nexus_gateway"
    exec(compile(source, f"{name}@{rev}", "exec"), module.__dict__)
    return module


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rev", required=True, help="the git revision whose rules form the baseline")
    add_options(parser)
    args = parser.parse_args()
    old_grounding, old_placement = module_at(args.rev, "grounding"), module_at(args.rev, "placement")
    old_once = getattr(old_grounding, "said_once_used_once", lambda kept, text: (kept, []))
    new_ground, new_place = arguments.ground, arguments.place_stated
    baseline: dict[str, Any] = {}

    # the generator calls ground, then place_stated, then said_once_used_once: the baseline runs its own
    # three on the same raw output and stows the result
    def ground(raw: dict[str, Any], schema: dict[str, Any], text: str) -> tuple[dict[str, Any], list[str]]:
        baseline["grounded"], baseline["text"] = old_grounding.ground(raw, schema, text)[0], text
        return new_ground(raw, schema, text)

    def place_stated(kept: dict[str, Any], schema: dict[str, Any], intent: str, name: str, earlier: Any) -> Any:
        placed = old_placement.place_stated(baseline["grounded"], schema, intent, name, earlier)
        baseline["arguments"] = old_once(placed, baseline["text"])[0]
        return new_place(kept, schema, intent, name, earlier)

    arguments.ground, arguments.place_stated = ground, place_stated  # type: ignore[assignment]
    evaluation, queries = labelled(args.registry, args.queries, args.part, args.limit)
    totals = {"baseline": [0, 0], "working tree": [0, 0]}
    changed = []
    for query in queries:
        tool = gold_tool(query)
        generation = evaluation.generate(tool, query["query"], None)
        for side, got in (("baseline", baseline["arguments"]), ("working tree", generation.arguments)):
            right, total = score_arguments(got, query, tool)
            totals[side][0] += right
            totals[side][1] += total
        if baseline["arguments"] != generation.arguments:
            before, after = (score_arguments(a, query, tool) for a in (baseline["arguments"], generation.arguments))
            changed.append({"id": query["id"], "before": baseline["arguments"], "after": generation.arguments})
            print(f"{query['id']}: {before} → {after}\n  {baseline['arguments']}\n  {generation.arguments}")
    for side, (right, total) in totals.items():
        print(f"{side:>12}: {right}/{total} arguments right ({right / max(total, 1):.1%})")
    if args.json:
        Path(args.json).write_text(json.dumps({"rev": args.rev, "totals": totals, "changed": changed}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
