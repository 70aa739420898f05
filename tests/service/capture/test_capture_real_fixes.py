"""`mnemo hook` against a real store_svc, fed the recorded real runs as Claude Code sends
them: a "Fixed" record only for the same command in the same directory after a change, and
mnemo's own MCP calls stored nowhere."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.replay import run_hook
from tests.conftest import read_rows, subprocess_env
from tests.fixtures.observer.deliveries import claude_payload, load_sessions

pytestmark = pytest.mark.service


def fixed_titles(db) -> list[str]:
    return [r["title"] for r in read_rows(db, "SELECT title FROM observations WHERE title LIKE 'Fixed:%'")]


def hook(env: dict[str, str], event: str, payload: dict[str, Any]) -> None:
    done = run_hook(event, payload, env)
    assert done.returncode == 0 and done.stdout == "{}", done.stderr


def replay_session(env: dict[str, str], name: str, session_id: str) -> None:
    [session] = [s for s in load_sessions() if s["name"] == name]
    hook(env, "UserPromptSubmit", {"session_id": session_id, "cwd": session["cwd"], "prompt": f"work on {name}"})
    for n, step in enumerate(session["steps"]):
        if step["kind"] == "edit":
            payload = {"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": f"toolu_edit_{n}",
                       "tool_input": {"file_path": step["file"], "old_string": step["old"], "new_string": step["new"]},
                       "tool_response": {"filePath": step["file"]}}
        else:
            payload = claude_payload(step, None, n)
        hook(env, payload["hook_event_name"], {**payload, "session_id": session_id, "cwd": session["cwd"]})


def test_fixed_only_for_the_same_command_in_the_same_directory_after_an_edit(settings, store_server):
    env = subprocess_env(settings)
    replay_session(env, "monorepo", "real-monorepo")
    fixes = fixed_titles(settings.database)
    # api fails, core passes (not its fix), api fails behind a pipe, the edit, api passes: one fix.
    assert fixes == ["Fixed: `python -m pytest -q -p no:cacheprovider` in packages/api succeeds now"]
    titles = [r["title"] for r in read_rows(settings.database, "SELECT title FROM observations WHERE type = 'bugfix'")]
    assert "Tests failed: python -m pytest -q -p no:cacheprovider in packages/api: test_route" in titles
    [fix] = read_rows(settings.database, "SELECT id FROM observations WHERE title LIKE 'Fixed:%'")
    linked = read_rows(settings.database, f"SELECT t.tool_input FROM observation_tool_uses l JOIN tool_uses t "
                                     f"ON t.id = l.tool_use_id WHERE l.observation_id = {int(fix['id'])}")
    assert {json.loads(r["tool_input"])["command"] for r in linked} == {
        "cd packages/api && python -m pytest -q -p no:cacheprovider 2>&1 | tail -5",
        "cd packages/api && python -m pytest -q -p no:cacheprovider"}


def test_no_fix_without_a_change_and_none_from_another_command(settings, store_server):
    env = subprocess_env(settings)
    replay_session(env, "git", "real-git")  # failures and passes of many commands, edits to notes.txt only
    replay_session(env, "py-scripts", "real-scripts")
    titles = fixed_titles(settings.database)
    # py-scripts: `python app.py` crashed, app.py was edited, it ran: the one true fix of the two sessions.
    assert titles == ["Fixed: `python app.py` succeeds now"]


def test_mnemo_own_mcp_calls_are_stored_nowhere(settings, store_server, tmp_path):
    env = subprocess_env(settings, HOME=str(tmp_path))
    base = {"session_id": "real-own", "cwd": str(tmp_path)}
    hook(env, "UserPromptSubmit", {**base, "prompt": "what did we do?"})
    for n, tool in enumerate(("mcp__mcp-search__mem_search", "mcp__plugin_mnemo_mcp-search__get_observations",
                              "mcp__github__search_issues")):
        hook(env, "PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": tool,
                                  "tool_use_id": f"toolu_own_{n}", "tool_input": {"query": "add test failed"},
                                  "tool_response": [{"type": "text", "text": "Retrieved memory evidence; #12 ..."}]})
    assert [r["tool_name"] for r in read_rows(settings.database, "SELECT tool_name FROM tool_uses")] == [
        "mcp__github__search_issues"]
    assert not read_rows(settings.database, "SELECT id FROM observations WHERE title LIKE '%mem_search%' "
                                       "OR title LIKE '%get_observations%'")
