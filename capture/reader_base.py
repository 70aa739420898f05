"""What every reader returns, and the first line of an output that reads as an error.

Shared by capture.readers (test runners, crashes) and capture.readers_tools (compilers,
linters, package managers, make, git, docker).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUCCEEDED, FAILED, UNKNOWN = "succeeded", "failed", "unknown"
MAX_NAMES = 10


@dataclass(frozen=True)
class Signal:
    """What one tool's output says: its outcome, summary line and failing test names."""

    outcome: str
    tool: str
    counts: str = ""
    failing: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------
# first error line

_ERROR_LINE = re.compile(
    r"^\s*(?:E\s{2,}.+|[\w.]*(?:Error|Exception)\b:.*|error(?:\[\w+\])?:.*|.*\berror\s+(?:TS|CS)\d+:.*|"
    r".*:\d+(?::\d+)?:? error:.*|npm (?:ERR!|error) .+|ERROR: .+|fatal: .+|panic: .+|CONFLICT .+|"
    r"\s*! \[rejected\].*|make: \*\*\* .+|.*command not found.*|.*No such file or directory.*|"
    r"\[ERROR\] (?!Tests run:|Failures:|Errors:|-> \[Help).+|.*AssertionError.*|.*assert .+|FAIL: .+|"
    r"\s*●.+|.*Expected.+(?:Received|to equal).*|.*undefined reference to .+|"
    r"(?:Error: )?unknown (?:shorthand )?flag.+)$",
    re.MULTILINE,
)
NOISE = re.compile(r"^\s*(?:npm (?:ERR!|error) (?:code|errno|A complete log|$)|ERROR: \s*$)")


_ASSERTION_DETAIL = re.compile(r"^E\s{2,}\S.*$", re.MULTILINE)  # pytest's explanation lines


def first_error_line(text: str) -> str:
    """The first line that reads as an error, whitespace-collapsed, at most 200 characters
    (pytest's own "E   ..." explanation first, when there is one)."""
    for match in (*_ASSERTION_DETAIL.finditer(text), *_ERROR_LINE.finditer(text)):
        line = " ".join(match.group(0).split())
        if line and not NOISE.match(line):
            return line if len(line) <= 200 else line[:199] + "…"
    return ""


# --------------------------------------------------------------------------------------
# one reader per ecosystem (most specific first)


def names(pattern: re.Pattern[str], text: str, group: int = 1) -> tuple[str, ...]:
    found = dict.fromkeys(m.group(group).strip() for m in pattern.finditer(text))
    return tuple(n for n in found if n)[:MAX_NAMES]


def count_of(pattern: str, text: str) -> int:
    """The largest count `pattern` (one integer group) matches in text; 0 when absent."""
    return max((int(m) for m in re.findall(pattern, text)), default=0)
