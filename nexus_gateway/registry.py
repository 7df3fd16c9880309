"""The tool registry: every upstream tool under its host-facing id, searchable.

Ingest turns an upstream's raw ``tools/list`` entries into :class:`ToolEntry` objects (id,
signature, first-sentence summary, lexical tokens) and persists them in the registry cache under the
sha256 of each tool's canonical schema, so an unchanged tool is never processed twice and a restart
can serve search before the upstream has even answered.
"""

from __future__ import annotations

import difflib
import fnmatch
import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cache import RegistryCache, schema_key
from .exceptions import ToolHeld, ToolNotFound
from .lexical import BM25Index, LexicalDocument
from .signature import first_sentence, signature
from .toolids import assign_ids

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolEntry:
    """One upstream tool as the gateway knows it."""

    id: str
    server: str
    name: str
    key: str
    description: str
    input_schema: dict[str, Any]
    signature: str
    summary: str
    tokens: tuple[str, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def parameter_names(self) -> list[str]:
        props = self.input_schema.get("properties")
        return list(props) if isinstance(props, dict) else []

    @property
    def repeatable(self) -> bool:
        """The upstream says a second call does no more than the first (MCP's ``readOnlyHint`` or
        ``idempotentHint``), so a call lost with its connection may be sent again. Only an explicit hint
        counts: a tool that says nothing may write."""
        hints = self.raw.get("annotations") or {}
        return hints.get("readOnlyHint") is True or hints.get("idempotentHint") is True


def matches_any(patterns: Sequence[str], entry: ToolEntry) -> bool:
    """Whether a tool matches one of the config's patterns (``nexus.expose``, ``nexus.hide``): a
    ``server/*`` pattern takes all of one server's tools, any other is a glob over tool ids."""
    for pattern in patterns:
        if pattern.endswith("/*") and entry.server == pattern[:-2]:
            return True
        if fnmatch.fnmatchcase(entry.id, pattern):
            return True
    return False


@dataclass(frozen=True)
class SearchHit:
    entry: ToolEntry
    score: float


# What an ingested entry holds; bump it when that changes, and cached entries are recomputed (cheap: the
# embeddings live apart, under the schema key). 2: enum values in the lexical tokens; 3: no clitics
# ("'s", "n't") as tokens of their own; 4: "-ing" stems keep their verb's silent e ("staging" → stage).
INGEST_FORMAT = 5


def _ingest(server: str, tool: dict[str, Any], key: str) -> dict[str, Any]:
    """The cacheable, id-independent part of a tool's entry."""
    schema = tool.get("inputSchema") or {"type": "object"}
    description = tool.get("description") or tool.get("title") or ""
    document = LexicalDocument.of_tool(tool["name"], description, schema)
    return {
        "key": key,
        "format": INGEST_FORMAT,
        "tool": tool,
        "signature": signature(tool["name"], schema, description),
        "summary": first_sentence(description),
        "tokens": document.tokens(),
    }


class Registry:
    """All ingested tools, keyed by host-facing id; rebuilt per server on change."""

    def __init__(
        self,
        cache: RegistryCache | None = None,
        unprefixed: str | None = None,
        hide: Sequence[str] = (),
        disabled: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.cache = cache
        self.unprefixed = unprefixed
        self.hide = tuple(hide)  # patterns of tools no host may find or call (``nexus.hide``)
        # server → tool names it hides the same way (a server's own ``disabledTools``, as Roo Code writes it)
        self.disabled: Mapping[str, Collection[str]] = disabled or {}
        # server → tool names held because their definition changed since pinned (pins.py, "hold" mode)
        self.held: dict[str, set[str]] = {}
        self._held_ids: dict[str, str] = {}  # a held tool's id → its server
        self._ingested: dict[str, list[dict[str, Any]]] = {}
        self._entries: dict[str, ToolEntry] = {}
        self._order: list[ToolEntry] = []
        self._index: BM25Index | None = None
        self._dirty = False
        self.generation = 0

    # ##### Ingest #####

    def set_server_tools(self, server: str, tools: Iterable[dict[str, Any]]) -> int:
        """Replace ``server``'s tools; returns how many were (re)computed rather than cached."""
        ingested, computed = [], 0
        for tool in tools:
            key = schema_key(tool)
            cached = self.cache.load_tool(key) if self.cache else None
            if cached is None or cached.get("key") != key or cached.get("format") != INGEST_FORMAT:
                cached = _ingest(server, tool, key)
                computed += 1
                if self.cache:
                    self.cache.store_tool(key, cached)
            ingested.append(cached)
        self._ingested[server] = ingested
        if self.cache:
            self.cache.store_server(server, [i["key"] for i in ingested])
        self._changed()
        return computed

    def load_cached_server(self, server: str) -> bool:
        """Fill ``server``'s tools from the cache (a warm start); False when nothing usable is cached."""
        if self.cache is None:
            return False
        keys = self.cache.load_server(server)
        if keys is None:
            return False
        ingested = [self.cache.load_tool(k) for k in keys]
        if any(i is None or i.get("format") != INGEST_FORMAT for i in ingested):
            return False
        self._ingested[server] = [i for i in ingested if i is not None]
        self._changed()
        return True

    def remove_server(self, server: str) -> None:
        """Forget ``server``'s tools (it left the configuration); its cache entries stay for a return."""
        if self._ingested.pop(server, None) is not None:
            self._changed()

    def hold(self, server: str, names: set[str]) -> bool:
        """Hold ``server``'s tools ``names`` back from every host (and release the others); whether that
        changed what is held."""
        if self.held.get(server, set()) == names:
            return False
        self.held[server] = names
        self._changed()
        return True

    def _changed(self) -> None:
        """Entries are rebuilt lazily, once, on the next read: ingesting 100 servers costs one rebuild."""
        self._dirty = True
        self.generation += 1

    def _fresh(self) -> None:
        if self._dirty:
            self._dirty = False
            self._rebuild()

    def _rebuild(self) -> None:
        pairs = [(s, i["tool"]["name"]) for s, items in self._ingested.items() for i in items]
        ids = assign_ids(pairs, unprefixed=self.unprefixed)
        entries = []
        for server, items in self._ingested.items():
            for item in items:
                tool = item["tool"]
                entries.append(
                    ToolEntry(
                        id=ids[(server, tool["name"])],
                        server=server,
                        name=tool["name"],
                        key=item["key"],
                        description=tool.get("description") or "",
                        input_schema=tool.get("inputSchema") or {"type": "object"},
                        signature=item["signature"],
                        summary=item["summary"],
                        tokens=tuple(item["tokens"]),
                        raw=tool,
                    )
                )
        # Ids are assigned over every tool, hidden ones too, so hiding one never renames another.
        entries = [
            e for e in entries if not matches_any(self.hide, e) and e.name not in self.disabled.get(e.server, ())
        ]
        self._held_ids = {e.id: e.server for e in entries if e.name in self.held.get(e.server, ())}
        entries = [e for e in entries if e.id not in self._held_ids]
        self._order = entries
        self._entries = {e.id: e for e in entries}
        self._index = None

    # ##### Lookup #####

    def __len__(self) -> int:
        self._fresh()
        return len(self._order)

    def entries(self, server: str | None = None) -> list[ToolEntry]:
        self._fresh()
        return [e for e in self._order if server is None or e.server == server]

    def servers(self) -> list[str]:
        return list(self._ingested)

    def raw_tools(self, server: str) -> list[dict[str, Any]]:
        """``server``'s tools as it listed them (held and hidden ones too)."""
        return [item["tool"] for item in self._ingested.get(server, [])]

    def get(self, tool_id: str) -> ToolEntry:
        self._fresh()
        entry = self._entries.get(tool_id)
        if entry is None and tool_id in self._held_ids:
            raise ToolHeld(tool_id, self._held_ids[tool_id])
        if entry is None:
            close = difflib.get_close_matches(tool_id, list(self._entries), n=3, cutoff=0.6)
            raise ToolNotFound(tool_id, close)
        return entry

    def search(self, query: str, limit: int = 8) -> list[SearchHit]:
        """BM25 ranking over names, descriptions and parameter names."""
        self._fresh()
        if self._index is None:
            self._index = BM25Index([list(e.tokens) for e in self._order])
        return [SearchHit(self._order[i], score) for i, score in self._index.top(query, limit)]
