"""Every routing decision on the dev sets, with calibrations held fixed: the A/B behind "n fixed, m broken".

    python bench/experiments/decisions_ab.py OUT [--calibrations-from REV]
    python bench/experiments/decisions_ab.py --diff A B

The first form runs ``nexus-gateway eval routing --cases`` four times, with the weights of the calibrations
stored in ``bench/results`` (or as they were at git revision REV, so that a change is measured before its
refit moves them): the GitHub dev requests (all 166) over the GitHub tools and the pool at N = 10, 50, 250 and
all tools (a small registry lacks the words a large one has: session 52's first cut of a rule moved nothing at
250 and broke a request at 10); the same requests and the irrelevant ones against the 117 GitHub tools; BFCL's
(all 956) over its 2,555 functions; and the local set, uncalibrated as `bench/run_routing_eval.sh` routes it.
It writes ``OUT-github.jsonl``, ``OUT-irrelevant.jsonl``, ``OUT-bfcl.jsonl`` and ``OUT-local.jsonl``. The
second form prints each decision that differs between two such runs, fixed, broken or moved (wrong to another
wrong).
Run the first form on both sides of a change (``git stash``, or a worktree), then the second.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from nexus_gateway.eval_cli import CALIBRATION_FLAGS

ROOT = Path(__file__).resolve().parents[2]
S = ROOT.parent / "shared" / "data"
SETS = {
    "github": (
        "calibration-github.json",
        ["github-mcp.json", "mcp-pool.json"],
        "github-dev.jsonl",
        "10,50,250,all",
        [],
    ),
    "irrelevant": ("calibration-github-only.json", ["github-mcp.json"], "github-dev.jsonl", "all", ["irrelevant"]),
    "bfcl": ("calibration-bfcl.json", ["bfcl-functions.json"], "bfcl-dev.jsonl", "all", []),
}


def calibration(name: str, revision: str | None) -> dict[str, float]:
    path = f"bench/results/{name}"
    if revision is None:
        return json.loads((ROOT / path).read_text())
    shown = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(shown.stdout)


def routing_command(weights: dict[str, float], registries: list[str], queries: Path, sizes: str) -> list[str]:
    """``eval routing`` over shared registries with a stored calibration's weights, the gate off (the
    caller adds ``--cases`` and any other flag)."""
    command = ["nexus-gateway", "eval", "routing", "--queries", str(queries), "--sizes", sizes]
    for registry in registries:
        command += ["--registry", str(S / "registries" / registry)]
    for key in CALIBRATION_FLAGS:
        command += [f"--{key.replace('_', '-')}", str(weights[key])]
    return [*command, "--rerank-weight", "0", "--no-rerank"]


def run(out: str, revision: str | None) -> None:
    for label, (stored, registries, queries, sizes, extra) in SETS.items():
        command = routing_command(calibration(stored, revision), registries, S / "queries" / queries, sizes)
        if extra:
            command += ["--irrelevant", str(S / "queries" / "irrelevant-dev.jsonl")]
        command += ["--cases", f"{out}-{label}.jsonl"]
        subprocess.run(command, cwd=ROOT, check=True)
    local = ["nexus-gateway", "eval", "routing", "--registry", "tests/fixtures/local_registry.json"]
    local += ["--queries", "bench/data/local-dev.jsonl", "--sizes", "all", "--no-rerank"]
    local += ["--cases", f"{out}-local.jsonl"]
    subprocess.run(local, cwd=ROOT, check=True)


def diff(before: str, after: str) -> None:
    for label in (*SETS, "local"):
        cases = [
            {(c["size"], c["id"]): c for c in map(json.loads, Path(f"{side}-{label}.jsonl").read_text().splitlines())}
            for side in (before, after)
        ]
        fixed = broken = 0
        for key, old in cases[0].items():
            new = cases[1][key]
            if old["chosen"] == new["chosen"] and old["right"] == new["right"]:
                continue
            verdict = "FIXED" if new["right"] > old["right"] else "BROKEN" if old["right"] > new["right"] else "moved"
            fixed += verdict == "FIXED"
            broken += verdict == "BROKEN"
            print(f"{label} N={key[0]} {key[1]} {verdict}: {old['query'][:70]!r} {old['chosen']} -> {new['chosen']}")
        print(f"{label}: {fixed} fixed, {broken} broken")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?")
    parser.add_argument("--calibrations-from", metavar="REV")
    parser.add_argument("--diff", nargs=2, metavar=("A", "B"))
    args = parser.parse_args()
    if args.diff:
        diff(*args.diff)
    elif args.out:
        run(args.out, args.calibrations_from)
    else:
        parser.error("give OUT, or --diff A B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
