"""What every observer rule shares: the tool event in, the draft observation out, and the
text helpers (caps, relative paths, concepts) that keep drafts short and comparable.

Split from capture.observer so that the rules per tool family (capture.observer for
files, web and sub-agents; capture.observer_shell for shell commands) read one
vocabulary of helpers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from mnemo.privacy import clean

READ_ONLY_TOOLS = frozenset({"Read", "Grep", "Glob", "LS"})
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})

TITLE_MAX = 120
FACT_MAX = 240
NARRATIVE_MAX = 1200
SNIPPET_MAX = 400


@dataclass
class Draft:
    """An observation before it is stored (the fields of mnemo.v1.Observation we fill)."""

    type: str
    title: str
    subtitle: str = ""
    narrative: str = ""
    facts: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    files_modified: list[str] = field(default_factory=list)

    def cleaned(self) -> Draft:
        """Every text privacy-cleaned and capped; lists deduplicated in order."""
        return Draft(
            type=self.type,
            title=cap(clean(self.title), TITLE_MAX),
            subtitle=cap(clean(self.subtitle), FACT_MAX),
            narrative=cap(clean(self.narrative), NARRATIVE_MAX),
            facts=unique(cap(clean(f), FACT_MAX) for f in self.facts),
            concepts=unique(self.concepts),
            files_read=unique(self.files_read),
            files_modified=unique(self.files_modified),
        )


FAILURE_EVENT = "PostToolUseFailure"


@dataclass(frozen=True)
class ToolEvent:
    """One tool use as a hook reports it (inputs already privacy-stripped).

    `event` is the host's event kind: Claude Code fires PostToolUseFailure, with the error
    text as `tool_response`, for a call that failed, and PostToolUse for one that did not.
    `platform` tells how far a PostToolUse of a shell command vouches for its success.
    """

    tool_name: str
    tool_input: Any
    tool_response: Any
    cwd: str = ""
    event: str = "PostToolUse"
    platform: str = "claude"

    @property
    def failed_call(self) -> bool:
        return self.event == FAILURE_EVENT


# --------------------------------------------------------------------------------------
# concepts

_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "typescript", ".js": "javascript",
    ".jsx": "javascript", ".mjs": "javascript", ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin",
    ".rb": "ruby", ".php": "php", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp",
    ".cs": "csharp", ".swift": "swift", ".sh": "shell", ".bash": "shell", ".sql": "sql", ".proto": "protobuf",
    ".css": "css", ".html": "html", ".vue": "vue", ".scala": "scala", ".lua": "lua", ".ex": "elixir",
}
_CONFIG_SUFFIXES = {".toml", ".yaml", ".yml", ".ini", ".cfg", ".conf", ".env", ".json", ".lock"}
_CONFIG_NAMES = {"makefile", "dockerfile", "pyproject.toml", "package.json", "tsconfig.json", "cargo.toml",
                 "go.mod", "setup.py", "setup.cfg", ".gitignore", "docker-compose.yml", "justfile"}
_BUILD_NAMES = {"makefile", "dockerfile", "cmakelists.txt", "build.gradle", "pom.xml", "justfile"}
_DOC_SUFFIXES = {".md", ".rst", ".txt", ".adoc"}
_KEYWORDS = {
    "api": r"\bapi\b|endpoint|route|handler|grpc|rest\b",
    "auth": r"\bauth|login|token|session|password|oauth",
    "database": r"\bsql|sqlite|postgres|database|\bdb\b|migration|schema",
    "security": r"security|secret|vulnerab|\bcve\b|sanitiz|escape",
    "performance": r"perf|latency|benchmark|\bslow\b|cache",
    "ci": r"\.github/workflows|\bci\b|pipeline",
    "search": r"search|index|fts5?\b|query",
    "ui": r"\bui\b|component|\bcss\b|frontend|button",
}


def concepts_for(paths: Iterable[str], text: str = "") -> list[str]:
    concepts: list[str] = []
    for path in paths:
        pure = PurePosixPath(path.replace("\\", "/"))
        name = pure.name.lower()
        suffix = pure.suffix.lower()
        parts = [p.lower() for p in pure.parts]
        if suffix in _LANGUAGES:
            concepts.append(_LANGUAGES[suffix])
        if "test" in name or "spec" in name or any(p in ("tests", "test", "__tests__", "spec") for p in parts):
            concepts.append("testing")
        if suffix in _CONFIG_SUFFIXES or name in _CONFIG_NAMES:
            concepts.append("config")
        if name in _BUILD_NAMES:
            concepts.append("build")
        if suffix in _DOC_SUFFIXES or "docs" in parts or name.startswith("readme"):
            concepts.append("docs")
    return unique(concepts + keyword_concepts(" ".join(paths) + " " + text))


def keyword_concepts(text: str) -> list[str]:
    lowered = text.lower()
    return [concept for concept, pattern in _KEYWORDS.items() if re.search(pattern, lowered)]


# --------------------------------------------------------------------------------------
# small helpers


def relative_path(path: Any, cwd: str) -> str:
    """A path relative to the working directory when it lies inside it."""
    text = str(path or "").strip()
    if not text:
        return ""
    if cwd and text.startswith(cwd.rstrip("/") + "/"):
        return text[len(cwd.rstrip("/")) + 1 :]
    return text

def paths_in(command: str) -> list[str]:
    return re.findall(r"[\w./-]+\.[A-Za-z]{1,5}\b", command)[:10]


def response_text(response: Any) -> str:
    """The readable text of a tool response, whatever its shape."""
    if response is None:
        return ""
    if isinstance(response, str):
        return response.strip()
    if isinstance(response, dict):
        for key in ("result", "output", "text", "content", "stdout"):
            if key in response:
                return response_text(response[key])
        return ""
    if isinstance(response, list):
        parts = [response_text(item.get("text", item) if isinstance(item, dict) else item) for item in response]
        return "\n".join(p for p in parts if p).strip()
    return str(response)


def scalar_text(value: Any) -> str:
    if isinstance(value, (str, int, float, bool)) and str(value).strip():
        return first_line(str(value), 120)
    return ""


def counted(items: list, singular: str, plural: str = "") -> str:
    n = len(items)
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def line_count(text: str) -> int:
    return text.count("\n") + 1 if text else 0


def first_line(text: str, limit: int = 80) -> str:
    """The first non-blank line, trimmed (a title or fact, never stored code)."""
    stripped = text.strip()
    line = stripped.splitlines()[0] if stripped else ""
    return cap(line.strip(), limit)


def cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def unique(items: Iterable[str]) -> list[str]:
    """The non-empty items, each once, in first-seen order."""
    return list(dict.fromkeys(i for i in items if i))

