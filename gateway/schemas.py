"""JSON Schema building blocks for the tool table.

Every input property has a type and bounds; a description only where the name and the bounds
do not already say what to pass (spec 000: tool definitions cost every session context).
Output schemas are compact: the keys a program acts on, typed, no descriptions, no `$ref`
(each shape appears once per schema, so sharing would save nothing and some hosts do not
resolve references).
"""

from __future__ import annotations

from typing import Any

from mnemo import vocab

OBS_TYPES = list(vocab.OBSERVATION_TYPES)
ISO_DATE_HINT = "ISO-8601 date or timestamp (e.g. 2026-11-30 or 2026-11-30T09:33:00Z)"
# Bounds of a schema property that names none of its own (a filter value, a free-text field).
STRING_MAX_CHARS = 1000
ARRAY_MAX_ITEMS = 50
ARRAY_ITEM_MAX_CHARS = 500

Schema = dict[str, Any]
# A record id is an int64 on the wire; the bounds apply to its integer form only (a string
# id such as "#12" or "S3" is checked by its length and by the service).
RECORD_ID_BOUNDS: dict[str, int] = {"minimum": 1, "maximum": 2**63 - 1}


def described(schema: Schema, description: str) -> Schema:
    """`schema` with a description, or as it is when there is nothing to add to its name and bounds."""
    return {**schema, "description": description} if description else schema


def string(description: str = "", *, max_length: int = STRING_MAX_CHARS, min_length: int | None = None,
           **extra: Any) -> Schema:
    schema: dict[str, Any] = {"type": "string", "maxLength": max_length}
    if min_length is not None:
        schema["minLength"] = min_length
    schema.update(extra)
    return described(schema, description)


def integer(description: str, minimum: int, maximum: int, default: int | None = None) -> Schema:
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum, "maximum": maximum}
    if default is not None:
        schema["default"] = default
    return described(schema, description)


def string_array(description: str = "", *, max_items: int = ARRAY_MAX_ITEMS,
                 item_max_length: int = ARRAY_ITEM_MAX_CHARS, **item: Any) -> Schema:
    schema = {"type": "array", "maxItems": max_items, "items": {"type": "string", "maxLength": item_max_length, **item}}
    return described(schema, description)


def obj(properties: dict[str, Schema], required: list[str] | None = None, *, closed: bool = True) -> Schema:
    """A flat object schema; `properties` is always present (strict hosts require it)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if closed:
        schema["additionalProperties"] = False
    return schema


def open_obj(properties: dict[str, Schema], required: list[str] | None = None) -> Schema:
    """An object schema that admits unknown properties (`additionalProperties: true`): the legacy
    tools, which older clients call with parameters of their time. The gateway ignores them and
    names them in the reply."""
    return {**obj(properties, required, closed=False), "additionalProperties": True}


def project(description: str = "") -> Schema:
    return string(description, max_length=vocab.PROJECT_MAX_BYTES)


def corpus_name() -> Schema:
    """The pattern says which characters and how many (1 to CORPUS_NAME_MAX_CHARS): no
    description, and no minLength/maxLength saying the length a second time."""
    return {"type": "string", "pattern": vocab.CORPUS_NAME_PATTERN}


# -- output schemas (structuredContent) --------------------------------------------------
# Compact on purpose (every session pays for them): each declares its top-level keys, typed, and
# says no more (no `required` list naming every key again: the declared keys are always sent, as
# docs/gateway.md says); an array's items (index rows, details, tool uses) are listed there, not
# here. The converters (gateway.convert) send more keys, also listed there, and the objects stay
# open so a newer gateway can add keys.
STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
BOOL: Schema = {"type": "boolean"}
ARRAY: Schema = {"type": "array"}


def shape(properties: dict[str, Schema]) -> Schema:
    """An open object with these keys, typed (each always sent)."""
    return obj(properties, closed=False)


def array_of(item: Schema) -> Schema:
    return {"type": "array", "items": item}


SEARCH_OUT = shape({"total": INT, "rows": ARRAY})
TIMELINE_OUT = shape({"anchorIndex": INT, "items": ARRAY})
OBSERVATIONS_OUT = shape({"observations": ARRAY})
MEM_SEARCH_OUT = shape({"total": INT, "continuation": STR, "rows": ARRAY, "details": ARRAY})
TOOL_USES_OUT = shape({"toolUses": ARRAY})
SAVE_MEMORY_OUT = shape({"id": INT, "created": BOOL})
