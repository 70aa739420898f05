"""Readers of compilers, type checkers, linters, package managers, make, git and docker:
each finds its tool's summary in the output and returns a Signal (capture.reader_base), or
None when its tool's summary is not there."""

from __future__ import annotations

import re

from capture.reader_base import FAILED, SUCCEEDED, Signal, first_error_line
from capture.reader_base import names as _names

_TSC_ERROR = re.compile(r"^(\S+?)(?:\(\d+,\d+\)|:\d+:\d+)(?::| -) error TS\d+:", re.MULTILINE)


def _tsc(text: str) -> Signal | None:
    found = re.search(r"^Found (\d+) errors?(?: in .*)?\.", text, re.MULTILINE)
    files = _names(_TSC_ERROR, text)
    if not found and not files:
        return None
    counts = found.group(0) if found else f"{len(files)} files with type errors"
    return Signal(FAILED, "tsc", counts, files)


def _eslint(text: str) -> Signal | None:
    # The count, or the line after it that a `| tail -1` keeps ("1 error and 0 warnings potentially fixable")
    problems = re.search(r"^✖ \d+ problems? \((\d+) errors?, \d+ warnings?\)|"
                         r"^\s*(\d+) errors? and \d+ warnings? potentially fixable.*$", text, re.MULTILINE)
    too_many = re.search(r"^ESLint found too many warnings \(maximum: \d+\)\.", text, re.MULTILINE)
    if not problems and not too_many:
        return None
    counts = problems.group(0).strip() if problems else ""
    if too_many:  # --max-warnings: the warnings alone fail the run
        return Signal(FAILED, "eslint", f"{counts}; {too_many.group(0)}".strip("; "))
    return Signal(FAILED if problems and int(problems.group(1) or problems.group(2)) else SUCCEEDED, "eslint", counts)


def _mypy(text: str) -> Signal | None:
    found = re.search(r"^Found (\d+) errors? in (\d+) files? \(checked \d+ source files?\)", text, re.MULTILINE)
    if found:
        return Signal(FAILED, "mypy", found.group(0), _names(re.compile(r"^(\S+?):\d+: error:", re.M), text))
    ok = re.search(r"^Success: no issues found in \d+ source files?", text, re.MULTILINE)
    return Signal(SUCCEEDED, "mypy", ok.group(0)) if ok else None


def _ruff(text: str) -> Signal | None:
    # ruff's "[*] 3 fixable" and "No fixes available" follow its count of errors only
    found = re.search(r"^(?:Found \d+ errors?\.|\[\*\] \d+ fixable with .+|No fixes available .+)$", text,
                      re.MULTILINE)
    if found:
        return Signal(FAILED, "ruff", found.group(0))
    # A formatter in check mode (ruff format --check, black --check, prettier --check) fails by
    # naming what it would change: no error word, so nothing else would catch it behind a pipe.
    would = re.search(r"^(?:Would reformat: .+|\d+ files? would be reformatted.*|would reformat .+|"
                      r"\[warn\] Code style issues found.*)$", text, re.MULTILINE)
    if would:
        return Signal(FAILED, "formatter", would.group(0).strip())
    if re.search(r"^All checks passed!", text, re.MULTILINE):
        return Signal(SUCCEEDED, "ruff", "All checks passed!")
    if re.search(r"^\d+ files? (?:left unchanged|reformatted)", text, re.MULTILINE):
        return Signal(SUCCEEDED, "ruff format", "formatted")
    return None


def _package_managers(text: str) -> Signal | None:
    if re.search(r"^npm (?:ERR!|error) ", text, re.MULTILINE):
        return Signal(FAILED, "npm", first_error_line(text))
    if re.search(r"^ERROR: (?:Could not|No matching distribution|Failed|Cannot|Invalid|pip's)", text, re.MULTILINE):
        return Signal(FAILED, "pip", first_error_line(text))
    if re.search(r"^error: (?:subprocess-exited-with-error|externally-managed-environment|resolution-too-deep)",
                 text, re.MULTILINE):
        return Signal(FAILED, "pip", first_error_line(text))
    ok = re.search(r"^(?:Successfully installed .+|added \d+ packages?.*|up to date, audited \d+ packages?.*|"
                   r"Requirement already satisfied: .+)$", text, re.MULTILINE)
    return Signal(SUCCEEDED, "install", ok.group(0)[:120]) if ok else None


def _make(text: str) -> Signal | None:
    failed = re.search(r"^(?:g?make(?:\[\d+\])?): \*\*\* (.+)$", text, re.MULTILINE)
    if failed:
        return Signal(FAILED, "make", failed.group(0))
    nothing = re.search(r"^g?make(?:\[\d+\])?: (?:Nothing to be done for|'.+' is up to date)", text, re.MULTILINE)
    return Signal(SUCCEEDED, "make", nothing.group(0)) if nothing else None


def _git(text: str) -> Signal | None:
    conflicts = _names(re.compile(r"^CONFLICT \([\w/ -]+\): (?:Merge conflict in )?(.+)$", re.MULTILINE), text)
    if conflicts or re.search(r"^Automatic merge failed|^error: could not apply", text, re.MULTILINE):
        return Signal(FAILED, "git", "merge conflict" + (f" in {', '.join(conflicts[:3])}" if conflicts else ""),
                      conflicts)
    if re.search(r"^\s*! \[(?:rejected|remote rejected)\]|^error: failed to push some refs", text, re.MULTILINE):
        return Signal(FAILED, "git", "push rejected")
    if re.search(r"^(?:fatal|error): ", text, re.MULTILINE):
        return Signal(FAILED, "git", first_error_line(text))
    refused = re.search(r"^merge: \S+ - not something we can merge$", text, re.MULTILINE)
    if refused:  # git merge's refusal of a name it does not know has no "fatal:" before it
        return Signal(FAILED, "git", refused.group(0))
    # What a `| tail` keeps of git's errors: the hints of an operation stopped half-way
    # ("run git cherry-pick --abort") and the end of "ambiguous argument".
    stopped = re.search(r"^hint: .*\bgit ([\w-]+) --(?:abort|continue|skip)\b", text, re.MULTILINE)
    if stopped:
        return Signal(FAILED, "git", f"git {stopped.group(1)} stopped half-way")
    if re.search(r"^'git <command> \[<revision>\.\.\.\] -- \[<file>\.\.\.\]'$|"
                 r"^Use '--' to separate paths from revisions", text, re.MULTILINE):
        return Signal(FAILED, "git", "unknown revision or path")
    done = re.search(r"^(?:Fast-forward$|Merge made by the '\w+' strategy\.|\[[\w./-]+ [0-9a-f]{7,}\] .+|"
                     r"\s+(?:\* \[new branch\]|[0-9a-f]{7,}\.\.[0-9a-f]{7,})\s+\S+ -> \S+|"
                     r"Successfully rebased and updated .+|HEAD is now at [0-9a-f]{7,} |Already up to date\.$|"
                     r"Switched to (?:a new )?branch '|Deleted branch \S+ \(was |Saved working directory and |"
                     r"Dropped refs/stash|"
                     r"(?:Rei|I)nitialized (?:empty|existing) Git repository|"
                     # the diffstat a commit, merge, revert or cherry-pick ends with when it is done
                     r" \d+ files? changed(?:, \d+ insertions?\(\+\))?(?:, \d+ deletions?\(-\))?$)",
                     text, re.MULTILINE)
    return Signal(SUCCEEDED, "git", done.group(0).strip()[:120]) if done else None


def _docker(text: str) -> Signal | None:
    if re.search(r"^(?:ERROR: failed to solve|ERROR: failed to build|The command '.+' returned a non-zero code)",
                 text, re.MULTILINE):
        return Signal(FAILED, "docker build", first_error_line(text))
    if re.search(r"^(?:Successfully built \w+|Successfully tagged .+|#\d+ naming to \S+ done|"
                 r"#\d+ writing image sha256:\w+ done)", text, re.MULTILINE):
        return Signal(SUCCEEDED, "docker build", "image built")
    return None
