"""The real `claude` CLI for end-to-end tests: installed from npm once into a cache
folder, reused between runs.

The version is pinned, since hook payloads and flags change between releases. Where npm
is missing the tests skip, except in CI (`CI` set), where npm is expected and a missing
CLI is a failure.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

CLAUDE_CODE_VERSION = "2.1.197"
PACKAGE = f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"


def cache_dir() -> Path:
    base = os.environ.get("MNEMO_TEST_CACHE") or os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mnemo-tests" / f"claude-code-{CLAUDE_CODE_VERSION}"


def claude_cli() -> Path:
    """The path of the pinned `claude` binary, installing it on first use."""
    prefix = cache_dir()
    binary = prefix / "node_modules" / ".bin" / "claude"
    if _works(binary):
        return binary
    npm = shutil.which("npm")
    if npm is None:
        if os.environ.get("CI"):
            pytest.fail("npm is missing in CI: the real-host test must run there")
        pytest.skip("npm is not installed: the real claude CLI cannot be installed")
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:  # parallel test workers install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _works(binary):
            done = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", PACKAGE],
                                  capture_output=True, text=True, timeout=600)
            if done.returncode != 0 or not _works(binary):
                pytest.fail(f"npm install {PACKAGE} failed:\n{done.stderr[-2000:]}")
    return binary


def _works(binary: Path) -> bool:
    if not binary.exists():
        return False
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    return done.returncode == 0 and done.stdout.startswith(CLAUDE_CODE_VERSION)
