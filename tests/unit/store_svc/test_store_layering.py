"""The store's core modules know nothing about gRPC (house style rule 1)."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

CORE_MODULES = ["core.py", "queries.py", "writes.py", "observations.py", "state.py", "transfer.py", "schema.py",
                "convert.py", "validate.py"]


@pytest.mark.parametrize("name", CORE_MODULES)
def test_core_modules_do_not_import_grpc(name):
    tree = ast.parse((REPO_ROOT / "store_svc" / name).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert "grpc" not in imported


def test_the_query_parser_needs_only_the_stdlib_and_the_vocabulary():
    tree = ast.parse((REPO_ROOT / "mnemo" / "query.py").read_text(encoding="utf-8"))
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    modules |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert modules <= {"__future__", "re", "dataclasses", "mnemo.vocab"}
