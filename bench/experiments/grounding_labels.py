"""Experiment: the labelled arguments themselves through grounding, as if the model had generated them
(docs/arguments.md, session 16's grounding rows).

    python bench/experiments/grounding_labels.py [--show N]

For each GitHub dev request, its ``gold_arguments`` with its labelled tool's schema; for each BFCL dev
request, the first non-empty acceptable value of each argument. A value counts as kept and right when
grounding keeps it and (BFCL) it is still one of the acceptable values. No model is loaded: this shows
what grounding alone would throw away of a perfect generation.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from nexus_gateway.grounding import ground

S = Path(__file__).resolve().parents[3] / "shared" / "data"


def first_alternative(value: Any) -> Any:
    """BFCL lists the acceptable values of an object's keys too (``{"field": ["age"], "operation":
    [">"]}``); a generation holds one of each (``{"field": "age", "operation": ">"}``)."""
    if isinstance(value, dict):
        return {k: first_alternative(v[0] if isinstance(v, list) and v else v) for k, v in value.items()}
    if isinstance(value, list):
        return [first_alternative(v) for v in value]
    return value


def labelled(query: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The call to ground and, per key, the values that count as right."""
    if "acceptable_arguments" in query:
        accepted = {k: [first_alternative(a) for a in v] for k, v in (query["acceptable_arguments"] or {}).items()}
        return {k: v[0] for k, v in accepted.items() if v and v[0] not in ("", None)}, accepted
    gold = query.get("gold_arguments") or {}
    return gold, {k: [v] for k, v in gold.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", type=int, default=0, help="print the first N values grounding loses")
    args = parser.parse_args()
    for registry, queries in (("github-mcp.json", "github-dev.jsonl"), ("bfcl-functions.json", "bfcl-dev.jsonl")):
        tools: dict[str, Any] = {}
        for tool in json.loads((S / "registries" / registry).read_text()):
            tools.setdefault(tool["name"], tool)
        right = total = 0
        lost = []
        for line in (S / "queries" / queries).read_text().splitlines():
            query = json.loads(line)
            tool = tools.get(query["gold_tool"])
            raw, accepted = labelled(query)
            if tool is None or not raw:
                continue
            kept, _ = ground(raw, tool.get("inputSchema") or {}, query["query"])
            for key, value in raw.items():
                total += 1
                if key in kept and kept[key] in accepted[key]:
                    right += 1
                else:
                    lost.append((query["id"], key, value, kept.get(key)))
        print(f"{registry}: {right} of {total} labelled values kept and right")
        for row in lost[: args.show]:
            print("   ", row)


if __name__ == "__main__":
    main()
