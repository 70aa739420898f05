"""store_svc's modules import one another without a circle: each can be read, and imported, on
its own (the schema once reached the RPC access rules for a DDL string: schema -> access ->
core -> schema)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

PACKAGE = "store_svc"


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted((REPO_ROOT / PACKAGE).rglob("*.py"))}


def _imported(path: Path) -> set[str]:
    """The store_svc modules `path` names in any import, those for type checking included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name in MODULES}


def _circle_from(start: str, graph: dict[str, set[str]]) -> list[str]:
    """A path of imports from `start` back to itself, or [] when there is none."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        name, path = stack.pop()
        for nxt in sorted(graph[name]):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return []


def test_no_module_of_the_store_imports_itself_round_a_circle():
    graph = {name: _imported(path) - {name} for name, path in MODULES.items()}
    circles = [" -> ".join(c) for name in graph if (c := _circle_from(name, graph))]
    assert not circles, "import circles in store_svc:\n" + "\n".join(circles)


def test_the_circle_finder_finds_a_circle():
    assert _circle_from("a", {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle_from("a", {"a": {"b"}, "b": set()}) == []


def test_each_module_of_the_store_imports_on_its_own():
    """One fresh interpreter imports the modules one after another, each from a clean slate of
    store_svc modules, so none relies on another having been imported first."""
    names = list(MODULES)
    script = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        f"    for loaded in [m for m in sys.modules if m == {PACKAGE!r} or m.startswith({PACKAGE + '.'!r})]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
