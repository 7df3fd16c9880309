"""What the registry cache holds, and which of it no gateway will read again (``nexus-gateway cache``).

The cache only grows. A tool's files are never rewritten: a tool whose schema changes gets a new key,
a new rendering of the compressed IR a new block name, a new system prompt a new anchor in every block's
tag, so an upgrade or an upstream's new release leaves the old files behind, and compiled blocks are the
bulk of it (a third of a megabyte per tool for the IR, several for a full schema). Serving never deletes
them: two gateways of different versions may share one cache folder, and a file that one of them will
not read is not known to be dead for the other. This module tells a person what is there and what is
stale, and removes the stale files when asked.

A file is stale when:

- its schema key is named by no server list (``servers/<name>.json``, written by every gateway when it
  ingests an upstream's tools): a tool no upstream has any more. Vectors an evaluation stored without a
  gateway count too; the next evaluation embeds them again;
- it is an IR block whose text is not how this build renders that tool's IR (the entry's tool is read
  and rendered again);
- it is a compiled block whose prefix anchor is not the one of the newest system-prefix block of the
  same model and V layout: compiled after a system prompt an earlier build wrote (a group without a
  system-prefix block is left alone: nothing tells which anchor is live);
- it is a temporary file of a write that did not finish, older than an hour.

Server lists, calibrations, the journal, pins and stored logins are never stale here.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cache import RegistryCache

logger = logging.getLogger(__name__)

_KEY = r"(?P<key>[0-9a-f]{64})"
_BLOCK_TAG = r"(?P<model>[0-9a-f]{12})-(?P<anchor>[0-9a-f]{8})-(?P<layout>[rt])"  # block_store.SchemaBlocks.tag
_KINDS = (
    ("tool entry", re.compile(rf"^{_KEY}\.json$")),
    ("vectors", re.compile(rf"^{_KEY}\.[^.]+\.vec$")),
    ("IR block", re.compile(rf"^{_KEY}\.ir-(?P<ir>[0-9a-f]+)\.{_BLOCK_TAG}\.atb$")),
    ("schema block", re.compile(rf"^{_KEY}\.{_BLOCK_TAG}\.atb$")),
    ("system-prefix block", re.compile(rf"^system-prefix\.{_BLOCK_TAG}\.atb$")),
)
UNFINISHED_WRITE_SECONDS = 3600.0


@dataclass(frozen=True)
class CachedFile:
    path: Path
    kind: str
    disk_bytes: int  # allocated, not apparent: what deleting it frees
    stale: str | None  # why no gateway of this build will read it again; None: live, or not known


def survey(root: Path, now: float | None = None) -> list[CachedFile]:
    """Every file under the cache's ``tools/`` folder with its kind, size and staleness."""
    folder = root / "tools"
    if not folder.is_dir():
        return []
    now = time.time() if now is None else now
    cache = RegistryCache(root)
    listed = _listed_keys(cache)
    parsed: list[tuple[Path, str, dict[str, str], Any]] = []
    for path in sorted(folder.iterdir()):
        try:
            stat = path.stat()
        except OSError:  # removed meanwhile by a gateway
            continue
        kind, fields = _kind_of(path.name)
        parsed.append((path, kind, fields, stat))
    prefixes = [(fields, stat) for _, kind, fields, stat in parsed if kind == "system-prefix block"]
    live_anchors = _newest_prefix_anchors(prefixes)
    files = []
    for path, kind, fields, stat in parsed:
        stale = _why_stale(cache, kind, fields, stat.st_mtime, now, listed, live_anchors)
        files.append(CachedFile(path, kind, stat.st_blocks * 512, stale))
    return files


@dataclass
class KindTotals:
    files: int = 0
    disk_bytes: int = 0
    stale_files: int = 0
    stale_bytes: int = 0


def totals_by_kind(files: Iterable[CachedFile]) -> dict[str, KindTotals]:
    """Per kind, sorted by name: how many files and bytes, and how many of them are stale."""
    totals: dict[str, KindTotals] = {}
    for cached in files:
        row = totals.setdefault(cached.kind, KindTotals())
        row.files += 1
        row.disk_bytes += cached.disk_bytes
        if cached.stale is not None:
            row.stale_files += 1
            row.stale_bytes += cached.disk_bytes
    return dict(sorted(totals.items()))


def remove(files: Iterable[CachedFile]) -> tuple[int, int]:
    """Delete the stale ones; returns (files, bytes) removed. A file already gone counts as removed; one
    that cannot be deleted (another user's, a read-only folder) is named in a warning and kept."""
    count = freed = 0
    for cached in files:
        if cached.stale is None:
            continue
        try:
            cached.path.unlink(missing_ok=True)
        except OSError as exc:
            logger.warning("cannot remove %s: %s", cached.path, exc.strerror or exc)
            continue
        count, freed = count + 1, freed + cached.disk_bytes
    return count, freed


def _kind_of(name: str) -> tuple[str, dict[str, str]]:
    if name.startswith(".") and name.endswith(".tmp"):
        return "unfinished write", {}
    for kind, pattern in _KINDS:
        match = pattern.match(name)
        if match:
            return kind, {k: v for k, v in match.groupdict().items() if v is not None}
    return "other", {}


def _listed_keys(cache: RegistryCache) -> set[str]:
    keys: set[str] = set()
    for path in sorted((cache.root / "servers").glob("*.json")):
        keys.update(cache.load_server(path.stem) or [])
    return keys


def _newest_prefix_anchors(prefix_blocks: Iterable[tuple[dict[str, str], Any]]) -> dict[tuple[str, str], str]:
    """(model, layout) → the anchor of its most recently written system-prefix block: the live prompt's,
    since a build with a new prompt writes its prefix block at its first start."""
    newest: dict[tuple[str, str], tuple[float, str]] = {}
    for fields, stat in prefix_blocks:
        group = (fields["model"], fields["layout"])
        if group not in newest or stat.st_mtime > newest[group][0]:
            newest[group] = (stat.st_mtime, fields["anchor"])
    return {group: anchor for group, (_, anchor) in newest.items()}


def _why_stale(
    cache: RegistryCache,
    kind: str,
    fields: dict[str, str],
    mtime: float,
    now: float,
    listed: set[str],
    live_anchors: dict[tuple[str, str], str],
) -> str | None:
    if kind == "unfinished write":
        return "a write that did not finish" if now - mtime > UNFINISHED_WRITE_SECONDS else None
    if "anchor" in fields:
        live = live_anchors.get((fields["model"], fields["layout"]))
        if live is not None and fields["anchor"] != live:
            return "compiled after an earlier system prompt"
    key = fields.get("key")
    if key is None:
        return None
    if key not in listed:
        return "no upstream lists this tool"
    if kind == "IR block":
        current = _current_ir_key(cache, key)
        if current is not None and current != f"{key}.ir-{fields['ir']}":
            return "an earlier rendering of the IR"
    return None


def _current_ir_key(cache: RegistryCache, key: str) -> str | None:
    """The IR block key this build gives the tool of entry ``key``; None when the entry is unreadable."""
    from .arguments import tool_blocks

    entry = cache.load_tool(key)
    try:
        tool = entry["tool"] if entry else None
        if not isinstance(tool, dict):
            return None
        schema = tool.get("inputSchema") or {"type": "object"}  # as the registry's ToolEntry has it
        return tool_blocks(key, tool["name"], schema, tool.get("description"), full_schema=False)[0][0]
    except (KeyError, TypeError, AttributeError):
        return None
