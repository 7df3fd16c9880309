"""Argument validation against an upstream tool's JSON schema (library ``jsonschema``).

A failure names the field (a JSON path such as ``labels[2]`` or ``(root)``) so the host can fix
the call; the upstream is never called with arguments that fail.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jsonschema
import orjson
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator

from .exceptions import ArgumentError

_BY_IDENTITY: dict[int, tuple[dict[str, Any], Validator | None]] = {}


def validator_for(schema: dict[str, Any]) -> Validator | None:
    """A compiled validator per schema object (registry schemas live as long as their entry)."""
    hit = _BY_IDENTITY.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    validator = _compile(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))
    if len(_BY_IDENTITY) > 8192:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[id(schema)] = (schema, validator)
    return validator


@lru_cache(maxsize=4096)
def _compile(schema_json: bytes) -> Validator | None:
    schema = orjson.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError:
        return None  # an upstream with a broken schema: let the upstream judge its own arguments
    return cls(schema)


def field_path(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(root)"


def validate_arguments(tool_id: str, schema: dict[str, Any], arguments: Any) -> None:
    """Raise :class:`ArgumentError` naming the first failing field, most specific first."""
    if not isinstance(arguments, dict):
        raise ArgumentError(tool_id, "arguments", f"must be an object, got {type(arguments).__name__}")
    validator = validator_for(schema)
    if validator is None or validator.is_valid(arguments):
        return
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (-len(e.absolute_path), e.message))
    if not errors:
        return
    error = errors[0]
    field = field_path(error.absolute_path)
    if error.validator == "required" and isinstance(error.validator_value, list):
        instance = error.instance if isinstance(error.instance, dict) else {}
        missing = [k for k in error.validator_value if k not in instance]
        if missing:
            prefix = "" if field == "(root)" else field + "."
            raise ArgumentError(tool_id, prefix + missing[0], "is required but missing")
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set((error.schema or {}).get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        if extra:
            prefix = "" if field == "(root)" else field + "."
            raise ArgumentError(tool_id, prefix + extra[0], "is not an accepted parameter")
    raise ArgumentError(tool_id, field, error.message)


BLANK_INTENT = "say in a sentence what to do"
BLANK_QUERY = "describe the tool you are looking for"


def require_words(tool_id: str, field: str, text: str, what: str) -> None:
    """A request or query of only whitespace still ranks some tool first, so it is refused instead."""
    if not text.strip():
        raise ArgumentError(tool_id, field, f"is blank: {what}")
