"""Outlines and unfolds for every listed language: exact symbols, kinds, line ranges and
byte ranges, on one small fixture per language (tests/fixtures/codenav)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gateway.codenav.languages import EXTENSIONS, LANGUAGES, grammar
from gateway.codenav.outline import outline, outline_bytes, unfold
from mnemo.errors import NotFound

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "codenav"

OUTLINES = {
    "Sample.cs": [("Demo", "namespace", 4, 29), ("Demo.Account", "class", 7, 19),
                  ("Demo.Account.Account", "method", 9, 9), ("Demo.Account.Deposit", "method", 14, 18),
                  ("Demo.ILedger", "interface", 21, 24), ("Demo.ILedger.Post", "method", 23, 23),
                  ("Demo.Kind", "enum", 26, 26), ("Demo.Money", "struct", 28, 28)],
    "Sample.java": [("Sample", "class", 7, 19), ("Sample.Sample", "method", 10, 12),
                    ("Sample.balance", "method", 15, 18), ("Ledger", "interface", 21, 23),
                    ("Ledger.names", "method", 22, 22), ("Kind", "enum", 25, 25)],
    "sample.c": [("point", "struct", 5, 8), ("color", "enum", 10, 10), ("size_type", "type", 12, 12),
                 ("print_point", "function", 15, 18), ("main", "function", 20, 25)],
    "sample.cpp": [("geo", "namespace", 4, 18), ("geo.Shape", "class", 7, 11), ("geo.Shape.area", "method", 9, 9),
                   ("geo.Shape.name", "method", 10, 10), ("geo.Square", "struct", 13, 16),
                   ("geo.Square.area", "method", 15, 15), ("total", "function", 20, 24)],
    "sample.go": [("Point", "struct", 9, 11), ("Shape", "interface", 14, 16), ("Point.Dist", "method", 19, 21),
                  ("Describe", "function", 23, 25)],
    "sample.js": [("add", "function", 5, 7), ("Counter", "class", 10, 19), ("Counter.constructor", "method", 11, 13),
                  ("Counter.increment", "method", 16, 18), ("render", "function", 21, 21)],
    "sample.kt": [("Point", "class", 6, 9), ("Point.norm", "method", 8, 8), ("Shape", "interface", 11, 13),
                  ("Shape.area", "method", 12, 12), ("Registry", "object", 15, 17),
                  ("Registry.register", "method", 16, 16), ("Color", "enum", 19, 19), ("origin", "function", 21, 23)],
    "sample.lua": [("M.add", "function", 6, 8), ("M.describe", "function", 10, 12), ("helper", "function", 14, 16),
                   ("greet", "function", 18, 20)],
    "sample.md": [("Title", "section", 1, 15), ("Title.Install", "section", 5, 11),
                  ("Title.Install.From source", "section", 9, 11), ("Title.Usage", "section", 13, 15)],
    "sample.php": [("Finder", "interface", 7, 10), ("Finder.find", "method", 9, 9), ("Logs", "trait", 12, 15),
                   ("Logs.log", "method", 14, 14), ("UserFinder", "class", 17, 26),
                   ("UserFinder.find", "method", 22, 25), ("helper", "function", 28, 31)],
    "sample.py": [("helper", "function", 7, 9), ("Shape", "class", 13, 23), ("Shape.area", "method", 17, 19),
                  ("Shape.name", "method", 21, 23)],
    "sample.rb": [("Greeter", "module", 5, 21), ("Greeter.Polite", "class", 7, 20),
                  ("Greeter.Polite.initialize", "method", 8, 10), ("Greeter.Polite.hello", "method", 13, 15),
                  ("Greeter.Polite.create", "method", 17, 19), ("top_level", "function", 23, 25)],
    "sample.rs": [("Point", "struct", 5, 8), ("Shape", "enum", 10, 13), ("Area", "trait", 15, 17),
                  ("Area.area", "method", 16, 16), ("Point", "impl", 19, 24), ("Point.fmt", "method", 21, 23),
                  ("origin", "function", 26, 28)],
    "sample.scala": [("Point", "class", 6, 9), ("Point.norm", "method", 8, 8), ("Shape", "trait", 11, 13),
                     ("Shape.area", "method", 12, 12), ("Registry", "object", 15, 17),
                     ("Registry.register", "method", 16, 16), ("origin", "function", 19, 19)],
    "sample.sh": [("usage", "function", 5, 7), ("main", "function", 9, 12)],
    "sample.swift": [("Point", "struct", 4, 12), ("Point.norm", "method", 9, 11), ("Shape", "interface", 14, 16),
                     ("Shape.area", "method", 15, 15), ("Circle", "class", 18, 22), ("Circle.init", "method", 20, 20),
                     ("Circle.area", "method", 21, 21), ("Color", "enum", 24, 24), ("origin", "function", 26, 28)],
    "sample.ts": [("User", "interface", 4, 7), ("UserId", "type", 9, 9), ("Color", "enum", 11, 14),
                  ("UserStore", "class", 16, 23), ("UserStore.find", "method", 20, 22),
                  ("makeStore", "function", 25, 27)],
    "sample.tsx": [("Props", "interface", 3, 5), ("Header", "function", 8, 10), ("Footer", "function", 12, 12)],
}
# (file, symbol asked for) -> lines unfolded, comments and decorators above included
UNFOLDS = {
    ("sample.py", "Shape"): (12, 23), ("sample.js", "Counter.increment"): (15, 18),
    ("sample.ts", "UserStore.find"): (19, 22), ("sample.tsx", "Header"): (7, 10), ("sample.go", "Point.Dist"): (18, 21),
    ("sample.rs", "Point"): (3, 8), ("Sample.java", "balance"): (14, 18), ("sample.c", "print_point"): (14, 18),
    ("sample.cpp", "Shape"): (6, 11), ("Sample.cs", "Deposit"): (13, 18), ("sample.rb", "Polite"): (6, 20),
    ("sample.php", "UserFinder.find"): (21, 25), ("sample.kt", "Point.norm"): (7, 8),
    ("sample.swift", "Point"): (3, 12),
    ("sample.scala", "Registry"): (15, 17), ("sample.lua", "M.add"): (5, 8), ("sample.sh", "usage"): (4, 7),
    ("sample.md", "Install"): (5, 11), ("sample.txt", "not_code"): (2, 3),
}


def test_every_language_has_a_fixture_and_its_queries_compile() -> None:
    covered = {EXTENSIONS[Path(name).suffix.lower()].name for name in OUTLINES}
    assert covered == {spec.name for spec in LANGUAGES}
    for spec in LANGUAGES:
        grammar(spec)  # a node type missing from the grammar would raise here


@pytest.mark.parametrize("name", sorted(OUTLINES))
def test_outline_lists_exact_symbols(name: str) -> None:
    shown, folded = outline(FIXTURES, name)
    assert shown == name
    assert not folded.heuristic
    assert [(s.qualified_name, s.kind, s.start_line, s.end_line) for _, s in folded.walk()] == OUTLINES[name]
    assert folded.line_count == len((FIXTURES / name).read_text().splitlines())


@pytest.mark.parametrize("name,symbol", sorted(UNFOLDS))
def test_unfold_returns_the_files_exact_bytes(name: str, symbol: str) -> None:
    unfolded = unfold(FIXTURES, name, symbol)
    data = (FIXTURES / name).read_bytes()
    first, last = UNFOLDS[(name, symbol)]
    assert (unfolded.start_line, unfolded.end_line) == (first, last)
    assert data[unfolded.start_byte:unfolded.end_byte] == unfolded.source.encode()
    assert unfolded.source.encode() == b"\n".join(data.split(b"\n")[first - 1:last])


def test_imports_signatures_and_doc_lines() -> None:
    _, python = outline(FIXTURES, "sample.py")
    assert python.imports == ("import os", "from dataclasses import dataclass", "from typing import Any")
    symbols = {s.qualified_name: s for _, s in python.walk()}
    assert symbols["helper"].signature == "def helper(value: int) -> int"
    assert symbols["helper"].doc == "Double a value."
    assert symbols["Shape"].doc == "Base of all shapes."
    _, go = outline(FIXTURES, "sample.go")
    assert go.imports == ('"fmt"', '"math"')
    dist = next(s for _, s in go.walk() if s.name == "Dist")
    assert (dist.signature, dist.doc) == ("func (p Point) Dist(q Point) float64", "Dist returns the distance to q.")
    _, csharp = outline(FIXTURES, "Sample.cs")
    assert next(s for _, s in csharp.walk() if s.name == "Deposit").doc == "Deposit money."
    _, ruby = outline(FIXTURES, "sample.rb")
    assert ruby.imports == ('require "json"', 'require_relative "helpers"')
    assert next(s for _, s in ruby.walk() if s.name == "Greeter").signature == "module Greeter"


def test_signatures_are_bounded() -> None:
    source = "def long(" + ", ".join(f"argument_{index}: int" for index in range(60)) + "):\n    pass\n"
    (symbol,) = outline_bytes(source.encode(), "long.py").symbols
    assert len(symbol.signature) == 200 and symbol.signature.endswith("…")


def test_qualified_names_disambiguate_and_the_rest_is_reported() -> None:
    first = unfold(FIXTURES, "sample.php", "find")
    assert first.symbol.qualified_name == "Finder.find"
    assert [other.qualified_name for other in first.others] == ["UserFinder.find"]
    assert unfold(FIXTURES, "sample.php", "UserFinder.find").source.strip().startswith("/** Find one user. */")


def test_a_missing_symbol_lists_what_is_there() -> None:
    with pytest.raises(NotFound) as info:
        unfold(FIXTURES, "sample.go", "Nope")
    assert "symbol_name" in str(info.value)
    assert "Point.Dist (method, L19)" in str(info.value) and "Describe (function, L23)" in str(info.value)


def test_unknown_language_degrades_to_a_line_scan(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "sample.txt", tmp_path / "notes.txt")
    (tmp_path / "script.zig").write_text("const std = @import(\"std\");\n\nfn add(a: i32) i32 {\n    return a;\n}\n")
    _, text = outline(tmp_path, "notes.txt")
    assert text.heuristic and text.language == "text"
    assert [(s.name, s.kind, s.start_line, s.end_line) for s in text.symbols] == [("not_code", "function", 2, 3)]
    _, zig = outline(tmp_path, "script.zig")
    assert [(s.name, s.start_line, s.end_line) for s in zig.symbols] == [("add", 3, 5)]
    assert unfold(tmp_path, "script.zig", "add").source == "fn add(a: i32) i32 {\n    return a;\n}"


def test_broken_source_still_outlines() -> None:
    folded = outline_bytes(b"def ok():\n    pass\n\ndef broken(:\n    ???\n\nclass After:\n    pass\n", "x.py")
    assert not folded.heuristic
    assert "ok" in [s.name for _, s in folded.walk()]


def test_file_without_trailing_newline_and_crlf(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"import os\r\n\r\ndef f():\r\n    return 1")
    unfolded = unfold(tmp_path, "a.py", "f")
    assert unfolded.source == "def f():\r\n    return 1"
    assert (unfolded.start_line, unfolded.end_line) == (3, 4)
