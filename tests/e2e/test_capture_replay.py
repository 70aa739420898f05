"""Done-when for capture: a new user installs mnemo into Claude Code, a recorded session is
replayed through the installed hook commands, and mem_search finds what it produced."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mnemo.v1 import search_pb2
from tests.conftest import subprocess_env
from tests.fixtures.replay import PROJECT, make_workspace, payloads

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def installed_hooks(home: Path) -> dict[str, str]:
    """Event -> the hook command line the installer wrote into ~/.claude/settings.json."""
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    return {event: group["hooks"][0]["command"] for event, [group] in settings["hooks"].items()}


def run_installed(command: str, payload: dict, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    # Claude Code runs a hook's command line through a shell, in the session's directory.
    return subprocess.run(command, shell=True, input=json.dumps(payload), env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=90)


def test_install_then_replay_is_found_by_mem_search(stack, search_stub, tmp_path):
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = subprocess_env(stack, HOME=str(user_home))
    install = subprocess.run([sys.executable, "-m", "mnemo.cli", "install", "claude-code"], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=60)
    assert install.returncode == 0, install.stderr
    hooks = installed_hooks(user_home)
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"}

    repo, transcript = make_workspace(tmp_path)
    replies = []
    for event, payload in payloads(repo, transcript):
        assert shlex.split(hooks[event])[-2:] == ["hook", event]
        done = run_installed(hooks[event], payload, env, repo)
        assert done.returncode == 0, (event, done.stderr)
        replies.append((event, json.loads(done.stdout)))
    first_start = replies[0][1]
    assert first_start == {} or first_start["hookSpecificOutput"]["hookEventName"] == "SessionStart"

    found = search_stub.MemSearch(search_pb2.MemSearchRequest(query="discount rounding pricing tests", project=PROJECT))
    types = {row.type for row in found.rows}
    titles = " ".join(row.title for row in found.rows)
    assert found.total >= 3, found.text
    assert "session" in types, found.text  # the Stop summary
    assert types & {"bugfix", "change", "discovery"}, found.text
    assert "pricing" in titles.lower() or "pytest" in titles.lower()

    # The next session starts with that memory injected, wrapped so it never re-enters memory.
    start = run_installed(hooks["SessionStart"], {**payloads(repo, transcript)[0][1], "session_id": "next-session"},
                          env, repo)
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("<mnemo-context>") and context.endswith("</mnemo-context>")
    assert "pricing" in context.lower()
