"""Which request words the BM25 typo corrector changes, with and without the embedder's whole words as
real words that are no typos (session 43, docs/routing.md): per dev set, the words it corrected before
and how many of them it now leaves alone.

    python bench/experiments/corrected_words.py [--shared ../shared/data] [--show]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nexus_gateway.embedder import Embedder
from nexus_gateway.lexical import QUERY_STOPWORDS, BM25Index, LexicalDocument, tokenize, without_values

REPO = Path(__file__).resolve().parents[2]


def changes(tools: list[dict], requests: list[str], words: frozenset[str]) -> tuple[set[str], set[tuple]]:
    """The words the plain corrector changes, and (word, plain, with whole words) where the two differ."""
    docs = [
        LexicalDocument.of_tool(t["name"], t.get("description") or "", t.get("inputSchema")).tokens() for t in tools
    ]
    plain, known = BM25Index(docs), BM25Index(docs, known_words=words)
    corrected, differ = set(), set()
    for request in requests:
        for token in dict.fromkeys(tokenize(without_values(request), QUERY_STOPWORDS)):
            if token in plain.postings:
                continue
            before, after = plain.correct(token), known.correct(token)
            if before:
                corrected.add(token)
            if before != after:
                differ.add((token, before, after))
    return corrected, differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--show", action="store_true", help="print each word that changed")
    args = parser.parse_args()
    shared = Path(args.shared)

    def registry(name: str) -> list[dict]:
        return json.loads((shared / "registries" / name).read_text())

    def queries(path: Path) -> list[str]:
        return [json.loads(line)["query"] for line in path.read_text().splitlines() if line.strip()]

    sets = {
        "GitHub + irrelevant over GitHub + pool": (
            registry("github-mcp.json") + registry("mcp-pool.json"),
            queries(shared / "queries" / "github-dev.jsonl") + queries(shared / "queries" / "irrelevant-dev.jsonl"),
        ),
        "local set over the local servers": (
            json.loads((REPO / "tests" / "fixtures" / "local_registry.json").read_text()),
            queries(REPO / "bench" / "data" / "local-dev.jsonl"),
        ),
        "BFCL over its functions": (registry("bfcl-functions.json"), queries(shared / "queries" / "bfcl-dev.jsonl")),
    }
    words = Embedder().whole_words
    for label, (tools, requests) in sets.items():
        corrected, differ = changes(tools, requests, words)
        print(f"{label}: {len(corrected)} words corrected, {len(differ)} of them no longer or otherwise")
        for token, before, after in sorted(differ) if args.show else []:
            print(f"    {token}: {before} -> {after}")


if __name__ == "__main__":
    main()
