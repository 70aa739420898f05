"""Done-when for capture: a new user installs mnemo into Claude Code, a recorded session is
replayed through the installed hook commands (async, detached workers included), and
mem_search finds what it produced: the failing `pytest -q` reported through
PostToolUseFailure as a failure naming its test, the later fix, and no claim that the
failed run passed."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from bench.replay import PROJECT, install_for_a_new_user, make_workspace, payloads, wait_for_workers
from capture.install import ASYNC_EVENTS, DETACHED_EVENTS, HOOK_EVENTS
from mnemo.v1 import search_pb2
from tests.conftest import subprocess_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]



def installed_hooks(home: Path) -> dict[str, dict]:
    """Event -> the hook entry the installer wrote into ~/.claude/settings.json."""
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    return {event: group["hooks"][0] for event, [group] in settings["hooks"].items()}


def run_installed(command: str, payload: dict, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    # Claude Code runs a hook's command line through a shell, in the session's directory.
    return subprocess.run(command, shell=True, input=json.dumps(payload), env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=90)


def test_install_then_replay_is_found_by_mem_search(stack, search_stub, tmp_path):
    user_home, env = install_for_a_new_user(subprocess_env(stack), tmp_path)
    entries = installed_hooks(user_home)
    assert set(entries) == set(HOOK_EVENTS)
    assert {e for e, entry in entries.items() if entry.get("async")} == ASYNC_EVENTS >= {"PostToolUse",
                                                                                         "PostToolUseFailure"}
    hooks = {event: entry["command"] for event, entry in entries.items()}

    repo, transcript = make_workspace(tmp_path)
    replies = []
    for event, payload in payloads(repo, transcript):
        assert shlex.split(hooks[event])[-2:] == ["hook", event]
        assert ("MNEMO_HOOK_DETACH=1" in hooks[event]) is (event in DETACHED_EVENTS)
        done = run_installed(hooks[event], payload, env, repo)
        assert done.returncode == 0, (event, done.stderr)
        replies.append((event, json.loads(done.stdout)))
    wait_for_workers(stack.home)
    first_start = replies[0][1]
    assert first_start == {} or first_start["hookSpecificOutput"]["hookEventName"] == "SessionStart"

    found = search_stub.MemSearch(search_pb2.MemSearchRequest(query="discount rounding pricing tests", project=PROJECT))
    types = {row.type for row in found.rows}
    titles = " ".join(row.title for row in found.rows)
    assert found.total >= 3, found.text
    assert "session" in types, found.text  # the Stop summary
    assert types & {"bugfix", "change", "discovery"}, found.text
    assert "pricing" in titles.lower() or "pytest" in titles.lower()

    failures = search_stub.MemSearch(search_pb2.MemSearchRequest(query="tests failed test_discount_rounding",
                                                                 project=PROJECT))
    failure_titles = [row.title for row in failures.rows]
    assert any(t.startswith("Tests failed:") and t.endswith("test_discount_rounding") for t in failure_titles)
    fixes = search_stub.MemSearch(search_pb2.MemSearchRequest(query="Fixed succeeds", project=PROJECT))
    assert any(row.title.startswith("Fixed: `python -m pytest -q tests/test_pricing.py` succeeds")
               for row in fixes.rows), fixes.text
    passed = search_stub.MemSearch(search_pb2.MemSearchRequest(query="Tests passed pytest", project=PROJECT))
    assert all("(3 passed)" in row.title for row in passed.rows if row.title.startswith("Tests passed"))

    # The next session starts with that memory injected, wrapped so it never re-enters memory.
    start = run_installed(hooks["SessionStart"], {**payloads(repo, transcript)[0][1], "session_id": "next-session"},
                          env, repo)
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("<mnemo-context>") and context.endswith("</mnemo-context>")
    assert "pricing" in context.lower()
