"""When a later success is the fix of a failure (capture.fixes): the same command in the
same directory, with a change in between; checked on the recorded real sessions too."""

from __future__ import annotations

import pytest

from capture.drafts import FAILURE_EVENT, ToolEvent
from capture.fixes import MemoryFailures, failure_keys, is_change, track
from capture.hook_tools import _what
from capture.observer_shell import shell_verdict
from tests.fixtures.observer.deliveries import load_sessions, tool_event, true_fixes

pytestmark = pytest.mark.unit

FAIL = {"error": "Exit code 1\n1 failed, 2 passed in 0.1s", "is_interrupt": False}
PASS = {"stdout": "3 passed in 0.1s", "stderr": "", "interrupted": False}


def keys(command: str, cwd: str = "/srv") -> set[str]:
    return set(failure_keys(ToolEvent("Bash", {"command": command}, None, cwd)))


def bash(command: str, ok: bool, cwd: str = "/srv") -> ToolEvent:
    return ToolEvent("Bash", {"command": command}, PASS if ok else FAIL, cwd, "PostToolUse" if ok else FAILURE_EVENT)


def fixes(events: list[ToolEvent]) -> list[int]:
    store = MemoryFailures()
    return [i for i, e in enumerate(events)
            if track(store, e, shell_verdict(e) if e.tool_name == "Bash" else None, {"row": i}) is not None]


EDIT = ToolEvent("Edit", {"file_path": "/srv/app/calc.py", "old_string": "-", "new_string": "+"}, {}, "/srv")


def test_a_command_in_the_same_directory_is_not_the_fix_of_another():
    assert not keys("cd /srv/app && npm test") & keys("cd /srv/app && ls")
    assert not keys("cd '/srv/my app' && make") & keys("cd '/srv/my app' && git status")


def test_the_same_command_in_the_same_directory_shares_its_key_with_or_without_cd_and_pipes():
    assert keys("cd app && pytest -q") == keys("pytest -q 2>&1 | tail", "/srv/app") == keys("pytest -q", "/srv/app")


def test_monorepo_packages_and_other_test_selections_are_other_commands():
    assert not keys("cd packages/api && pytest -q") & keys("cd packages/core && pytest -q")
    assert not keys("pytest -q tests/test_add.py") & keys("pytest -q tests/test_sub.py")
    assert not keys("cargo test") & keys("cargo test parses_simple")
    assert not keys("pytest -q") & keys("pip install pytest")


def test_a_fix_needs_the_same_command_to_pass_after_a_change():
    assert fixes([bash("pytest -q", False), EDIT, bash("pytest -q", True)]) == [2]
    assert fixes([bash("pytest -q", False), bash("pytest -q", True)]) == []  # nothing changed: it only passed
    assert fixes([bash("pytest -q", False), EDIT, bash("pytest -q tests/test_sub.py", True)]) == []
    assert fixes([bash("pytest -q", False), bash("pip install pytest", True), bash("pytest -q", True)]) == [2]
    assert fixes([bash("cd packages/api && pytest -q", False), EDIT,
                  bash("cd packages/core && pytest -q", True)]) == []


def test_changes_are_edits_installs_checkouts_and_shell_writes_not_reads():
    assert is_change(EDIT) and is_change(bash("cd web && npm ci", True)) and is_change(bash("git checkout main", True))
    assert is_change(bash("sed -i 's/a/b/' x.py", True)) and is_change(bash("echo x > notes.txt", True))
    assert not is_change(bash("pytest -q 2>&1 | tail -5", True)) and not is_change(bash("ls > /dev/null", True))


def test_an_edit_is_keyed_by_its_file():
    assert failure_keys(ToolEvent("Edit", {"file_path": "/srv/app/a.py"}, None, "/srv")) == ["file:/srv/app/a.py"]


def test_the_fix_title_shows_the_command_as_titles_do():
    event = ToolEvent("Bash", {"command": "cd /srv/app && /srv/app/.venv/bin/pytest -q"}, None, "/srv")
    assert _what(event) == "`pytest -q`"


@pytest.mark.parametrize("session", load_sessions(), ids=lambda s: s["name"])
def test_real_sessions_get_exactly_their_true_fixes(session, tmp_path):
    events = [ToolEvent("Edit", {"file_path": s["file"], "old_string": s["old"], "new_string": s["new"]}, {}, "")
              if s["kind"] == "edit" else tool_event(s, "claude", tmp_path, i) for i, s in enumerate(session["steps"])]
    assert set(fixes(events)) == true_fixes(session["steps"])
