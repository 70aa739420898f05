"""Hooks start a fresh interpreter per event: what they import is a latency budget."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from capture import hooks, observer

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[3]
HEAVY = ("grpc", "structlog", "chromadb", "mcp", "jsonschema", "anthropic", "capture.observer", "numpy")


def test_read_only_tool_list_is_shared():
    assert hooks.READ_ONLY_TOOLS == observer.READ_ONLY_TOOLS


def test_loading_the_hook_module_imports_nothing_heavy():
    code = ("import sys, json, mnemo.cli, mnemo.config, capture.hooks, capture.client; "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_a_skipped_tool_never_loads_grpc(tmp_path):
    code = ("import sys, io, json, types; from mnemo.config import load_settings; "
            "from capture import hooks; "
            "sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps({'session_id': 's', 'tool_name': 'TodoWrite', "
            "'cwd': '/tmp'}).encode())); "
            f"hooks.run(load_settings({{'home': {str(tmp_path)!r}}}, environ={{}}), "
            "types.SimpleNamespace(event='PostToolUse', platform='claude')); "
            "print('', 'grpc' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.stdout == "{} False\n", done.stderr
