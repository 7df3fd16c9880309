"""Routing: pick the tool for a natural-language intent among every upstream tool.

Pipeline (each stage timed in the trace):

1. **Dense retrieval** over the semantic lookaside buffer (INT8 tool vectors, ``slb.py``).
2. **Lexical signal**: BM25 over names, descriptions and parameter names (``lexical.py``), scaled to
   0..1 by the best lexical match and fused linearly: ``fused = cosine + w · bm25/max(bm25)``; plus the
   slot affordance (``affordance.py``) and, when the request and the tool both say whether they read or
   write, a penalty for the other kind (``mood.py``); the share of the tool's name words the request
   says (``lexical.NameCoverage``); and a penalty for a tool that requires a number, path or URL the
   request does not give, where few tools of its server require it (``distinguishing_requirements``);
   and the share of the tool's server whose tools take the slots the request names
   (``server_affordances``); and a fixed penalty for a tool whose server works on another platform
   than the one the request names ("… on Bitbucket", ``platforms.py``).
   A follow-up in a session ("close it") that names no slot of its own counts the slot kinds its
   window's requests named (``carried``, from ``SessionWindow.carried_slots``).
   A request that sets fields in several clauses ("update the title … and mark it ready for review")
   lifts the candidates with a parameter for each clause above those that set only some of them
   (``compound.py``).
3. **Margin gate**: when ``top1 − top2 ≥ τ`` the decision resolves at once; otherwise the top-k
   candidates are re-ranked by a cross-encoder (``embedder.CrossEncoder``) and the result combined
   with the fused score.
4. **Abstain**: when even the best candidate's fused score is below a calibrated floor, answer with the
   top candidates instead of guessing. (The fused score separates irrelevant requests better than the
   cosine alone: they rarely share words or slots with any tool.)

τ and the floor come from ``nexus-gateway calibrate`` (``Calibration``), stored with the registry cache.
Measured effects of each stage are in ``docs/routing.md``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .affordance import (
    SLOT_KINDS,
    filled_slots,
    holds_a_repository,
    id_parameter_words,
    names_a_slug,
    names_a_whole_number,
    numbered_objects,
    query_slots,
    required_identifiers,
    tool_affordances,
    tool_requirements,
)
from .compound import NOTHING, ToolFields, lift_complete_tools
from .embedder import CrossEncoder, Embedder
from .lexical import BM25Index, NameCoverage, split_identifier, tokenize, without_place_nouns, without_values
from .mood import (
    READ,
    ChangeVocabulary,
    ObjectChanges,
    ToolObjects,
    asked_changes,
    asked_objects,
    denied_words,
    denies,
    inflects,
    opposed_name_words,
    refused_changes,
    request_mood,
    spelled_verbs,
    tool_mood,
)
from .pasted import points_back, split_pasted, without_pasted
from .platforms import PlatformIndex
from .slb import SemanticLookasideBuffer

DEFAULT_LEXICAL_WEIGHT = 0.3
DEFAULT_AFFORDANCE_WEIGHT = 0.2
DEFAULT_MOOD_WEIGHT = 0.2
DEFAULT_NAME_WEIGHT = 0.15
DEFAULT_UNFILLED_WEIGHT = 0.2
DEFAULT_SERVER_WEIGHT = 0.1
# Not fitted: calibration scores answerable requests, which name their own platform or none, so it
# cannot see what the penalty is for (requests for a platform no upstream serves). It only has to
# outweigh what shared words can give a look-alike tool: the fused score's other terms add at most ~1.
DEFAULT_PLATFORM_WEIGHT = 0.5
DEFAULT_TAU = 0.05
DEFAULT_FLOOR = 0.6  # uncalibrated: abstain only on clearly unrelated requests (calibrated: 0.61-0.89)
DEFAULT_RERANK_K = 4
JUDGE_CANDIDATES = 3  # how many of the router's best the local LLM chooses among (``nexus.judge``)
DEFAULT_RERANK_WEIGHT = 0.02
RETRIEVE_K = 32
# A named ``owner/repo`` that a tool has no parameter for costs it half the affordance weight on top of
# the slot's share: with the share alone a tool that takes the request's path and number lost only a
# third of it (docs/routing.md, session 51; the whole weight broke requests whose slug is a team or a date).
REPOSITORY_NOWHERE = 0.5


# How much of a description the embedder reads (``tool_document``); ``embedder.DOCUMENT_RECIPE`` names it
DOCUMENT_WORDS = 30


def tool_document(name: str, description: str) -> str:
    """What the embedder sees of a tool: its name as words, then the lead of its description, its first
    ``DOCUMENT_WORDS`` words. The rest is a manual (paging, caps, response fields: ``get_file_blame``'s
    "Ranges share commit metadata via the top-level 'commits' map keyed by SHA …"), and it drew the
    tool's vector towards every request about files or commits: "Their pyproject.toml should say" went to
    ``get_file_blame``. BM25 still reads every word (docs/routing.md)."""
    return f"{split_identifier(name).lower()}: {' '.join(description.split()[:DOCUMENT_WORDS])}"


def rerank_document(name: str, description: str, limit: int = 240) -> str:
    """Concise text for the cross-encoder: long descriptions cost time and add little."""
    return tool_document(name, description)[:limit]


@dataclass(frozen=True)
class Calibration:
    """Gate and abstention thresholds, computed by ``nexus-gateway calibrate``."""

    tau: float = DEFAULT_TAU
    floor: float = DEFAULT_FLOOR
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    affordance_weight: float = DEFAULT_AFFORDANCE_WEIGHT
    mood_weight: float = DEFAULT_MOOD_WEIGHT
    name_weight: float = DEFAULT_NAME_WEIGHT
    unfilled_weight: float = DEFAULT_UNFILLED_WEIGHT
    server_weight: float = DEFAULT_SERVER_WEIGHT
    platform_weight: float = DEFAULT_PLATFORM_WEIGHT
    rerank_weight: float = DEFAULT_RERANK_WEIGHT
    rerank_k: int = DEFAULT_RERANK_K
    # below which margin the local LLM picks among the best candidates when ``nexus.judge`` is unset;
    # 0: never. Only ``calibrate --judge`` sets it, where the judge's flips pass a sign test (judge_fit.py)
    judge_margin: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        return cls(**{k: type(getattr(cls(), k))(v) for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Candidate:
    id: str
    score: float
    cosine: float
    lexical: float
    rerank: float | None = None


@dataclass
class RouteResult:
    """A routing decision and its trace."""

    chosen: str | None
    candidates: list[Candidate]
    margin: float
    escalated: bool
    abstained: bool
    timings_ms: dict[str, float] = field(default_factory=dict)
    unmade: tuple[str, ...] = ()  # changes no tool here makes ("lock", "delete a branch"; ``Router.unmade``)

    def unsure(self, tau: float) -> bool:
        """No tool, or one only a hair (``tau``, the gate's margin) ahead of the next."""
        return self.abstained or self.chosen is None or self.margin < tau

    def trace(self, limit: int = 5) -> dict[str, Any]:
        return {
            "chosen": self.chosen,
            "candidates": [
                {
                    "tool": c.id,
                    "score": round(c.score, 4),
                    "cosine": round(c.cosine, 4),
                    "lexical": round(c.lexical, 4),
                }
                | ({"rerank": round(c.rerank, 3)} if c.rerank is not None else {})
                for c in self.candidates[:limit]
            ],
            "margin": round(self.margin, 4),
            "escalated": self.escalated,
            "abstained": self.abstained,
            "ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        } | ({"no_tool_makes": list(self.unmade)} if self.unmade else {})


NO_OBJECTS = ToolObjects()  # a tool seen without its schema


@dataclass(frozen=True)
class RouteDoc:
    """The routing view of one tool."""

    id: str
    name: str
    description: str
    tokens: Sequence[str]
    affordances: frozenset[str] = frozenset()
    mood: float | None = None  # mood.READ, mood.WRITE or unknown
    requires: frozenset[str] = frozenset()  # slot kinds the schema requires (affordance.tool_requirements)
    server: str = ""
    fields: ToolFields = NOTHING  # what the tool can set (``compound.py``)
    holds_repository: bool = False  # a named ``owner/repo`` has a parameter to go to (``holds_a_repository``)
    objects: ToolObjects = NO_OBJECTS  # what it works on (``mood.py``)
    required_ids: tuple[frozenset[str], ...] = ()  # what its required id numbers are about (``required_identifiers``)
    id_words: frozenset[str] = frozenset()  # what its identifier parameters are about (``id_parameter_words``)

    @classmethod
    def of_tool(
        cls,
        tool_id: str,
        name: str,
        description: str,
        tokens: Sequence[str],
        schema: dict[str, Any] | None,
        annotations: dict[str, Any] | None,
        server: str = "",
        preset: Collection[str] = (),
    ) -> RouteDoc:
        """A tool's routing view: the slot kinds its schema takes and whether it reads or writes come from
        the tool itself, the same way for the gateway, the eval and the benchmarks. ``preset``: parameters
        the gateway fills itself (``nexus.defaults``, git's ``repo_path``), which take no slot the request
        names ("print the contents of notes.txt" is no path for ``git_show``). Their requirements stay: a
        requirement every tool of a server shares tells none apart (``distinguishing_requirements``),
        and without git's ``repo_path`` the ``files`` of ``git_add`` would count against "add all my
        changes", which names no file (docs/routing.md)."""
        takes = without_parameters(schema, preset) if preset else schema
        return cls(
            tool_id,
            name,
            description,
            tokens,
            tool_affordances(takes),
            tool_mood(name, annotations),
            tool_requirements(schema),
            server,
            ToolFields.of_tool(name, takes),
            holds_a_repository(takes),
            ToolObjects.of_tool(name, schema),
            required_identifiers(schema),
            id_parameter_words(takes),
        )


def without_parameters(schema: dict[str, Any] | None, names: Collection[str]) -> dict[str, Any] | None:
    """``schema`` with the properties ``names`` left out: what a request can fill when those are filled
    otherwise (for ``tool_affordances``, which reads the properties)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return schema
    return {**schema, "properties": {k: v for k, v in schema["properties"].items() if k not in names}}


def distinguishing_requirements(docs: Sequence[RouteDoc]) -> dict[str, np.ndarray]:
    """Per slot kind, which tools require it *and* share that with at most half of their server's
    tools. A requirement nearly every tool of a server has (git's ``repo_path``) is the server's
    configuration, not what tells its tools apart; penalising it would only push the whole server
    down for requests that never say it.

    A repository (owner and repo) is the exception: it tells tools apart unless *every* tool of the
    server requires one. Requests name their repository whenever the tool they want needs one (109 of
    the 114 GitHub dev requests whose tools all require it; the other five mostly say "my blog repo",
    which fills it, ``affordance.filled_slots``), while 37 of the 42 that name none want a tool that
    does not (``search_commits`` for "commits authored by sofia-g anywhere in the riverbank org", not
    ``list_commits``). GitHub's 82 of 117 is far above half. The same rule for every kind would bring
    back the filesystem's ``path`` (12 of 14 tools), which requests name loosely ("what's inside the src
    folder"), and lost that request (docs/routing.md)."""
    sizes: dict[str, int] = {}
    counts: dict[tuple[str, str], int] = {}
    for doc in docs:
        sizes[doc.server] = sizes.get(doc.server, 0) + 1
        for kind in doc.requires:
            counts[(doc.server, kind)] = counts.get((doc.server, kind), 0) + 1

    def distinguishes(doc: RouteDoc, kind: str) -> bool:
        if kind not in doc.requires:
            return False
        share = counts[(doc.server, kind)] / sizes[doc.server]
        return share < 1 if kind == "repo" else share <= 0.5

    return {kind: np.array([distinguishes(d, kind) for d in docs], dtype=bool) for kind in SLOT_KINDS}


# A tool its own server has retired in favour of another: "DEPRECATED: Use read_text_file instead."
_SUPERSEDED = re.compile(
    r"\bdeprecated\b.{0,80}?(?:\buse\s+[`'\"]?([A-Za-z][\w.-]*)[`'\"]?\s+instead|\bin\s+fav(?:o|ou)r\s+of\s+[`'\"]?"
    r"([A-Za-z][\w.-]*))",
    re.I | re.S,
)
# A tool its server asks clients to prefer over another: "Prefer this tool over assign_copilot_to_issue when
# available." (GitHub's ``assign_copilot_to_issue_with_intent``): the same retirement, said by the successor
_PREFERRED_OVER = re.compile(r"\bprefer\s+this\s+(?:tool\s+)?over\s+[`'\"]?([A-Za-z][\w.-]*[A-Za-z0-9])", re.I)
# A tool named for directories (``list_directory``, ``create_directory``, ``directory_tree``): the path
# slot of a request is a file name ("notes.txt", ``affordance.FILE_NAME``), which such a tool does not take.
_NAMES_A_DIRECTORY = re.compile(r"director|folder|(?:^|_)dirs?(?:$|_)", re.I)
RETIRED_STEP = np.float32(1.0)  # how far below its successor a retired tool is scored
COMPLETE_STEP = 0.01  # how far past τ above the best partial tool one that sets every asked field is lifted


def superseded_by(description: str) -> str | None:
    """The tool name a description says to use instead of this deprecated one, if it names one."""
    match = _SUPERSEDED.search(description)
    return (match.group(1) or match.group(2)).rstrip(".") if match else None


def successor_rows(docs: Sequence[RouteDoc]) -> np.ndarray:
    """Pairs (retired row, successor row): a tool whose description says it is deprecated in favour of
    another tool of the same server. The filesystem server keeps ``read_file`` ("DEPRECATED: Use
    read_text_file instead.") beside ``read_text_file``, with the plainer name, so "read notes.txt" went
    to the tool its own server asks clients not to use. A successor may say it instead: "Prefer this tool
    over assign_copilot_to_issue when available." (GitHub's ``assign_copilot_to_issue_with_intent``, which
    can also record an assignment as a suggestion; "Suggest Copilot as the assignee for issue 88" went to
    the other one by 0.008)."""
    rows = {(d.server, d.name): i for i, d in enumerate(docs)}
    pairs = []
    for i, doc in enumerate(docs):
        name = superseded_by(doc.description)
        j = rows.get((doc.server, name)) if name else None
        if j is not None and j != i:
            pairs.append((i, j))
        preferred = _PREFERRED_OVER.search(doc.description)
        k = rows.get((doc.server, preferred.group(1))) if preferred else None
        if k is not None and k != i:
            pairs.append((k, i))
    return np.array(pairs, dtype=np.intp).reshape(-1, 2)


def lexical_documents(docs: Sequence[RouteDoc]) -> list[list[str]]:
    """Each tool's lexical terms, and its server's name among them where the registry has more than one
    server: users name the server they mean ("show me everything stored in memory" is the memory server's
    ``read_graph``, not git's ``git_show``), and the name is what they called it in their config. One
    server's name, shared by every tool, tells none apart and would only lengthen each document."""
    named = len({d.server for d in docs}) > 1
    return [list(d.tokens) + (tokenize(d.server) if named else []) for d in docs]


def server_affordances(docs: Sequence[RouteDoc], affords: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per slot kind, the share of each tool's server whose tools take it, less the mean over all
    tools. A request that names ``owner/repo`` is a request for a server whose tools take one, even when
    the tool it wants does not ("find usages of useSyncExternalStore in facebook/react" is GitHub's
    ``search_code(query)``, not a memory server's ``sync_status``). Centred, so that a registry of one
    server gets no offset and its abstention floor stays where it was."""
    servers = np.array([d.server for d in docs])
    columns = {}
    for kind, column in affords.items():
        share = np.zeros(len(docs), dtype=np.float32)
        for server in set(servers.tolist()):
            members = servers == server
            share[members] = column[members].mean()
        columns[kind] = share - share.mean() if len(docs) else share
    return columns


def embedded_intent(intent: str) -> str:
    """The part of an intent the embedder reads: the intent without its argument values (quoted text,
    paths, URLs, file names; ``lexical.without_values``). Values pull the request's vector towards tools
    about their subject ("creat a gist notes.md w/ 'meeting notes 12/3: ship v2 friday'" went to
    ``list_gists``), and in a short request they drown the operation, so that its best score fell below
    the abstention floor ("new repo 'scratchpad', public pls"). The lexical signal has left values out
    since session 30, and the slot detectors still read the whole intent. An intent that is nothing but
    a value is embedded as it is. Measured in docs/routing.md."""
    intent = without_pasted(intent)
    return " ".join(without_values(intent).split()) or intent


class Router:
    """Dense + lexical retrieval with a calibrated cross-encoder gate, over one set of tools."""

    def __init__(
        self,
        embedder: Embedder,
        docs: Sequence[RouteDoc],
        vectors: np.ndarray,
        calibration: Calibration | None = None,
        cross_encoder: CrossEncoder | None = None,
    ) -> None:
        self.embedder = embedder
        self.cross_encoder = cross_encoder
        self.calibration = calibration or Calibration()
        self.docs = list(docs)
        self.slb = SemanticLookasideBuffer(embedder.dimension, capacity=max(len(docs), 1))
        self.slb.add([d.id for d in docs], vectors)
        self._row_doc = {d.id: d for d in self.docs}
        self._index_rows()

    def _index_rows(self) -> None:
        """Lexical index and affordance columns follow the SLB's row order."""
        ordered = self.slb_docs()
        self.bm25 = BM25Index(lexical_documents(ordered), known_words=self.embedder.whole_words)
        self.names = NameCoverage([d.name for d in ordered])
        self.affords = {
            kind: np.array([kind in d.affordances for d in ordered], dtype=np.float32) for kind in SLOT_KINDS
        }
        self.requires = distinguishing_requirements(ordered)
        # tools whose distinguishing required number is an id, which a version or a decimal cannot be
        identifiers = np.array([bool(d.required_ids) for d in ordered], dtype=bool)
        self.requires_identifier = self.requires["number"] & identifiers
        self.required_ids = [(row, d.required_ids) for row, d in enumerate(ordered) if d.required_ids]
        self.server_affords = server_affordances(ordered, self.affords)
        self.id_word_rows: dict[str, list[int]] = {}
        for row, doc in enumerate(ordered):
            for word in doc.id_words:
                self.id_word_rows.setdefault(word, []).append(row)
        self.repository_homes = np.array([d.holds_repository for d in ordered], dtype=np.float32)
        # a tool named for directories takes no file name, the only path a request states; its server's
        # share of path-taking tools stays (without, "save … to todo.md" left the filesystem server)
        directories = np.array([bool(_NAMES_A_DIRECTORY.search(d.name)) for d in ordered], dtype=bool)
        self.affords["path"] = np.where(directories, np.float32(0), self.affords["path"])
        self.platforms = PlatformIndex([d.server for d in ordered], [f"{d.name} {d.description}" for d in ordered])
        self.moods = np.array([np.nan if d.mood is None else d.mood for d in ordered], dtype=np.float32)
        name_words = [split_identifier(d.name).lower().split() for d in ordered]
        # the word each tool's name leads with, the verb it is named for; none for a reader
        self.name_heads = [
            "" if d.mood == READ or not words else words[0] for d, words in zip(ordered, name_words, strict=True)
        ]
        # the words a registry names with and without "un" (git's "staged" and "unstaged"), and their rows
        self.opposed_rows = {
            word: np.array([word in words for words in name_words], dtype=np.float32)
            for word in opposed_name_words(name_words)
        }
        self.changes = ChangeVocabulary(token for d in ordered if d.mood != READ for token in d.tokens)
        self.object_changes = ObjectChanges((d.mood, d.tokens, d.objects) for d in ordered)
        self.successors = successor_rows(ordered)
        self.fields = [d.fields for d in ordered]

    def apply(self, added: Sequence[RouteDoc], vectors: np.ndarray, removed: Sequence[str]) -> None:
        """Incremental update when an upstream's tools change: only those rows are written or dropped."""
        self.slb.remove(list(removed))
        for tool_id in removed:
            self._row_doc.pop(tool_id, None)
        self.slb.add([d.id for d in added], vectors)
        self._row_doc.update({d.id: d for d in added})
        self.docs = self.slb_docs()
        self._index_rows()

    def holders_of_numbered(self, intent: str) -> np.ndarray | None:
        """The tools that can take every number the request names by what it numbers ("PR 71234": a
        parameter about a pull request, not ``search_pull_requests``' page), as a 0/1 column in row
        order; None when a number is named by no word (``affordance.numbered_objects``) or by one no
        tool's identifier parameters say ("fix #12"), and every number-taking tool holds it as before."""
        objects = numbered_objects(intent)
        if objects is None:
            return None
        holders = np.ones(len(self.slb.ids), dtype=bool)
        for words in objects:
            rows = [row for word in words for row in self.id_word_rows.get(word, ())]
            if not rows:
                return None
            takes = np.zeros_like(holders)
            takes[rows] = True
            holders &= takes
        return holders.astype(np.float32)

    def identifier_unfilled(self, objects: list[frozenset[str]]) -> np.ndarray:
        """The tools (among those whose required id sets them apart, ``requires_identifier``) with a
        required identifier about none of the things the request's numbers are named for: "file an issue
        … under milestone 7" leaves ``update_issue_milestone``'s ``issue_number`` empty; the milestone's
        number is no issue's."""
        named = frozenset().union(*objects)
        unfilled = np.zeros(len(self.slb.ids), dtype=bool)
        for row, required in self.required_ids:
            unfilled[row] = any(not words & named for words in required)
        return self.requires_identifier & unfilled

    def slb_docs(self) -> list[RouteDoc]:
        """Docs in SLB row order (rows move on removal; the lexical index follows the SLB)."""
        return [self._row_doc[i] for i in self.slb.ids]

    def route(
        self,
        intent: str,
        *,
        limit: int = 5,
        allow_rerank: bool = True,
        given: frozenset[str] = frozenset(),
        carried: frozenset[str] = frozenset(),
    ) -> RouteResult:
        """``given``: slot kinds the caller supplies besides the intent (``affordance.argument_slots``);
        ``carried``: slot kinds a follow-up refers back to (``SessionWindow.carried_slots``), counted as
        if the intent named them."""
        timings: dict[str, float] = {}
        started = time.perf_counter()
        query = self.embedder.embed_query(embedded_intent(intent))
        timings["embed"] = (time.perf_counter() - started) * 1000
        return self.route_vector(
            intent, query, limit=limit, allow_rerank=allow_rerank, timings=timings, given=given, carried=carried
        )

    def fuse(
        self,
        intent: str,
        cosine: np.ndarray,
        given: frozenset[str] = frozenset(),
        carried: frozenset[str] = frozenset(),
        readable: str | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every row's lexical signal (0..1) and fused score for ``intent``, given its cosines; ``carried``
        slot kinds count as named by the intent (affordance, server share, filled requirements).
        ``readable``: the intent with its verbs spelt right, when the caller has it already."""
        calibration = self.calibration
        placed = without_place_nouns(intent)  # "on the develop branch" says where, not what
        terms = self.bm25.query_terms(placed)
        lexical = self.bm25.term_scores(terms)
        peak = float(lexical.max()) if lexical.size else 0.0
        lexical = lexical / peak if peak > 0 else lexical
        fused = cosine + np.float32(calibration.lexical_weight) * lexical
        if calibration.name_weight:
            # a tool's name says its operation and object; the word a value leaves ("file") says what the
            # request acts on, not that a file tool's operation is asked: "create the folder reports and
            # delete old.txt" went to ``write_file`` when "file" covered half of its name
            said = self.bm25.query_terms(placed, value_kinds=False) if "file" in terms else terms
            fused = fused + np.float32(calibration.name_weight) * self.names.scores(said)
        slots = query_slots(intent) | carried
        if slots and calibration.affordance_weight:
            affords = self.affords
            if "number" in slots and (holders := self.holders_of_numbered(intent)) is not None:
                affords = {**affords, "number": holders}
            share = sum(affords[kind] for kind in slots) / np.float32(len(slots))
            fused = fused + np.float32(calibration.affordance_weight) * share
        if "repo" in slots and calibration.affordance_weight and names_a_slug(intent):
            # a named repository with nowhere to go: "git blame lib/response.js in expressjs/express" went to
            # a local git server's ``git_blame``, which takes the path and the line numbers the request gives
            homeless = np.float32(1) - self.repository_homes
            fused = fused - np.float32(calibration.affordance_weight * REPOSITORY_NOWHERE) * homeless
        if slots and calibration.server_weight:
            share = sum(self.server_affords[kind] for kind in slots) / np.float32(len(slots))
            fused = fused + np.float32(calibration.server_weight) * share
        if calibration.unfilled_weight:
            filled = filled_slots(intent, slots) | given
            missing = [self.requires[kind] for kind in SLOT_KINDS if kind not in filled]
            if "number" in filled and "number" not in given | carried:
                if not names_a_whole_number(intent):
                    missing.append(self.requires_identifier)  # "breaking in 5.3" names no issue
                elif (objects := numbered_objects(intent)) is not None:
                    missing.append(self.identifier_unfilled(objects))  # "under milestone 7" names no issue
            if missing:
                unfilled = np.logical_or.reduce(missing).astype(np.float32)
                fused = fused - np.float32(calibration.unfilled_weight) * unfilled
        elsewhere = self.platforms.mismatch(intent) if calibration.platform_weight else None
        if elsewhere is not None:
            fused = fused - np.float32(calibration.platform_weight) * elsewhere
        # the readers of verbs read the request with its verbs spelt right; BM25 corrects its own terms
        readable = readable if readable is not None else spelled_verbs(intent, self.embedder.whole_words)
        wanted = request_mood(readable) if calibration.mood_weight else None
        if wanted is not None:
            mismatch = np.nan_to_num(np.abs(self.moods - np.float32(wanted)), nan=0.0)
            fused = fused - np.float32(calibration.mood_weight) * mismatch
            if self.unmade(readable):
                # a change no tool here makes: every tool mismatches the request, and it abstains
                fused = fused - np.float32(calibration.mood_weight)
        refused = refused_changes(readable) if calibration.mood_weight else ()
        if refused:
            # "don't submit anything yet": the tool named for a change the request refuses is its opposite
            fused = fused - np.float32(calibration.mood_weight) * self.named_for_any(refused)
        denied = denied_words(readable) if calibration.mood_weight and self.opposed_rows else ()
        for word, rows in self.opposed_rows.items() if denied else ():
            if denies(word, denied):
                # "what I haven't staged": where the registry names both states, the denied one is not wanted
                fused = fused - np.float32(calibration.mood_weight) * rows
        if len(self.successors):
            # what a request finds in a retired tool it finds in its successor, which ranks above it
            retired, successor = self.successors[:, 0], self.successors[:, 1]
            fused[successor] = np.maximum(fused[successor], fused[retired])
            fused[retired] = fused[successor] - RETIRED_STEP
        # a margin of at least τ: the cross-encoder would re-rank by the words, which the lift overrules
        fused = lift_complete_tools(readable, fused, self.fields, RETRIEVE_K, calibration.tau + COMPLETE_STEP)
        return lexical, fused

    def named_for_any(self, verbs: Sequence[str]) -> np.ndarray:
        """1 for each row whose tool, not a reader, is named for one of ``verbs`` (``mood.named_for``)."""
        rows = [bool(head) and any(inflects(head, verb) for verb in verbs) for head in self.name_heads]
        return np.array(rows, dtype=np.float32)

    def unmade(self, readable: str) -> tuple[str, ...]:
        """The verbs of change ``readable`` (a request, its verbs spelt right) asks with when no tool here
        makes any of them (``mood.ChangeVocabulary``), else none."""
        asked = asked_changes(readable)
        return tuple(dict.fromkeys(asked)) if self.changes.makes_none_of(asked) else ()

    def unmade_on_object(self, readable: str) -> tuple[str, ...]:
        """The changes ``readable`` asks for that no tool here makes to the object it names, although
        some tool makes the change ("delete a branch"; ``mood.ObjectChanges``)."""
        return tuple(self.object_changes.unmade(asked_objects(readable)))

    def route_vector(
        self,
        intent: str,
        query: np.ndarray,
        *,
        limit: int = 5,
        allow_rerank: bool = True,
        timings: dict[str, float] | None = None,
        given: frozenset[str] = frozenset(),
        carried: frozenset[str] = frozenset(),
    ) -> RouteResult:
        timings = timings if timings is not None else {}
        calibration = self.calibration
        # a pasted trace's paths and words say nothing of the operation; material the request points at
        # ("has anyone reported this?") is text some parameter must hold, a search's query or an issue's body
        pasted = split_pasted(intent)
        intent = pasted.request
        if pasted.material and points_back(intent):
            carried = carried | {"text"}
        if len(self.slb) == 0:
            return RouteResult(None, [], 0.0, False, True, timings)
        started = time.perf_counter()
        cosine = self.slb.scores(query)
        timings["scan"] = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        # the readers of verbs (fusion's mood, abstention's changes) read it spelt right, once a route
        readable = spelled_verbs(intent, self.embedder.whole_words)
        lexical, fused = self.fuse(intent, cosine, given, carried, readable)
        k = min(max(RETRIEVE_K, limit), len(fused))
        top = np.argpartition(-fused, k - 1)[:k] if k < len(fused) else np.arange(len(fused))
        top = top[np.lexsort((top, -fused[top]))]
        timings["fuse"] = (time.perf_counter() - started) * 1000
        ids = self.slb.ids
        candidates = [Candidate(ids[i], float(fused[i]), float(cosine[i]), float(lexical[i])) for i in top]
        margin = candidates[0].score - candidates[1].score if len(candidates) > 1 else 1.0
        escalated = False
        gate_on = allow_rerank and self.cross_encoder is not None and calibration.rerank_weight > 0
        if gate_on and margin < calibration.tau and len(candidates) > 1:
            started = time.perf_counter()
            candidates = self._rerank(intent, candidates)
            timings["rerank"] = (time.perf_counter() - started) * 1000
            escalated = True
        # a change no tool here makes to the request's object is no call to route: its look-alikes do the
        # change to another object or another change to the object, so no score tells them from the call
        unmade = self.unmade_on_object(readable) if calibration.mood_weight else ()
        abstained = float(fused[top[0]]) < calibration.floor or bool(unmade)
        unmade = unmade or (self.unmade(readable) if abstained else ())
        return RouteResult(
            None if abstained else candidates[0].id,
            candidates[:limit] if limit else candidates,
            margin,
            escalated,
            abstained,
            timings,
            unmade,
        )

    def _rerank(self, intent: str, candidates: list[Candidate]) -> list[Candidate]:
        assert self.cross_encoder is not None
        k = self.calibration.rerank_k
        head, tail = candidates[:k], candidates[k:]
        texts = [rerank_document(self._row_doc[c.id].name, self._row_doc[c.id].description) for c in head]
        logits = self.cross_encoder.score(intent, texts)
        weight = self.calibration.rerank_weight
        rescored = [
            Candidate(c.id, c.score + weight * float(logit), c.cosine, c.lexical, float(logit))
            for c, logit in zip(head, logits, strict=True)
        ]
        rescored.sort(key=lambda c: -c.score)
        return rescored + tail
