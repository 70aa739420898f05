"""What a later success must share with a failure to be taken for its fix (capture.hook_tools)."""

from __future__ import annotations

import pytest

from capture.drafts import ToolEvent
from capture.hook_tools import _what, failure_keys

pytestmark = pytest.mark.unit


def keys(command: str) -> set[str]:
    return set(failure_keys(ToolEvent("Bash", {"command": command}, None, "/srv")))


def test_a_command_in_the_same_directory_is_not_the_fix_of_another():
    assert not keys("cd /srv/app && npm test") & keys("cd /srv/app && ls")
    assert not keys("cd '/srv/my app' && make") & keys("cd '/srv/my app' && git status")


def test_the_same_command_with_or_without_the_directory_is_its_fix():
    assert keys("cd /srv/app && pytest -q") == keys("pytest -q 2>&1 | tail") == {"cmd:pytest -q", "runner:pytest"}


def test_an_edit_is_keyed_by_its_file():
    assert failure_keys(ToolEvent("Edit", {"file_path": "/srv/app/a.py"}, None, "/srv")) == ["file:/srv/app/a.py"]


def test_the_fix_title_shows_the_command_as_titles_do():
    event = ToolEvent("Bash", {"command": "cd /srv/app && /srv/app/.venv/bin/pytest -q"}, None, "/srv")
    assert _what(event) == "`pytest -q`"
