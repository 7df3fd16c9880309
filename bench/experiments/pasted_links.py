"""Experiment: the GitHub dev requests with a pasted link instead of naming the repository and number.

Users paste links ("https://github.com/octo-org/app/pull/204, ship it") as often as they type
"octo-org/app PR 204", and the dev set has two. This derives the link form of every request that names an
``owner/repo`` and an issue or pull request number ("PR 512 in northwind/inventory-api",
"octo-org/app#204") and routes both forms with the stored calibration (``bench/results/
calibration-github.json``), at N = 250 and all tools, as ``decisions_ab.py`` does.

    python bench/experiments/pasted_links.py [--json OUT] [--queries-out FILE.jsonl]

The rewrite is mechanical: it can leave an odd phrase ("move sub-<link>"), and a bare ``owner/repo#N``
becomes an issue link unless the request speaks of a pull request, a merge or a review. Session 57 ran it
before and after links were read as what they point at (``lexical._link_words``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from decisions_ab import ROOT, S, calibration, routing_command

from nexus_gateway.evaluation import wilson

SLUG = r"([A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9])"
REFERENCE = re.compile(r"\b(PR|pr|pull request|issue|Issue)\s*#?(\d+)\b")
HASHED = re.compile(SLUG + r"#(\d+)")
PULL_WORDS = re.compile(r"\b(?:pr|pull|merge|review)", re.IGNORECASE)


def linked(text: str) -> str | None:
    """The request with its repository and number written as one link, or None when it names no pair."""
    if hashed := HASHED.search(text):
        kind = "pull" if PULL_WORDS.search(text) else "issues"
        return text.replace(hashed.group(0), f"https://github.com/{hashed.group(1)}/{kind}/{hashed.group(2)}")
    slug, reference = re.search(SLUG, text), REFERENCE.search(text)
    if slug is None or reference is None:
        return None
    kind = "issues" if reference.group(1).lower() == "issue" else "pull"
    link = f"https://github.com/{slug.group(1)}/{kind}/{reference.group(2)}"
    name = re.escape(slug.group(1))
    rest = re.sub(rf"\s*\b(?:in|of|on|for|from)\s+{name}(?![\w/#-])", "", text)
    rest = re.sub(rf"{name}(?![\w/#-])", "", rest)
    reference = REFERENCE.search(rest)
    if reference is None:
        return None
    return (rest[: reference.start()] + link + rest[reference.end() :]).replace("  ", " ")


def route(queries: Path, cases: Path) -> list[dict[str, Any]]:
    weights = calibration("calibration-github.json", None)
    command = routing_command(weights, ["github-mcp.json", "mcp-pool.json"], queries, "250,all")
    subprocess.run([*command, "--cases", str(cases)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return [json.loads(line) for line in cases.read_text().splitlines()]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    parser.add_argument("--queries-out", type=Path, help="also write the link form of the requests here")
    args = parser.parse_args()
    written, links = [], []
    for line in (S / "queries" / "github-dev.jsonl").read_text().splitlines():
        request = json.loads(line)
        if (text := linked(request["query"])) is not None:
            written.append(request)
            links.append({**request, "query": text})
    with tempfile.TemporaryDirectory() as folder:
        results = {}
        for form, requests in (("as written", written), ("with a link", links)):
            queries = Path(folder) / f"{len(results)}.jsonl"
            queries.write_text("".join(json.dumps(r) + "\n" for r in requests))
            results[form] = route(queries, Path(folder) / f"{len(results)}-cases.jsonl")
    if args.queries_out:
        args.queries_out.write_text("".join(json.dumps(r) + "\n" for r in links))
    report: dict[str, Any] = {"n": len(links), "forms": {}}
    print(f"{len(links)} GitHub dev requests that name a repository and a number, routed in both forms")
    print("| form | N = 250 | all tools |\n|---|---|---|")
    for form, cases in results.items():
        row = {}
        for size in ("250", "all"):
            right = sum(c["right"] for c in cases if c["size"] == size)
            row[size] = {"right": right, "top1": right / len(links), "top1_ci": wilson(right, len(links))}
        report["forms"][form] = row
        cells = [f"{row[s]['right']} / {len(links)} ({100 * row[s]['top1']:.1f}%)" for s in ("250", "all")]
        print(f"| {form} | {' | '.join(cells)} |")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
