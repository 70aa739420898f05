"""JSON Schema building blocks for the tool table: every property has a type, bounds and a description."""

from __future__ import annotations

from typing import Any

from gateway import convert
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


def string(description: str, *, max_length: int = STRING_MAX_CHARS, min_length: int | None = None,
           **extra: Any) -> Schema:
    schema: dict[str, Any] = {"type": "string", "description": description, "maxLength": max_length}
    if min_length is not None:
        schema["minLength"] = min_length
    schema.update(extra)
    return schema


def integer(description: str, minimum: int, maximum: int, default: int | None = None) -> Schema:
    schema: dict[str, Any] = {"type": "integer", "description": description, "minimum": minimum, "maximum": maximum}
    if default is not None:
        schema["default"] = default
    return schema


def string_array(description: str, *, max_items: int = ARRAY_MAX_ITEMS, item_max_length: int = ARRAY_ITEM_MAX_CHARS,
                 **item: Any) -> Schema:
    return {"type": "array", "description": description, "maxItems": max_items,
            "items": {"type": "string", "maxLength": item_max_length, **item}}


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


def project(description: str = "Project name (exact match).") -> Schema:
    return string(description, max_length=vocab.PROJECT_MAX_BYTES)


def corpus_name() -> Schema:
    return string("Corpus name: letters, digits, '.', '_' or '-' (1-64 characters).",
                  max_length=vocab.CORPUS_NAME_MAX_CHARS, min_length=1, pattern=vocab.CORPUS_NAME_PATTERN)


# -- output schemas (structuredContent) --------------------------------------------------
# Output objects stay open (no additionalProperties: false) so a newer gateway can add fields.

def out(properties: dict[str, Schema], required: list[str] | None = None) -> Schema:
    return obj(properties, required, closed=False)


INDEX_ROW = out(
    {
        "id": {"type": "string", "description": "Rendered id: #123 observation, #S12 summary, #P7 prompt."},
        "kind": {"type": "string", "enum": ["observation", "summary", "prompt", "unknown"]},
        "recordId": {"type": "integer", "description": "Row id within its kind."},
        "type": {"type": "string"},
        "title": {"type": "string"},
        "createdAt": {"type": "string"},
        "createdAtEpoch": {"type": "integer"},
        "tokens": {"type": "integer", "description": "Estimated tokens of the full record."},
        "score": {"type": "number"},
        "project": {"type": "string"},
        "file": {"type": "string"},
    },
    ["id", "kind", "recordId", "type", "title"],
)

OBSERVATION = out(convert.OBSERVATION.properties(), ["kind", "id", "type", "title"])

RECORD = out(
    {
        "kind": {"type": "string", "enum": list(convert.RECORD_KINDS)},
        "id": {"type": "integer"},
    },
    ["kind", "id"],
)

TOOL_USE = out(convert.TOOL_USE.properties(), ["id", "toolName"])

SEARCH_OUT = out(
    {
        "total": {"type": "integer", "description": "All matches before pagination."},
        "counts": out({"observations": {"type": "integer"}, "summaries": {"type": "integer"},
                       "prompts": {"type": "integer"}}),
        "strategy": {"type": "string"},
        "notice": {"type": "string"},
        "rows": {"type": "array", "items": INDEX_ROW},
    },
    ["total", "rows"],
)

TIMELINE_OUT = out(
    {
        "anchor": {"type": "string"},
        "anchorIndex": {"type": "integer", "description": "Position of the anchor in items (-1 if none)."},
        "items": {"type": "array", "items": INDEX_ROW},
    },
    ["anchor", "anchorIndex", "items"],
)

OBSERVATIONS_OUT = out({"observations": {"type": "array", "items": OBSERVATION}}, ["observations"])

MEM_SEARCH_OUT = out(
    {
        "total": {"type": "integer"},
        "offset": {"type": "integer"},
        "hasMore": {"type": "boolean"},
        "continuation": {"type": "string"},
        "strategy": {"type": "string"},
        "rows": {"type": "array", "items": INDEX_ROW},
        "details": {
            "type": "array",
            "items": out(
                {
                    "id": {"type": "string"},
                    "record": RECORD,
                    "row": INDEX_ROW,
                    "context": {"type": "array", "items": INDEX_ROW},
                    "toolUses": {"type": "array", "items": out(convert.TOOL_USE_REF.properties(), ["id"])},
                },
                ["id", "record", "context", "toolUses"],
            ),
        },
    },
    ["total", "continuation", "rows", "details"],
)

TOOL_USES_OUT = out({"toolUses": {"type": "array", "items": TOOL_USE}}, ["toolUses"])

SAVE_MEMORY_OUT = out(
    {"id": {"type": "integer", "description": "The observation id."},
     "created": {"type": "boolean", "description": "False when an identical memory already existed."}},
    ["id", "created"],
)
