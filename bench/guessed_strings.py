"""What guessing string values from the request saves (prompt-lookup decoding, ``decoding.py``).

Inside a string the decoder feeds the request's next tokens as a guess together with the model's own
token and keeps the guessed tokens the model would have chosen itself. Same model, same engine, same
requests (GitHub dev queries with their labelled tool, as ``eval args --gold-tool``), each generated
with guessing and without, one right after the other, each computing the prompt from the warm system
prefix (``PrefixArena.forget_after``: the second would otherwise find the whole prompt warm and decode
its last token alone, which rounds differently): decode time per call (median, bootstrap 95% CI)
and the ratio, the decodes (model steps) per call, how many guessed tokens were kept, and whether both
ways wrote the same arguments (a batch's logits may differ from one-by-one logits in the last bits, so
a near-tie can tip; the figures say how often).

    python bench/guessed_strings.py [--n 83] [--part odd] [--threads 2] [--json bench/results/guessed_strings.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from nexus_gateway.arguments import ArgumentGenerator
from nexus_gateway.engine import EngineSettings, LlamaEngine
from nexus_gateway.eval_args import score_arguments
from nexus_gateway.evaluation import bootstrap_median_ci
from nexus_gateway.model_store import DEFAULT_MODEL, lookup, model_path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=83)
    parser.add_argument("--part", choices=["odd", "even", "all"], default="odd")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--json", default="bench/results/guessed_strings.json")
    args = parser.parse_args()
    tools = {t["name"]: t for t in json.loads((SHARED / "registries/github-mcp.json").read_text())}
    lines = (SHARED / "queries/github-dev.jsonl").read_text().splitlines()
    queries = [json.loads(x) for x in lines if x.strip()]
    queries = {"odd": queries[1::2], "even": queries[0::2], "all": queries}[args.part][: args.n]
    engine = LlamaEngine(EngineSettings(args.model, n_threads=args.threads))
    guessing, plain = ArgumentGenerator(engine, guess=True), ArgumentGenerator(engine, guess=False)
    guessing.warm(chooser=False)
    rows: dict[str, list[float]] = {"guessing": [], "plain": []}
    steps: dict[str, list[int]] = {"guessing": [], "plain": []}
    guessed = kept = same = 0
    scores = {"guessing": [0, 0], "plain": [0, 0]}
    for number, query in enumerate(queries, 1):
        tool = tools[query["gold_tool"]]
        call = (tool["name"], tool["inputSchema"], tool["description"], query["query"])
        order = (("guessing", guessing), ("plain", plain)) if number % 2 else (("plain", plain), ("guessing", guessing))
        done = {}
        for name, generator in order:
            engine.arena.forget_after(generator.prefix_tokens)  # both compute the same prompt from the prefix
            done[name] = generator.generate(*call)
            rows[name].append(done[name].timings_ms["decode"])
            right, total = score_arguments(done[name].arguments, query, tool["name"])
            scores[name][0] += right
            scores[name][1] += total
        g, p = done["guessing"], done["plain"]
        # model steps: every chosen token is one decode without guessing; with it, a kept guess rides along
        steps["plain"].append(p.chosen_tokens)
        steps["guessing"].append(g.chosen_tokens - g.guessed_tokens[1])
        guessed += g.guessed_tokens[0]
        kept += g.guessed_tokens[1]
        same += g.raw == p.raw
        sys.stderr.write(
            f"[{number}/{len(queries)}] {tool['name']}: {rows['guessing'][-1]:.0f} vs {rows['plain'][-1]:.0f} ms, "
            f"guessed {g.guessed_tokens[0]} kept {g.guessed_tokens[1]}{'' if g.raw == p.raw else ', DIFFERENT'}\n"
        )
        if g.raw != p.raw:
            sys.stderr.write(f"    guessing {g.raw}\n    plain    {p.raw}\n")
    result: dict[str, object] = {"n": len(queries), "part": args.part, "threads": args.threads}
    result["model"] = Path(args.model).name
    print(f"{'decoder':<12}{'decode ms p50':>14}{'95% CI':>18}{'model steps p50':>17}")
    for name in ("guessing", "plain"):
        median = float(np.median(rows[name]))
        low, high = bootstrap_median_ci(rows[name])
        result[name] = {"decode_ms": median, "decode_ms_ci": [low, high], "steps": float(np.median(steps[name]))}
        result[name]["arguments_right"] = scores[name][0] / max(scores[name][1], 1)  # type: ignore[index]
        print(f"{name:<12}{median:>14.0f}{f'[{low:.0f}, {high:.0f}]':>18}{np.median(steps[name]):>17.0f}")
    ratios = np.array(rows["plain"]) / np.array(rows["guessing"])
    result["ratio_p50"] = float(np.median(ratios))
    result["ratio_p50_ci"] = list(bootstrap_median_ci(ratios.tolist()))
    result["decode_ms_total"] = {name: float(np.sum(rows[name])) for name in rows}
    result["guessed_tokens"], result["kept_tokens"], result["same_arguments"] = guessed, kept, same
    print(
        f"plain / guessing, per call: {result['ratio_p50']:.2f}x [{result['ratio_p50_ci'][0]:.2f}, "  # type: ignore[index]
        f"{result['ratio_p50_ci'][1]:.2f}]; guessed {guessed} tokens, kept {kept}; "  # type: ignore[index]
        f"same arguments {same} of {len(queries)}; arguments right {scores['guessing'][0]} / {scores['plain'][0]} "
        f"of {scores['plain'][1]} (guessing / plain)"
    )
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
