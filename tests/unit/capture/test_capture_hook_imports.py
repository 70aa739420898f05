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


def modules_loaded_by_a_hook(home, event: str, payload: dict, watched: tuple[str, ...], detach: bool = False) -> str:
    """Run one hook in a fresh interpreter; its stdout: the reply, then which of `watched`
    modules it had loaded."""
    code = ("import sys, io, json, types, os; "
            + ("os.environ['MNEMO_HOOK_DETACH'] = '1'; " if detach else "")
            + "from mnemo.config import load_settings; from capture import hooks; "
            f"sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(payload).encode()!r})); "
            f"hooks.run(load_settings({{'home': {str(home)!r}}}, environ={{}}), "
            f"types.SimpleNamespace(event={event!r}, platform='claude')); "
            f"print('', sorted(m for m in {watched!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_skipped_tool_never_loads_grpc(tmp_path):
    payload = {"session_id": "s", "tool_name": "TodoWrite", "cwd": "/tmp"}
    assert modules_loaded_by_a_hook(tmp_path, "PostToolUse", payload, ("grpc",)) == "{} []\n"


def test_a_detached_hook_hands_off_before_loading_protobuf(tmp_path):
    # The host waits for this part only (Stop, and async hooks it may cancel): the worker
    # does the rest in its own session, with stdout on /dev/null. (mnemo.privacy, ~2 ms,
    # cleans the identifiers first: the journal is keyed by the cleaned session id.)
    watched = ("google.protobuf", "grpc", "structlog")
    payload = {"session_id": "s", "cwd": "/tmp"}
    assert modules_loaded_by_a_hook(tmp_path, "Stop", payload, watched, detach=True) == "{} []\n"
