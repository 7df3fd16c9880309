"""``nexus-gateway eval routing`` and ``nexus-gateway calibrate``: offline commands over registry files."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from .arg_types import non_negative_int, output_file, positive_int
from .arguments import ArgumentGenerator
from .cache import RegistryCache
from .calibration import calibration_path, load_calibration, save_calibration
from .embedder import CrossEncoder, Embedder, EmbedderSpec
from .eval_args import cmd_eval_args, load_dialogues, open_engine
from .evaluation import (
    CONTEXTS,
    RoutingEvaluation,
    calibrate,
    check_queries_fit,
    embed_follow_ups,
    embed_queries,
    embed_tools,
    load_queries,
    load_registries,
    schema_tokens,
)
from .exceptions import ConfigError
from .ir import IR_TOKEN_BUDGET
from .judge_fit import Judge, JudgeVerdict, judge_requests, judge_verdict
from .progress import ProgressPrinter
from .routing import Calibration
from .vectors import VectorStore

# The calibration's constants that ``calibrate`` and ``eval routing`` take as flags (``--lexical-weight`` …).
CALIBRATION_FLAGS = (
    "lexical_weight",
    "affordance_weight",
    "mood_weight",
    "name_weight",
    "unfilled_weight",
    "server_weight",
    "platform_weight",
    "rerank_weight",
    "rerank_k",
    "tau",
    "floor",
)


def parse_sizes(text: str) -> list[int | None]:
    sizes: list[int | None] = []
    for part in text.split(","):
        part = part.strip()
        if part == "all":
            sizes.append(None)
        elif part.isdigit() and int(part) > 0:
            sizes.append(int(part))
        else:
            raise ConfigError(f"--sizes: expected positive integers or 'all', got {part!r}")
    return sizes


def describe_queries(args: argparse.Namespace) -> str:
    """``--queries FILE`` as an error message names it, with the part of it in use."""
    part = getattr(args, "part", "all")
    return f"--queries {args.queries}" + ("" if part == "all" else f" ({part} lines)")


def select_part(queries: list[dict[str, Any]], part: str) -> list[dict[str, Any]]:
    if part == "all":
        return queries
    return queries[0 if part == "even" else 1 :: 2]


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--registry",
        action="append",
        required=True,
        metavar="FILE",
        help="a JSON list of tools {server?, name, description, inputSchema} (repeatable)",
    )
    parser.add_argument("--queries", required=True, metavar="FILE.jsonl")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--part",
        choices=["all", "even", "odd"],
        default="all",
        help="use every query, or only the even/odd lines (calibrate on one part, report on the other)",
    )
    parser.add_argument("--embedder", metavar="DIR", help="an ONNX sentence-embedding folder (default: bge-small)")
    parser.add_argument("--pooling", choices=["cls", "mean"], default="cls")
    parser.add_argument("--query-prefix", default=None)
    parser.add_argument("--document-prefix", default="")
    parser.add_argument("--no-rerank", action="store_true", help="disable the cross-encoder gate")
    parser.add_argument(
        "--threads", type=positive_int, default=2, help="embedder threads, and re-ranked pairs side by side (default 2)"
    )
    parser.add_argument("--lexical-weight", type=float, default=None, help="override the calibrated fusion weight")
    parser.add_argument("--affordance-weight", type=float, default=None, help="override the slot-affordance weight")
    parser.add_argument("--mood-weight", type=float, default=None, help="override the read/write mismatch penalty")
    parser.add_argument("--name-weight", type=float, default=None, help="override the name-coverage weight")
    parser.add_argument(
        "--unfilled-weight", type=float, default=None, help="override the penalty for a required slot left empty"
    )
    parser.add_argument(
        "--server-weight", type=float, default=None, help="override the weight of the server's share of slot-takers"
    )
    parser.add_argument(
        "--platform-weight", type=float, default=None, help="override the penalty for a tool of another platform"
    )
    parser.add_argument("--rerank-weight", type=float, default=None, help="override the cross-encoder weight")
    parser.add_argument(
        "--rerank-k", type=positive_int, default=None, help="override how many candidates are re-ranked"
    )
    parser.add_argument("--tau", type=float, default=None, help="override the gate's margin threshold")
    parser.add_argument("--floor", type=float, default=None, help="override the abstention floor")
    parser.add_argument("--cache-dir", default=None)


def build_models(args: argparse.Namespace) -> tuple[Embedder, CrossEncoder | None]:
    spec = EmbedderSpec(
        folder=args.embedder, pooling=args.pooling, document_prefix=args.document_prefix, threads=args.threads
    )
    if args.query_prefix is not None:
        spec = EmbedderSpec(
            folder=spec.folder,
            pooling=spec.pooling,
            query_prefix=args.query_prefix,
            document_prefix=spec.document_prefix,
            threads=spec.threads,
        )
    embedder = Embedder(spec)
    cross = None if args.no_rerank else CrossEncoder(workers=args.threads)
    return embedder, cross


def prepare(args: argparse.Namespace) -> tuple[RoutingEvaluation, list[dict[str, Any]], Any, RegistryCache]:
    tools = load_registries(args.registry)
    queries = select_part(load_queries(args.queries), args.part)
    check_queries_fit(queries, {tool.name for tool in tools}, describe_queries(args))
    embedder, cross = build_models(args)
    cache = RegistryCache(args.cache_dir)
    vectors = embed_tools(tools, embedder, VectorStore(cache, embedder.model_tag))
    # calibrate fits from the defaults; eval uses what calibrate stored for these registries
    fresh = getattr(args, "offline", None) is cmd_calibrate
    calibration = Calibration() if fresh else load_calibration(cache, args.registry, embedder.model_tag)
    overrides = {name: getattr(args, name) for name in CALIBRATION_FLAGS if getattr(args, name, None) is not None}
    if overrides:
        calibration = replace(calibration, **overrides)
    evaluation = RoutingEvaluation(tools, embedder, vectors, calibration, cross, seed=args.seed)
    return evaluation, queries, embed_queries(embedder, queries), cache


def build_router(args: argparse.Namespace) -> tuple[list[Any], Any]:
    """Every tool of the registry files and a router over them with their stored calibration."""
    evaluation, _, _, _ = prepare(args)
    return evaluation.tools, evaluation.router(list(range(len(evaluation.tools))))


def cmd_calibrate(args: argparse.Namespace) -> int:
    evaluation, queries, query_vectors, cache = prepare(args)
    sizes = parse_sizes(args.size)
    calibration = calibrate(evaluation, queries, query_vectors, sizes)
    evidence: dict[str, Any] = {}
    if args.judge:
        verdict, model = calibrate_judge(args, evaluation, queries, query_vectors, sizes[0])
        calibration = replace(calibration, judge_margin=verdict.margin)
        evidence = {"judge_evidence": {**verdict.to_json(), "model": model}}
    path = save_calibration(cache, args.registry, evaluation.embedder.model_tag, calibration, evidence)
    sys.stdout.write(orjson.dumps({**calibration.to_json(), **evidence}, option=orjson.OPT_INDENT_2).decode() + "\n")
    sys.stderr.write(f"calibration stored in {path}\n")
    return 0


def open_judge(model: str | None, threads: int) -> tuple[Judge, str]:
    """The local LLM as the judge among close candidates (``ArgumentGenerator.choose_tool``, warm), and
    its model file's name."""
    engine, path = open_engine(model, threads)
    generator = ArgumentGenerator(engine)
    generator.warm()

    def judge(intent: str, candidates: list[tuple[str, str]]) -> int:
        return generator.choose_tool(intent, candidates).index

    return judge, Path(path).name


def calibrate_judge(
    args: argparse.Namespace,
    evaluation: RoutingEvaluation,
    queries: list[dict[str, Any]],
    query_vectors: Any,
    size: int | None,
) -> tuple[JudgeVerdict, str]:
    """``calibrate --judge``: the local LLM's pick on every request, each margin's fixes and breaks on
    stderr, and the verdict (judge_fit.py) with the model file's name."""
    judge, model = open_judge(args.model, args.threads)
    progress = ProgressPrinter("judging the router's best candidates")
    verdict = judge_verdict(len(queries), judge_requests(evaluation, queries, query_vectors, size, judge, progress))
    sys.stderr.write(f"judge ({model}), p < {verdict.evidence_needed:.3g} needed:\n")
    for policy in verdict.policies:
        sys.stderr.write(
            f"  closest {policy.share:.0%}: asked {policy.asked}, fixed {policy.fixed}, broke {policy.broken}, "
            f"p = {policy.p:.3g}{'  <- kept' if policy is verdict.chosen else ''}\n"
        )
    if verdict.chosen is None:
        sys.stderr.write("  the judge stays off\n")
    return verdict, model


def cmd_eval_routing(args: argparse.Namespace) -> int:
    dialogues = load_dialogues(args.dialogues) if args.dialogues else []  # a bad file fails before the models load
    evaluation, queries, query_vectors, cache = prepare(args)
    irrelevant = load_queries(args.irrelevant, answerable=False) if args.irrelevant else []
    irrelevant_vectors = embed_queries(evaluation.embedder, irrelevant)
    follow_up_vectors = embed_follow_ups(evaluation.embedder, dialogues)
    tokenizer = evaluation.embedder.tokenizer
    token_counts = schema_tokens(evaluation.tools, tokenizer)
    document: dict[str, Any] = {
        "sizes": {},
        "baselines": {"bm25": {}, "dense_f32": {}},
        "concat_tokens": {},
        "concat_overflows": {},
        "calibration": evaluation.calibration.to_json(),
        "calibration_file": str(calibration_path(cache, args.registry, evaluation.embedder.model_tag)),
        "registries": args.registry,
        "queries": args.queries,
        "irrelevant": args.irrelevant,
        "dialogues": args.dialogues,
        "follow_ups": {},
        "seed": args.seed,
        "part": args.part,
    }
    cases: list[dict[str, Any]] = []
    for size in parse_sizes(args.sizes):
        label = "all" if size is None else str(size)
        sys.stderr.write(f"evaluating N = {label}\n")
        result = evaluation.run_size(queries, query_vectors, irrelevant, irrelevant_vectors, size)
        cases.extend({"size": label, **case} for case in result["cases"])
        document["sizes"][label] = result["ours"]
        for name, values in result["baselines"].items():
            document["baselines"][name][label] = values
        count = len(evaluation.tools) if size is None else min(size, len(evaluation.tools))
        tokens = round(_mean(token_counts) * count)  # mean schema length × N
        document["concat_tokens"][label] = tokens
        document["concat_overflows"][label] = [name for name, limit in CONTEXTS.items() if tokens > limit]
        if dialogues:
            document["follow_ups"][label] = evaluation.run_follow_ups(dialogues, follow_up_vectors, size)
    print_table(document)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
        sys.stderr.write(f"wrote {args.json}\n")
    if args.plot:
        plot(document, args.plot)
    if args.cases:
        write_cases(args.cases, cases)
    return 0


def write_cases(path: str, cases: list[dict[str, Any]]) -> None:
    """One JSON line a request (and size, or dialogue turn): what was chosen or generated against the
    labels, so the misses can be read and compared between runs, not only counted."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(b"".join(orjson.dumps(case) + b"\n" for case in cases))
    sys.stderr.write(f"wrote {len(cases)} cases to {path}\n")


def _mean(values: list[int]) -> float:
    return sum(values) / max(len(values), 1)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def print_table(document: dict[str, Any]) -> None:
    header = (
        f"{'N':>5}  {'top1 [95% CI]':>22}  {'R@1':>6}  {'R@3':>6}  {'R@10':>6}  {'esc':>6}  {'fix/brk':>7}  "
        f"{'abst P':>6}  {'abst R':>6}  {'p50':>7}  {'p95':>7}  {'bm25':>6}  {'dense':>6}  {'concat tok':>10}"
    )
    print(header)
    for label, r in document["sizes"].items():
        bm, dense = document["baselines"]["bm25"][label], document["baselines"]["dense_f32"][label]
        ci = f"{_pct(r['top1'])} [{100 * r['top1_ci'][0]:.1f}, {100 * r['top1_ci'][1]:.1f}]"
        print(
            f"{label:>5}  {ci:>22}  {_pct(r['recall_at_1']):>6}  {_pct(r['recall_at_3']):>6}  "
            f"{_pct(r['recall_at_10']):>6}  {_pct(r['escalated']):>6}  {r['flips_fixed']:>3}/{r['flips_broken']:<3}  "
            f"{_pct(r['abstain_precision']):>6}  {_pct(r['abstain_recall']):>6}  {r['p50_ms']:>5.1f}ms  "
            f"{r['p95_ms']:>5.1f}ms  {_pct(bm['top1']):>6}  {_pct(dense['top1']):>6}  "
            f"{document['concat_tokens'][label]:>10}"
        )
    for label, f in document.get("follow_ups", {}).items():
        print(
            f"N = {label}: {f['n']} dialogue follow-ups routed with the session's window {_pct(f['top1'])}, "
            f"alone {_pct(f['top1_alone'])} (fixed {f['fixed']}, broken {f['broken']})"
        )


def plot(document: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(document["sizes"])
    xs = list(range(len(labels)))
    figure, axis = plt.subplots(figsize=(7, 4.2))
    series = [
        ("Nexus router", document["sizes"]),
        ("BM25 only", document["baselines"]["bm25"]),
        ("dense f32 only", document["baselines"]["dense_f32"]),
    ]
    for name, values in series:
        tops = [values[label]["top1"] for label in labels]
        lows = [values[label]["top1"] - values[label]["top1_ci"][0] for label in labels]
        highs = [values[label]["top1_ci"][1] - values[label]["top1"] for label in labels]
        axis.errorbar(xs, tops, yerr=[lows, highs], marker="o", capsize=3, label=name)
    axis.set_xticks(xs, labels)
    axis.set_xlabel("registry size N (tools)")
    axis.set_ylabel("top-1 accuracy (Wilson 95% CI)")
    axis.set_ylim(0, 1)
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)


def register(commands: Any) -> None:
    """Add ``eval routing`` and ``calibrate`` to the top-level parser."""
    evaluate = commands.add_parser("eval", help="Offline evaluations over registry and query files.")
    kinds = evaluate.add_subparsers(dest="eval_kind", required=True, metavar="KIND")
    routing = kinds.add_parser("routing", help="Routing accuracy vs registry size, with baselines.")
    add_model_arguments(routing)
    routing.add_argument("--irrelevant", metavar="FILE.jsonl", help="requests no tool serves (abstention)")
    routing.add_argument(
        "--dialogues",
        metavar="FILE.jsonl",
        help="multi-turn dialogues: their follow-up turns routed with and without the session's window",
    )
    routing.add_argument("--sizes", default="10,50,100,250,all")
    routing.add_argument("--json", metavar="OUT", type=output_file)
    routing.add_argument("--plot", metavar="PNG", type=output_file)
    routing.add_argument(
        "--cases", metavar="OUT.jsonl", type=output_file, help="each request's decision, one JSON line each, per size"
    )
    routing.set_defaults(offline=cmd_eval_routing)
    arguments = kinds.add_parser(
        "args", help="Routed argument generation with the local LLM vs the full-schema oracle."
    )
    add_model_arguments(arguments)
    arguments.add_argument("--dialogues", metavar="FILE.jsonl", help="multi-turn dialogues (coreference)")
    arguments.add_argument("--model", metavar="GGUF", help="a GGUF path or a model name (default: the pulled default)")
    arguments.add_argument("--limit", type=positive_int, default=None, help="only the first N requests")
    arguments.add_argument("--gold-tool", action="store_true", help="skip routing: generate for the labelled tool")
    arguments.add_argument("--no-oracle", action="store_true", help="skip the full-schema oracle")
    arguments.add_argument(
        "--no-blocks", action="store_true", help="compute the tool's form every turn instead of splicing its block"
    )
    arguments.add_argument(
        "--schema",
        choices=["ir", "ir-focused", "full", "auto"],
        default="ir",
        help="what the model reads (as nexus.schema)",
    )
    arguments.add_argument(
        "--ir-budget",
        type=non_negative_int,
        default=IR_TOKEN_BUDGET,
        metavar="TOKENS",
        help=f"a tool whose IR is longer is shown focused (default {IR_TOKEN_BUDGET}; 0: every tool in full)",
    )
    arguments.add_argument("--json", metavar="OUT", type=output_file)
    arguments.add_argument(
        "--cases",
        metavar="OUT.jsonl",
        type=output_file,
        help="each request's and dialogue turn's arguments against the labels",
    )
    arguments.set_defaults(offline=cmd_eval_args)
    calib = commands.add_parser("calibrate", help="Compute the gate's τ and the abstention floor; store them.")
    add_model_arguments(calib)
    calib.add_argument(
        "--size",
        default="all",
        help="registry size(s) to calibrate at, e.g. 250,all (default: all tools; τ and the floor at the first)",
    )
    calib.add_argument(
        "--judge",
        action="store_true",
        help="also decide whether the local LLM picks among close candidates (nexus.judge unset): on only "
        "when it fixes significantly more of these requests than it breaks",
    )
    calib.add_argument("--model", metavar="GGUF", help="the judge's model: a GGUF path or a model name")
    calib.set_defaults(offline=cmd_calibrate)
