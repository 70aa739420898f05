"""The registration `mnemo up` prints works as printed: pasted into a shell in one folder,
the real `claude` CLI then finds and connects mnemo's server from any other folder, and
`mnemo doctor` counts that registration as this mnemo's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.fakes.claude_cli import claude_cli

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MNEMO = str(Path(sys.executable).parent / "mnemo")


@pytest.fixture
def user(tmp_path) -> Iterator[dict[str, str]]:
    """A user with a home of their own (Claude Code's config) and a mnemo home with a stack."""
    root = Path(tempfile.mkdtemp(prefix="mnemo-reg-"))  # short: Unix socket paths are limited
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update({"HOME": str(tmp_path), "MNEMO_HOME": str(root / "home"), "MNEMO_EMBEDDER": "hash",
                "PYTHONPATH": str(REPO_ROOT)})
    try:
        yield env
    finally:
        subprocess.run([MNEMO, "down"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def test_the_printed_claude_command_registers_mnemo_for_every_folder(user, tmp_path):
    claude = str(claude_cli())
    up = subprocess.run([MNEMO, "up"], env=user, capture_output=True, text=True, timeout=120)
    assert up.returncode == 0, up.stderr
    printed = [line.strip() for line in up.stdout.splitlines() if line.strip().startswith("claude mcp add")]
    assert len(printed) == 1 and " -s user " in printed[0]
    here, elsewhere = tmp_path / "project-a", tmp_path / "project-b"
    here.mkdir()
    elsewhere.mkdir()
    paste = subprocess.run(["bash", "-c", printed[0].replace("claude", f"'{claude}'", 1)], env=user, cwd=here,
                           capture_output=True, text=True, timeout=120)
    assert paste.returncode == 0, paste.stderr
    listed = subprocess.run([claude, "mcp", "list"], env=user, cwd=elsewhere, capture_output=True, text=True,
                            timeout=120)
    assert "mcp-search" in listed.stdout and "Connected" in listed.stdout, listed.stdout + listed.stderr
    doctor = subprocess.run([MNEMO, "doctor", "--json"], env=user, capture_output=True, text=True, timeout=120)
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["claude-code registration"]["status"] == "ok", checks["claude-code registration"]
