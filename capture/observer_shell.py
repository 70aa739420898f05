"""Observer rules for shell commands: what a Bash tool use ran and how it really ended.

Tests, builds and version control are recognised by the command; the outcome
(succeeded / failed / unknown), the failing test names and the first error line by
capture.outcome, from the event kind first and the output second. capture.summary reads
the same verdict when it sums up a session.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from capture.commands import PROGRAM_PATH, VCS_COMMANDS, command_kind, test_runner, without_leading_cd
from capture.drafts import FACT_MAX, SNIPPET_MAX, Draft, ToolEvent, cap, concepts_for, first_line, paths_in
from capture.outcome import FAILED, SUCCEEDED, UNKNOWN, Verdict, judge, strip_ansi
from capture.persisted import PERSISTED_PATH, PERSISTED_TAIL, host_cut

_VCS_CHANGES = ("commit", "merge", "rebase", "push", "checkout", "switch", "revert", "cherry-pick")
_VCS_READS = ("status", "log", "diff", "show", "blame", "branch")


def bash_draft(event: ToolEvent) -> Draft:
    inputs = event.tool_input if isinstance(event.tool_input, dict) else {"command": str(event.tool_input or "")}
    command = str(inputs.get("command", ""))
    description = str(inputs.get("description", "")).strip()
    verdict = shell_verdict(event)
    short = command_label(command) + where_it_ran(command)
    kind = command_kind(command)
    type_, title, concepts = _classify(command, kind, verdict, short)
    subtitle = description or f"{verdict.outcome}: {short}"
    narrative = f"Ran `{cap(command.strip(), 300)}`" + (f" ({description})" if description else "") + ". "
    narrative += _outcome_sentence(verdict)
    tail = _tail(event)
    cut = host_cut(_error_text(event.tool_response))
    if tail:
        narrative += ("\nOutput (the end of what the host kept):\n" if cut else "\nOutput (end):\n") + tail
    extra = {"test": ["testing"], "build": ["build"], "vcs": ["git"]}.get(kind, [])
    return Draft(
        type=type_,
        title=title,
        subtitle=subtitle,
        narrative=narrative,
        facts=_facts(command, verdict) + ([cut] if cut else []),
        concepts=extra + concepts_for(paths_in(command), command) + concepts,
    )


def command_label(command: str, limit: int = 100) -> str:
    """The command's first line as titles and summaries show it: without a leading `cd DIR &&`,
    and a program run by its path named by its file name (facts and narratives keep it whole)."""
    shown = _OUTPUT_FILTER.sub("", without_leading_cd(command))
    return first_line(PROGRAM_PATH.sub("", shown, count=1), limit)


def where_it_ran(command: str) -> str:
    """" in packages/api" for a command run from a subfolder named relatively (`cd packages/api
    && pytest`): in a monorepo, the same command in two packages is two things."""
    cd = re.match(r"""^\s*cd\s+("[^"]*"|'[^']*'|[^\s;&|/~$][^\s;&|]*)\s*&&""", command)
    folder = cd.group(1).strip("\"'") if cd else ""
    return f" in {folder}" if folder not in (".", "") and not folder.startswith(("/", "~", "$")) else ""


# What only trims a command's output for the reader (`2>&1 | tail -5`): not shown in titles.
_OUTPUT_FILTER = re.compile(r"(?:\s+2>&1)?\s*\|\s*(?:tail|head|tee|cat|less|more)\b[^|]*$|\s+2>&1$")


def _classify(command: str, kind: str, verdict: Verdict, short: str) -> tuple[str, str, list[str]]:
    """(type, title, concepts) of a run: failures are bugfix candidates; nothing is called
    passed unless the verdict says it succeeded."""
    vcs = VCS_COMMANDS.match(command)
    if verdict.note:  # a benign non-zero exit: what it found, not a problem to solve
        label = "Inspected" if kind == "inspect" else "Ran"
        return "discovery", f"{label}: {short} ({verdict.note})", ["how-it-works"]
    if verdict.failed:
        label = "Tests failed" if kind == "test" else "Command failed"
        names = ", ".join(_short_name(n) for n in verdict.failing[:3])
        # A test run: its failing tests, else its counts; anything else: why it failed.
        detail = (names or verdict.counts or verdict.error_line) if kind == "test" else (verdict.error_line or names)
        if not detail and verdict.exit_code:
            # nothing in the output says why; the code is a fact, and `timeout`'s 124 says it ran out of time
            timed_out = verdict.exit_code == 124 and re.match(r"(?:\S+/)?timeout\s", without_leading_cd(command))
            detail = f"timed out (exit code {verdict.exit_code})" if timed_out else f"exit code {verdict.exit_code}"
        return "bugfix", f"{label}: {short}" + (f": {detail}" if detail else ""), ["problem-solution", "gotcha"]
    if kind == "test":
        if verdict.succeeded:
            return "discovery", f"Tests passed: {short}" + (f" ({verdict.counts})" if verdict.counts else ""), [
                "how-it-works"]
        return "discovery", f"Ran tests: {short}{_unsaid(verdict)}", ["how-it-works"]
    if not verdict.succeeded and kind != "inspect":
        # Nothing known of how it ended (a pipe hid the status, the user stopped it): the title
        # claims neither a change (`git push: ...`) nor a result.
        return "change", f"Ran: {short}{_unsaid(verdict)}", ["what-changed"]
    if vcs and vcs.group(2) in _VCS_CHANGES:
        return "change", f"{vcs.group(1)} {vcs.group(2)}: {short}", ["what-changed"]
    if kind == "inspect" or (vcs and vcs.group(2) in _VCS_READS):
        # what it showed is the point; a host that sent no exit code (Codex's hook) leaves its end unsaid
        return "discovery", f"Inspected: {short}{_unsaid(verdict)}", ["how-it-works"]
    said = f" ({verdict.counts})" if verdict.succeeded and verdict.counts else ""  # "Success: no issues found..."
    return "change", f"Ran: {short}{said}", ["what-changed"]


def _unsaid(verdict: Verdict) -> str:
    """What a title says of a run whose outcome is not known."""
    if verdict.succeeded:
        return ""
    return " (interrupted)" if verdict.interrupted else " (outcome unknown)"


def _facts(command: str, verdict: Verdict) -> list[str]:
    facts = [f"Ran `{first_line(command, 200)}`", f"Outcome: {verdict.outcome}"]
    if verdict.exit_code is not None:
        facts.append(f"Exit code {verdict.exit_code}")
    if verdict.counts:
        facts.append(verdict.counts)
    facts.extend(f"Failing test: {name}" for name in verdict.failing)
    if verdict.error_line:
        facts.append(f"First error: {verdict.error_line}")
    if verdict.interrupted:
        facts.append("The command was interrupted")
    return facts


def _outcome_sentence(verdict: Verdict) -> str:
    if verdict.interrupted:
        return "It was interrupted before it finished."
    if verdict.note:
        return f"It exited non-zero: {verdict.note}."
    if verdict.failed:
        return "It failed" + (f" ({verdict.counts})" if verdict.counts else "") + "."
    if verdict.succeeded:
        return "It succeeded" + (f" ({verdict.counts})" if verdict.counts else "") + "."
    return "Its output does not say whether it succeeded."


def _short_name(name: str) -> str:
    """tests/test_calc.py::test_add -> test_add (titles are short; facts keep the full id)."""
    return name.rsplit("::", 1)[-1] if "::" in name else name


def shell_verdict(event: ToolEvent) -> Verdict:
    """The verdict on a shell tool use, whatever shape the host reported it in."""
    text, exit_code, interrupted = _shell_parts(event.tool_response)
    if event.failed_call:
        host_says = FAILED
    elif event.platform == "claude" and isinstance(event.tool_response, dict) and "stdout" in event.tool_response:
        host_says = SUCCEEDED  # Claude Code fires PostToolUse only when the command exited 0 (or benignly)
    else:
        host_says = UNKNOWN
    inputs = event.tool_input if isinstance(event.tool_input, dict) else {}
    verdict = judge(text, host_says, exit_code, interrupted, str(inputs.get("command", "")))
    benign = event.tool_response.get(BENIGN_EXIT) if isinstance(event.tool_response, dict) else None
    if isinstance(benign, str) and benign and not interrupted:
        # Claude Code's PostToolUse for grep without a match, `test` false, diff: a non-zero exit.
        return replace(verdict, outcome=FAILED, failing=(), error_line=benign, note=benign)
    return verdict


BENIGN_EXIT = "returnCodeInterpretation"


def _shell_parts(response: Any) -> tuple[str, int | None, bool]:
    """(output text, exit code if the host sent one, interrupted?) of any host's shape:
    Claude Code's {stdout, stderr, interrupted}, {output, exit_code}, its failure text
    "Exit code N\\n<output>", or plain text."""
    if isinstance(response, dict):
        if "error" in response and "stdout" not in response:  # a stored PostToolUseFailure
            text, code, _ = _shell_parts(str(response.get("error") or ""))
            return text, code, bool(response.get("is_interrupt"))
        parts = (response.get("stdout") or response.get("output"), response.get("stderr"),
                 _persisted_tail(response))
        text = "\n".join(str(p) for p in parts if p)
        code = next((response[k] for k in ("exit_code", "exitCode", "returncode", "code") if k in response), None)
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        return text, exit_code, bool(response.get("interrupted"))
    text = response if isinstance(response, str) else json.dumps(response) if response is not None else ""
    match = _EXIT_CODE_TEXT.match(text) or _UNIFIED_EXEC_TEXT.match(text)
    if not match:
        return _CODEX_CUT.sub("", text, count=1), None, False
    said = match.group(1)
    return _CODEX_CUT.sub("", text[match.end():], count=1), int(said) if said else None, False


# Claude Code's failure text "Exit code N\n<output>", and Codex's exec output
# "Exit code: N\nWall time: S seconds\n[Total output lines: L\n]Output:\n<output>".
_EXIT_CODE_TEXT = re.compile(r"\s*(?:Error:\s*)?Exit code:? (\d+)\r?\n?(?:Wall time: [^\n]*\n"
                             r"(?:Total output lines: \d+\n)?Output:\r?\n?)?")
# Codex 0.171's exec_command output, as recorded with the real CLI (codex_payloads.json): "Chunk
# ID: X\nWall time: S seconds\nProcess exited with code N\nOriginal token count: T\nOutput:\n...";
# a command still running says "Process running with session ID N" and no code.
_UNIFIED_EXEC_TEXT = re.compile(r"\s*(?:Chunk ID: \w+\n)?Wall time: [^\n]*\n(?:Process exited with code (\d+)\n|"
                                r"Process running with session ID \d+\n)?(?:Original token count: \d+\n)?"
                                r"Output:\r?\n?")
# What Codex puts before an output it cut to its first and last 5,000 characters (around "…N
# chars truncated…"); its PostToolUse hook sends the output so, without the lines above.
_CODEX_CUT = re.compile(r"^Warning: truncated output \(original token count: \d+\)\nTotal output lines: \d+\n\n")


def _persisted_tail(response: dict) -> str:
    """The end of the whole output Claude Code persisted (capture.persisted), after a marker
    line, so the readers see the summary line the 30,000-character head lost."""
    tail = response.get(PERSISTED_TAIL)
    return f"[... the output's end, from {response.get(PERSISTED_PATH, 'the saved output')}:]\n{tail}" if isinstance(
        tail, str) and tail else ""


def _error_text(response: Any) -> str:
    """A failure's text as the host sent it ("Exit code N\\n<output>")."""
    if isinstance(response, dict):
        return str(response.get("error") or "") if "stdout" not in response else ""
    return response if isinstance(response, str) else ""


def _tail(event: ToolEvent) -> str:
    text, _, _ = _shell_parts(event.tool_response)
    lines = strip_ansi(text).rstrip().splitlines()[-8:]
    return cap("\n".join(lines), SNIPPET_MAX)


__all__ = ["FACT_MAX", "bash_draft", "command_kind", "shell_verdict", "test_runner"]
