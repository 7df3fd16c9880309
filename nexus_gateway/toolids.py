"""Host-facing tool ids: ``<server>__<tool>``, always valid for Claude (``^[a-zA-Z0-9_-]{1,64}$``).

Names are sanitised (any other character becomes ``_``) and, when too long or when two tools would
otherwise share an id, shortened deterministically with a short hash of the original pair, so an id
never depends on the order in which upstreams answered.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable

MAX_ID_LENGTH = 64
SEPARATOR = "__"
VALID_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_LENGTH = 8


def sanitise(text: str) -> str:
    """Replace every character Claude does not accept in a tool name with ``_``."""
    return _INVALID_CHARS.sub("_", text) or "_"


def _digest(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_LENGTH]


def _with_hash(base: str, server: str, tool: str) -> str:
    suffix = "_" + _digest(server, tool)
    return base[: MAX_ID_LENGTH - len(suffix)] + suffix


def base_id(server: str | None, tool: str) -> str:
    """The id before collision handling: sanitised, hashed when longer than 64 characters."""
    raw = sanitise(tool) if server is None else f"{sanitise(server)}{SEPARATOR}{sanitise(tool)}"
    if len(raw) > MAX_ID_LENGTH:
        return _with_hash(raw, server or "", tool)
    return raw


def assign_ids(pairs: Iterable[tuple[str, str]], unprefixed: str | None = None) -> dict[tuple[str, str], str]:
    """Give every ``(server, tool)`` pair a unique, valid id.

    Tools of the ``unprefixed`` server keep their bare (sanitised) names. Pairs whose base ids
    collide all get a hash suffix, so the result is the same whatever the input order.
    """
    pairs = list(dict.fromkeys(pairs))
    by_base: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for server, tool in pairs:
        by_base[base_id(None if server == unprefixed else server, tool)].append((server, tool))
    ids: dict[tuple[str, str], str] = {}
    for base, owners in by_base.items():
        if len(owners) == 1:
            ids[owners[0]] = base
        else:
            for server, tool in owners:
                ids[(server, tool)] = _with_hash(base, server, tool)
    return ids
