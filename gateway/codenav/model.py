"""The values code navigation returns: symbols, outlines, unfolded source, search hits.

Lines are 1-based and inclusive. Tokens are estimated as characters / 4
(`mnemo.vocab.CHARS_PER_TOKEN`), the same estimate the rest of mnemo reports.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from mnemo.vocab import CHARS_PER_TOKEN

# Kinds that hold other symbols; a function inside one of them is a method.
CONTAINER_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "module", "namespace", "object",
                             "enum", "section"})


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Symbol:
    """One definition. `start_line`..`end_line` is the definition itself; unfolding also
    takes the comment, decorator and attribute lines right above it (`unfold_start_line`)."""

    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    unfold_start_line: int
    signature: str
    doc: str
    children: tuple[Symbol, ...] = ()

    def walk(self, depth: int = 0) -> Iterator[tuple[int, Symbol]]:
        """This symbol and its descendants, depth-first, in source order."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)


@dataclass(frozen=True)
class Outline:
    """A file's structure with bodies folded. `heuristic` is True when no grammar read the
    file (unknown language or a failed parse) and the symbols come from a line scan."""

    language: str
    line_count: int
    imports: tuple[str, ...]
    symbols: tuple[Symbol, ...]
    file_tokens: int
    heuristic: bool = False

    def walk(self) -> Iterator[tuple[int, Symbol]]:
        for symbol in self.symbols:
            yield from symbol.walk()


@dataclass(frozen=True)
class Unfolded:
    """The exact source of one symbol: `source` is the file's bytes
    `start_byte`..`end_byte` (whole lines), decoded as UTF-8."""

    path: str
    language: str
    symbol: Symbol
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    source: str
    others: tuple[Symbol, ...]  # further symbols the name also matched


@dataclass(frozen=True)
class SymbolHit:
    path: str
    symbol: Symbol
    score: float


@dataclass(frozen=True)
class FileHit:
    path: str
    outline: Outline
    score: float
    matches: int


@dataclass(frozen=True)
class SearchResult:
    """Ranked symbols and files. `partial` names the cap that stopped the walk, or is ""."""

    query: str
    symbols: tuple[SymbolHit, ...]
    files: tuple[FileHit, ...]
    scanned_files: int
    partial: str
    elapsed_s: float
