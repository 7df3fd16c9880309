"""The compressed IR: a tool's JSON schema as the one dense line the local model reads.

``create_repository(name, private?: bool, description?) — Create a repository``

It differs from ``signature.py`` (what the host reads in search results) in being tuned for the model's
prompt, where every token is paid for on every call: strings untyped (the commonest type; the grammar
enforces every type anyway), short names for the others, at most a few enum values,
pagination parameters left out (a request rarely states them; the grammar still admits them), nested
objects flattened one level and summarised beyond, ``$ref`` followed, ``oneOf``/``anyOf`` as unions,
and the description cut to its first few words. Lengths over the GitHub registry are in
``docs/benchmarks.md`` (``python bench/ir_tokens.py``).
"""

from __future__ import annotations

from typing import Any

from .signature import _resolve, first_sentence

SHORT_TYPES = {"string": "str", "integer": "int", "number": "num", "boolean": "bool", "object": "obj", "null": "null"}
PAGINATION = frozenset({"page", "perpage", "per_page", "after", "cursor", "endcursor", "startcursor", "pagesize"})
MAX_ENUM = 5
MAX_DESCRIPTION_WORDS = 7
MAX_NESTED = 4


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).lower() if isinstance(value, bool) else str(value)


def ir_type(schema: Any, root: dict[str, Any], depth: int = 0) -> str:
    """A short type expression: ``str``, ``int[]``, ``"open"|"closed"``, ``{branch?: str, …}``."""
    schema = _resolve(schema, root)
    if not schema:
        return "any"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        text = "|".join(_literal(v) for v in enum[:MAX_ENUM])
        return text + ("|…" if len(enum) > MAX_ENUM else "")
    if "const" in schema:
        return _literal(schema["const"])
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            parts = dict.fromkeys(ir_type(o, root, depth) for o in options)
            return "|".join(p for p in parts if p != "null") or "null"
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"] or ["null"]
        return "|".join(SHORT_TYPES.get(k, k) for k in kinds)
    if kind == "array":
        inner = ir_type(schema.get("items"), root, depth + 1) if schema.get("items") else "any"
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if kind == "object" or "properties" in schema:
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return "obj"
        if depth >= 1:
            names = list(props)[:MAX_NESTED]
            return "{" + ", ".join(names) + (", …" if len(props) > MAX_NESTED else "") + "}"
        return "{" + ir_params(schema, root, depth + 1) + "}"
    return SHORT_TYPES.get(str(kind), str(kind)) if kind else "any"


def ir_params(schema: dict[str, Any], root: dict[str, Any], depth: int = 0) -> str:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return ""
    required = set(schema.get("required") or [])
    parts = []
    for name, prop in props.items():
        if name not in required and name.lower() in PAGINATION:
            continue
        mark = "" if name in required else "?"
        kind = ir_type(prop, root, depth)
        parts.append(f"{name}{mark}" if kind == "str" else f"{name}{mark}: {kind}")
    return ", ".join(parts)


def short_description(text: str | None, words: int = MAX_DESCRIPTION_WORDS) -> str:
    sentence = first_sentence(text, limit=200).rstrip(".")
    parts = sentence.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def compressed_ir(name: str, input_schema: dict[str, Any] | None, description: str | None = None) -> str:
    """``name(params) — first words of the description``."""
    schema = input_schema or {}
    text = f"{name}({ir_params(schema, schema)})"
    summary = short_description(description)
    return f"{text} — {summary}" if summary else text
