"""The deterministic observer: rules per tool turn one tool use into observations.

No LLM and no I/O: the same tool use always compiles to the same observations, so a
replayed hook is deduplicated by the store's content hash.

Read-only tools (Read, Grep, Glob, LS) are not compiled one by one: a burst of them
(consecutive read-only uses within one prompt) becomes ONE discovery observation listing
every file and search, built by `merge_reads` when the hook flushes the burst (at Stop
or SessionEnd). Every other tool compiles at once in `observe`.

Inputs arrive privacy-stripped (the hook cleans them first); every text produced here
goes through `mnemo.privacy.clean` again, so secrets in tool output are masked.
"""

from __future__ import annotations

import json
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
            title=_cap(clean(self.title), TITLE_MAX),
            subtitle=_cap(clean(self.subtitle), FACT_MAX),
            narrative=_cap(clean(self.narrative), NARRATIVE_MAX),
            facts=_unique(_cap(clean(f), FACT_MAX) for f in self.facts),
            concepts=_unique(self.concepts),
            files_read=_unique(self.files_read),
            files_modified=_unique(self.files_modified),
        )


@dataclass(frozen=True)
class ToolEvent:
    """One tool use as a hook reports it (inputs already privacy-stripped)."""

    tool_name: str
    tool_input: Any
    tool_response: Any
    cwd: str = ""


# --------------------------------------------------------------------------------------
# entry points


def is_read_only(tool_name: str) -> bool:
    return tool_name in READ_ONLY_TOOLS


def observe(event: ToolEvent) -> list[Draft]:
    """Observations for one non-read-only tool use (read-only tools: see merge_reads)."""
    name = event.tool_name
    inputs = event.tool_input if isinstance(event.tool_input, dict) else {"input": event.tool_input}
    if name in EDIT_TOOLS:
        drafts = [_edit(name, inputs, event.cwd)]
    elif name == "Bash":
        drafts = [_bash(inputs, event.tool_response)]
    elif name in ("WebFetch", "WebSearch"):
        drafts = [_web(name, inputs, event.tool_response)]
    elif name in ("Task", "Agent"):
        drafts = [_subagent(inputs, event.tool_response)]
    elif name in READ_ONLY_TOOLS:
        drafts = [merge_reads([event])]
    else:
        drafts = [_generic(name, inputs, event.tool_response)]
    return [d.cleaned() for d in drafts]


def merge_reads(events: Iterable[ToolEvent]) -> Draft:
    """One discovery observation for a burst of read-only tool uses."""
    files: list[str] = []
    facts: list[str] = []
    searches: list[str] = []
    for event in events:
        inputs = event.tool_input if isinstance(event.tool_input, dict) else {}
        if event.tool_name == "Read":
            path = _rel(inputs.get("file_path", ""), event.cwd)
            if path:
                files.append(path)
                facts.append(f"Read {path}{_line_range(inputs)}")
        elif event.tool_name == "Grep":
            pattern = str(inputs.get("pattern", ""))
            where = _rel(inputs.get("path", ""), event.cwd) or "the project"
            matched = _matched_files(event.tool_response, event.cwd)
            files.extend(matched)
            searches.append(f"`{pattern}`")
            facts.append(f"Searched for `{pattern}` in {where}{_glob_note(inputs)}: {_count(matched, 'file')} matched")
        elif event.tool_name == "Glob":
            pattern = str(inputs.get("pattern", ""))
            matched = _matched_files(event.tool_response, event.cwd)
            searches.append(f"`{pattern}`")
            facts.append(f"Listed files matching `{pattern}`: {_count(matched, 'file')}")
        elif event.tool_name == "LS":
            path = _rel(inputs.get("path", ""), event.cwd) or "."
            facts.append(f"Listed directory {path}")
    files = _unique(files)
    title = _reads_title(files, searches)
    narrative = "Looked at " + (", ".join(files[:20]) if files else "the project structure")
    if searches:
        narrative += "; searched for " + ", ".join(searches[:10])
    concepts = _concepts_for(files, " ".join(searches)) + ["how-it-works"]
    return Draft(
        type="discovery",
        title=title,
        subtitle=f"{_count(files, 'file')} read, {_count(searches, 'search', 'searches')}",
        narrative=narrative + ".",
        facts=facts,
        concepts=concepts,
        files_read=files,
    ).cleaned()


# --------------------------------------------------------------------------------------
# rules per tool


def _edit(name: str, inputs: dict, cwd: str) -> Draft:
    path = _rel(inputs.get("file_path") or inputs.get("notebook_path") or "", cwd) or "a file"
    facts: list[str] = []
    if name == "Write":
        content = str(inputs.get("content", ""))
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        title = f"Wrote {path}"
        subtitle = f"Wrote {lines} lines to {path}"
        facts.append(f"{path} now has {lines} lines")
        snippet = content
    elif name == "MultiEdit":
        edits = inputs.get("edits") if isinstance(inputs.get("edits"), list) else []
        title = f"Edited {path} ({len(edits)} edits)"
        subtitle = f"Applied {len(edits)} edits to {path}"
        facts.extend(_edit_fact(path, e) for e in edits if isinstance(e, dict))
        snippet = "\n".join(str(e.get("new_string", "")) for e in edits if isinstance(e, dict))
    elif name == "NotebookEdit":
        mode = str(inputs.get("edit_mode") or "replace")
        title = f"Edited notebook {path}"
        subtitle = f"Notebook cell {mode} in {path}"
        facts.append(f"{mode} of a cell in {path}")
        snippet = str(inputs.get("new_source", ""))
    else:
        title = f"Edited {path}"
        old, new = str(inputs.get("old_string", "")), str(inputs.get("new_string", ""))
        subtitle = f"Replaced {_line_count(old)} lines with {_line_count(new)} in {path}"
        facts.append(_edit_fact(path, inputs))
        if inputs.get("replace_all"):
            facts.append(f"Every occurrence was replaced in {path}")
        snippet = new
    narrative = f"{subtitle}."
    if snippet.strip():
        narrative += "\n" + _cap(snippet.strip(), SNIPPET_MAX)
    return Draft(
        type="change",
        title=title,
        subtitle=subtitle,
        narrative=narrative,
        facts=facts,
        concepts=_concepts_for([path], snippet[:2000]) + ["what-changed"],
        files_modified=[path] if path != "a file" else [],
    )


def _edit_fact(path: str, edit: dict) -> str:
    old = _first_line(str(edit.get("old_string", "")))
    new = _first_line(str(edit.get("new_string", "")))
    if old and new:
        return f"In {path}: `{old}` became `{new}`"
    if new:
        return f"In {path}: added `{new}`"
    return f"In {path}: removed `{old}`" if old else f"Edited {path}"


# Test runners and build tools recognised in shell commands (first matching wins).
_TEST_COMMANDS = re.compile(
    r"\b(pytest|py\.test|python3?\s+-m\s+(?:pytest|unittest)|tox|nox|npm\s+(?:run\s+)?test|yarn\s+test|"
    r"pnpm\s+(?:run\s+)?test|bun\s+test|jest|vitest|mocha|go\s+test|cargo\s+test|cargo\s+nextest|"
    r"mvn\s+test|gradlew?\s+test|rspec|phpunit|dotnet\s+test|ctest|make\s+(?:test|check))\b"
)
_BUILD_COMMANDS = re.compile(
    r"\b(make|cmake|cargo\s+build|go\s+build|npm\s+run\s+build|tsc|mvn|gradle|docker\s+build|pip\s+install|"
    r"npm\s+(?:install|ci)|uv\s+(?:sync|pip)|poetry\s+install)\b"
)
_VCS_COMMANDS = re.compile(r"^\s*(git|gh|hg)\s+(\w[\w-]*)")
_INSPECT_COMMANDS = re.compile(r"^\s*(ls|cat|head|tail|less|find|grep|rg|wc|tree|pwd|echo|which|file|stat|du|df)\b")
_ERROR_LINE = re.compile(
    r"^.*\b(Error|ERROR|Exception|FAILED|FAIL|failed|error:|Traceback|panic:|fatal:|AssertionError|"
    r"No such file|not found|command not found|Segmentation fault)\b.*$",
    re.MULTILINE,
)
_PYTEST_SUMMARY = re.compile(r"=+\s*(.*?\b(?:passed|failed|error|errors|skipped|no tests ran)\b.*?)\s*=+\s*$", re.M)
_GENERIC_COUNTS = re.compile(
    r"(Tests?:\s+.*\b(?:passed|failed|total)\b.*|test result: \w+\..*|^(?:ok|FAIL|PASS)\s+\S+.*$)", re.M
)


def _bash(inputs: dict, response: Any) -> Draft:
    command = str(inputs.get("command", "")).strip()
    description = str(inputs.get("description", "")).strip()
    outcome = shell_outcome(response)
    short = _first_line(command, 100)
    kind = command_kind(command)
    facts = [f"Ran `{_first_line(command, 200)}`"]
    if outcome.exit_code is not None:
        facts.append(f"Exit code {outcome.exit_code}")
    if outcome.counts:
        facts.append(outcome.counts)
    if outcome.error_line:
        facts.append(outcome.error_line)
    if outcome.interrupted:
        facts.append("The command was interrupted")
    vcs = _VCS_COMMANDS.match(command)
    if outcome.failed:
        kind_label = "Tests failed" if kind == "test" else "Command failed"
        title = f"{kind_label}: {short}"
        type_ = "bugfix"
        concepts = ["problem-solution", "gotcha"]
    elif kind == "test":
        title = f"Tests passed: {short}"
        type_ = "discovery"
        concepts = ["how-it-works"]
    elif vcs and vcs.group(2) in ("commit", "merge", "rebase", "push", "checkout", "switch", "revert", "cherry-pick"):
        title = f"{vcs.group(1)} {vcs.group(2)}: {short}"
        type_ = "change"
        concepts = ["what-changed"]
    elif kind == "inspect" or (vcs and vcs.group(2) in ("status", "log", "diff", "show", "blame", "branch")):
        title = f"Inspected: {short}"
        type_ = "discovery"
        concepts = ["how-it-works"]
    else:
        title = f"Ran: {short}"
        type_ = "change"
        concepts = ["what-changed"]
    subtitle = description or ("failed" if outcome.failed else "succeeded") + f": {short}"
    narrative = f"Ran `{_cap(command, 300)}`"
    if description:
        narrative += f" ({description})"
    narrative += ". " + ("It failed." if outcome.failed else "It succeeded.")
    if outcome.tail:
        narrative += "\nOutput (end):\n" + outcome.tail
    extra = {"test": ["testing"], "build": ["build"], "vcs": ["git"]}.get(kind, [])
    return Draft(
        type=type_,
        title=title,
        subtitle=subtitle,
        narrative=narrative,
        facts=facts,
        concepts=extra + _concepts_for(_paths_in(command), command) + concepts,
    )


@dataclass(frozen=True)
class ShellOutcome:
    """How a shell command ended, as far as its tool response tells."""

    failed: bool
    exit_code: int | None
    error_line: str
    counts: str
    tail: str
    interrupted: bool


def shell_outcome(response: Any) -> ShellOutcome:
    """Read the exit code, error text and test counts out of a Bash tool response.

    Claude Code answers with {stdout, stderr, interrupted, ...}; other hosts send
    {output, exit_code} or plain text such as "Exit code 1\\n...". Any of them work.
    """
    stdout, stderr, exit_code, interrupted = _shell_parts(response)
    text = "\n".join(part for part in (stdout, stderr) if part)
    counts = _test_counts(text)
    error = _ERROR_LINE.search(stderr) or _ERROR_LINE.search(stdout)
    failed_counts = bool(re.search(r"\b[1-9]\d* (?:failed|errors?)\b|\bFAILED\b|^FAIL\b", counts or "", re.M))
    failed = (exit_code not in (None, 0)) or interrupted or failed_counts
    if exit_code is None and not counts and not failed and stderr.strip() and error:
        failed = True
    tail = "\n".join(text.strip().splitlines()[-8:])
    return ShellOutcome(
        failed=failed,
        exit_code=exit_code,
        error_line=_cap(" ".join(error.group(0).split()), FACT_MAX) if (error and failed) else "",
        counts=counts,
        tail=_cap(tail, SNIPPET_MAX),
        interrupted=interrupted,
    )


def command_kind(command: str) -> str:
    """test | build | vcs | inspect | other."""
    if _TEST_COMMANDS.search(command):
        return "test"
    if _VCS_COMMANDS.match(command):
        return "vcs"
    if _BUILD_COMMANDS.search(command):
        return "build"
    if _INSPECT_COMMANDS.match(command):
        return "inspect"
    return "other"


def _shell_parts(response: Any) -> tuple[str, str, int | None, bool]:
    if isinstance(response, dict):
        stdout = str(response.get("stdout") or response.get("output") or "")
        stderr = str(response.get("stderr") or response.get("error") or "")
        code = next((response[k] for k in ("exit_code", "exitCode", "returncode", "code") if k in response), None)
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        return stdout, stderr, exit_code, bool(response.get("interrupted"))
    text = response if isinstance(response, str) else json.dumps(response) if response is not None else ""
    match = re.match(r"\s*(?:Error:\s*)?Exit code (\d+)", text)
    return text, "", (int(match.group(1)) if match else None), False


def _test_counts(text: str) -> str:
    summaries = _PYTEST_SUMMARY.findall(text) or _GENERIC_COUNTS.findall(text)
    return _cap(summaries[-1].strip(), FACT_MAX) if summaries else ""


def _web(name: str, inputs: dict, response: Any) -> Draft:
    if name == "WebFetch":
        url = str(inputs.get("url", ""))
        question = str(inputs.get("prompt", ""))
        facts = [f"Fetched {url}"] + ([f"Looked for: {question}"] if question else [])
        answer = _response_text(response)
        return Draft(
            type="discovery",
            title=f"Fetched {_cap(url, 100)}",
            subtitle=_cap(question, FACT_MAX) or f"Read {url}",
            narrative=f"Fetched {url}" + (f" to find out: {question}" if question else "") + "."
            + (f"\n{_cap(answer, SNIPPET_MAX)}" if answer else ""),
            facts=facts,
            concepts=["docs", "how-it-works"] + _keyword_concepts(question + " " + url),
        )
    query = str(inputs.get("query", ""))
    return Draft(
        type="discovery",
        title=f"Searched the web: {_cap(query, 100)}",
        subtitle=f"Web search for {query}",
        narrative=f"Searched the web for `{query}`." + _web_results(response),
        facts=[f"Web search: {query}"],
        concepts=["how-it-works"] + _keyword_concepts(query),
    )


def _web_results(response: Any) -> str:
    text = _response_text(response)
    return f"\n{_cap(text, SNIPPET_MAX)}" if text else ""


def _subagent(inputs: dict, response: Any) -> Draft:
    description = str(inputs.get("description", "")).strip() or "sub-agent task"
    prompt = str(inputs.get("prompt", "")).strip()
    agent = str(inputs.get("subagent_type", "")).strip()
    result = _response_text(response)
    decided = bool(re.search(r"\b(decide|decision|choose|chose|recommend|plan)\b", prompt + " " + description, re.I))
    facts = [f"Delegated to {agent or 'a sub-agent'}: {description}"]
    if result:
        facts.append("Result: " + _first_line(result, 200))
    return Draft(
        type="decision" if decided else "discovery",
        title=f"Sub-agent: {_cap(description, 100)}",
        subtitle=_first_line(prompt, 200) or description,
        narrative=f"Asked {agent or 'a sub-agent'} to {description}.\n{_cap(prompt, SNIPPET_MAX)}"
        + (f"\nIt answered: {_cap(result, SNIPPET_MAX)}" if result else ""),
        facts=facts,
        concepts=(["trade-off"] if decided else ["how-it-works"]) + _keyword_concepts(prompt + " " + description),
    )


def _generic(name: str, inputs: dict, response: Any) -> Draft:
    server, _, tool = name[len("mcp__"):].partition("__") if name.startswith("mcp__") else ("", "", name)
    label = f"{tool} ({server})" if server else tool or "a tool"
    facts = [f"{key} = {_scalar(value)}" for key, value in list(inputs.items())[:6] if _scalar(value)]
    result = _response_text(response)
    paths = [_rel(v, "") for k, v in inputs.items() if isinstance(v, str) and k.endswith(("path", "file"))]
    return Draft(
        type="discovery",
        title=f"Used {_cap(label, 100)}",
        subtitle=_cap("; ".join(facts), FACT_MAX) or f"Called {label}",
        narrative=f"Called {label}." + (f"\n{_cap(result, SNIPPET_MAX)}" if result else ""),
        facts=facts,
        concepts=(["mcp"] if server else []) + _concepts_for([p for p in paths if p], " ".join(facts)),
        files_read=[p for p in paths if p],
    )


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


def _concepts_for(paths: Iterable[str], text: str = "") -> list[str]:
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
    return _unique(concepts + _keyword_concepts(" ".join(paths) + " " + text))


def _keyword_concepts(text: str) -> list[str]:
    lowered = text.lower()
    return [concept for concept, pattern in _KEYWORDS.items() if re.search(pattern, lowered)]


# --------------------------------------------------------------------------------------
# small helpers


def _rel(path: Any, cwd: str) -> str:
    """A path relative to the working directory when it lies inside it."""
    text = str(path or "").strip()
    if not text:
        return ""
    if cwd and text.startswith(cwd.rstrip("/") + "/"):
        return text[len(cwd.rstrip("/")) + 1 :]
    return text


def _matched_files(response: Any, cwd: str) -> list[str]:
    names: Any = None
    if isinstance(response, dict):
        names = response.get("filenames") or response.get("files")
    elif isinstance(response, list):
        names = response
    if isinstance(names, list):
        return [_rel(n, cwd) for n in names if isinstance(n, str)][:50]
    if isinstance(response, str):
        return [_rel(line, cwd) for line in response.splitlines() if line.strip().startswith(("/", "./"))][:50]
    return []


def _reads_title(files: list[str], searches: list[str]) -> str:
    if len(files) == 1 and not searches:
        return f"Read {files[0]}"
    if files and not searches:
        return f"Read {len(files)} files: " + ", ".join(PurePosixPath(f).name for f in files[:4])
    if searches and not files:
        return "Searched for " + ", ".join(searches[:3])
    return f"Explored {', '.join(PurePosixPath(f).name for f in files[:3])} (searched {', '.join(searches[:2])})"


def _line_range(inputs: dict) -> str:
    offset, limit = inputs.get("offset"), inputs.get("limit")
    if isinstance(offset, int) and isinstance(limit, int):
        return f" (lines {offset}-{offset + limit})"
    return ""


def _glob_note(inputs: dict) -> str:
    glob = inputs.get("glob") or inputs.get("type")
    return f" ({glob})" if glob else ""


def _paths_in(command: str) -> list[str]:
    return re.findall(r"[\w./-]+\.[A-Za-z]{1,5}\b", command)[:10]


def _response_text(response: Any) -> str:
    """The readable text of a tool response, whatever its shape."""
    if response is None:
        return ""
    if isinstance(response, str):
        return response.strip()
    if isinstance(response, dict):
        for key in ("result", "output", "text", "content", "stdout"):
            if key in response:
                return _response_text(response[key])
        return ""
    if isinstance(response, list):
        parts = [_response_text(item.get("text", item) if isinstance(item, dict) else item) for item in response]
        return "\n".join(p for p in parts if p).strip()
    return str(response)


def _scalar(value: Any) -> str:
    if isinstance(value, (str, int, float, bool)) and str(value).strip():
        return _first_line(str(value), 120)
    return ""


def _count(items: list, singular: str, plural: str = "") -> str:
    n = len(items)
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def _line_count(text: str) -> int:
    return text.count("\n") + 1 if text else 0


def _first_line(text: str, limit: int = 80) -> str:
    stripped = text.strip()
    line = stripped.splitlines()[0] if stripped else ""
    return _cap(line.strip(), limit)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return list(seen)
