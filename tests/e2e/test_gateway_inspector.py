"""The MCP Inspector's CLI mode lists the gateway's tools and lints their schemas.

Runs only where `npx`/npm exist and the Inspector is cached or installs into a cache dir
within about a minute; otherwise it skips and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.tools import TOOLS
from tests.service.gateway.mcp_support import REPO_ROOT, FaultySearch, start_fake_search

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
CACHE = Path(os.environ.get("MNEMO_TEST_NPM_CACHE", "~/.cache/mnemo-tests/inspector")).expanduser()
ALL_CAPS = ("search", "vector", "mem_search", "tool_uses", "write", "work_state", "context", "corpus")


def inspector_bin() -> Path:
    if not (shutil.which("npx") and shutil.which("npm")):
        pytest.skip("Node's npx/npm are not installed")
    binary = CACHE / "node_modules" / ".bin" / "mcp-inspector"
    if binary.exists():
        return binary
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["npm", "install", "--prefix", str(CACHE), INSPECTOR, "--no-fund", "--no-audit",
                        "--loglevel=error"], capture_output=True, timeout=60, check=True)
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError) as err:
        pytest.skip(f"could not install {INSPECTOR} within 60 s: {type(err).__name__}")
    if not binary.exists():
        pytest.skip(f"{INSPECTOR} installed without its mcp-inspector binary")
    return binary


def test_inspector_lists_every_tool_with_portable_schemas(settings):
    binary = inspector_bin()
    address = f"unix:{settings.run_dir / 'fake-search.sock'}"
    handle = start_fake_search(FaultySearch(capabilities=ALL_CAPS), address)
    env_flags = []
    for key, value in {"MNEMO_HOME": str(settings.home), "MNEMO_SEARCH_ADDR": address,
                       "MNEMO_STORE_ADDR": address, "MNEMO_VECTOR_ADDR": address,
                       "PYTHONPATH": str(REPO_ROOT)}.items():
        env_flags += ["-e", f"{key}={value}"]
    try:
        run = subprocess.run([str(binary), "--cli", *env_flags, sys.executable, "-m", "mnemo.cli", "mcp",
                              "--method", "tools/list", "--strict"],
                             capture_output=True, text=True, timeout=120, cwd=str(REPO_ROOT))
    finally:
        handle.stop(0)
    assert run.returncode == 0, run.stderr[-2000:]
    listed = json.loads(run.stdout)["tools"]
    assert [t["name"] for t in listed] == [t.name for t in TOOLS]
    assert "0 errors" in run.stderr  # only warnings (the string|integer id unions the spec asks for)
    mem_search = next(t for t in listed if t["name"] == "mem_search")
    assert mem_search["annotations"] == {"readOnlyHint": True}
    assert mem_search["inputSchema"]["additionalProperties"] is False
