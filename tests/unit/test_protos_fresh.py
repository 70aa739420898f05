"""The committed generated code matches protos/ byte for byte (`make proto` regenerates it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def test_generated_code_is_fresh(tmp_path: Path):
    protos = sorted((REPO_ROOT / "protos" / "mnemo" / "v1").glob("*.proto"))
    assert protos, "no protos found"
    done = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-Iprotos", f"--python_out={tmp_path}",
         f"--pyi_out={tmp_path}", f"--grpc_python_out={tmp_path}", *[str(p.relative_to(REPO_ROOT)) for p in protos]],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    fresh = {p.name: p.read_bytes() for p in (tmp_path / "mnemo" / "v1").iterdir() if p.is_file()}
    committed = {p.name: p.read_bytes() for p in (REPO_ROOT / "mnemo" / "v1").iterdir()
                 if p.is_file() and "_pb2" in p.name}
    assert sorted(fresh) == sorted(committed), "generated file set differs: run `make proto`"
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"stale generated code (run `make proto`): {stale}"
