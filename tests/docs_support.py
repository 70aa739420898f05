"""Reading the shell examples out of the docs, so tests can check and run them as written.

A fenced block whose language is sh, bash, shell or console is an example a reader may
paste into a terminal. It runs in the docs test unless the line right before it is
`<!-- not-run: REASON -->`, which says why it cannot run there (foreground processes,
network, other programs); the unit tests count those markers, so none goes unnoticed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO_ROOT

SHELL_LANGUAGES = frozenset({"sh", "bash", "shell", "console"})
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(?P<reason>.*?)\s*-->$")
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a markdown file."""

    doc: str  # path relative to the repository root
    line: int  # 1-based line of the opening fence
    language: str  # first word of the info string, "" when there is none
    body: str
    not_run: str | None  # the reason given by a `not-run` marker, None when the block runs

    @property
    def is_shell(self) -> bool:
        return self.language in SHELL_LANGUAGES

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def doc_paths() -> list[Path]:
    """Every markdown file a user reads: the READMEs and docs/."""
    return [REPO_ROOT / "README.md", REPO_ROOT / "plugin" / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = _closing_fence(lines, index, opening["fence"])
        found.append(Block(doc=str(path.relative_to(REPO_ROOT)), line=index + 1,
                           language=(opening["info"].split() or [""])[0],
                           body="\n".join(lines[index + 1:end]), not_run=_marker_before(lines, index)))
        index = end + 1
    return found


def all_blocks() -> list[Block]:
    return [block for path in doc_paths() for block in blocks(path)]


def _closing_fence(lines: list[str], start: int, fence: str) -> int:
    for index in range(start + 1, len(lines)):
        stripped = lines[index].strip()
        if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
            return index
    raise AssertionError(f"unclosed code fence at line {start + 1}")


def _marker_before(lines: list[str], fence_index: int) -> str | None:
    for index in range(fence_index - 1, -1, -1):
        if lines[index].strip():
            marker = NOT_RUN.match(lines[index].strip())
            return marker["reason"] if marker else None
    return None


def commands(block: Block) -> list[str]:
    """The block's commands, one string each: lines continued by a backslash or inside an
    open quote belong to one command; comment-only lines are dropped; in a console block
    only `$ ` lines (and their continuations) are commands, the rest is output."""
    found: list[str] = []
    pending: list[str] = []
    for line in block.body.splitlines():
        if block.language == "console" and not pending:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        pending.append(line)
        text = "\n".join(pending)
        if text.endswith("\\") or not _complete(text):
            continue
        pending = []
        if shlex.split(text, comments=True):
            found.append(text.strip())
    assert not pending, f"{block.where}: unfinished command {pending!r}"
    return found


def _complete(text: str) -> bool:
    try:
        shlex.split(text, comments=True)
    except ValueError:  # an open quote: the command continues on the next line
        return False
    return True


def first_word(command: str) -> str:
    return shlex.split(command, comments=True)[0]


def programs(command: str) -> list[str]:
    """The program of each simple command in a pipeline or list: `a | b && c` -> [a, b, c]."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    found: list[str] = []
    expect_program = True
    for token in lexer:
        if token and set(token) <= set("|&;()"):
            expect_program = True
        elif expect_program:
            found.append(token)
            expect_program = False
    return found
