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

from .signature import Style, first_sentence, params_text

SHORT_TYPES = {"string": "str", "integer": "int", "number": "num", "boolean": "bool", "object": "obj"}
PAGINATION = frozenset({"page", "perpage", "per_page", "after", "cursor", "endcursor", "startcursor", "pagesize"})
MAX_DESCRIPTION_WORDS = 7
IR = Style(max_enum=5, names=SHORT_TYPES, bare=frozenset({"str"}), skip=PAGINATION, defaults=False)


def ir_params(schema: dict[str, Any], root: dict[str, Any]) -> str:
    return params_text(schema, root, 0, IR)


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
