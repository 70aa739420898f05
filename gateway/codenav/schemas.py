"""Tool descriptions and JSON Schemas (input and output) of the three code tools.

Plain constants for the gateway's tool table. All three tools only read files: list
them with `annotations.readOnlyHint: true` (usable in plan mode).
"""

from __future__ import annotations

from typing import Any

from gateway.codenav.confine import PATH_MAX_CHARS

QUERY_MAX_CHARS = 200
SYMBOL_NAME_MAX_CHARS = 500
FILE_PATTERN_MAX_CHARS = 200
MAX_RESULTS_DEFAULT = 20
MAX_RESULTS_MAX = 100

SMART_SEARCH_DESCRIPTION = (
    "Find functions, classes and methods in the project's code by name or words: path:line, signatures."
)
SMART_OUTLINE_DESCRIPTION = "A file's symbols with line ranges and signatures, bodies folded."
SMART_UNFOLD_DESCRIPTION = "The source of one symbol (a name or Class.method) with its comments and line range."

# File paths are relative to the project root, or absolute inside it (docs/codenav.md).
_FILE_PATH = {"type": "string", "minLength": 1, "maxLength": PATH_MAX_CHARS}

SMART_SEARCH_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": QUERY_MAX_CHARS},
        "path": {"type": "string", "minLength": 1, "maxLength": PATH_MAX_CHARS,
                 "description": "Directory (default: project root)."},
        "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS_MAX, "default": MAX_RESULTS_DEFAULT},
        "file_pattern": {"type": "string", "minLength": 1, "maxLength": FILE_PATTERN_MAX_CHARS,
                         "description": "Path substring or glob (*.ts)."},
    },
    "required": ["query"],
    "additionalProperties": False,
}
SMART_OUTLINE_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"file_path": _FILE_PATH},
    "required": ["file_path"],
    "additionalProperties": False,
}
SMART_UNFOLD_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        "symbol_name": {"type": "string", "minLength": 1, "maxLength": SYMBOL_NAME_MAX_CHARS},
    },
    "required": ["file_path", "symbol_name"],
    "additionalProperties": False,
}

# Output schemas are compact (every session pays for them): the top-level keys, typed (each
# always sent; no `required` list repeating them); an array's items and the further keys
# render.py sends are listed in docs/gateway.md.
_TEXT = {"type": "string"}
_LINE = {"type": "integer"}
_LIST = {"type": "array"}


def _shape(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


SMART_OUTLINE_OUTPUT: dict[str, Any] = _shape({"path": _TEXT, "symbols": _LIST})
SMART_UNFOLD_OUTPUT: dict[str, Any] = _shape({"path": _TEXT, "start_line": _LINE, "end_line": _LINE,
                                              "source": _TEXT})
SMART_SEARCH_OUTPUT: dict[str, Any] = _shape({
    "partial": _TEXT,  # the cap that stopped the walk early; empty when complete
    "symbols": _LIST,
    "files": _LIST,
})
