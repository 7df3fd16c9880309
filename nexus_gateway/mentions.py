"""What a request names of a tool's schema: the optional keys it mentions ("label it bug" → ``labels``)
and the enum values it says in words ("rerun just the jobs that failed" → ``rerun_failed_jobs``).

Argument generation uses it to make the decoder write keys the 0.5B model would skip and to narrow an
enum to the values said; the compressed IR uses it to show the optional parameters a request needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .affordance import URL_PATTERN
from .lexical import split_identifier, stem

_WORDS = re.compile(r"[a-z0-9]+")
# Keys that hold free text (a body, a title, a search query): the home of a quoted span.
FREE_TEXT = re.compile(r"body|description|content|message|text|comment|title|query|summary|reason|note")
_QUOTED = re.compile(r"""(?:^|(?<=[\s(:]))(['"‘“])(.{2,}?)['"’”](?=$|[\s.,;:!?)])""")


def quoted_spans(intent: str) -> list[str]:
    """Text the request quotes ('Thanks for the report!'): a value, word for word, of some argument."""
    return [m.group(2) for m in _QUOTED.finditer(intent)]


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

    def by_words(words: list[str]) -> bool:
        return bool(words) and not any(w in GENERIC_KEY_WORDS for w in words) and all(said(w) for w in words)

    return _keys_named(schema, by_words, said)


def identifier_words(identifier: str) -> list[str]:
    """``issue_number`` → ``["issue", "number"]``, ``pullNumber`` → ``["pull", "number"]``."""
    return _WORDS.findall(split_identifier(identifier).lower())


def _keys_named(schema: dict[str, Any], by_words: Callable[[list[str]], bool], said: Callable[[str], bool]) -> set[str]:
    """Optional keys whose words (3+ letters) pass ``by_words`` or one of whose enum values is said."""
    keys = set()
    for key, raw in optional_properties(schema):
        key_words = [w for w in identifier_words(key) if len(w) >= 3]
        enum = raw.get("enum")
        if by_words(key_words) or (isinstance(enum, list) and any(names_value(v, said) for v in enum)):
            keys.add(key)
    return keys


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
    """Does the request say this word (its stem, or a word it begins with, for 4+ letters)? A past
    participle counts as its verb: enum values are states ("closed", "dismissed", "fixed") that requests
    say as commands ("close it", "dismiss the alert")."""
    words = set(_WORDS.findall(intent.lower()))
    stems = {stem(w) for w in words}

    def said(word: str) -> bool:
        root = stem(word)
        if root in stems or (len(root) >= 4 and any(w.startswith(root) for w in words)):
            return True
        # a silent e drops before -ing: "including" says ``include``, "updating" ``update``
        if len(root) >= 6 and root.endswith("e") and any(w.startswith(root[:-1] + "ing") for w in words):
            return True
        past = len(root) >= 5 and root.endswith("ed")  # "failing jobs" says ``failed``
        return past and bool({root[:-1], root[:-2]} & (words | stems))

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


def mentioned_keys(schema: dict[str, Any], intent: str, ignore: frozenset[str] = frozenset()) -> set[str]:
    """Optional top-level keys a request may need, more loosely than ``named_keys``: any word of the key
    (not only all of them, and not one of ``ignore``, the tool's own name words: "issue" in a request for
    ``issue_write`` names no ``issue_fields``) or one of its enum values. For what the model is shown
    (the compressed IR), not what the decoder makes it write."""
    said = sayer(intent)
    stems = [stem(w) for w in _WORDS.findall(intent.lower()) if len(w) >= 5]

    def names(word: str) -> bool:  # also a request word the key word begins with: "assign" → assignees
        return said(word) or any(word.startswith(s) for s in stems)

    def by_words(words: list[str]) -> bool:
        return any(names(w) for w in words if w not in GENERIC_KEY_WORDS and w not in ignore)

    return _keys_named(schema, by_words, said)


def free_text_keys(schema: dict[str, Any]) -> set[str]:
    """Optional top-level string keys that hold prose (a body, a title, a message)."""
    return {
        key
        for key, raw in optional_properties(schema)
        if raw.get("type") == "string" and "enum" not in raw and FREE_TEXT.search(key.lower())
    }


# A number that stands as a value ("issue 45", "#88", "top 5", "run 11223344556"), not one inside a date,
# a version ("4.x", "v11.0.x", "3.12"), a URL, an identifier or quoted text.
_STATED_NUMBER = re.compile(r"(?<![\w.#/:-])#?(\d+)(?![\w/:-]|\.\w)")
# A file path: a name with an extension ("pyproject.toml") or a path of three or more parts
# ("src/auth/session.go"); two parts ("fix/tooltip", "octo-org/app") are as often a branch or a repository.
_STATED_PATH = re.compile(
    r"(?<![\w/.:-])(?:[\w.-]+/)*[\w-]*[A-Za-z][\w-]*\.[A-Za-z][A-Za-z0-9]{0,4}(?![\w/])"
    r"|(?<![\w/.:-])[\w.-]+(?:/[\w.-]+){2,}"
)


def stated_entities(intent: str) -> list[tuple[str, str]]:
    """The numbers and file paths a request states as values, as ``("number", "45")`` and ``("path",
    "src/auth/session.go")``. The 0.5B model often closes the arguments object before writing them
    ("commits touching src/auth/session.go" without ``path``; "items in project #3" without
    ``project_number``); the decoder keeps the object open while one of them is in no value and a key
    that could hold it is left (``SchemaDecoder``, measured in ``docs/arguments.md``)."""
    text = URL_PATTERN.sub(" ", intent)
    for span in quoted_spans(intent):
        text = text.replace(span, " ")
    found: list[tuple[str, str]] = []
    for match in _STATED_PATH.finditer(text):
        if not re.fullmatch(r"[A-Za-z]\.[A-Za-z]", match.group(0)):  # "e.g", "i.e"
            found.append(("path", match.group(0)))
    for match in _STATED_NUMBER.finditer(_STATED_PATH.sub(" ", text)):
        found.append(("number", match.group(1)))
    return list(dict.fromkeys(found))
