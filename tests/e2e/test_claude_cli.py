"""The real host: `claude -p` (the pinned npm release) drives a scripted coding session
against a local fake Messages API, with mnemo installed by `mnemo install claude-code`
into a temporary HOME. This is what tells whether the hook payloads are what mnemo reads.

The session: a failing `pytest -q` (Claude Code reports it through PostToolUseFailure),
a Read (the file-context PreToolUse runs first), an Edit, a passing run, a mem_search
call through mnemo's MCP server, and a final claim. A second session checks that the
first one's memory reaches the model at SessionStart.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.replay import install_for_a_new_user
from tests.conftest import read_rows, subprocess_env, wait_for
from tests.fakes.claude_cli import claude_cli
from tests.fakes.messages_stream import ScriptedMessages, text, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
         "def test_zero():\n    assert add(0, 0) == 0\n")


@pytest.fixture
def host(stack, tmp_path):
    """A temporary HOME with mnemo installed the way a new user does, and a project."""
    binary = claude_cli()
    _, env = install_for_a_new_user(subprocess_env(stack), tmp_path)
    project = tmp_path / "calc"
    (project / "tests").mkdir(parents=True)
    (project / "calc.py").write_text(BUGGY)
    (project / "tests" / "test_calc.py").write_text(TESTS)
    (project / "conftest.py").write_text("")  # puts the project on sys.path for the tests
    return {"binary": binary, "env": env, "project": project, "db": stack.database}


def run_claude(host: dict, api: ScriptedMessages, prompt: str,
               permission_mode: str = "bypassPermissions") -> list[dict[str, Any]]:
    env = dict(host["env"], ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY="sk-test-not-a-key",
               IS_SANDBOX="1",  # as root, bypassPermissions needs it
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1")
    done = subprocess.run(
        [str(host["binary"]), "-p", prompt, "--output-format", "stream-json", "--verbose", "--include-hook-events",
         "--permission-mode", permission_mode, "--model", "claude-sonnet-4-5"],
        cwd=host["project"], env=env, capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def hook_replies(stream: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    replies: dict[str, list[dict[str, Any]]] = {}
    for event in stream:
        if event.get("type") == "system" and event.get("subtype") == "hook_response":
            replies.setdefault(event["hook_event"], []).append(event)
    return replies


def test_a_real_claude_session_records_the_failure_its_fix_and_the_truth(host):
    db, project = host["db"], host["project"]
    test_command = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"

    def tool_uses_recorded(step: int) -> None:
        # A real model takes seconds to answer; the fake waits for the previous tool's hook instead.
        if 0 < step <= 4:  # the fifth call is mnemo's own mem_search, which is never recorded
            wait_for(lambda: len(read_rows(db, "SELECT id FROM tool_uses")) >= step, 60.0, f"tool use {step}")

    turns = [
        [text("Let me run the tests."), tool_use("Bash", {"command": test_command, "description": "Run the tests"})],
        [tool_use("Read", {"file_path": str(project / "calc.py")})],
        [tool_use("Edit", {"file_path": str(project / "calc.py"), "old_string": "    return a - b",
                           "new_string": "    return a + b"})],
        [tool_use("Bash", {"command": test_command, "description": "Run the tests again"})],
        [tool_use("mcp__mcp-search__mem_search", {"query": "add test failed"})],
        [text("Fixed add in calc.py; all tests pass now.")],
    ]
    with ScriptedMessages(turns, before_turn=tool_uses_recorded) as api:
        stream = run_claude(host, api, "The add test fails; fix it.")
        results = api.tool_results()

    replies = hook_replies(stream)
    assert {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"} <= set(
        replies), sorted(replies)
    assert all(r["exit_code"] == 0 for r in replies["SessionStart"] + replies["UserPromptSubmit"])
    assert json.loads(replies["SessionStart"][0]["stdout"]) == {}  # a new project: nothing to inject
    assert results[0]["content"].startswith("Exit code 1") and "1 failed, 1 passed" in results[0]["content"]
    assert "2 passed" in results[3]["content"]
    # The memory tool answered from what the hooks had just stored.
    assert "test_add" in json.dumps(results[4]["content"]) and not results[4].get("is_error")

    summary = wait_for(lambda: read_rows(db, "SELECT * FROM session_summaries"), 60.0, "the Stop summary")[0]
    observations = read_rows(db, "SELECT * FROM observations ORDER BY id")
    by_title = {o["title"]: o for o in observations}
    [failure] = [o for o in observations if o["title"].startswith("Tests failed:")]
    assert failure["type"] == "bugfix" and failure["title"].endswith(": test_add")
    assert "Failing test: tests/test_calc.py::test_add" in json.loads(failure["facts"])
    assert any(f.startswith("First error:") and "assert" in f for f in json.loads(failure["facts"]))
    [fix] = [o for o in observations if o["title"].startswith("Fixed:")]
    assert fix["id"] > failure["id"] and f"Failure observation #{failure['id']}" in json.loads(fix["facts"])
    # Nothing claims the failed run passed: only the second run is "Tests passed".
    failed_row = read_rows(db, "SELECT id FROM tool_uses WHERE tool_response LIKE '%Exit code 1%'")[0]["id"]
    linked = read_rows(db, f"SELECT o.title, o.facts FROM observations o JOIN observation_tool_uses l "
                      f"ON l.observation_id = o.id WHERE l.tool_use_id = {int(failed_row)}")
    assert linked and all("Outcome: succeeded" not in o["facts"] and "passed:" not in o["title"].lower()
                          for o in linked if not o["title"].startswith("Fixed:"))
    assert [t for t in by_title if t.startswith("Tests passed:")] and "Edited calc.py" in by_title
    # Text as the host sent it: the edit keeps its indentation.
    [edit] = read_rows(db, "SELECT tool_input FROM tool_uses WHERE tool_name = 'Edit'")
    assert json.loads(edit["tool_input"])["new_string"] == "    return a + b"
    # The summary tells what tools showed apart from what the model claimed.
    assert "failed at first and passed after the changes" in summary["learned"]
    assert "The assistant said (unverified): Fixed add in calc.py" in summary["learned"]

    # The next session starts with that memory in the model's context.
    with ScriptedMessages([[text("Nothing to do.")]]) as api:
        second = run_claude(host, api, "What did we do last time?")
        sent = json.dumps([r for r in api.requests if r.get("tools")])
    [start] = hook_replies(second)["SessionStart"]
    context = json.loads(start["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("<mnemo-context>") and "test_add" in context
    assert "mnemo-context" in sent and "test_add" in sent


def test_the_plugin_connects_its_mcp_server_without_mnemo_on_path(stack, tmp_path):
    binary = claude_cli()
    plugin = Path(__file__).resolve().parents[2] / "plugin"
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "MNEMO_HOME": str(stack.home), "IS_SANDBOX": "1",
           "ANTHROPIC_API_KEY": "sk-test-not-a-key", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    done = subprocess.run([str(binary), "--plugin-dir", str(plugin), "mcp", "list"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "plugin:mnemo:mcp-search" in done.stdout and "Connected" in done.stdout, done.stdout
