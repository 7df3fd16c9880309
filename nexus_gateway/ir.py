"""The compressed IR: a tool's JSON schema as the one dense line the local model reads.

``create_repository(name, private?, description?)``; ``list_issues(owner, repo, state?: open|closed,
labels?: str[])``

It differs from ``signature.py`` (what the host reads in search results) in being tuned for the model's
prompt: the parameter names, ``?`` for the optional ones, types only where they are not scalars (arrays,
objects, unions; the decoder enforces every type anyway), enum values unquoted and at most five,
pagination parameters left out, nested objects flattened one level and summarised beyond, ``$ref``
followed, ``oneOf``/``anyOf`` as unions. No description: the router has already chosen the tool, and
the name says what it does. Session 35 measured each cut against the form before (seven words of
description, typed numbers and flags, quoted enum values): the same arguments right within a point on
both halves of the GitHub set and on BFCL with the 0.5B model (the 1.5B one: 2 points fewer on BFCL,
inside the noise), the same coreference, 31 → 19 tokens at the median (``docs/arguments.md``).
Choosing among close tools is another matter: there the description tells near-duplicates apart, so
``choice_ir`` keeps seven words of it in the form the choice was measured with.

The focused form (``nexus.schema: ir-focused``; ``compressed_ir(..., intent=...)``) shows a request only
the parameters it can fill: every required one, and the optional ones it names (a word of the key that
is not a word of the tool's own name, one of its enum values, a free-text key such as ``body`` when the
request quotes something, ``owner``/``repo`` when it says ``octo-org/app``, a path key for a file, a
number key for "#318"); an enum the request names a value of shows only those values; three enum
values otherwise. The grammar still admits every key. It got 1.4 points fewer arguments right on the
dev set in session 9 (inside the noise, on both halves), so it is not the default for every tool
(``nexus.schema: ir-focused`` makes it so), only for the long ones: a tool whose IR takes more than
``IR_TOKEN_BUDGET`` model tokens (13 of GitHub's 117, the consolidated ``projects_write``,
``actions_list``, ``issue_write`` and the search and list tools with long enums) is shown focused. Over
all 166 GitHub dev requests with the labelled tool that left the arguments right as they were (91.6%
either way, four requests better and five worse; session 47, ``docs/arguments.md``) and brings the
registry's p99 from 79 tokens to the issue's 40. Lengths are in ``docs/benchmarks.md`` (``python
bench/ir_tokens.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .affordance import PAGINATION, names_a_path, query_slots
from .mentions import free_text_keys, identifier_words, mentioned_keys, named_values, quoted_spans
from .signature import Style, first_sentence, params_text

SHORT_TYPES = {"string": "str", "integer": "int", "number": "num", "boolean": "bool", "object": "obj"}
SCALARS = frozenset({"str", "int", "num", "bool"})
IR = Style(max_enum=5, names=SHORT_TYPES, bare=SCALARS, skip=PAGINATION, defaults=False, quoted=False)
# The focused form's tighter cut: what it exists for is a short prompt.
FOCUSED = replace(IR, max_enum=3)
# The tool-choice prompt's form (``ArgumentGenerator.choose_tool``, the judge): typed, quoted, described.
CHOICE = replace(IR, bare=frozenset({"str"}), quoted=True)
CHOICE_DESCRIPTION_WORDS = 7
# Longer than this (model tokens of ``compressed_ir``), a tool is shown in the focused form: the issue's
# p99 target for the IR's length.
IR_TOKEN_BUDGET = 40


def ir_params(schema: dict[str, Any], root: dict[str, Any], intent: str | None = None, tool: str = "") -> str:
    """The parameter list; with ``intent``, only what that request can fill (see the module's docstring)."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return ""
    if intent is None:
        return params_text(schema, root, 0, IR)
    required = set(schema.get("required") or [])
    own_words = frozenset(identifier_words(tool))
    shown = required | mentioned_keys(schema, intent, own_words)
    if quoted_spans(intent):
        shown |= free_text_keys(schema)
    shown |= slot_keys(props, query_slots(intent))
    said = named_values(schema, intent)
    shown |= said.keys()  # values said in words, flags by their opposite too ("public" → private: false)
    parts = []
    for key, prop in props.items():
        if key not in shown:
            continue
        style = FOCUSED
        enum = prop.get("enum") if isinstance(prop, dict) else None
        if key in said and isinstance(enum, list) and len(said[key]) < len(enum):  # the values said, then "…"
            prop = {**prop, "enum": [*said[key], None]}
            style = replace(FOCUSED, max_enum=len(said[key]))
        parts.append(
            params_text({"properties": {key: prop}, "required": [key] if key in required else []}, root, 0, style)
        )
    return ", ".join(p for p in parts if p)


def slot_keys(props: dict[str, Any], slots: frozenset[str]) -> set[str]:
    """Keys for the values a request carries by their form: ``owner``/``repo`` for ``octo-org/app`` or a
    URL, a path or file key for ``src/app.py``, a number or id key for "#318"; optional ones too (a search
    tool's optional ``owner``), which no word of the request names."""
    keys = set()
    for key in props:
        lowered = key.lower()
        repository = bool(slots & {"repo", "url"}) and lowered in ("owner", "repo")
        path = "path" in slots and names_a_path(lowered)
        number = "number" in slots and lowered.endswith(("number", "id")) and _numeric(props[key])
        if repository or path or number:
            keys.add(key)
    return keys


def _numeric(prop: Any) -> bool:
    kind = prop.get("type") if isinstance(prop, dict) else None
    return bool({"integer", "number"} & set(kind if isinstance(kind, list) else [kind]))


def short_description(text: str | None, words: int = CHOICE_DESCRIPTION_WORDS) -> str:
    sentence = first_sentence(text, limit=200).rstrip(".")
    parts = sentence.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def compressed_ir(name: str, input_schema: dict[str, Any] | None, *, intent: str | None = None) -> str:
    """``name(params)``; with ``intent``, only the parameters that request can fill.

    ``intent`` is keyword-only: it once came third as the tool's description did, and four benchmark
    scripts went on passing the description there, measuring the focused form instead of the default."""
    schema = input_schema or {}
    return f"{name}({ir_params(schema, schema, intent, name)})"


def ir_is_long(whole_ir: str, tokenize: Callable[[str], list[int]], budget: int = IR_TOKEN_BUDGET) -> bool:
    """Whether a tool's whole IR (``compressed_ir`` without an intent) takes more than ``budget`` model
    tokens, so that a prompt shows it focused on the request (``ArgumentGenerator``; 0: never)."""
    return bool(budget) and len(tokenize(whole_ir)) > budget


def choice_ir(name: str, input_schema: dict[str, Any] | None, description: str | None) -> str:
    """``name(params) — first words of the description``: one candidate of a choice among close tools."""
    schema = input_schema or {}
    summary = short_description(description)
    text = f"{name}({params_text(schema, schema, 0, CHOICE)})"
    return f"{text} — {summary}" if summary else text
