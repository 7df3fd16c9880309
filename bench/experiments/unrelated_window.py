"""Does an unrelated earlier turn in the prompt cost arguments? (session 41)

In a real session most requests do not point back ("what time is it in Tokyo", then "convert 9am London
time to New York"), and what an earlier turn says can never reach such a request's call: grounding takes
values from the window only when the request refers back (``window.refers_back``). Up to session 40 the
0.5B model still read the window and copied from it (``source_timezone: "Asia/Tokyo"``, then dropped: a
question where a call was due); since session 41 a request is read alone, and with the earlier turns
only when it points back and leaves a required argument unsaid. Each
request of a half is generated with the labelled tool twice: by the gateway's generator after the half's
previous request as one earlier turn (its labelled tool and arguments, a stub result), and alone. Run it
in a checkout of an older revision (``PYTHONPATH=<worktree>``) for that revision's first column.

    python bench/experiments/unrelated_window.py --part odd|even [--registry … --queries …] [--limit N] \\
        --json bench/results/unrelated-window-<part>.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from labelled import add_options, labelled

from nexus_gateway import __file__ as generator_file
from nexus_gateway.eval_args import labels, score_arguments
from nexus_gateway.evaluation import gold_tool
from nexus_gateway.window import SessionWindow, refers_back


def main() -> int:
    parser = argparse.ArgumentParser()
    add_options(parser)
    args = parser.parse_args()
    evaluation, queries = labelled(args.registry, args.queries, args.part, args.limit)
    totals: dict[str, list[int]] = {"after an unrelated turn": [0, 0], "alone": [0, 0]}
    rows: list[dict[str, Any]] = []
    for previous, query in zip(queries[-1:] + queries[:-1], queries, strict=True):
        window = SessionWindow()
        before = gold_tool(previous)
        window.add(previous["query"], before, labels(previous, before), {"ok": True})
        tool = gold_tool(query)
        after_turn = evaluation.generate(tool, query["query"], window).arguments
        alone = evaluation.generate(tool, query["query"], None).arguments
        scores = {}
        for side, got in (("after an unrelated turn", after_turn), ("alone", alone)):
            right, total = score_arguments(got, query, tool)
            totals[side][0] += right
            totals[side][1] += total
            scores[side] = (right, total)
        if after_turn != alone:
            points_back = refers_back(query["query"])
            row = {"id": query["id"], "refers_back": points_back, "after_turn": after_turn, "alone": alone}
            rows.append({**row, "scores": scores})
            print(f"{query['id']} refers_back={points_back} {scores}\n  {after_turn}\n  {alone}")
    for side, (right, total) in totals.items():
        print(f"{side:>24}: {right}/{total} arguments right ({right / max(total, 1):.1%})")
    if args.json:
        code = Path(generator_file).parent
        rev = subprocess.run(["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "-C", str(code), "status", "--porcelain", "nexus_gateway"], capture_output=True, text=True
        )
        head = rev.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")
        document = {"rev": head, "part": args.part, "totals": totals, "changed": rows}
        Path(args.json).write_text(json.dumps(document, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
