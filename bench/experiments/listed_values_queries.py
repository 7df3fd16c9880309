"""The dev requests whose labelled tool has a parameter whose description lists its values
(``signature.described_options``), as a query file for ``nexus-gateway eval args``: the requests that the
decoder's described enums can change (docs/arguments.md, session 42).

    python bench/experiments/listed_values_queries.py [--registry …/bfcl-functions.json] \\
        [--queries …/bfcl-dev.jsonl] > listed.jsonl
    nexus-gateway eval args --registry …/bfcl-functions.json --queries listed.jsonl --no-rerank \\
        --threads 2 --gold-tool --no-oracle
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nexus_gateway.signature import described_options

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--registry", default=str(SHARED / "registries" / "bfcl-functions.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "bfcl-dev.jsonl"))
    args = parser.parse_args()
    listing = set()
    for tool in json.loads(Path(args.registry).read_text()):
        properties = (tool.get("inputSchema") or tool.get("parameters") or {}).get("properties") or {}
        if any(described_options(prop, properties) for prop in properties.values()):
            listing.add(tool["name"])
    for line in Path(args.queries).read_text().splitlines():
        if line.strip() and json.loads(line)["gold_tool"] in listing:
            sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
