"""Experiment behind ``SessionWindow.carried_slots``: a follow-up that points back ("close it", "open
that file") and names no repository, number, path or URL of its own is routed as if it named the slot
kinds of its window's requests (docs/routing.md, "What helped").

Benefit: the GitHub dialogues' turns after the first, routed among the 117 GitHub tools and among all
1,317 (GitHub + pool), the window holding the earlier requests. Cost: each of the 166 single GitHub
dev requests routed after one unrelated turn (another GitHub request, or a BFCL request, drawn at
random), which a request with "it" or "my" would wrongly inherit from.

    python bench/experiments/carried_slots.py

Since session 55 it also prints what a result that numbers its record costs those single requests
(``SessionWindow.carried_slots`` carries a number after one).
"""

from __future__ import annotations

import random

import numpy as np
import orjson
from shipped import S, shipped

from nexus_gateway.cache import RegistryCache
from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import load_queries, sign_test_p
from nexus_gateway.window import SessionWindow


def window_of(intents: list[str], result: str = "{}") -> SessionWindow:
    window = SessionWindow()
    for intent in intents:
        window.add(intent, "", {}, result)
    return window


# A result that numbers its record, as an opened issue's does: since session 55 a follow-up that points back
# after it carries a number too.
NUMBERED = '{"id": 3300112233, "number": 73}'


class Routed:
    """One registry's router, asked with and without the slot kinds a window carries."""

    def __init__(self, files: list[str], embedder: Embedder, cache: RegistryCache) -> None:
        setup = shipped(files, embedder, cache)
        self.tools = setup.tools
        self.router = setup.whole_router()
        self.embedder = embedder
        self.vectors: dict[str, np.ndarray] = {}

    def right(self, intent: str, window: SessionWindow, acceptable: list[str], carry: bool) -> bool:
        if intent not in self.vectors:
            self.vectors[intent] = self.embedder.embed_query(intent)
        carried = window.carried_slots(intent) if carry else frozenset()
        chosen = self.router.route_vector(intent, self.vectors[intent], carried=carried, allow_rerank=False).chosen
        if chosen is None:
            return False
        tool = self.tools[int(chosen)]
        return tool.file == 0 and tool.name in acceptable

    def compare(
        self,
        cases: list[tuple[str, SessionWindow, list[str]]],
        against: list[tuple[str, SessionWindow, list[str]]] | None = None,
    ) -> str:
        """Right before (no slots carried, or with ``against``'s windows carried) and after (carried)."""
        if against is None:
            before = [self.right(i, w, a, False) for i, w, a in cases]
        else:
            before = [self.right(i, w, a, True) for i, w, a in against]
        after = [self.right(i, w, a, True) for i, w, a in cases]
        fixed = sum(a and not b for a, b in zip(after, before, strict=True))
        broken = sum(b and not a for a, b in zip(after, before, strict=True))
        p = sign_test_p(fixed, broken)
        return f"{sum(before)} → {sum(after)} of {len(cases)} (fixed {fixed}, broken {broken}; sign test p = {p:.3f})"


def main() -> None:
    embedder, cache = Embedder(), RegistryCache()
    dialogues = [orjson.loads(line) for line in (S / "queries/github-dialogues-dev.jsonl").read_bytes().splitlines()]
    singles = load_queries(S / "queries/github-dev.jsonl")
    rng = random.Random(0)
    unrelated = {
        "another GitHub request": [rng.choice(singles)["query"] for _ in singles],
        "a BFCL request": [rng.choice(load_queries(S / "queries/bfcl-dev.jsonl"))["query"] for _ in singles],
    }
    follow_ups: list[tuple[str, SessionWindow, list[str]]] = []
    for dialogue in dialogues:
        asked = [turn["query"] for turn in dialogue["turns"]]
        for index, turn in enumerate(dialogue["turns"][1:], 1):
            follow_ups.append((turn["query"], window_of(asked[:index]), turn["acceptable_tools"]))
    for files, label in (
        (["github-mcp.json"], "117 GitHub tools"),
        (["github-mcp.json", "mcp-pool.json"], "all 1,317"),
    ):
        routed = Routed(files, embedder, cache)
        print(f"{label}: dialogue follow-ups {routed.compare(follow_ups)}")
        for kind, earlier in unrelated.items():
            cases = [(q["query"], window_of([e]), q["acceptable_tools"]) for q, e in zip(singles, earlier, strict=True)]
            print(f"  single requests after {kind}: {routed.compare(cases)}")
        # the cost of the numbered-result rule: the same requests after the same unrelated GitHub requests,
        # their result numbering a record against an empty one, both with the window's slots carried
        earlier = unrelated["another GitHub request"]
        numbered = [
            (q["query"], window_of([e], NUMBERED), q["acceptable_tools"]) for q, e in zip(singles, earlier, strict=True)
        ]
        empty = [(q["query"], window_of([e]), q["acceptable_tools"]) for q, e in zip(singles, earlier, strict=True)]
        print(f"  … after a GitHub request whose result numbers a record: {routed.compare(numbered, empty)}")


if __name__ == "__main__":
    main()
