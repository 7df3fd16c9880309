"""Routing evaluation and calibration over registry files and labelled query files.

Protocol (``nexus-gateway eval routing``): for a query and a size N, the registry is the query's
acceptable tools plus N − k distractors: the other tools of the first registry file in a seeded
order, then those of the next file, and so on, never a tool that shares a name with an acceptable
one; ``all`` means every tool of every file. So every size is well defined and a server's own
near-duplicates are always present. Baselines (BM25 only, float32 dense only) run in the same pass.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .cache import schema_key
from .embedder import CrossEncoder, Embedder
from .exceptions import ConfigError
from .lexical import LexicalDocument
from .routing import Calibration, RouteDoc, Router, RouteResult, embedded_intent, tool_document
from .vectors import VectorStore
from .window import SessionWindow

logger = logging.getLogger(__name__)

CONTEXTS = {"8k": 8192, "32k": 32768, "128k": 131072, "200k": 200000, "1M": 1_000_000}


@dataclass(frozen=True)
class EvalTool:
    uid: int
    file: int
    server: str
    name: str
    description: str
    schema: dict[str, Any]
    raw: dict[str, Any]


def load_registries(paths: Sequence[str | Path]) -> list[EvalTool]:
    tools: list[EvalTool] = []
    for file_index, path in enumerate(paths):
        try:
            rows = orjson.loads(Path(path).read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise ConfigError(f"--registry {path}: cannot read a JSON list of tools ({exc})") from None
        if not isinstance(rows, list):
            raise ConfigError(f"--registry {path}: expected a JSON list of tools")
        for row_index, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("name"), str):
                raise ConfigError(f"--registry {path}: entry {row_index} has no string 'name'")
            tools.append(
                EvalTool(
                    uid=len(tools),
                    file=file_index,
                    server=str(row.get("server") or Path(path).stem),
                    name=row["name"],
                    description=str(row.get("description") or ""),
                    schema=row.get("inputSchema") or {"type": "object"},
                    raw=row,
                )
            )
    return tools


def jsonl_records(path: str | Path, kind: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSONL file; an unreadable file or a line that is
    not a JSON object is a one-line ``ConfigError`` naming it."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read {kind} {path}: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number}: not valid JSON ({exc})") from None
        if not isinstance(record, dict):
            raise ConfigError(f"{path}:{number}: not a JSON object")
        yield number, record


def load_queries(path: str | Path, answerable: bool = True) -> list[dict[str, Any]]:
    queries = []
    for number, query in jsonl_records(path, "queries"):
        if not isinstance(query.get("query"), str) or not query["query"].strip():
            raise ConfigError(f"{path}:{number}: needs 'query', a non-empty string")
        tools = query.get("acceptable_tools", [])
        if not isinstance(tools, list) or not all(isinstance(name, str) for name in tools):
            raise ConfigError(f"{path}:{number}: 'acceptable_tools' must be a list of tool names")
        if not isinstance(query.get("gold_tool", ""), str):
            raise ConfigError(f"{path}:{number}: 'gold_tool' must be a tool name")
        if answerable and not accepted_tools(query):
            raise ConfigError(f"{path}:{number}: needs 'acceptable_tools' (or 'gold_tool')")
        queries.append(query)
    return queries


def accepted_tools(query: dict[str, Any]) -> list[str]:
    """The tool names a labelled request is scored against: its ``acceptable_tools``, else its
    ``gold_tool`` (none for a request no tool serves)."""
    return list(query.get("acceptable_tools") or ([query["gold_tool"]] if query.get("gold_tool") else []))


def gold_tool(query: dict[str, Any]) -> str:
    """The tool a labelled request names first: its ``gold_tool``, or its first acceptable tool."""
    return str(query.get("gold_tool") or accepted_tools(query)[0])


def check_queries_fit(queries: list[dict[str, Any]], tool_names: set[str], source: str) -> None:
    """Refuse a query file that cannot be scored against these registry files, instead of reporting 0%
    (or storing a calibration fitted to nothing): no requests at all (an empty file, or a ``--part`` of a
    one-line file), or none whose labelled tool is in the registries. Requests of which only some lack
    their tool count as wrong, as the protocol says, with a warning that names the first."""
    if not queries:
        raise ConfigError(f"{source}: no requests to evaluate")
    missing = [q for q in queries if not set(accepted_tools(q)) & tool_names]
    if len(missing) == len(queries):
        wanted = sorted(accepted_tools(missing[0]))
        raise ConfigError(
            f"{source}: none of the {len(queries)} requests names a tool of the registry files "
            f"(the first accepts {', '.join(wanted)}); were they written for other registries?"
        )
    if missing:
        logger.warning(
            "%s: %d of %d requests name no tool of the registry files and count as wrong (the first: %r)",
            source, len(missing), len(queries), missing[0]["query"],
        )  # fmt: skip


class Protocol:
    """Builds each query's registry at each size, deterministically from the seed."""

    def __init__(self, tools: list[EvalTool], seed: int) -> None:
        self.tools = tools
        rng = random.Random(seed)
        self.order: list[int] = []
        for file_index in sorted({t.file for t in tools}):
            ids = [t.uid for t in tools if t.file == file_index]
            rng.shuffle(ids)
            self.order.extend(ids)

    def acceptable(self, query: dict[str, Any]) -> list[int]:
        names = set(accepted_tools(query))
        gold = query.get("gold_tool")
        home = next((t.file for t in self.tools if t.name == gold), None)
        if home is None:
            home = next((t.file for t in self.tools if t.name in names), None)
        return [t.uid for t in self.tools if t.name in names and t.file == home]

    def registry(self, query: dict[str, Any], size: int | None) -> tuple[list[int], set[int]]:
        accepted = self.acceptable(query)
        if size is None:
            return [t.uid for t in self.tools], set(accepted)
        names = {self.tools[i].name for i in accepted} | set(query.get("acceptable_tools") or [])
        distractors = [i for i in self.order if self.tools[i].name not in names]
        return accepted + distractors[: max(size - len(accepted), 0)], set(accepted)


def bootstrap_median_ci(values: Sequence[float], resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the median."""
    data = np.asarray(values, dtype=np.float64)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(data, size=(resamples, data.size), replace=True), axis=1)
    low, high = np.percentile(medians, [2.5, 97.5])
    return (float(low), float(high))


def wilson(successes: int, n: int, z: float = 1.959964) -> list[float]:
    if n == 0:
        return [0.0, 1.0]
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def embed_tools(
    tools: list[EvalTool], embedder: Embedder, store: VectorStore, label: str = "embedding tools"
) -> np.ndarray:
    texts = [tool_document(t.name, t.description) for t in tools]
    keys = [schema_key(t.raw) for t in tools]
    return store.embed(keys, texts, embedder, label=label)


def schema_tokens(tools: list[EvalTool], tokenizer: Any) -> list[int]:
    """Tokens each tool's full JSON definition would take in a model's context."""
    counts = []
    for tool in tools:
        text = orjson.dumps({"name": tool.name, "description": tool.description, "inputSchema": tool.schema})
        counts.append(len(tokenizer.encode(text.decode(), add_special_tokens=False).ids))
    return counts


def _percentile(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


class RoutingEvaluation:
    """Runs the protocol for every size and returns the JSON document of the issue's shape."""

    def __init__(
        self,
        tools: list[EvalTool],
        embedder: Embedder,
        vectors: np.ndarray,
        calibration: Calibration,
        cross_encoder: CrossEncoder | None,
        seed: int = 0,
        defaults: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        """``defaults``: a gateway config's ``nexus.defaults`` (per server, the parameters it fills), which
        routing reads no slot of a request into, as ``RouterService(preset=…)`` does."""
        self.tools = tools
        self.embedder = embedder
        self.vectors = vectors
        self.calibration = calibration
        self.cross_encoder = cross_encoder
        self.protocol = Protocol(tools, seed)
        self.docs = [
            RouteDoc.of_tool(
                str(t.uid),
                t.name,
                t.description,
                LexicalDocument.of_tool(t.name, t.description, t.schema).tokens(),
                t.schema,
                t.raw.get("annotations"),
                t.server,
                list((defaults or {}).get(t.server, {})),
            )
            for t in tools
        ]
        self._router_cache: tuple[tuple[int, ...], Router] | None = None
        self._plain_vectors: dict[str, np.ndarray] = {}

    def plain_vector(self, text: str, routed: np.ndarray) -> np.ndarray:
        """The dense baseline's query vector: the request embedded as written, as a plain pipeline would
        (``routed`` is the router's vector, the same one where ``routing.embedded_intent`` keeps the whole
        request). Embedded once per request, for whichever size asks first."""
        if embedded_intent(text) == text:
            return routed
        if text not in self._plain_vectors:
            self._plain_vectors[text] = self.embedder.embed_query(text)
        return self._plain_vectors[text]

    def router(self, registry: list[int]) -> Router:
        key = tuple(registry)
        if self._router_cache is not None and self._router_cache[0] == key:
            self._router_cache[1].calibration = self.calibration
            return self._router_cache[1]
        docs = [self.docs[i] for i in registry]
        router = Router(self.embedder, docs, self.vectors[registry], self.calibration, self.cross_encoder)
        self._router_cache = (key, router)
        return router

    def run_size(
        self,
        queries: list[dict[str, Any]],
        query_vectors: np.ndarray,
        irrelevant: list[dict[str, Any]],
        irrelevant_vectors: np.ndarray,
        size: int | None,
    ) -> dict[str, Any]:
        ours = {
            "ok": 0,
            "r1": 0,
            "r3": 0,
            "r10": 0,
            "escalated": 0,
            "fixed": 0,
            "broken": 0,
            "abstain_answerable": 0,
        }
        bm25_ok = dense_ok = 0
        bm25_r = [0, 0, 0]
        dense_r = [0, 0, 0]
        stage_times: dict[str, list[float]] = {}
        totals: list[float] = []
        cases: list[dict[str, Any]] = []  # one a request, for reading the misses (``eval routing --cases``)
        for query, vector in zip(queries, query_vectors, strict=True):
            registry, accepted = self.protocol.registry(query, size)
            router = self.router(registry)
            started = time.perf_counter()
            result = router.route_vector(query["query"], vector, limit=10)
            total = (time.perf_counter() - started) * 1000 + query.get("_embed_ms", 0.0)
            totals.append(total)
            for stage, ms in result.timings_ms.items():
                stage_times.setdefault(stage, []).append(ms)
            stage_times.setdefault("embed", []).append(query.get("_embed_ms", 0.0))
            ranked = [int(c.id) for c in result.candidates]
            right = (not result.abstained) and ranked[0] in accepted
            ours["ok"] += right
            ours["abstain_answerable"] += result.abstained
            cases.append(self._case(query, result, right))
            plain = router.route_vector(query["query"], vector, limit=10, allow_rerank=False)
            plain_ranked = [int(c.id) for c in plain.candidates]
            ours["r1"] += plain_ranked[0] in accepted
            ours["r3"] += any(i in accepted for i in plain_ranked[:3])
            ours["r10"] += any(i in accepted for i in plain_ranked[:10])
            if result.escalated:
                ours["escalated"] += 1
                before, after = plain_ranked[0] in accepted, ranked[0] in accepted
                ours["fixed"] += (not before) and after
                ours["broken"] += before and not after
            # Baselines on the same registry.
            rows = np.asarray(registry)
            lexical = router.bm25.scores(query["query"])
            order_ids = [int(i) for i in router.slb.ids]
            bm_rank = [order_ids[i] for i in np.argsort(-lexical, kind="stable")[:10]]
            dense = self.vectors[rows] @ self.plain_vector(query["query"], vector)
            dense_rank = [int(rows[i]) for i in np.argsort(-dense, kind="stable")[:10]]
            bm25_ok += bm_rank[0] in accepted
            dense_ok += dense_rank[0] in accepted
            for j, cut in enumerate((1, 3, 10)):
                bm25_r[j] += any(i in accepted for i in bm_rank[:cut])
                dense_r[j] += any(i in accepted for i in dense_rank[:cut])
        n = len(queries)
        abstain_irrelevant = 0
        for query, vector in zip(irrelevant, irrelevant_vectors, strict=True):
            registry, _ = self.protocol.registry({"query": query["query"], "acceptable_tools": []}, size)
            decision = self.router(registry).route_vector(query["query"], vector)
            abstain_irrelevant += decision.abstained
            cases.append(self._case(query, decision, decision.abstained, irrelevant=True))
        abstained_total = abstain_irrelevant + ours["abstain_answerable"]
        result_doc: dict[str, Any] = {
            "n": n,
            "top1": ours["ok"] / n,
            "top1_ci": wilson(ours["ok"], n),
            "recall_at_1": ours["r1"] / n,
            "recall_at_3": ours["r3"] / n,
            "recall_at_10": ours["r10"] / n,
            "escalated": ours["escalated"] / n,
            "flips_fixed": ours["fixed"],
            "flips_broken": ours["broken"],
            "abstain_answerable": ours["abstain_answerable"] / n,
            "abstain_precision": (abstain_irrelevant / abstained_total) if irrelevant and abstained_total else None,
            "abstain_recall": (abstain_irrelevant / len(irrelevant)) if irrelevant else None,
            "p50_ms": _percentile(totals, 50),
            "p95_ms": _percentile(totals, 95),
            "stages_ms": {s: {"p50": _percentile(v, 50), "p95": _percentile(v, 95)} for s, v in stage_times.items()},
        }
        baselines = {
            "bm25": self._baseline(bm25_ok, bm25_r, n),
            "dense_f32": self._baseline(dense_ok, dense_r, n),
        }
        return {"ours": result_doc, "baselines": baselines, "cases": cases}

    def _case(
        self, query: dict[str, Any], result: RouteResult, right: bool, irrelevant: bool = False
    ) -> dict[str, Any]:
        """One request's decision as a reader of the misses wants it: the tools by name, best first. A
        request no tool serves has no acceptable tool and is right when the router abstains."""
        return {
            "id": query.get("id"),
            "query": query["query"],
            "acceptable": [] if irrelevant else accepted_tools(query),
            "irrelevant": irrelevant,
            "chosen": None if result.abstained else self.tools[int(result.candidates[0].id)].name,
            "right": bool(right),
            "abstained": result.abstained,
            "escalated": result.escalated,
            "margin": round(float(result.margin), 4),
            "candidates": [
                {"server": tool.server, "tool": tool.name, "score": round(float(c.score), 4)}
                for c in result.candidates[:3]
                for tool in [self.tools[int(c.id)]]
            ],
        }

    def run_follow_ups(
        self, dialogues: list[dict[str, Any]], vectors: dict[str, np.ndarray], size: int | None
    ) -> dict[str, Any]:
        """The dialogues' turns after the first, each routed as the gateway routes a session's turn (with a
        window of the turns before it: :meth:`route_turn`) and, side by side, alone. A turn's
        registry is built by the protocol as for a single request; ``vectors``: each follow-up's embedding
        (:func:`embed_follow_ups`), taken once for every size."""
        alone_right: list[bool] = []
        windowed_right: list[bool] = []
        for dialogue in dialogues:
            window = SessionWindow()
            for index, turn in enumerate(dialogue["turns"]):
                if index:
                    registry, accepted = self.protocol.registry(turn, size)
                    router = self.router(registry)
                    vector = vectors[turn["query"]]
                    alone = router.route_vector(turn["query"], vector)
                    windowed = self.route_turn(router, window, turn["query"], vector)
                    for right, result in ((alone_right, alone), (windowed_right, windowed)):
                        right.append(
                            not result.abstained and result.chosen is not None and int(result.chosen) in accepted
                        )
                window.add(turn["query"], turn["gold_tool"], turn.get("gold_arguments") or {}, turn.get("result"))
        n = len(windowed_right)
        fixed = sum(w and not a for w, a in zip(windowed_right, alone_right, strict=True))
        broken = sum(a and not w for w, a in zip(windowed_right, alone_right, strict=True))
        return {
            "n": n,
            "top1": sum(windowed_right) / n if n else None,
            "top1_ci": wilson(sum(windowed_right), n) if n else None,
            "top1_alone": sum(alone_right) / n if n else None,
            "fixed": fixed,
            "broken": broken,
        }

    def route_turn(self, router: Router, window: SessionWindow, intent: str, vector: np.ndarray) -> RouteResult:
        """A session's turn routed as ``routed_call`` routes it: with the slots its window carries, and an
        elided follow-up ("same thing for pallets/flask") that fits no tool surely, or cannot name one,
        routed again joined to the requests before it, kept where that lands on the session's last tool."""
        carried = window.carried_slots(intent)
        result = router.route_vector(intent, vector, carried=carried)
        elided = window.rejoined_request(intent, result.unsure(router.calibration.tau))
        if elided is None:
            return result
        joined = window.joined_route(intent, router.route(elided, carried=carried), lambda i: self.tools[int(i)].name)
        return result if joined is None else joined

    @staticmethod
    def _baseline(ok: int, recalls: list[int], n: int) -> dict[str, Any]:
        return {
            "n": n,
            "top1": ok / n,
            "top1_ci": wilson(ok, n),
            "recall_at_1": recalls[0] / n,
            "recall_at_3": recalls[1] / n,
            "recall_at_10": recalls[2] / n,
            "escalated": None,
            "abstain_precision": None,
            "abstain_recall": None,
            "p50_ms": None,
            "p95_ms": None,
        }


LEXICAL_GRID = (0.0, 0.1, 0.2, 0.3, 0.5)
AFFORDANCE_GRID = (0.0, 0.1, 0.2, 0.3)
MOOD_GRID = (0.0, 0.1, 0.2, 0.3)
NAME_GRID = (0.0, 0.1, 0.15, 0.2)
UNFILLED_GRID = (0.0, 0.1, 0.2, 0.3)
SERVER_GRID = (0.0, 0.1, 0.2, 0.3)
RERANK_GRID = (0.0, 0.02, 0.05, 0.1)
RERANK_K_GRID = (2, 3, 4)
# The ranks whose reciprocal the fit counts first: the three candidates a host is shown when the router
# abstains or asks first. A right tool moved from 6th to 4th changes no answer; counted like a move into
# the top three, such moves took the 117 GitHub tools' weights to a point worse in the top three (session
# 63, docs/routing.md). The whole top 10 still breaks ties: alone, the top three tie so often that the
# later grids fell to their smallest weights (the server's share to 0).
RANKS_THAT_COUNT = 3


def fit_score(found: Sequence[int | None]) -> tuple[float, float]:
    """The fit's objective, compared in order: the summed reciprocal rank of the first acceptable tool
    where it is among the ``RANKS_THAT_COUNT`` best, then over the whole top 10 (``found``: its rank per
    request, None when absent)."""
    ranked = [rank for rank in found if rank is not None]
    return (
        sum(1.0 / (1 + rank) for rank in ranked if rank < RANKS_THAT_COUNT),
        sum(1.0 / (1 + rank) for rank in ranked),
    )


def calibrate(
    evaluation: RoutingEvaluation,
    queries: list[dict[str, Any]],
    query_vectors: np.ndarray,
    sizes: Sequence[int | None],
    escalate_fraction: float = 0.2,
    floor_quantile: float = 0.015,
) -> Calibration:
    """Fit the router's few constants on calibration queries (report on other queries!).

    1. The fusion weights (lexical, affordance, mood, name): the grid point with the best mean reciprocal
       rank of an acceptable tool before the gate, counted in the top three (``RANKS_THAT_COUNT``), then in
       the top 10, ties to the smaller weights. Top-1 counts
       over a few dozen queries tie across much of a 320-point grid and picked noise: GitHub's even half
       chose weights that scored 63.9% on the odd half at N = 250 where the reciprocal rank's choice
       scores 67.5% (docs/routing.md). Registries differ (BFCL's terse functions reward meaning, GitHub's
       entity-heavy requests reward words and slots), so they are calibrated per registry.
       Then the penalty for a required slot the request leaves empty, over its own grid with those
       weights fixed (a fifth axis in the same grid would quadruple the calibration's time), and after
       it the weight of the server's share of tools that take the request's slots, the same way. With
       several registry sizes, the reciprocal rank is summed over them: weights chosen at N = 250 alone
       can be worse at the full registry, which is what a gateway serves.
    2. τ = the ``escalate_fraction`` quantile of top-1 − top-2 margins over confusable queries (all
       queries when none is labelled confusable), so about that share of decisions escalates.
    3. floor = the ``floor_quantile`` quantile of the best fused score over answerable queries: half the
       ≤ 3% of answerable requests a gateway may turn away, because a quantile of a few dozen requests
       is itself a sample. At the 3% quantile of one half of the GitHub requests, 3 of the other half's
       83 abstained in both directions (3.6%); at 1.5% 0 and 2 did, and the irrelevant requests caught
       stayed 19 of 20 (docs/routing.md). τ and the floor are taken at the first size.
    4. With a cross-encoder, its weight in the gate and how many candidates it re-ranks, by the same
       reciprocal rank with the gate on; weight 0 (the gate never escalates) when re-ranking does not
       help this registry, and the fewest candidates that do as well as more (each pair is ~12 ms of
       the route's p95). The gate then stays on only if its top-1 flips show it earns its latency
       (``gate_earns_its_cost``). On GitHub it broke more decisions than it fixed; on BFCL as many
       (docs/routing.md).
    """
    base = evaluation.calibration
    # one case per (size, query), size-major so that the full registry's one router is built once
    cases = [(size, query, vector) for size in sizes for query, vector in zip(queries, query_vectors, strict=True)]
    registries = [evaluation.protocol.registry(query, size) for size, query, _ in cases]
    # Each case's router is built once for the whole grid (building one is most of a route's cost).
    routers = [evaluation.router(registry) for registry, _ in registries]

    def ranks(calibration: Calibration, rerank: bool = False) -> list[int | None]:
        """The rank of the first acceptable tool in each case's top 10 (None when absent)."""
        found: list[int | None] = []
        for (_, query, vector), router, (_, accepted) in zip(cases, routers, registries, strict=True):
            router.calibration = calibration
            result = router.route_vector(query["query"], vector, limit=10, allow_rerank=rerank)
            found.append(next((k for k, c in enumerate(result.candidates) if int(c.id) in accepted), None))
        return found

    def fit(calibration: Calibration, rerank: bool = False) -> tuple[float, float]:
        return fit_score(ranks(calibration, rerank))

    grid = [
        replace(base, lexical_weight=lex, affordance_weight=aff, mood_weight=mood, name_weight=name, floor=-1e9)
        for lex in LEXICAL_GRID
        for aff in AFFORDANCE_GRID
        for mood in MOOD_GRID
        for name in NAME_GRID
    ]

    def total_weight(c: Calibration) -> float:
        return c.lexical_weight + c.affordance_weight + c.mood_weight + c.name_weight

    _, _, tuned = max(((fit(c), -total_weight(c), c) for c in grid), key=lambda scored: scored[:2])
    unfilled = [replace(tuned, unfilled_weight=weight) for weight in UNFILLED_GRID]
    _, _, tuned = max(((fit(c), -c.unfilled_weight, c) for c in unfilled), key=lambda scored: scored[:2])
    servers = [replace(tuned, server_weight=weight) for weight in SERVER_GRID]
    _, _, tuned = max(((fit(c), -c.server_weight, c) for c in servers), key=lambda scored: scored[:2])
    margins, confusable_margins, best = [], [], []
    for query, vector, router in zip(queries, query_vectors, routers[: len(queries)], strict=True):
        router.calibration = tuned
        result = router.route_vector(query["query"], vector, allow_rerank=False)
        margins.append(result.margin)
        best.append(result.candidates[0].score)
        if query.get("confusable"):
            confusable_margins.append(result.margin)
    pool = confusable_margins or margins
    calibration = replace(
        tuned,
        tau=float(np.quantile(pool, escalate_fraction)),
        floor=float(np.quantile(best, floor_quantile)),
    )
    if evaluation.cross_encoder is not None:
        memo = _MemoizedScores(evaluation.cross_encoder)  # each (request, tool) pair is scored once
        for router in routers:
            router.cross_encoder = memo  # type: ignore[assignment]  # the same score() interface
        gated = [
            replace(calibration, rerank_weight=weight, rerank_k=k, floor=-1e9)
            for weight in RERANK_GRID
            for k in RERANK_K_GRID
        ]
        try:
            scored = [(ranks(c, rerank=True), c) for c in gated]
        finally:
            for router in routers:
                router.cross_encoder = evaluation.cross_encoder
        # ties go to the smaller weight, then to fewer pairs (each costs ~12 ms on one core)
        found, chosen = max(scored, key=lambda s: (fit_score(s[0]), -s[1].rerank_weight, -s[1].rerank_k))
        ungated = next(f for f, c in scored if c.rerank_weight == 0)  # weight 0 never escalates: the router's own
        if chosen.rerank_weight > 0 and not gate_earns_its_cost(ungated, found):
            chosen = replace(chosen, rerank_weight=0.0)
        calibration = replace(calibration, rerank_weight=chosen.rerank_weight, rerank_k=chosen.rerank_k)
    evaluation.calibration = calibration
    if evaluation._router_cache is not None:
        evaluation._router_cache[1].calibration = calibration
    return calibration


GATE_EVIDENCE = 0.05


def gate_earns_its_cost(before: Sequence[int | None], after: Sequence[int | None]) -> bool:
    """Whether re-ranking fixes significantly more top-1 decisions than it breaks.

    An escalation costs ~40 ms of the route (two cross-encoder pairs side by side), which is what
    sets the p95. The reciprocal rank picks the best weight, but any gain at all, one request's rank
    3 → 2, would switch the gate on. So the gate stays on only when its top-1 flips pass a one-sided
    sign test at ``GATE_EVIDENCE``: BFCL's even half chose weight 0.02 and fixed 4 decisions while
    breaking 3 (p = 0.5), for a p95 of 84 ms instead of ~25 (docs/routing.md).
    """
    fixed = sum(1 for b, a in zip(before, after, strict=True) if b != 0 and a == 0)
    broken = sum(1 for b, a in zip(before, after, strict=True) if b == 0 and a != 0)
    return sign_test_p(fixed, broken) < GATE_EVIDENCE


def sign_test_p(wins: int, losses: int) -> float:
    """One-sided exact sign test: P(at least ``wins`` of ``wins + losses`` fair coin flips)."""
    n = wins + losses
    if n == 0:
        return 1.0
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n


class _MemoizedScores:
    """A cross-encoder's scores remembered per (request, document): the calibration grid re-ranks
    the same pairs for every weight and candidate count."""

    def __init__(self, cross_encoder: CrossEncoder) -> None:
        self.cross_encoder = cross_encoder
        self.scores: dict[tuple[str, str], float] = {}

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        missing = [d for d in dict.fromkeys(documents) if (query, d) not in self.scores]
        if missing:
            for document, logit in zip(missing, self.cross_encoder.score(query, missing), strict=True):
                self.scores[(query, document)] = float(logit)
        return np.array([self.scores[(query, d)] for d in documents], dtype=np.float32)


def embed_follow_ups(embedder: Embedder, dialogues: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Each dialogue turn after the first, embedded once: the query vector by its text."""
    turns = [turn for dialogue in dialogues for turn in dialogue["turns"][1:]]
    return {turn["query"]: vector for turn, vector in zip(turns, embed_queries(embedder, turns), strict=True)}


def embed_queries(embedder: Embedder, queries: list[dict[str, Any]]) -> np.ndarray:
    """Each request's vector as ``Router.route`` embeds it (``routing.embedded_intent``), timed."""
    vectors = np.zeros((len(queries), embedder.dimension), dtype=np.float32)
    for index, query in enumerate(queries):
        text = embedded_intent(query["query"])
        started = time.perf_counter()
        vectors[index] = embedder.embed_query(text)
        query["_embed_ms"] = (time.perf_counter() - started) * 1000
    return vectors
