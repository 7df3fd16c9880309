"""What a request names of a tool's schema: the optional keys it mentions ("label it bug" → ``labels``)
and the enum values it says in words ("rerun just the jobs that failed" → ``rerun_failed_jobs``).

Argument generation uses it to make the decoder write keys the 0.5B model would skip and to narrow an
enum to the values said; the compressed IR uses it to show the optional parameters a request needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .lexical import split_identifier, stem

_WORDS = re.compile(r"[a-z0-9]+")

# Key words that name the place of a value, not the value: every GitHub call has an owner and a repo,
# and "issue 12" names an issue, not the optional `number` filter of a search.
GENERIC_KEY_WORDS = frozenset(
    ["owner", "repo", "name", "number", "type", "page", "per", "sort", "order", "direction", "method", "query"]
)


def named_keys(schema: dict[str, Any], intent: str) -> set[str]:
    """Optional top-level keys the request names: by a word of the key ("label it bug" → ``labels``,
    "line 41" → ``line``) or by one of its enum values ("as a duplicate" → ``state_reason``). The 0.5B
    model often closes the object before such a key; the decoder writes them before it may close, and
    grounding still drops a value the request does not supply."""
    said = sayer(intent)
    named = set()
    for key, raw in optional_properties(schema):
        key_words = [w for w in _WORDS.findall(split_identifier(key).lower()) if len(w) >= 3]
        if key_words and not any(w in GENERIC_KEY_WORDS for w in key_words) and all(said(w) for w in key_words):
            named.add(key)
            continue
        enum = raw.get("enum")
        if isinstance(enum, list) and any(names_value(v, said) for v in enum):
            named.add(key)
    return named


def named_values(schema: dict[str, Any], intent: str) -> dict[str, list[Any]]:
    """Top-level enum keys with the values the request says in words: "rerun just the jobs that
    failed" → ``method: rerun_failed_jobs``, "close it as a duplicate" → ``state_reason: duplicate``.
    The 0.5B model picks ``cancel_workflow_run`` or ``completed`` there; the decoder chooses among the
    named values only."""
    said = sayer(intent)
    named: dict[str, list[Any]] = {}
    for key, raw in properties(schema):
        enum = raw.get("enum")
        if isinstance(enum, list):
            values = [v for v in enum if names_value(v, said)]
            if values:
                named[key] = values
    return named


# The verbs of operation enums (``create_project``, ``update``) and the everyday words people use for them
# instead: "set up a new project", "change the title". Generic CRUD vocabulary, no tool's own words; not
# "start", which is as often "start over" as "start a new one" (measured in docs/arguments.md).
VERB_SYNONYMS = {
    "create": ("new", "add", "make"),
    "update": ("change", "edit", "modify", "rename", "replace"),
    "delete": ("remove", "drop", "erase"),
}


def names_value(value: Any, said: Callable[[str], bool]) -> bool:
    """An enum value the request says in words ("false positive" for ``false_positive``; "a new project"
    for ``create_project``)."""
    words = _WORDS.findall(split_identifier(value).lower()) if isinstance(value, str) and len(value) >= 4 else []
    return bool(words) and all(said(w) or any(said(s) for s in VERB_SYNONYMS.get(w, ())) for w in words)


def sayer(intent: str) -> Callable[[str], bool]:
    """Does the request say this word (its stem, or a word it begins with, for 4+ letters)?"""
    words = set(_WORDS.findall(intent.lower()))
    stems = {stem(w) for w in words}

    def said(word: str) -> bool:
        root = stem(word)
        return root in stems or (len(root) >= 4 and any(w.startswith(root) for w in words))

    return said


def properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The schema's top-level keys with their (dict) property schemas."""
    props = schema.get("properties") or {}
    items = props.items() if isinstance(props, dict) else ()
    return [(key, raw) for key, raw in items if isinstance(raw, dict)]


def optional_properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The schema's top-level keys that are not required, with their (dict) property schemas."""
    required = set(schema.get("required") or [])
    return [(key, raw) for key, raw in properties(schema) if key not in required]
