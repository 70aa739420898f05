"""search_svc's layering: cores know nothing about gRPC (house style rule 1), the modules
import each other without a cycle, and no module grows past its size limit."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

PACKAGE = REPO_ROOT / "search_svc"
# The transport edge: the gRPC adapter, the composition root and the typed clients.
# store_forward relays raw StoreService calls: a gRPC handler by nature, like the servicer.
GRPC_EDGE = {"search_svc.servicer", "search_svc.main", "search_svc.backend", "search_svc.store_forward"}
# Importing one of these pulls grpc in as surely as `import grpc` does.
GRPC_MODULES = ("grpc", "grpc_health", "grpc_reflection", "mnemo.grpc_client", "mnemo.grpc_server", "mcp")
MAX_LINES = 500
MAX_LINES_CORPUS = 400  # the corpus feature was split to stay readable: keep it so


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_names(path: Path) -> set[str]:
    """Every module an import statement names, `from a import b` counted as `a.b` when that
    is a module of ours (a submodule) and as `a` otherwise."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names
                      if f"{node.module}.{alias.name}" in MODULES}
    return names


def internal_edges(name: str) -> set[str]:
    """The search_svc modules `name` imports. `from search_svc.pkg import sub` is an edge to the
    package too: its __init__ runs first, so a package whose __init__ imports the importer is a cycle."""
    return {target for target in imported_names(MODULES[name]) if target in MODULES and target != name}


def test_the_walk_sees_every_module():
    assert {"search_svc.retrieval", "search_svc.details", "search_svc.corpus.core",
            "search_svc.memsearch.engine"} <= MODULES.keys()
    assert "search_svc.retrieval" in internal_edges("search_svc.details")
    assert "search_svc.corpus" in internal_edges("search_svc.main")
    assert "search_svc.corpus.core" in internal_edges("search_svc.corpus")


def pulls_in_grpc(module: str) -> bool:
    return module.endswith("_pb2_grpc") or any(module == root or module.startswith(root + ".")
                                               for root in GRPC_MODULES)


@pytest.mark.parametrize("name", sorted(set(MODULES) - GRPC_EDGE))
def test_core_modules_do_not_import_grpc_or_mcp(name):
    offending = sorted(m for m in imported_names(MODULES[name]) if pulls_in_grpc(m))
    assert offending == [], f"{name} imports {offending}: only {sorted(GRPC_EDGE)} may"


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a path [a, b, ..., a], or [] when the graph has none."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" once explored

    def visit(node: str, path: list[str]) -> list[str]:
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                return path[path.index(target):] + [node, target] if target in path else [node, target]
            if target not in state:
                found = visit(target, path + [node])
                if found:
                    return found
        state[node] = "done"
        return []

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start, [])
            if cycle:
                return cycle
    return []


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_search_svc_has_no_import_cycle():
    graph = {name: internal_edges(name) for name in MODULES}
    assert find_cycle(graph) == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_stay_small(name):
    limit = MAX_LINES_CORPUS if name.startswith("search_svc.corpus") else MAX_LINES
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= limit, f"{name} has {lines} lines (limit {limit}): split it by concern"
