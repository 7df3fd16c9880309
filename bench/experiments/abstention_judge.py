"""Experiment: the local LLM as an abstention judge (docs/routing.md, "Other abstention scores").

    python bench/experiments/abstention_judge.py [--model GGUF] [--k 3] [--cache FILE]

All 166 GitHub dev requests (answerable) and the 20 of ``irrelevant-dev.jsonl``, routed among the 117
GitHub tools with the stored calibration. For each of the router's top ``k`` candidates the model reads
the tool's server, typed signature and description and the request, and answers "yes" or "no" to
whether the tool can do what the request asks; the judge's score is the best candidate's log-odds of
"yes". Abstain when the fused score is below the calibrated floor or the judge's score below a
threshold; the threshold is the largest at which at most 3% of the even half's answerable requests
abstain in all, and the figures are the odd half's answerable requests and the 20 irrelevant ones.
Then the judge added to the fused score at a few weights, the floor refitted at the even half's 3rd
percentile (the calibration's rule). Results in docs/routing.md: the 1.5B model separates the two
sets (AUC 0.90-0.92) but not at the 3% operating point; the 0.5B model does not separate them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from abstention_scores import github_router

from nexus_gateway.evaluation import embed_queries, load_queries
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path
from nexus_gateway.signature import signature

S = Path(__file__).resolve().parents[3] / "shared" / "data"
SYSTEM = "You decide whether a tool can carry out a user's request."
ASK = (
    "Server: {server}\nTool: {tool}\n\nRequest: {request}\n\n"
    "Can this tool, on this server, do exactly what the request asks? Answer yes or no."
)


def prompt(server: str, tool: str, request: str) -> str:
    user = ASK.format(server=server, tool=tool, request=request)
    return f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--cache", default="")
    args = parser.parse_args()
    tools, embedder, router = github_router()
    answerable = load_queries(S / "queries/github-dev.jsonl")
    irrelevant = load_queries(S / "queries/irrelevant-dev.jsonl", answerable=False)
    queries = answerable + irrelevant
    routed = [
        router.route_vector(q["query"], v, limit=args.k, allow_rerank=False)
        for q, v in zip(queries, embed_queries(embedder, queries), strict=True)
    ]
    saved = Path(args.cache) if args.cache else None
    judged: dict[str, list[float]] = json.loads(saved.read_text()) if saved and saved.exists() else {}
    if len(judged) < len(queries):
        import llama_cpp

        llm = llama_cpp.Llama(model_path=args.model, n_ctx=1024, n_threads=2, verbose=False, logits_all=True)
        yes = [llm.tokenize(w.encode(), add_bos=False, special=False)[0] for w in ("yes", "Yes")]
        no = [llm.tokenize(w.encode(), add_bos=False, special=False)[0] for w in ("no", "No")]
        started = time.perf_counter()
        for done, (query, result) in enumerate(zip(queries, routed, strict=True), 1):
            odds = []
            for candidate in result.candidates[: args.k]:
                tool = tools[int(candidate.id)]
                text = prompt(tool.server, signature(tool.name, tool.schema, tool.description), query["query"])
                llm.reset()
                llm.eval(llm.tokenize(text.encode(), add_bos=False, special=True))
                logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float64)
                odds.append(float(np.logaddexp.reduce(logits[yes]) - np.logaddexp.reduce(logits[no])))
            judged[query["id"]] = odds
            if done % 20 == 0:
                rate = (time.perf_counter() - started) / done
                print(f"[{done}/{len(queries)}] {rate:.2f} s/request", file=sys.stderr)
        if saved:
            saved.write_text(json.dumps(judged))
    fused = np.array([r.candidates[0].score for r in routed])
    judge = np.array([max(judged[q["id"]]) for q in queries])
    top1_judge = np.array([judged[q["id"]][0] for q in queries])
    n = len(answerable)
    even, odd, other = np.arange(0, n, 2), np.arange(1, n, 2), np.arange(n, len(queries))
    floor = router.calibration.floor
    print(
        f"floor {floor:.3f}: odd answerable abstain {np.mean(fused[odd] < floor):.1%}, "
        f"irrelevant caught {np.mean(fused[other] < floor):.0%}"
    )
    for label, score in (("best of top-k", judge), ("top-1", top1_judge)):
        a, i = score[:n], score[n:]
        auc = (a[:, None] > i[None, :]).mean() + 0.5 * (a[:, None] == i[None, :]).mean()
        budget = int(np.floor(0.03 * len(even)))
        candidates = sorted(set(score.tolist()))
        best = -np.inf
        for t in candidates:
            abstain = (fused[even] < floor) | (score[even] < t)
            if abstain.sum() <= budget:
                best = t
        abstain_odd = (fused[odd] < floor) | (score[odd] < best)
        caught = (fused[other] < floor) | (score[other] < best)
        print(
            f"judge {label}: AUC {auc:.3f}; threshold {best:.2f} -> odd answerable abstain "
            f"{abstain_odd.mean():.1%} ({abstain_odd.sum()}/{len(odd)}), irrelevant caught "
            f"{caught.mean():.0%} ({caught.sum()}/{len(other)})"
        )
        for q, s, f in zip(irrelevant, score[n:], fused[n:], strict=True):
            print(f"    {s:+.2f} fused {f:.3f} {q['query'][:80]}")
    print("fused + w x judge (best of top-k), floor refitted at the even half's 3rd percentile:")
    for weight in (0.0, 0.01, 0.02, 0.03, 0.05, 0.1):
        combined = fused + weight * np.clip(judge, -10, 10)
        refit = float(np.quantile(combined[even], 0.03))
        a, i = combined[:n], combined[n:]
        auc = (a[:, None] > i[None, :]).mean() + 0.5 * (a[:, None] == i[None, :]).mean()
        print(
            f"  w {weight}: AUC {auc:.3f}; odd answerable abstain {np.mean(combined[odd] < refit):.1%}, "
            f"irrelevant caught {np.mean(combined[other] < refit):.0%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
