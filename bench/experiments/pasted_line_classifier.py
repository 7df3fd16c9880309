"""A learned line classifier for pasted material, against the hand rules of ``nexus_gateway/pasted.py``.

Session 60 left one idea for the blocks the rules leave whole (Gradle's "* What went wrong:", mypy's
"Found 2 errors in 1 file", pip's "The conflict is caused by:"): a classifier trained on the block lines of
``pasted_material.py``'s five sets against the lines of the dev requests. This script measures it the way
the rules were measured, each block set held out in turn:

- positives: every line of the held-out set's blocks; negatives: every line of the dev requests (GitHub,
  its dialogues, the irrelevant set, BFCL, the local set), split into five folds by a hash of the line, the
  held-out fold's lines tested, the other four trained on;
- features: character 2–4-grams of the line with its digits as 0, hashed into 2^14 columns (L2-normed),
  and seven shape features (leading indentation, shares of letters, digits and punctuation, a closing
  colon, a path, the line's length); logistic regression by full-batch gradient descent with L2 and the
  two classes weighted alike;
- the threshold: the score that keeps the false positives on the *training* negatives at or below
  ``--fp`` (default 0.2%): a request line read as pasted loses what the user asked;
- reported per held-out set: block lines caught by the rules (``split_pasted``, the lines it cuts from
  "Star octo-org/app for me" + a blank line + the block), by the classifier, and by either; the request
  lines the classifier would cut; and the lines the rules miss, with the classifier's verdict.

    python bench/experiments/pasted_line_classifier.py [--fp 0.002] [--json OUT]

numpy only; nothing of it ships.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
from decisions_ab import ROOT, S
from pasted_material import SETS

from nexus_gateway.evaluation import wilson
from nexus_gateway.pasted import split_pasted

BUCKETS = 1 << 14
FOLDS = 5
REQUEST = "Star octo-org/app for me"


def request_lines() -> list[str]:
    """Every non-empty line of every dev request (a dialogue's turns too), once each."""
    texts: list[str] = []
    for name in ("github-dev.jsonl", "irrelevant-dev.jsonl", "bfcl-dev.jsonl", "github-dialogues-dev.jsonl"):
        for line in (S / "queries" / name).read_text().splitlines():
            record = json.loads(line)
            if "query" in record:
                texts.append(record["query"])
            texts += [turn["query"] for turn in record.get("turns", [])]
    for line in (ROOT / "bench" / "data" / "local-dev.jsonl").read_text().splitlines():
        texts.append(json.loads(line)["query"])
    lines = [line for text in texts for line in text.split("\n") if line.strip()]
    return list(dict.fromkeys(lines))


def _bucket(gram: str) -> int:
    return int.from_bytes(hashlib.blake2b(gram.encode(), digest_size=4).digest(), "little") % BUCKETS


def features(line: str) -> np.ndarray:
    """Hashed character 2–4-grams (digits as 0), L2-normed, then seven shape features."""
    text = f"^{re.sub(r'[0-9]', '0', line.rstrip())}$"
    grams = np.zeros(BUCKETS, dtype=np.float32)
    for n in (2, 3, 4):
        for start in range(len(text) - n + 1):
            grams[_bucket(text[start : start + n])] += 1
    grams /= max(float(np.linalg.norm(grams)), 1e-9)
    stripped = line.strip()
    size = max(len(stripped), 1)
    shape = [
        float(bool(re.match(r"^(?:\t| {2,})\S", line))),
        sum(c.isalpha() for c in stripped) / size,
        sum(c.isdigit() for c in stripped) / size,
        sum(not c.isalnum() and not c.isspace() for c in stripped) / size,
        float(stripped.endswith(":")),
        float(bool(re.search(r"\w/\w|\\\w", stripped))),
        min(len(stripped), 200) / 200,
    ]
    return np.concatenate([grams, np.array(shape, dtype=np.float32)])


def train(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 400, rate: float = 2.0) -> np.ndarray:
    """Logistic regression, full-batch gradient descent, classes weighted alike; the last weight is the bias."""
    design = np.hstack([x, np.ones((len(x), 1), dtype=np.float32)])
    weight = np.where(y == 1, 0.5 / max(int(y.sum()), 1), 0.5 / max(int((1 - y).sum()), 1)).astype(np.float32)
    w = np.zeros(design.shape[1], dtype=np.float32)
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(design @ w)))
        gradient = design.T @ (weight * (p - y)) + l2 * np.concatenate([w[:-1], [0]])
        w -= rate * gradient.astype(np.float32)
    return w


def scores(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.hstack([x, np.ones((len(x), 1), dtype=np.float32)]) @ w


def cut_by_rules(block: str) -> list[bool]:
    """Which of the block's non-empty lines the rules cut, beside a one-line request (``after`` form)."""
    pasted = split_pasted(f"{REQUEST}\n\n{block}")
    left = set(pasted.request.split("\n"))
    return [line not in left for line in block.split("\n") if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fp", type=float, default=0.002, help="false-positive share allowed on training negatives")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    negatives = request_lines()
    negative_x = np.stack([features(line) for line in negatives])
    fold_of = np.array([int(hashlib.sha1(line.encode()).hexdigest(), 16) % FOLDS for line in negatives])
    block_lines = {
        name: [(kind, line) for kind, block in blocks.items() for line in block.split("\n") if line.strip()]
        for name, blocks in SETS.items()
    }
    block_x = {name: np.stack([features(line) for _, line in lines]) for name, lines in block_lines.items()}
    rules = {name: [cut for block in blocks.values() for cut in cut_by_rules(block)] for name, blocks in SETS.items()}
    report: dict[str, Any] = {"negatives": len(negatives), "fp_allowed": args.fp, "sets": {}}
    print(f"{len(negatives)} request lines; threshold at {args.fp:.1%} false positives on the training ones\n")
    print("| held out | block lines | rules | classifier | either | request lines cut (of) |")
    print("|---|---|---|---|---|---|")
    for index, (name, lines) in enumerate(block_lines.items()):
        fold = index % FOLDS
        train_sets = [other for other in block_lines if other != name]
        positive_x = np.vstack([block_x[other] for other in train_sets])
        train_negative = negative_x[fold_of != fold]
        x = np.vstack([positive_x, train_negative])
        y = np.concatenate([np.ones(len(positive_x)), np.zeros(len(train_negative))]).astype(np.float32)
        w = train(x, y)
        threshold = float(np.quantile(scores(w, train_negative), 1 - args.fp))
        held_scores = scores(w, block_x[name])
        caught = held_scores > threshold
        test_negative = scores(w, negative_x[fold_of == fold]) > threshold
        by_rules = np.array(rules[name])
        either = caught | by_rules
        cut_lines = [line for line, cut in zip(np.array(negatives)[fold_of == fold], test_negative, strict=True) if cut]
        missed = [
            {"block": kind, "line": line, "classifier": bool(c)}
            for (kind, line), c, r in zip(lines, caught, by_rules, strict=True)
            if not r
        ]
        report["sets"][name] = {
            "block_lines": len(lines),
            "rules": int(by_rules.sum()),
            "classifier": int(caught.sum()),
            "either": int(either.sum()),
            "request_lines": len(test_negative),
            "request_lines_cut": int(test_negative.sum()),
            "request_lines_cut_ci": wilson(int(test_negative.sum()), len(test_negative)),
            "cut_examples": cut_lines[:10],
            "missed_by_rules": missed,
        }
        print(
            f"| {name} | {len(lines)} | {int(by_rules.sum())} | {int(caught.sum())} | {int(either.sum())} | "
            f"{int(test_negative.sum())} ({len(test_negative)}) |"
        )
    for name, row in report["sets"].items():
        for miss in row["missed_by_rules"]:
            verdict = "caught" if miss["classifier"] else "missed"
            print(f"{name}: rules miss, classifier {verdict}: {miss['block']}: {miss['line'][:90]!r}")
        for line in row["cut_examples"]:
            print(f"{name}: request line cut: {line[:100]!r}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
