"""Experiment: the placement rules against the labels, without a model (docs/arguments.md, session 13).

    python bench/experiments/placement_labels.py [--only gold,short-values,typo-keys]

- gold: every request's labelled arguments run through the placement rules of the request alone
  (``placement.place_stated`` without a window) must come out unchanged, on the GitHub requests with
  their dialogues and on BFCL; and from an empty object, the rules must write no value the label lacks
  or contradicts (one known: "a review from ivan-p" reads as a branch where the request also states
  ``head``, which the rule then keeps);
- short-values: enum values under four letters ("org", "asc") named when said as a whole word: which
  named values change, and whether the label has them (not kept: one right, two wrong);
- typo-keys: a key word named by a request word one edit away from its start ("asign" → ``assignees``):
  which named keys change, and whether the label has them (not kept: one right, three wrong).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nexus_gateway.mentions as mentions
from nexus_gateway.placement import place_stated

S = Path(__file__).resolve().parents[3] / "shared" / "data"
# a request, its labelled tool, and the acceptable values of each labelled argument (BFCL lists several;
# "" means the argument may be left out)
Item = tuple[str, str, dict[str, list[Any]]]


def labelled_call(acceptable: dict[str, list[Any]]) -> dict[str, Any]:
    """The first acceptable value of each argument that must or may be sent (an empty list states
    nothing, and the decoder never writes one)."""
    call = {}
    for key, values in acceptable.items():
        value = next((v for v in values if v != ""), None)
        if value is not None and value != []:
            call[key] = value
    return call


def accepted(key: str, value: Any, acceptable: dict[str, list[Any]]) -> bool:
    return value in acceptable.get(key, [])


def items(registry: str, queries: str, dialogues: str | None = None) -> tuple[dict[str, Any], list[Item]]:
    tools = {t["name"]: t for t in json.loads((S / "registries" / registry).read_text())}
    found: list[Item] = []
    for line in (S / "queries" / queries).read_text().splitlines():
        q = json.loads(line)
        acceptable = q.get("acceptable_arguments") or {k: [v] for k, v in (q.get("gold_arguments") or {}).items()}
        if q.get("gold_tool") in tools:
            found.append((q["query"], q["gold_tool"], acceptable))
    if dialogues:
        for line in (S / "queries" / dialogues).read_text().splitlines():
            for t in json.loads(line)["turns"]:
                found.append((t["query"], t["gold_tool"], {k: [v] for k, v in t["gold_arguments"].items()}))
    return tools, found


def gold() -> None:
    for registry, queries, dialogues in (
        ("github-mcp.json", "github-dev.jsonl", "github-dialogues-dev.jsonl"),
        ("bfcl-functions.json", "bfcl-dev.jsonl", None),
    ):
        tools, found = items(registry, queries, dialogues)
        changed = wrong = 0
        for query, tool, acceptable in found:
            schema = tools[tool]["inputSchema"]
            call = labelled_call(acceptable)
            placed = place_stated(dict(call), schema, query, tool, None)
            if any(not accepted(k, v, acceptable) for k, v in placed.items()) or placed.keys() < call.keys():
                changed += 1
                print(f"changed: {query[:90]!r} {call} -> {placed}")
            written = place_stated({}, schema, query, tool, None)
            extra = {k: v for k, v in written.items() if not accepted(k, v, acceptable)}
            if extra:
                wrong += 1
                print(f"from empty, not in the label: {query[:90]!r} {extra}")
        print(f"{registry}: {changed} of {len(found)} labelled calls changed, {wrong} written wrong from empty")


def compare(name: str, named: Callable[[dict[str, Any], str], Any], patch: Callable[[], None]) -> None:
    tools, found = items("github-mcp.json", "github-dev.jsonl", "github-dialogues-dev.jsonl")
    before = [named(tools[tool]["inputSchema"], query) for query, tool, _ in found]
    patch()
    right = wrong = 0
    for (query, tool, acceptable), old in zip(found, before, strict=True):
        new = named(tools[tool]["inputSchema"], query)
        if new != old:
            added = set(new) - set(old) if isinstance(new, set) else {k for k in new if new[k] != old.get(k)}
            good = all(k in acceptable for k in added) and bool(added)
            right, wrong = right + good, wrong + (not good)
            print(f"{query[:80]!r}: {old} -> {new}")
    print(f"{name}: {right} changed as the labels have it, {wrong} not")


def short_values() -> None:
    words = re.compile(r"[a-z0-9]+")
    original = mentions.names_value

    def names_value(value: Any, said: Callable[[str], bool]) -> bool:
        if isinstance(value, str) and len(value) < 4 and value.isalpha() and value.lower() not in mentions.STOPWORDS:
            return bool(getattr(said, "exact", lambda _: False)(value.lower()))
        return original(value, said)

    original_sayer = mentions.sayer

    def sayer(intent: str, typos: bool = False) -> Callable[[str], bool]:
        said = original_sayer(intent, typos)
        exact = set(words.findall(intent.lower()))
        said.exact = exact.__contains__  # type: ignore[attr-defined]
        return said

    def patch() -> None:
        mentions.names_value, mentions.sayer = names_value, sayer  # type: ignore[assignment]

    compare("short values", mentions.named_values, patch)


def typo_keys() -> None:
    def key_word_namer(intent: str, said: Callable[[str], bool]) -> Callable[[str], bool]:
        stems = [mentions.stem(w) for w in mentions._WORDS.findall(intent.lower()) if len(w) >= 5]

        def named(word: str) -> bool:
            return said(word) or any(
                word.startswith(s)
                or (
                    len(word) > len(s)
                    and (mentions._one_edit(word[: len(s)], s) or mentions._one_edit(word[: len(s) + 1], s))
                )
                for s in stems
            )

        return named

    def patch() -> None:
        mentions.key_word_namer = key_word_namer

    compare("typo keys", mentions.named_keys, patch)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="gold,short-values,typo-keys")
    chosen = parser.parse_args().only.split(",")
    for name, run in (("gold", gold), ("short-values", short_values), ("typo-keys", typo_keys)):
        if name in chosen:
            run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
