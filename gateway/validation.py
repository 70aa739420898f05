"""Argument validation against a tool's declared schema (the MCP SDK does not validate).

Draft 2020-12, one compiled validator per tool. Errors name the field and the rule, e.g.
"limit: 21 is greater than the maximum of 20", and never carry a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from gateway.redact import preview, shorten
from mnemo.errors import InvalidArgument

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, ValidationError

_MAX_ERRORS = 5
_MAX_RULE_CHARS = 300
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@cache
def _validator(tool_name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator, validators  # lazy: keeps the gateway's cold start lean

    from gateway.tools import BY_NAME

    schema = BY_NAME[tool_name].input_schema
    Draft202012Validator.check_schema(schema)
    strict = validators.extend(Draft202012Validator, {"pattern": _pattern_to_the_end})
    return strict(schema)


def _pattern_to_the_end(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`pattern` with ECMA-262's `$`, which ends the string: Python's `$` also matches before a
    final newline, so "ms_...\n" or "name\n" would pass a pattern it breaks."""
    from jsonschema import ValidationError

    if isinstance(instance, str) and not re.search(_anchored(pattern), instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _anchored(pattern: str) -> str:
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith(r"\$") else pattern


def _field_of(error: ValidationError) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "argument"
        return f"{path}.{missing}" if path else missing
    if error.validator == "additionalProperties":
        # Unknown names are the caller's text: each is shortened, and only a few are listed.
        extras = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        shown = ", ".join(shorten(name, 40) for name in extras[:_MAX_ERRORS])
        return shown + (f" (and {len(extras) - _MAX_ERRORS} more)" if len(extras) > _MAX_ERRORS else "") or "arguments"
    return path or "arguments"


def _rule_of(error: ValidationError, tool_name: str) -> str:
    """The broken rule, quoting the rejected value only as a short privacy-filtered preview
    (jsonschema's own messages quote it whole: a 4 MB argument made a 4 MB error)."""
    rule, instance = error.validator, error.instance
    if rule == "required":
        return "is required"
    if rule == "additionalProperties":
        known = ", ".join(sorted(error.schema.get("properties", {}))) or "none"
        return f"is not an argument of {tool_name} (known: {known})"
    if rule == "pattern":
        return f"{preview(instance)} does not match {error.validator_value}"
    if rule == "maxLength" and isinstance(instance, str):
        return f"{preview(instance)} has {len(instance)} characters; at most {error.validator_value} allowed"
    if rule == "maxItems" and isinstance(instance, list):
        return f"has {len(instance)} items; at most {error.validator_value} allowed"
    own = repr(instance)
    if error.message.startswith(own):
        return preview(instance) + error.message[len(own):]
    return shorten(error.message, _MAX_RULE_CHARS)


def validate_arguments(tool_name: str, arguments: Mapping[str, Any], byte_limits: Mapping[str, int]) -> dict[str, Any]:
    """The arguments, ready for a request mapping; InvalidArgument names every broken field
    (up to five) and its rule.

    JSON Schema counts 5.0 as an integer, protobuf does not: a whole number sent as a float
    comes back as an int here, the one place arguments enter the tool specs."""
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
    properties = _validator(tool_name).schema.get("properties", {})
    return {name: _as_declared(value, properties.get(name, {}), name) for name, value in arguments.items()}


def _as_declared(value: Any, schema: Mapping[str, Any], field: str) -> Any:
    """`value` with every whole float where the schema allows an integer turned into an int;
    an int beyond int64 (the widest protobuf integer) is refused, naming the field.

    A "number" in these input schemas is a record id that spec 000 types loosely
    (`selectedIds` items are string or number): 4.0 is id 4, and 4.5 is no id at all."""
    if isinstance(value, list):
        items = schema.get("items", {})
        return [_as_declared(item, items, f"{field}[{index}]") for index, item in enumerate(value)]
    declared = schema.get("type")
    kinds = declared if isinstance(declared, list) else [declared]
    if isinstance(value, bool) or not {"integer", "number"} & set(kinds):
        return value
    if isinstance(value, float) and not value.is_integer():
        raise InvalidArgument(field, f"{preview(value)} is not a whole number")
    if isinstance(value, float):
        value = int(value)
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        raise InvalidArgument(field, f"{preview(value)} is outside the 64-bit integer range")
    return value
