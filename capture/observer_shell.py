"""Observer rules for shell commands: what a Bash tool use ran and how it ended.

Tests, builds and version control are recognised by the command; the outcome (passed,
failed, exit code, the first error line) by its output. capture.summary reads the same
outcome when it sums up a session.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from capture.drafts import FACT_MAX, SNIPPET_MAX, Draft, cap, concepts_for, first_line, paths_in

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


def bash_draft(inputs: dict, response: Any) -> Draft:
    command = str(inputs.get("command", "")).strip()
    description = str(inputs.get("description", "")).strip()
    outcome = shell_outcome(response)
    short = first_line(command, 100)
    kind = command_kind(command)
    facts = [f"Ran `{first_line(command, 200)}`"]
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
    narrative = f"Ran `{cap(command, 300)}`"
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
        concepts=extra + concepts_for(paths_in(command), command) + concepts,
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
        error_line=cap(" ".join(error.group(0).split()), FACT_MAX) if (error and failed) else "",
        counts=counts,
        tail=cap(tail, SNIPPET_MAX),
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
    return cap(summaries[-1].strip(), FACT_MAX) if summaries else ""


