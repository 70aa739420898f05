"""One reader per ecosystem: what a tool's output says about how it ended.

Test runners, compilers, linters, package managers, make, git, docker, crashing
programs (Python, Node, Rust, Java): each reader finds its tool's summary in the output
(ANSI colour codes already stripped) and returns a Signal, or None when its tool's
summary is not there. capture.outcome weighs them against what the host said.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from capture.reader_base import (
    FAILED,
    MAX_NAMES,
    NOISE,
    SUCCEEDED,
    UNKNOWN,
    Signal,
    first_error_line,
)
from capture.reader_base import names as _names
from capture.readers_tools import _docker, _eslint, _git, _make, _mypy, _package_managers, _ruff, _tsc

__all__ = ["FAILED", "MAX_NAMES", "NOISE", "SUCCEEDED", "UNKNOWN", "Signal", "first_error_line", "read_output"]

_PYTEST_SUMMARY = re.compile(
    r"^(?:=+ )?((?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun)(?:, )?)+"
    r"|no tests ran)(?: in [\d.]+s(?: \([\d:.]+\))?)?(?: =+)?\s*$",
    re.MULTILINE,
)
# Ids may hold spaces (`test_add[two and three]`): a name runs to " - " or the line's end.
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?(?:\[[^\]\n]*\])?)(?: - .*)?$", re.MULTILINE)
_PYTEST_VERBOSE = re.compile(r"^(\S+::[^\s\[]+(?:\[[^\]\n]*\])?) (?:FAILED|ERROR)\b", re.MULTILINE)
_PYTEST_HEADER = re.compile(r"^_{3,} (?:ERROR collecting )?(\S+(?: \S+)?) _{3,}$", re.MULTILINE)


# `pytest -q`'s progress ("..F.s  [ 40%]"): an F or E there is a failed test even when a
# `| head` cut the summary away.
_PYTEST_PROGRESS = re.compile(r"^[.sxX]*[FE][.FEsxX]*\s+\[\s*\d+%\]$", re.MULTILINE)


def _pytest(text: str) -> Signal | None:
    summaries = _PYTEST_SUMMARY.findall(text)
    interrupted = re.search(r"^(?:=+ )?Interrupted: (\d+ errors? during collection)", text, re.MULTILINE)
    collected = _PYTEST_COLLECTED.search(text)
    if not summaries and not interrupted and collected:  # `--collect-only`: what it found, or its errors
        bad = bool(collected.group(2)) or collected.group(1).startswith("no")
        return Signal(FAILED if bad else SUCCEEDED, "pytest", collected.group(0).strip("= \n"),
                      _names(_PYTEST_HEADER, text))
    if not summaries and not interrupted:
        # The summary cut away (`| head`, a host keeping only the head): a failed test still
        # shows in the progress line or as `-v`'s "id FAILED".
        verbose = _names(_PYTEST_VERBOSE, text)
        if not verbose and not _PYTEST_PROGRESS.search(text):
            return None
        return Signal(FAILED, "pytest", "", verbose or _names(_PYTEST_HEADER, text))
    counts = interrupted.group(1) if interrupted else summaries[-1]
    failing = _names(_PYTEST_FAILED, text) or _names(_PYTEST_VERBOSE, text) or _names(_PYTEST_HEADER, text)
    bad = interrupted or re.search(r"\b[1-9]\d* (?:failed|errors?)\b|no tests ran", counts) or _nothing_ran(counts)
    return Signal(FAILED if bad else SUCCEEDED, "pytest", counts.strip(), failing)


_PYTEST_COLLECTED = re.compile(r"^(?:=+ )?(\d+ tests? collected|no tests collected)(, \d+ errors?)?"
                               r"(?: in [\d.]+s)?(?: =+)?\s*$", re.MULTILINE)


def _nothing_ran(counts: str) -> bool:
    """Every test deselected (`-k` matching nothing): pytest exits 5, "no tests ran"."""
    return "deselected" in counts and not re.search(r"\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed)", counts)


_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$", re.MULTILINE)
_UNITTEST_NAME = re.compile(r"^(?:FAIL|ERROR): (\w+) \(([\w.]+?)(?:\.\1)?\)", re.MULTILINE)


_UNITTEST_VERBOSE = re.compile(r"^(\w+) \(([\w.]+?)(?:\.\1)?\)(?:\n.*)? \.\.\. (?:FAIL|ERROR)$", re.MULTILINE)


def _unittest(text: str) -> Signal | None:
    ran = _UNITTEST_RAN.search(text)
    end = _UNITTEST_END.search(text, ran.end()) if ran else None
    if not ran or not end:
        # `-v` names each failure as it runs ("test_x (mod.Class.test_x) ... FAIL"), before
        # the summary a host may cut away.
        failed = tuple(f"{m.group(2)}.{m.group(1)}" for m in _UNITTEST_VERBOSE.finditer(text))[:MAX_NAMES]
        return Signal(FAILED, "unittest", "", failed) if failed else None
    failing = tuple(f"{m.group(2)}.{m.group(1)}" for m in _UNITTEST_NAME.finditer(text))[:MAX_NAMES]
    counts = f"Ran {ran.group(1)} tests: {end.group(0).strip()}"
    return Signal(FAILED if end.group(1) == "FAILED" else SUCCEEDED, "unittest", counts, failing)


_DOCTEST_FAILED = re.compile(r"^\*\*\*Test Failed\*\*\* (\d+ failures?)\.$", re.MULTILINE)
_DOCTEST_PASSED = re.compile(r"^(\d+ passed and 0 failed)\.\nTest passed\.$", re.MULTILINE)
_DOCTEST_NAME = re.compile(r"^File \"[^\"]+\", line \d+, in (\S+)$", re.MULTILINE)


def _doctest(text: str) -> Signal | None:
    """`python -m doctest`: silent when all pass, `-v` ends with "Test passed."."""
    failed = _DOCTEST_FAILED.search(text)
    if failed:
        return Signal(FAILED, "doctest", failed.group(1), _names(_DOCTEST_NAME, text))
    passed = _DOCTEST_PASSED.search(text)
    return Signal(SUCCEEDED, "doctest", passed.group(1)) if passed else None


_JEST_TESTS = re.compile(r"^Tests:\s+(.*\btotal)\s*$", re.MULTILINE)
_JEST_SUITES = re.compile(r"^Test Suites:\s+(.*\btotal)\s*$", re.MULTILINE)
_JEST_NAME = re.compile(r"^\s*● (?!Test suite failed)(.+?)\s*$", re.MULTILINE)
_JEST_SUITE_FAIL = re.compile(r"^\s*FAIL (\S+)", re.MULTILINE)


def _totals(tool: str, files: re.Match[str] | None, tests: re.Match[str] | None, text: str,
            *name_patterns: re.Pattern[str]) -> Signal | None:
    """A runner that prints a files total and a tests total ("1 failed, 4 passed"): failed
    when any total counts failures."""
    if not files and not tests:
        return None
    counts = " / ".join(m.group(1) for m in (files, tests) if m)
    failing = next((names for pattern in name_patterns if (names := _names(pattern, text))), ())
    bad = re.search(r"\b[1-9]\d* failed\b", counts)
    return Signal(FAILED if bad else SUCCEEDED, tool, counts, failing)


def _jest(text: str) -> Signal | None:
    found = _totals("jest", _JEST_SUITES.search(text), _JEST_TESTS.search(text), text, _JEST_NAME, _JEST_SUITE_FAIL)
    return found or _no_tests("jest", r"^No tests found, exiting with code 1", text)


def _no_tests(tool: str, pattern: str, text: str) -> Signal | None:
    """A runner that found no test file to run: it fails, and prints no totals."""
    found = re.search(pattern, text, re.MULTILINE)
    return Signal(FAILED, tool, found.group(0).split(",")[0]) if found else None


_VITEST_TESTS = re.compile(r"^\s*Tests\s+((?:\d+ \w+ \| )*\d+ \w+ \(\d+\))", re.MULTILINE)
_VITEST_FILES = re.compile(r"^\s*Test Files\s+((?:\d+ \w+ \| )*\d+ \w+ \(\d+\))", re.MULTILINE)
_VITEST_NAME = re.compile(r"^\s*(?:FAIL|×|✗|❯)\s+(\S+\.(?:test|spec)\.\w+ > .+?)(?: \d+ms)?\s*$", re.MULTILINE)


def _vitest(text: str) -> Signal | None:
    found = _totals("vitest", _VITEST_FILES.search(text), _VITEST_TESTS.search(text), text, _VITEST_NAME)
    return found or _no_tests("vitest", r"^No test files found, exiting with code 1", text)


_MOCHA_PASSING = re.compile(r"^\s+(\d+) passing \(\w+\)\s*$", re.MULTILINE)
_MOCHA_FAILING = re.compile(r"^\s+(\d+) failing\s*$", re.MULTILINE)
# A failure's title: "1) outer" then one more indented line per nested describe, the test's
# own name last, ending with ":".
_MOCHA_NAME = re.compile(r"^ +\d+\) (.+)\n((?: {3,}.+\n)*? {3,}.+?):\s*$", re.MULTILINE)


def _mocha(text: str) -> Signal | None:
    passing, failing = _MOCHA_PASSING.search(text), _MOCHA_FAILING.search(text)
    if not passing and not failing:
        return None
    counts = ", ".join(m.group(0).strip() for m in (passing, failing) if m)
    tail = text[failing.end():] if failing else ""
    names = tuple(dict.fromkeys(" ".join([m.group(1).strip(), *m.group(2).split("\n")]).strip()
                                for m in _MOCHA_NAME.finditer(tail)))[:MAX_NAMES]
    names = tuple(" ".join(n.split()) for n in names)
    bad = failing and int(failing.group(1)) > 0
    return Signal(FAILED if bad else SUCCEEDED, "mocha", counts, names)


_GO_FAIL = re.compile(r"^\s*--- FAIL: (\S+)", re.MULTILINE)
_GO_PKG = re.compile(r"^(ok|FAIL|---|\?)\s+(\S+)\s+(?:[\d.]+s|\[(?:build failed|setup failed|no test files)\])",
                     re.MULTILINE)


def _go_test(text: str) -> Signal | None:
    packages = _GO_PKG.findall(text)
    fails = _names(_GO_FAIL, text)
    if not packages and not fails:
        return None
    failed_pkgs = [p for status, p in packages if status == "FAIL"]
    ok_pkgs = [p for status, p in packages if status == "ok"]
    counts = f"{len(ok_pkgs)} packages ok, {len(failed_pkgs)} failed"
    bad = bool(fails or failed_pkgs or re.search(r"^FAIL\s*$|^panic: ", text, re.MULTILINE))
    return Signal(FAILED if bad else SUCCEEDED, "go test", counts, fails or tuple(failed_pkgs[:MAX_NAMES]))


_CARGO_RESULT = re.compile(r"^test result: (ok|FAILED)\. (\d+ passed; \d+ failed[^\n]*)$", re.MULTILINE)
_CARGO_NAME = re.compile(r"^test (\S+) \.\.\. FAILED$", re.MULTILINE)
_CARGO_COMPILE = re.compile(r"^error(?:\[E\d+\])?: |^error: could not compile", re.MULTILINE)
_CARGO_FINISHED = re.compile(r"^\s*Finished [`\w]+.* target\(s\) in [\d.]+s", re.MULTILINE)


def _result_lines(pattern: re.Pattern[str], failed: str, tool: str, text: str, names: re.Pattern[str]) -> Signal | None:
    """Runners that print one (status, counts) line per test binary or project (cargo, dotnet):
    failed when any line says `failed`; the counts are the last line's."""
    results = pattern.findall(text)
    if not results:
        return None
    bad = any(status == failed for status, _ in results)
    return Signal(FAILED if bad else SUCCEEDED, tool, " ".join(results[-1][1].split()), _names(names, text))


_CARGO_FAILURES = re.compile(r"^failures:\n((?: {4}\S+\n)+)", re.MULTILINE)


def _cargo(text: str) -> Signal | None:
    found = _result_lines(_CARGO_RESULT, "FAILED", "cargo test", text, _CARGO_NAME)
    if found:
        listed = tuple(n.strip() for m in _CARGO_FAILURES.finditer(text) for n in m.group(1).splitlines())
        return found if found.failing or not listed else Signal(found.outcome, found.tool, found.counts,
                                                                  listed[:MAX_NAMES])
    if re.search(r"^error: could not compile `", text, re.MULTILINE):
        return Signal(FAILED, "cargo", "compile error")
    failed = _names(_CARGO_NAME, text)
    if failed:  # "test x ... FAILED" before a `| head` cut the result line
        return Signal(FAILED, "cargo test", "", failed)
    # A build that finished says nothing of tests it went on to run ("running 2 tests")
    if _CARGO_FINISHED.search(text) and not _CARGO_COMPILE.search(text) and not re.search(
            r"panicked at |^running \d+ tests?$", text, re.MULTILINE):
        return Signal(SUCCEEDED, "cargo", "build finished")
    return None


_MAVEN_TESTS = re.compile(r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$", re.MULTILINE)
_MAVEN_NAME = re.compile(r"^\[ERROR\]\s+(?:Run \d+: )?([\w$]+\.\w+)[:(]", re.MULTILINE)
_MAVEN_NAME_OLD = re.compile(r"^\[ERROR\] (\w+)\(([\w.$]+)\)", re.MULTILINE)


def _maven(text: str) -> Signal | None:
    end = re.search(r"^\[(?:INFO|ERROR)\] BUILD (SUCCESS|FAILURE)\s*$", text, re.MULTILINE)
    if not end:
        return None
    totals = _MAVEN_TESTS.findall(text)
    counts = (f"Tests run: {totals[-1][0]}, Failures: {totals[-1][1]}, Errors: {totals[-1][2]}" if totals
              else f"BUILD {end.group(1)}")
    failing = _names(_MAVEN_NAME, text) or tuple(f"{c}.{m}" for m, c in _MAVEN_NAME_OLD.findall(text))[:MAX_NAMES]
    return Signal(SUCCEEDED if end.group(1) == "SUCCESS" else FAILED, "maven", counts, failing)


_GRADLE_NAME = re.compile(r"^(\S+) > (.+?) FAILED\s*$", re.MULTILINE)


def _gradle(text: str) -> Signal | None:
    end = re.search(r"^BUILD (SUCCESSFUL|FAILED) in \S+", text, re.MULTILINE)
    if not end:
        return None
    tests = re.search(r"^(\d+ tests? completed, \d+ failed.*)$", text, re.MULTILINE)
    counts = tests.group(1) if tests else end.group(0)
    failing = tuple(f"{cls}.{name.rstrip('()')}" for cls, name in _GRADLE_NAME.findall(text))[:MAX_NAMES]
    return Signal(SUCCEEDED if end.group(1) == "SUCCESSFUL" else FAILED, "gradle", counts, failing)


_DOTNET_TOTALS = re.compile(r"^(Passed|Failed)!\s+- (Failed:\s+\d+, Passed:\s+\d+,.*?Total:\s+\d+)", re.MULTILINE)
_DOTNET_NAME = re.compile(r"^\s+Failed ([\w.]+(?:\([^)]*\))?) \[", re.MULTILINE)


def _dotnet(text: str) -> Signal | None:
    found = _result_lines(_DOTNET_TOTALS, "Failed", "dotnet test", text, _DOTNET_NAME)
    if found:
        return found
    run = re.search(r"^Test Run (Successful|Failed)\.", text, re.MULTILINE)
    if run:
        return Signal(SUCCEEDED if run.group(1) == "Successful" else FAILED, "dotnet test", run.group(0),
                      _names(_DOTNET_NAME, text))
    build = re.search(r"^Build (succeeded|FAILED)\.", text, re.MULTILINE)
    if build:
        return Signal(SUCCEEDED if build.group(1) == "succeeded" else FAILED, "dotnet build", build.group(0))
    return None


_RSPEC_TOTAL = re.compile(r"^(\d+) examples?, (\d+) failures?(?:, \d+ pending)?", re.MULTILINE)
_RSPEC_NAME = re.compile(r"^rspec (\S+) # (.+)$", re.MULTILINE)


def _rspec(text: str) -> Signal | None:
    total = _RSPEC_TOTAL.search(text)
    if not total:
        return None
    failing = tuple(f"{path} {desc}" for path, desc in _RSPEC_NAME.findall(text))[:MAX_NAMES]
    return Signal(FAILED if int(total.group(2)) else SUCCEEDED, "rspec", total.group(0), failing)



_NODE_TAP = re.compile(r"^# (pass|fail) (\d+)$", re.MULTILINE)
_NODE_SPEC = re.compile(r"^ℹ (pass|fail) (\d+)$", re.MULTILINE)
_NODE_NAME = re.compile(r"^not ok \d+ - (.+)$|^✖ (.+?) \([\d.]+m?s\)$", re.MULTILINE)


def _node_test(text: str) -> Signal | None:
    """`node --test`: TAP ("# fail 2") when not on a terminal, the spec reporter ("ℹ fail 2") on one."""
    totals = dict(_NODE_TAP.findall(text) or _NODE_SPEC.findall(text))
    if "fail" not in totals:
        return None
    names = tuple(dict.fromkeys(a or b for a, b in _NODE_NAME.findall(text)))[:MAX_NAMES]
    counts = f"{totals.get('pass', '?')} passed, {totals['fail']} failed"
    return Signal(FAILED if int(totals["fail"]) else SUCCEEDED, "node --test", counts, names)


_PANIC = re.compile(r"^thread '[^']+'(?: \(\d+\))? panicked at (\S+?):?\n(.+)$", re.MULTILINE)


def _crashes(text: str) -> Signal | None:
    """A Rust panic, a Java exception, an uncaught Node error: the program died."""
    panic = _PANIC.search(text)
    if panic:
        return Signal(FAILED, "rust", f"panicked at {panic.group(1)}: {panic.group(2).strip()}"[:200])
    if re.search(r"^note: (?:run with `RUST_BACKTRACE=|Some details are omitted, run with `RUST_BACKTRACE)",
                 text, re.MULTILINE):
        return Signal(FAILED, "rust", "panicked")
    java = re.search(r"^Exception in thread \"[^\"]+\" (.+)$", text, re.MULTILINE)
    if java:
        return Signal(FAILED, "java", java.group(1).strip()[:200])
    if re.search(r"^Node\.js v\d+\.\d+\.\d+$", text, re.MULTILINE):
        thrown = re.search(r"^(\w*(?:Error|Exception)\b.*?: .+)$", text, re.MULTILINE)
        return Signal(FAILED, "node", thrown.group(1).strip()[:200] if thrown else "uncaught exception")
    return None


def _python_crash(text: str) -> Signal | None:
    if re.search(r"^Traceback \(most recent call last\):", text, re.MULTILINE):
        last = re.findall(r"^(\w+(?:\.\w+)*(?:Error|Exception|Exit|Interrupt)\b.*)$", text, re.MULTILINE)
        return Signal(FAILED, "python", last[-1] if last else "Traceback")
    return None


_READERS: tuple[Callable[[str], Signal | None], ...] = (
    _pytest, _unittest, _doctest, _jest, _vitest, _mocha, _node_test, _go_test, _cargo, _maven, _gradle, _dotnet,
    _rspec, _tsc, _eslint, _mypy, _ruff, _package_managers, _make, _git, _docker, _crashes, _python_crash,
)

# git's refusals that print no "error:" line: what they mean depends on the subcommand.
_GIT_REFUSALS = (
    ("commit", re.compile(r"^(?:nothing to commit|no changes added to commit|nothing added to commit)\b.*$",
                          re.MULTILINE)),
    ("pull", re.compile(r"^There is no tracking information for the current branch\.$", re.MULTILINE)),
    ("stash", re.compile(r"^No stash entries found\.$", re.MULTILINE)),
    ("push", re.compile(r"^hint: .*(?:Updates were rejected|integrate the remote changes|before pushing again).*$",
                        re.MULTILINE)),
    # the last line of "fatal: No configured push destination." and its advice, all a `| tail -2` keeps
    ("push", re.compile(r"^ {4}git push <name>$", re.MULTILINE)),
)
# Runners that print their own summary: TAP lines in their output come from a test they ran.
_OWN_SUMMARY = re.compile(r"\b(?:jest|vitest|mocha)\b")
_TAP_REPORTER = re.compile(r"(?:--reporter[= ]|-R\s*)tap\b")  # mocha's own summary is TAP then


def read_output(text: str, command: str = "") -> Signal | None:
    """The first ecosystem whose summary appears in `text` (None: none recognised)."""
    git = re.match(r"^(?:cd\s+\S+\s*&&\s*)?git\s+(?:-C\s+\S+\s+)?([\w-]+)", command.strip())
    for subcommand, refusal in _GIT_REFUSALS:
        found = refusal.search(text) if git and git.group(1) == subcommand else None
        if found:  # push's hints are a cut sentence about integrating; what happened is a refusal
            why = found.group(0).strip()
            if subcommand == "push":
                why = "no configured push destination" if why.startswith("git push") else "push rejected"
            return Signal(FAILED, "git", why)
    for reader in _READERS:
        if reader is _node_test and _OWN_SUMMARY.search(command) and not _TAP_REPORTER.search(command):
            continue  # a node test file's TAP inside jest's run is that file's, not the run's
        signal = reader(text)
        if signal is not None:
            return signal
    return None

