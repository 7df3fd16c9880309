"""BM25's k1 and b, and how often the tool name counts in the lexical document, with the stored
calibration's fusion weights held fixed (docs/routing.md, "BM25's k1").

Each setting is compared with the shipped one (k1 = 0.8, b = 0.75, name twice) request by request over
all dev requests, both halves: top-1 right, the decisions it fixes and breaks, and a one-sided sign test.

    python bench/experiments/lexical_params.py [--registry github|bfcl] [--bigrams]
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
from shipped import S, shipped

from nexus_gateway import lexical
from nexus_gateway.evaluation import (
    RoutingEvaluation,
    embed_queries,
    load_queries,
    sign_test_p,
)

SETS = {
    "github": (["github-mcp.json", "mcp-pool.json"], "github-dev.jsonl", [250, None]),
    "bfcl": (["bfcl-functions.json"], "bfcl-dev.jsonl", [None]),
}


def name_counted(times: int) -> Callable[[lexical.LexicalDocument], list[str]]:
    def tokens(self: lexical.LexicalDocument) -> list[str]:
        name = lexical.tokenize(self.name)
        rest = [self.description, " ".join(self.parameters), " ".join(self.enum_values)]
        return name * times + [token for text in rest for token in lexical.tokenize(text)]

    return tokens


def with_bigrams(text: str) -> list[str]:
    """A field's tokens and each pair of neighbours as one more term ("pull_request", "dependabot_alert")."""
    tokens = lexical.tokenize(text)
    return tokens + [f"{a}_{b}" for a, b in itertools.pairwise(tokens)]


def bigram_tokens(self: lexical.LexicalDocument) -> list[str]:
    name = with_bigrams(self.name)
    rest = [self.description, " ".join(self.parameters), " ".join(self.enum_values)]
    return name * 2 + [token for text in rest for token in with_bigrams(text)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--registry", choices=sorted(SETS), default="bfcl")
    parser.add_argument("--bigrams", action="store_true", help="only: neighbouring-word pairs as extra terms")
    args = parser.parse_args()
    files, query_file, sizes = SETS[args.registry]
    setup = shipped(files)
    tools, embedder, vectors, calibration = setup.tools, setup.embedder, setup.vectors, setup.calibration
    queries = load_queries(S / "queries" / query_file)
    query_vectors = embed_queries(embedder, queries)
    shipped_init, shipped_tokens = lexical.BM25Index.__init__, lexical.LexicalDocument.tokens

    def right(k1: float, b: float, tokens: Any) -> np.ndarray:
        def init(self: lexical.BM25Index, documents: Any, **_: Any) -> None:
            shipped_init(self, documents, k1=k1, b=b)

        lexical.BM25Index.__init__ = init  # type: ignore[method-assign]
        lexical.LexicalDocument.tokens = tokens  # type: ignore[method-assign]
        evaluation = RoutingEvaluation(tools, embedder, vectors, calibration, None)
        ok = []
        for size in sizes:
            for query, vector in zip(queries, query_vectors, strict=True):
                registry, accepted = evaluation.protocol.registry(query, size)
                result = evaluation.router(registry).route_vector(query["query"], vector, limit=3, allow_rerank=False)
                ok.append(int(result.candidates[0].id) in accepted)
        return np.array(ok)

    base = right(0.8, 0.75, shipped_tokens)
    if args.bigrams:
        shipped_terms = lexical.BM25Index.query_terms

        def terms(self: lexical.BM25Index, query: str) -> list[str]:
            words = shipped_terms(self, query)
            return words + [f"{a}_{b}" for a, b in itertools.pairwise(words)]

        lexical.BM25Index.query_terms = terms  # type: ignore[method-assign]
        ok = right(0.8, 0.75, bigram_tokens)
        lexical.BM25Index.query_terms = shipped_terms  # type: ignore[method-assign]
        fixed, broken = int((~base & ok).sum()), int((base & ~ok).sum())
        print(f"{args.registry}: shipped {base.sum()}, with bigrams {ok.sum()} of {len(ok)}: {fixed} fixed, "
              f"{broken} broken (p {sign_test_p(fixed, broken):.3f})")  # fmt: skip
        return
    settings = [(k1, 0.75, 2) for k1 in (1.2, 1.0, 0.6, 0.4)] + [(0.8, b, 2) for b in (0.5, 0.6, 0.9, 1.0)]
    settings += [(0.8, 0.75, 1), (0.8, 0.75, 3)]
    print(f"{args.registry}: shipped (k1 0.8, b 0.75, name twice) {base.sum()} of {len(base)} top-1")
    for k1, b, times in settings:
        ok = right(k1, b, name_counted(times))
        fixed, broken = int((~base & ok).sum()), int((base & ~ok).sum())
        print(
            f"k1 {k1} b {b} name x{times}: {ok.sum()} of {len(ok)}; against shipped {fixed} fixed, {broken} broken "
            f"(one-sided sign test p {sign_test_p(fixed, broken):.3f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
