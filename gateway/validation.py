"""Argument validation against a tool's declared schema (the MCP SDK does not validate).

Draft 2020-12, one compiled validator per tool. Errors name the field and the rule, e.g.
"limit: 21 is greater than the maximum of 20", and never carry a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from mnemo.errors import InvalidArgument

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, ValidationError

_MAX_ERRORS = 5


@cache
def _validator(tool_name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # lazy: keeps the gateway's cold start lean

    from gateway.tools import BY_NAME

    schema = BY_NAME[tool_name].input_schema
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _field_of(error: ValidationError) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "argument"
        return f"{path}.{missing}" if path else missing
    if error.validator == "additionalProperties":
        extras = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return ", ".join(extras) or path or "arguments"
    return path or "arguments"


def _rule_of(error: ValidationError, tool_name: str) -> str:
    if error.validator == "required":
        return "is required"
    if error.validator == "additionalProperties":
        known = ", ".join(sorted(error.schema.get("properties", {}))) or "none"
        return f"is not an argument of {tool_name} (known: {known})"
    if error.validator == "pattern":
        return f"{_short(error.instance)} does not match {error.validator_value}"
    return error.message


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_arguments(tool_name: str, arguments: Mapping[str, Any], byte_limits: Mapping[str, int]) -> None:
    """Raise InvalidArgument naming every broken field (up to five) and its rule."""
    errors = sorted(_validator(tool_name).iter_errors(arguments), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        parts = [(_field_of(e), _rule_of(e, tool_name)) for e in errors[:_MAX_ERRORS]]
        field, rule = parts[0]
        if len(parts) > 1:
            rule += "; " + "; ".join(f"{f}: {r}" for f, r in parts[1:])
        raise InvalidArgument(field, rule)
    for name, limit in byte_limits.items():
        value = arguments.get(name)
        if isinstance(value, str) and len(value.encode("utf-8")) > limit:
            raise InvalidArgument(name, f"is {len(value.encode('utf-8'))} UTF-8 bytes; at most {limit} allowed")
