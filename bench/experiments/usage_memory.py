"""Experiment: a memory of requests the host resolved before, as a bonus for their tools
(docs/routing.md, "What did not help").

The gateway could remember each request whose tool the host settled (a ``search_tools`` query and the
``call_tool`` that followed it, or a successful ``call``) and, for a new request, lift the tool of
the nearest remembered one. Simulated here: one half's requests with their labelled tools stand for the
remembered ones, the other half is routed with the shipped router plus the bonus, and the other way
round. BFCL asks about the same function two or three times, the situation where a memory should pay
(the query adapter of ``query_adapter.py`` gained there only on such requests); GitHub's requests
each ask something new.

Bonus for the tool of each remembered request whose cosine s to the new one is above t: ``lin``
w · (s − t), ``step`` w, the best remembered request per tool.

    python bench/experiments/usage_memory.py
"""

from __future__ import annotations

from typing import Any

import numpy as np
from query_adapter import rows_for
from shipped import S

from nexus_gateway.evaluation import load_queries, load_registries


def routed(rows: list[dict[str, Any]], remembered: list[int], asked: list[int], t: float, w: float, lin: bool) -> Any:
    vectors = np.stack([rows[i]["qv"] for i in remembered])
    labels = [rows[i]["gold"] for i in remembered]
    right = []
    for i in asked:
        row = rows[i]
        position = {uid: k for k, uid in enumerate(row["ids"])}
        bonus = np.zeros(len(row["ids"]))
        for similarity, label in zip(vectors @ row["qv"], labels, strict=True):
            if label in position and similarity > t:
                bonus[position[label]] = max(bonus[position[label]], similarity - t if lin else 1.0)
        right.append(row["ids"][int(np.argmax(row["base"] + w * bonus))] in row["acc"])
    return np.array(right)


def main() -> None:
    sets = (
        ("BFCL, 2,555 functions", ["bfcl-functions.json"], "bfcl-dev.jsonl", None),
        ("GitHub + pool, N = 250", ["github-mcp.json", "mcp-pool.json"], "github-dev.jsonl", 250),
    )
    for title, files, query_file, size in sets:
        rows = rows_for(files, query_file, size)
        tools = load_registries([str(S / "registries" / f) for f in files])
        for row, query in zip(rows, load_queries(S / "queries" / query_file), strict=True):
            row["gold"] = next((i for i in row["acc"] if tools[i].name == query["gold_tool"]), min(row["acc"]))
        even, odd = list(range(0, len(rows), 2)), list(range(1, len(rows), 2))
        seen = {rows[i]["gold"] for i in even}
        known = np.array([bool(rows[i]["acc"] & seen) for i in odd])
        plain_odd, plain_even = routed(rows, even, odd, 2.0, 0, True), routed(rows, odd, even, 2.0, 0, True)
        print(f"{title}: router odd {plain_odd.sum()} / even {plain_even.sum()} of {len(odd)} / {len(even)}; "
              f"{known.sum()} odd requests have their tool among the even half's")  # fmt: skip
        for lin, weights in ((True, (0.5, 1, 2, 4)), (False, (0.05, 0.1, 0.2, 0.5))):
            for t in (0.7, 0.75, 0.8, 0.85, 0.9):
                for w in weights:
                    odd_right = routed(rows, even, odd, t, w, lin)
                    even_right = routed(rows, odd, even, t, w, lin)
                    print(
                        f"  {'lin' if lin else 'step'} t {t} w {w}: odd {odd_right.sum()} "
                        f"(+{(odd_right & ~plain_odd).sum()} −{(~odd_right & plain_odd).sum()}; seen tools "
                        f"{odd_right[known].mean():.3f} vs {plain_odd[known].mean():.3f}, unseen "
                        f"{odd_right[~known].mean():.3f} vs {plain_odd[~known].mean():.3f}), even {even_right.sum()} "
                        f"(+{(even_right & ~plain_even).sum()} −{(~even_right & plain_even).sum()})"
                    )


if __name__ == "__main__":
    main()
