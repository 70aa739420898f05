"""The cores of vector_svc know nothing about gRPC: only servicer.py and main.py may import it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[3] / "vector_svc"
CORES = ["embedders.py", "documents.py", "index.py", "follower.py", "corpus.py"]


@pytest.mark.parametrize("name", CORES)
def test_core_module_does_not_import_grpc(name):
    tree = ast.parse((PACKAGE / name).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
            if node.module == "mnemo.v1":
                imported.update(alias.name for alias in node.names)
    assert "grpc" not in imported
    assert not {n for n in imported if n.endswith("_pb2_grpc")}
