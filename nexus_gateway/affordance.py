"""Slot affordance: entities in a request that only some tools' schemas can hold.

An intent that names ``owner/repo``, a number (``#318``, ``PR 512``), a URL or a file path can only be
served by a tool with a parameter to put it in. Retrieval by meaning alone misses this: a GitLab or
Linear tool with a similar description wins over the GitHub tool whose ``owner``/``repo`` parameters
the request fills exactly. The router adds ``w · (share of the request's slot kinds the tool can
take)`` to the fused score; the weight is in the calibration (measured in ``docs/routing.md``).
"""

from __future__ import annotations

import re
from typing import Any

SLOT_KINDS = ("repo", "number", "url", "path")

URL_PATTERN = re.compile(r"https?://\S+")
REPO_PATTERN = re.compile(r"(?<![\w/.:-])[A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9](?![\w/])")
_NUMBER = re.compile(r"(?:#|\b)\d+\b")
_PATH = re.compile(r"(?:^|\s)[\w./-]*\w\.\w{1,5}\b")


def query_slots(text: str) -> frozenset[str]:
    """The slot kinds a request mentions."""
    found = set()
    if URL_PATTERN.search(text):
        found.add("url")
    rest = URL_PATTERN.sub(" ", text)
    if REPO_PATTERN.search(rest):
        found.add("repo")
    if _NUMBER.search(rest):
        found.add("number")
    if _PATH.search(rest):
        found.add("path")
    return frozenset(found)


def tool_affordances(schema: dict[str, Any] | None) -> frozenset[str]:
    """The slot kinds a tool's input schema has a parameter for."""
    properties = (schema or {}).get("properties") or {}
    if not isinstance(properties, dict):
        return frozenset()
    names = {str(name).lower() for name in properties}
    kinds: set[str] = set()
    for value in properties.values():
        declared = value.get("type") if isinstance(value, dict) else None
        kinds.update(declared if isinstance(declared, list) else [declared] if isinstance(declared, str) else [])
    found = set()
    if "owner" in names and "repo" in names:
        found.add("repo")
    if kinds & {"integer", "number"}:
        found.add("number")
    if any("url" in n or "uri" in n or "link" in n for n in names):
        found.add("url")
    if any("path" in n or "file" in n for n in names):
        found.add("path")
    return frozenset(found)
