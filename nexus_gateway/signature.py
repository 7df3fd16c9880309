"""Compact, typed one-line signatures of JSON schemas, e.g.
``create_repository(name: string, private?: boolean) — Create a repository``.

The host reads these in search results instead of whole schemas; later the local model reads them
instead of the full schema. Optional parameters carry ``?``; enums are spelled out; arrays are
``T[]``; nested objects are flattened one level and summarised beyond.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
MAX_ENUM_VALUES = 6


def first_sentence(text: str | None, limit: int = 160) -> str:
    """The first sentence of a description, on one line and at most ``limit`` characters."""
    if not text:
        return ""
    flat = " ".join(text.split())
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0]
    if len(sentence) > limit:
        sentence = sentence[: limit - 1].rstrip() + "…"
    return sentence


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/$defs/X`` or ``#/definitions/X``) once."""
    if not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            merged = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
            return merged
    return schema


# A description that lists a string's every value in quotes ("Whether to list local branches ('local'),
# remote branches ('remote') or all branches ('all')", "Options: 'miles', 'kilometers'", "Can be 'list'
# or 'dictionary'"), and not a few examples of it ("e.g. 'main'", "'civil', 'criminal', etc.").
_LISTS_VALUES = re.compile(
    r"\b(?:one of|either|whether|must be|can be|options?(?: are)?:|possible values|valid values|allowed values)", re.I
)
_EXAMPLES_ONLY = re.compile(r"\be\.g\.|\betc\b|\bfor example\b|\bsuch as\b|\bincludes?\b|\blike\b", re.I)
_QUOTED_VALUE = re.compile(r"(?<![\w'])'([\w./+-]{1,40})'(?![\w'])")


def described_options(prop: Any, siblings: Collection[str] = ()) -> list[str] | None:
    """The values a string parameter's description lists as its only ones, or None. Servers often keep
    an enum in prose (``mcp-server-git``'s ``branch_type``); the 0.5B model, seeing ``string``, wrote
    ``branch`` for "what branch am I on", which the server refuses. A quoted name of a parameter
    (``siblings``, "'after_id' is required for 'reprioritize'") is none of its values, and a
    description that also allows a number lists no strings only."""
    if not isinstance(prop, dict) or prop.get("enum") or prop.get("type") not in ("string", None):
        return None
    text = str(prop.get("description") or "")
    if not _LISTS_VALUES.search(text) or _EXAMPLES_ONLY.search(text) or re.search(r"integer|number", text, re.I):
        return None
    listing = " ".join(sentence for sentence in _SENTENCE_END.split(text) if _LISTS_VALUES.search(sentence))
    values = [v for v in dict.fromkeys(_QUOTED_VALUE.findall(listing)) if v not in siblings]
    return values if len(values) >= 2 else None


def with_described_options(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with an ``enum`` for each top-level string parameter whose description lists its values
    (:func:`described_options`), for the decoder, grounding and the eval's leak count; the IR shows the
    server's schema and validation checks it."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return schema
    listed = {key: options for key, prop in props.items() if (options := described_options(prop, props))}
    if not listed:
        return schema
    return {**schema, "properties": {**props, **{k: {**props[k], "enum": v} for k, v in listed.items()}}}


@dataclass(frozen=True)
class Style:
    """How terse type expressions are: the host's signatures, or the model's compressed IR (``ir.py``)."""

    max_enum: int = MAX_ENUM_VALUES
    names: Mapping[str, str] = field(default_factory=dict)  # type renames, e.g. string → str
    bare: frozenset[str] = frozenset()  # (renamed) types written as the parameter name alone
    skip: frozenset[str] = frozenset()  # optional parameters left out (lower-cased names)
    defaults: bool = True  # write ``= default``
    quoted: bool = True  # string values in quotes; else only a value holding a separator (``open|"in progress"``)


SIGNATURE = Style()


def type_text(schema: Any, root: dict[str, Any], depth: int = 0, style: Style = SIGNATURE) -> str:
    """A short type expression for one schema node."""
    schema = _resolve(schema, root)
    if not schema:
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        values = schema["enum"][: style.max_enum]
        text = "|".join(_literal(v, style.quoted) for v in values)
        return text + ("|…" if len(schema["enum"]) > style.max_enum else "")
    if "const" in schema:
        return _literal(schema["const"], style.quoted)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            parts = dict.fromkeys(type_text(o, root, depth, style) for o in options)
            return "|".join(p for p in parts if p != "null") or "null"
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"] or ["null"]
        return "|".join(style.names.get(k, k) for k in kinds)
    if kind == "array":
        items = schema.get("items")
        inner = type_text(items, root, depth + 1, style) if items else "any"
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if kind == "object" or "properties" in schema:
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return style.names.get("object", "object")
        if depth >= 1:
            return "{" + ", ".join(list(props)[:4]) + (", …" if len(props) > 4 else "") + "}"
        return "{" + params_text(schema, root, depth + 1, style) + "}"
    return style.names.get(str(kind), str(kind)) if kind else "any"


_SEPARATORS = re.compile(r"[\s|,()\[\]{}\"]")


def _literal(value: Any, quoted: bool = True) -> str:
    if isinstance(value, str):
        return f'"{value}"' if quoted or not value or _SEPARATORS.search(value) else value
    return str(value).lower() if isinstance(value, bool) else str(value)


def params_text(schema: dict[str, Any], root: dict[str, Any], depth: int = 0, style: Style = SIGNATURE) -> str:
    """``name: type, other?: type = default`` for an object schema's properties."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return ""
    required = set(schema.get("required") or [])
    parts = []
    for name, prop in props.items():
        if name not in required and name.lower() in style.skip:
            continue
        resolved = _resolve(prop, root)
        mark = "" if name in required else "?"
        kind = type_text(prop, root, depth, style)
        text = f"{name}{mark}" if kind in style.bare else f"{name}{mark}: {kind}"
        if style.defaults and "default" in resolved and not isinstance(resolved["default"], dict | list):
            text += f" = {_literal(resolved['default'], style.quoted)}"
        parts.append(text)
    return ", ".join(parts)


def signature(name: str, input_schema: dict[str, Any] | None, description: str | None = None) -> str:
    """The whole one-liner: ``name(params) — first sentence``."""
    schema = input_schema or {}
    text = f"{name}({params_text(schema, schema)})"
    summary = first_sentence(description, limit=80)
    return f"{text} — {summary}" if summary else text
