"""The hook events added for capture fidelity, as real `mnemo hook` subprocesses against a
real stack: the file-context PreToolUse, SubagentStop, PreCompact, an empty project's
SessionStart, and detached workers that keep the host's order."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from bench.replay import run_hook, wait_for_workers
from tests.conftest import processes_of, subprocess_env

pytestmark = pytest.mark.service

FAILED_RUN = ("F.\nE       assert -1 == 5\nFAILED tests/test_calc.py::test_add - assert -1 == 5\n"
              "1 failed, 1 passed in 0.05s")


def observations(db: Path) -> list[sqlite3.Row]:
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM observations ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "calc"
    (root / ".git").mkdir(parents=True)
    return root


def base(project: Path, session: str = "s-1") -> dict:
    return {"session_id": session, "cwd": str(project), "transcript_path": ""}


def test_a_read_gets_what_is_known_about_its_file_and_nothing_else(stack, project):
    env = subprocess_env(stack)
    edit = {**base(project), "tool_name": "Edit", "tool_use_id": "t1",
            "tool_input": {"file_path": f"{project}/calc.py", "old_string": "a - b", "new_string": "a + b"},
            "tool_response": {"filePath": f"{project}/calc.py"}}
    assert run_hook("UserPromptSubmit", {**base(project), "prompt": "fix add"}, env).returncode == 0
    assert run_hook("PostToolUse", edit, env).returncode == 0
    read = {**base(project, "s-2"), "tool_name": "Read", "tool_use_id": "t2",
            "tool_input": {"file_path": f"{project}/calc.py"}}
    reply = run_hook("PreToolUse", read, env).reply()
    context = reply["hookSpecificOutput"]["additionalContext"]
    assert reply["hookSpecificOutput"]["hookEventName"] == "PreToolUse" and "permissionDecision" not in json.dumps(
        reply)
    assert context.startswith("<mnemo-context>") and "Edited calc.py" in context and "calc.py" in context
    assert len(context) < 1400
    other = {**read, "tool_input": {"file_path": f"{project}/README.md"}}
    assert run_hook("PreToolUse", other, env).reply() == {}
    assert run_hook("PreToolUse", {**read, "tool_name": "Bash", "tool_input": {"command": "ls"}}, env).reply() == {}


def test_the_file_context_hook_never_waits_for_a_stack(settings, project):
    env = subprocess_env(settings)  # nothing listens in this home, and this hook must not start anything
    run = run_hook("PreToolUse", {**base(project), "tool_name": "Read",
                                  "tool_input": {"file_path": f"{project}/calc.py"}}, env)
    assert (run.returncode, run.reply()) == (0, {})
    # It has nothing to wait for: it started no service, so no socket and no process of this home.
    assert not (settings.home / "run" / "store.sock").exists()
    assert not list(processes_of(settings.home))


def test_a_new_project_starts_with_no_context(stack, project):
    reply = run_hook("SessionStart", {**base(project), "source": "startup"}, subprocess_env(stack)).reply()
    assert reply == {}


def test_subagent_reports_and_pre_compact_are_recorded(stack, project):
    env = subprocess_env(stack)
    assert run_hook("UserPromptSubmit", {**base(project), "prompt": "find the callers of add"}, env).returncode == 0
    subagent = {**base(project), "hook_event_name": "SubagentStop", "stop_hook_active": False, "agent_id": "a1",
                "agent_type": "Explore", "agent_transcript_path": "",
                "last_assistant_message": "add is called from cart.py and invoice.py.\nNo other callers."}
    assert run_hook("SubagentStop", subagent, env).reply() == {}
    assert run_hook("SubagentStop", subagent, env).reply() == {}  # a repeat stores nothing twice
    [report] = observations(stack.database)
    assert report["title"] == "Sub-agent Explore reported: add is called from cart.py and invoice.py."
    assert "not checked by a tool" in report["narrative"]
    compact = {**base(project), "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": None}
    assert run_hook("PreCompact", compact, env).reply() == {}
    conn = sqlite3.connect(f"{stack.database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        [(request,)] = conn.execute("SELECT request FROM session_summaries").fetchall()
    finally:
        conn.close()
    assert request == "find the callers of add"


def test_detached_workers_keep_the_order_the_host_fired_them_in(stack, project):
    env = subprocess_env(stack, MNEMO_HOOK_DETACH="1")
    command = {"command": "pytest -q tests"}
    assert run_hook("UserPromptSubmit", {**base(project), "prompt": "fix add"}, subprocess_env(stack)).returncode == 0
    failure = {**base(project), "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "f1",
               "tool_input": command, "error": f"Exit code 1\n{FAILED_RUN}", "is_interrupt": False,
               "duration_ms": 900}
    success = {**base(project), "tool_name": "Bash", "tool_use_id": "p1", "tool_input": command,
               "tool_response": {"stdout": "..\n2 passed in 0.04s", "stderr": "", "interrupted": False}}
    # The edit between them is what makes the passing run a fix (capture.fixes).
    edit = {**base(project), "tool_name": "Edit", "tool_use_id": "e1", "tool_response": {},
            "tool_input": {"file_path": f"{project}/calc.py", "old_string": "a - b", "new_string": "a + b"}}
    runs = [run_hook("PostToolUseFailure", failure, env), run_hook("PostToolUse", edit, env),
            run_hook("PostToolUse", success, env),
            run_hook("Stop", {**base(project), "last_assistant_message": "Fixed."}, env)]
    assert [(r.returncode, r.stdout) for r in runs] == [(0, "{}")] * 4
    wait_for_workers(stack.home)
    titles = [o["title"] for o in observations(stack.database)]
    assert titles[0] == "Tests failed: pytest -q tests: test_add"
    assert "Fixed: `pytest -q tests` succeeds now" in titles
    fixed = titles.index("Fixed: `pytest -q tests` succeeds now")
    assert fixed > titles.index("Tests passed: pytest -q tests (2 passed)")
