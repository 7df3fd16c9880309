"""``nexus-gateway eval args``: routed argument generation, scored against labelled arguments.

For each request: route it among every tool of the registry files (the stored calibration), generate
arguments for the routed tool when it is acceptable, and compare with the labelled arguments
(``gold_arguments``, ``alternate_arguments`` for the other acceptable tools, or BFCL-style
``acceptable_arguments``). Side by side, with the same model and decoder, the oracle that puts the
tool's full JSON schema in the prompt instead of the compressed IR.

Definitions (also in ``docs/benchmarks.md``):
- per-argument accuracy: correct labelled arguments / (labelled arguments + arguments sent that the
  label does not have); values compared after normalising types and whitespace, lists order-free,
  ``soft_arguments`` (search strings, dates) by shared words or date prefix;
- end to end: the same over every request, a routing error counting all its labelled arguments wrong;
- placeholder leaks: arguments sent whose value is a placeholder or appears nowhere in the request or
  the window (free-text fields excepted);
- coreference: dialogue turns after the first whose labelled arguments are all right (tool given);
- first argument token: from the start of the turn (prefix already warm for both) to the first token
  the model chooses; prompt tokens: the tokens each turn prefills beyond the shared warm prefix.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .arguments import ArgumentGenerator, Generation, tool_blocks
from .block_store import SchemaBlocks
from .cache import RegistryCache, schema_key
from .embedder import EmbedderSpec, whole_words
from .engine import EngineSettings, LlamaEngine
from .evaluation import (
    accepted_tools,
    bootstrap_median_ci,
    check_queries_fit,
    gold_tool,
    jsonl_records,
    load_queries,
    wilson,
)
from .exceptions import ConfigError
from .generation_service import resolve_model
from .grounding import code_stated, placeholder, slashed_date, spelled_numbers, time_stated, zone_stated
from .mentions import FREE_TEXT, number_cues
from .signature import with_described_options
from .validation import validator_for
from .window import SessionWindow

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _normal(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return " ".join(value.split()).lower()
    if isinstance(value, list):
        return sorted((_normal(v) for v in value), key=repr)
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    return value


def _soft_equal(got: Any, want: Any) -> bool:
    if isinstance(got, str) and isinstance(want, str):
        if _DATE.match(got) and _DATE.match(want):
            return got[:10] == want[:10]
        a, b = set(re.findall(r"\w+", got.lower())), set(re.findall(r"\w+", want.lower()))
        return bool(b) and len(a & b) / len(b) >= 0.5
    return _normal(got) == _normal(want)


def score_arguments(got: dict[str, Any], query: dict[str, Any], tool: str) -> tuple[int, int]:
    """(right, total) for one routed call."""
    soft = set(query.get("soft_arguments") or [])
    if "acceptable_arguments" in query:
        options = query["acceptable_arguments"]
        right = total = 0
        for key, allowed in options.items():
            may_omit = "" in allowed
            if key not in got:
                total += 0 if may_omit else 1
                continue
            total += 1
            right += any(_normal(got[key]) == _normal(a) for a in allowed if a != "")
        extra = [k for k in got if k not in options]
        return right, total + len(extra)
    want = labels(query, tool)
    right = sum(
        1
        for key, value in want.items()
        if key in got and (_soft_equal(got[key], value) if key in soft else _normal(got[key]) == _normal(value))
    )
    extra = [k for k in got if k not in want]
    return right, len(want) + len(extra)


def labels(query: dict[str, Any], tool: str) -> dict[str, Any]:
    """The arguments a call of ``tool`` is held against: BFCL's lists of acceptable values, or the gold
    arguments (those of ``tool`` where the query names other acceptable tools' own)."""
    if "acceptable_arguments" in query:
        return dict(query["acceptable_arguments"])
    return dict((query.get("alternate_arguments") or {}).get(tool) or query.get("gold_arguments") or {})


def _normalised(value: str, sources: str) -> bool:
    """A date, or a clock time, a time zone or a code ("Canadian dollars" → CAD) the sources state in
    another form."""
    return (
        bool(_DATE.match(value))
        or slashed_date(value)
        or zone_stated(value, sources)
        or time_stated(value, sources)
        or code_stated(value, sources)
    )


def leaks(arguments: dict[str, Any], schema: dict[str, Any], sources: str) -> int:
    """Values sent that the request does not contain: placeholders, example values, invented ids.
    Closed-set values (enums, or values the description lists), the schema's own default, dates, clock
    times, time zones and codes (normalised by the model: "3pm" → ``15:00``, "in Tokyo" → ``Asia/Tokyo``,
    "Canadian dollars" → ``CAD``) are
    not counted; a number the request states in words ("the second page", "two nights") or as a
    percentage ("8%" → 0.08) is contained."""
    text = " ".join(sources.lower().split())
    in_words = {number for number, _ in number_cues(sources)}
    in_words |= set(spelled_numbers(sources))
    props = with_described_options(schema).get("properties") or {}  # a value its description lists is closed-set
    count = 0
    for key, value in arguments.items():
        found = props.get(key)
        prop: dict[str, Any] = found if isinstance(found, dict) else {}
        if isinstance(prop.get("enum"), list) or ("default" in prop and value == prop["default"]):
            continue
        if isinstance(value, str) and _normalised(value, sources):
            continue
        if isinstance(value, str):
            if placeholder(value, text) or (
                not FREE_TEXT.search(key.lower()) and " ".join(value.lower().split()) not in text
            ):
                count += 1
        elif isinstance(value, int | float) and not isinstance(value, bool):
            count += str(value) not in sources and str(value) not in in_words
    return count


def schema_valid(arguments: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Valid against the schema except for required keys left out on purpose (they are asked for)."""
    relaxed = {k: v for k, v in schema.items() if k != "required"}
    validator = validator_for(relaxed)
    return validator is None or validator.is_valid(arguments)


class ArgsEvaluation:
    def __init__(
        self, tools: list[Any], generator: ArgumentGenerator, router: Any | None, schema_mode: str = "ir"
    ) -> None:
        self.tools = tools
        self.generator = generator
        self.router = router
        self.schema_mode = schema_mode
        self.by_name: dict[str, Any] = {}
        for tool in tools:
            self.by_name.setdefault(tool.name, tool)
        self.cases: list[dict[str, Any]] = []  # each request and dialogue turn, for ``eval args --cases``

    def route(self, query: dict[str, Any]) -> str | None:
        if self.router is None:  # the labelled tool, if the registries have it (else a miss, as routed)
            name = gold_tool(query)
            return name if name in self.by_name else None
        result = self.router.route(query["query"], limit=1)
        return None if result.chosen is None else self.tools[int(result.chosen)].name

    def generate(self, tool_name: str, intent: str, window: SessionWindow | None, full: bool = False) -> Generation:
        """``full``: the oracle, which prefills the whole schema every turn. Otherwise the gateway's
        ``nexus.schema`` mode: the IR, the full schema spliced from its compiled block, or auto."""
        tool = self.by_name[tool_name]
        args = (tool.name, tool.schema, tool.description, intent, window)
        if full:
            return self.generator.generate(*args, full_schema=True)
        key = schema_key({"name": tool.name, "description": tool.description, "inputSchema": tool.schema})
        blocks = self.generator.blocks
        if blocks is not None:  # the gateway compiles them in the background; here, on first use
            full_schema = self.schema_mode in ("full", "auto")
            forms = tool_blocks(key, tool.name, tool.schema, tool.description, full_schema=full_schema)
            tokenize = self.generator.engine.tokenize
            blocks.compile_missing((k, tokenize(text)) for k, text in forms if not blocks.has(k))
        if self.schema_mode == "full":
            return self.generator.generate(*args, full_schema=True, block_key=key)
        generation = self.generator.generate(*args, block_key=key)
        if self.schema_mode == "auto" and generation.missing:
            full_generation = self.generator.generate(*args, full_schema=True, block_key=key)
            if len(full_generation.missing) < len(generation.missing):
                return full_generation
        return generation

    def run(self, queries: list[dict[str, Any]], dialogues: list[dict[str, Any]], oracle: bool) -> dict[str, Any]:
        routed_ok = right = total = right_e2e = total_e2e = stated_right = stated_total = 0
        valid = placeholder = 0
        generated = 0
        first_ir: list[float] = []
        first_full: list[float] = []
        # the tokens each turn computes (the main context's cost: the fixed prefix and a spliced block are
        # not computed again), and all it holds beyond the fixed prefix
        tokens_ir: list[int] = []
        tokens_full: list[int] = []
        context_ir: list[int] = []
        context_full: list[int] = []
        for number, query in enumerate(queries, 1):
            chosen = self.route(query)
            accepted = set(accepted_tools(query))
            gold_size = len(query.get("gold_arguments") or query.get("acceptable_arguments") or {})
            if chosen not in accepted or chosen is None:
                total_e2e += gold_size
                sys.stderr.write(f"[{number}/{len(queries)}] routed to {chosen}, not {gold_tool(query)}\n")
                self.cases.append(_case(query, chosen, None, (0, gold_size)))
                continue
            routed_ok += 1
            generation = self.generate(chosen, query["query"], None)
            generated += 1
            r, t = score_arguments(generation.arguments, query, chosen)
            self.cases.append(_case(query, chosen, generation.arguments, (r, t)))
            if r < t:  # what was missed, for reading the errors (stderr; the JSON keeps the totals)
                wanted = query.get("acceptable_arguments") or query.get("gold_arguments")
                sys.stderr.write(f"[{number}/{len(queries)}] {chosen}: {r}/{t} right, got {generation.arguments}, ")
                sys.stderr.write(f"labelled {wanted}\n")
            extra = sum(1 for k in generation.arguments if k not in labels(query, chosen))
            stated_right += r
            stated_total += t - extra
            right += r
            total += t
            right_e2e += r
            total_e2e += t
            schema = self.by_name[chosen].schema or {}
            placeholder += leaks(generation.arguments, schema, query["query"])
            is_valid = schema_valid(generation.arguments, schema)
            valid += is_valid
            if not is_valid:
                sys.stderr.write(f"schema-invalid: {chosen} {generation.arguments}\n")
            first_ir.append(generation.timings_ms.get("first_token", float("nan")))
            tokens_ir.append(generation.computed_tokens)
            context_ir.append(generation.prompt_tokens - len(self.generator.prefix_tokens))
            if oracle:
                full = self.generate(chosen, query["query"], None, full=True)
                first_full.append(full.timings_ms.get("first_token", float("nan")))
                tokens_full.append(full.computed_tokens)
                context_full.append(full.prompt_tokens - len(self.generator.prefix_tokens))
            sys.stderr.write(f"[{number}/{len(queries)}] {chosen} {r}/{t} {generation.arguments}\n")
        coreference = self.dialogues(dialogues) if dialogues else None
        n = len(queries)
        ir_median = float(np.nanmedian(first_ir)) if first_ir else None
        full_median = float(np.nanmedian(first_full)) if first_full else None
        return {
            "n": n,
            "routed_accuracy": routed_ok / n if n else None,
            "routed_accuracy_ci": wilson(routed_ok, n),
            "argument_accuracy_routed": right / total if total else None,
            "argument_accuracy_e2e": right_e2e / total_e2e if total_e2e else None,
            # the "stated arguments right" (no charge for extra arguments), for comparison
            "stated_argument_recall_routed": stated_right / stated_total if stated_total else None,
            "json_validity": 1.0 if generated else None,  # the decoder emits only the grammar's language
            "schema_validity": valid / generated if generated else None,
            "placeholder_leaks": placeholder,
            "coreference_accuracy": coreference,
            "first_arg_ms": {
                "ir": ir_median,
                "ir_ci": list(bootstrap_median_ci(first_ir)) if first_ir else None,
                "full_schema": full_median,
                "full_schema_ci": list(bootstrap_median_ci(first_full)) if first_full else None,
                "ratio": (full_median / ir_median) if ir_median and full_median else None,
            },
            "prompt_tokens": _medians(tokens_ir, tokens_full),
            "context_tokens": _medians(context_ir, context_full),
        }

    def dialogues(self, dialogues: list[dict[str, Any]]) -> float | None:
        right = total = 0
        for dialogue in dialogues:
            window = SessionWindow()
            for index, turn in enumerate(dialogue["turns"]):
                tool = turn["gold_tool"]
                generation = self.generate(tool, turn["query"], window)
                if index > 0:
                    r, t = score_arguments(generation.arguments, turn, tool)
                    total += 1
                    right += r == t
                    self.cases.append(
                        {
                            "dialogue": dialogue["id"],
                            "turn": index + 1,
                            **_case(turn, tool, generation.arguments, (r, t)),
                        }
                    )
                    sys.stderr.write(f"[{dialogue['id']} turn {index + 1}] {r}/{t} {generation.arguments}\n")
                window.add(turn["query"], tool, generation.arguments, turn.get("result"))
        return right / total if total else None


def _case(
    query: dict[str, Any], chosen: str | None, arguments: dict[str, Any] | None, score: tuple[int, int]
) -> dict[str, Any]:
    """One request against its labels; ``arguments`` None where it was routed elsewhere."""
    return {
        "id": query.get("id"),
        "query": query["query"],
        "acceptable": accepted_tools(query),
        "chosen": chosen,
        "arguments": arguments,
        "labelled": labels(query, chosen or ""),  # what ``score_arguments`` held the arguments against
        "right": score[0],
        "total": score[1],
    }


def load_dialogues(path: str) -> list[dict[str, Any]]:
    """``{"id", "turns": [{"query", "gold_tool", …}, …]}`` a line; a malformed line is named, not a traceback."""
    out = []
    for number, dialogue in jsonl_records(path, "dialogues"):
        turns = dialogue.get("turns")
        if not isinstance(turns, list) or not turns:
            raise ConfigError(f"{path}:{number}: needs 'turns', a non-empty list")
        for index, turn in enumerate(turns):
            if not isinstance(turn, dict) or "query" not in turn or "gold_tool" not in turn:
                raise ConfigError(f"{path}:{number}: turns[{index}] needs 'query' and 'gold_tool'")
        out.append(dialogue)
    return out


def open_engine(model: str | None, threads: int) -> tuple[LlamaEngine, str]:
    """The local LLM named by ``--model`` (a GGUF path or a model name; None: the pulled default) and
    the file's path."""
    resolved = resolve_model(model)
    if resolved is None or not resolved.is_file():
        raise ConfigError(f"--model: no model file at {resolved or 'the default path'} (nexus-gateway models pull)")
    return LlamaEngine(EngineSettings(str(resolved), n_threads=threads)), str(resolved)


def cmd_eval_args(args: argparse.Namespace) -> int:
    from .eval_cli import build_router, describe_queries, select_part, write_cases

    queries = select_part(load_queries(args.queries), args.part)
    if args.limit:
        queries = queries[: args.limit]
    dialogues = load_dialogues(args.dialogues) if args.dialogues else []
    # the registries first, so a query file that does not fit them fails before the model loads (the
    # router's preparation checks the fit; the labelled tool needs no router)
    if args.gold_tool:
        tools, router = _load_tools(args.registry), None
        check_queries_fit(queries, {tool.name for tool in tools}, describe_queries(args))
    else:
        tools, router = build_router(args)
    engine, path = open_engine(args.model, args.threads)
    generator = ArgumentGenerator(
        engine,
        focused=args.schema == "ir-focused",
        ir_budget=args.ir_budget,
        known_words=whole_words(EmbedderSpec(folder=getattr(args, "embedder", None))),
    )
    generator.warm()
    unspliceable = engine.geometry().why_not_spliceable()
    if unspliceable:
        sys.stderr.write(f"compiled blocks off (every turn computes the tool's form): {unspliceable}\n")
    elif args.schema != "ir-focused" and not args.no_blocks:  # the focused IR differs per request
        generator.blocks = SchemaBlocks(engine, generator.prefix_tokens, RegistryCache(args.cache_dir))
    evaluation = ArgsEvaluation(tools, generator, router, args.schema)
    result = evaluation.run(queries, dialogues, oracle=not args.no_oracle)
    result["model"] = Path(path).name
    result["schema_mode"] = args.schema
    result["ir_budget"] = args.ir_budget
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    if args.cases:
        write_cases(args.cases, evaluation.cases)
    return 0


def _medians(ir: list[int], full: list[int]) -> dict[str, float | None]:
    """Median tokens of both sides and the saving."""
    ir_median = float(np.median(ir)) if ir else None
    full_median = float(np.median(full)) if full else None
    saving = 1 - ir_median / full_median if ir_median is not None and full_median else None
    return {"ir": ir_median, "full_schema": full_median, "saving": saving}


def _load_tools(paths: list[str]) -> list[Any]:
    from .evaluation import load_registries

    return load_registries(paths)
