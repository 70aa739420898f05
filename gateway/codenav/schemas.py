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
    "Find functions, classes and other symbols by name or words across the project's code (tree-sitter). "
    "Returns ranked symbols with path:line and signature, and folded views of the best files. "
    "Then smart_unfold one symbol instead of reading whole files."
)
SMART_OUTLINE_DESCRIPTION = (
    "A file's structure with bodies folded: imports, every class/function/method/type with line range, "
    "signature and first doc line. Use before reading a large file."
)
SMART_UNFOLD_DESCRIPTION = (
    "The exact source of one symbol (with its comments and decorators) and its line range. "
    "Class.method picks among same-named symbols."
)

_FILE_PATH = {"type": "string", "minLength": 1, "maxLength": PATH_MAX_CHARS,
              "description": "File path, relative to the project root (or absolute inside it)."}
_LINE = {"type": "integer", "minimum": 1}
_TEXT = {"type": "string"}

SMART_SEARCH_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": QUERY_MAX_CHARS,
                  "description": "A symbol name or words; camelCase, snake_case and dots are split."},
        "path": {"type": "string", "minLength": 1, "maxLength": PATH_MAX_CHARS,
                 "description": "Directory to search, relative to the project root (default: the root)."},
        "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS_MAX,
                        "default": MAX_RESULTS_DEFAULT, "description": "Most symbols and files listed."},
        "file_pattern": {"type": "string", "minLength": 1, "maxLength": FILE_PATTERN_MAX_CHARS,
                         "description": "Only paths containing this text, or matching this glob (e.g. *.ts)."},
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
        "symbol_name": {"type": "string", "minLength": 1, "maxLength": SYMBOL_NAME_MAX_CHARS,
                        "description": "Name, or qualified name such as Class.method."},
    },
    "required": ["file_path", "symbol_name"],
    "additionalProperties": False,
}

_SYMBOL_FIELDS: dict[str, Any] = {
    "name": _TEXT, "qualified_name": _TEXT, "kind": _TEXT, "start_line": _LINE, "end_line": _LINE,
    "depth": {"type": "integer", "minimum": 0}, "signature": _TEXT, "doc": _TEXT,
}
_SYMBOL = {"type": "object", "properties": _SYMBOL_FIELDS, "required": list(_SYMBOL_FIELDS)}

SMART_OUTLINE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": _TEXT, "language": _TEXT, "lines": {"type": "integer", "minimum": 0}, "heuristic": {"type": "boolean"},
        "import_count": {"type": "integer", "minimum": 0}, "imports": {"type": "array", "items": _TEXT},
        "symbols": {"type": "array", "items": _SYMBOL},
        "outline_tokens": {"type": "integer", "minimum": 0}, "file_tokens": {"type": "integer", "minimum": 0},
    },
    "required": ["path", "language", "lines", "heuristic", "import_count", "imports", "symbols", "outline_tokens",
                 "file_tokens"],
}
_UNFOLD_FIELDS: dict[str, Any] = {
    "path": _TEXT, "language": _TEXT, "name": _TEXT, "qualified_name": _TEXT, "kind": _TEXT,
    "start_line": _LINE, "end_line": _LINE, "start_byte": {"type": "integer", "minimum": 0},
    "end_byte": {"type": "integer", "minimum": 0}, "source": _TEXT,
    "also_matches": {"type": "array", "items": _TEXT},
}
SMART_UNFOLD_OUTPUT: dict[str, Any] = {"type": "object", "properties": _UNFOLD_FIELDS, "required": list(_UNFOLD_FIELDS)}
_HIT_FIELDS: dict[str, Any] = {"path": _TEXT, "score": {"type": "number"}, **_SYMBOL_FIELDS}
_FILE_FIELDS: dict[str, Any] = {"path": _TEXT, "language": _TEXT, "lines": {"type": "integer", "minimum": 0},
                                "score": {"type": "number"}, "matches": {"type": "integer", "minimum": 0}}
SMART_SEARCH_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": _TEXT, "scanned_files": {"type": "integer", "minimum": 0},
        "partial": {"type": "string", "description": "The cap that stopped the walk early; empty when complete."},
        "elapsed_ms": {"type": "number", "minimum": 0},
        "symbols": {"type": "array", "items": {"type": "object", "properties": _HIT_FIELDS,
                                               "required": list(_HIT_FIELDS)}},
        "files": {"type": "array", "items": {"type": "object", "properties": _FILE_FIELDS,
                                             "required": list(_FILE_FIELDS)}},
    },
    "required": ["query", "scanned_files", "partial", "elapsed_ms", "symbols", "files"],
}
