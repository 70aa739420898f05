"""The deterministic Stop summary, the transcript reader and the project name."""

from __future__ import annotations

import json
import os

import pytest

from capture.drafts import FAILURE_EVENT
from capture.observer import ToolEvent
from capture.project import project_name
from capture.summary import ObservationView, is_empty, summarize
from capture.transcript import last_assistant_message

pytestmark = pytest.mark.unit

# As Claude Code sends them: a failure is PostToolUseFailure with "Exit code N" and the output.
FAIL = {"error": "Exit code 1\nE   AssertionError: assert 1 == 2\n===== 1 failed, 2 passed in 0.1s =====",
        "is_interrupt": False}
PASS = {"stdout": "===== 3 passed in 0.1s =====", "stderr": ""}
EDIT = ToolEvent("Edit", {"file_path": "/r/src/a.py", "old_string": "1", "new_string": "2"}, {}, "/r")


def failed(command: str, cwd: str = "/r") -> ToolEvent:
    return ToolEvent("Bash", {"command": command}, FAIL, cwd, FAILURE_EVENT)


def passed(command: str, cwd: str = "/r") -> ToolEvent:
    return ToolEvent("Bash", {"command": command}, PASS, cwd)


def events():
    return [ToolEvent("Read", {"file_path": "/r/src/a.py"}, {}, "/r"), failed("pytest -q"), EDIT, passed("pytest -q")]


OBSERVATIONS = [
    ObservationView("discovery", "Read a.py", ["Read src/a.py", "Searched for `apply` in src: 1 file matched"],
                    ["src/a.py"], []),
    ObservationView("bugfix", "Tests failed: pytest -q", ["Ran `pytest -q`"], [], []),
    ObservationView("change", "Edited src/a.py", [], [], ["src/a.py"]),
]


def test_summary_fields_come_from_prompts_uses_observations_and_the_last_message():
    s = summarize(["Fix the failing test"], events(), OBSERVATIONS,
                  "Fixed it: the constant was wrong. Next step: add a regression test.")
    assert s.request == "Fix the failing test"
    assert s.investigated == "Read src/a.py; Searched for `apply` in src: 1 file matched."
    assert "`pytest -q` failed: 1 failed, 2 passed; E AssertionError: assert 1 == 2" in s.learned
    assert "`pytest -q` failed at first and passed after the changes" in s.learned
    assert "The assistant said (unverified): Fixed it: the constant was wrong." in s.learned
    assert s.completed == "Modified src/a.py; Tests pass: `pytest -q` (3 passed)."
    assert s.next_steps == "Next step: add a regression test."
    assert s.notes == "4 tool uses (2 Bash, 1 Edit, 1 Read); 3 observations."
    assert (s.files_read, s.files_edited) == (["src/a.py"], ["src/a.py"])
    assert summarize(["Fix the failing test"], events(), OBSERVATIONS,
                     "Fixed it: the constant was wrong. Next step: add a regression test.") == s


def test_a_test_still_failing_at_the_end_becomes_a_next_step():
    s = summarize(["make it pass"], events()[:2], OBSERVATIONS[:2])
    assert s.next_steps == "Fix the failing `pytest -q` (1 failed, 2 passed; E AssertionError: assert 1 == 2)"
    assert "Tests pass" not in s.completed


def test_a_model_claiming_a_fix_is_not_taken_for_a_passing_run():
    failing_twice = [events()[1], events()[2], events()[1]]
    s = summarize(["make it pass"], failing_twice, OBSERVATIONS, "Fixed the rounding; all tests pass now.")
    assert "passed after the changes" not in s.learned and "Tests pass" not in s.completed
    assert "The assistant said (unverified): Fixed the rounding; all tests pass now." in s.learned
    assert s.next_steps.startswith("Fix the failing `pytest -q`")


def test_a_program_run_by_its_path_is_named_by_its_file_name():
    run = "/home/dev/r/.venv/bin/python -m pytest -q"
    used = [failed(run), EDIT, passed(run)]
    s = summarize(["make it pass"], used, OBSERVATIONS)
    assert "`python -m pytest -q` failed at first and passed after the changes" in s.learned
    assert s.completed.endswith("Tests pass: `python -m pytest -q` (3 passed).")


def test_summary_text_is_privacy_cleaned():
    s = summarize(["deploy with <private>sk-ant-api03-secretsecretsecret</private> please"], [], [],
                  "Used token=abcdefghijklmnop to deploy.")
    assert "secretsecret" not in s.request and "abcdefghijklmnop" not in s.learned
    assert is_empty(summarize([], [], []))


def test_last_assistant_message_reads_the_tail_of_a_jsonl_transcript(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "first"}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Done."}, {"type": "tool_use", "name": "Read", "input": {}}]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n", encoding="utf-8")
    assert last_assistant_message(str(path)) == "Done."
    assert last_assistant_message(str(tmp_path / "missing.jsonl")) == ""
    assert last_assistant_message("") == ""
    big = tmp_path / "big.jsonl"
    big.write_text(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "x" * 5000}}) + "\n"
                   + json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "tail"}}) + "\n")
    assert last_assistant_message(str(big), tail_bytes=100) == "tail"


def test_project_is_the_git_root_name_else_the_cwd_name(tmp_path):
    repo = tmp_path / "acme-shop"
    (repo / ".git").mkdir(parents=True)
    nested = repo / "src" / "shop"
    nested.mkdir(parents=True)
    assert project_name(str(nested)) == "acme-shop"
    worktree = tmp_path / "wt-feature"
    (worktree / "pkg").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt-feature\n")
    assert project_name(str(worktree / "pkg")) == "wt-feature"
    plain = tmp_path / "scratch"
    plain.mkdir()
    assert project_name(str(plain)) in ("scratch", *[p.name for p in plain.parents if (p / ".git").exists()])
    assert project_name(str(nested), override="  billing ") == "billing"
    assert project_name(None) == "default"
    assert project_name(str(tmp_path / "does-not-exist")) == "does-not-exist"
    assert len(project_name(str(nested), override="é" * 300).encode()) <= 256
    assert os.sep not in project_name(str(nested))


@pytest.mark.parametrize("count", [3, 9, 14, 28])
def test_every_still_failing_command_is_a_next_step_whatever_the_count(count):  # up to ~30 of 120 characters
    commands = [f"cd packages/pkg{n:02d} && python -m pytest -q tests/test_{'long_name_' * 3}{n}.py"
                for n in range(count)]
    steps = summarize([], [*map(failed, commands), passed("pytest -q")], []).next_steps
    assert all(f"pkg{n:02d}" in steps for n in range(count)), steps
    assert "pytest -q`" not in steps.replace("python -m pytest -q", "")  # the passing one is no next step
    assert steps.count("AssertionError") <= 7 and len(steps) <= 4000
