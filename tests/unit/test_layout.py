"""The layout is the architecture: these rules keep it so (one folder per process,
mnemo/ shared only, service cores free of gRPC, no import cycle, no oversized module)."""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

PROCESS_PACKAGES = ("capture", "gateway", "search_svc", "store_svc", "vector_svc")
OUR_PACKAGES = ("mnemo", *PROCESS_PACKAGES)
GENERATED = REPO_ROOT / "mnemo" / "v1"
# Modules whose job is the gRPC boundary of a service: they may import grpc, its cores may not.
BOUNDARY_MODULES = frozenset({"servicer.py", "main.py", "__main__.py"})
# Importing one of these pulls grpc in as surely as `import grpc` does.
GRPC_MODULES = ("grpc", "grpc_health", "grpc_reflection", "mnemo.grpc_client", "mnemo.grpc_server")
MAX_MODULE_LINES = 500


def our_modules(package: str) -> Iterator[Path]:
    """Every module of a package of ours, generated code excluded."""
    for path in sorted((REPO_ROOT / package).rglob("*.py")):
        if GENERATED not in path.parents:
            yield path


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imported_modules(path: Path, modules: Collection[str] = ()) -> set[str]:
    """Modules a file of ours imports anywhere (functions included), except under
    TYPE_CHECKING; relative imports resolved. `from pkg import name` counts as pkg and pkg.name,
    or as pkg.name alone when that is one of `modules` (a submodule: importing it runs pkg's
    __init__ as any `from pkg.name import x` does, which is no dependency on pkg's names)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    return imports_in(path.read_text(encoding="utf-8"), package, modules)


def imports_in(source: str, package: str, modules: Collection[str] = ()) -> set[str]:
    tree = ast.parse(source)
    skipped = {id(inner) for node in ast.walk(tree) if _is_type_checking_block(node) for inner in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            names = {f"{base}.{alias.name}" for alias in node.names}
            found |= names if names <= set(modules) else {base, *names}
    return found


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*parent, node.module] if node.module else parent)


def _within(module: str, roots: tuple[str, ...]) -> bool:
    return any(module == root or module.startswith(root + ".") for root in roots)


def grpc_imports_of_core(service: str) -> dict[str, list[str]]:
    """For one service package: its core modules (all but the gRPC boundary) that import
    grpc, directly or through mnemo's gRPC bootstrap or the generated *_pb2_grpc stubs."""
    offenders: dict[str, list[str]] = {}
    for path in our_modules(service):
        if path.name in BOUNDARY_MODULES:
            continue
        found = sorted(m for m in imported_modules(path) if _within(m, GRPC_MODULES) or m.endswith("_pb2_grpc"))
        if found:
            offenders[str(path.relative_to(REPO_ROOT))] = found
    return offenders


def import_graph() -> dict[str, set[str]]:
    """Our modules and the modules of ours each one imports."""
    modules = {module_name(path): path for package in OUR_PACKAGES for path in our_modules(package)}
    return {name: {m for m in imported_modules(path, modules) if m in modules and m != name}
            for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle (its modules in order, the first repeated at the end), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[node] = 2
        path.pop()
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def test_the_shared_package_imports_no_process_package():
    offenders = {
        str(path.relative_to(REPO_ROOT)): sorted(m for m in imported_modules(path) if _within(m, PROCESS_PACKAGES))
        for path in our_modules("mnemo")
    }
    assert {name: found for name, found in offenders.items() if found} == {}


@pytest.mark.parametrize("service", ["store_svc", "vector_svc"])
def test_service_cores_do_not_import_grpc(service):
    assert grpc_imports_of_core(service) == {}


def test_there_is_no_import_cycle_among_our_modules():
    assert find_cycle(import_graph()) == []


def test_no_module_of_ours_is_over_500_lines():
    sizes = {
        str(path.relative_to(REPO_ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for package in (*OUR_PACKAGES, "bench", "tests")
        for path in our_modules(package)
    }
    assert {name: lines for name, lines in sizes.items() if lines > MAX_MODULE_LINES} == {}


# -- the rules above must be able to fail ----------------------------------------------


def test_the_checks_see_what_they_look_for():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []
    probe = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import grpc\n"
             "def f():\n    from capture import hooks\n    from .sibling import thing\n")
    found = imports_in(probe, "mnemo")
    assert {"capture", "capture.hooks", "mnemo.sibling", "mnemo.sibling.thing"} <= found
    assert "grpc" not in found
    # a package whose __init__ re-exports a submodule that imports its siblings is no cycle
    assert imports_in("from pkg import sibling\n", "pkg", modules={"pkg.sibling"}) == {"pkg.sibling"}
    assert imports_in("from pkg import sibling, name\n", "pkg", modules={"pkg.sibling"}) == {
        "pkg", "pkg.sibling", "pkg.name"}
