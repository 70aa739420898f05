"""smart_search: ranked symbols and files across the project tree.

Each file's outline is parsed once and cached by (path, size, mtime_ns), with its
lowered names, signatures and doc lines, so a repeated search over the same tree only
walks the directories and runs substring tests in C over the cached text.

Scoring (higher first): a symbol named exactly as the query (case, `_`, `-` ignored)
100, a name containing the whole query 30, each query word in the name 8 (all of them:
+20), each word only in the signature or doc line 2; hits under a fifth of the best
score are dropped. Ties go to definitions over
methods, then to shallower paths. A file scores its three best symbols plus 3 per query
word in its path.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from gateway.codenav.confine import OPEN_FLAGS, confine, is_binary, project_root
from gateway.codenav.languages import language_for
from gateway.codenav.model import FileHit, Outline, SearchResult, Symbol, SymbolHit
from gateway.codenav.outline import outline_bytes
from gateway.codenav.walk import Entry, Walk
from mnemo.errors import InvalidArgument

SEARCH_FILE_MAX_BYTES = 512 * 1024
SEARCH_MAX_FILES = 50_000
SEARCH_TIME_CAP_S = 10.0
CACHE_MAX_FILES = 60_000
RELEVANCE_FLOOR = 0.2
NAME_WORD_SCORE = 8.0
HitT = TypeVar("HitT", SymbolHit, FileHit)
_WORD_SPLIT = re.compile(r"[^0-9A-Za-z]+|(?<=[a-z0-9])(?=[A-Z])")
_KIND_RANK = {"class": 0, "interface": 0, "struct": 0, "trait": 0, "enum": 0, "type": 1, "function": 1,
              "object": 1, "module": 2, "namespace": 2, "impl": 2, "method": 3, "section": 3}


@dataclass(frozen=True)
class _Indexed:
    """A cached file: its outline and the lowered text that searches test."""

    outline: Outline | None  # None: binary or unreadable
    entries: tuple[tuple[Symbol, str, str, str], ...]  # symbol, lowered name, compact qualified name, lowered text
    haystack: str


class OutlineCache:
    """Parsed files by path, valid while size and mtime_ns are unchanged; least recently used evicted."""

    def __init__(self, max_files: int = CACHE_MAX_FILES):
        self.max_files = max_files
        self.parses = 0
        self.hits = 0
        self._entries: OrderedDict[str, tuple[int, int, _Indexed]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, entry: Entry) -> _Indexed:
        with self._lock:
            cached = self._entries.get(entry.path)
            if cached is not None and cached[:2] == (entry.size, entry.mtime_ns):
                self._entries.move_to_end(entry.path)
                self.hits += 1
                return cached[2]
        indexed = _index(entry)
        with self._lock:
            self.parses += 1
            self._entries[entry.path] = (entry.size, entry.mtime_ns, indexed)
            while len(self._entries) > self.max_files:
                self._entries.popitem(last=False)
        return indexed


DEFAULT_CACHE = OutlineCache()


@dataclass(frozen=True)
class _Query:
    text: str
    words: tuple[str, ...]
    compact: str

    @classmethod
    def parse(cls, text: str) -> _Query:
        words = tuple(dict.fromkeys(word.lower() for word in _WORD_SPLIT.split(text) if word))
        if not words:
            raise InvalidArgument("query", "must contain a letter or digit")
        return cls(text, words, "".join(words))


def search(root: Path, query: str, path: str | None = None, max_results: int = 20, file_pattern: str | None = None,
           *, cache: OutlineCache | None = None, time_cap_s: float = SEARCH_TIME_CAP_S,
           max_files: int = SEARCH_MAX_FILES) -> SearchResult:
    """smart_search over the directory `path` (default: the project root)."""
    began = time.monotonic()
    parsed = _Query.parse(query)
    base = project_root(root)
    start = confine(base, path or ".", "path")
    if not start.real.is_dir():
        raise InvalidArgument("path", f"{start.shown} is not a directory; use smart_outline for one file")
    walk = Walk(str(base), str(start.real), max_file_bytes=SEARCH_FILE_MAX_BYTES, max_files=max_files,
                deadline=began + time_cap_s, accept=lambda name: language_for(name) is not None)
    symbols: list[SymbolHit] = []
    files: list[FileHit] = []
    for entry in walk:
        if not _pattern_matches(file_pattern, entry.shown):
            continue
        _score_file((cache or DEFAULT_CACHE).get(entry), entry.shown, parsed, symbols, files)
    symbols = _relevant(symbols)
    symbols.sort(key=lambda hit: (-hit.score, _KIND_RANK.get(hit.symbol.kind, 4), hit.path.count("/"), hit.path,
                                  hit.symbol.start_line))
    files = _relevant(files)
    files.sort(key=lambda hit: (-hit.score, hit.path.count("/"), hit.path))
    return SearchResult(query, tuple(symbols[:max_results]), tuple(files[:max_results]), walk.seen, walk.stopped,
                        time.monotonic() - began)


def _relevant(hits: list[HitT]) -> list[HitT]:
    """Drop the long tail: hits under a fifth of the best score, unless a query word is in their name."""
    floor = min(max((hit.score for hit in hits), default=0.0) * RELEVANCE_FLOOR, NAME_WORD_SCORE)
    return [hit for hit in hits if hit.score >= floor]


def _pattern_matches(pattern: str | None, shown: str) -> bool:
    if not pattern:
        return True
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatch(shown, pattern) or fnmatch.fnmatch(shown.rpartition("/")[2], pattern)
    return pattern.lower() in shown.lower()


def _score_file(indexed: _Indexed, shown: str, query: _Query, symbols: list[SymbolHit], files: list[FileHit]) -> None:
    if indexed.outline is None:
        return
    lowered_path = shown.lower()
    path_score = sum(3 for word in query.words if word in lowered_path)
    if not path_score and not any(word in indexed.haystack for word in query.words):
        return
    scores = []
    for symbol, name, compact, text in indexed.entries:
        score = _symbol_score(name, compact, text, query)
        if score:
            scores.append(score)
            symbols.append(SymbolHit(shown, symbol, score))
    if scores or path_score:
        best = sorted(scores, reverse=True)[:3]
        files.append(FileHit(shown, indexed.outline, sum(best) + path_score, len(scores)))


def _symbol_score(name: str, compact: str, text: str, query: _Query) -> float:
    score = 0.0
    in_name = 0
    for word in query.words:
        if word in name:
            score += NAME_WORD_SCORE
            in_name += 1
        elif word in text:
            score += 2
    if not score:
        return 0.0
    if in_name == len(query.words):
        score += 20
    squeezed = name.replace("_", "").replace("-", "")
    if query.compact in (squeezed, compact):
        score += 100
    elif len(query.compact) >= 3 and query.compact in squeezed:
        score += 30
    return score


def _index(entry: Entry) -> _Indexed:
    try:
        with os.fdopen(os.open(entry.path, OPEN_FLAGS), "rb") as handle:
            regular = stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
            data = handle.read(SEARCH_FILE_MAX_BYTES + 1) if regular else b""
    except OSError:
        return _Indexed(None, (), "")
    if not data or len(data) > SEARCH_FILE_MAX_BYTES or is_binary(data):
        return _Indexed(None, (), "")
    folded = outline_bytes(data, entry.shown)
    entries = tuple((symbol, symbol.name.lower(), _compact(symbol.qualified_name),
                     f"{symbol.signature}\n{symbol.doc}".lower()) for _, symbol in folded.walk())
    haystack = "\n".join(f"{name}\n{text}" for _, name, _, text in entries)
    return _Indexed(folded, entries, haystack)


def _compact(qualified_name: str) -> str:
    return "".join(word.lower() for word in _WORD_SPLIT.split(qualified_name) if word)
