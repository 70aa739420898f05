"""A failure, then its fix: when a later success may be called the fix of a failure.

Only the same thing succeeding counts: the same command in the same directory (`cd
packages/api && pytest` is not `cd packages/core && pytest`; `pytest tests/test_sub.py`
is not `pytest`), or the same file for file tools. And for a command, only with a change
in between: an edit or write the hooks saw, an install, a checkout. A command that
passes again with nothing changed was flaky or fixed elsewhere: it "passed", no more.

Pure over a small store (capture.journal.Journal in the hooks, MemoryFailures in the
benchmark), so bench/observer.py scores exactly what the hooks do.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from capture.commands import directory_and_command, masked_quotes
from capture.drafts import EDIT_TOOLS

if TYPE_CHECKING:
    from capture.drafts import ToolEvent
    from capture.outcome import Verdict

CHANGES = "changes"
# What follows the command itself: a pipe into a filter, stderr merged, output redirected.
_PIPE_OR_REDIRECT = re.compile(r"\s+(?:\|(?!\|)|2>&1|[12]?>>?)\s*.*$", re.DOTALL)
# Shell commands that change what a later run sees.
_CHANGE_COMMANDS = re.compile(
    r"^(?:(?:python3?\s+-m\s+)?pip3?\s+install|uv\s+(?:pip\s+install|sync|add)|poetry\s+(?:install|add)|"
    r"(?:npm|pnpm|yarn|bun)\s+(?:install|i|ci|add)|cargo\s+(?:add|update)|go\s+(?:get|mod\s+tidy)|"
    r"(?:sudo\s+)?apt(?:-get)?\s+install|git\s+(?:checkout|switch|merge|rebase|pull|stash|reset|restore|"
    r"apply|am|cherry-pick|revert)|sed\s+-i|perl\s+-p?i|patch)\b"
)
_WRITES_A_FILE = re.compile(r"(?<![\d&])>>?\s*(?!&|/dev/null)\S")


class FailureStore(Protocol):
    def remember_failure(self, key: str, failure: dict[str, Any]) -> None: ...
    def take_failure(self, key: str) -> dict[str, Any] | None: ...
    def note_change(self) -> None: ...
    def change_count(self) -> int: ...


class MemoryFailures:
    """A FailureStore in memory (the benchmark, unit tests)."""

    def __init__(self) -> None:
        self.failures: dict[str, dict[str, Any]] = {}
        self.changes = 0

    def remember_failure(self, key: str, failure: dict[str, Any]) -> None:
        self.failures[key] = failure

    def take_failure(self, key: str) -> dict[str, Any] | None:
        return self.failures.pop(key, None)

    def note_change(self) -> None:
        self.changes += 1

    def change_count(self) -> int:
        return self.changes


def track(store: FailureStore, event: ToolEvent, verdict: Verdict | None, record: dict[str, Any]) -> dict | None:
    """Remember a failure (`record`, e.g. its row ids), note a change, or return the failure
    this success fixes (None: it fixes nothing). `verdict` is the shell verdict of a Bash use."""
    keys = failure_keys(event)
    if verdict is not None and verdict.note:
        return None  # grep without a match, diff finding differences: neither a failure nor a fix
    if event.failed_call or (verdict is not None and verdict.failed):
        if verdict is not None and verdict.interrupted:
            return None
        for key in keys:
            store.remember_failure(key, {**record, CHANGES: store.change_count()})
        return None
    if verdict is not None and not verdict.succeeded:
        return None  # an unknown outcome fixes nothing
    if is_change(event):
        store.note_change()
    earlier = next((f for f in (store.take_failure(k) for k in keys) if f), None)
    if earlier is None:
        return None
    if event.tool_name == "Bash" and int(earlier.get(CHANGES, 0)) >= store.change_count():
        return None  # it passed again with nothing changed in between: not a fix
    return earlier


def failure_keys(event: ToolEvent) -> list[str]:
    """What a later success must share with a failure: the directory and the command
    (without a leading `cd DIR &&`, pipes and redirections), or the file."""
    inputs = event.tool_input if isinstance(event.tool_input, dict) else {}
    if event.tool_name == "Bash":
        directory, command = directory_and_command(event.cwd, str(inputs.get("command", "")))
        cut = _PIPE_OR_REDIRECT.search(masked_quotes(command))  # not at a `|` inside quotes
        head = " ".join((command[:cut.start()] if cut else command).split())
        return [f"cmd:{directory}\0{head}"] if head else []
    path = inputs.get("file_path") or inputs.get("notebook_path")
    return [f"file:{path}"] if isinstance(path, str) and path else []


def is_change(event: ToolEvent) -> bool:
    """A successful use that changes what a later run sees: an edit, an install, a checkout,
    a shell command writing a file."""
    if event.tool_name in EDIT_TOOLS:
        return True
    if event.tool_name != "Bash" or not isinstance(event.tool_input, dict):
        return False
    _, command = directory_and_command(event.cwd, str(event.tool_input.get("command", "")))
    bare = masked_quotes(command)  # `jq '.a | length > 1'` writes no file
    parts = re.split(r"\s*(?:&&|;|\|\|)\s*", bare)
    return any(_CHANGE_COMMANDS.match(p) for p in parts) or bool(_WRITES_A_FILE.search(bare))
