"""What the decoder's two time savers buy: a choice fed together with the rest of the one option it
leaves (``merged``), and values guessed from the request and checked in a batch (``guessed``,
prompt-lookup decoding; ``docs/arguments.md``).

Same model, same engine, same requests (GitHub dev queries with their labelled tool, as ``eval args
--gold-tool``), each generated three ways one right after the other, in an order that rotates, each
computing its prompt from the warm system prefix (``PrefixArena.forget_after``: a later way would
otherwise find the whole prompt warm and decode its last token alone, which rounds differently):

- ``plain``: one decode per chosen token, forced tokens in their own batch;
- ``merged``: plus the choice and its option's rest in one batch;
- ``merged+guessed``: plus the guesses (what the gateway runs).

Per way: decode time per call (median, bootstrap 95% CI), the ratio to ``plain`` per call (median and
CI) and in total, batches decoded per call, arguments right (as ``eval args``), and for how many requests
the arguments equal ``plain``'s (a batch rounds differently from one-by-one decoding, so the 0.5B
model's near-ties can tip either way).

    python bench/decode_speed.py [--n 83] [--part odd] [--threads 2] [--json bench/results/decode_speed.json]
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
WAYS = {"plain": (False, False), "merged": (False, True), "merged+guessed": (True, True)}  # (guess, merge)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=83)
    parser.add_argument("--part", choices=["odd", "even", "all"], default="odd")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default=str(model_path(lookup(DEFAULT_MODEL))))
    parser.add_argument("--json", default="bench/results/decode_speed.json")
    args = parser.parse_args()
    tools = {t["name"]: t for t in json.loads((SHARED / "registries/github-mcp.json").read_text())}
    lines = (SHARED / "queries/github-dev.jsonl").read_text().splitlines()
    queries = [json.loads(x) for x in lines if x.strip()]
    queries = {"odd": queries[1::2], "even": queries[0::2], "all": queries}[args.part][: args.n]
    engine = LlamaEngine(EngineSettings(args.model, n_threads=args.threads))
    generators = {way: ArgumentGenerator(engine, guess=g, merge=m) for way, (g, m) in WAYS.items()}
    generators["plain"].warm(chooser=False)
    names = list(WAYS)
    decode_ms: dict[str, list[float]] = {way: [] for way in names}
    decodes: dict[str, list[int]] = {way: [] for way in names}
    right = dict.fromkeys(names, 0)
    same = dict.fromkeys(names, 0)
    labelled = guessed = kept = 0
    for number, query in enumerate(queries):
        tool = tools[query["gold_tool"]]
        call = (tool["name"], tool["inputSchema"], tool["description"], query["query"])
        done = {}
        for way in names[number % 3 :] + names[: number % 3]:
            engine.arena.forget_after(generators[way].prefix_tokens)  # every way computes the same prompt
            done[way] = generators[way].generate(*call)
            decode_ms[way].append(done[way].timings_ms["decode"])
            decodes[way].append(done[way].decodes)
            right[way] += score_arguments(done[way].arguments, query, tool["name"])[0]
        for way in names:
            same[way] += done[way].raw == done["plain"].raw
        labelled += score_arguments(done["plain"].arguments, query, tool["name"])[1]
        guessed += done["merged+guessed"].guessed_tokens[0]
        kept += done["merged+guessed"].guessed_tokens[1]
        sys.stderr.write(
            f"[{number + 1}/{len(queries)}] {tool['name']}: "
            + ", ".join(f"{way} {decode_ms[way][-1]:.0f} ms" for way in names)
            + "".join(f"; {way} DIFFERENT {done[way].raw}" for way in names[1:] if done[way].raw != done["plain"].raw)
            + "\n"
        )
    return report(args, queries, decode_ms, decodes, right, same, guessed, kept, labelled)


def report(
    args: argparse.Namespace,
    queries: list[dict[str, object]],
    decode_ms: dict[str, list[float]],
    decodes: dict[str, list[int]],
    right: dict[str, int],
    same: dict[str, int],
    guessed: int,
    kept: int,
    labelled: int,
) -> int:
    result: dict[str, object] = {"n": len(queries), "part": args.part, "threads": args.threads}
    result["model"] = Path(args.model).name
    plain = np.array(decode_ms["plain"])
    print(f"{'way':<16}{'decode ms p50':>14}{'95% CI':>18}{'vs plain p50':>14}{'95% CI':>16}{'total':>8}{'decodes':>9}")
    ways: dict[str, object] = {}
    for way, values in decode_ms.items():
        median = float(np.median(values))
        low, high = bootstrap_median_ci(values)
        ratios = plain / np.array(values)
        ratio_low, ratio_high = bootstrap_median_ci(ratios.tolist())
        row = {
            "decode_ms": median,
            "decode_ms_ci": [low, high],
            "ratio_p50": float(np.median(ratios)),
            "ratio_p50_ci": [ratio_low, ratio_high],
            "ratio_total": float(plain.sum() / np.sum(values)),
            "decodes_p50": float(np.median(decodes[way])),
            "arguments_right": right[way] / max(labelled, 1),
            "same_arguments_as_plain": same[way],
        }
        ways[way] = row
        print(
            f"{way:<16}{median:>14.0f}{f'[{low:.0f}, {high:.0f}]':>18}{row['ratio_p50']:>13.2f}×"
            f"{f'[{ratio_low:.2f}, {ratio_high:.2f}]':>16}{row['ratio_total']:>7.2f}×{row['decodes_p50']:>9.0f}"
        )
    result["ways"] = ways
    result["guessed_tokens"], result["kept_tokens"] = guessed, kept
    print(
        f"guessed {guessed} tokens, kept {kept}; arguments right of {labelled}: "
        + ", ".join(f"{way} {count} (same as plain: {same[way]} of {len(queries)})" for way, count in right.items())
    )
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
