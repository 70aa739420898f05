"""No runtime module imports the MCP SDK: the gateway serves MCP itself, so `mcp` is a dev
dependency (the tests' oracle and client), and an installed mnemo works without it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[3]
RUNTIME_PACKAGES = ("mnemo", "gateway", "capture", "store_svc", "vector_svc", "search_svc", "viewer")
SDK = ("mcp", "mcp_types")


def _imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_no_runtime_module_imports_the_mcp_sdk():
    offenders = {}
    for package in RUNTIME_PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            sdk = {name for name in _imported(ast.parse(path.read_text())) if name.split(".")[0] in SDK}
            if sdk:
                offenders[str(path.relative_to(REPO))] = sorted(sdk)
    assert offenders == {}
    assert len(list((REPO / "gateway").rglob("*.py"))) > 10  # the walk saw the gateway's sources
