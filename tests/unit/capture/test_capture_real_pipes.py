"""A build tool behind a short tail (real_runs_pipes.json): its silence is its success, any
line it left is not. gcc ends an error with its caret line or a note, ruff with "[*] N
fixable", eslint with a blank line that a `tail -1` shows alone; before, all three were taken
for a clean end and stored as successes."""

from __future__ import annotations

from functools import partial

import pytest

from tests.fixtures.observer.deliveries import RUN_SETS
from tests.unit.capture.test_capture_real_runs import draft_of, outcomes_in, real_run

pytestmark = pytest.mark.unit
PIPES = "real_runs_pipes.json"


outcomes = partial(outcomes_in, PIPES)


def test_the_pipes_set_is_benchmarked():
    assert PIPES in RUN_SETS


@pytest.mark.parametrize(
    ("command", "truth", "said"),
    [
        # the note that only follows an "undeclared" error
        ("gcc -Wall -o bad bad.c 2>&1 | tail -1", "failed", "failed"),
        ("gcc -Wall -o bad bad.c 2>&1 | tail -2", "failed", "failed"),  # a caret line and that note
        ("gcc -Wall -o warn warn.c 2>&1 | tail -1", "succeeded", "unknown"),  # a caret line: warning or error
        # gcc's failure always ends with a line of text, so nothing at all is its silence; eslint's
        # failure ends with a blank line, so a `tail -1` of it and of its silence look alike
        ("gcc -Wall -o ok ok.c 2>&1 | tail -1", "succeeded", "succeeded"),
        ("npx eslint err 2>&1 | tail -1", "failed", "unknown"),
        ("npx eslint warn 2>&1 | tail -1", "succeeded", "unknown"),
        ("npx eslint err 2>&1 | tail -2", "failed", "failed"),  # "2 errors and 1 warning potentially fixable"
        ("ruff check bad.py 2>&1 | tail -1", "failed", "failed"),  # "[*] 2 fixable with `--fix`."
        ("ruff check good.py 2>&1 | tail -1", "succeeded", "succeeded"),  # "All checks passed!"
        ("javac Bad.java 2>&1 | tail -1", "failed", "failed"),  # "1 error"
    ],
)
def test_a_build_tool_behind_a_short_tail_passed_only_if_it_printed_nothing_or_its_success(command, truth, said):
    assert outcomes(command, truth) == {said}


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn FIXME . | head -5",  # nothing came out
        "grep -c FIXME notes.txt | head -1",  # a count of 0
        "git grep -n FIXME | head -3",
        "grep -rn FIXME src 2>&1 | wc -l",
    ],
)
def test_a_grep_that_selected_nothing_behind_a_pipe_exited_1_as_a_benign_no_match(command):
    assert outcomes(command, "failed") == {"failed"}
    draft = draft_of(real_run(command, "failed", PIPES))
    assert draft.type == "discovery" and draft.title.endswith("(No matches found)")
    assert outcomes("grep -rn TODO . --include=*.py | head -5", "succeeded") == {"succeeded"}


def test_docker_logs_that_cannot_reach_the_daemon_failed_though_it_only_prints_records():
    assert outcomes("docker logs web 2>&1 | tail -5", "failed") == {"failed"}
    assert outcomes("cat notes.txt | head -1", "succeeded") == {"succeeded"}


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("python -m unittest discover -s t 2>&1 | head -3", "failures in the progress line"),  # "F."
        ("git frobnicate 2>&1 | tail -1", "is not a git command"),
        ("docker compose up 2>&1 | tail -3", "docker: unknown command: docker compose"),
        ("npm run nothing 2>&1 | tail -1", ""),  # npm's "A complete log of this run..." is no reason
    ],
)
def test_what_a_pipe_leaves_of_a_usage_error_or_a_unittest_progress_line_is_a_failure(command, why):
    assert outcomes(command, "failed") == {"failed"}
    title = draft_of(real_run(command, "failed", PIPES)).title
    assert why in title and "A complete log" not in title, title


def test_which_that_finds_nothing_behind_a_pipe_exited_1():
    assert outcomes("which nosuchtool | head -1", "failed") == {"failed"}
    assert outcomes("which git | head -1", "succeeded") == {"succeeded"}


def test_what_echo_prints_is_data_even_when_it_reads_like_a_complaint():
    assert outcomes("echo 'build failed: see the log' | tee out.log", "succeeded") == {"succeeded"}


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("npx jest test 2>&1 | head -5", "test/a.test.js"),  # "FAIL test/a.test.js"
        ("npx mocha spec 2>&1 | head -6", "a test failed"),  # "    1) b"
        ("npx vitest run vt 2>&1 | head -8", ": Failed Tests 1"),  # its heading, without the rules
    ],
)
def test_the_head_of_a_js_runners_failing_report_is_a_failure(command, why):
    assert outcomes(command, "failed") == {"failed"}
    assert draft_of(real_run(command, "failed", PIPES)).title.endswith(why)


def test_a_runners_summary_in_a_head_speaks_for_the_part_shown_only():
    # cargo wrote on after `head -8` had its lines and exited 101 writing into the closed pipe
    assert outcomes("cargo test b 2>&1 | head -8", "failed") == {"unknown"}
    failed = draft_of(real_run("cargo test 2>&1 | head -12", "failed", PIPES))  # "test tests::a ... FAILED"
    assert "Outcome: failed" in failed.facts and failed.title.endswith(": a")


@pytest.mark.parametrize(
    "command",
    [
        "git checkout -b topic 2>&1 | tail -1",  # "Switched to a new branch 'topic'"
        "git checkout HEAD~1 2>&1 | tail -1",  # "HEAD is now at ..."
        "echo x >> a.txt && git stash 2>&1 | tail -1",  # "Saved working directory and index state ..."
        "git stash pop 2>&1 | tail -1",  # "Dropped refs/stash@{0} (...)"
        "git checkout -- a.txt && git branch -d topic 2>&1 | tail -1",  # "Deleted branch topic (was ...)"
    ],
)
def test_what_git_says_when_a_change_is_done_is_its_success_behind_a_tail(command):
    assert outcomes(command, "succeeded") == {"succeeded"}


def test_a_git_change_whose_tail_says_nothing_of_it_stays_unknown():
    assert outcomes("git pull 2>&1 | tail -1", "failed") == {"unknown"}  # the blank end of its advice


def test_what_a_tail_leaves_of_a_compiler_error_or_a_git_refusal_is_the_failure_and_its_reason():
    for command, why in (("gcc -Wall -o bad bad.c 2>&1 | tail -1", "gcc -Wall -o bad bad.c: undeclared identifier"),
                         ("git merge topic 2>&1 | tail -1", "merge: topic - not something we can merge")):
        assert outcomes(command, "failed") == {"failed"}
        draft = draft_of(real_run(command, "failed", PIPES))
        assert draft.type == "bugfix" and draft.title.endswith(why), draft.title
