"""How a tool run ended, told truthfully: succeeded, failed, or unknown.

The host's word comes first: Claude Code fires PostToolUseFailure for a non-zero exit
(with the error text) and PostToolUse for a zero one; other hosts send an exit code,
in a field or as text ("Exit code N", Codex's "Exit code: N"). A zero exit vouches for the
command only when nothing hides the command's own status: a pipe (`pytest | tail -5`
exits with tail's status), `;`, `||` or `&`. Then, and when no exit is known, the output
tells: each ecosystem's summaries (capture.readers), crashes (Python, Node, Rust, Java),
a last line that complains. A command that reads a file (`cat`, `tail`, `grep` of a
log) shows that file's text, so a traceback in it is data, not its failure. When nothing
tells, the outcome is "unknown" and nothing is claimed about success.

Pure functions over text: no I/O, so the observer benchmark (bench/observer.py) can score
them on recorded real runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from capture.commands import (
    command_kind,
    exit_hidden,
    masked_quotes,
    programs,
    reader_failed,
    reads_a_file,
    test_runner,
    vcs_read,
)
from capture.readers import FAILED, MAX_NAMES, NOISE, SUCCEEDED, UNKNOWN, Signal, first_error_line, read_output

__all__ = ["FAILED", "MAX_NAMES", "SUCCEEDED", "UNKNOWN", "Signal", "Verdict", "first_error_line", "judge",
           "read_output", "strip_ansi"]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one run, with the evidence a title and facts can quote."""

    outcome: str
    tool: str = ""
    counts: str = ""
    failing: tuple[str, ...] = ()
    error_line: str = ""
    exit_code: int | None = None
    interrupted: bool = False
    evidence: list[str] = field(default_factory=list)
    note: str = ""
    """The host's reading of a benign non-zero exit ("No matches found", "Files differ"):
    the command did exit non-zero, but nothing is broken."""

    @property
    def failed(self) -> bool:
        return self.outcome == FAILED

    @property
    def succeeded(self) -> bool:
        return self.outcome == SUCCEEDED


def judge(text: str, host_says: str, exit_code: int | None = None, interrupted: bool = False,
          command: str = "") -> Verdict:
    """The verdict on a run of `command` whose combined output is `text`.

    `host_says` is the event kind's word (FAILED for PostToolUseFailure, SUCCEEDED for a
    Claude Code PostToolUse, UNKNOWN for a host that reports no outcome); an explicit
    non-zero `exit_code` is a failure whatever the output says.
    """
    text = strip_ansi(text)
    signal = read_output(text, command) or _runner_remains(text, command)
    zero = host_says == SUCCEEDED or exit_code == 0
    if interrupted:
        outcome = UNKNOWN  # stopped by the user: neither the code nor the command failed
    elif exit_code == 1 and _JQ_CHECK.match(masked_quotes(command.strip())) and text.strip().rsplit("\n", 1)[-1] in (
            "false", "null"):
        # `jq -e` exits 1 when its filter gives false or null: a condition checked, like `test`
        return Verdict(FAILED, error_line=FILTER_FALSE, exit_code=exit_code, note=FILTER_FALSE)
    elif host_says == FAILED or exit_code not in (None, 0):
        outcome = FAILED
    elif zero and not exit_hidden(command):
        outcome = SUCCEEDED
    elif _grep_found_nothing(text, command):
        # grep exits 1 when it selects no line: Claude Code's own reading of it, unpiped
        return Verdict(FAILED, error_line=NO_MATCH, exit_code=exit_code, note=NO_MATCH)
    elif reads_a_file(command):
        outcome = FAILED if reader_failed(command, text) else SUCCEEDED if zero else UNKNOWN
    else:
        outcome = _from_output(text, signal, zero, command)
    failed = outcome == FAILED
    return Verdict(
        outcome=outcome,
        tool=signal.tool if signal else "",
        counts=signal.counts if signal else "",
        failing=signal.failing if signal and failed else (),
        error_line=why_it_failed(text, signal) if failed else "",
        exit_code=exit_code,
        interrupted=interrupted,
    )


NO_MATCH = "No matches found"
FILTER_FALSE = "The filter gave false or null"
_JQ_CHECK = re.compile(r"^jq\s+(?:-\w*e\w*|--exit-status)\b[^|;&]*$")
_GREP = re.compile(r"^(?:e?grep|rg|git\s+grep|which)\s")  # each exits 1 when it finds nothing


def _grep_found_nothing(text: str, command: str) -> bool:
    """A grep (or `which`) feeding a pipe selected no line, so it exited 1 (the pipe's status
    hides that): nothing came out, or a count of 0 (`grep -c`, `| wc -l`). Not for `-q`
    (silent either way) nor output sent to a file."""
    steps = programs(command)
    if not exit_hidden(command) or not steps or not _GREP.match(steps[0]) or re.search(
            r"\s-\w*[qs]\b|--quiet|--silent|(?<![0-9&])>(?!&)", command):
        return False
    counted = re.search(r"\s-\w*c\b|--count|\|\s*wc\s+-l\s*$", command)
    return text.strip() == ("0" if counted else "")


def _from_output(text: str, signal: Signal | None, zero: bool, command: str) -> str:
    """The outcome when the exit status does not speak for the command (hidden behind a pipe,
    or not reported): evidence of failure first; success only from the summary of the tool
    that fed the pipe, or for a command that only shows things; else unknown."""
    steps = programs(command)
    producer = command_kind(steps[-1]) if steps else "other"
    # What `echo` or `ls` prints is data: a last line that complains is a program's message only
    # when a program wrote it.
    complains = zero and producer != "inspect" and _complains(text)
    if (signal and signal.outcome == FAILED) or _looks_broken(text) or complains:
        return FAILED
    if signal and signal.outcome == SUCCEEDED and (producer == "vcs" or (
            producer in ("test", "build") and not re.search(r"\|\s*head\b", command))):
        # A runner or build behind `| head` writes on after the lines shown, and may fail later
        # or die writing into the closed pipe (`cargo test | head -8` exits 101): its summary
        # in the head speaks for one part only.
        return SUCCEEDED
    if zero and (producer == "inspect" or (producer == "vcs" and vcs_read(steps[-1])) or not steps):
        # `ls | head`, `git status | head`: nothing of theirs fails in silence. A git command
        # that changes things (push, cherry-pick) ends a failure with hints a tail keeps
        # without the error: its success needs its own summary (readers._git).
        return SUCCEEDED
    tail = _tail_lines(command)
    # A `tail -1` of eslint's "✖ 1 problem\n\n" is its blank end; a C compiler's failure always
    # ends with a line of text (its error, caret, note or "compilation terminated.").
    silent = not text.strip() and tail >= (1 if steps and _C_COMPILER.match(steps[-1]) else 3)
    if zero and tail and (
            (producer == "build" and (silent or (text.strip() and _ENDS_WITH_ITS_ERROR.match(steps[-1]))))
            or _silent_npm_script(text) == "build"):
        # A build tool that printed nothing at all passed (`npx eslint . | tail -5`, `npx tsc |
        # tail -3`). A clean last line is enough only from tools whose failure always ends
        # with its error or count (`make: *** ...`, cargo's "could not compile", mypy's
        # "Found 2 errors"); gcc ends an error with its caret line or a note, javac a failure
        # with "1 warning" after "1 error", pip with a notice.
        return SUCCEEDED
    return UNKNOWN


_C_COMPILER = re.compile(r"^(?:gcc|g\+\+|clang\+?\+?)\s")
_ENDS_WITH_ITS_ERROR = re.compile(r"^(?:make|cargo\s+(?:build|check|clippy|fmt)|mypy|eslint|tsc|ruff)\b")
_TAIL = re.compile(r"\|\s*tail\b(?:\s+(?:-n\s*|--lines[= ])?-?(\+?)(\d+))?")


def _tail_lines(command: str) -> int:
    """How many last lines a `| tail` shows (10 by default); 0 without a tail, or for `tail
    -n +K`, which shows all from line K."""
    found = _TAIL.search(command)
    if not found or found.group(1):
        return 0
    return int(found.group(2) or 10)


def _silent_npm_script(text: str) -> str:
    """The kind of the command an npm script ran when the output ends with npm's header of it
    ("> lint" then "> eslint src"): that command printed nothing at all."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) >= 2 and lines[-1].startswith("> ") and lines[-2].startswith("> "):
        return command_kind(lines[-1][2:])
    return ""


_UNITTEST_COMMAND = re.compile(r"\bpython[\d.]*\s+-m\s+unittest\b")
_UNITTEST_LAST = re.compile(r"(OK|FAILED)(?: \(([^)]*)\))?")
# mocha prints a stack frame, and numbers a test in its list ("  1) adds"), only when it failed
_MOCHA_FAILED = re.compile(r"^\s+at (?:Context\.<anonymous> \(|.+\.(?:spec|test)\.[cm]?[jt]s:\d+:\d+\)?$)|"
                           r"^\s+\d+\) \S", re.MULTILINE)
# jest and vitest head each failed file's report with "FAIL <path>"
_SUITE_FAILED = re.compile(r"^\s*FAIL\s+(\S+\.\w+)", re.MULTILINE)


def _runner_remains(text: str, command: str) -> Signal | None:
    """What a `| tail` or `| head` leaves of a test runner's report when its summary is cut:
    unittest's last line alone ("OK (skipped=1)", "FAILED (failures=1)") or its progress
    line; mocha's numbered failure or a stack frame in a test file; jest's "FAIL <file>"."""
    lines = text.strip().splitlines()
    last = _UNITTEST_LAST.fullmatch(lines[-1].strip()) if lines else None
    if last and _UNITTEST_COMMAND.search(command):
        return Signal(SUCCEEDED if last.group(1) == "OK" else FAILED, "unittest", last.group(0))
    if lines and _UNITTEST_COMMAND.search(command) and re.fullmatch(r"[.sxu]*[FE][.FEsxu]*", lines[0].strip()):
        return Signal(FAILED, "unittest", "failures in the progress line")  # "F." before `| head` cut
    if re.search(r"\bmocha\b", command) and _MOCHA_FAILED.search(text):
        return Signal(FAILED, "mocha", "a test failed")
    suite = _SUITE_FAILED.search(text) if re.search(r"\b(?:jest|vitest)\b", command) else None
    if suite:
        return Signal(FAILED, "jest" if "jest" in command else "vitest", "", (suite.group(1),))
    if re.search(r"\bmocha\b.*(?:--reporter[= ]|-R\s*)dot\b", command) and re.search(r"^\s*[.,!]*![.,!]*\s*$",
                                                                                     text, re.MULTILINE):
        return Signal(FAILED, "mocha", "a test failed (! in the dot reporter's line)")
    if _GCC_UNDECLARED.search(text):  # all a `| tail -1` may keep of gcc's "'x' undeclared" error
        return Signal(FAILED, "gcc", "undeclared identifier")
    counted_lines = _lines_counted(text, command)
    if counted_lines is not None:
        return counted_lines
    counted = _FAILURES_COUNTED.search(command) if test_runner(command) else None
    if counted and re.fullmatch(r"[1-9]\d*", text.strip()):  # `pytest | grep -c FAILED` printing 9
        return Signal(FAILED, test_runner(command), f"{text.strip()} lines with {counted.group(1)}")
    return None


# Tools that print nothing at all when they pass (`npx tsc --noEmit | wc -l` printing 0); tsc
# prints nothing but its errors, unless asked for more.
_SILENT_WHEN_PASSING = re.compile(r"^(?:tsc|eslint|gcc|g\+\+|clang)\s|^(?:tsc|eslint)$")
_TSC_CHATTY = re.compile(r"\s(?:-v|-h|-w|--version|--help|--watch|--init|--verbose|--list\w*|--show\w*|--explain\w*|"
                         r"--\w*[dD]iagnostics|--traceResolution|--generateTrace)\b")


def _lines_counted(text: str, command: str) -> Signal | None:
    """A tool silent when it passes, its output counted by `| wc -l`: 0 lines is its silence;
    any line from tsc is an error."""
    steps = programs(command)
    if not steps or not re.search(r"\|\s*wc\s+-l\s*$", command) or not re.fullmatch(r"\d+", text.strip()) \
            or not _SILENT_WHEN_PASSING.match(steps[-1]):
        return None
    tool = steps[-1].split()[0]
    if int(text.strip()) == 0:
        return Signal(SUCCEEDED, tool, "no output")
    if tool == "tsc" and not _TSC_CHATTY.search(f" {steps[-1]}"):
        return Signal(FAILED, tool, f"{text.strip()} lines of errors")
    return None


_GCC_UNDECLARED = re.compile(r"^\S+: note: each undeclared identifier is reported only once for each function it "
                             r"appears in$", re.MULTILINE)
# A runner's output counted for the word it marks a failed test with (case-sensitive, so a test
# named after errors does not count): `pytest -v | grep -c FAILED`.
_FAILURES_COUNTED = re.compile(r"\|\s*grep\s+-c\s+['\"]?(FAILED|FAIL|ERROR)['\"]?\s*$")


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def strip_ansi(text: str) -> str:
    """Text without terminal colour and cursor codes (`tsc --pretty`, vitest)."""
    return _ANSI.sub("", text) if "\x1b" in text else text


# --------------------------------------------------------------------------------------
# output with no summary


_BROKEN = re.compile(
    r"^Traceback \(most recent call last\):|^[\w.]+(?:Error|Exception): |command not found|^fatal: |^panic: |"
    r"^npm (?:ERR!|error) |^ERROR: |^error(?:\[\w+\])?: |^[\w./-]+: (?:.+: )?No such file or directory$|"
    r"^\s*\w*(?:Error|Exception) \[\w+\]: |^Exception in thread |thread '.+' panicked at |"
    r"^note: (?:run with `RUST_BACKTRACE=|Some details are omitted, run with `RUST_BACKTRACE)|"
    r"^Node\.js v\d+\.\d+\.\d+$|^Segmentation fault|^Aborted \(core dumped\)|^curl: \(\d+\) |"
    r"^(?:Error: )?unknown (?:shorthand )?(?:flag|command)\b|^\w+: (?:unrecognized|invalid) option|"
    r"^\w+: error: unrecognized arguments|^[\w-]+: (?:'[^']+' is not an? [\w-]+ command\b|unknown command: )",
    re.MULTILINE,
)
_COMPLAINT = re.compile(r"\b(?:not found|missing|failed|failure|errors?|cannot|can't|could not|couldn't|unable to|"
                        r"denied|refused|invalid|no such|not set|not allowed|aborting|unreachable|timed out)\b",
                        re.IGNORECASE)
_NO_COMPLAINT = re.compile(r"\b(?:0|no|zero|without) (?:errors?|failures?|failed)\b", re.IGNORECASE)


def _looks_broken(text: str) -> bool:
    """An unrecognised tool whose output still shows a crash or a fatal error."""
    return bool(_BROKEN.search(text))


def _complains(text: str) -> bool:
    """The last line of a short output reads as an error message (`sys.exit("config
    missing: ...")`, a script's `echo "check failed" >&2; exit 3`): the only evidence a
    failing command behind a pipe leaves."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return bool(lines) and len(lines) <= 5 and bool(_COMPLAINT.search(lines[-1])) and not _NO_COMPLAINT.search(
        lines[-1])


# --------------------------------------------------------------------------------------
# why it failed, in a line


_PYTHON_LAST = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception|Exit|Interrupt|Warning)\b.*)$", re.MULTILINE)
_JAVA = re.compile(r"^Exception in thread \"[^\"]+\" (\S+?(?:Exception|Error)\b.*)$", re.MULTILINE)
_PANIC = re.compile(r"^thread '[^']+'(?: \(\d+\))? panicked at [^\n]*\n(.+)$", re.MULTILINE)
_NODE_THROW = re.compile(r"^([\w.]*(?:Error|Exception)\b(?: \[\w+\])?: .+)$", re.MULTILINE)


def why_it_failed(text: str, signal: Signal | None) -> str:
    """One line saying why: the tool's own summary of failures (lint counts, a git refusal),
    the exception a program died of, the first error line, else the output's last line
    (a `sys.exit(message)`, curl's or docker's complaint)."""
    if signal is not None and signal.outcome == FAILED and signal.tool in _SUMMARY_SAYS_WHY and signal.counts:
        return _short(signal.counts)
    for pattern in (_JAVA, _PANIC):
        found = pattern.search(text)
        if found:
            return _short(found.group(1))
    if re.search(r"^Traceback \(most recent call last\):", text, re.MULTILINE):
        last = _PYTHON_LAST.findall(text)
        if last:
            return _short(last[-1])
    error = first_error_line(text) or next((_short(m.group(1)) for m in _NODE_THROW.finditer(text)), "")
    if error:
        return error
    if signal is not None and signal.outcome == FAILED and signal.counts:
        return _short(signal.counts)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    # A short output's last complaint is its message (`sys.exit("...")`, a script's "host db1
    # unreachable", docker's "Cannot connect" above its usage hint); a line that does not
    # complain ("step one" before a `set -e` stop, make's echo of gcc) says nothing of why.
    complaints = [line for line in lines if (_COMPLAINT.search(line) or _REASON.search(line))
                  and not _NO_COMPLAINT.search(line) and not NOISE.match(line)]
    return _short(complaints[-1]) if complaints and len(lines) <= 5 else ""


# Words that give the reason of a run already known to have failed; too common in successful
# output to be a sign of failure on their own (capture.outcome._complains does not use them).
_REASON = re.compile(r"\b(?:expect(?:ed|ing)|unexpected(?:ly)?|not installed|requires?|need to|must|unknown \w+|"
                     r"already exists?|not (?:a|an) \w+)\b", re.IGNORECASE)


# Tools whose summary line is the reason itself ("Found 3 errors.", "nothing to commit"); a
# compiler's or type checker's first error line says more than its count.
_SUMMARY_SAYS_WHY = frozenset({"ruff", "eslint", "git", "pip", "npm", "node", "python", "java", "docker build",
                               "rust"})


def _short(line: str) -> str:
    line = " ".join(line.split()).strip("⎯─━ ")  # vitest frames its headings with rules
    return line if len(line) <= 200 else line[:199] + "…"
