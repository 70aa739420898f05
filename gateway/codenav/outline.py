"""smart_outline and smart_unfold: one file's folded structure, one symbol's exact source.

A file no grammar reads (an unknown extension, or a parser failure) still gets an
outline, from a line scan for definition keywords: never an error.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from gateway.codenav.confine import confine, project_root, read_file
from gateway.codenav.extract import parse_symbols
from gateway.codenav.languages import language_for
from gateway.codenav.model import Outline, Symbol, Unfolded, estimate_tokens
from mnemo.errors import NotFound

OUTLINE_MAX_BYTES = 2 * 1024 * 1024
NOT_FOUND_LIST_MAX = 60
_HEURISTIC = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?:export|pub|public|private|protected|static|async|abstract|final|default)\s+)*"
    r"(?P<keyword>def|class|function|func|fn|sub|proc|module|interface|struct|enum|trait|type|impl|object)"
    r"\s+(?P<name>[A-Za-z_$][\w$.:]*)"
)
_HEURISTIC_KINDS = {"def": "function", "function": "function", "func": "function", "fn": "function",
                    "sub": "function", "proc": "function", "object": "object"}
log = logging.getLogger(__name__)


def outline_bytes(data: bytes, name: str) -> Outline:
    """The outline of a file's bytes; `name` (a path) picks the language."""
    spec = language_for(name)
    text = data.decode("utf-8", "replace")
    line_count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if spec is not None:
        try:
            imports, symbols = parse_symbols(data, spec)
            return Outline(spec.name, line_count, imports, symbols, estimate_tokens(text))
        except (ValueError, RuntimeError, ImportError, OSError):  # a grammar that fails to load or parse
            log.warning("codenav: %s parser failed on %s; using the line scan", spec.name, name, exc_info=True)
    return Outline(spec.name if spec else "text", line_count, (), _scan_lines(text), estimate_tokens(text),
                   heuristic=True)


def outline(root: Path, file_path: str) -> tuple[str, Outline]:
    """smart_outline: (the path as shown, the file's outline)."""
    base = project_root(root)
    target = confine(base, file_path, "file_path")
    return target.shown, outline_bytes(read_file(target, "file_path", OUTLINE_MAX_BYTES), target.shown)


def unfold(root: Path, file_path: str, symbol_name: str) -> Unfolded:
    """smart_unfold: the exact source of one symbol, comments and decorators above it included."""
    base = project_root(root)
    target = confine(base, file_path, "file_path")
    data = read_file(target, "file_path", OUTLINE_MAX_BYTES)
    folded = outline_bytes(data, target.shown)
    matches = find_symbols(folded, symbol_name)
    if not matches:
        raise NotFound(f"symbol_name: no symbol {symbol_name!r} in {target.shown}; {_available(folded)}")
    symbol = matches[0]
    start, end = line_span(data, symbol.unfold_start_line, symbol.end_line)
    return Unfolded(target.shown, folded.language, symbol, symbol.unfold_start_line, symbol.end_line, start, end,
                    data[start:end].decode("utf-8", "replace"), tuple(matches[1:]))


def find_symbols(folded: Outline, wanted: str) -> list[Symbol]:
    """Symbols named `wanted`, best match first: the qualified name exactly, a qualified
    suffix (`Class.method`), the plain name, then the plain name ignoring case."""
    wanted = wanted.strip()
    symbols = [symbol for _, symbol in folded.walk()]
    tests = (
        lambda s: s.qualified_name == wanted,
        lambda s: s.qualified_name.endswith("." + wanted),
        lambda s: s.name == wanted,
        lambda s: s.name.lower() == wanted.lower() or s.qualified_name.lower() == wanted.lower(),
    )
    for test in tests:
        found = [symbol for symbol in symbols if test(symbol)]
        if found:
            return found
    return []


def line_span(data: bytes, first_line: int, last_line: int) -> tuple[int, int]:
    """Byte offsets of lines first..last (1-based, inclusive), without the final newline."""
    start = 0
    for _ in range(first_line - 1):
        start = data.index(b"\n", start) + 1
    end = start
    for _ in range(last_line - first_line + 1):
        newline = data.find(b"\n", end)
        if newline < 0:
            return start, len(data)
        end = newline + 1
    return start, end - 1


def _available(folded: Outline) -> str:
    listed = [f"{symbol.qualified_name} ({symbol.kind}, L{symbol.start_line})" for _, symbol in folded.walk()]
    if not listed:
        return "the file has no symbols"
    more = f", ... +{len(listed) - NOT_FOUND_LIST_MAX} more" if len(listed) > NOT_FOUND_LIST_MAX else ""
    return "symbols here: " + ", ".join(listed[:NOT_FOUND_LIST_MAX]) + more


def _scan_lines(text: str) -> tuple[Symbol, ...]:
    """Definition-looking lines, each running until the next one at its indent or less."""
    lines = text.splitlines()
    found = [(row, match) for row, line in enumerate(lines) if (match := _HEURISTIC.match(line))]
    symbols = []
    for index, (row, match) in enumerate(found):
        indent = len(match["indent"])
        end = next((other - 1 for other, later in found[index + 1:] if len(later["indent"]) <= indent), len(lines) - 1)
        while end > row and not lines[end].strip():
            end -= 1
        keyword = match["keyword"]
        name = match["name"].rstrip(".:")
        symbols.append(Symbol(name=name, qualified_name=name,
                              kind=_HEURISTIC_KINDS.get(keyword, keyword), start_line=row + 1, end_line=end + 1,
                              unfold_start_line=row + 1, signature=lines[row].strip()[:200], doc=""))
    return tuple(symbols)
